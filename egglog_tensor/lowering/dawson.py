"""scipy.special's dawsn (Dawson's integral e^-x^2 int_0^x e^t^2 dt) and erfi (-i erf(ix)) of real x by SciPy's
algorithm (Steven G. Johnson's Faddeeva package as SciPy 1.17's xsf carries it), in float64 (float32: the float64 value
rounded once, as SciPy's loops): both from w_im(x) = Im w(x) = 2 / sqrt(pi) D(x), an odd function: for |x| <= 45 one
of 99 Chebyshev polynomials in y = 1 / (1 + |x|) (faddeeva_table.py), its Taylor polynomial where |x| < 1/99; beyond,
5 terms of its continued fraction, 1 / (sqrt(pi) x) beyond 5e7. dawsn = sqrt(pi)/2 w_im(x); erfi = e^(x^2) w_im(x),
+-inf where x^2 > 720 (NaN at NaN).
"""

from __future__ import annotations

from .faddeeva_table import ROWS
from .scalarcode import Real, copysign, exp, fabs, floor, fold, table, where

INVERSE_SQRT_PI = 0.56418958354775628694807945156
HALF_SQRT_PI = 0.8862269254527580136490837416705725913990
_TAYLOR = (0.085971746064420005629, 0.30090111122547001970, 0.75225277806367504925, 1.1283791670955125739)  # (2/sqrt pi) x^(2k+1) terms


def _w_im_near(a: Real) -> Real:
    """w_im(a) for 0 <= a <= 45: the Chebyshev polynomial of y = 1 / (1 + a)'s hundredth, the Taylor one in the last two."""
    y100 = 100.0 / (1.0 + a)
    k = floor(y100)
    t = 2.0 * y100 - (2.0 * k + 1.0)
    chebyshev = fold(table(ROWS), where(k < 99.0, k, 0.0), 0.0, lambda total, c: total * t + c)
    a2 = a * a
    taylor = a * (_TAYLOR[3] - a2 * (_TAYLOR[2] - a2 * (_TAYLOR[1] - a2 * _TAYLOR[0])))
    return where(k < 99.0, chebyshev, taylor)


def _w_im(x: Real) -> Real:
    """Im w(x) of a real x (the module docstring)."""
    xx = x * x
    far = INVERSE_SQRT_PI * (xx * (xx - 4.5) + 2.0) / (x * (xx * (xx - 5.0) + 3.75))
    far = where(fabs(x) > 5e7, INVERSE_SQRT_PI / x, far)
    a = where(x < 0.0, -x, x)
    near = copysign(_w_im_near(where(a > 45.0, 0.0, a)), x)
    return where(a > 45.0, far, near)


def dawsn(x: Real) -> Real:
    """scipy.special.dawsn (module docstring)."""
    return HALF_SQRT_PI * _w_im(x)


def erfi(x: Real) -> Real:
    """scipy.special.erfi (module docstring)."""
    xx = x * x
    return where(xx > 720.0, copysign(float("inf"), x), exp(xx) * _w_im(x))
