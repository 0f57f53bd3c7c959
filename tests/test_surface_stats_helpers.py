"""Everyday statistics code that stopped short of compiling (a probe of 81 calls, 2026-11-29): `a, b, c, d = x.flat`
(scipy.stats.linregress), a 0-d boolean mask written (array-api-extra's `at(r, mask).set(v)`, scipy.stats.pearsonr),
np.polyfit, and scipy.stats.rankdata (spearmanr's ranks; tracing/scipy_stats.py)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.stats as st
from strategies import sweep

import egglog_tensor as et

RNG = np.random.default_rng(21)
X = RNG.standard_normal(64)
Y = 1 + 2 * X - 0.5 * X**2 + RNG.standard_normal(64) * 0.1


def test_flat_unpacks_and_a_zero_dimensional_mask_writes_all_or_nothing() -> None:
    def f(x):
        a, b, c, d = np.cov(x, 2 * x + 1).flat  # (as linregress unpacks its covariance)
        r, s = np.array(x.sum()), np.array(x.sum())
        r[r > 0], s[s < 0] = -1.0, -2.0  # (0-d masks: one True, one False for this data)
        return a + d, b - c, len(x.reshape(4, -1).flat), r, s

    x = np.abs(X)
    for got, want in zip(et.kernel(f)(x), f(x), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-14)


@pytest.mark.parametrize("case", sweep(["plain", "weights", "two columns", "full"], ["weights", "full"]))
def test_polyfit_matches_numpy(case: str) -> None:
    w = RNG.uniform(0.5, 2.0, 64)
    fit = {"plain": lambda x, y: np.polyfit(x, y, 2), "weights": lambda x, y: np.polyfit(x, y, 3, w=w),
           "two columns": lambda x, y: np.polyfit(x, np.stack([y, 2 * y], 1), 1),
           "full": lambda x, y: np.polyfit(x, y, 2, full=True)[:2]}[case]
    got, want = et.kernel(fit)(X, Y), fit(X, Y)
    for g, v in zip(got if isinstance(got, tuple) else (got,), want if isinstance(want, tuple) else (want,), strict=True):
        np.testing.assert_allclose(g, v, rtol=1e-12, atol=1e-13)


@pytest.mark.parametrize("method", sweep(["average", "min", "max", "dense", "ordinal"], ["average", "min"]))
def test_rankdata_matches_scipy(method: str) -> None:
    """Ties, every axis, NaN with 'propagate' and 'omit', integers; the integer methods' dtype is SciPy's (float64
    where a NaN is present: a guard, so the NaN-free call and the NaN call each get their own specialization)."""
    x = np.round(RNG.standard_normal((6, 9)), 1)
    with_nan = x.copy()
    with_nan[1, 3] = np.nan
    ints = RNG.integers(0, 4, (6, 9))

    def ranks(x, n, i):
        return (st.rankdata(x, method), st.rankdata(x, method, axis=1), st.rankdata(x, method, axis=0),
                st.rankdata(n, method, axis=1), st.rankdata(n, method, axis=1, nan_policy="omit"), st.rankdata(i, method, axis=1))

    kernel = et.kernel(ranks)
    for got, want in zip(kernel(x, with_nan, ints), ranks(x, with_nan, ints), strict=True):
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)
    got = kernel(x, x, ints)[3]  # (no NaN now: the other specialization)
    want = st.rankdata(x, method, axis=1)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)
    with pytest.raises(et.UnsupportedError, match="nan_policy='raise'"):
        et.kernel(lambda v: st.rankdata(v, nan_policy="raise"))(x)


def test_scipy_stats_tests_with_p_values() -> None:
    """SciPy's own linregress, pearsonr, spearmanr and t-tests, unchanged, through what they needed: .flat unpacking,
    the 0-d mask write, rankdata, and stdtr/betaincc for the p-values (tracing/special.py, lowering/incompletebeta.py)."""
    y = X + RNG.standard_normal(64)

    def tests(x, y):  # (pearsonr before a t-test: the t-test's result packing then masks a constant that went through a
        # library call site pearsonr had traced: read as its value, indexing.expand_masks)
        return (*st.linregress(x, y), *st.pearsonr(x, y), *st.spearmanr(x, y), *st.ttest_ind(x, y), *st.ttest_rel(x, y),
                *st.ttest_1samp(x, 0.1))

    for got, want in zip(et.kernel(tests)(X, y), tests(X, y), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-15)
