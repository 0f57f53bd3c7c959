"""The regularized incomplete beta integral scipy.special.betainc I_x(a, b) and betaincc 1 - I_x(a, b), in
float64 (float32: the float64 value rounded once, as SciPy's loop), by Cephes' incbet algorithm with Boost's
factor:

- where b x <= 1 and x <= 0.95, the power series in x (Cephes' pseries);
- else, with a, b and x, 1 - x swapped where x is beyond the mean a / (a + b) (then the complement is computed),
  the power series again where it converges fast, else one of the two continued fractions of A&S 26.5.8-9
  (Cephes' incbcf, and incbd where x (a + b - 2) >= a - 1 and, unlike Cephes, where a > b: there incbcf's value,
  large, loses up to 1e-11 where a >> b, incbd's 1e-15), each to a relative 3 MACHEP;
- for a complement (betaincc below the mean, betainc beyond it, swapped) where a < 0.3 and the power series is used
  (I near 1), 1 - I from the power series' own form, -expm1(log F) - F a S
  with F = x^a Gamma(a + b) / (Gamma(1 + a) Gamma(b)) (log Gamma(a + b) - log Gamma(b) to a relative MACHEP for
  tiny a: gammafunction.lgamma_shift), where 1 - I loses up to 1e-7 at a = 1e-10;
- the factor x^a (1 - x)^b / B(a, b) through the Lanczos approximation (as Boost's ibeta_power_terms: no
  cancellation between large lgammas), its exponent's terms linear in x - a / (a + b) cancelled exactly where
  x is near the mean, elsewhere pow() of each base (rounded once, where e^(a log x) carries |a log x| ULP).

SciPy 1.17 computes betainc with Boost's ibeta (tests/test_surface_incomplete_beta.py: within 1e-13 of it and of
mpmath for a, b up to 1000, 2e-13 for values below 1e-100; up to 1e5, within 3e-13 of it, where it is that far from
mpmath and this within 3e-14).
Edge values as SciPy: NaN for a NaN or negative argument, x outside [0, 1], a = b = 0 or a = b = inf; a step at
x = 0 where a = 0 or b = inf, at x = 1 where b = 0 or a = inf; 0 at x = 0 and 1 at x = 1."""

from __future__ import annotations

import math as pymath
from collections.abc import Callable

from .gammafunction import LANCZOS_G, lanczos_sum_expg_scaled, lgamma1p_near_zero, lgamma_shift
from .scalarcode import Real, Truth, choose, exp, expm1, fabs, isinf, isnan, iterate, log, log1p, log1pmx, sqrt, truth, where

MACHEP = 2.0**-53
MAXITER = 5000  # (a continued fraction near the mean of a, b ~ 1e5 takes a few hundred steps)
BIG, BIG_INVERSE = 4.503599627370496e15, 2.22044604925031308085e-16  # the continued fractions' rescaling
_H = LANCZOS_G - 0.5
LOG_RANGE = 708.0  # e^t is a normal float64 for |t| below it
SMALLEST_NORMAL = 2.2250738585072014e-308
SMALL_A = 0.3  # below it, 1 - I by the power series' own complement (I near 1); at most 1/2 (lgamma1p_near_zero)


def power_terms(a: Real, b: Real, x: Real, y: Real, divisor: Real | None = None) -> Real:
    """x^a y^b / B(a, b) (y = 1 - x) as L(a + b) / (L(a) L(b)) sqrt(ah bh / (ch e)) (x ch / ah)^a (y ch / bh)^b
    with ah = a + g - 1/2 (Lanczos), divided by `divisor` if given (Boost's ibeta_power_terms and its prefix).
    Near the mean (|l1|, |l2| < 1/2 with x ch / ah = 1 + l1, y ch / bh = 1 + l2) as e^(a log1p(l1) + b log1p(l2)),
    its terms linear in l1, l2 summed exactly (they cancel); elsewhere each power as Boost's: e^(a log1p(l)) where
    |l| < 0.1, else pow() of the base, which rounds once where e^(a log(base)) carries |a log(base)| ULP (1.4e-14 at
    betainc(5, 2, 1.9e-50)); where a power or the quotient would overflow or underflow, e^ of the logs' sum (the
    divisor's log subtracted: no underflow of a factor the divisor brings back)."""
    ah, bh, ch = a + _H, b + _H, a + b + _H
    scale = lanczos_sum_expg_scaled(a + b) / lanczos_sum_expg_scaled(a) / lanczos_sum_expg_scaled(b) * sqrt(ah / ch) * sqrt(bh / pymath.e)
    d = x * b - y * a
    l1, l2 = (d - y * _H) / ah, (-d - x * _H) / bh

    def near_mean() -> Real:  # a l1 + b l2 = h (d (a - b) / (ah bh) - a y / ah - b x / bh)
        linear = _H * (d * ((a - b) / ah) / bh - a * y / ah - b * x / bh)
        exponent = linear + a * log1pmx(l1) + b * log1pmx(l2)
        return scale * exp(exponent if divisor is None else exponent - log(divisor))

    def far() -> Real:  # (log1p(l) loses a small 1 + l: log of it, formed as a product, there)
        base1, base2 = x * ch / ah, y * ch / bh
        log1, log2 = where(fabs(l1) < 0.5, log1p(l1), log(base1)), where(fabs(l2) < 0.5, log1p(l2), log(base2))
        exponent = a * log1 + b * log2 - (0.0 if divisor is None else log(divisor))
        finite = (fabs(a * log1) < LOG_RANGE) & (fabs(b * log2) < LOG_RANGE) & (fabs(exponent) < LOG_RANGE)
        if divisor is not None:
            finite = finite & (divisor >= SMALLEST_NORMAL)

        def powers() -> Real:
            product = _power(a, b, x, l1, log1, base1) * _power(b, a, y, l2, log2, base2) * scale
            return product if divisor is None else product / divisor

        return choose(finite, powers, lambda: scale * exp(exponent))

    return choose((fabs(l1) < 0.5) & (fabs(l2) < 0.5), near_mean, far)


def _power(p: Real, q: Real, v: Real, l: Real, log_base: Real, base: Real) -> Real:
    """(v (p + q + h) / (p + h))^p = base^p = (1 + l)^p with log_base its log, for power_terms: e^(p log1p(l)) where
    |l| < 0.1 (Boost's); where q < p, v^p (1 + q / (p + h))^p, v^p by pow() (rounded once) and the other power's
    exponent at most q (base^p carries the base's rounding p times: 67 ULP at betainc(50, 3, 1e-5)); else base^p."""
    power_log, ratio_log = p * log(v), p * log1p(q / (p + _H))
    split = (q < p) & (power_log > -LOG_RANGE) & (ratio_log < LOG_RANGE)
    return where(fabs(l) < 0.1, exp(p * log_base), where(split, v**p * exp(ratio_log), base**p))


def _times_factor(factor: Real, total: Callable[[], Real]) -> Real:
    """total() factor, 0 without computing total where the factor underflows (where its terms may overflow)."""
    return choose(factor == 0.0, lambda: Real(0.0), lambda: total() * factor)


def _series(a: Real, b: Real, x: Real) -> Real:
    """sum_n>=1 (1 - b)_n x^n / (n! (a + n)), to a relative MACHEP of 1/a."""
    u = (1.0 - b) * x

    def step(state: list[Real]) -> tuple[list[Real], Truth]:
        n, t, total = state
        t = t * (n - b) * x / n
        v = t / (a + n)
        return [n + 1.0, t, total + v], fabs(v) <= MACHEP / a

    return iterate([Real(2.0), u, Real(0.0)], step, MAXITER)[2] + u / (a + 1.0)


def _power_series(a: Real, b: Real, x: Real) -> Real:
    """I_x(a, b) = x^a / B(a, b) (1/a + _series) (Cephes' pseries), for b x <= 1."""
    factor = power_terms(a, b, x, 1.0 - x) / exp(b * log1p(-x))
    return _times_factor(factor, lambda: _series(a, b, x) + 1.0 / a)


def _power_series_complement(a: Real, b: Real, x: Real) -> Real:
    """1 - I_x(a, b) from the power series without cancelling where I is near 1 (small a): I = F (1 + a _series)
    with F = x^a Gamma(a + b) / (Gamma(1 + a) Gamma(b)), so 1 - I = -expm1(log F) - F a _series."""
    log_f = a * log(x) + lgamma_shift(b, a) - lgamma1p_near_zero(a)  # (a < SMALL_A)
    return -expm1(log_f) - exp(log_f) * a * _series(a, b, x)


def _continued_fraction(a: Real, b: Real, x: Real, y: Real, second: bool) -> Real:
    """Cephes' incbcf (A&S 26.5.8) or, `second`, incbd (26.5.9, in z = x / (1 - x)): the convergents p/q of
    d_2m+1 = -(a + m)(a + b + m) x / ((a + 2m)(a + 2m + 1)), d_2m = m (b - m) x / ((a + 2m - 1)(a + 2m)) (incbd: b - 1 - m
    and a + b + m in z = x / y, y = 1 - x) to a relative 3 MACHEP, rescaled when they grow or shrink."""
    z = x / y if second else x

    def step(state: list[Real]) -> tuple[list[Real], Truth]:
        n, p2, p1, q2, q1, r, answer = state
        k1, k3 = a + n, a + 2.0 * n
        k2, k6 = (b - 1.0 - n, a + b + n) if second else (a + b + n, b - 1.0 - n)
        odd = -(z * k1 * k2) / (k3 * (k3 + 1.0))
        p2, p1, q2, q1 = p1, p1 + p2 * odd, q1, q1 + q2 * odd
        even = (z * (n + 1.0) * k6) / ((k3 + 1.0) * (k3 + 2.0))
        p2, p1, q2, q1 = p1, p1 + p2 * even, q1, q1 + q2 * even
        r = where(q1 != 0.0, p1 / q1, r)
        moved = where(r != 0.0, fabs((answer - r) / r), 1.0)
        answer = where(r != 0.0, r, answer)
        rescale = where(fabs(q1) + fabs(p1) > BIG, BIG_INVERSE, 1.0) * where((fabs(q1) < BIG_INVERSE) | (fabs(p1) < BIG_INVERSE), BIG, 1.0)
        return [n + 1.0, p2 * rescale, p1 * rescale, q2 * rescale, q1 * rescale, r, answer], moved < 3.0 * MACHEP

    one, zero = Real(1.0), Real(0.0)
    return iterate([zero, zero, one, one, one, one, one], step, MAXITER)[6]


def _integral(a: Real, b: Real, x: Real, y: Real) -> Real:
    """I_x(a, b) for x at most the mean (y = 1 - x): the power series or a continued fraction, times the factor."""

    def fraction() -> Real:
        second = (x * (a + b - 2.0) - (a - 1.0) >= 0.0) | (a > b)  # (Cephes: the first where a > b too, 1e-11 off for a >> b)
        w = lambda: choose(second, lambda: _continued_fraction(a, b, x, y, True) / y, lambda: _continued_fraction(a, b, x, y, False))  # noqa: E731
        return _times_factor(power_terms(a, b, x, y) / a, w)

    return choose((b * x <= 1.0) & (x <= 0.95), lambda: _power_series(a, b, x), fraction)


def _complement(a: Real, b: Real, x: Real, y: Real) -> Real:
    """1 - I_x(a, b) for x at most the mean (y = 1 - x): by the power series' own complement where a < SMALL_A and
    the series is used (I near 1), else 1 - _integral."""
    series = (a < SMALL_A) & (b * x <= 1.0) & (x <= 0.95)
    return choose(series, lambda: _power_series_complement(a, b, x), lambda: 1.0 - _integral(a, b, x, y))


def _edges(a: Real, b: Real, x: Real, complement: Truth) -> tuple[Truth, Real]:
    """Where an argument is NaN, negative, zero or infinite or x is 0 or 1 or outside [0, 1], and SciPy's value there."""
    invalid = isnan(a) | isnan(b) | isnan(x) | (a < 0.0) | (b < 0.0) | (x < 0.0) | (x > 1.0) \
        | ((a == 0.0) & (b == 0.0)) | (isinf(a) & isinf(b))
    edge = invalid | (a == 0.0) | (b == 0.0) | isinf(a) | isinf(b) | (x == 0.0) | (x == 1.0)
    at_zero = (a == 0.0) | isinf(b)  # the integral steps to 1 at x = 0 (else at x = 1)
    low, high = where(complement, 1.0, 0.0), where(complement, 0.0, 1.0)
    value = where(invalid, float("nan"), where(at_zero, where(x > 0.0, high, low), where(x == 1.0, high, low)))
    return edge, value


def regularized(a: Real, b: Real, x: Real, y: Real, complement: Truth) -> Real:
    """I_x(a, b) (its complement where `complement`) with y = 1 - x (given: accurate where x is near 1): beyond
    the mean as the complement of I_y(b, a); one copy of _integral and of _complement, their arguments selected."""
    edge, value = _edges(a, b, x, complement)

    def inner() -> Real:  # (the complement beyond the mean directly, even where P's power series converges: 1 - P loses it)
        flip = (x > a / (a + b)) & (complement | ~((b * x <= 1.0) & (x <= 0.95)))
        first, second, near, far = where(flip, b, a), where(flip, a, b), where(flip, y, x), where(flip, x, y)
        return choose(flip ^ complement, lambda: _complement(first, second, near, far), lambda: _integral(first, second, near, far))

    return choose(edge, lambda: value, inner)


def betainc(a: Real, b: Real, x: Real) -> Real:
    """scipy.special.betainc: I_x(a, b)."""
    return regularized(a, b, x, 1.0 - x, truth(False))


def betaincc(a: Real, b: Real, x: Real) -> Real:
    """scipy.special.betaincc: 1 - I_x(a, b)."""
    return regularized(a, b, x, 1.0 - x, truth(True))


def beta_pdf(x: Real, a: Real, b: Real) -> Real:
    """scipy.stats.beta's pdf, SciPy's private _beta_pdf (Boost's ibeta_derivative): x^(a-1) (1-x)^(b-1) / B(a, b)
    as power_terms with the prefix 1 / (x (1 - x)); SciPy's edges: NaN for a non-finite x, inf at x <= 0 where
    a < 1 and at x >= 1 where b < 1, NaN for a, b not positive and finite or x outside [0, 1]; at x = 0 (1) 1 / B(a, b)
    = b (a) where a (b) is 1, else 0."""
    y = 1.0 - x
    infinite = ((x >= 1.0) & (b < 1.0)) | ((x <= 0.0) & (a < 1.0))
    invalid = isnan(x) | isinf(x) | ~((a > 0.0) & (b > 0.0)) | isinf(a) | isinf(b) | (x < 0.0) | (x > 1.0)
    end = (x == 0.0) | (x == 1.0)
    at_end = where(x == 0.0, where(a == 1.0, b, 0.0), where(b == 1.0, a, 0.0))
    value = where(isnan(x) | isinf(x), float("nan"), where(infinite, float("inf"), where(invalid, float("nan"), at_end)))
    edge = isnan(x) | isinf(x) | infinite | invalid | end
    return choose(edge, lambda: value, lambda: power_terms(a, b, x, y, x * y))
