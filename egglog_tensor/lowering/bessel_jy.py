"""scipy.special's Bessel functions of the first and second kinds of orders 0 and 1 by SciPy's algorithms (Cephes' j0
j1 y0 y1, as SciPy 1.17's), in float64 (float32: the float64 value rounded once, as SciPy's loops):

- |x| <= 5: rational approximations in z = x^2 - J0 as (z - r1)(z - r2) R(z) with r1, r2 its first two zeros squared
  (1 - z / 4 below 1e-5), J1 as x (z - r1)(z - r2) R(z); Y0 as R(z) + (2 / pi) log(x) J0(x), Y1 as x R(z) +
  (2 / pi) (J1(x) log(x) - 1 / x).
- beyond: Hankel's asymptotic form sqrt(2 / (pi x)) (P cos(x - phase) - (5 / x) Q sin(x - phase)) for J (sin and cos
  exchanged for Y), P and Q rational functions of 25 / x^2, the phase pi / 4 (order 0) or 3 pi / 4 (order 1)
  subtracted from x in float64 as Cephes does (so for large x the result is that of x - phase rounded: SciPy's own).
- J0 even and J1 odd (J1(-0) = -0 as Cephes'); Y0 and Y1 -inf at 0 and NaN below; NaN at +-inf (cos(inf), as SciPy's).
"""

from __future__ import annotations

import math as pymath
from collections.abc import Sequence

from .scalarcode import Real, cos, fabs, horner, log, sin, sqrt, where

_SQRT2OPI = 7.9788456080286535587989e-1  # sqrt(2 / pi)
_TWO_OVER_PI = 2.0 / pymath.pi
_PHASE = (pymath.pi / 4, 3 * pymath.pi / 4)  # (Cephes' M_PI_4 and THPIO4)
_NEAR = 5.0  # the rational approximations' range

# (each highest power first, as Cephes' polevl takes them; a denominator's leading 1 written out where p1evl implies it)
_J0_RP = (-4.79443220978201773821e9, 1.95617491946556577543e12, -2.49248344360967716204e14, 9.70862251047306323952e15)
_J0_RQ = (1.0, 4.99563147152651017219e2, 1.73785401676374683123e5, 4.84409658339962045305e7, 1.11855537045356834862e10,
          2.11277520115489217587e12, 3.10518229857422583814e14, 3.18121955943204943306e16, 1.71086294081043136091e18)
_J0_ZEROS = (5.78318596294678452118e0, 3.04712623436620863991e1)  # J0's first two zeros, squared
_Y0_P = (1.55924367855235737965e4, -1.46639295903971606143e7, 5.43526477051876500413e9, -9.82136065717911466409e11,
         8.75906394395366999549e13, -3.46628303384729719441e15, 4.42733268572569800351e16, -1.84950800436986690637e16)
_Y0_Q = (1.0, 1.04128353664259848412e3, 6.26107330137134956842e5, 2.68919633393814121987e8, 8.64002487103935000337e10,
         2.02979612750105546709e13, 3.17157752842975028269e15, 2.50596256172653059228e17)
_J0_PP = (7.96936729297347051624e-4, 8.28352392107440799803e-2, 1.23953371646414299388e0, 5.44725003058768775090e0,
          8.74716500199817011941e0, 5.30324038235394892183e0, 9.99999999999999997821e-1)
_J0_PQ = (9.24408810558863637013e-4, 8.56288474354474431428e-2, 1.25352743901058953537e0, 5.47097740330417105182e0,
          8.76190883237069594232e0, 5.30605288235394617618e0, 1.00000000000000000218e0)
_J0_QP = (-1.13663838898469149931e-2, -1.28252718670509318512e0, -1.95539544257735972385e1, -9.32060152123768231369e1,
          -1.77681167980488050595e2, -1.47077505154951170175e2, -5.14105326766599330220e1, -6.05014350600728481186e0)
_J0_QQ = (1.0, 6.43178256118178023184e1, 8.56430025976980587198e2, 3.88240183605401609683e3, 7.24046774195652478189e3,
          5.93072701187316984827e3, 2.06209331660327847417e3, 2.42005740240291393179e2)

_J1_RP = (-8.99971225705559398224e8, 4.52228297998194034323e11, -7.27494245221818276015e13, 3.68295732863852883286e15)
_J1_RQ = (1.0, 6.20836478118054335476e2, 2.56987256757748830383e5, 8.35146791431949253037e7, 2.21511595479792499675e10,
          4.74914122079991414898e12, 7.84369607876235854894e14, 8.95222336184627338078e16, 5.32278620332680085395e18)
_J1_ZEROS = (1.46819706421238932572e1, 4.92184563216946036703e1)  # J1's first two nonzero zeros, squared
_Y1_P = (1.26320474790178026440e9, -6.47355876379160291031e11, 1.14509511541823727583e14, -8.12770255501325109621e15,
         2.02439475713594898196e17, -7.78877196265950026825e17)
_Y1_Q = (1.0, 5.94301592346128195359e2, 2.35564092943068577943e5, 7.34811944459721705660e7, 1.87601316108706159478e10,
         3.88231277496238566008e12, 6.20557727146953693363e14, 6.87141087355300489866e16, 3.97270608116560655612e18)
_J1_PP = (7.62125616208173112003e-4, 7.31397056940917570436e-2, 1.12719608129684925192e0, 5.11207951146807644818e0,
          8.42404590141772420927e0, 5.21451598682361504063e0, 1.00000000000000000254e0)
_J1_PQ = (5.71323128072548699714e-4, 6.88455908754495404082e-2, 1.10514232634061696926e0, 5.07386386128601488557e0,
          8.39985554327604159757e0, 5.20982848682361821619e0, 9.99999999999999997461e-1)
_J1_QP = (5.10862594750176621635e-2, 4.98213872951233449420e0, 7.58238284132545283818e1, 3.66779609360150777800e2,
          7.10856304998926107277e2, 5.97489612400613639965e2, 2.11688757100572135698e2, 2.52070205858023719784e1)
_J1_QQ = (1.0, 7.42373277035675149943e1, 1.05644886038262816351e3, 4.98641058337653607651e3, 9.56231892404756170795e3,
          7.99704160447350683650e3, 2.82619278517639096600e3, 3.36093607810698293419e2)

_HANKEL = ((_J0_PP, _J0_PQ, _J0_QP, _J0_QQ), (_J1_PP, _J1_PQ, _J1_QP, _J1_QQ))


def _hankel(x: Real, order: int, second_kind: bool) -> Real:
    """J_order(x) (Y_order(x) for the `second_kind`) for x > 5 by Hankel's asymptotic form."""
    pp, pq, qp, qq = _HANKEL[order]
    w = 5.0 / x
    z = w * w
    p, q = _rational(pp, pq, z), _rational(qp, qq, z)
    shifted = x - _PHASE[order]
    c, s = cos(shifted), sin(shifted)
    value = p * s + w * q * c if second_kind else p * c - w * q * s
    return value * _SQRT2OPI / sqrt(x)


def _rational(numerator: Sequence[float], denominator: Sequence[float], z: Real) -> Real:
    """P(z) / Q(z), their coefficients highest power first."""
    return horner(numerator, z) / horner(denominator, z)


def _j0_near(x: Real) -> Real:
    """J0(x) for |x| <= 5."""
    z = x * x
    r1, r2 = _J0_ZEROS
    return where(fabs(x) < 1e-5, 1.0 - z / 4.0, (z - r1) * (z - r2) * _rational(_J0_RP, _J0_RQ, z))


def _j1_near(x: Real) -> Real:
    """J1(x) for |x| <= 5 (odd in x, with the sign of 0)."""
    z = x * x
    r1, r2 = _J1_ZEROS
    return _rational(_J1_RP, _J1_RQ, z) * x * (z - r1) * (z - r2)


def j0(x: Real) -> Real:
    """scipy.special.j0: J0(x)."""
    z = fabs(x)
    return where(z <= _NEAR, _j0_near(z), _hankel(z, 0, False))


def j1(x: Real) -> Real:
    """scipy.special.j1: J1(x)."""
    far = _hankel(fabs(x), 1, False)
    return where(fabs(x) <= _NEAR, _j1_near(x), where(x < 0.0, -far, far))


def _second_kind(x: Real, near: Real, order: int) -> Real:
    """Y_order(x): `near` on (0, 5], Hankel's form beyond; -inf at 0, NaN below (and at NaN)."""
    return where(x == 0.0, float("-inf"), where(x < 0.0, float("nan"), where(x <= _NEAR, near, _hankel(x, order, True))))


def y0(x: Real) -> Real:
    """scipy.special.y0: Y0(x)."""
    z = x * x
    return _second_kind(x, _rational(_Y0_P, _Y0_Q, z) + _TWO_OVER_PI * log(x) * _j0_near(x), 0)


def y1(x: Real) -> Real:
    """scipy.special.y1: Y1(x)."""
    z = x * x
    return _second_kind(x, x * _rational(_Y1_P, _Y1_Q, z) + _TWO_OVER_PI * (_j1_near(x) * log(x) - 1.0 / x), 1)
