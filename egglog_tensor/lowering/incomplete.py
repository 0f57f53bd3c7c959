"""The regularized incomplete gamma functions scipy.special.gammainc P(a, x) and gammaincc Q(a, x) = 1 - P,
by SciPy's algorithm (Cephes' igam/igamc with SciPy's additions, after Boost and DLMF 8), in float64 (float32:
the float64 value rounded once, as SciPy's loop):

- P by its power series (DLMF 8.11.4), Q by its continued fraction (8.9.2) where x > a, and by the series
  8.7.3 for x <= 1.1 (no cancellation in 1 - P there); each converges to a relative MACHEP or stops after
  MAXITER terms.
- where a ~ x and a > 20, Temme's uniform asymptotic expansion (8.12.3-4): erfc plus a series in 1/a whose
  coefficients d[k][n] (8.12.12) are derived here exactly (rationals) the first time a kernel needs them.
- the factor x^a e^-x / Gamma(a) through the Lanczos approximation (Boost's N=13 coefficients), which has no
  cancellation at large a, its powers by pow() as Boost's regularized_gamma_prefix (exp(a log x - x - lgamma(a)),
  Cephes', only where they would underflow).

Edge values as SciPy: NaN for a NaN or negative argument, P(0, x>0) = 1, P(a, 0) = 0, P(inf, x) = 0 (NaN at
x = inf), P(a, inf) = 1. Each element runs only its branch (scf.if), so the loop is scalar code.
"""

from __future__ import annotations

import functools
import math as pymath
from collections.abc import Callable
from fractions import Fraction

from .gammafunction import LANCZOS_G, lanczos_sum_expg_scaled, lgamma1p
from .scalarcode import Real, Truth, choose, erfc, exp, expm1, fabs, fold, isinf, isnan, iterate, lgamma, log, log1pmx, sqrt, table, tgamma, truth, where

MACHEP = 2.0**-53
MAXLOG = 7.09782712893383996843e2  # log(DBL_MAX)
MAXITER = 2000
POWER_RANGE = 700.0  # the prefactor's powers by pow() where their logs are below it (no subnormal power)
SMALL, LARGE, SMALL_RATIO, LARGE_RATIO = 20.0, 200.0, 0.3, 4.5  # the asymptotic expansion's domain (SciPy's)
TEMME_K, TEMME_N = 25, 25  # terms in 1/a, and of each coefficient's series in eta
BIG, BIG_INVERSE = 4.503599627370496e15, 2.22044604925031308085e-16  # the continued fraction's rescaling


def prefactor(a: Real, x: Real) -> Real:
    """x^a e^-x / Gamma(a) (0 where it underflows): near a ~ x through the Lanczos approximation; elsewhere as
    Boost's regularized_gamma_prefix, by pow(), rounded once: x^a e^-x / Gamma(a) where a < 1, else
    e^(a - x) (x / (a + g - 1/2))^a (x^a / (a + g - 1/2)^a where that underflows) times the Lanczos factor
    (e^(a log x - x - lgamma(a)), Cephes', carries |a log x| ULP: 1100 ULP in gammaincinv(2, 1e-250));
    e^(a log x - x - lgamma(a)) where the powers would underflow; 0 where that is below e^-MAXLOG, as SciPy's."""
    fac = a + (LANCZOS_G - 0.5)
    scale = sqrt(fac / pymath.e) / lanczos_sum_expg_scaled(a)

    def direct() -> Real:
        ax = a * log(x) - x - lgamma(a)
        small = a < 1.0
        x_log, quotient_log = a * log(x), a * log(x / fac)
        whole = fabs(quotient_log) < POWER_RANGE  # (else x^a / fac^a, where each is in range)
        x_ranged = fabs(x_log) < POWER_RANGE
        split = x_ranged & (a * log(fac) < POWER_RANGE) & (fabs(a - x + x_log) < POWER_RANGE)  # (e^(a - x) x^a in range)
        ranged = (small & x_ranged) | (~small & (whole | split))
        powers = lambda: where(small, x**a * exp(-x) / tgamma(a),  # noqa: E731
                               where(whole, scale * exp(a - x) * (x / fac) ** a, scale * (exp(a - x) * x**a) / fac**a))
        value = choose(ranged & (fabs(a - x) < MAXLOG), powers, lambda: exp(ax))
        return where(ax < -MAXLOG, 0.0, value)  # (SciPy's 0 where e^ax is subnormal)

    def lanczos() -> Real:
        small = (a < 200.0) & (x < 200.0)
        return scale * choose(small, lambda: exp(a - x) * (x / fac) ** a,
                              lambda: exp(a * log1pmx((x - a - (LANCZOS_G - 0.5)) / fac) + x * (0.5 - LANCZOS_G) / fac))

    return choose(fabs(a - x) > 0.4 * fabs(a), direct, lanczos)


def _times_factor(a: Real, x: Real, total: Callable[[], Real]) -> Real:
    """total() x^a e^-x / Gamma(a), 0 without summing where the factor underflows (the sum may not converge there)."""
    factor = prefactor(a, x)
    return choose(factor == 0.0, lambda: Real(0.0), lambda: total() * factor)


def _p_series(a: Real, x: Real) -> Real:
    """P(a, x) by its power series (DLMF 8.11.4)."""

    def step(state: list[Real]) -> tuple[list[Real], Truth]:
        r, c, total = state
        r = r + 1.0
        c = c * x / r
        total = total + c
        return [r, c, total], c <= MACHEP * total

    return _times_factor(a, x, lambda: iterate([a, Real(1.0), Real(1.0)], step, MAXITER)[2] / a)


def _q_continued_fraction(a: Real, x: Real) -> Real:
    """Q(a, x) by its continued fraction (DLMF 8.9.2), for x > a; its convergents rescaled when they grow."""
    y = 1.0 - a
    z = x + y + 1.0

    def step(state: list[Real]) -> tuple[list[Real], Truth]:
        c, y, z, p2, p1, q2, q1, answer = state
        c, y, z = c + 1.0, y + 1.0, z + 2.0
        yc = y * c
        p, q = p1 * z - p2 * yc, q1 * z - q2 * yc
        ratio = p / q
        moved = where(q != 0.0, fabs((answer - ratio) / ratio), 1.0)
        answer = where(q != 0.0, ratio, answer)
        rescale = where(fabs(p) > BIG, BIG_INVERSE, 1.0)
        return [c, y, z, p1 * rescale, p * rescale, q1 * rescale, q * rescale, answer], moved <= MACHEP

    p1, q1 = x + 1.0, z * x
    return _times_factor(a, x, lambda: iterate([Real(0.0), y, z, Real(1.0), p1, x, q1, p1 / q1], step, MAXITER)[7])


def _q_series(a: Real, x: Real) -> Real:
    """Q(a, x) for small x by DLMF 8.7.3, with no cancellation against 1."""

    def step(state: list[Real]) -> tuple[list[Real], Truth]:
        n, fac, total = state
        fac = fac * -x / n
        term = fac / (a + n)
        total = total + term
        return [n + 1.0, fac, total], fabs(term) <= MACHEP * fabs(total)

    total = iterate([Real(1.0), Real(1.0), Real(0.0)], step, MAXITER - 1)[2]
    log_x = log(x)
    return -expm1(a * log_x - lgamma1p(a)) - exp(a * log_x - lgamma(a)) * total


@functools.cache
def temme_coefficients() -> tuple[tuple[float, ...], ...]:
    """d[k][n], DLMF 8.12.12, for k < TEMME_K and n < TEMME_N: from lambda(eta), the inverse of
    eta^2 / 2 = lambda - log(1 + lambda), whose series alpha_n follows from lambda lambda' = eta (1 + lambda),
    and the Stirling series' coefficients g_k of Gamma*(a) (DLMF 5.11.3), all exact rationals."""
    m = TEMME_N + 2 * TEMME_K
    alpha = [Fraction(0), Fraction(1)]
    for n in range(2, m + 2):
        alpha.append((alpha[n - 1] - sum(alpha[i] * (n - i + 1) * alpha[n - i + 1] for i in range(2, n))) / (n + 1))
    bernoulli = [Fraction(1)]
    for j in range(1, TEMME_K + 2):
        bernoulli.append(-sum(pymath.comb(j + 1, i) * bernoulli[i] for i in range(j)) / (j + 1))
    log_g = [Fraction(0)] * (TEMME_K + 1)  # log Gamma*(a) = sum_m B_2m / (2m (2m - 1)) a^(1 - 2m)
    for j in range(1, TEMME_K // 2 + 2):
        if 2 * j - 1 <= TEMME_K:
            log_g[2 * j - 1] = bernoulli[2 * j] / (2 * j * (2 * j - 1))
    g = [Fraction(1)] + [Fraction(0)] * TEMME_K
    for n in range(1, TEMME_K + 1):
        g[n] = sum(j * log_g[j] * g[n - j] for j in range(1, n + 1)) / n
    d = [[Fraction(-1, 3)] + [(n + 2) * alpha[n + 2] for n in range(1, m)]]
    for k in range(1, TEMME_K):
        d.append([(-1) ** k * g[k] * d[0][n] + (n + 2) * d[k - 1][n + 2] for n in range(m - 2 * k)])
    return tuple(tuple(float(v) for v in row[:TEMME_N]) for row in d)


def _asymptotic(a: Real, x: Real, complement: Truth) -> Real:
    """P (or Q, complement) by Temme's expansion: erfc(+-eta sqrt(a/2)) / 2 +- e^(-a eta^2/2) / sqrt(2 pi a)
    sum_k c_k(eta) a^-k, the sum stopped (as SciPy's) where a term grows or falls below MACHEP of the sum."""
    sign = where(complement, 1.0, -1.0)
    sigma = (x - a) / a
    root = sqrt(-2.0 * log1pmx(sigma))
    eta = where(x > a, root, where(x < a, -root, 0.0))
    result = 0.5 * erfc(sign * eta * sqrt(a / 2.0))
    coefficients = table([row[::-1] for row in temme_coefficients()])  # each row highest power first

    def step(state: list[Real]) -> tuple[list[Real], Truth]:
        k, total, afac, previous = state
        term = fold(coefficients, k, 0.0, lambda c, d: c * eta + d) * afac  # c_k(eta) a^-k
        size = fabs(term)
        grows = size > previous  # (then the term is not added)
        total = where(grows, total, total + term)
        return [k + 1.0, total, afac / a, size], grows | (size < MACHEP * fabs(total))

    total = iterate([Real(0.0), Real(0.0), Real(1.0), Real(float("inf"))], step, TEMME_K)[1]
    return result + sign * exp(-0.5 * a * eta * eta) * total / sqrt(2.0 * pymath.pi * a)


def _regime(a: Real, x: Real) -> Truth:
    """Where a ~ x, in which the asymptotic expansion is used."""
    distance = fabs(x - a) / a
    return ((a > SMALL) & (a < LARGE) & (distance < SMALL_RATIO)) | ((a > LARGE) & (distance < LARGE_RATIO / sqrt(a)))


def _edges(a: Real, x: Real, complement: Truth) -> tuple[Truth, Real]:
    """Where the arguments are NaN, negative, zero or infinite, and SciPy's value there (P's; Q's where complement)."""
    nan = float("nan")
    high, low = where(complement, 0.0, 1.0), where(complement, 1.0, 0.0)  # the value as x grows, and at x = 0
    invalid = isnan(a) | isnan(x) | (x < 0.0) | (a < 0.0)
    edge = invalid | (a == 0.0) | (x == 0.0) | isinf(a) | isinf(x)
    value = where(invalid, nan, where(a == 0.0, where(x > 0.0, high, nan), where(x == 0.0, low,
                  where(isinf(a), where(isinf(x), nan, low), high))))
    return edge, value


def _away(a: Real, x: Real, complement: Truth) -> Real:
    """P (Q where complement) away from the edges and the asymptotic regime, by one of the three sums, SciPy's
    choice: Q's route (taken by P where x > 1 and x > a, as 1 - Q) sums P's series where x < a, beyond 1.1, or
    where a exceeds -0.4 / log x (x <= 0.5) or 1.1 x (below 1.1), else Q's continued fraction (x > 1.1) or
    series; P's own route its series. The sum's value, or 1 minus it where it is the other function."""
    q_route = complement | ((x > 1.0) & (x > a))
    beyond = x > 1.1
    threshold = where(x <= 0.5, -0.4 / log(x), x * 1.1)
    by_p = ~q_route | (beyond & (x < a)) | (~beyond & (threshold < a))
    total = choose(by_p, lambda: _p_series(a, x), lambda: choose(beyond, lambda: _q_continued_fraction(a, x), lambda: _q_series(a, x)))
    return where(by_p ^ complement, total, 1.0 - total)


def incomplete_gamma(a: Real, x: Real, complement: Truth) -> Real:
    """P(a, x), or Q(a, x) where complement: one code path for both (each element runs one of the sums)."""
    edge, value = _edges(a, x, complement)
    return choose(edge, lambda: value, lambda: choose(_regime(a, x), lambda: _asymptotic(a, x, complement), lambda: _away(a, x, complement)))


def gammainc(a: Real, x: Real) -> Real:
    """scipy.special.gammainc: P(a, x)."""
    return incomplete_gamma(a, x, truth(False))


def gammaincc(a: Real, x: Real) -> Real:
    """scipy.special.gammaincc: Q(a, x)."""
    return incomplete_gamma(a, x, truth(True))
