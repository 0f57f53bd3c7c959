"""scipy.special's regularized incomplete gamma functions gammainc/gammaincc in a kernel (lowering/incomplete.py),
their inverses gammaincinv/gammainccinv, the distribution functions made of them (gdtr chdtr pdtr, complements and
inverses) and the scipy.stats methods that call them (gamma, chi2, poisson...): against SciPy over each of the
algorithm's regimes, against mpmath, at the edges."""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest
import scipy.special as sp
import scipy.stats as st

import egglog_tensor as et
from egglog_tensor.lowering import incomplete

RNG = np.random.default_rng(11)


def _regimes() -> tuple[np.ndarray, np.ndarray]:
    """(a, x) pairs in every branch: small a and x (both series), x > a (continued fraction), x <= 1.1 with
    small a (Q's own series), a ~ x for 20 < a < 200 and beyond (Temme's expansion), large a far from x
    (the direct factor), a up to 1e6 near x within the expansion's band and just outside it."""
    a = np.concatenate([RNG.uniform(0, 5, 400), RNG.uniform(0, 300, 400), 10 ** RNG.uniform(-12, 0, 200),
                        RNG.uniform(20, 200, 300), 10 ** RNG.uniform(2.3, 6, 300), 10 ** RNG.uniform(0, 4, 200)])
    x = np.concatenate([RNG.uniform(0, 5, 400), RNG.uniform(0, 300, 400), RNG.uniform(0, 1.1, 200),
                        a[1000:1300] * RNG.uniform(0.7, 1.3, 300), a[1300:1600] * (1 + RNG.normal(0, 5, 300) / np.sqrt(a[1300:1600])),
                        a[1600:] * 10 ** RNG.uniform(-2, 2, 200)])
    return a, np.abs(x)


def _grid(values: list[float], arity: int) -> list[np.ndarray]:
    """Each argument's array over every combination of `values` (edges: NaN, +-0, negative, inf...)."""
    return [np.array(c) for c in zip(*itertools.product(values, repeat=arity), strict=True)]


def _assert_as_scipy(got: tuple[np.ndarray, ...], want: tuple[np.ndarray, ...]) -> None:
    """Each result within 1e-13 of SciPy's, NaN where SciPy's is (SciPy's domain warnings silenced)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for g, w in zip(got, want, strict=True):
            np.testing.assert_allclose(g, w, rtol=1e-13, atol=0)


@pytest.fixture(scope="module")
def both() -> et.Kernel:
    return et.kernel(lambda a, x: (sp.gammainc(a, x), sp.gammaincc(a, x)))


def test_matches_scipy_in_every_regime(both: et.Kernel) -> None:
    """Two thirds bit for bit with SciPy; where x^a e^-x / Gamma(a) is formed as exp(a log x - x - lgamma(a)) (a far
    from x), libm's lgamma and SciPy's Cephes differ by an ULP of a large lgamma, which exp turns into a relative
    error: up to 1e-12 (both are that far from mpmath there: test_accuracy_against_mpmath), 1e-10 on values
    below 1e-30 (larger a)."""
    a, x = _regimes()
    for got, want in zip(both(a, x), (sp.gammainc(a, x), sp.gammaincc(a, x)), strict=True):
        error = np.abs(got - want) / np.maximum(np.abs(want), 1e-300)
        assert np.all(np.isfinite(got))
        assert error[want > 1e-30].max() <= 1e-12, error[want > 1e-30].max()
        assert error.max() <= 1e-10, error.max()
        assert np.mean(error == 0) > 0.5


def test_accuracy_against_mpmath(both: et.Kernel) -> None:
    """The worst relative error against 40-digit mpmath over every regime within 1e-12, as SciPy's (its own
    peak on these points is 5e-13; Cephes documents 1e-13 for a, x < 100)."""
    import mpmath

    mpmath.mp.dps = 40
    a, x = _regimes()
    pick = np.concatenate([np.arange(start, start + 200, 10) for start in range(0, 1800, 200)])
    pick = pick[(a[pick] < 3e4) & (x[pick] > 0)]
    got_p, got_q = both(a[pick], x[pick])
    worst = 0.0
    for i, p, q in zip(pick, got_p, got_q, strict=True):
        exact_p = mpmath.gammainc(mpmath.mpf(a[i]), 0, mpmath.mpf(x[i]), regularized=True)
        for got, exact in ((p, exact_p), (q, 1 - exact_p)):
            if abs(exact) > 1e-30:
                worst = max(worst, float(abs((got - exact) / exact)))
    assert worst <= 1e-12, worst


def test_edges_are_scipys(both: et.Kernel) -> None:
    """NaN, negative, zero and infinite arguments in every combination give SciPy's values (NaN, 0, 1)."""
    a, x = _grid([-1.0, -0.0, 0.0, 1e-300, 0.5, 2.0, 25.0, 1e300, np.inf, np.nan], 2)
    _assert_as_scipy(both(a, x), (sp.gammainc(a, x), sp.gammaincc(a, x)))


def test_float32_is_computed_in_float64_and_rounded_once() -> None:
    a, x = (v.astype(np.float32) for v in _regimes())
    got = et.kernel(lambda a, x: sp.gammaincc(a, x))(a, x)
    want = sp.gammaincc(a, x)
    assert got.dtype == want.dtype == np.float32
    assert np.abs(got.view(np.int32) - want.view(np.int32)).max() <= 1  # one rounding of nearly equal float64s


def test_distribution_functions_and_scipy_stats() -> None:
    """gdtr gdtrc chdtr chdtrc pdtr pdtrc as SciPy defines them (NaN for negative x, k, m; Poisson's floor(k)),
    and scipy.stats' gamma, chi2, erlang and poisson cdf/sf/logsf through SciPy's own code."""
    u, v, w = _grid([-1.0, 0.0, 0.5, 2.0, 7.5, np.inf, np.nan], 3)

    def functions(u, v, w):
        return (sp.gdtr(u, v, w), sp.gdtrc(u, v, w), sp.chdtr(v, w), sp.chdtrc(v, w), sp.pdtr(v, w), sp.pdtrc(v, w))

    _assert_as_scipy(et.kernel(functions)(u, v, w), functions(u, v, w))
    x = np.linspace(0, 40, 81)

    def stats(x):
        return (st.gamma.cdf(x, 2.5, scale=3.0), st.gamma.sf(x, 0.7), st.chi2.cdf(x, 3), st.chi2.sf(x, 12.5),
                st.chi2.logsf(x, 4), st.erlang.cdf(x, 4), st.poisson.cdf(np.floor(x), 9.0), st.poisson.sf(np.floor(x), 9.0))

    for got, want in zip(et.kernel(stats)(x), stats(x), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-300)


def test_temme_coefficients_derived_exactly() -> None:
    """DLMF 8.12's d[k][n] from the series reversion: the known first ones (-1/3, 1/12, -2/135; d[1][0] = -1/540)."""
    d = incomplete.temme_coefficients()
    assert (d[0][0], d[0][1], d[0][2], d[1][0]) == (-1 / 3, 1 / 12, -2 / 135, -1 / 540)
    assert len(d) == incomplete.TEMME_K and all(len(row) == incomplete.TEMME_N for row in d)


def test_gpu_targets_refuse_it() -> None:
    """No device math library (docs/gpu.md): refused, naming what the device lacks (libm's lgamma and tgamma; its
    scalar code's pow() the device computes)."""
    with pytest.raises(et.UnsupportedError, match="GPU target nvvm: libm's lgamma, libm's tgamma"):
        et.kernel(lambda a, x: sp.gammainc(a, x), target="nvvm:sm_90").lower(np.ones(4), np.ones(4))


def _probabilities() -> tuple[np.ndarray, np.ndarray]:
    """(a, p): a from 1e-3 to 1e6, p uniform, down to 1e-300, and up to 1 - 1e-16 (the other function's side)."""
    a = np.concatenate([10 ** RNG.uniform(-3, 0, 200), RNG.uniform(0, 10, 200), 10 ** RNG.uniform(1, 6, 200)])
    p = np.concatenate([RNG.uniform(0, 1, 400), 10 ** RNG.uniform(-300, 0, 200)])
    return np.concatenate([a, a]), np.concatenate([p, 1 - p[::-1]])


def test_inverses_match_scipy() -> None:
    """gammaincinv and gammainccinv (lowering/incomplete_inverse.py) within 1e-13 of SciPy, times 1/a where a < 1
    (x^a ~ p there: p's rounding moves x 1/a-fold; both are that close to mpmath's root); SciPy's edges."""
    a, p = _probabilities()
    k = et.kernel(lambda a, p: (sp.gammaincinv(a, p), sp.gammainccinv(a, p)))
    for got, want in zip(k(a, p), (sp.gammaincinv(a, p), sp.gammainccinv(a, p)), strict=True):
        error = np.where(got == want, 0.0, np.abs(got - want) / np.maximum(np.abs(want), 1e-300))
        assert np.all(error <= 1e-13 * np.maximum(1.0, 1.0 / a)), (error / np.maximum(1.0, 1.0 / a)).max()
        assert np.mean(error == 0) > 0.4
    a, p = _grid([-1.0, 0.0, 0.3, 0.5, 0.95, 1.0, 2.0, 400.0, np.inf, np.nan], 2)
    _assert_as_scipy(k(a, p), (sp.gammaincinv(a, p), sp.gammainccinv(a, p)))


def test_quantiles_of_gamma_and_chi2() -> None:
    """chdtri, pdtri (edges too) and scipy.stats' gamma/chi2/erlang/invgamma ppf and isf through SciPy's code."""
    u, v = _grid([-1.0, 0.0, 0.3, 1.0, 2.5, np.inf, np.nan], 2)
    q = np.linspace(0, 1, 41)

    def quantiles(u, v, q):
        return (sp.chdtri(u, v), sp.pdtri(u, v), st.gamma.ppf(q, 2.5, scale=2.0), st.gamma.isf(q, 0.7), st.chi2.ppf(q, 3),
                st.chi2.isf(q, 12.5), st.erlang.ppf(q, 4), st.invgamma.ppf(q, 2.5))

    _assert_as_scipy(et.kernel(quantiles)(u, v, q), quantiles(u, v, q))


def test_inverse_of_tiny_p_against_mpmath() -> None:
    """gammaincinv for p from 1e-300 to 1e-20 and a from 0.1 to 20 against 60-digit mpmath (Newton on log P in
    log x from the exact root x^a / Gamma(a + 1) = p refined): the factor x^a e^-x / Gamma(a) by pow(), not
    e^(a log x - ...) (|a log x| ULP), and Halley's step (P - p) / P' x, not (P - p) x / P', which underflowed to
    no step (before: 2900 ULP on these, 1100 at a = 2, p = 1e-250; SciPy 146 there). Measured: 18
    ULP (at a = 0.1, p = 1e-30; SciPy 267); bound 30, SciPy's worst here 671."""
    import mpmath

    mpmath.mp.dps = 60
    cases = [(a, p) for a in (0.1, 0.5, 1.01, 1.3, 2.0, 3.0, 5.5, 20.0, 82.5, 134.5) for p in (1e-300, 1e-280, 1e-200, 1e-100, 1e-30, 1e-20)]
    a, p = (np.array(v) for v in zip(*cases, strict=True))
    got = et.kernel(lambda a, p: sp.gammaincinv(a, p))(a, p)
    worst = 0.0
    for ai, pi, gi in zip(a, p, got, strict=True):
        am, pm = mpmath.mpf(ai), mpmath.mpf(pi)
        x = (pm * mpmath.gamma(am + 1)) ** (1 / am)
        for _ in range(20):  # Newton on log P(a, x) - log p in log x
            step = mpmath.log(mpmath.gammainc(am, 0, x, regularized=True) / pm) * mpmath.gammainc(am, 0, x, regularized=True) \
                / (x**am * mpmath.exp(-x) / mpmath.gamma(am))
            x *= mpmath.exp(-step)
        if x > 1e-300:
            worst = max(worst, float(abs(mpmath.mpf(gi) - x) / np.spacing(float(x))))
    assert worst <= 30, worst


def test_power_series_factor_against_mpmath(both: et.Kernel) -> None:
    """P(a, x) for x from 1e-200 to 1e-3 and a from 0.1 to 30 against 40-digit mpmath: the factor x^a e^-x / Gamma(a)
    by pow() (Boost's regularized_gamma_prefix; x^a / (a + g - 1/2)^a where the quotient's power underflows), not
    e^(a log x - x - lgamma(a)) (Cephes', SciPy's: |a log x| ULP, 559 on this sample, as the kernel's before).
    Measured: 10 ULP; bound 20."""
    import mpmath

    mpmath.mp.dps = 40
    rng = np.random.default_rng(5)
    a, x = np.exp(rng.uniform(np.log(0.1), np.log(30), 300)), np.exp(rng.uniform(np.log(1e-200), np.log(1e-3), 300))
    p, _ = both(a, x)
    worst = 0.0
    for ai, xi, pi in zip(a, x, p, strict=True):
        exact = mpmath.gammainc(ai, 0, xi, regularized=True)
        if exact > 1e-300:
            worst = max(worst, float(abs(mpmath.mpf(pi) - exact) / np.spacing(float(exact))))
    assert worst <= 20, worst
