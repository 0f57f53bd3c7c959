"""The inverses of the regularized incomplete beta integral (lowering/incompletebeta.py): scipy.special.betaincinv
(x with I_x(a, b) = y) and betainccinv (1 - I_x(a, b) = y), in float64, with SciPy 1.17's edge values (Boost's
ibeta_inv: its closed forms where a or b is 1, its floor of the smallest normal number under a root that underflows).

Each solves the equation of the smaller probability (I = p for p <= 1/2, else 1 - I = 1 - p, exact there) by Newton's
method on log F (F = I or 1 - I) in t = log(x / (1 - x)): the logistic transform of a beta variable has a
log-concave density, so log F is concave in t and Newton's method converges from any start within the bracket kept
of the root (dF/dt is x^a (1 - x)^b / B(a, b): incompletebeta.power_terms). The start is the normal approximation of
t's distribution (mean psi(a) - psi(b), variance psi'(a) + psi'(b), by their leading terms) where a and b exceed 1,
else the tail's x^a / (a B(a, b)) = p (y^b / (b B(a, b)) = 1 - p). F is evaluated at x and 1 - x each accurate
(beyond 1/2 as the complement of I_(1-x)(b, a)). Two Halley steps on F in x then give the root to nearly full
precision (x from t alone would carry |t| ULP)."""

from __future__ import annotations

import math as pymath

from .incomplete_inverse import normal_quantile
from .incompletebeta import power_terms, regularized
from .scalarcode import Real, Truth, choose, exp, expm1, fabs, isinf, isnan, iterate, lgamma, log, log1p, sqrt, truth, where

NEWTON_STEPS = 100  # Newton in t (a few from the start; the limit bounds bisections and rounding noise)
HALLEY_STEPS = 2
SETTLED = 1e-10  # Newton stops once it moves t by this relatively (Halley's cubic steps take it from there)
SMALLEST = 2.2250738585072014e-308  # Boost's floor of a root below it (DBL_MIN)
T_LIMIT = -pymath.log(SMALLEST)  # t's bracket, +-log(DBL_MIN)


def _sigmoid(t: Real) -> Real:
    """1 / (1 + e^-t): x of t = log(x / (1 - x))."""
    return 1.0 / (1.0 + exp(-t))


def _start(a: Real, b: Real, target: Real, upper: Truth) -> tuple[Real, Real]:
    """t to start from for F(x) = target (F = 1 - I_x(a, b) where upper, else I), and the tail's estimate of it
    (x^a / (a B(a, b)) = target, y^b / (b B(a, b)) where upper: the root's t within rounding where it is below
    log(DBL_MIN)); the start is the normal approximation of t's distribution where a, b > 1, else the tail's."""
    side = where(upper, b, a)
    power = (log(target) + log(side) + lgamma(a) + lgamma(b) - lgamma(a + b)) / side  # log of x^a (y^b)
    tail = where(power < 0.0, power - log(-expm1(where(power < 0.0, power, -1.0))), T_LIMIT)
    tail = where(upper, -tail, tail)
    z = normal_quantile(target)
    spread = sqrt(1.0 / a + 1.0 / b + 0.5 / (a * a) + 0.5 / (b * b))
    normal = log(a / b) - 0.5 / a + 0.5 / b + where(upper, -z, z) * spread
    start = where((a > 1.0) & (b > 1.0), normal, tail)
    return where(start < -T_LIMIT, -T_LIMIT, where(start > T_LIMIT, T_LIMIT, start)), tail


def _solve(a: Real, b: Real, target: Real, upper: Truth) -> Real:
    """x with F(x) = target, F = 1 - I_x(a, b) where upper else I, for 0 < target <= 1/2, a, b > 0 finite: one loop
    whose steps are Newton's on log F in t until they stop moving it, then HALLEY_STEPS of Halley's on F in x."""
    sign = where(upper, -1.0, 1.0)  # the sign of dF/dx
    start, tail = _start(a, b, target, upper)
    log_target = log(target)

    def step(state: list[Real]) -> tuple[list[Real], Truth]:
        t, polished, halley, low, high = state  # (halley: Halley steps taken, 0 while Newton's run, x theirs)
        in_newton = halley == 0.0
        x, y = where(in_newton, _sigmoid(t), polished), where(in_newton, _sigmoid(-t), 1.0 - polished)
        mirrored = x > 0.5  # (F at 1 - I_y(b, a): y is the accurate one)
        value = regularized(where(mirrored, b, a), where(mirrored, a, b), where(mirrored, y, x), where(mirrored, x, y), upper ^ mirrored)
        fac = power_terms(a, b, x, y)  # dI/dt
        left = (value < target) ^ upper  # the root is right of t
        low, high = where(in_newton & left, t, low), where(in_newton & ~left, t, high)
        newton = t - (log(value) - log_target) * value / (sign * fac)  # log F over its slope in t
        lost = isnan(newton) | isinf(newton)  # (F or its slope underflowed)
        inside = ~lost & (newton >= low) & (newton <= high)
        newton = where(inside, newton, 0.5 * (t + where(left, high, low)))  # else halfway to the bracket's far side
        settled = ~lost & (fabs(newton - t) <= SETTLED * where(fabs(t) > 1.0, fabs(t), 1.0))
        ratio = sign * (value - target) * (x * y) / fac  # F / F'
        curvature = (a - 1.0) / x - (b - 1.0) / y  # F'' / F' (the same for I and 1 - I)
        better = x - where(isinf(curvature) | isnan(curvature), ratio, ratio / (1.0 - 0.5 * ratio * curvature))
        better = where((fac == 0.0) | ~(better > 0.0) | ~(better < 1.0), x, better)  # (a step out of (0, 1) not taken)
        count = where(in_newton, where(settled, 1.0, 0.0), halley + 1.0)
        following = [where(in_newton, newton, t), where(in_newton, _sigmoid(newton), better), count, low, high]
        return following, (count > HALLEY_STEPS) | (~in_newton & (fac == 0.0))

    def solved() -> Real:
        x = iterate([start, Real(0.0), Real(0.0), Real(-T_LIMIT), Real(T_LIMIT)], step, NEWTON_STEPS + HALLEY_STEPS)[1]
        return where(x < SMALLEST, SMALLEST, x)

    return choose(tail < -T_LIMIT, lambda: Real(SMALLEST), solved)


def _closed(a: Real, b: Real, p: Real, q: Real) -> Real:
    """Boost's closed forms where b = 1 (x = p^(1/a)) or a = 1 (x = 1 - q^(1/b)), each from the smaller of p and q."""
    b_one = where(p < q, exp(log(p) / a), exp(log1p(-q) / a))
    a_one = where(q < p, -expm1(log(q) / b), -expm1(log1p(-p) / b))
    return where(b == 1.0, where(a == 1.0, p, b_one), a_one)


def _inverse(a: Real, b: Real, probability: Real, upper: bool) -> Real:
    """betaincinv (betainccinv: upper) with SciPy's edges: NaN for a NaN, a, b <= 0, a probability outside [0, 1];
    at p = 0 and 1 the ends 0 and 1; the closed forms where a or b is 1 (an infinite other included); NaN for
    another infinite a or b. Above 1/2 the other function's equation with 1 - probability."""
    p, q = (1.0 - probability, probability) if upper else (probability, 1.0 - probability)
    invalid = isnan(a) | isnan(b) | isnan(probability) | (a <= 0.0) | (b <= 0.0) | (probability < 0.0) | (probability > 1.0)
    ends = (p == 0.0) | (q == 0.0)
    closed = (a == 1.0) | (b == 1.0)
    edge = invalid | ends | closed | isinf(a) | isinf(b)
    value = where(invalid | ~(ends | closed), float("nan"), where(q == 0.0, 1.0, where(p == 0.0, 0.0, _closed(a, b, p, q))))
    flipped = probability > 0.5
    return choose(edge, lambda: value, lambda: _solve(a, b, where(flipped, 1.0 - probability, probability), flipped ^ truth(upper)))


def betaincinv(a: Real, b: Real, y: Real) -> Real:
    """scipy.special.betaincinv: x with I_x(a, b) = y."""
    return _inverse(a, b, y, upper=False)


def betainccinv(a: Real, b: Real, y: Real) -> Real:
    """scipy.special.betainccinv: x with 1 - I_x(a, b) = y."""
    return _inverse(a, b, y, upper=True)
