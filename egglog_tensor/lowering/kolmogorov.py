"""scipy.special's kolmogorov and kolmogi, the limiting two-sided Kolmogorov-Smirnov distribution's survival function
and its inverse, by SciPy 1.17's algorithms (xsf's cephes/kolmogorov.h, van Mulbregt's), in float64 (float32: the
float64 value rounded once, as SciPy's loops):

- kolmogorov(x): 1 for x <= pi / sqrt(8 * 746) (the cdf's exp underflows); up to 0.82 the cdf as the theta series
  w u (1 + u^8 + u^24) with u = exp(-pi^2 / (8 x^2)), w = sqrt(2 pi) / x (exp of the logs where u underflows),
  the sf 1 - cdf; beyond, the sf 2 v (1 - v^3 (1 - v^5 (1 - v^7))) with v = exp(-2 x^2); clamped to [0, 1]. Both
  branches compute the pdf too (kolmogi's Newton steps use it).
- kolmogi(p): Newton's method on the cdf (p > 1/2) or the sf, from SciPy's starting brackets and point (the
  asymptotic forms inverted), a step leaving the bracket replaced by its midpoint, until the step is within
  eps + 2 eps |x| (500 steps at most); 0 at p = 1, inf at p = 0, NaN outside [0, 1].
"""

from __future__ import annotations

import math as pymath

from .scalarcode import Real, Truth, choose, exp, fabs, isnan, iterate, log, sqrt, where

_CUTOVER = 0.82  # the two series' boundary
_SMALLEST = pymath.pi / pymath.sqrt(8 * 746)  # below it the cdf underflows: sf 1
_LOG_SQRT_2PI = 0.91893853320467274178
_EPS = 2.0**-52
_MAXITER = 500


def _clamp(x: Real) -> Real:
    return where(x < 0.0, 0.0, where(x > 1.0, 1.0, x))


def _small(x: Real) -> tuple[Real, Real]:
    """(cdf, pdf) for x <= 0.82: the theta series in u = exp(-pi^2 / (8 x^2)), unrolled as SciPy's."""
    w = sqrt(2 * pymath.pi) / x
    logu8 = -pymath.pi * pymath.pi / (x * x)
    u = exp(logu8 / 8.0)
    u8 = exp(logu8)
    u8cub = u8 ** Real(3.0)
    p, d = 1.0 + u8cub * 1.0, 5.0 * 5.0 + u8cub * 0.0
    p, d = 1.0 + u8 * u8 * p, 3.0 * 3.0 + u8 * u8 * d
    p, d = 1.0 + u8 * p, 1.0 * 1.0 + u8 * d
    d = (pymath.pi * pymath.pi / 4.0 / (x * x) * d - p) * (w * u / x)
    underflow = u == 0.0
    return where(underflow, exp(logu8 / 8.0 + log(w)), w * u * p), where(underflow, 0.0, d)


def _large(x: Real) -> tuple[Real, Real]:
    """(sf, pdf) for x > 0.82: 2 v (1 - v^3 (1 - v^5 (1 - v^7))), v = exp(-2 x^2), unrolled as SciPy's."""
    v = exp(-2.0 * x * x)
    vsq, v3 = v * v, v ** Real(3.0)
    p, d = Real(1.0), Real(0.0)
    for power, square in ((v3 * v3 * v, 9.0), (v3 * vsq, 4.0), (v3, 1.0)):
        p, d = 1.0 - power * p, square - power * d
    return 2.0 * v * p, 8.0 * v * x * d


def _three(x: Real) -> tuple[Real, Real, Real]:
    """(sf, cdf, pdf) at x (not NaN), SciPy's _kolmogorov."""
    cdf_small, pdf_small = _small(x)
    sf_large, pdf_large = _large(x)
    near = x <= _CUTOVER
    sf = where(near, 1.0 - cdf_small, sf_large)
    cdf = where(near, cdf_small, 1.0 - sf_large)
    pdf = where(near, pdf_small, pdf_large)
    zero = x <= _SMALLEST
    return (where(zero, 1.0, _clamp(sf)), where(zero, 0.0, _clamp(cdf)),
            where(zero, 0.0, where(pdf > 0.0, pdf, 0.0)))


def kolmogorov(x: Real) -> Real:
    """The limiting Kolmogorov distribution's survival function (SciPy's kolmogorov)."""
    return where(isnan(x), x, _three(x)[0])


def _within_tol(x: Real, y: Real) -> Truth:
    return fabs(x - y) <= _EPS + 2.0 * _EPS * fabs(y)


def _start(psf: Real, pcdf: Real) -> list[Real]:
    """SciPy's (x, a, b): the starting point and bracket, from the cdf's asymptotic form where pcdf <= 1/2, else
    the sf's (its series inverted: q = p + p^4 + 4 p^7 - ...)."""
    logpcdf = log(pcdf)
    root = lambda t: pymath.pi / (2.0 * pymath.sqrt(2.0) * sqrt(-(logpcdf + t - _LOG_SQRT_2PI)))  # noqa: E731
    a_low, b_low = root(logpcdf / 2.0), root(Real(0.0))
    a_low, b_low = root(log(a_low)), root(log(b_low))
    a_high = sqrt(-0.5 * log(psf / (1.0 - pymath.exp(-4)) / 2.0))
    b_high = sqrt(-0.5 * log(psf * (1.0 - 256 * _EPS) / 2.0))
    p = psf / 2.0
    p2, p3 = p * p, p * p * p
    q0 = (1.0 + p3 * (1.0 + p3 * (4.0 + p2 * (-1.0 + p * (22.0 + p2 * (-13.0 + 140.0 * p)))))) * p
    x_high = sqrt(-log(q0) / 2.0)
    x_high = where((x_high < a_high) | (x_high > b_high), (a_high + b_high) / 2.0, x_high)
    low = pcdf <= 0.5
    return [where(low, (a_low + b_low) / 2.0, x_high), where(low, a_low, a_high), where(low, b_low, b_high)]


def _newton(psf: Real, pcdf: Real) -> Real:
    """SciPy's _kolmogi's bracketed Newton loop."""

    def step(state: list[Real]) -> tuple[list[Real], Truth]:
        x0, a, b = state
        sf, cdf, pdf = _three(x0)
        df = where(pcdf < 0.5, pcdf - cdf, sf - psf)
        raise_a = (df > 0.0) & (x0 > a)
        a = where(raise_a, x0, a)
        b = where(~raise_a & (df < 0.0) & (x0 < b), x0, b)
        middle = (a + b) / 2.0
        x = where(pdf <= 0.0, middle, x0 - df / -pdf)
        inside = (x >= a) & (x <= b)
        close = _within_tol(x, x0)
        at_end = (x == a) | (x == b)
        inner = where(close | ~at_end, x, middle)
        inner_done = close | (at_end & ((middle == a) | (middle == b)))
        zero = fabs(df) == 0.0
        following = where(zero, x0, where(inside, inner, middle))
        return [following, a, b], zero | (inside & inner_done) | (~inside & _within_tol(middle, x0))

    return iterate(_start(psf, pcdf), step, _MAXITER + 1)[0]


def kolmogi(p: Real) -> Real:
    """The x with kolmogorov(x) = p (SciPy's kolmogi)."""
    psf, pcdf = p, 1.0 - p
    valid = (psf >= 0.0) & (pcdf >= 0.0) & (pcdf <= 1.0) & (psf <= 1.0) & (fabs(1.0 - pcdf - psf) <= 4 * _EPS)
    edge = where(pcdf == 0.0, 0.0, float("inf"))
    solve = lambda: choose((pcdf == 0.0) | (psf == 0.0), lambda: edge, lambda: _newton(psf, pcdf))  # noqa: E731
    return choose(valid, solve, lambda: Real(float("nan")))
