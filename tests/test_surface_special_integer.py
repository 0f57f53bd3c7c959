"""scipy.special's inverses of the binomial and negative binomial cdf (bdtri nbdtri: tracing/special_distributions.py)
in a kernel, against SciPy 1.17 and, where SciPy's own values are off, mpmath."""

from __future__ import annotations

import warnings

import mpmath as mp
import numpy as np
import pytest
import scipy.special as sp
from test_surface_incomplete_beta_inverse import _regimes
from test_surface_special_cephes import _near
from test_surface_special_more import ulps

import egglog_tensor as et

EPS = 2.0**-52


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
    # the roots are checked against mpmath, in ULP of the root: within 16 (measured 3.9 for bdtri, 11.6 for nbdtri;
    # 35 while the betainc op's power prefix x^a was exp(a log x), |a log x| eps off: betainc(5, 2, 1.9e-50) 140 ULP)
    k, n, y = _discrete(160, 11)
    p, w = binomial_inverses(k, n, y)
    bd = np.array([_root_error(p[i], k[i] + 1, n[i] - k[i], y[i], True) for i in range(len(k))])
    nb = np.array([_root_error(w[i], n[i], k[i] + 1, y[i], False) for i in range(len(k))])
    assert np.all(bd <= 16) and np.all(nb <= 16), (np.max(bd), np.max(nb))


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



def test_gdtria_gdtrix_against_scipy() -> None:
    # SciPy 1.17's gammaincinv(b, p) / x (/ a) and its special cases. The quotients differ as the gammaincinv op and
    # SciPy's differ: within 64 (1 + |log t| / b) ULP, t = min(p, 1 - p) (measured 57 of that: up to 60 ULP for b above
    # 1000 at p below 1e-150, and |log t| / b times the few ULP of the incomplete gamma's prefix x^b = exp(b log x),
    # which the root inherits divided by b; mpmath finds either side off by thousands of ULP where b is small)
    rng = np.random.default_rng(14)
    b, rate, p = 10 ** rng.uniform(-3, 4, 20000), 10 ** rng.uniform(-5, 5, 20000), _regimes(20000, 14)[2]
    bound = 64 * (1 + np.abs(np.log(np.minimum(p, 1 - p))) / b)
    edges = np.array([[0.5, 3.0, 0.0], [0.0, 0.0, 2.0], [0.0, 0.0, np.inf], [0.5, 3.0, -1.0], [0.5, -3.0, 2.0],
                      [1.0, 3.0, 2.0], [0.0, 3.0, 2.0], [np.nan, 3.0, 2.0], [0.5, 3.0, np.inf], [1.5, 3.0, 2.0],
                      [0.5, np.inf, 2.0], [0.5, 0.0, 0.0], [0.5, 3.0, -np.inf]])
    first, second, third = (np.concatenate([v, edges[:, i]]) for i, v in enumerate((p, b, rate)))
    bound = np.concatenate([bound, np.full(len(edges), 4.0)])
    f = et.kernel(lambda p, b, x: (sp.gdtria(p, b, x), sp.gdtrix(x, b, p)))
    rate_got, quantile_got = f(first, second, third)
    assert np.all(ulps(rate_got, sp.gdtria(first, second, third)) <= bound)
    assert np.all(ulps(quantile_got, sp.gdtrix(third, second, first)) <= bound)


# --- orthogonal polynomials (tracing/special_polynomials.py, lowering/orthopoly.py) ---------------------------------

ONE_ARGUMENT = ("legendre", "sh_legendre", "chebyt", "chebyc", "sh_chebyt", "chebyu", "chebys", "sh_chebyu", "laguerre")
WITH_ALPHA = ("genlaguerre", "gegenbauer")


def _degrees(count: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(n, x, alpha): every n from -5 to 59 and random ones to 300 (int64: SciPy's recurrence loops); x on [-3, 3]
    (beyond the orthogonality interval too), every ninth below 1e-5 (the power series of Legendre and Gegenbauer),
    some exactly 0 and 1; alpha on (-0.9, 5), some 0 and tiny (Gegenbauer's special cases)."""
    rng = np.random.default_rng(seed)
    n = np.concatenate([np.arange(-5, 60), rng.integers(-10, 300, count)])
    x = np.concatenate([np.linspace(-1.2, 1.2, 65), rng.uniform(-3, 3, count)])
    x[::9] *= 1e-6
    x[5::31], x[7::37] = 0.0, 1.0
    alpha = rng.uniform(-0.9, 5, len(n))
    alpha[3::41], alpha[4::43] = 0.0, 1e-12
    return n, x, alpha


@pytest.fixture(scope="module")
def polynomials() -> et.Kernel:
    return et.kernel(lambda n, x, a: tuple(getattr(sp, f"eval_{name}")(n, x) for name in ONE_ARGUMENT)
                     + tuple(getattr(sp, f"eval_{name}")(n, a, x) for name in WITH_ALPHA))


def _scipy_polynomials(n: np.ndarray, x: np.ndarray, a: np.ndarray) -> list[np.ndarray]:
    return [getattr(sp, f"eval_{name}")(n, x) for name in ONE_ARGUMENT] + [getattr(sp, f"eval_{name}")(n, a, x) for name in WITH_ALPHA]


def test_polynomials_of_an_integer_degree_against_scipy(polynomials: et.Kernel) -> None:
    # SciPy's `l` loops' operations: Legendre and Chebyshev within 8 ULP (measured 8, in Legendre's power series: beta's
    # Gamma is libm's; the Chebyshev ones 0); the Laguerre and Gegenbauer recurrences are the same, their factor
    # binom(n + alpha, n) is the binom op's (libm's lgamma where Cephes' sums its own: both up to 6e-13 off mpmath
    # there), checked against mpmath below
    n, x, a = _degrees(5000, 21)
    got = polynomials(n, x, a)
    want = _scipy_polynomials(n, x, a)
    for name, g, w in zip(ONE_ARGUMENT, got, want, strict=False):
        assert g.dtype == np.float64
        assert ulps(g, w).max() <= 8, name
    # where no binom is taken: n < 2, Gegenbauer's alpha = 0 (0 T_n(x), NaN from n = 172) and |alpha / n| < 1e-8
    no_binom = {"genlaguerre": n < 2, "gegenbauer": (n < 2) | (a == 0) | (np.abs(a) < 1e-8 * np.abs(n))}
    for name, g, w in zip(WITH_ALPHA, got[len(ONE_ARGUMENT):], want[len(ONE_ARGUMENT):], strict=True):
        assert ulps(g[no_binom[name]], w[no_binom[name]]).max() <= 8, name


def _exact(name: str, n: int, alpha: float, x: float) -> float:
    """L_n^alpha(x) or C_n^alpha(x) by the three-term recurrence in 60 digits (0 for negative n)."""
    with mp.workdps(60):
        alpha, x = mp.mpf(alpha), mp.mpf(x)
        before, value = mp.mpf(1), (1 + alpha - x if name == "genlaguerre" else 2 * alpha * x)
        if n <= 0:
            return float(n == 0)
        for k in range(2, n + 1):
            if name == "genlaguerre":
                before, value = value, ((2 * k - 1 + alpha - x) * value - (k - 1 + alpha) * before) / k
            else:
                before, value = value, (2 * x * (k + alpha - 1) * value - (k + 2 * alpha - 2) * before) / k
        return float(value)


def test_laguerre_gegenbauer_against_mpmath(polynomials: et.Kernel) -> None:
    # no further from mpmath than twice SciPy's error plus (4 + n log n) ULP: the recurrence's rounding is SciPy's, the
    # factor binom(n + alpha, n) (binom(n + 2 alpha - 1, n)) the binom op's, whose lgamma sum errs by up to about
    # 2 n log n ULP (SciPy's Cephes lgam errs less there, more elsewhere)
    n, x, a = (v[65:] for v in _degrees(300, 22))  # (the random ones)
    got = polynomials(n, x, a)[len(ONE_ARGUMENT):]
    want = _scipy_polynomials(n, x, a)[len(ONE_ARGUMENT):]
    exact = [np.array([_exact(name, int(k), b, t) for k, b, t in zip(n, a, x, strict=True)]) for name in WITH_ALPHA]
    for name, g, w, e in zip(WITH_ALPHA, got, want, exact, strict=True):
        bound = 2 * np.abs(w - e) + (4 + 2 * np.abs(n) * np.log(np.abs(n) + 2)) * np.spacing(np.abs(e))
        checked = (n >= 2) & (a != 0)  # (the others: SciPy's operations, against SciPy above)
        assert np.all((np.abs(g - e) <= bound)[checked]), (name, np.max((np.abs(g - e) / bound)[checked]))


def test_polynomials_of_a_float_degree(polynomials: et.Kernel) -> None:
    # an integral n of a float dtype runs the recurrence: the integer loop's value (SciPy's own float loop, its
    # hypergeometric function, is up to hundreds of ULP off there: eval_legendre(17.0, 0) = 5.6e-17, and NaN at
    # eval_chebyt(-5.0, -1)); NaN where n is NaN or infinite, as SciPy's
    n, x, a = _degrees(2000, 23)
    n = np.where(n < 0, np.abs(n), n)  # (a negative float n is refused for Laguerre and Gegenbauer: below)
    want = _scipy_polynomials(n, x, a)
    for name, g, w in zip((*ONE_ARGUMENT, *WITH_ALPHA), polynomials(n.astype(np.float64), x, a), want, strict=True):
        np.testing.assert_array_equal(g, polynomials(n, x, a)[(*ONE_ARGUMENT, *WITH_ALPHA).index(name)], err_msg=name)
        if name in ONE_ARGUMENT:
            assert ulps(g, w).max() <= 8, name
    odd = np.array([np.nan, np.inf, -np.inf])
    for g in polynomials(odd, np.full(3, 0.3), np.full(3, 0.5)):
        assert np.isnan(g).all()


def test_polynomials_refuse_scipy_hypergeometric_loop() -> None:
    with pytest.raises(et.UnsupportedError, match=r"eval_legendre of a non-integer n of a float dtype .*hypergeometric"):
        et.kernel(lambda x: sp.eval_legendre(2.5, x))(np.array([0.3]))
    f = et.kernel(lambda n, x: sp.eval_chebyu(n, x))
    np.testing.assert_array_max_ulp(f(np.array([4.0]), np.array([0.3])), sp.eval_chebyu(np.array([4]), np.array([0.3])), maxulp=1)
    with pytest.raises(et.UnsupportedError, match=r"eval_chebyu of a non-integer n .*computed from argument\(s\) n"):
        f(np.array([4.0, 2.5]), np.array([0.3, 0.3]))
    g = et.kernel(lambda n, a, x: sp.eval_gegenbauer(n, a, x))
    with pytest.raises(et.UnsupportedError, match=r"eval_gegenbauer of a negative or non-integer n"):
        g(np.array([-2.0]), np.array([0.5]), np.array([0.3]))
    np.testing.assert_array_equal(g(np.array([-2]), np.array([0.5]), np.array([0.3])), [0.0])  # (the integer loop's)


def test_polynomials_edges_and_float32() -> None:
    n = np.array([0, 1, 2, 3, 7, 8, 40, -3, 5, 5, 5, 300])
    x = np.array([np.nan, np.inf, -np.inf, 1.0, -1.0, 0.0, 1e-300, np.inf, np.nan, -np.inf, 1e300, 0.999])
    a = np.array([0.5, 0.5, 2.0, -1.0, -0.99, 0.0, np.nan, 3.0, 0.5, 0.5, 0.5, 0.0])
    f = et.kernel(lambda n, x, a: tuple(getattr(sp, f"eval_{name}")(n, x) for name in ONE_ARGUMENT)
                  + tuple(getattr(sp, f"eval_{name}")(n, a, x) for name in WITH_ALPHA))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        for name, g, w in zip((*ONE_ARGUMENT, *WITH_ALPHA), f(n, x, a), _scipy_polynomials(n, x, a), strict=True):
            np.testing.assert_array_max_ulp(g, w, maxulp=8, dtype=np.float64)
    # float32 n and x: SciPy's float32 loop is its hypergeometric one; here the recurrence's value rounded once
    n32, x32, a32 = (v.astype(np.float32) for v in (np.arange(12.0), np.linspace(-1, 1, 12), np.linspace(0.1, 2, 12)))
    for name, g, w in zip((*ONE_ARGUMENT, *WITH_ALPHA), f(n32, x32, a32), _scipy_polynomials(n32.astype(np.int64), x32.astype(np.float64), a32.astype(np.float64)), strict=True):
        assert g.dtype == np.float32, name
        np.testing.assert_array_equal(g, w.astype(np.float32), err_msg=name)


# --- the limiting Kolmogorov distribution (lowering/kolmogorov.py) ---------------------------------------------------


def test_kolmogorov_kolmogi_against_scipy() -> None:
    # SciPy's (xsf's) operations: kolmogorov within 1 ULP (measured 1: libm's exp and pow), kolmogi within 2 (its
    # Newton loop stops where SciPy's does, its last step rounded the same but for the cdf's ULP)
    x = np.concatenate([np.linspace(-1, 6, 20001), np.logspace(-3, 1.5, 5000), _near(np.array([0.82, np.pi / np.sqrt(8 * 746)])),
                        [0.0, -0.0, np.nan, np.inf, -np.inf, 5e-324, 40.0]])
    p = np.concatenate([np.linspace(0, 1, 20001), np.logspace(-300, 0, 3000), 1 - np.logspace(-17, 0, 3000),
                        [np.nan, -0.1, 1.1, np.inf, -np.inf, 5e-324, 0.5, 1.0, 0.0]])
    f = et.kernel(lambda x, p: (sp.kolmogorov(x), sp.kolmogi(p)))
    survival, inverse = f(x, p)
    assert ulps(survival, sp.kolmogorov(x)).max() <= 1
    assert ulps(inverse, sp.kolmogi(p)).max() <= 2
    x32, p32 = x.astype(np.float32), p.astype(np.float32)
    survival32, inverse32 = f(x32, p32)
    assert survival32.dtype == inverse32.dtype == np.float32
    assert ulps(survival32, sp.kolmogorov(x32)).max() <= 1 and ulps(inverse32, sp.kolmogi(p32)).max() <= 1
    # the inverse's round trip
    inner = (p > 1e-300) & (p < 0.9)  # (toward 1 the sf is 1 - cdf: x ill-conditioned)
    condition = 1 + 4 * inverse[inner] ** 2  # (|d log sf / d log x| in the tail, 2 v's exponent -2 x^2)
    assert np.all(np.abs(sp.kolmogorov(inverse[inner]) - p[inner]) <= 8 * EPS * condition * p[inner])



# --- Bessel functions of integer order (tracing/special_bessel.py, lowering/bessel_integer.py) -----------------------


def _orders(count: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """(n, x): every n from -5 to 59 and random ones to 200 (int64); x on [0, 50] and log-uniform from 1e-3 to 1e3."""
    rng = np.random.default_rng(seed)
    return (np.concatenate([np.arange(-5, 60), rng.integers(-10, 200, count)]),
            np.concatenate([np.linspace(0, 50, 65), 10 ** rng.uniform(-3, 3, count)]))


@pytest.fixture(scope="module")
def integer_bessel() -> et.Kernel:
    return et.kernel(lambda n, x: (sp.yn(n, x), sp.kn(n, x)))


def test_yn_against_scipy(integer_bessel: et.Kernel) -> None:
    # Cephes' recurrence from y0 and y1, as SciPy's: the y0 and y1 ops' error (up to 23 eps of max(|Y|, envelope)
    # near 0, as in their own tests) carried along it, within 24 (1 + |n|) eps of max(|Y_n|, min(1, sqrt(2 / (pi x))))
    # (measured 1.5 (1 + |n|) at most); the same -inf at 0, NaN below, NaN and +-inf where it overflows
    n, x = _orders(20000, 31)
    got = integer_bessel(n, x)[0]
    want = sp.yn(n, x)
    envelope = np.minimum(1, np.sqrt(2 / (np.pi * np.maximum(x, 1e-300))))
    same = (got == want) | (np.isnan(got) & np.isnan(want))
    with np.errstate(invalid="ignore"):
        error = np.abs(got - want) / (EPS * np.maximum(np.abs(want), envelope))
    assert np.all(same | (error <= 24 * (1 + np.abs(n))))


def test_kn_against_mpmath(integer_bessel: et.Kernel) -> None:
    # SciPy's kn is Amos' zbesk: up to 1500 ULP off (kn(89, 0.0251)), and inf or 0 early where its overflow and
    # underflow tests are conservative (kn(175, 2.289) = inf for 1.78e305); the forward recurrence from the k0 and k1
    # ops is within 12 + |n| ULP of mpmath (measured (1 + |n|) at most), kve's as well
    n, x = _orders(300, 32)
    n, x = np.concatenate([n, [186, 171, 30, 5]]), np.concatenate([x, [721.44, 718.16, 745.0, 1e-300]])
    got = integer_bessel(n, x)[1]
    exact = np.array([float(mp.besselk(int(k), t)) for k, t in zip(n, x, strict=True)])
    assert np.all(ulps(got, exact) <= 12 + np.abs(n))
    # kve = e^x K_n, its recurrence on k0e and k1e
    scaled = et.kernel(lambda n, x: sp.kve(n, x))(n.astype(np.float64), x)
    exact = np.array([float(mp.besselk(int(k), t) * mp.exp(t)) for k, t in zip(n, x, strict=True)])
    assert np.all(ulps(scaled, exact) <= 12 + np.abs(n))
    edges = np.array([0.0, -1.0, np.inf, np.nan, 800.0])
    np.testing.assert_array_max_ulp(et.kernel(lambda n, x: sp.kve(n, x))(np.full(5, 3.0), edges), sp.kve(3.0, edges), maxulp=8)


def test_yn_kn_edges_and_float_orders() -> None:
    n = np.array([2, 2, 2, 2, 2, -3, -4, 0, 1, 300, 5])
    x = np.array([0.0, -1.0, np.nan, np.inf, 1e-310, 1.0, 2.5, 0.0, -2.0, 1.0, 800.0])
    f = et.kernel(lambda n, x: (sp.yn(n, x), sp.kn(n, x)))
    y, k = f(n, x)
    np.testing.assert_array_max_ulp(y, sp.yn(n, x), maxulp=8)
    np.testing.assert_array_max_ulp(k[:10], sp.kn(n[:10], x[:10]), maxulp=8)
    assert k[10] == 0.0  # (K_5(800) = 3e-349)
    # SciPy's float loop truncates n (warning); NaN where n is not finite; float32 rounded once
    fractional = np.array([2.7, -3.2, np.nan, np.inf, 4.0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        y, k = f(fractional, np.full(5, 1.5))
        np.testing.assert_array_max_ulp(y[[0, 1, 4]], sp.yn(np.trunc(fractional[[0, 1, 4]]).astype(np.int64), 1.5), maxulp=8)
        np.testing.assert_array_max_ulp(k[[0, 1, 4]], sp.kn(np.trunc(fractional[[0, 1, 4]]).astype(np.int64), 1.5), maxulp=8)
    assert np.isnan(y[2:4]).all() and np.isnan(k[2:4]).all()
    n32, x32 = np.arange(6, dtype=np.float32), np.linspace(0.5, 20, 6, dtype=np.float32)
    y32, k32 = f(n32, x32)
    assert y32.dtype == k32.dtype == np.float32
    assert ulps(y32, sp.yn(n32.astype(np.int64), x32.astype(np.float64)).astype(np.float32)).max() <= 1
    assert ulps(k32, sp.kn(n32.astype(np.int64), x32.astype(np.float64)).astype(np.float32)).max() <= 1


def test_jn_jv_against_mpmath() -> None:
    # SciPy's jv (and jn, its alias) is Amos' zbesj: up to 1600 eps of max(|J_n|, the envelope min(1, sqrt(2 / (pi
    # |x|))) where |x| > |n|) off mpmath; the forward recurrence from the j0 and j1 ops (|n| < |x|) and Miller's backward
    # one are within 64 + |n| + |x| of it: the j0 and j1 ops', Cephes', x - pi/4 is rounded (as SciPy's j0: their
    # tests), an absolute error up to |x| eps in the phase (measured 117 at n = 162, x = 332; 84 at n = 5, x = 698)
    rng = np.random.default_rng(33)
    n = np.concatenate([np.arange(-5, 30), rng.integers(-10, 200, 300)]).astype(np.float64)
    x = np.concatenate([np.linspace(-20, 50, 35), 10 ** rng.uniform(-3, 3, 300) * np.where(rng.uniform(size=300) < 0.2, -1, 1)])
    got = et.kernel(lambda n, x: (sp.jn(n, x), sp.jve(n, x)))(n, x)
    exact = np.array([float(mp.besselj(int(k), t)) for k, t in zip(n, x, strict=True)])
    envelope = np.where(np.abs(x) > np.abs(n), np.minimum(1, np.sqrt(2 / (np.pi * np.abs(x)))), 0.0)
    scale = np.maximum(np.abs(exact), envelope)
    for g in got:
        assert np.all(np.abs(g - exact)[scale > 1e-290] <= ((64 + np.abs(n) + np.abs(x)) * EPS * scale)[scale > 1e-290])


def test_integral_orders_of_the_real_order_functions() -> None:
    # jv jve yv yve kv at integral orders: the integer-order recurrences (yv and kv as yn and kn), SciPy's edges
    n = np.array([3.0, 3, -3, 2, 0, 3, 3, 3, 5, 40, -4, 1])
    x = np.array([2.5, -2, 2.5, 0, 0, np.inf, -np.inf, np.nan, 1e-5, 3.0, -7.5, 0.0])
    names = ("jn", "jv", "jve", "yv", "yve", "kv")
    f = et.kernel(lambda n, x: tuple(getattr(sp, name)(n, x) for name in names))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        for name, g in zip(names, f(n, x), strict=True):
            np.testing.assert_array_max_ulp(g, getattr(sp, name)(n, x), maxulp=40, dtype=np.float64)  # (jv(40, 3): 29 ULP)
        with pytest.raises(et.UnsupportedError, match=r"scipy.special.jv of a non-integer n .*Amos' algorithms for real orders"):
            f(np.array([2.5]), np.array([1.0]))
    assert np.isnan(f(np.array([np.nan, np.inf]), np.array([1.0, 1.0]))[1]).all()


def test_iv_ive_at_integral_orders_against_mpmath() -> None:
    # SciPy's iv and ive are Amos' zbesi: up to 760 ULP off mpmath; Miller's backward recurrence from beyond
    # max(|n|, |x|), normalized by the i0e op, within 24 ULP (measured 17); iv = ive e^|x| within 32 (measured 26)
    rng = np.random.default_rng(34)
    n = np.concatenate([np.arange(-5, 30), rng.integers(-10, 200, 300)]).astype(np.float64)
    x = np.concatenate([np.linspace(-20, 50, 35), 10 ** rng.uniform(-3, 3, 300) * np.where(rng.uniform(size=300) < 0.2, -1, 1)])
    scaled, plain = et.kernel(lambda n, x: (sp.ive(n, x), sp.iv(n, x)))(n, x)
    with mp.workdps(30):
        exact = np.array([float(mp.besseli(int(k), t) * mp.exp(-abs(mp.mpf(t)))) for k, t in zip(n, x, strict=True)])
        exact_plain = np.array([float(mp.besseli(int(k), t)) for k, t in zip(n, x, strict=True)])
    assert ulps(scaled, exact)[np.abs(exact) > 1e-290].max() <= 24
    finite = (np.abs(exact_plain) > 1e-290) & np.isfinite(exact_plain)
    assert ulps(plain, exact_plain)[finite].max() <= 32
    n, x = np.array([3.0, 3, -3, 2, 0, 3, 3, 2, 3, 3]), np.array([2.5, -2.5, 2.5, 0, 0, np.inf, -np.inf, -np.inf, np.nan, 800.0])
    scaled, plain = et.kernel(lambda n, x: (sp.ive(n, x), sp.iv(n, x)))(n, x)
    np.testing.assert_array_max_ulp(scaled, sp.ive(n, x), maxulp=4)
    np.testing.assert_array_max_ulp(plain, sp.iv(n, x), maxulp=4)
