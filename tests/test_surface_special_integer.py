"""scipy.special's inverses of the binomial and negative binomial cdf (bdtri nbdtri: tracing/special_distributions.py)
in a kernel, against SciPy 1.17 and, where SciPy's own values are off, mpmath."""

from __future__ import annotations

import warnings

import mpmath as mp
import numpy as np
import pytest
import scipy.special as sp
from test_surface_incomplete_beta_inverse import _regimes

import egglog_tensor as et


def _discrete(count: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(k, n, y): k log-uniform integers to 1e3 (a seventh of them 0), n = k + log-uniform integers to 1e3; y as the
    incomplete beta inverse's tests take it (uniform, log-uniform down to 1e-300, 1 - y down to 1e-16)."""
    rng = np.random.default_rng(seed)
    k = np.floor(10 ** rng.uniform(0, 3, count))
    k[::7] = 0
    n = k + np.floor(10 ** rng.uniform(0, 3, count))
    return k, n, _regimes(count, seed)[2]


@pytest.fixture(scope="module")
def binomial_inverses() -> et.Kernel:
    return et.kernel(lambda k, n, y: (sp.bdtri(k, n, y), sp.nbdtri(k, n, y)))


def _root_error(x: float, a: float, b: float, y: float, complement: bool) -> float:
    """x's distance from the root of I_x(a, b) = y (1 - I_x(a, b) = y: complement) in ULP of x, by one Newton step
    from x in 40 digits (x is close enough that the step is the error); at x = 0 or 1, where the slope may vanish,
    1 when the root lies between x and its neighbour."""

    def f(t: float) -> mp.mpf:
        if complement:  # (as I_(1-t)(b, a), 1 - t exact: mpmath's integral from t to 1 is a difference)
            return mp.betainc(b, a, 0, 1 - mp.mpf(t), regularized=True) - y
        return mp.betainc(a, b, 0, t, regularized=True) - y

    with mp.workdps(40):
        if x in (0.0, 1.0):
            inner = np.nextafter(x, 0.5)
            return 1.0 if f(x) * f(inner) <= 0 else np.inf
        slope = mp.mpf(x) ** (a - 1) * (1 - mp.mpf(x)) ** (b - 1) / mp.beta(a, b)
        return float(abs(f(x) / slope)) / float(np.spacing(x))


def test_bdtri_nbdtri_against_mpmath(binomial_inverses: et.Kernel) -> None:
    # SciPy's Cephes incbi is up to 1e-13 relatively off for moderate arguments (bdtri(182, 299, 0.426): 70 ULP) and
    # fails below y = 1e-18 (nbdtri(0, 1896, 2.6e-37) = 1.1e-16 for 0.9566; bdtri(3, 916, 3.4e-19) = 1 for 0.056):
    # the roots are checked against mpmath, in ULP of the root: within 4 + 2 |log t|, t the smaller tail min(y, 1 - y)
    # (measured 4.3 |log t| at most): the betainc op's power prefix x^a (exp(a log x)) errs by |a log x| eps, and
    # so the root by about |log t| eps (betainc(5, 2, 1.9e-50) is 176 ULP off; Boost's, SciPy's, is exact)
    k, n, y = _discrete(160, 11)
    p, w = binomial_inverses(k, n, y)
    bound = 4 + 2 * np.abs(np.log(np.minimum(y, 1 - y)))
    bd = np.array([_root_error(p[i], k[i] + 1, n[i] - k[i], y[i], True) for i in range(len(k))])
    nb = np.array([_root_error(w[i], n[i], k[i] + 1, y[i], False) for i in range(len(k))])
    assert np.all(bd <= bound) and np.all(nb <= bound), (np.max(bd / bound), np.max(nb / bound))


def test_bdtri_nbdtri_against_scipy_where_cephes_is_accurate(binomial_inverses: et.Kernel) -> None:
    # y in [1e-3, 1 - 1e-3], where SciPy's incbi is within about 1e-12 relatively (measured 1.4e-12; mpmath above)
    k, n, y = _discrete(20000, 12)
    y = 1e-3 + (1 - 2e-3) * np.random.default_rng(12).uniform(0, 1, len(y))
    p, w = binomial_inverses(k, n, y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # (SciPy's non-integer n: n is integral here)
        want_p, want_w = sp.bdtri(k, n, y), sp.nbdtri(k.astype(np.int64), n.astype(np.int64), y)
    np.testing.assert_allclose(p, want_p, rtol=4e-12, atol=0)
    np.testing.assert_allclose(w, want_w, rtol=4e-12, atol=0)


def test_bdtri_nbdtri_edges_integer_and_float32_loops() -> None:
    k = np.array([0.0, 1, 2.7, -1, 3, 3, 1, 1, 1, np.nan, 1, np.inf, 1, 2, 0, 0])
    n = np.array([3.0, 3, 5.9, 3, 3, 2, 3, 3, 3, 3, np.nan, 3, np.inf, 5, 5, 5])
    y = np.array([0.3, 0.5, 0.25, 0.5, 0.5, 0.5, 0.0, 1.0, -0.1, 0.5, 0.5, 0.5, 0.5, np.nan, 1.0, 0.0])
    f = et.kernel(lambda k, n, y: (sp.bdtri(k, n, y), sp.nbdtri(k, n, y)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (SciPy's non-integer k and n)
        want = sp.bdtri(k, n, y), sp.nbdtri(k, n, y)
        for got, expected in zip(f(k, n, y), want, strict=True):
            np.testing.assert_array_max_ulp(got, expected, maxulp=8)
        # the integer loops (dld, lld) and the float32 loop (computed in float64, rounded once)
        ki, ni = np.array([0, 1, 4, 10]), np.array([5, 7, 9, 40])
        yi = np.array([0.1, 0.5, 0.9, 0.99])
        g = et.kernel(lambda k, n, y: (sp.bdtri(k * 1.0, n, y), sp.nbdtri(k, n, y)))
        got = g(ki, ni, yi)
        np.testing.assert_array_max_ulp(got[0], sp.bdtri(ki * 1.0, ni, yi), maxulp=8)
        np.testing.assert_array_max_ulp(got[1], sp.nbdtri(ki, ni, yi), maxulp=8)
        k32, n32, y32 = (v.astype(np.float32) for v in (ki, ni, yi))
        got32 = f(k32, n32, y32)
        assert got32[0].dtype == np.float32
        np.testing.assert_array_max_ulp(got32[0], sp.bdtri(k32, n32, y32), maxulp=1)
        np.testing.assert_array_max_ulp(got32[1], sp.nbdtri(k32, n32, y32), maxulp=1)


def test_bdtri_round_trips_through_bdtr(binomial_inverses: et.Kernel) -> None:
    k, n, y = _discrete(5000, 13)
    y = np.random.default_rng(13).uniform(0.01, 0.99, len(y))
    p, w = binomial_inverses(k, n, y)
    np.testing.assert_allclose(sp.bdtr(k, n.astype(np.int64), p), y, rtol=1e-11)
    np.testing.assert_allclose(sp.nbdtr(k.astype(np.int64), n.astype(np.int64), w), y, rtol=1e-11)
