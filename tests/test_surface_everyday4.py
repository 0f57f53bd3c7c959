"""Everyday calls a fourth survey (89 NumPy/SciPy calls, 78 compiled) found failing: np.choose, np.vectorize of an
elementwise function, scipy.linalg's lu_factor/lu_solve, expm and its special matrices (toeplitz, hankel,
circulant). Few kernels, small arrays."""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.linalg as sl
from strategies import check

import egglog_tensor as et

rng = np.random.default_rng(4)


@pytest.mark.parametrize("mode", ["raise", "wrap", "clip"])
def test_choose_matches_numpy(mode: str) -> None:
    """np.choose (and ndarray.choose) of an index array over broadcast choices, in their result dtype; out-of-range
    indices wrapped or clipped as NumPy does."""
    index = np.array([[0, 1, 2, 1], [2, 0, 1, 0]]) if mode == "raise" else np.array([[-1, 4, 2, 1], [7, 0, -5, 3]])
    x = rng.standard_normal((2, 4)).astype(np.float32)
    check(lambda i, x: (np.choose(i, [x, -x, np.arange(4)], mode=mode), i.choose([x, x * 2, 7], mode=mode)), index, x)


def test_choose_out_of_range_raises_at_run_time() -> None:
    """mode "raise": an index outside the choices is NumPy's ValueError, from the call that holds it."""
    k = et.kernel(lambda i, x: np.choose(i, [x, -x]), cache=False)
    x = np.ones(3)
    np.testing.assert_array_equal(k(np.array([0, 1, 1]), x), [1, -1, -1])
    with pytest.raises(ValueError, match="invalid entry in choice array"):
        k(np.array([0, 2, 1]), x)


def test_vectorize_traces_an_elementwise_function_on_whole_arrays() -> None:
    """np.vectorize(f)(...): f once on the broadcast arrays, keyword and excluded arguments, several outputs, otypes,
    a constant f, integer arithmetic: NumPy's values, shapes and dtypes."""
    x, y, n = rng.standard_normal((3, 4)), rng.standard_normal(4), (np.arange(12).reshape(3, 4) - 5)
    f = np.vectorize(lambda a, b=1.0: a * b + np.exp(-a) if True else 0.0)
    two = np.vectorize(lambda a: (a * 2, np.floor(a)))
    power = np.vectorize(lambda a, k: a ** k, excluded={1})
    cast = np.vectorize(lambda a: a * 2, otypes=[np.float32])
    check(lambda x, y, n: (f(x, y), f(x, b=y), *two(x), power(x, 3), cast(x), np.vectorize(lambda a: 1.5)(x),
                           np.vectorize(lambda a: a // 3 + (a % 3))(n)), x, y, n)


@pytest.mark.parametrize("body, why", [
    (lambda a: a if a > 0 else -a, "control flow"),
    (lambda a: math.exp(a), "control flow or math-module calls"),
    (lambda a: a - np.mean(a), "computes sum"),
    (lambda a: np.cumsum(a), "computes reshape|computes cumsum"),
    (lambda a: a[::-1], "computes slice"),
])
def test_vectorize_refuses_what_only_an_element_can_do(body, why: str) -> None:
    """What per element sees one value (a branch on it, math.exp, a reduction, a scan, a view) is an UnsupportedError
    naming it: traced on whole arrays it would compute something else."""
    with pytest.raises(et.UnsupportedError, match=f"np.vectorize.*({why})"):
        et.kernel(lambda x: np.vectorize(body)(x), cache=False)(np.linspace(-1, 1, 6))


def test_lu_factor_and_lu_solve_match_scipy() -> None:
    """scipy.linalg.lu_factor's packed factors and pivots (int32, from 0) bit for bit (LAPACK's getrf steps), lu_solve of
    a vector and of a matrix from them, in a kernel and from SciPy's factors passed in."""
    a = rng.standard_normal((7, 7))
    b, bs = rng.standard_normal(7), rng.standard_normal((7, 3))
    got_lu, got_piv = et.kernel(sl.lu_factor, cache=False)(a)
    want_lu, want_piv = sl.lu_factor(a)
    np.testing.assert_array_equal(got_piv, want_piv)
    assert got_piv.dtype == want_piv.dtype
    np.testing.assert_allclose(got_lu, want_lu, rtol=1e-13, atol=1e-14)
    check(lambda a, b, bs: (sl.lu_solve(sl.lu_factor(a), b), sl.lu_solve(sl.lu_factor(a), bs)), a, b, bs, rtol=1e-12, atol=1e-13)
    check(lambda lu, piv, b: sl.lu_solve((lu, piv), b), want_lu, want_piv, b, rtol=1e-12, atol=1e-13)
    with pytest.raises(et.UnsupportedError, match="trans=1"):
        et.kernel(lambda a, b: sl.lu_solve(sl.lu_factor(a), b, trans=1), cache=False)(a, b)


@pytest.mark.parametrize("scale", [1e-3, 1.0, 40.0])
def test_expm_matches_scipy(scale: float) -> None:
    """scipy.linalg.expm by scaling and squaring: a norm small enough for no squaring, and ones needing several (each
    a guard: a kernel per number of squarings), a stack, float32 in float32; within rounding of SciPy's."""
    a = rng.standard_normal((2, 6, 6)) * scale / 6
    k = et.kernel(sl.expm, cache=False)
    for m in (a[0], a):
        want = sl.expm(m)
        np.testing.assert_allclose(k(m), want, rtol=1e-11, atol=1e-13 * np.abs(want).max())
    got32 = k(a[0].astype(np.float32))
    assert got32.dtype == np.float32
    np.testing.assert_allclose(got32, sl.expm(a[0]), rtol=2e-4, atol=1e-5 * np.abs(sl.expm(a[0])).max())


def test_expm_of_a_known_matrix() -> None:
    """exp of a rotation generator is the rotation; of a nilpotent matrix its finite series."""
    t = 0.7
    k = et.kernel(sl.expm, cache=False)
    np.testing.assert_allclose(k(np.array([[0.0, -t], [t, 0.0]])), [[np.cos(t), -np.sin(t)], [np.sin(t), np.cos(t)]], atol=1e-15)
    np.testing.assert_allclose(k(np.array([[0.0, 1.0, 0.0], [0.0, 0.0, 1.0], [0.0, 0.0, 0.0]])),
                               [[1.0, 1.0, 0.5], [0.0, 1.0, 1.0], [0.0, 0.0, 1.0]], atol=1e-15)


def test_special_matrices_match_scipy() -> None:
    """scipy.linalg.toeplitz (r default and given, batches of c), hankel (r default and given), circulant (a batch):
    SciPy's values and dtypes."""
    c, r = rng.standard_normal(4), rng.standard_normal(6).astype(np.float32)
    cs = rng.standard_normal((2, 3))
    check(lambda c, r, cs: (sl.toeplitz(c), sl.toeplitz(c, r), sl.toeplitz(cs), sl.hankel(c), sl.hankel(c, r),
                            sl.circulant(c), sl.circulant(cs)), c, r, cs)


@pytest.mark.parametrize("rows", [8, 12, 32])
def test_row_scans_of_index_computed_values_match_numpy(rows: int) -> None:
    """A scan along rows of a value made from array indices inside the kernel (np.vander of np.linspace, so np.polyfit
    on an in-kernel grid; cumsum of a broadcast arange): the interleaved row scan (4 rows side by side) renumbers the
    rows, so it leaves those to the plain scan. It gave the first row of each block of 4 to all four (a wrong answer,
    found by the survey)."""
    y = rng.standard_normal(rows)
    check(lambda y: (np.polyfit(np.linspace(-1, 1, rows), y, 3), np.vander(np.linspace(-1, 1, rows), 4),
                     np.cumsum(np.broadcast_to(np.arange(float(rows))[:, None], (rows, 3)), axis=1) + y[:, None]), y,
          rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("kind", ["rank", "weak", "strict", "mean"])
def test_percentileofscore_matches_scipy(kind: str) -> None:
    """scipy.stats.percentileofscore: ties, scores outside the data, a NaN score, a NaN in the data under both
    nan_policies, an array and a scalar score."""
    import scipy.stats as st

    a = rng.integers(0, 5, 20).astype(float)
    with_nan = a.copy()
    with_nan[3] = np.nan
    scores = np.array([0.0, 2.0, 2.5, 9.0, np.nan, -1.0])
    for policy in ("propagate", "omit"):
        check(lambda a, b, s: (st.percentileofscore(a, s, kind=kind, nan_policy=policy),
                               st.percentileofscore(b, s, kind=kind, nan_policy=policy),
                               st.percentileofscore(a, 2.0, kind=kind, nan_policy=policy)), a, with_nan, scores)
