"""Everyday calls a fifth survey (165 NumPy/SciPy calls and ML, image and time-series idioms) found failing: the
polynomial coefficient arithmetic (np.polyder, polyint, polyadd, polysub, polymul), np.linalg.tensorinv and
tensorsolve, ndarray.searchsorted (scipy.stats.wasserstein_distance calls it). Few kernels, small arrays."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.stats as st
from strategies import check

import egglog_tensor as et

rng = np.random.default_rng(5)
P = np.array([3.0, -2.0, 0.5, 1.0, 4.0])
Q = np.array([1.0, 2.0, -1.0])


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
def test_polyder_polyint_match_numpy(dtype: str) -> None:
    """Derivatives of every order (0, past the degree: empty), antiderivatives with constants (a scalar for every
    step, one per step), in NumPy's dtypes (integer coefficients: int derivatives, float64 integrals)."""
    p = P.astype(dtype)
    check(lambda p: (np.polyder(p), np.polyder(p, 2), np.polyder(p, 0), np.polyder(p, 7), np.polyint(p),
                     np.polyint(p, 2), np.polyint(p, k=3.0), np.polyint(p, 3, k=[1.0, 2.0, 3.0]), np.polyint(p, 2, k=2)), p)


def test_polyint_traced_constants_and_edge_coefficients() -> None:
    """Traced integration constants; a single coefficient; NaN and inf coefficients stay where NumPy puts them."""
    check(lambda p, k: (np.polyint(p, 2, k=k), np.polyint(p, 2, k=k[0])), P, np.array([0.5, -1.0]))
    check(lambda p: (np.polyder(p), np.polyint(p), np.polyadd(p, p), np.polymul(p, p)), np.array([2.5]))
    check(lambda p: (np.polyder(p), np.polyint(p), np.polymul(p, p[:-1])), np.array([np.nan, np.inf, 1.0, -0.0]))


def test_polymul_trims_constant_leading_zeros_and_refuses_traced_ones_at_run_time() -> None:
    """np.polymul reads its inputs as np.poly1d, which drops leading zeros: a constant's are dropped while tracing;
    a traced one's would change the result's shape, so one raises DataValueError naming the argument (never a
    result of another shape than NumPy's)."""
    check(lambda p: (np.polymul(p, [0.0, 0.0, 2.0, 1.0]), np.polymul(np.zeros(3), p), np.polymul(p, 2.0)), P)
    k = et.kernel(lambda p, q: np.polymul(p, q), cache=False)
    np.testing.assert_array_equal(k(P, Q), np.polymul(P, Q))
    with pytest.raises(et.DataValueError, match="np.polymul: a leading zero coefficient.*argument.*q"):
        k(P, np.array([0.0, 1.0, 2.0]))
    with pytest.raises(ValueError, match="Polynomial must be 1d only"):
        et.kernel(lambda p: np.polymul(p, p), cache=False)(np.ones((2, 2)))


@pytest.mark.parametrize("dtypes", [("float64", "float64"), ("float32", "int64"), ("float32", "float32")])
def test_polyadd_polysub_polymul_match_numpy(dtypes: tuple[str, str]) -> None:
    """Either one longer (aligned on the constant term), a scalar, in NumPy's promoted dtypes."""
    p, q = P.astype(dtypes[0]), Q.astype(dtypes[1])
    check(lambda p, q: (np.polyadd(p, q), np.polyadd(q, p), np.polysub(p, q), np.polysub(q, p), np.polymul(p, q),
                        np.polyadd(p, 2.0), np.polymul(q, 3), np.polysub(p, p)), p, q)


def test_roots_is_refused_with_its_reason() -> None:
    with pytest.raises(et.UnsupportedError, match="np.roots .*eigenvalues .*complex"):
        et.kernel(lambda p: np.roots(p), cache=False)(P)


@pytest.mark.parametrize("call, match", [
    (lambda p: np.polyder(p, -1), "Order of derivative must be positive"),
    (lambda p: np.polyint(p, -1), "Order of integral must be positive"),
    (lambda p: np.polyint(p, 3, k=[1.0, 2.0]), "k must be a scalar or a rank-1 array of length 1 or >m"),
])
def test_polynomial_orders_and_constants_out_of_range_raise_numpys_error(call, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        call(P)
    with pytest.raises(ValueError, match=match):
        et.kernel(call, cache=False)(P)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_tensorinv_and_tensorsolve_match_numpy(dtype: str) -> None:
    """ind 1 and 2, axes moved to the end, an integer b; float32 stays float32 (NumPy's), to its precision."""
    a = (rng.standard_normal((6, 6)) + 6 * np.eye(6)).reshape(2, 3, 2, 3).astype(dtype)
    b = rng.standard_normal((2, 3)).astype(dtype)
    c = (rng.standard_normal((2, 2, 2, 2)) + 3 * np.eye(4).reshape(2, 2, 2, 2)).astype(dtype)
    check(lambda a, b, c: (np.linalg.tensorinv(a), np.linalg.tensorinv(a.reshape(6, 2, 3), ind=1),
                           np.linalg.tensorsolve(a, b), np.linalg.tensorsolve(a.reshape(6, 2, 3), b.reshape(6)),
                           np.linalg.tensorsolve(c, b[:, :2], axes=(0,)), np.linalg.tensorsolve(a, np.arange(6).reshape(2, 3))),
          a, b, c)


def test_tensorsolve_of_mismatched_shapes_and_singular_matrices_raise() -> None:
    """NumPy's LinAlgError for shapes that do not make a square matrix (while tracing) and for a singular one
    (after the call)."""
    with pytest.raises(np.linalg.LinAlgError, match="Input arrays must satisfy"):
        et.kernel(lambda a, b: np.linalg.tensorsolve(a, b), cache=False)(np.ones((2, 3, 2, 2)), np.ones((2, 3)))
    with pytest.raises(np.linalg.LinAlgError, match="Singular matrix"):
        et.kernel(lambda a: np.linalg.tensorinv(a), cache=False)(np.zeros((2, 2, 4)))
    with pytest.raises(ValueError, match="Invalid ind argument"):
        et.kernel(lambda a: np.linalg.tensorinv(a, ind=0), cache=False)(np.eye(4).reshape(2, 2, 4))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_ndarray_searchsorted_and_wasserstein_distance_match(dtype: str) -> None:
    """The method as np.searchsorted (side, sorter); scipy.stats.wasserstein_distance (unweighted and weighted,
    ties), which calls it on its sorted values."""
    a = np.sort(np.round(rng.standard_normal(9), 1)).astype(dtype)
    v = np.array([-np.inf, 0.0, np.nan, a[3], 5.0], dtype)
    check(lambda a, v: (a.searchsorted(v), a.searchsorted(v, side="right"), a[::-1].searchsorted(v, sorter=np.arange(9)[::-1])), a, v)
    u, w = np.round(rng.standard_normal(7), 1).astype(dtype), rng.standard_normal(5).astype(dtype)
    check(lambda u, w, uw: (st.wasserstein_distance(u, w), st.wasserstein_distance(u, w, uw, np.ones(5)),
                            st.energy_distance(u, w)), u, w, rng.uniform(0.1, 1, 7).astype(dtype))


@pytest.mark.parametrize("bitorder", ["big", "little"])
def test_packbits_and_unpackbits_match_numpy(bitorder: str) -> None:
    """Flattened and along each axis, lengths not a multiple of 8 (zero bits added), bool and int inputs (nonzero:
    1), a 0-d and an empty array; unpacking with count kept, dropped from the end and past the end; round trips."""
    b = rng.integers(0, 2, (3, 11)).astype(bool)
    n = rng.integers(-3, 4, (2, 5, 3)).astype(np.int16)
    u = rng.integers(0, 256, (3, 4)).astype(np.uint8)
    check(lambda b, n, u: (np.packbits(b, bitorder=bitorder), np.packbits(b, axis=1, bitorder=bitorder),
                           np.packbits(b, axis=0, bitorder=bitorder), np.packbits(n, axis=-2, bitorder=bitorder),
                           np.packbits(n[0, 0, 0]), np.packbits(b[:, :0], axis=1),
                           np.unpackbits(u, bitorder=bitorder), np.unpackbits(u, axis=0, bitorder=bitorder),
                           np.unpackbits(u, axis=1, count=13, bitorder=bitorder), np.unpackbits(u, axis=1, count=-5),
                           np.unpackbits(u, count=100), np.unpackbits(u, axis=1, count=0),
                           np.unpackbits(np.packbits(b, axis=1, bitorder=bitorder), axis=1, count=11, bitorder=bitorder)),
          b, n, u)


@pytest.mark.parametrize("call, error, match", [
    (lambda u: np.packbits(u.astype(np.float32)), TypeError, "integer or boolean data type"),
    (lambda u: np.unpackbits(u.astype(np.int32)), TypeError, "unsigned byte data type"),
    (lambda u: np.packbits(u, bitorder="middle"), ValueError, "'order' must be either 'little' or 'big'"),
    (lambda u: np.unpackbits(u, count=-33), ValueError, "-count larger than number of elements"),
])
def test_packbits_bad_input_raises_numpys_error(call, error: type, match: str) -> None:
    u = np.arange(4, dtype=np.uint8)
    with pytest.raises(error, match=match):
        call(u)
    with pytest.raises(error, match=match):
        et.kernel(call, cache=False)(u)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_numpy_polynomial_polyval_and_chebval_match_numpy(dtype: str) -> None:
    """numpy.polynomial's power and Chebyshev series at an array, a scalar and a list; one, two and four
    coefficients, a 2-D set (one series per column, `tensor`), integer coefficients, NaN and inf in x."""
    from numpy.polynomial import chebyshev, polynomial

    x = rng.standard_normal((2, 3)).astype(dtype)
    x[0, 0], x[1, 2] = np.nan, np.inf
    for c in (rng.standard_normal(4), rng.standard_normal(1), rng.standard_normal(2), rng.standard_normal((2, 2))):
        check(lambda c, x: (polynomial.polyval(x, c), chebyshev.chebval(x, c), polynomial.polyval(2.0, c),
                            chebyshev.chebval(0.5, c), polynomial.polyval([0.5, -1.0], c),
                            polynomial.polyval(x[0, :2], c, tensor=False) if c.ndim == 2 else polynomial.polyval(x, c, tensor=False)),
              c.astype(dtype), x)
    check(lambda x: (polynomial.polyval(x, [1, 2, 3]), chebyshev.chebval(x, np.array([1, 2, 0, -1]))), x)
