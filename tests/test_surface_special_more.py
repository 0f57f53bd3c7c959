"""scipy.special's beta betaln binom comb zeta polygamma exp1 expi i0e i1 i1e k0 k0e k1 k1e in a kernel (lowering/
betafunction.py, zeta.py, expint.py, bessel.py; comb and polygamma: tracing/scipy_special.py), against SciPy on grids
covering each algorithm's regimes and edges (0, +-inf, NaN, poles, negative arguments, the branch boundaries), in float64
and float32 (computed in float64 and rounded once, as SciPy's loops), and against mpmath where SciPy's own error is the
larger (beta's sums of lgammas). The bounds are the measured worst cases, rounded up a little."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.special as sp
import scipy.stats as st

import egglog_tensor as et

RNG = np.random.default_rng(35)
EPS = 2.0**-52
EDGES = [0.0, -0.0, np.inf, -np.inf, np.nan, 5e-324, 1e-300]
# exp1 expi and the Bessel functions: both signs over 600 decades, their series/continued-fraction/Chebyshev boundaries
X = np.concatenate([np.logspace(-300, 3, 400), -np.logspace(-300, 3, 400), np.linspace(-50, 50, 401),
                    [1.0, 2.0, 2.0000001, 8.0, 8.0000001, 40.0, 40.0000001, 709.0, 710.0, 800.0], EDGES])
# Riemann's zeta: the reflection's range, the Taylor polynomial near 0, the pole, the tabulated integers, x >= 127
ZETA_X = np.concatenate([np.linspace(-250, 250, 1001), np.linspace(-0.02, 0.02, 41), 1 + np.linspace(-0.01, 0.01, 21),
                         np.arange(-40.0, 140.0), [10.5, 50.5, 126.9, 127.0, -171.5, -300.5], EDGES])
# ULP bounds against SciPy in float64, the worst over these grids and 8 x 10^5 random arguments (exp1 2, expi 3, i0e i1e 0,
# i1 3, k0 8, k0e 11 near x = 1.45 where K0's two terms cancel, k1 3, k1e 3, zeta 3 near its pole, 0 elsewhere): the same
# operations as SciPy's, but exp, log and pow are the vector library's, within 4 ULP
UNARY = {"exp1": 2, "expi": 3, "i0e": 1, "i1": 3, "i1e": 1, "k0": 8, "k0e": 11, "k1": 3, "k1e": 3}
ZETA = 3
# beta, betaln, binom: a grid of every regime's and edge's values (negative integers, 0, NaN, inf, around MAXGAM, the
# asymptotic factor 1e6) squared, plus random arguments of both signs over 9 decades
GRID = np.array([-5.5, -3.0, -2.5, -1.0, -0.5, -0.0, 0.0, 1e-300, 1e-10, 0.1, 0.5, 1.0, 2.0, 2.5, 3.5, 7.0, 10.0, 50.0, 100.0,
                 170.0, 171.5, 200.0, 1e3, 1e6, 1e7, 1e10, -170.5, -200.5, -1e10, np.inf, -np.inf, np.nan])
MAXGAM = 171.624376956302725
TINY = np.finfo(np.float64).tiny


def ulps(got: np.ndarray, want: np.ndarray) -> np.ndarray:
    """Each element's distance in units of the last place of `want` (0 where both are equal or both NaN)."""
    same = (got == want) | (np.isnan(got) & np.isnan(want))
    tiny = np.finfo(want.dtype).smallest_subnormal
    with np.errstate(invalid="ignore", over="ignore"):
        return np.where(same, 0.0, np.abs(got.astype(np.float64) - want) / np.maximum(np.spacing(np.abs(want)).astype(np.float64), tiny))


def _scaled(got: np.ndarray, want: np.ndarray, *scale: np.ndarray) -> np.ndarray:
    """|got - want| in units of the product of `scale` (0 where equal)."""
    with np.errstate(all="ignore"):
        return np.where(got == want, 0.0, np.abs(got - want) / np.prod(np.broadcast_arrays(*scale), axis=0))


def _pairs(count: int) -> tuple[np.ndarray, np.ndarray]:
    a, b = (g.ravel() for g in np.meshgrid(GRID, GRID))
    ra = np.exp(RNG.uniform(-10, 9, count)) * RNG.choice([1.0, 1.0, -1.0], count)
    rb = np.exp(RNG.uniform(-10, 9, count)) * RNG.choice([1.0, 1.0, 1.0, -1.0], count)
    return np.concatenate([a, ra]), np.concatenate([b, rb])


A, B = _pairs(3000)


def _unary(*args: np.ndarray) -> tuple[np.ndarray, ...]:
    x, z = args
    return (*(getattr(sp, name)(x) for name in UNARY), sp.zeta(z))


def _binary(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, ...]:
    return sp.beta(a, b), sp.betaln(a, b), sp.binom(a, b)


@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=lambda d: d.__name__)
def test_unary_functions_match_scipy(dtype: type) -> None:
    """exp1 expi i0e i1 i1e k0 k0e k1 k1e and Riemann's zeta: within UNARY's and ZETA's ULP of SciPy in float64, 1 ULP in
    float32; SciPy's dtype and its NaN, inf and 0 (signed) at the edges exactly."""
    args = (X.astype(dtype), ZETA_X.astype(dtype))
    got = et.kernel(_unary)(*args)
    with np.errstate(all="ignore"):
        want = _unary(*args)
    for name, g, w in zip([*UNARY, "zeta"], got, want, strict=True):
        assert g.dtype == w.dtype == dtype, name
        np.testing.assert_array_equal(np.isnan(g), np.isnan(w), err_msg=name)
        exact = np.isinf(w) | (w == 0)  # (NaN's sign bit is libm's)
        np.testing.assert_array_equal(g[exact], w[exact], err_msg=name)
        np.testing.assert_array_equal(np.signbit(g[exact]), np.signbit(w[exact]), err_msg=name)
        bound = (UNARY.get(name, ZETA)) if dtype == np.float64 else 1
        assert ulps(g, w).max() <= bound, f"{name}: {ulps(g, w).max()} ULP"


def test_hurwitz_zeta_and_polygamma_match_scipy() -> None:
    """zeta(x, q) (SciPy's Cephes Euler-Maclaurin sum: the same operations, 0 ULP apart measured; bound 1) over q
    negative (integral x), at the poles, tiny, large and beyond 1e8; polygamma(n, x) = (-1)^(n+1) n! zeta(n + 1, x)
    (psi at n = 0) within 8 ULP (libm's tgamma for n!, SciPy's Cephes Gamma; measured 2 here, 8 over 10^5 random
    n < 8, x in [-20, 50]), float32 x as SciPy's."""
    x, q = (g.ravel() for g in np.meshgrid([1.0001, 1.5, 2.0, 2.5, 3.0, 5.0, 7.0, 10.0, 30.0, 100.0, 0.5, 1.0, np.nan, np.inf],
                                          [-50.5, -10.5, -2.5, -1.0, -0.5, 0.0, 1e-3, 0.25, 0.5, 1.0, 2.0, 10.0, 1e3, 1e8, 1e9,
                                           np.nan, np.inf]))
    x, q = np.concatenate([x, RNG.uniform(1, 40, 500)]), np.concatenate([q, np.exp(RNG.uniform(-8, 8, 500))])
    n = np.repeat(np.arange(0, 6), 40)
    px = np.tile(np.concatenate([np.linspace(-4.75, 10, 30), [0.0, -1.0, 1e-8, 1e3, 1e8, np.inf, -np.inf, np.nan, 0.5, 25.0]]), 6)
    got = et.kernel(lambda x, q, n, px: (sp.zeta(x, q), sp.polygamma(n, px), sp.polygamma(n, px.astype(np.float32))))(x, q, n, px)
    with np.errstate(all="ignore"):
        want = (sp.zeta(x, q), sp.polygamma(n, px), sp.polygamma(n, px.astype(np.float32)))
    for g, w, bound in zip(got, want, (1, 8, 8), strict=True):
        assert g.dtype == w.dtype
        np.testing.assert_array_equal(np.isnan(g), np.isnan(w))
        assert ulps(g, w).max() <= bound, ulps(g, w).max()


def _beta_regimes(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Where Cephes' beta takes Gamma's product (|a|, |b|, |a + b| <= MAXGAM, not a >> b), and the sum of the lgammas'
    magnitudes there and elsewhere (the scale of their cancellation)."""
    with np.errstate(all="ignore"):
        large, small = np.maximum(np.abs(a), np.abs(b)), np.minimum(np.abs(a), np.abs(b))
        product = (np.abs(a) <= MAXGAM) & (np.abs(b) <= MAXGAM) & (np.abs(a + b) <= MAXGAM) & ~((large > 1e6 * small) & (large > 1e6))
        return product, np.abs(sp.gammaln(a)) + np.abs(sp.gammaln(b)) + np.abs(sp.gammaln(a + b)) + 1


def _near_maxgam(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Where Gamma of a, b or a + b is near over- or underflowing."""
    return (np.abs(a + b) > 170) | (np.abs(a) > 170) | (np.abs(b) > 170)


def _lanczos_regions(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Where beta (both arguments at least 1/2, a + b < 1e15, not a >> b) and binom (its beta's arguments 1 + a - b and
    1 + b at least 1/2, not its product, its lbeta or its large-k form) are Boost's Lanczos form with pow()
    (lowering/betafunction.py), where SciPy's sum of lgammas carries their magnitude in ULP."""
    with np.errstate(all="ignore"):
        large, small = np.maximum(a, b), np.minimum(a, b)
        beta = (small >= 0.5) & (a + b < 1e15) & ~((large > 1e6 * small) & (large > 1e6))
        small_k = (b == np.floor(b)) & (np.abs(b) < 20) & ((np.abs(a) > 1e-8) | (a == 0))
        binom = ((1 + a - b >= 0.5) & (1 + b >= 0.5) & (np.abs(a) < 1e15) & (np.abs(b) < 1e15) & ~small_k
                 & ~(a >= 1e10 * b) & ~(b > 1e8 * np.abs(a)))
    return beta, binom


def _ulps_against_mpmath(got: np.ndarray, name: str, a: np.ndarray, b: np.ndarray) -> tuple[float, float]:
    """The worst error in ULP of got and of SciPy's value of scipy.special.`name` (beta or binom) against 40-digit
    mpmath's, over the normal finite values."""
    import mpmath

    mpmath.mp.dps = 40
    exact, scipy_fn = {"beta": mpmath.beta, "binom": mpmath.binomial}[name], getattr(sp, name)
    worst = [0.0, 0.0]
    for x, y, g in zip(a, b, got, strict=True):
        e = exact(mpmath.mpf(x), mpmath.mpf(y))
        if 1e-300 < abs(e) < 1e308:
            for j, value in enumerate((g, scipy_fn(x, y))):
                worst[j] = max(worst[j], float(abs(mpmath.mpf(value) - e) / np.spacing(abs(float(e)))))
    return worst[0], worst[1]


def test_beta_betaln_binom_match_scipy() -> None:
    """beta, betaln and binom against SciPy, by regime: where Gamma's product is taken, beta within 16 ULP (libm's tgamma
    against Cephes' Gamma: measured 14) and betaln within 8 eps max(1, |betaln|) (measured 6); where the lgammas are
    summed (beyond MAXGAM, or a >> b), both within 2 eps times the lgammas' magnitudes (libm's lgamma against Cephes':
    the cancellation's own error, measured 1.4; betaln's |sum|, beta's relative); binom's product (integral k < 20)
    exactly, elsewhere within 8 eps times the magnitudes of its beta's lgammas (measured 4.1). Where beta and binom are
    Boost's Lanczos form (_lanczos_regions), against mpmath: within 16 ULP (measured 9.6 and 10.3; SciPy's sums of
    lgammas there up to 2.8e8 and 3.8e7 ULP off, at beta(1e7, 50) and binom(1e7, 50)). Edges (negative integers,
    0, NaN, +-inf) exactly, with the sign; a few arguments where Gamma(a + b) over- or underflows near -MAXGAM may differ in
    overflowing (SciPy's inf, the true value finite here), only there."""
    got = et.kernel(_binary)(A, B)
    with np.errstate(all="ignore"):
        want = _binary(A, B)
    with np.errstate(invalid="ignore"):  # (binom's beta is of 1 + A - B and 1 + B)
        near_overflow = _near_maxgam(A, B) | _near_maxgam(1 + A - B, 1 + B)
    for g, w in zip(got, want, strict=True):
        assert g.dtype == w.dtype == np.float64
        np.testing.assert_array_equal(np.isnan(g), np.isnan(w))
        edge = ~np.isfinite(g) | ~np.isfinite(w) | (w == 0)
        assert np.all((g[edge] == w[edge]) | np.isnan(w[edge]) | near_overflow[edge])
        signed = edge & (g == w) & (np.abs(A) < 2**31) & (np.abs(B) < 2**31)  # (beyond, Cephes' sign of Gamma is an int's)
        assert np.array_equal(np.signbit(g[signed]), np.signbit(w[signed]))
    (beta, betaln, binom), (beta_s, betaln_s, binom_s) = got, want
    lanczos_beta, lanczos_binom = _lanczos_regions(A, B)
    assert _ulps_against_mpmath(beta[lanczos_beta], "beta", A[lanczos_beta], B[lanczos_beta])[0] <= 16
    assert _ulps_against_mpmath(binom[lanczos_binom], "binom", A[lanczos_binom], B[lanczos_binom])[0] <= 16
    product, scale = _beta_regimes(A, B)
    finite = np.isfinite(beta) & np.isfinite(beta_s) & (np.abs(beta_s) >= TINY)  # (normal results: a subnormal has fewer digits)
    assert ulps(beta, beta_s)[product & finite & ~lanczos_beta].max() <= 16
    assert _scaled(beta, beta_s, EPS, scale, np.abs(beta_s))[~product & finite & ~lanczos_beta].max() <= 2
    finite = np.isfinite(betaln) & np.isfinite(betaln_s)
    assert _scaled(betaln, betaln_s, EPS, np.maximum(1, np.abs(betaln_s)))[product & finite].max() <= 8
    assert _scaled(betaln, betaln_s, EPS, scale)[~product & finite].max() <= 2
    finite = np.isfinite(binom) & np.isfinite(binom_s) & (binom_s != 0) & ~lanczos_binom
    with np.errstate(all="ignore"):
        small_k = (B == np.floor(B)) & (np.abs(B) < 20) & ((np.abs(A) > 1e-8) | (A == 0))
        k_scale = _beta_regimes(1 + A - B, 1 + B)[1]
    assert ulps(binom, binom_s)[small_k & finite].max() == 0
    assert _scaled(binom, binom_s, EPS, k_scale, np.abs(binom_s))[finite].max() <= 8


def test_beta_against_mpmath() -> None:
    """Where betaln (and beta, with an argument below 1/2) sum lgammas (beyond MAXGAM), SciPy's and the kernel's error is
    the sum's cancellation: against 40-digit mpmath both are within 2 eps times the lgammas' magnitudes (betaln
    absolute, beta relative; measured 0.6 for the kernel, 0.5 for SciPy), neither the more accurate everywhere (libm's
    lgamma against Cephes'). Where beta is Boost's Lanczos form (_lanczos_regions), within 16 ULP (measured 3, SciPy's
    2.3e6)."""
    import mpmath

    mpmath.mp.dps = 40
    a = np.concatenate([[1e6, 200.0, 500.5, 1e3, 300.0, 5e5], np.exp(RNG.uniform(5.2, 13, 40))])
    b = np.concatenate([[0.1, 180.0, 0.25, 999.0, 3.0, 5e5], np.exp(RNG.uniform(-3, 6, 40))])
    beta, betaln = et.kernel(lambda a, b: (sp.beta(a, b), sp.betaln(a, b)))(a, b)
    exact = [mpmath.beta(mpmath.mpf(x), mpmath.mpf(y)) for x, y in zip(a, b, strict=True)]
    scale = _beta_regimes(a, b)[1] * EPS
    exact_log = np.array([float(mpmath.log(e)) for e in exact])
    assert (np.abs(betaln - exact_log) / scale).max() <= 2
    exact_beta = np.array([float(e) for e in exact])
    kept = exact_beta > 1e-300
    assert (np.abs(beta - exact_beta)[kept] / (exact_beta * scale)[kept]).max() <= 2
    lanczos = _lanczos_regions(a, b)[0] & kept
    error = np.abs(beta - exact_beta)[lanczos] / np.spacing(exact_beta[lanczos])
    assert error.max() <= 16


def test_binom_against_mpmath() -> None:
    """binom of n up to 1020 (integral and not) and k in [0, n] against 40-digit mpmath: within 16 ULP (measured 11, at
    the product formula of k < 20; 1.5 at binom(1000, 500), 1 at binom(188.3, 184), where SciPy's lgammas are 4500 and
    1050 ULP off; before Boost's Lanczos form the kernel was up to 7100 ULP off, SciPy 7200 on this sample)."""
    rng = np.random.default_rng(2)
    n = np.concatenate([np.round(np.exp(rng.uniform(np.log(2), np.log(1020), 200))), np.exp(rng.uniform(np.log(2), np.log(1020), 200)),
                        [1000.0, 188.3, 300.7]])
    k = np.concatenate([np.floor(rng.uniform(0, 1, 200) * n[:200]), rng.uniform(0, 1, 200) * n[200:400], [500.0, 184.0, 150.2]])
    k[300:400] = np.floor(k[300:400])
    got = et.kernel(lambda n, k: sp.binom(n, k))(n, k)
    assert _ulps_against_mpmath(got[-3:], "binom", n[-3:], k[-3:])[0] <= 2
    assert _ulps_against_mpmath(got, "binom", n, k)[0] <= 16


def test_float32_beta_functions_round_once() -> None:
    """float32 beta, betaln, binom: SciPy's float64 loop rounded once, within 1 ULP of SciPy's float32 (measured 0);
    where beta and binom are Boost's Lanczos form (SciPy's float64 up to 2.8e8 ULP off there, 30 in float32) within
    1 ULP of mpmath's value rounded to float32 (measured 0.5)."""
    a, b = A.astype(np.float32), B.astype(np.float32)
    got = et.kernel(_binary)(a, b)
    with np.errstate(all="ignore"):
        want = _binary(a, b)
    regions = _lanczos_regions(a.astype(np.float64), b.astype(np.float64))
    for g, w, region in zip(got, want, (regions[0], np.zeros(a.size, bool), regions[1]), strict=True):
        assert g.dtype == w.dtype == np.float32
        np.testing.assert_array_equal(np.isnan(g), np.isnan(w))
        finite = np.isfinite(g) & np.isfinite(w)
        assert ulps(g[finite & ~region], w[finite & ~region]).max() <= 1
    import mpmath

    mpmath.mp.dps = 40
    for g, exact, region in ((got[0], mpmath.beta, regions[0]), (got[2], mpmath.binomial, regions[1])):
        want32 = np.array([float(exact(mpmath.mpf(float(x)), mpmath.mpf(float(y)))) for x, y in zip(a[region], b[region], strict=True)])
        with np.errstate(all="ignore"):
            want32 = want32.astype(np.float32)
        finite = np.isfinite(want32) & np.isfinite(g[region])
        assert ulps(g[region][finite], want32[finite]).max() <= 1


def test_comb_is_binom_where_defined() -> None:
    """comb(N, k) (exact=False) is binom(N, k) where 0 <= k <= N, else 0; with repetition binom(N + k - 1, k), 1 where
    k = 0 <= N; integer arguments give float64; exact=True of traced arrays is refused."""
    n, k = (g.ravel() for g in np.meshgrid(np.array([-3, -1, 0, 1, 2, 5, 10, 30, 100, 1000]), np.array([-2, -1, 0, 1, 2, 3, 7, 10, 40])))
    fn = lambda n, k, x: (sp.comb(n, k), sp.comb(n, k, repetition=True), sp.comb(x, 2.5), sp.comb(x, k, repetition=True))  # noqa: E731
    x = np.linspace(-3, 40, len(n))
    got = et.kernel(fn)(n, k, x)
    with np.errstate(all="ignore"):
        want = fn(n, k, x)
    import mpmath

    mpmath.mp.dps = 40
    arguments = ((n, k), (n + k - 1, k), (x, np.full(x.size, 2.5)), (x + k - 1, k))  # (binom's, where SciPy's comb takes it)
    for g, w, (top, bottom) in zip(got, want, arguments, strict=True):
        assert g.dtype == w.dtype == np.float64
        np.testing.assert_array_equal(np.isnan(g), np.isnan(w))
        exact = np.array([float(mpmath.binomial(mpmath.mpf(float(t)), mpmath.mpf(float(u)))) if v not in (0.0, 1.0) and np.isfinite(v)
                          else v for t, u, v in zip(top, bottom, w, strict=True)])  # (SciPy's binom of N + k - 1 up to 257 ULP off)
        assert ulps(g, exact).max() <= 16
    with pytest.raises(et.UnsupportedError, match="exact=True"):
        et.kernel(lambda n: sp.comb(n, 2, exact=True))(np.arange(5))


def test_integer_arguments_and_complex_refusal() -> None:
    """Integers take SciPy's float64 loops; a complex argument is refused (kernels have no complex dtype)."""
    i = np.arange(-3, 8)
    got = et.kernel(lambda i: (sp.beta(i, 3), sp.binom(i, 2), sp.zeta(i + 5), sp.exp1(i), sp.k0(i)))(i)
    for g, w in zip(got, (sp.beta(i, 3), sp.binom(i, 2), sp.zeta(i + 5), sp.exp1(i), sp.k0(i)), strict=True):
        assert g.dtype == w.dtype == np.float64
        assert ulps(g, w).max() <= 4
    for fn in (lambda z: sp.exp1(z), lambda z: sp.zeta(z), lambda z: sp.beta(z, z)):
        with pytest.raises(et.KernelArgumentError, match="complex128"):
            et.kernel(fn)(np.ones(3, np.complex128))


def test_scipy_stats_functions_using_them() -> None:
    """scipy.stats' beta.logpdf, betaprime.pdf, f.pdf and betabinom.pmf (betaln) and zipf.pmf (zeta) trace unchanged."""
    x = np.linspace(0.01, 0.99, 50)
    a, b = np.linspace(0.5, 5, 50), np.linspace(5, 0.5, 50)

    def fn(x, a, b):
        k = np.floor(10 * x)
        return (st.beta.logpdf(x, a, b), st.betaprime.pdf(x, a, b), st.f.pdf(x, a, b), st.betabinom.pmf(k, 10, a, b),
                st.zipf.pmf(k + 1, a + 1))

    got = et.kernel(fn)(x, a, b)
    for g, w in zip(got, fn(x, a, b), strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-14)


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(4))
def test_random_sweeps(seed: int) -> None:
    """The bounds above over 10^5 random arguments per function and seed: log-uniform of both signs."""
    rng = np.random.default_rng(seed)
    x = np.exp(rng.uniform(-30, 7, 100_000)) * rng.choice([1.0, -1.0], 100_000)
    z = rng.uniform(-300, 300, 100_000)
    got = et.kernel(_unary)(x, z)
    with np.errstate(all="ignore"):
        want = _unary(x, z)
    for name, g, w in zip([*UNARY, "zeta"], got, want, strict=True):
        np.testing.assert_array_equal(np.isnan(g), np.isnan(w), err_msg=name)
        assert ulps(g, w).max() <= UNARY.get(name, ZETA), (name, ulps(g, w).max())
    a, b = (np.exp(rng.uniform(-10, 9, 100_000)) * rng.choice([1.0, 1.0, -1.0], 100_000) for _ in range(2))
    beta, betaln = et.kernel(lambda a, b: (sp.beta(a, b), sp.betaln(a, b)))(a, b)
    with np.errstate(all="ignore"):
        beta_s, betaln_s = sp.beta(a, b), sp.betaln(a, b)
    product, scale = _beta_regimes(a, b)
    lanczos = _lanczos_regions(a, b)[0]  # (Boost's Lanczos form: against mpmath, a sample; SciPy is 300+ ULP off there)
    finite = np.isfinite(beta) & np.isfinite(beta_s) & (np.abs(beta_s) >= TINY)  # (normal results: a subnormal has fewer digits)
    assert ulps(beta, beta_s)[product & finite & ~lanczos].max() <= 16
    assert _scaled(beta, beta_s, EPS, scale, np.abs(beta_s))[~product & finite & ~lanczos].max() <= 2
    sample = np.flatnonzero(lanczos & finite)[:300]
    assert _ulps_against_mpmath(beta[sample], "beta", a[sample], b[sample])[0] <= 16
    finite = np.isfinite(betaln) & np.isfinite(betaln_s)
    assert _scaled(betaln, betaln_s, EPS, scale)[~product & finite].max() <= 2


def test_ufunc_methods_of_the_ops() -> None:
    """beta.outer: a SciPy ufunc that is an op takes NumPy's outer (as SciPy's own computes it)."""
    x = np.linspace(0.1, 3, 7)
    assert ulps(et.kernel(lambda x: sp.beta.outer(x, x))(x), sp.beta.outer(x, x)).max() <= 16


def test_erfcx_exprel_gammasgn_multigammaln_match_scipy() -> None:
    """Compositions: erfcx (exp(x^2) erfc(x) with x^2's rounding carried, the asymptotic series from 26, 2 exp(x^2) -
    erfcx(-x) below 0: within 2 ULP of mpmath; SciPy's is 7 ULP off near 0 and 240 ULP at -26, its exp(x*x) rounded),
    exprel, gammasgn (signed zeros, poles, infinities as SciPy) and multigammaln (its data check raised from
    the call); float32 rounded once."""
    import mpmath

    z = np.concatenate([[0.0, -0.0, np.nan, np.inf, -np.inf, 1e-300, 25.999, 26.0, 26.001, -26.0, -26.6, -26.7, 1e10, 1e300],
                        np.linspace(-26, 30, 2001), np.geomspace(1e-8, 1e5, 301)])
    got = et.kernel(lambda v: (sp.erfcx(v), sp.exprel(v), sp.gammasgn(v)), cache=False)(z)
    want = (sp.erfcx(z), sp.exprel(z), sp.gammasgn(z))
    for g, w in zip(got, want):
        np.testing.assert_array_equal(np.isnan(g), np.isnan(w))
        np.testing.assert_array_equal(np.isinf(g), np.isinf(w))
    finite = np.isfinite(want[0]) & (want[0] > 0)
    assert ulps(got[0][finite & (z >= 0)], want[0][finite & (z >= 0)]).max() <= 8  # (SciPy is 7 ULP off near 0)
    with mpmath.workdps(40):
        exact = np.array([float(mpmath.exp(mpmath.mpf(v) ** 2) * mpmath.erfc(mpmath.mpf(v))) for v in z[finite][::10]])
    assert ulps(got[0][finite][::10], exact).max() <= 2
    assert ulps(got[1], want[1]).max() <= 3 and np.array_equal(got[2], want[2], equal_nan=True)
    x32 = z[np.abs(z) < 1e30].astype(np.float32)
    got32 = et.kernel(lambda v: (sp.erfcx(v), sp.exprel(v), sp.gammasgn(v)), cache=False)(x32)
    for g, w in zip(got32, (sp.erfcx(x32), sp.exprel(x32), sp.gammasgn(x32))):
        assert g.dtype == w.dtype == np.float32 and ulps(g, w).max() <= 1
    a = np.array([3.5, 10.0, 100.5, 1.01])
    k = et.kernel(lambda a: sp.multigammaln(a, 3), cache=False)
    np.testing.assert_allclose(k(a), sp.multigammaln(a, 3), rtol=1e-14)
    with pytest.raises(ValueError, match="condition a > 0.5"):
        k(np.array([0.5, 4.0]))


def test_poch_and_the_t_distribution_match_scipy() -> None:
    """poch(a, m) = Gamma(a + m) / Gamma(a) by Cephes' method (scipy.stats.t's pdf and logpdf call it): the same classes
    as SciPy (signs, infinities at poles, NaN) on a random grid, within twice SciPy's own error of mpmath's value (or
    64 ULP): where a and a + m are positive the lgamma difference is taken without cancellation, where SciPy loses
    1e-11 near a = 8000; float32 rounded once; t.pdf and t.logpdf (finite and infinite df) as SciPy's."""
    import mpmath

    r = np.random.default_rng(3)
    a = np.concatenate([r.uniform(-20, 20, 400), r.uniform(0, 200, 200), 10 ** r.uniform(-3, 6, 200), -np.arange(0, 6.0),
                        [-2.5, 1.5, 2.0, np.nan, np.inf, -np.inf]])
    m = np.concatenate([r.uniform(-5, 5, 400), r.uniform(-30, 30, 200), r.uniform(-1, 1, 200), np.ones(6),
                        [1.5, -1.5, 500.0, 1.0, 0.5, 0.5]])
    k = et.kernel(lambda a, m: sp.poch(a, m), cache=False)
    got, want = k(a, m), sp.poch(a, m)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_array_equal(np.isinf(got), np.isinf(want))
    np.testing.assert_array_equal(np.sign(got[~np.isnan(want)]), np.sign(want[~np.isnan(want)]))
    finite = np.where(np.isfinite(want) & (want != 0))[0][::4]
    with mpmath.workdps(40):
        exact = np.array([float(mpmath.rf(mpmath.mpf(float(a[i])), mpmath.mpf(float(m[i])))) for i in finite])
    assert np.all(np.abs(got[finite] - exact) <= np.maximum(2 * np.abs(want[finite] - exact), 64 * np.spacing(np.abs(exact))))
    got32 = k(a.astype(np.float32), m.astype(np.float32))
    want32 = sp.poch(a.astype(np.float32), m.astype(np.float32))
    assert got32.dtype == np.float32 and ulps(got32, want32).max() <= 1
    x, df = np.linspace(-5, 5, 11), np.array([1.0, 2.5, 10.0, 30.0, np.inf, 1.0, 2.0, 3.0, 4.0, 100.0, 1e6])
    pdf, logpdf = et.kernel(lambda x, d: (st.t.pdf(x, d), st.t.logpdf(x, d)), cache=False)(x, df)
    np.testing.assert_allclose(pdf, st.t.pdf(x, df), rtol=4e-14)  # (SciPy's t.pdf(4, 100) is 3.1e-14 off, ours 1.2e-15)
    np.testing.assert_allclose(logpdf, st.t.logpdf(x, df), rtol=4e-15)
