"""The inverses of the regularized incomplete gamma integrals (lowering/incomplete.py): scipy.special.gammaincinv
(x with P(a, x) = p) and gammainccinv (Q(a, x) = q), in float64, SciPy's edge values.

As SciPy's igami/igamci, each solves the other's equation where its own probability is above 0.9 (1 - p is
exact there). The root is found by Newton's method on log F(a, e^t) (F = P or Q) in t = log x: that function is
concave in t (the log of a log-concave density's cdf or survival function), so Newton converges from any start;
the start is the better of x^a / Gamma(a + 1) = p (a lower bound of P's root) and Wilson and Hilferty's normal
approximation (with a rational approximation of the normal quantile, A&S 26.2.23). Two of SciPy's Halley steps
on F itself then give the root to nearly full precision (x = e^t alone would carry |t| ULP).
"""

from __future__ import annotations

from .incomplete import incomplete_gamma, prefactor
from .scalarcode import Real, Truth, choose, exp, fabs, isinf, isnan, iterate, lgamma, log, log1p, sqrt, truth, where

NEWTON_STEPS = 100  # Newton in log x (a few from the start; the limit bounds unit steps in from far out and rounding noise)
HALLEY_STEPS = 2
SMALLEST_LOG = -745.2  # below, e^t is 0 in float64


def normal_quantile(p: Real) -> Real:
    """Abramowitz and Stegun 26.2.23: the standard normal's p-quantile within 4.5e-4 (a Newton start only)."""
    tail = where(p < 0.5, p, 1.0 - p)
    t = sqrt(-2.0 * log(tail))
    z = t - (2.515517 + t * (0.802853 + t * 0.010328)) / (1.0 + t * (1.432788 + t * (0.189269 + t * 0.001308)))
    return where(p < 0.5, -z, z)


def _start(a: Real, target: Real, upper: Truth) -> Real:
    """log of a first x for P(a, x) = p (Q(a, x) = q where upper; target is p or q): the larger of x^a / Gamma(a + 1)
    = p (P <= x^a / Gamma(a + 1): a lower bound of the root) and Wilson and Hilferty's a (1 - 1/(9a) + z /
    (3 sqrt a))^3, z the normal p-quantile (-(q-quantile): a tiny q keeps its digits)."""
    small = (where(upper, log1p(-target), log(target)) + lgamma(a + 1.0)) / a
    z = normal_quantile(target)
    cube = 1.0 - 1.0 / (9.0 * a) + where(upper, -z, z) / (3.0 * sqrt(a))
    wilson = where(cube > 0.0, log(a) + 3.0 * log(where(cube > 0.0, cube, 1.0)), small)
    return where(wilson > small, wilson, small)


def _solve(a: Real, target: Real, upper: Truth) -> Real:
    """x with F(a, x) = target, F = Q where upper else P, for 0 < target <= 0.9 and a > 0 finite: one loop whose
    steps are Newton's on log F in log x until they stop moving it, then HALLEY_STEPS of Halley's on F in x."""
    sign = where(upper, -1.0, 1.0)  # the sign of dF/dx
    start = _start(a, target, upper)
    log_target = log(target)

    def step(state: list[Real]) -> tuple[list[Real], Truth]:
        x, halley, low, high = state  # (halley: Halley steps taken, 0 while Newton's run; the root's bracket in t)
        value, fac = incomplete_gamma(a, x, upper), prefactor(a, x)
        t = log(x)
        left = (value < target) ^ upper  # the root is right of t
        low, high = where(left, t, low), where(left, high, t)
        newton = t - (log(value) - log_target) / (sign * fac / value)  # log F over its slope in t
        lost = isnan(newton) | isinf(newton)  # (F or its slope underflowed: x is far out)
        inside = ~lost & (newton >= low) & (newton <= high)  # (at the start, x^a / Gamma(a + 1) = p is the root to rounding)
        far = where(left, high, low)  # else halfway to the bracket's far side, or a unit step toward it
        newton = where(inside, newton, where(isinf(far), t + where(left, 1.0, -1.0), 0.5 * (t + far)))
        settled = ~lost & (fabs(newton - t) <= 1e-15 * where(fabs(t) > 1.0, fabs(t), 1.0))
        ratio = sign * (value - target) / fac * x  # F / F' ((value - target) x underflows where p is tiny)
        curvature = -1.0 + (a - 1.0) / x  # F'' / F' (the same for P and Q)
        polished = where(fac == 0.0, x, x - where(isinf(curvature), ratio, ratio / (1.0 - 0.5 * ratio * curvature)))
        in_newton = halley == 0.0
        following = where(in_newton, exp(newton), polished)
        count = where(in_newton, where(settled, 1.0, 0.0), halley + 1.0)
        return [following, count, low, high], (count > HALLEY_STEPS) | (~in_newton & (fac == 0.0))

    unbounded = [Real(float("-inf")), Real(float("inf"))]
    return choose(start < SMALLEST_LOG, lambda: Real(0.0), lambda: iterate([exp(start), Real(0.0), *unbounded], step, NEWTON_STEPS + HALLEY_STEPS)[0])


def _inverse(a: Real, probability: Real, upper: bool) -> Real:
    """gammaincinv (gammainccinv: upper) with SciPy's edges: NaN for NaN, a < 0, a probability outside [0, 1],
    a = 0 or inf inside (0, 1); at probability 0 and 1 the ends 0 and inf. Above 0.9 the other function's
    equation with 1 - probability, as SciPy."""
    at_zero, at_one = (float("inf"), 0.0) if upper else (0.0, float("inf"))
    invalid = isnan(a) | isnan(probability) | (a < 0.0) | (probability < 0.0) | (probability > 1.0)
    ends = (probability == 0.0) | (probability == 1.0)
    edge = invalid | ends | (a == 0.0) | isinf(a)
    value = where(invalid, float("nan"), where(probability == 0.0, at_zero, where(probability == 1.0, at_one, float("nan"))))
    flipped = probability > 0.9
    return choose(edge, lambda: value, lambda: _solve(a, where(flipped, 1.0 - probability, probability), flipped ^ truth(upper)))


def gammaincinv(a: Real, p: Real) -> Real:
    """scipy.special.gammaincinv: x with P(a, x) = p."""
    return _inverse(a, p, upper=False)


def gammainccinv(a: Real, q: Real) -> Real:
    """scipy.special.gammainccinv: x with Q(a, x) = q."""
    return _inverse(a, q, upper=True)
