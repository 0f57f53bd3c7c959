"""scipy.special's elementary functions made of NumPy's ufuncs and the special-function ops while tracing, by SciPy's
own algorithms so that their edges match (tracing/special.py dispatches to FUNCTIONS): the trigonometric functions of
degrees (Cephes' sindg cosdg tandg cotdg: the angle reduced exactly modulo an octant or 180 degrees first, so that
sindg(180) is 0 and tandg(45) is 1), radian, cosm1 (Cephes' polynomial within pi/4 of 0), powm1 (Boost's, with SciPy's
special cases), inv_boxcox and inv_boxcox1p (SciPy's branches), i0 (Cephes' i0: e^|x| i0e(x)) and ndtri_exp
(xsf's: Cephes' ndtri of e^y, and its tail where e^y underflows). All in float64
(SciPy's float32 loops are rounded once from it, as tracing/special._call does) but powm1, in the loop's dtype."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .core import Tracer
from .polynomials import horner
from .special import _NDTRI_P1, _NDTRI_P2, _NDTRI_Q1, _NDTRI_Q2, _ndtri, call_op

PI180 = 1.74532925199432957692e-2  # pi / 180 (Cephes' PI180)
LOSSTH = 1.0e14  # Cephes' sindg/tandg: beyond this many degrees the reduction has no digits left (0 returned)
ARC_SECOND = 4.848136811095359935899141023579479759563533023727e-6  # radians in one second of arc
# Cephes' sindg/cosdg polynomials in z^2 of the reduced angle z (highest power first)
_SIN = (1.58962301572218447952e-10, -2.50507477628503540135e-8, 2.75573136213856773549e-6, -1.98412698295895384658e-4,
        8.33333333332211858862e-3, -1.66666666666666307295e-1)
_COS = (1.13678171382044553091e-11, -2.08758833757683644217e-9, 2.75573155429816611547e-7, -2.48015872936186303776e-5,
        1.38888888888806666760e-3, -4.16666666666666348141e-2, 4.99999999999999999798e-1)
# Cephes' cosm1 polynomial: cos(x) - 1 = -x^2 / 2 + x^4 P(x^2) within pi/4
_COSM1 = (4.7377507964246204691685e-14, -1.1470284843425359765671e-11, 2.0876754287081521758361e-9,
          -2.7557319214999787979814e-7, 2.4801587301570552304991e-5, -1.3888888888888872993737e-3,
          4.1666666666666666609054e-2)


def _octant(a: Tracer) -> tuple[Any, Any, Any, Any]:
    """Cephes' reduction of a >= 0 degrees: the octant j in 0..3 (zeros mapped to the origin), whether the half turn
    was crossed (j was 4..7), and the remaining angle z in radians and z^2."""
    y = np.floor(a / 45.0)
    z = y - 16.0 * np.floor(y / 16.0)
    odd = np.fmod(z, 2.0)
    j, y = np.fmod(z + odd, 8.0), y + odd
    turned = j > 3
    z = (a - y * 45.0) * PI180
    return np.where(turned, j - 4.0, j), turned, z, z * z


def _sine(z: Any, zz: Any) -> Any:
    return z + z * (zz * horner(zz, _SIN))


def _cosine(zz: Any) -> Any:
    return 1.0 - zz * horner(zz, _COS)


def _sindg(x: Tracer) -> Any:
    """sin of x degrees, Cephes': the sign of x < 0 applied to sin |x| (so sindg(-0) is +0, sindg(180) -0 and
    sindg(-180) +0); 0 beyond 1e14 degrees and at +-inf."""
    j, turned, z, zz = _octant(np.abs(x))
    value = np.where((j == 1) | (j == 2), _cosine(zz), _sine(z, zz))
    negative = (x < 0) != turned
    return np.where(np.abs(x) > LOSSTH, 0.0, np.where(negative, -value, value))


def _cosdg(x: Tracer) -> Any:
    """cos of x degrees (0 beyond 1e14 degrees and at +-inf, as Cephes')."""
    j, turned, z, zz = _octant(np.abs(x))
    value = np.where((j == 1) | (j == 2), _sine(z, zz), _cosine(zz))
    negative = turned != (j > 1)
    return np.where(np.abs(x) > LOSSTH, 0.0, np.where(negative, -value, value))


def _tancot(cotangent: bool) -> Callable[[Tracer], Any]:
    """Cephes' tancot: tan (cot) of x degrees, x reduced modulo 180 and then to [0, 90]; exactly +0 at the zeros, +-1
    at 45 and +inf at the poles, whatever the sign of x; 0 beyond 1e14 degrees and at +-inf."""

    def tancot(x: Tracer) -> Any:
        a = np.abs(x)
        a = a - 180.0 * np.floor(a / 180.0)
        flip = a > 90.0
        a = np.where(flip, a - 90.0, 90.0 - a) if cotangent else np.where(flip, 180.0 - a, a)
        sign = np.where((x < 0) != flip, -1.0, 1.0)
        value = np.where(a == 0.0, 0.0, np.where(a == 45.0, sign, np.where(a == 90.0, np.inf, sign * np.tan(a * PI180))))
        return np.where(np.abs(x) > LOSSTH, 0.0, value)

    return tancot


def _radian(d: Tracer, m: Tracer, s: Tracer) -> Any:
    """Degrees, minutes and seconds of arc in radians, Cephes' ((d 60 + m) 60 + s) / 64800 * pi / 180."""
    return ((d * 60.0 + m) * 60.0 + s) * ARC_SECOND


def _cosm1(x: Tracer) -> Any:
    """cos(x) - 1: Cephes' -x^2 / 2 + x^4 P(x^2) within pi/4 of 0 (no cancellation), cos(x) - 1 beyond."""
    xx = x * x
    return np.where(np.abs(x) > np.pi / 4, np.cos(x) - 1.0, -0.5 * xx + xx * xx * horner(xx, _COSM1))


def _powm1(x: Tracer, y: Tracer) -> Any:
    """x^y - 1 as SciPy's (Boost's powm1 and SciPy's wrapper of it): 0 where y is 0 or x is 1 (NaN included), at
    x = 0 -1 for y > 0 and inf for y < 0, NaN for x < 0 and y not an integer (infinities included); x < 0 with y even
    is (-x)^y - 1; for x > 0 where |y (x - 1)| < 1/2 or |y| < 0.2, expm1(y log x) if that logarithm is below 1/2;
    elsewhere pow(x, y) - 1, whose overflow to +-inf for y < 0 SciPy's wrapper returns as 0 (pow's limit). In the
    loop's dtype, as Boost's float32 powm1 (where its overflow is float32's)."""
    even = (x < 0) & (np.trunc(y / 2) == y / 2)
    base = np.where(even, -x, x)
    small = (base > 0) & ((np.abs(y * (base - 1.0)) < 0.5) | (np.abs(y) < 0.2))
    power = y * np.log(np.where(base > 0, base, 1.0))
    value = np.where(small & (power < 0.5), np.expm1(power), np.power(base, y) - 1.0)
    value = np.where(np.isinf(value) & (y < 0), 0.0, value)
    value = np.where((x < 0) & ((np.trunc(y) != y) | np.isinf(y)), np.nan, value)
    value = np.where(x == 0, np.where(y < 0, np.inf, np.where(y > 0, -1.0, value)), value)
    return np.where((y == 0) | (x == 1), 0.0, value)


def _inv_boxcox_power(x: Tracer, lmbda: Tracer) -> Any:
    """log of the power inv_boxcox takes, log1p(lmbda x) / lmbda, by SciPy's rewriting where lmbda x overflows
    (from log(sign(lmbda) (x + 1 / lmbda)) + log|lmbda|)."""
    product = lmbda * x
    far = (np.log(np.sign(lmbda) * (x + 1.0 / lmbda)) + np.log(np.abs(lmbda))) / lmbda
    return np.where(product < 1.79e308, np.log1p(product) / lmbda, far)


def _inv_boxcox(x: Tracer, lmbda: Tracer) -> Any:
    """The inverse of boxcox: exp(x) at lmbda = 0, else exp(log1p(lmbda x) / lmbda)."""
    return np.where(lmbda == 0, np.exp(x), np.exp(_inv_boxcox_power(x, lmbda)))


def _inv_boxcox1p(x: Tracer, lmbda: Tracer) -> Any:
    """The inverse of boxcox1p: expm1(x) at lmbda = 0, x where |lmbda x| < 1e-154, else expm1 of log1p(lmbda x) / lmbda."""
    value = np.where(np.abs(lmbda * x) < 1e-154, x, np.expm1(_inv_boxcox_power(x, lmbda)))
    return np.where(lmbda == 0, np.expm1(x), value)


def _i0(x: Tracer) -> Any:
    """Cephes' i0: e^|x| times its Chebyshev series, i0e's (inf where e^|x| overflows, NaN at +-inf: inf times 0)."""
    return np.exp(np.abs(x)) * call_op("i0e", x)


def _ndtri_exp(y: Tracer) -> Any:
    """ndtri(e^y) without forming e^y where it underflows or rounds to 1 (xsf's ndtri_exp): below -2 Cephes' tail
    z - log(z) / z - R(1/z) with z = sqrt(-2y) (sqrt 2 sqrt(-y) where -2y overflows), -ndtri(-expm1(y)) above
    log1p(-e^-2), ndtri(e^y) between; -inf at -inf, NaN above 0."""
    big = y < -0.5 * np.finfo(np.float64).max
    x = np.where(big, np.sqrt(2.0) * np.sqrt(-y), np.sqrt(-2.0 * np.where(y < -2.0, y, -2.0)))
    z = 1.0 / x
    tail = np.where(x < 8.0, z * horner(z, _NDTRI_P1) / horner(z, _NDTRI_Q1), z * horner(z, _NDTRI_P2) / horner(z, _NDTRI_Q2))
    small = tail - (x - np.log(x) / x)
    middle = np.where(y > -0.14541345786885906, -_ndtri(-np.expm1(y)), _ndtri(np.exp(y)))
    return np.where(y == -np.inf, -np.inf, np.where(y < -2.0, small, middle))


FUNCTIONS: dict[str, Callable[..., Any]] = {
    "sindg": _sindg, "cosdg": _cosdg, "tandg": _tancot(False), "cotdg": _tancot(True), "radian": _radian,
    "cosm1": _cosm1, "powm1": _powm1, "inv_boxcox": _inv_boxcox, "inv_boxcox1p": _inv_boxcox1p, "i0": _i0,
    "ndtri_exp": _ndtri_exp,
}
IN_LOOP_DTYPE = {_powm1}  # (SciPy's float32 loop of powm1 computes in float32)
