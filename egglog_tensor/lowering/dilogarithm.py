"""scipy.special.spence, the dilogarithm int_1^x log(t) / (1 - t) dt of a real x, by SciPy's algorithm (Cephes' spence,
as SciPy 1.17's), in float64 (float32: the float64 value rounded once, as SciPy's loops): x beyond 2 taken as 1 / x;
then w = 1 / x - 1 above 1.5, -x below 0.5, else x - 1, and -w A(w) / B(w) with A and B rational, completed by the
reflection pi^2 / 6 - log(x) log(1 - x) - y (below 0.5) and the inversion -log(x)^2 / 2 - y (where x was inverted or
above 1.5); 0 at 1, pi^2 / 6 at 0, NaN below 0 and at inf (Cephes' log(0) log(1)).
"""

from __future__ import annotations

import math as pymath

from .scalarcode import Real, horner, log, where

_ZETA2 = pymath.pi * pymath.pi / 6.0  # (Cephes' M_PI * M_PI / 6.0)
_A = (4.65128586073990045278e-5, 7.31589045238094711071e-3, 1.33847639578309018650e-1, 8.79691311754530315341e-1,
      2.71149851196553469920e0, 4.25697156008121755724e0, 3.29771340985225106936e0, 1.00000000000000000126e0)
_B = (6.90990488912553276999e-4, 2.54043763932544379113e-2, 2.82974860602568089943e-1, 1.41172597751831069617e0,
      3.63800533345137075418e0, 5.03278880143316990390e0, 3.54771340985225096217e0, 9.99999999999999998740e-1)


def spence(x: Real) -> Real:
    """scipy.special.spence: the dilogarithm of a real x >= 0 (module docstring)."""
    inverted = x > 2.0
    x1 = where(inverted, 1.0 / x, x)
    high, low = x1 > 1.5, x1 < 0.5
    w = where(high, 1.0 / x1 - 1.0, where(low, -x1, x1 - 1.0))
    y = -w * horner(_A, w) / horner(_B, w)
    y = where(low, _ZETA2 - log(x1) * log(1.0 - x1) - y, y)
    z = log(x1)
    y = where(inverted | high, -0.5 * z * z - y, y)
    return where(x < 0.0, float("nan"), where(x == 1.0, 0.0, where(x == 0.0, _ZETA2, y)))
