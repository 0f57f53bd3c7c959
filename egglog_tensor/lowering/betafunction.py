"""scipy.special's beta, betaln, binom and poch by SciPy's algorithms (Cephes' beta and lbeta, SciPy's binom), in float64
(float32: the float64 value rounded once, as SciPy's loops):

- B(a, b) with a >= b >= 1/2 (swapped; a + b < 1e15, not the asymptotic case): Boost's Lanczos form by pow(), its
  bases' and exponents' rounding put back (_lanczos: within 10 ULP of mpmath where Cephes' sum of lgammas beyond
  MAXGAM carries their magnitude in ULP, up to 1e8). betaln and the other arguments as Cephes:
- B(a, b) with |a| >= |b| (swapped): where a > 1e6 |b| and a > 1e6, the asymptotic expansion of log|B| in 1/a
  (no cancellation between lgamma(a + b) and lgamma(a)); where |a|, |b| or |a + b| exceed MAXGAM, the sum of
  lgammas with Gamma's signs; else Gamma(a) Gamma(b) / Gamma(a + b), multiplied in the order that keeps the
  intermediate nearer 1 (betaln: the log of its magnitude).
- a (or b) a nonpositive integer: B(1 - a - b, b) times (-1)^b where b is an integer and 1 - a - b > 0, else inf
  (Cephes' beta_negint; with b <= 0 too, the inner call is such a case again and inf, signed as the outer).
- binom(n, k): NaN for a negative integer n; for an integral k (not for tiny nonzero n) reduced by symmetry below
  20, the product prod_i (n - k + i) / i, rescaled as it grows; else exp(-lbeta(1 + n - k, 1 + k)) / (n + 1) where
  n >= 1e10 k, the two terms of the expansion in 1/k where k > 1e8 |n|, else 1 / ((n + 1) B(1 + n - k, 1 + k)),
  where both of B's arguments are at least 1/2 by _lanczos with their rounding errors (B's condition: 50 ULP).
- poch(a, m) = Gamma(a + m) / Gamma(a): Cephes' (`poch`).
Gamma is libm's tgamma (Cephes' within a few ULP), log|Gamma| libm's lgamma.
"""

from __future__ import annotations

import math as pymath

from .gammafunction import LANCZOS_G, gamma_sign, lanczos_sum_expg_scaled, lgamma_shift
from .scalarcode import Real, Truth, choose, exp, fabs, floor, iterate, lgamma, log, sin, sqrt, tgamma, two_product, two_sum, where

MAXGAM = 171.624376956302725  # the largest x where Gamma(x) is finite
ASYMPTOTIC = 1e6  # Cephes' ASYMP_FACTOR
INT_MIN, INT_END = -(2.0**31), 2.0**31  # a C int's range: Cephes' static_cast<int> checks
BINOM_PRODUCT = 20  # binom's product for integral k below it
LANCZOS_LIMIT = 1e15  # _lanczos's arguments below it (its corrections, exponents times relative errors, stay below 1)


def _is_int(x: Real) -> Truth:
    """C's x == (int)x: x integral within an int's range."""
    return (x >= INT_MIN) & (x < INT_END) & (x == floor(x))


def _odd(x: Real) -> Truth:
    """Whether the integral x is odd."""
    return x - 2.0 * floor(0.5 * x) == 1.0


def _rgamma(x: Real) -> Real:
    """1 / Gamma(x), 0 at the poles (as Cephes' rgamma)."""
    return where((x <= 0.0) & (x == floor(x)), 0.0, 1.0 / tgamma(x))


def _log_asymptotic(a: Real, b: Real) -> Real:
    """log|B(a, b)| for a >> |b| (Cephes' lbeta_asymp), its terms added in Cephes' order."""
    r = lgamma(b) - b * log(a)
    r = r + b * (1.0 - b) / (2.0 * a)
    r = r + b * (1.0 - b) * (1.0 - 2.0 * b) / (12.0 * a * a)
    return r + -b * b * (1.0 - b) * (1.0 - b) / (12.0 * a * a * a)


def _product(a: Real, b: Real) -> Real:
    """Gamma(a) Gamma(b) / Gamma(a + b), the factor whose product with 1 / Gamma(a + b) is nearer 1 taken first."""
    y, ga, gb = _rgamma(a + b), tgamma(a), tgamma(b)
    b_first = fabs(fabs(ga * y) - 1.0) > fabs(fabs(gb * y) - 1.0)
    return where(b_first, gb * y * ga, ga * y * gb)


def _quotient(p: Real, p_error: Real, s: Real, s_error: Real) -> tuple[Real, Real]:
    """p / s rounded and the exact quotient's relative difference from it, to first order, given p's and s's
    (p (1 + p_error) / (s (1 + s_error)) = q (1 + the second))."""
    q = p / s
    product, error = two_product(q, s)
    return q, ((p - product) - error) / p + p_error - s_error


def _lanczos(a: Real, b: Real, a_error: Real | float = 0.0, b_error: Real | float = 0.0) -> Real:
    """B(a + a_error, b + b_error) (the errors: an argument's rounding, binom's) for a >= b >= 1/2 as Boost's beta:
    L(a) L(b) / L(c) sqrt(e / bh) (ah / ch)^(a - 1/2 - b) (ah bh / ch^2)^b with c = a + b, xh = x + g - 1/2, by pow()
    of its bases, whose rounding (and the sums' and the exponent's, by TwoSum and FMA, and the errors) is put back as a
    factor e^(exponent times the relative error): about an ULP per operation where e^(lgamma(a) + lgamma(b) - lgamma(c))
    carries |lgamma(c)| ULP (4500 at binom(1000, 500)). (L varies slowly: the errors are left out of its arguments.)"""
    h = LANCZOS_G - 0.5
    c, c_error = two_sum(a, b)
    ah, ah_error = two_sum(a, Real(h))
    bh, bh_error = two_sum(b, Real(h))
    ch, ch_error = two_sum(c, Real(h))
    a_rel, b_rel = (ah_error + a_error) / ah, (bh_error + b_error) / bh
    c_rel = (ch_error + c_error + a_error + b_error) / ch
    first, first_rel = _quotient(ah, a_rel, ch, c_rel)
    ratio_b, b_ratio_rel = _quotient(bh, b_rel, ch, c_rel)
    second, second_error = two_product(first, ratio_b)
    second_rel = first_rel + b_ratio_rel + second_error / second
    difference, difference_error = two_sum(a, -b)
    power, power_error = two_sum(difference, Real(-0.5))
    power_error = power_error + difference_error + a_error - b_error
    lanczos = lanczos_sum_expg_scaled(a) * (lanczos_sum_expg_scaled(b) / lanczos_sum_expg_scaled(c))
    correction = exp(power * first_rel + power_error * log(first) + b * second_rel + b_error * log(second)) * (1.0 - 0.5 * b_rel)
    return lanczos * sqrt(pymath.e / bh) * first**power * second**b * correction


def _regular(a: Real, b: Real, logarithm: bool) -> Real:
    """B(a, b) (log|B(a, b)| where `logarithm`) where neither argument is a nonpositive integer."""
    swap = fabs(a) < fabs(b)
    a, b = where(swap, b, a), where(swap, a, b)
    asymptotic = (fabs(a) > ASYMPTOTIC * fabs(b)) & (a > ASYMPTOTIC)
    large = (fabs(a + b) > MAXGAM) | (fabs(a) > MAXGAM) | (fabs(b) > MAXGAM)

    def by_logs() -> Real:
        value = choose(asymptotic, lambda: _log_asymptotic(a, b), lambda: lgamma(a) + (lgamma(b) - lgamma(a + b)))
        if logarithm:
            return value
        return where(asymptotic, gamma_sign(b), gamma_sign(a + b) * gamma_sign(b) * gamma_sign(a)) * exp(value)


    def by_gammas() -> Real:
        y = _product(a, b)
        return log(fabs(y)) if logarithm else y

    if logarithm:
        return choose(asymptotic | large, by_logs, by_gammas)
    return choose(~asymptotic & (a > 0.0) & (b >= 0.5) & (a + b < LANCZOS_LIMIT), lambda: _lanczos(a, b), lambda: choose(asymptotic | large, by_logs, by_gammas))


def _beta(a: Real, b: Real, logarithm: bool) -> Real:
    """Cephes' beta (lbeta where `logarithm`): a nonpositive integer argument n (a's first) with the other, m, an
    integer and 1 - n - m > 0 is B(1 - n - m, m) (-1)^m, inf if m <= 0 too (or n is beyond an int); else inf."""
    a_pole = (a <= 0.0) & (a == floor(a))
    pole = a_pole | ((b <= 0.0) & (b == floor(b)))
    n, m = where(a_pole, a, b), where(a_pole, b, a)
    c = 1.0 - n - m
    reflected = pole & (n >= INT_MIN) & _is_int(m) & (c > 0.0)
    infinite = pole & ~(reflected & (m > 0.0))
    value = choose(infinite, lambda: Real(float("inf")), lambda: _regular(where(pole, c, a), where(pole, m, b), logarithm))
    return value if logarithm else where(reflected & _odd(m), -value, value)


def beta(a: Real, b: Real) -> Real:
    """scipy.special.beta: B(a, b) = Gamma(a) Gamma(b) / Gamma(a + b)."""
    return _beta(a, b, logarithm=False)


def betaln(a: Real, b: Real) -> Real:
    """scipy.special.betaln: log|B(a, b)|."""
    return _beta(a, b, logarithm=True)


def _binom_product(n: Real, k: Real) -> Real:
    """prod_{i=1..k} (n - k + i) / i for an integral 0 <= k < BINOM_PRODUCT, the quotient taken where it grows past 1e50."""

    def step(state: list[Real]) -> tuple[list[Real], Truth]:
        i, num, den = state
        taken = i <= k
        num_i, den_i = num * (i + n - k), den * i
        big = fabs(num_i) > 1e50
        num_i, den_i = where(big, num_i / den_i, num_i), where(big, 1.0, den_i)
        return [i + 1.0, where(taken, num_i, num), where(taken, den_i, den)], i + 1.0 > k

    _, num, den = iterate([Real(1.0), Real(1.0), Real(1.0)], step, BINOM_PRODUCT)
    return num / den


def _binom_large_k(n: Real, k: Real) -> Real:
    """binom(n, k) for k > 1e8 |n| (so k > 0): Gamma(1 + n) (1 / k + n / (2 k^2)) / (pi k^n) sin((dk - n) pi) with
    dk the fractional part of k and the sign (-1)^floor(k) where floor(k) is an int, else dk = k."""
    g = tgamma(1.0 + n)
    num = (g / k + g * n / (2.0 * k * k)) / (pymath.pi * k**n)
    kx = floor(k)
    whole = _is_int(kx)
    sign = where(whole & _odd(kx), -1.0, 1.0)
    return num * sin((where(whole, k - kx, k) - n) * pymath.pi) * sign


def binom(n: Real, k: Real) -> Real:
    """scipy.special.binom: the binomial coefficient of real n and k (module docstring)."""
    kx, nx = floor(k), floor(n)
    integral = (k == kx) & ((fabs(n) > 1e-8) | (n == 0.0))
    kx = where((nx == n) & (kx > nx / 2.0) & (nx > 0.0), nx - kx, kx)  # (symmetry)
    product = integral & (kx >= 0.0) & (kx < BINOM_PRODUCT)

    def by_lanczos() -> Real:  # (B's arguments 1 + n - k and 1 + k with their rounding errors: B's condition, 50 ULP)
        n1, n1_error = two_sum(Real(1.0), n)
        first, first_error = two_sum(n1, -k)
        first_error = first_error + n1_error
        second, second_error = two_sum(Real(1.0), k)
        swap = first < second
        beta_value = _lanczos(where(swap, second, first), where(swap, first, second), where(swap, second_error, first_error),
                              where(swap, first_error, second_error))
        return (1.0 - n1_error / n1) / n1 / beta_value

    positive = (1.0 + n - k >= 0.5) & (1.0 + k >= 0.5) & (fabs(n) < LANCZOS_LIMIT) & (fabs(k) < LANCZOS_LIMIT)

    def general() -> Real:
        by_lbeta = (n >= 1e10 * k) & (k > 0.0)
        return choose(by_lbeta, lambda: exp(-_beta(1.0 + n - k, 1.0 + k, True) - log(n + 1.0)),
                      lambda: choose(k > 1e8 * fabs(n), lambda: _binom_large_k(n, k),
                                     lambda: choose(positive, by_lanczos, lambda: 1.0 / (n + 1.0) / _beta(1.0 + n - k, 1.0 + k, False))))

    return choose((n < 0.0) & (n == nx), lambda: Real(float("nan")),
                  lambda: choose(product, lambda: _binom_product(n, kx), general))


POCH_STEPS = 10000  # poch's recurrence steps at most (Cephes' loops stop once the product over- or underflows, sooner)


def _poch_reduced(a: Real, m: Real, up: bool) -> list[Real]:
    """Cephes' poch reduction: (m, r) with m brought below 1 (`up`: from m >= 1, r *= a + m - 1 each step) or above -1
    (r /= a + m), stopping where a + m hits 1 (0) or r over- or underflows."""

    def step(state: list[Real]) -> tuple[list[Real], Truth]:
        mm, r = state
        going = ((mm >= 1.0) & (a + mm != 1.0)) if up else ((mm <= -1.0) & (a + mm != 0.0))
        moved = where(going, mm - 1.0 if up else mm + 1.0, mm)
        r = where(going, r * (a + moved) if up else r / (a + mm), r)
        return [moved, r], ~going | ~(fabs(r) < float("inf")) | (r == 0.0)

    return iterate([m, Real(1.0)], step, POCH_STEPS)


def poch(a: Real, m: Real) -> Real:
    """scipy.special.poch: Gamma(a + m) / Gamma(a) by Cephes' method: m brought into (-1, 1) by the recurrence
    (_poch_reduced), then for a > 1e4 the series a^m (1 + m(m - 1)/2a + ...), inf where a + m is a pole and a is not,
    0 the other way round, else exp(lgamma(a + m) - lgamma(a)) with Gamma's signs, the difference by lgamma_shift where
    a >= 1 and a + m > 0 (Cephes subtracts two lgammas: 1e-11 relative lost near a = 8000, which this keeps)."""
    m, r = _poch_reduced(a, m, up=True)
    m, down = _poch_reduced(a, m, up=False)
    r = r * down

    def pole(x: Real) -> Truth:
        return (x <= 0.0) & (x == floor(x))

    def general() -> Real:
        series = (1.0 + m * (m - 1.0) / (2.0 * a) + m * (m - 1.0) * (m - 2.0) * (3.0 * m - 1.0) / (24.0 * a * a)
                  + m * m * (m - 1.0) * (m - 1.0) * (m - 2.0) * (m - 3.0) / (48.0 * a * a * a))
        positive = (a >= 1.0) & (a + m > 0.0)  # (lgamma_shift: the difference without cancelling two large lgammas)
        shift = where(positive, lgamma_shift(where(positive, a, 1.0), where(positive, m, 0.0)), lgamma(a + m) - lgamma(a))
        ratio = r * exp(shift) * gamma_sign(a + m) * gamma_sign(a)
        value = where(pole(a + m) & ~pole(a) & (a + m != m), float("inf"), where(~pole(a + m) & pole(a), 0.0, ratio))
        return where((a > 1e4) & (fabs(m) <= 1.0), r * a**m * series, value)

    return where(m == 0.0, r, general())