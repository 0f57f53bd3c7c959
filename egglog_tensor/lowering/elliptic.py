"""scipy.special's complete elliptic integrals ellipk ellipkm1 ellipe by SciPy's algorithms (Cephes' ellpk and ellpe,
as SciPy 1.17's), in float64 (float32: the float64 value rounded once, as SciPy's loops):

- K of the complementary parameter p = 1 - m (`ellipkm1(p)`; `ellipk(m)` is it of 1 - m, that difference rounded as
  SciPy's): P(p) - log(p) Q(p) on (MACHEP, 1], log 4 - log(p) / 2 below, inf at 0; K(1 / p) / sqrt(p) beyond 1 (0 at
  inf); NaN below 0.
- E(m) (`ellipe`) with p = 1 - m: P(p) - log(p) p Q(p) on (0, 1], 1 at 0; E(1 - 1/p) sqrt(p) beyond 1 (m < 0, that
  parameter's complement formed as Cephes' recursion does); NaN where p < 0 (m > 1).
- The arithmetic-geometric mean (`agm`, xsf's as SciPy 1.17's): pi (a + b) / (4 K(4ab / (a + b)^2)) where a and b are
  within (1e-154, 1e154), else up to 20 steps of the means; NaN at NaN, for opposite signs and for 0 with inf; 0 at 0;
  a at a = b; negative a and b as -agm(-a, -b).
"""

from __future__ import annotations

import math as pymath

from .scalarcode import Real, Truth, choose, horner, isinf, isnan, iterate, log, sqrt, where

MACHEP = 2.0**-53
_LOG4 = 1.3862943611198906188e0
_K_P = (1.37982864606273237150e-4, 2.28025724005875567385e-3, 7.97404013220415179367e-3, 9.85821379021226008714e-3,
        6.87489687449949877925e-3, 6.18901033637687613229e-3, 8.79078273952743772254e-3, 1.49380448916805252718e-2,
        3.08851465246711995998e-2, 9.65735902811690126535e-2, 1.38629436111989062502e0)  # (highest power first)
_K_Q = (2.94078955048598507511e-5, 9.14184723865917226571e-4, 5.94058303753167793257e-3, 1.54850516649762399335e-2,
        2.39089602715924892727e-2, 3.01204715227604046988e-2, 3.73774314173823228969e-2, 4.88280347570998239232e-2,
        7.03124996963957469739e-2, 1.24999999999870820058e-1, 4.99999999999999999821e-1)
_E_P = (1.53552577301013293365e-4, 2.50888492163602060990e-3, 8.68786816565889628429e-3, 1.07350949056076193403e-2,
        7.77395492516787092951e-3, 7.58395289413514708519e-3, 1.15688436810574127319e-2, 2.18317996015557253103e-2,
        5.68051945617860553470e-2, 4.43147180560990850618e-1, 1.00000000000000000299e0)
_E_Q = (3.27954898576485872656e-5, 1.00962792679356715133e-3, 6.50609489976927491433e-3, 1.68862163993311317300e-2,
        2.61769742454493659583e-2, 3.34833904888224918614e-2, 4.27180926518931511717e-2, 5.85936634471101055642e-2,
        9.37499997197644278445e-2, 2.49999999999888314361e-1)


def ellipkm1(p: Real) -> Real:
    """scipy.special.ellipkm1: K(1 - p), Cephes' ellpk(p)."""
    beyond = p > 1.0
    x = where(beyond, 1.0 / p, p)
    value = where(x > MACHEP, horner(_K_P, x) - log(x) * horner(_K_Q, x), where(x == 0.0, float("inf"), _LOG4 - 0.5 * log(x)))
    value = where(beyond, value / sqrt(p), value)
    return where(p < 0.0, float("nan"), where(p == float("inf"), 0.0, value))


def ellipk(m: Real) -> Real:
    """scipy.special.ellipk: K(m) = ellipkm1(1 - m)."""
    return ellipkm1(1.0 - m)


def ellipe(m: Real) -> Real:
    """scipy.special.ellipe: E(m), Cephes' ellpe."""
    p = 1.0 - m
    beyond = p > 1.0
    x = where(beyond, 1.0 - (1.0 - 1.0 / p), p)
    value = where(x == 0.0, 1.0, horner(_E_P, x) - log(x) * (x * horner(_E_Q, x)))
    value = where(beyond, value * sqrt(p), value)
    return where(p < 0.0, float("nan"), value)


SQRT_HALF_MAX = 9.480751908109176e153  # (a + b)^2 and 4ab are finite and normal between its reciprocal and it


def agm(a: Real, b: Real) -> Real:
    """scipy.special.agm: the arithmetic-geometric mean of a and b of one sign (module docstring)."""
    sign = where(a < 0.0, -1.0, 1.0)
    x, y = a * sign, b * sign
    inside = (x > 1.0 / SQRT_HALF_MAX) & (x < SQRT_HALF_MAX) & (y > 1.0 / SQRT_HALF_MAX) & (y < SQRT_HALF_MAX)

    def means() -> Real:
        def step(state: list[Real]) -> tuple[list[Real], Truth]:
            u, v, mean = state
            u, v = mean, sqrt(u) * sqrt(v)
            mean = 0.5 * u + 0.5 * v
            return [u, v, mean], (mean == u) | (mean == v)

        start = 0.5 * x + 0.5 * y
        return choose((start == x) | (start == y), lambda: start, lambda: iterate([x, y, start], step, 20)[2])

    value = sign * choose(inside, lambda: 0.25 * pymath.pi * (x + y) / ellipkm1(4.0 * x * y / ((x + y) * (x + y))), means)
    invalid = isnan(a) | isnan(b) | ((a < 0.0) & (b > 0.0)) | ((a > 0.0) & (b < 0.0)) | ((isinf(a) | isinf(b)) & ((a == 0.0) | (b == 0.0)))
    return where(invalid, float("nan"), where((a == 0.0) | (b == 0.0), 0.0, where(a == b, a, value)))
