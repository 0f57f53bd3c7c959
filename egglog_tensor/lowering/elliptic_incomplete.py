"""scipy.special's incomplete elliptic integrals ellipkinc F(phi, m) and ellipeinc E(phi, m) by SciPy's algorithms
(Cephes' ellik and ellie, as SciPy 1.17's), in float64 (float32: the float64 value rounded once, as SciPy's loops):

- phi reduced by the nearest even multiple n of pi/2 (F(phi) = n K + F(phi - n pi/2), E likewise with E(m)), its sign
  taken out; NaN at NaN and for m > 1; F: 0 where m is infinite, phi where phi is; E: phi where phi is infinite,
  -m where m is; phi at m = 0; at m = 1 F is asinh(tan phi) (inf from |phi| = pi/2 on) and E sin(phi).
- m < 0: Carlson's duplication for R_F (and R_D for E) of (cot^2 phi, csc^2 phi - m, csc^2 phi) (scaled where
  csc^2 phi overflows), a power series in phi where m phi^2 is small and an asymptotic one where it is large.
- 0 < m < 1: the descending Landen transformation (the AGM of 1 and sqrt(1 - m), the amplitude's angle carried with
  its multiple of pi), after the amplitude is transformed to atan(1 / (sqrt(1 - m) tan phi)) where tan phi > 10; E
  also a power series in phi below 0.135.
"""

from __future__ import annotations

import math as pymath

from mlir.dialects import arith, math

from .elliptic import ellipe, ellipk, ellipkm1
from .scalarcode import (Real, Truth, atan, choose, cos, fabs, floor, fmod, isinf, isnan, iterate, log, sin, sqrt, tan, trunc,
                         where)

MACHEP = 2.0**-53
HALF_PI = pymath.pi / 2


def _landen(phi: Real, t: Real, b: Real, m: Real) -> tuple[Real, Real]:
    """Cephes' loop for 0 < m < 1 from amplitude phi (t = tan phi) and b = sqrt(1 - m): (atan(t) + k pi) / (2^n a_n),
    which is F(phi, m), and sum c_j sin(phi_j), E's term."""

    def step(state: list[Real]) -> tuple[list[Real], Truth]:
        lphi, t, mod, c, a, b, d, e = state
        going = fabs(c / a) > MACHEP
        ratio = b / a
        angle = lphi + atan(t * ratio) + mod * pymath.pi
        denominator = 1.0 - ratio * t * t
        steady = fabs(denominator) > 10 * MACHEP
        tangent = tan(angle)
        t2 = where(steady, t * (1.0 + ratio) / denominator, tangent)
        mod2 = where(steady, trunc((angle + HALF_PI) / pymath.pi), floor((angle - atan(tangent)) / pymath.pi))
        c2, b2, a2 = (a - b) / 2.0, sqrt(a * b), (a + b) / 2.0
        following = [angle, t2, mod2, c2, a2, b2, d + d, e + c2 * sin(angle)]
        return [where(going, new, old) for new, old in zip(following, state, strict=True)], ~going | ~(fabs(c2 / a2) > MACHEP)

    _, t, mod, _, a, _, d, e = iterate([phi, t, Real(0.0), sqrt(m), Real(1.0), b, Real(1.0), Real(0.0)], step, 100)
    return (atan(t) + mod * pymath.pi) / (d * a), e


def _duplication(x: Real, y: Real, z: Real) -> tuple[Real, Real, Real, Real, Real, Real]:
    """Carlson's duplication of (x, y, z) as Cephes' ellik_neg_m/ellie_neg_m run it, until 400 max|A0 - x_i| / 4^n
    falls below both means (at most 101 steps): A_n of R_F, A_n of R_D, 4^n, sum 4^-j / (sqrt z_j (z_j + lambda_j))
    (R_D's series), and the starting means A0 of R_F and R_D."""
    a0f, a0d = (x + y + z) / 3.0, (x + y + 3.0 * z) / 5.0
    q0 = 400.0 * Real(arith.maxnumf(fabs(a0f - x).value, arith.maxnumf(fabs(a0f - y).value, fabs(a0f - z).value)))  # (C fmax)

    def step(state: list[Real]) -> tuple[list[Real], Truth]:
        x1, y1, z1, af, ad, q, power, series, weight = state
        going = (q > fabs(af)) & (q > fabs(ad))
        sx, sy, sz = sqrt(x1), sqrt(y1), sqrt(z1)
        lam = sx * sy + sx * sz + sy * sz
        x2, y2, z2 = (x1 + lam) / 4.0, (y1 + lam) / 4.0, (z1 + lam) / 4.0
        following = [x2, y2, z2, (x2 + y2 + z2) / 3.0, (ad + lam) / 4.0, q / 4.0, power * 4.0, series + weight / (sz * (z1 + lam)),
                     weight / 4.0]
        new = [where(going, f, s) for f, s in zip(following, state, strict=True)]
        return new, ~going | ~((new[5] > fabs(new[3])) & (new[5] > fabs(new[4])))

    state = iterate([x, y, z, a0f, a0d, q0, Real(1.0), Real(0.0), Real(1.0)], step, 101)
    return state[3], state[4], state[6], state[7], a0f, a0d


def _scaled_arguments(phi: Real, m: Real, csc_limit: float, m_limit: float) -> tuple[Real, Real, Real, Truth]:
    """Cephes' (cot^2 phi, csc^2 phi - m, csc^2 phi) where phi > 1e-153 and m > m_limit, else (1, 1 - m phi^2, 1) (the
    integral scaled by phi), and which."""
    s, tangent = sin(phi), tan(phi)
    plain = (phi > csc_limit) & (m > m_limit)
    csc2 = where(plain, 1.0 / (s * s), 1.0)
    return where(plain, 1.0 / (tangent * tangent), 1.0), where(plain, csc2 - m, 1.0 - m * phi * phi), csc2, plain


def _ellipkinc_negative_m(phi: Real, m: Real) -> Real:
    """F(phi, m) for m < 0, 0 <= phi <= pi/2 (Cephes' ellik_neg_m)."""
    mpp = (m * phi) * phi
    x, y, z, plain = _scaled_arguments(phi, m, 1e-153, -1e305)
    scale = where(plain, 1.0, phi)
    af, _, power, _, a0f, _ = _duplication(x, y, z)
    big_x, big_y = (a0f - x) / af / power, (a0f - y) / af / power
    big_z = -(big_x + big_y)
    e2, e3 = big_x * big_y - big_z * big_z, big_x * big_y * big_z
    value = scale * (1.0 - e2 / 10.0 + e3 / 14.0 + e2 * e2 / 24.0 - 3.0 * e2 * e3 / 44.0) / sqrt(af)
    value = where((x == y) & (x == z), scale / sqrt(x), value)
    sm, sp, cp = sqrt(-m), sin(phi), cos(phi)
    a = log(4.0 * sp * sm / (1.0 + cp))
    asymptotic = (a + -(1.0 + cp / sp / sp - a) / 4.0 / m) / sm
    series = phi + (-mpp * phi * phi / 30.0 + 3.0 * mpp * mpp / 40.0 + mpp / 6.0) * phi
    return where((-mpp < 1e-6) & (phi < -m), series, where(-mpp > 4e7, asymptotic, value))


def _ellipeinc_negative_m(phi: Real, m: Real) -> Real:
    """E(phi, m) for m < 0, 0 <= phi <= pi/2 (Cephes' ellie_neg_m): R_F - m R_D / 3 of the same arguments."""
    mpp = (m * phi) * phi
    x, y, z, plain = _scaled_arguments(phi, m, 1e-153, -1e200)
    scale_f, scale_d = where(plain, 1.0, phi), where(plain, m / 3.0, mpp * phi / 3.0)
    af, ad, power, series_d, a0f, a0d = _duplication(x, y, z)
    xf, yf = (a0f - x) / af / power, (a0f - y) / af / power
    zf = -(xf + yf)
    e2f, e3f = xf * yf - zf * zf, xf * yf * zf
    value = scale_f * (1.0 - e2f / 10.0 + e3f / 14.0 + e2f * e2f / 24.0 - 3.0 * e2f * e3f / 44.0) / sqrt(af)
    xd, yd = (a0d - x) / ad / power, (a0d - y) / ad / power
    zd = -(xd + yd) / 3.0
    e2d, e3d = xd * yd - 6.0 * zd * zd, (3.0 * xd * yd - 8.0 * zd * zd) * zd
    e4d, e5d = 3.0 * (xd * yd - zd * zd) * zd * zd, xd * yd * zd * zd * zd
    value = value - scale_d * (1.0 - 3.0 * e2d / 14.0 + e3d / 6.0 + 9.0 * e2d * e2d / 88.0 - 3.0 * e4d / 22.0
                               - 9.0 * e2d * e3d / 52.0 + 3.0 * e5d / 26.0) / power / ad / sqrt(ad)
    value = value - 3.0 * scale_d * series_d
    value = where((x == y) & (x == z), (scale_f + scale_d / x) / sqrt(x), value)
    sm, sp, cp = sqrt(-m), sin(phi), cos(phi)
    b1 = log(4.0 * sp * sm / (1.0 + cp))  # (1 - cos phi as 2 sin^2(phi / 2): Cephes' -cosm1(phi), without cancellation)
    half = sin(0.5 * phi)
    asymptotic = (2.0 * half * half + -(0.5 + b1) / 2.0 / m + (0.75 + cp / sp / sp - b1) / 16.0 / m / m) * sm
    series = phi + (mpp * phi * phi / 30.0 - mpp * mpp / 40.0 - mpp / 6.0) * phi
    return where((-mpp < 1e-6) & (phi < -m), series, where(-mpp > 1e6, asymptotic, value))


def _reduced(phi: Real, shift_at_zero: bool) -> tuple[Real, Real, Truth]:
    """phi's nearest even multiple n of pi/2 (floor(phi / (pi/2)), rounded up where odd), |phi - n pi/2| and its sign
    (as Cephes: ellik leaves phi as it is, -0 included, where n is 0; ellie subtracts 0, making -0 +0)."""
    n = floor(phi / HALF_PI)
    n = where(fmod(fabs(n), 2.0) == 1.0, n + 1.0, n)
    rest = phi - n * HALF_PI
    if not shift_at_zero:
        rest = where(n != 0.0, rest, phi)
    return n, where(rest < 0.0, -rest, rest), rest < 0.0


def _transformed(phi: Real, m: Real) -> tuple[Truth, Real, Real, Real]:
    """Cephes' amplitude transformation for 0 < m < 1: whether tan phi > 10 and 1 / (sqrt(1 - m) tan phi) < 10, the
    amplitude the Landen loop starts from (atan of that where so), its tangent, and sqrt(1 - m)."""
    b, t = sqrt(1.0 - m), tan(phi)
    e = 1.0 / (b * t)
    transform = (fabs(t) > 10.0) & (fabs(e) < 10.0)
    start = where(transform, atan(e), phi)
    return transform, start, where(transform, tan(start), t), b


def ellipkinc(phi: Real, m: Real) -> Real:
    """scipy.special.ellipkinc: F(phi, m) (module docstring)."""
    n, lphi, negative = _reduced(phi, False)

    def core() -> Real:
        transform, start, t, b = _transformed(lphi, m)
        value = _landen(start, t, b, m)[0]
        return where(transform, ellipkm1(1.0 - m) - value, value)

    value = choose(m < 0.0, lambda: _ellipkinc_negative_m(lphi, m), core)
    value = where(negative, -value, value) + n * where(n != 0.0, ellipkm1(1.0 - m), 0.0)
    at_one = where(fabs(phi) >= HALF_PI, float("inf"), Real(math.asinh(tan(phi).value)))
    value = where(m == 1.0, at_one, where(m == 0.0, phi, value))
    infinite = where(isinf(m) & ~isinf(phi), 0.0, where(isinf(phi) & ~isinf(m), phi, float("nan")))
    return where(isnan(phi) | isnan(m) | (m > 1.0), float("nan"), where(isinf(phi) | isinf(m), infinite, value))


def ellipeinc(phi: Real, m: Real) -> Real:
    """scipy.special.ellipeinc: E(phi, m) (module docstring)."""
    n, lphi, negative = _reduced(phi, True)
    complete = ellipe(m)

    def landen(start: Real, t: Real, b: Real) -> Real:
        value, e = _landen(start, t, b, m)
        return complete / ellipk(m) * value + e

    def core() -> Real:
        transform, start, t, b = _transformed(lphi, m)
        inner = choose(start < 0.135, lambda: _ellipeinc_series(start, m), lambda: landen(start, t, b))
        return where(transform, complete + m * sin(lphi) * sin(start) - inner, inner)

    value = choose(m < 0.0, lambda: _ellipeinc_negative_m(lphi, m), lambda: choose(lphi < 0.135, lambda: _ellipeinc_series(lphi, m), core))
    value = where(m == 1.0, sin(lphi), value)
    value = where(negative, -value, value) + n * complete
    value = where(m == 0.0, phi, value)
    return where(isnan(phi) | isnan(m) | (m > 1.0), float("nan"), where(isinf(phi), phi, where(isinf(m), -m, value)))


def _ellipeinc_series(phi: Real, m: Real) -> Real:
    """E(phi, m) for 0 < m < 1 and phi < 0.135: Cephes' power series in phi to phi^11."""
    m11 = (((((-7.0 / 2816.0) * m + (5.0 / 1056.0)) * m - (7.0 / 2640.0)) * m + (17.0 / 41580.0)) * m - (1.0 / 155925.0)) * m
    m9 = ((((-5.0 / 1152.0) * m + (1.0 / 144.0)) * m - (1.0 / 360.0)) * m + (1.0 / 5670.0)) * m
    m7 = ((-m / 112.0 + (1.0 / 84.0)) * m - (1.0 / 315.0)) * m
    m5 = (-m / 40.0 + (1.0 / 30)) * m
    m3 = -m / 6.0
    p2 = phi * phi
    return ((((m11 * p2 + m9) * p2 + m7) * p2 + m5) * p2 + m3) * p2 * phi + phi
