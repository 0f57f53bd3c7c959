"""scipy.special.owens_t, Owen's T function T(h, a), by SciPy's algorithm (Patefield and Tandy's, as SciPy 1.17's
Cephes owens_t), in float64 (float32: the float64 value rounded once, as SciPy's loops): T even in h and odd in a;
|a| > 1 mapped to 1 / |a| by T(h, a) = (Phi(h) + Phi(ah)) / 2 - Phi(h) Phi(ah) - T(ah, 1 / a) (the normal integrals
as erf's below ah = 0.67, erfc's above); then h = 0, a = 0 and a = 1 in closed form, else the method and order their
table selects by the ranges h and a fall in: T1 (the series in a^2 with expm1), T2 (in 1 / h^2), T3 (T2 with Chebyshev
coefficients, 31 terms), T4, T5 (13-point Gauss quadrature) or T6 (near a = 1). inf at |a| = inf gives erfc(h /
sqrt 2) / 4, 0 at h = inf; NaN at NaN. erf and erfc are libm's (SciPy's Cephes').
"""

from __future__ import annotations

import math as pymath

from .scalarcode import Real, Truth, atan, atan2, choose, entry, erf, erfc, exp, expm1, fabs, isnan, iterate, table, where

_TWO_PI = 2.0 * pymath.pi
_SQRT_TWO_PI = pymath.sqrt(_TWO_PI)  # (C's std::sqrt(2 * M_PI))
_SQRT2 = pymath.sqrt(2.0)
_H_RANGE = (0.02, 0.06, 0.09, 0.125, 0.26, 0.4, 0.6, 1.6, 1.7, 2.33, 2.4, 3.36, 3.4, 4.8)
_A_RANGE = (0.025, 0.09, 0.15, 0.36, 0.5, 0.9, 0.99999)
_SELECT = ((0, 0, 1, 12, 12, 12, 12, 12, 12, 12, 12, 15, 15, 15, 8), (0, 1, 1, 2, 2, 4, 4, 13, 13, 14, 14, 15, 15, 15, 8),
           (1, 1, 2, 2, 2, 4, 4, 14, 14, 14, 14, 15, 15, 15, 9), (1, 1, 2, 4, 4, 4, 4, 6, 6, 15, 15, 15, 15, 15, 9),
           (1, 2, 2, 4, 4, 5, 5, 7, 7, 16, 16, 16, 11, 11, 10), (1, 2, 4, 4, 4, 5, 5, 7, 7, 16, 16, 16, 11, 11, 11),
           (1, 2, 3, 3, 5, 5, 7, 7, 16, 16, 16, 16, 16, 11, 11), (1, 2, 3, 3, 5, 5, 17, 17, 17, 17, 16, 16, 16, 11, 11))
_ORDER = (2, 3, 4, 5, 7, 10, 12, 18, 10, 20, 30, 0, 4, 7, 8, 20, 0, 0)  # by _SELECT's entry
_METHOD = (1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 2, 3, 4, 4, 4, 4, 5, 6)
_T3_C = (1.0, -1.0, 1.0, -0.9999999999999998, 0.9999999999999839, -0.9999999999993063, 0.9999999999797337, -0.9999999995749584,
         0.9999999933226235, -0.9999999188923242, 0.9999992195143483, -0.9999939351372067, 0.9999613559769055, -0.9997955636651394,
         0.9990927896296171, -0.9965938374119182, 0.9891001713838613, -0.9700785580406933, 0.9291143868326319, -0.8542058695956156,
         0.737965260330301, -0.585234698828374, 0.4159977761456763, -0.25882108752419436, 0.13755358251638927, -0.060795276632595575,
         0.021633768329987153, -0.005934056934551867, 0.0011743414818332946, -0.0001489155613350369, 9.072354320794358e-06)
_T5_POINTS = (0.35082039676451715489e-02, 0.31279042338030753740e-01, 0.85266826283219451090e-01, 0.16245071730812277011e+00,
              0.25851196049125434828e+00, 0.36807553840697533536e+00, 0.48501092905604697475e+00, 0.60277514152618576821e+00,
              0.71477884217753226516e+00, 0.81475510988760098605e+00, 0.89711029755948965867e+00, 0.95723808085944261843e+00,
              0.99178832974629703586e+00)
_T5_WEIGHTS = (0.18831438115323502887e-01, 0.18567086243977649478e-01, 0.18042093461223385584e-01, 0.17263829606398753364e-01,
               0.16243219975989856730e-01, 0.14994592034116704829e-01, 0.13535474469662088392e-01, 0.11886351605820165233e-01,
               0.10070377242777431897e-01, 0.81130545742299586629e-02, 0.60419009528470238773e-02, 0.38862217010742057883e-02,
               0.16793031084546090448e-02)


def _norm1(x: Real) -> Real:
    """erf(x / sqrt 2) / 2: Phi(x) - 1/2."""
    return erf(x / _SQRT2) / 2.0


def _norm2(x: Real) -> Real:
    """erfc(x / sqrt 2) / 2: 1 - Phi(x)."""
    return erfc(x / _SQRT2) / 2.0


def _ndtr(x: Real) -> Real:
    """Cephes' ndtr: Phi(x), by erf within |x| < sqrt 2, else by erfc."""
    z = x * pymath.sqrt(0.5)
    tail = 0.5 * erfc(fabs(z))
    return where(fabs(z) < 1.0, 0.5 + 0.5 * erf(z), where(z > 0.0, 1.0 - tail, tail))


def _t1(h: Real, a: Real, m: Real) -> Real:
    """T1: the series in a^2 to order m."""
    hs = -0.5 * h * h
    squared = a * a

    def step(state: list[Real]) -> tuple[list[Real], Truth]:
        j, jj, aj, dj, gj, value = state
        value = value + dj * aj / jj
        done = m <= j
        j = j + 1.0
        return [j, jj + 2.0, aj * squared, gj - dj, gj * (hs / j), value], done

    start = [Real(1.0), Real(1.0), a / _TWO_PI, expm1(hs), hs * exp(hs), atan(a) / _TWO_PI]
    return iterate(start, step, 64)[5]


def _t2(h: Real, a: Real, ah: Real, m: Real) -> Real:
    """T2: the series in 1 / h^2 to order 2m + 1."""
    hs, negated, last = h * h, -a * a, 2.0 * m + 1.0
    y = 1.0 / hs

    def step(state: list[Real]) -> tuple[list[Real], Truth]:
        i, vi, z, value = state
        value = value + z
        return [i + 2.0, vi * negated, y * (vi - i * z), value], last <= i

    start = [Real(1.0), a * exp(-0.5 * ah * ah) / _SQRT_TWO_PI, (_ndtr(ah) - 0.5) / h, Real(0.0)]
    return iterate(start, step, 64)[3] * (exp(-0.5 * hs) / _SQRT_TWO_PI)


def _t3(h: Real, a: Real, ah: Real) -> Real:
    """T3: T2's series with Chebyshev-economized coefficients."""
    aa, hh = a * a, h * h
    y = 1.0 / hh
    vi, zi, total = a * exp(-ah * ah / 2.0) / _SQRT_TWO_PI, _norm1(ah) / h, Real(0.0)
    for i, c in enumerate(_T3_C):
        total = total + zi * c
        zi = y * ((2.0 * i + 1.0) * zi - vi)
        vi = vi * aa
    return total * (exp(-hh / 2.0) / _SQRT_TWO_PI)


def _t4(h: Real, a: Real, m: Real) -> Real:
    """T4: the series in a^2 to order 2m + 1."""
    hh, negated, last = h * h, -a * a, 2.0 * m + 1.0

    def step(state: list[Real]) -> tuple[list[Real], Truth]:
        i, ai, yi, total = state
        total = total + ai * yi
        following = i + 2.0
        return [following, ai * negated, (1.0 - hh * yi) / following, total], last <= i

    start = [Real(1.0), a * exp(-hh * (1.0 - negated) / 2.0) / _TWO_PI, Real(1.0), Real(0.0)]
    return iterate(start, step, 64)[3]


def _t5(h: Real, a: Real) -> Real:
    """T5: 13-point Gauss quadrature in a^2."""
    aa, nhh, total = a * a, -0.5 * h * h, Real(0.0)
    for point, weight in zip(_T5_POINTS, _T5_WEIGHTS, strict=True):
        r = 1.0 + aa * point
        total = total + weight * exp(nhh * r) / r
    return total * a


def _t6(h: Real, a: Real) -> Real:
    """T6: for a near 1."""
    normh = _norm2(h)
    y = 1.0 - a
    r = atan2(y, 1.0 + a)
    value = normh * (1.0 - normh) / 2.0
    return where(r != 0.0, value - r * exp(-y * h * h / (2.0 * r)) / _TWO_PI, value)


def _dispatch(h: Real, a: Real, ah: Real) -> Real:
    """T(h, a) for finite h >= 0 and 0 <= a <= 1 by the method and order the tables select (ah: a h, as computed)."""
    h_index = sum((where(h > bound, 1.0, 0.0) for bound in _H_RANGE), Real(0.0))
    a_index = sum((where(a > bound, 1.0, 0.0) for bound in _A_RANGE), Real(0.0))
    index = entry(table(_SELECT), a_index, h_index)
    m, method = entry(table([_ORDER]), Real(0.0), index), entry(table([_METHOD]), Real(0.0), index)
    methods = [lambda: _t1(h, a, m), lambda: _t2(h, a, ah, m), lambda: _t3(h, a, ah), lambda: _t4(h, a, m),
               lambda: _t5(h, a), lambda: _t6(h, a)]

    def by_method(k: int) -> Real:
        return methods[k]() if k == len(methods) - 1 else choose(method == k + 1.0, methods[k], lambda: by_method(k + 1))

    closed = (h == 0.0) | (a == 0.0) | (a == 1.0)
    closed_value = lambda: where(h == 0.0, atan(a) / _TWO_PI, where(a == 0.0, 0.0, _norm2(-h) * _norm2(h) / 2.0))  # noqa: E731
    return choose(closed, closed_value, lambda: by_method(0))


def owens_t(h: Real, a: Real) -> Real:
    """scipy.special.owens_t: T(h, a) = (1 / 2 pi) int_0^a exp(-h^2 (1 + x^2) / 2) / (1 + x^2) dx."""
    h_abs, a_abs = fabs(h), fabs(a)
    ah = a_abs * h_abs
    edge = isnan(h) | isnan(a) | (a_abs == float("inf")) | (h_abs == float("inf"))

    def edges() -> Real:
        return where(isnan(h) | isnan(a), float("nan"), where(a_abs == float("inf"), 0.5 * _norm2(h_abs), 0.0))

    def remapped() -> Real:
        low = ah <= 0.67
        normh, normah = where(low, _norm1(h_abs), _norm2(h_abs)), where(low, _norm1(ah), _norm2(ah))
        start = where(low, Real(0.25), (normh + normah) / 2.0)
        return start - normh * normah - _dispatch(ah, 1.0 / a_abs, h_abs)

    value = choose(edge, edges, lambda: choose(a_abs <= 1.0, lambda: _dispatch(h_abs, a_abs, ah), remapped))
    return where(a < 0.0, -value, value)
