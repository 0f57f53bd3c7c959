"""scipy.special.psi (digamma) by SciPy's algorithm (xsf's digamma over Cephes' psi, with Boost's rational
approximation on [1, 2]), in float64 (float32: the float64 value rounded once), its series' constants by Hurwitz's
zeta (zeta.hurwitz_zeta):

- near the negative root -0.504..., the Taylor series there, sum_n -(-z)^n zeta(n + 1, root) (z = x - root), so the
  value near 0 keeps its relative accuracy (the reflection below would cancel);
- x < 0: the reflection -pi / tan(pi r) (r the fractional part of x) + psi(1 - x); NaN at the negative integers;
- positive integers up to 10: the harmonic sum minus Euler's constant, summed as SciPy sums it;
- below 10 the recurrence psi(x) = psi(x + 1) - 1/x down (or up) into [1, 2], where Boost's (x - root) (Y + R(x - 1));
  from 10 the asymptotic series log x - 1/(2x) - sum B_2k / (2k x^2k).
Edges as SciPy's: psi(+0) = -inf, psi(-0) = +inf, psi(inf) = inf, psi(-inf) = NaN.
"""

from __future__ import annotations

import math as pymath

import numpy as np

from .zeta import hurwitz_zeta
from .scalarcode import Real, Truth, choose, copysign, fabs, floor, horner, isinf, isnan, iterate, log, tan, trunc, where

EULER = 0.577215664901532860606512090082402431
NEGATIVE_ROOT, NEGATIVE_ROOT_VALUE = -0.504083008264455409, 7.2897639029768949e-17
_Y = float(np.float32(0.99558162689208984))  # (a float constant in Boost's and SciPy's source)
_ROOTS = (1569415565.0 / 1073741824.0, (381566830.0 / 1073741824.0) / 1073741824.0, 0.9016312093258695918615325266959189453125e-19)
_P = (-0.0020713321167745952, -0.045251321448739056, -0.28919126444774784, -0.65031853770896507, -0.32555031186804491,
      0.25479851061131551)  # (highest power first, as Cephes' polevl takes them)
_Q = (-0.55789841321675513e-6, 0.0021284987017821144, 0.054151797245674225, 0.43593529692665969, 1.4606242909763515,
      2.0767117023730469, 1.0)
_ASYMPTOTIC = (8.33333333333333333333e-2, -2.10927960927960927961e-2, 7.57575757575757575758e-3, -4.16666666666666666667e-3,
               3.96825396825396825397e-3, -8.33333333333333333333e-3, 8.33333333333333333333e-2)


# psi(root + z) - psi(root) = sum_n -(-z)^n zeta(n + 1, root), highest power first (|z| < 0.3: 0.6^n, 100 terms)
_ROOT_SERIES = tuple(-((-1) ** n) * hurwitz_zeta(n + 1, NEGATIVE_ROOT) for n in range(100, 0, -1)) + (NEGATIVE_ROOT_VALUE,)


def _harmonic(n: int) -> float:
    """psi(n) for a positive integer n, summed as SciPy sums it."""
    y = 0.0
    for i in range(1, n):
        y += 1.0 / i
    return y - EULER


def _one_to_two(x: Real) -> Real:
    """Boost's psi on [1, 2]: (x - root) (Y + P(x - 1) / Q(x - 1)), the root in three parts."""
    g = x - _ROOTS[0] - _ROOTS[1] - _ROOTS[2]
    r = horner(_P, x - 1.0) / horner(_Q, x - 1.0)
    return g * _Y + g * r


def _recurred(x: Real, y: Real) -> Real:
    """y + psi(x) for x > 0 not an integer up to 10: below 1 once up, below 10 down into [1, 2] (Boost's
    approximation there), from 10 the asymptotic series."""
    up = x < 1.0
    y, x = where(up, y - 1.0 / x, y), where(up, x + 1.0, x)

    def down(state: list[Real]) -> tuple[list[Real], Truth]:
        x, y = state
        lower = where(x > 2.0, x - 1.0, x)  # (x in [1, 2] already: no step)
        return [lower, where(x > 2.0, y + 1.0 / lower, y)], lower <= 2.0

    def near() -> Real:
        x_reduced, y_reduced = iterate([x, y], down, 9)
        return y_reduced + _one_to_two(x_reduced)

    def far() -> Real:
        z = 1.0 / (x * x)
        series = where(x < 1.0e17, z * horner(_ASYMPTOTIC, z), 0.0)
        return y + (log(x) - 0.5 / x - series)

    return choose(x < 10.0, near, far)


def psi(x: Real) -> Real:
    """scipy.special.psi of a float64 x (module docstring)."""
    nan, inf = float("nan"), float("inf")
    edge = isnan(x) | isinf(x) | (x == 0.0) | ((x < 0.0) & (x == floor(x)))
    value = where(isnan(x), x, where(x == inf, inf, where(x == 0.0, copysign(inf, -x), nan)))

    def regular() -> Real:
        reflected = x < 0.0
        y = where(reflected, -pymath.pi / tan(pymath.pi * (x - trunc(x))), 0.0)
        z = where(reflected, 1.0 - x, x)
        harmonic = Real(_harmonic(10))
        for n in range(9, 0, -1):
            harmonic = where(z == float(n), _harmonic(n), harmonic)
        return choose((z <= 10.0) & (z == floor(z)), lambda: y + harmonic, lambda: _recurred(z, y))

    near_root = fabs(x - NEGATIVE_ROOT) < 0.3
    return choose(edge, lambda: value, lambda: choose(near_root, lambda: horner(_ROOT_SERIES, x - NEGATIVE_ROOT), regular))
