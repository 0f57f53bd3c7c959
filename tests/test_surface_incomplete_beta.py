"""scipy.special's regularized incomplete beta integral betainc/betaincc in a kernel (lowering/incompletebeta.py),
the distribution functions made of it (bdtr fdtr nbdtr stdtr and complements, scipy.stats' private binomial
ufuncs) and scipy.stats' t, f, beta, binom and nbinom cdf and sf that call them: against SciPy over each of the
algorithm's regimes, against mpmath, at the edges."""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest
import scipy.special as sp
import scipy.special._ufuncs as private
import scipy.stats as st

import egglog_tensor as et

RNG = np.random.default_rng(7)
N = 300


def _regimes() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(a, b, x) in every branch, and which have a or b above 1000: a, b up to 5 over all of [0, 1] (the power
    series, both continued fractions, the swap), a, b from 1e-10 (the complement of I near 1), up to 200, x from
    1e-12 of 0 and of 1, a from 1e-10 with x below the mean and b from 1e-10 with x above it (1 - I by the
    series' own complement), and a, b from 1 to 1e5 within three standard deviations of the mean (the continued
    fractions' slowest, the factor's cancelling exponent)."""
    rng = np.random.default_rng(7)  # (the same points in every test)
    u = lambda lo, hi: rng.uniform(lo, hi, N)  # noqa: E731
    logu = lambda lo, hi: 10 ** rng.uniform(lo, hi, N)  # noqa: E731
    a = np.concatenate([u(0, 5), logu(-10, 0), u(1, 200), u(0, 5), u(0, 5), logu(-10, 0.5), logu(-1, 2), logu(0, 5), logu(2, 5)])
    b = np.concatenate([u(0, 5), logu(-10, 1), u(1, 200), u(0, 5), u(0, 5), logu(-1, 2), logu(-10, 0.5), logu(0, 5), logu(2, 5)])
    mean, sd = a / (a + b), np.sqrt(a * b / (a + b) ** 2 / (a + b + 1))
    near_mean = np.clip(mean + sd * rng.normal(0, 3, a.size), 1e-300, 1 - 2**-53)
    below_mean = mean[5 * N:6 * N] * logu(-6, 0)  # (small a: I near 1, its complement by the series' own)
    above_mean = 1 - (1 - mean[6 * N:7 * N]) * logu(-6, 0)  # (small b: the same, swapped)
    x = np.concatenate([u(0, 1), u(0, 1), u(0, 1), logu(-12, 0), 1 - logu(-12, 0), below_mean, above_mean, near_mean[-2 * N:]])
    return a, b, x, np.maximum(a, b) > 1000


@pytest.fixture(scope="module")
def both() -> et.Kernel:
    return et.kernel(lambda a, b, x: (sp.betainc(a, b, x), sp.betaincc(a, b, x)))


def _relative(got: np.ndarray, want: np.ndarray) -> np.ndarray:
    """The relative error, absolute in units of 1e-290 below it (subnormal results carry fewer digits)."""
    return np.abs(got - want) / np.maximum(np.abs(want), 1e-290)


def test_matches_scipy_in_every_regime(both: et.Kernel) -> None:
    """Within 1e-13 of SciPy's (Boost's ibeta) where a, b <= 1000 and the value is above 1e-100 (measured: 6e-14); 2e-13
    below (1.03e-13: a factor exp(E) with E beyond -230, one ULP of E relative; Boost's pow carries fewer); for a or b
    up to 1e5 near the mean within 5e-13 (measured 2.3e-13, SciPy's own error there: against mpmath the kernel's worst
    of these is 3e-14, SciPy's 2e-13)."""
    a, b, x, large = _regimes()
    for got, want in zip(both(a, b, x), (sp.betainc(a, b, x), sp.betaincc(a, b, x)), strict=True):
        error, tiny = _relative(got, want), np.abs(want) < 1e-100
        assert np.all(np.isfinite(got))
        assert error[~large & ~tiny].max() <= 1e-13, error[~large & ~tiny].max()
        assert error[~large].max() <= 2e-13, error[~large].max()
        assert error[large].max() <= 5e-13, error[large].max()


def test_accuracy_against_mpmath(both: et.Kernel) -> None:
    """Against 40-digit mpmath on a sample of every regime where a, b <= 1000: within 1e-13, as SciPy's (measured on
    these 130 points: the kernel 7e-15, SciPy 2e-14)."""
    import mpmath

    mpmath.mp.dps = 40
    a, b, x, large = _regimes()
    pick = np.arange(0, a.size, 15)
    pick = pick[~large[pick]]
    worst = {"kernel": 0.0, "scipy": 0.0}
    for i, p, q in zip(pick, *both(a[pick], b[pick], x[pick]), strict=True):
        exact_p = mpmath.betainc(mpmath.mpf(a[i]), mpmath.mpf(b[i]), 0, mpmath.mpf(x[i]), regularized=True)
        for who, got_p, got_q in (("kernel", p, q), ("scipy", sp.betainc(a[i], b[i], x[i]), sp.betaincc(a[i], b[i], x[i]))):
            for got, exact in ((got_p, exact_p), (got_q, 1 - exact_p)):
                if abs(exact) > 1e-30:
                    worst[who] = max(worst[who], float(abs((got - exact) / exact)))
    assert worst["kernel"] <= 1e-13 and worst["scipy"] <= 1e-13, worst
    # at x = 1 - 2^-53, I(1/2, 1/2) = 2 asin(sqrt(x)) / pi = 1 - 6.7e-9: SciPy's 1 - 9.5e-9 is 3e-9 off
    p, _ = both(np.array([0.5]), np.array([0.5]), np.array([1 - 2**-53]))
    assert abs(p[0] - 0.99999999329212072) <= 1e-16 and abs(sp.betainc(0.5, 0.5, 1 - 2**-53) - 0.99999999329212072) > 2e-9


def test_edges_are_scipys(both: et.Kernel) -> None:
    """NaN, negative, zero and infinite a and b with x at 0, 1, inside and outside [0, 1]: SciPy's NaN, 0 and 1
    (its steps at x = 0 for a = 0 or b = inf, at x = 1 for b = 0 or a = inf)."""
    values = [-1.0, -0.0, 0.0, 0.5, 2.0, np.inf, np.nan]
    xs = [-0.5, -0.0, 0.0, 1e-300, 0.3, 1.0, 1.5, np.inf, np.nan]
    a, b, x = (np.array(v) for v in zip(*itertools.product(values, values, xs), strict=True))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for got, want in zip(both(a, b, x), (sp.betainc(a, b, x), sp.betaincc(a, b, x)), strict=True):
            np.testing.assert_allclose(got, want, rtol=1e-13, atol=0)


def test_float32_is_computed_in_float64_and_rounded_once() -> None:
    """SciPy's float32 loop is Boost's ibeta in float (up to 100% off near float32's underflow); a kernel's is the
    float64 value rounded once: within an ULP of SciPy's float64 one rounded."""
    a, b, x, large = (v[:5 * N] for v in _regimes())
    a, b, x = (v.astype(np.float32) for v in (a, b, x))
    got = et.kernel(lambda a, b, x: sp.betainc(a, b, x))(a, b, x)
    want = sp.betainc(*(v.astype(np.float64) for v in (a, b, x))).astype(np.float32)
    assert got.dtype == sp.betainc(a, b, x).dtype == np.float32
    assert np.abs(got.view(np.int32) - want.view(np.int32)).max() <= 1


def test_distribution_functions() -> None:
    """bdtr bdtrc nbdtr nbdtrc fdtr fdtrc (Cephes' definitions over incbet, SciPy's int casts of n) and stdtr (Boost's
    Student's t), and scipy.stats' private _binom_cdf _binom_sf _nbinom_cdf _nbinom_sf (Boost's), as SciPy on a grid
    of every sign, zero, integers and not, infinities and NaN."""
    values = np.array([-1.0, 0.0, 0.3, 1.0, 2.0, 7.5, 12.0, np.inf, np.nan])
    u, v, w = (np.array(c) for c in zip(*itertools.product(values, values, [-0.5, 0.0, 0.3, 1.0, 1.5, np.nan]), strict=True))

    def functions(u, v, w):
        return (sp.bdtr(u, v, w), sp.bdtrc(u, v, w), sp.nbdtr(u, v, w), sp.nbdtrc(u, v, w), sp.fdtr(u, v, 4 * w),
                sp.fdtrc(u, v, 4 * w), sp.stdtr(u, 4 * w - 2), private._binom_cdf(u, v, w), private._binom_sf(u, v, w),
                private._nbinom_cdf(u, v, w), private._nbinom_sf(u, v, w))

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for got, want in zip(et.kernel(functions)(u, v, w), functions(u, v, w), strict=True):
            np.testing.assert_allclose(got, want, rtol=1e-13, atol=0)


def test_scipy_stats_cdf_and_sf() -> None:
    """t (two-sided p-values), f, beta, binom and nbinom cdf, sf and logs through SciPy's own code."""
    t = np.linspace(-6, 6, 49)
    q = np.linspace(0, 1, 49)

    def stats(t, q):
        k = np.floor(12 * q + 3 * t)
        return (st.t.cdf(t, 3.5, loc=0.5, scale=2.0), 2 * st.t.sf(np.abs(t), 7), st.t.logsf(t, 30), st.f.sf(np.abs(t), 4.0, 2.5),
                st.beta.cdf(q, 2.5, 0.7), st.binom.logcdf(k, 12, 0.6), st.nbinom.sf(k, 2.5, 0.7))

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for got, want in zip(et.kernel(stats)(t, q), stats(t, q), strict=True):
            np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-300)


@pytest.mark.slow
def test_gpu_targets_compute_it() -> None:
    """Only exp, log, log1p and sqrt (the GPU targets' inline device math, no float64 power or libm call): the
    outlined kernel, emulated, within 1e-13 of SciPy (measured 1.4e-14)."""
    from egglog_tensor.lowering.gpu.emulate import emulate

    a, b, x = RNG.uniform(0, 20, 500), RNG.uniform(0, 20, 500), RNG.uniform(0, 1, 500)
    comp = et.kernel(lambda a, b, x: (sp.betainc(a, b, x), sp.betaincc(a, b, x)), target="nvvm:sm_90").inspect(a, b, x)
    for got, want in zip(emulate(comp, a, b, x), (sp.betainc(a, b, x), sp.betaincc(a, b, x)), strict=True):
        assert _relative(got, want).max() <= 1e-13


def test_power_terms_far_from_the_mean_against_mpmath(both: et.Kernel) -> None:
    """x far below the mean (down to 1e-60) for a in [0.5, 200], b in [0.5, 20]: the factor x^a (1 - x)^b by pow()
    (Boost's ibeta_power_terms), not e^(a log x), which carried |a log x| ULP (752 ULP on this sample, 140 at
    betainc(5, 2, 1.9e-50)). Measured against 40-digit mpmath: the kernel 40 ULP, SciPy 48; bound 60."""
    import mpmath

    mpmath.mp.dps = 40
    rng = np.random.default_rng(1)
    a, b = np.exp(rng.uniform(np.log(0.5), np.log(200), 300)), np.exp(rng.uniform(np.log(0.5), np.log(20), 300))
    x = np.exp(rng.uniform(np.log(1e-60), np.log(1e-2), 300))
    a, b, x = np.append(a, 5.0), np.append(b, 2.0), np.append(x, 1.9e-50)
    got, _ = both(a, b, x)
    exact = [mpmath.betainc(a[i], b[i], 0, x[i], regularized=True) for i in range(a.size)]
    ulps = [float(abs(mpmath.mpf(g) - e) / np.spacing(float(e))) for g, e in zip(got, exact, strict=True) if e > 1e-300]
    assert max(ulps) <= 60, max(ulps)
    assert ulps[-1] <= 4, ulps[-1]
