"""Everyday NumPy functions decomposed at trace time into existing primitives, against NumPy on real
inputs with NaN, inf and signed zeros, in float16/float32/float64 and ints: isclose/allclose, fmax/fmin,
nanargmax/nanargmin, real/imag/conj, sinc; initial= and where= of the reductions. Several functions share
one kernel per dtype to keep compiles few (one kernel for all dtypes is slower to optimize)."""

from __future__ import annotations

import numpy as np
import pytest
from strategies import check, reference

import egglog_tensor as et


def _pair(dtype: str) -> tuple[np.ndarray, np.ndarray]:
    """a and a nearly equal b (ints: equal but for one), with NaN, inf, -inf, signed zeros and a far pair."""
    a = np.arange(-6, 14).reshape(4, 5).astype(dtype)
    b = a.copy()
    b[3, 4] += 7
    if a.dtype.kind == "f":
        b += np.asarray(1e-6, dtype) * a
        a[0, 1] = b[0, 1] = np.nan
        b[1, 2] = np.nan
        a[2, 0] = np.nan
        a[2, 3], b[2, 3], a[3, 0], b[3, 0] = np.inf, np.inf, -np.inf, np.inf
        a[1, 0], b[1, 0], a[1, 1], b[1, 1] = -0.0, 0.0, 0.0, -0.0
    return a, b


def closeness(a, b):
    return (np.isclose(a, b), np.isclose(a, b, rtol=1e-3, atol=0.5, equal_nan=True), np.isclose(a, 2), np.isclose(3.0, a),
            np.fmax(a, b), np.fmin(a, b), np.fmax(a, 2), np.fmin(b, a[0]), np.maximum.reduce(np.fmax(a, b), axis=0))


@pytest.mark.parametrize("dtype", ["float16", "float64", "int32", "uint8"])
def test_isclose_fmax_fmin_match_numpy(dtype: str) -> None:
    """Bit for bit but the sign of fmax(-0.0, 0.0) (NumPy's depends on the array's length)."""
    check(closeness, *_pair(dtype), rtol=0, atol=0, signed_zeros=False)


def allclose(a, b):
    return np.allclose(a, b), np.allclose(a, a), np.allclose(a, a, equal_nan=True), np.allclose(a, b, rtol=0.5, atol=9, equal_nan=True)


@pytest.mark.parametrize("dtype", ["float32", "int64"])
def test_allclose_is_a_0d_bool(dtype: str) -> None:
    """NumPy returns a Python bool; the kernel a NumPy bool of the same value."""
    a, b = _pair(dtype)
    got, want = et.kernel(allclose)(a, b), reference(allclose, a, b)
    assert all(type(g) is np.bool_ for g in got) and [bool(g) for g in got] == list(want)
    assert not all(got)  # some are False: the test can fail


def nan_indices(a):
    return (np.nanargmax(a), np.nanargmin(a), np.nanargmax(a, axis=0), np.nanargmin(a, axis=1), np.nanargmax(a, axis=-1, keepdims=True),
            a.real, np.real(a), np.imag(a), a.imag, np.conj(a), np.conjugate(a), a.conj(), np.sinc(a))


def _with_inf_row(dtype: str) -> np.ndarray:
    """_pair's a with a row of equal values, and -inf in a row that has NaN (ints and bools: no NaN)."""
    if dtype == "bool":
        return _pair("int8")[0] > 2
    a = np.concatenate([_pair(dtype)[0], np.full((1, 5), 0.25 if dtype[0] == "f" else 1, dtype)])
    if dtype[0] == "f":
        a[2, 1] = -np.inf
    return a


@pytest.mark.parametrize("dtype", ["float16", "float64", "int16", "bool"])
def test_nanargmax_real_imag_conj_sinc_match_numpy(dtype: str) -> None:
    """np.sinc of bool is float16, np.conj of bool int8 (a.conj() keeps bool); sinc to float16's rounding."""
    check(nan_indices, _with_inf_row(dtype), rtol=2e-3 if dtype in ("float16", "bool") else None, atol=0)


def test_sinc_float64_to_rounding() -> None:
    x = np.concatenate([np.linspace(-5, 5, 41), [0.0, -0.0, 1e-300, np.inf, -np.inf, np.nan, 1e8]])
    check(lambda x: (np.sinc(x), np.sinc(x.astype(np.float32))), x, rtol=1e-6)


def test_nanargmax_of_an_all_nan_slice_is_minus_one() -> None:
    """NumPy raises ValueError (the values decide it): the kernel gives -1, as jax.numpy."""
    a = np.array([[np.nan, np.nan, np.nan], [1.0, np.nan, 3.0], [-np.inf, np.nan, -np.inf]], np.float32)
    got = et.kernel(lambda a: (np.nanargmax(a, axis=1), np.nanargmin(a, axis=1), np.nanargmax(a[:, 1])))(a)
    np.testing.assert_array_equal(got[0], [-1, 2, 0])
    np.testing.assert_array_equal(got[1], [-1, 0, 0])
    assert got[2] == -1
    np.testing.assert_array_equal(np.nanargmax(a[1:], axis=1), got[0][1:])
    with pytest.raises(ValueError, match="All-NaN"):
        np.nanargmax(a, axis=1)


def reduction_keywords(a, m):
    return (np.sum(a, initial=5), a.sum(axis=0, initial=2, where=m), np.prod(a, axis=1, where=m), a.prod(initial=2, where=m),
            np.max(a, axis=1, initial=3), a.min(axis=0, where=m, initial=100), np.maximum.reduce(a, axis=1, initial=0, where=m),
            np.minimum.reduce(a, axis=0, initial=1), np.add.reduce(a, axis=None, initial=1), np.multiply.reduce(a, 0, where=m),
            np.mean(a, where=m), a.mean(axis=1, where=m), np.mean(a, axis=0, where=[True, False, True, True]),
            np.max(a[:, :0], axis=1, initial=7), a[:0].sum(axis=0, initial=3), np.sum(a, axis=1, keepdims=True, where=m, initial=1),
            np.amax(a, axis=(0, 1), where=m[0], initial=4, keepdims=True))


@pytest.mark.parametrize("dtype", ["float16", "float64", "int32", "uint8"])
def test_initial_and_where_match_numpy(dtype: str) -> None:
    """initial= and where= of sum/prod/max/min (functions, methods, np.maximum.reduce...) and where= of mean, with NaN and
    -inf masked in and out, an empty axis."""
    a = (np.arange(12).reshape(3, 4) % 7).astype(dtype)
    if a.dtype.kind == "f":
        a[1, 1], a[2, 0], a[0, 2] = np.nan, -np.inf, -0.0
    check(reduction_keywords, a, (np.arange(12).reshape(3, 4) % 3) != 0, rtol=1e-3 if dtype == "float16" else None, atol=0)


def test_max_with_where_needs_initial() -> None:
    with pytest.raises(et.TracingError, match="does not have an identity, so to use a where mask one has to specify 'initial'"):
        et.kernel(lambda a: a.max(where=a > 0))(np.ones(3))
    with pytest.raises(ValueError, match="does not have an identity"):
        np.ones(3).max(where=np.ones(3) > 0)


def pieces(a, b, n):
    return (np.select([a > 3, a < 1], [a, b * 2], default=-1), np.select([a > 2], [1.5]), np.ldexp(a, n), np.ldexp(2.5, n),
            *np.modf(a), *np.divmod(a, b), np.append(a, b), np.append(a, b, axis=0), np.delete(a, 1), np.delete(a, [0, 2], axis=1),
            np.delete(a, slice(0, None, 2), axis=0), *np.meshgrid(a[0], b[1]), *np.meshgrid(a[0], b[:, 1], a[1], indexing="ij", sparse=True))


@pytest.mark.parametrize("dtype", ["float16", "float64", "int32"])
def test_select_ldexp_modf_divmod_append_delete_meshgrid_match_numpy(dtype: str) -> None:
    """Bit for bit, signed zeros too (modf(-0.0), modf(-inf)), with NaN and inf."""
    a = (np.arange(12).reshape(3, 4) - 5).astype(dtype) * (np.float16(0.75) if dtype[0] == "f" else 1)
    b = np.full((3, 4), 3, dtype)
    if dtype[0] == "f":
        a[1, 1], a[2, 0], a[0, 2], b[0, 0] = np.nan, -np.inf, -0.0, -2.5
    check(pieces, a, b, (np.arange(12).reshape(3, 4) % 5 - 2).astype(np.int32), rtol=0, atol=0)


def test_ldexp_rounds_once() -> None:
    """Results near float32's overflow and in its subnormals, and a float16 loop (float32 inputs would give float32)."""
    x = np.array([1.5, 1.0, 0.75, -3.0, 1.0 + 2.0**-23, np.inf, np.nan, 0.0], np.float32)
    n = np.array([127, -149, -148, 100, -140, 3, 1, 5], np.int32)
    check(lambda x, n: (np.ldexp(x, n), np.ldexp(x.astype(np.float16), n.astype(np.int8) // 8)), x, n, rtol=0, atol=0)


def test_select_refuses_non_bool_conditions() -> None:
    with pytest.raises(et.TracingError, match="invalid entry 0 in condlist: should be boolean ndarray"):
        et.kernel(lambda a: np.select([a], [a]))(np.ones(3))


def products_and_areas(a, b, m, t):
    return (np.cross(a, b), np.cross(a.T, b.T, axis=0), np.cross(a, b[0]), np.cross(a, b, axisc=0), np.linalg.matrix_power(m, 0),
            np.linalg.matrix_power(m, 1), np.linalg.matrix_power(m, 3), np.linalg.matrix_power(m, 6), np.trapezoid(a),
            np.trapezoid(a, dx=0.5, axis=0), np.trapezoid(a, t, axis=0), np.trapezoid(a[:, 0], a[:, 1]))


@pytest.mark.parametrize("dtype", ["float16", "float64", "int32"])
def test_cross_matrix_power_trapezoid_match_numpy(dtype: str) -> None:
    """np.trapz is gone from NumPy 2.4 (trapezoid only); matrix_power by squaring in NumPy's order of products."""
    a = (np.arange(12).reshape(4, 3) % 5 - 2).astype(dtype)
    b = ((np.arange(12).reshape(4, 3) * 7) % 5).astype(dtype)
    m = (np.arange(9).reshape(3, 3) % 4 - 1).astype(dtype)
    if dtype[0] == "f":
        a[1, 1], a[3, 2], m = np.nan, np.inf, m / 2
    check(products_and_areas, a, b, m, np.array([0, 0.5, 2, 2.5]), rtol=1e-3 if dtype == "float16" else None, atol=0)


def test_matrix_power_of_a_negative_power_is_the_inverse_s() -> None:
    """(2-vector np.cross compiles: tests/test_surface_everyday3.py.)"""
    m = np.array([[2.0, 1.0], [1.0, 3.0]])
    got = et.kernel(lambda m: (np.linalg.matrix_power(m, -1), np.linalg.matrix_power(m, -3)))(m)
    for g, n in zip(got, (-1, -3), strict=True):
        np.testing.assert_allclose(g, np.linalg.matrix_power(m, n), rtol=1e-14)


def test_matrix_power_of_an_int_argument_is_specialized() -> None:
    """An int argument as the exponent is specialized on its value, as a shape or slice bound is (until 2026-11-28:
    "exponent must be an integer known while tracing")."""
    m = np.array([[2.0, 1.0], [1.0, 3.0]])
    check(np.linalg.matrix_power, m, 3)
    check(np.linalg.matrix_power, m, -2)


def covariances(a, b):
    return (np.cov(a), np.cov(a, rowvar=False), np.cov(a, bias=True), np.cov(a, ddof=0), np.cov(a[0], b[0]), np.cov(a, b), np.cov(a[1]),
            np.corrcoef(a), np.corrcoef(a, rowvar=False), np.corrcoef(a[0], b[1]), np.corrcoef(a[2]), np.cov(a, dtype=np.float32))


@pytest.mark.parametrize("dtype", ["float16", "int32"])
def test_cov_corrcoef_match_numpy(dtype: str) -> None:
    """In float64 for every input dtype (NumPy's result_type(m, float64)), one variable a 0-d result, a constant row NaN."""
    a = ((np.arange(15).reshape(3, 5) * 7) % 6 - 2).astype(dtype)
    a[2] = 3
    b = ((np.arange(15).reshape(3, 5) * 5) % 4).astype(dtype)
    if dtype[0] == "f":
        a[1, 1] = 0.5
    check(covariances, a, b, rtol=1e-12, atol=1e-15)


def test_cov_refuses_weights() -> None:
    with pytest.raises(et.UnsupportedError, match=r"np.cov: keyword arguments \['aweights'\] are not supported"):
        et.kernel(lambda a: np.cov(a, aweights=a[0]))(np.ones((2, 3)))


def bins_of(x, bins, k):
    return (np.digitize(x, bins), np.digitize(x, bins, right=True), np.digitize(x, bins[::-1]), np.digitize(x, bins[::-1], right=True),
            np.digitize(x, [0.0, 1.0, 1.0, 2.5]), np.digitize(x, [3, 1, 1, -1], right=True), np.digitize(x, [2, 2, 2]), np.digitize(k, bins))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_digitize_matches_numpy(dtype: str) -> None:
    """Bins an argument (increasing, or reversed: read from bins[0] <= bins[-1] at run time) or a constant (increasing,
    decreasing, all equal), right=, repeated edges, NaN and +-inf, int x."""
    x = np.array([-2, -1, 0, 0.5, 1, 1.5, 2.5, 3, 7, np.nan, np.inf, -np.inf]).astype(dtype).reshape(3, 4)
    check(bins_of, x, np.array([-1, 0, 1, 1, 2.5, 3]).astype(dtype), np.arange(-3, 5, dtype=np.int32))


def test_digitize_refuses_unsorted_constant_bins() -> None:
    with pytest.raises(et.TracingError, match="bins must be monotonically increasing or decreasing"):
        et.kernel(lambda x: np.digitize(x, [1.0, 3.0, 2.0]))(np.ones(3))


def gradients(a):
    return (*np.gradient(a), np.gradient(a, axis=0), np.gradient(a, 0.5, axis=1), *np.gradient(a, 2, 0.25), np.gradient(a[0]),
            np.gradient(a[:2, 0]), *np.gradient(a, axis=(1, 0)))


@pytest.mark.parametrize("dtype", ["float16", "float32", "int32"])
def test_gradient_matches_numpy(dtype: str) -> None:
    """Bit for bit: every axis, one axis, scalar spacings (one for all, one per axis), two points (edges only), NaN and inf."""
    a = ((np.arange(20).reshape(4, 5) ** 2) % 7).astype(dtype)
    if dtype[0] == "f":
        a[1, 2], a[3, 0] = np.nan, np.inf
    check(gradients, a, rtol=0, atol=0)


def test_gradient_errors_are_numpys() -> None:
    """(Coordinates and edge_order=2 work: tests/test_surface_everyday3.py.)"""
    with pytest.raises(et.TracingError, match="'edge_order' greater than 2 not supported"):
        et.kernel(lambda a: np.gradient(a, edge_order=3))(np.ones(4))
    with pytest.raises(et.TracingError, match="distances must match the length"):
        et.kernel(lambda a: np.gradient(a, np.arange(3.0)))(np.ones(4))
    with pytest.raises(et.TracingError, match="at least \\(edge_order \\+ 1\\) elements"):
        et.kernel(lambda a: np.gradient(a, edge_order=2))(np.ones(2))


def blocks(a, b, v):
    return (np.block([[a, b], [b, a]]), np.block([a, b]), np.block([v, 1.0, v]), np.block([[v], [v]]), np.block([[[a]], [[b]]]),
            np.block(a), np.block([[a, np.zeros((2, 1), np.int32)]]))


def test_block_matches_numpy() -> None:
    """2x2 blocks, one row, scalars and vectors among blocks, depth beyond the blocks' rank, a bare array, mixed dtypes."""
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    check(blocks, a, -a, np.arange(3.0), rtol=0, atol=0)
    with pytest.raises(et.TracingError, match="List depths are mismatched"):
        et.kernel(lambda a: np.block([a, [a]]))(a)


def inserts(a, v):
    return (np.insert(a, 1, 5), np.insert(a, 2, v[:3], axis=1), np.insert(a, [2], v[:3, None], axis=1), np.insert(a, [0, 2, 2, -1], 9.5, axis=1),
            np.insert(a, slice(0, 3), v[:3]), np.insert(a, 0, v[:4], axis=0), np.insert(a, 4, [[1], [2], [3]], axis=1),
            np.insert(a, -1, 7, axis=0), np.insert(a, np.array([True, False, True, False]), 0, axis=1))


def test_insert_matches_numpy() -> None:
    """NumPy's broadcasting of values (a scalar index moves values' first axis to `axis`), repeated and negative
    indices, a slice, a bool mask, float values cast to int32 as NumPy casts them."""
    check(inserts, np.arange(12, dtype=np.int32).reshape(3, 4), np.arange(5.0) * 1.5)
    with pytest.raises(et.IndexOutOfBoundsError, match="index 5 is out of bounds for axis 0 with size 4"):
        et.kernel(lambda a: np.insert(a, 5, 1.0))(np.ones(4))


def frexp_of(a):
    return np.frexp(a)


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "int16"])
def test_frexp_matches_numpy(dtype: str) -> None:
    """Bit for bit: zeros of both signs, the dtype's max, tiny and subnormals, inf, NaN, values next to powers of 2,
    and 2000 random values over 60 decades (6 for float16); ints as float64."""
    if dtype == "int16":
        check(frexp_of, np.arange(-300, 300, 7, dtype=np.int16), rtol=0, atol=0)
        return
    fi = np.finfo(dtype)
    a = np.array([0.0, -0.0, 1.0, 0.5, -3.0, 1024, 1023.9, fi.max, -fi.max, fi.tiny, fi.smallest_subnormal, fi.tiny / 3,
                  np.inf, -np.inf, np.nan, 1 - fi.eps / 2, 1 + fi.eps, 2.0**-20], dtype)
    decades = 3 if dtype == "float16" else 30
    spread = np.asarray(10.0, dtype) ** np.random.default_rng(1).integers(-decades, decades, 2000).astype(dtype)
    check(frexp_of, np.concatenate([a, np.random.default_rng(0).standard_normal(2000).astype(dtype) * spread]), rtol=0, atol=0)


MULTI_DOT_SHAPES = [  # (shapes, NumPy's order written out)
    ([(10, 100), (100, 5), (5, 50)], lambda a, b, c: (a @ b) @ c),
    ([(50, 5), (5, 100), (100, 10)], lambda a, b, c: a @ (b @ c)),
    ([(7,), (7, 3), (3, 9)], lambda a, b, c: (a @ b) @ c),
    ([(30, 3), (3, 9), (9,)], lambda a, b, c: a @ (b @ c)),
    ([(4, 6), (6, 30), (30, 2), (2, 8), (8, 5)], lambda a, b, c, d, e: (a @ (b @ c)) @ (d @ e)),
    ([(6,), (6, 30), (30, 2), (2, 8), (8,)], lambda a, b, c, d, e: ((a @ b) @ c) @ (d @ e)),
]


@pytest.mark.parametrize(("shapes", "order"), MULTI_DOT_SHAPES)
def test_multi_dot_multiplies_in_numpys_order(shapes, order) -> None:
    """np.linalg.multi_dot: NumPy's order of products (its cost test for three, its dynamic program for more;
    checked against a kernel of the products written in that order, bit for bit), 1-D ends as NumPy's (a row
    and a column)."""
    rng = np.random.default_rng(len(shapes))
    arrays = [rng.standard_normal(s) for s in shapes]
    got = et.kernel(lambda *a: np.linalg.multi_dot(a))(*arrays)
    want = np.linalg.multi_dot(arrays)
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    ends = [np.atleast_2d(arrays[0]), *arrays[1:-1], np.atleast_2d(arrays[-1]).T if arrays[-1].ndim == 1 else arrays[-1]]
    np.testing.assert_array_equal(got, et.kernel(order)(*ends).reshape(want.shape))


def test_multi_dot_out_and_errors() -> None:
    rng = np.random.default_rng(0)
    a, b, c = rng.standard_normal((10, 100)), rng.standard_normal((100, 5)), rng.standard_normal((5, 50))
    out = np.zeros((10, 50))
    et.kernel(lambda a, b, c, o: np.linalg.multi_dot([a, b, c], out=o))(a, b, c, out)
    np.testing.assert_allclose(out, np.linalg.multi_dot([a, b, c]), rtol=1e-12)
    with pytest.raises(et.TracingError, match="Expecting at least two arrays"):
        et.kernel(lambda a: np.linalg.multi_dot([a]))(a)
    with pytest.raises(et.TracingError, match="3-dimensional array given"):
        et.kernel(lambda a, b: np.linalg.multi_dot([a, b, b]))(np.ones((2, 2, 2)), np.ones((2, 2)))
