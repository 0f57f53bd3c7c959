"""scipy.special's orthogonal polynomials of integer degree n by SciPy 1.17's recurrences (orthogonal_eval.pxd's
`_l` loops, which its ufuncs run for an integer n), in float64 scalar code (n a float64 holding an integer; the tracer,
tracing/special_polynomials.py, makes the shifted and scaled ones of these):

- legendre_l: P_{-n-1} for negative n; 1, x for n = 0, 1; where |x| < 1e-5 the power series in x (its floor(n/2) + 1
  terms, stopped once a term is 0); else the recurrence on d_k = P_k - P_{k-1}.
- chebyt_l, chebyu_l: the three-term recurrence b0 = 2x b1 - b2 run |n| + 1 times (T: (b0 - b2) / 2, T_{-n} = T_n;
  U: b0, U_{-1} = 0, U_{-n} = -U_{n-2}).
- genlaguerre_l: NaN for alpha <= -1 or NaN alpha or x; 0 for negative n; the recurrence on the differences,
  times binom(n + alpha, n).
- gegenbauer_l: NaN for NaN alpha or x; 0 for negative n; for alpha = 0 from n = 2 SciPy's hypergeometric form
  Gamma(n) / Gamma(n + 1) / Gamma(0) 2F1(-n, n; 1/2; (1 - x) / 2) = 0 T_n(x) (NaN from n = 172, where Gamma(n)
  overflows, or where T_n(x) does); where |x| < 1e-5 the power series; else the recurrence on the differences, times
  binom(n + 2 alpha - 1, n) (2 alpha / n where |alpha / n| < 1e-8).

The loops run n - 1 (or n + 1) times: SciPy's cost, linear in n.
"""

from __future__ import annotations

from collections.abc import Callable

from .betafunction import beta, binom
from .scalarcode import Real, Truth, choose, fabs, floor, isnan, iterate, real, where

SERIES = 1e-5  # |x| below it: the power series (the recurrence loses digits there)
LIMIT = 2**62  # the loops' step bound: SciPy's run n steps, whatever n
GAMMA_OVERFLOW = 172.0  # Gamma(n) = inf from here (Gegenbauer's alpha = 0: SciPy's Gamma(n) / Gamma(n + 1) is NaN)


def _repeat(steps: Real, state: list[Real], step: Callable[[Real, list[Real]], list[Real]]) -> list[Real]:
    """The state after step(k, state) for k = 1, 2, ..., steps (steps >= 1): an scf.while."""

    def body(values: list[Real]) -> tuple[list[Real], Truth]:
        k, *rest = values
        return [k + 1.0, *step(k, rest)], k >= steps

    return iterate([Real(1.0), *state], body, LIMIT)[1:]


def _differences(steps: Real, d: Real, p: Real, step: Callable[[Real, Real, Real], Real]) -> Real:
    """SciPy's recurrence on the differences d_k = p_k - p_(k-1): d = step(k, d, p), p += d for k = 1 ... steps; p."""

    def advance(k: Real, state: list[Real]) -> list[Real]:
        d = step(k, *state)
        return [d, state[1] + d]

    return _repeat(steps, [d, p], advance)[1]


def _series(a: Real, first: Real, ratio: Callable[[Real], Real]) -> Real:
    """sum_{k=0..a} d_k with d_0 = first, d_(k+1) = d_k ratio(k): SciPy's power series (stopped once a term is 0,
    after which they all are)."""

    def step(values: list[Real]) -> tuple[list[Real], Truth]:
        k, d, p = values
        return [k + 1.0, d * ratio(k), p + d], (k >= a) | (d == 0.0)

    return iterate([Real(0.0), first, Real(0.0)], step, LIMIT)[2]


def _even(a: Real) -> Truth:
    return a == 2.0 * floor(0.5 * a)


def legendre_l(n: Real, x: Real) -> Real:
    """P_n(x), SciPy's eval_legendre_l."""
    m = where(n < 0.0, -n - 1.0, n)

    def series() -> Real:
        a = floor(0.5 * m)
        sign = where(_even(a), 1.0, -1.0)
        first = where(m == 2.0 * a, sign * -2.0 / beta(a + 1.0, real(-0.5)), sign * 2.0 * x / beta(a + 1.0, real(0.5)))
        return _series(a, first, lambda k: -2.0 * x * x * (a - k) * (2.0 * m + 1.0 - 2.0 * a + 2.0 * k)
                       / ((m + 1.0 - 2.0 * a + 2.0 * k) * (m + 2.0 - 2.0 * a + 2.0 * k)))

    def recurrence() -> Real:
        return _differences(m - 1.0, x - 1.0, x, lambda k, d, p: ((2.0 * k + 1.0) / (k + 1.0)) * (x - 1.0) * p + (k / (k + 1.0)) * d)

    general = lambda: choose(fabs(x) < SERIES, series, recurrence)  # noqa: E731
    return choose(m == 0.0, lambda: Real(1.0), lambda: choose(m == 1.0, lambda: x, general))


def _chebyshev(k: Real, x: Real) -> list[Real]:
    """(b0, b2) after b0 = 2x b1 - b2 from (b2, b1, b0) = (0, -1, 0), k + 1 times (SciPy's Chebyshev loops)."""
    b2, b1, b0 = _repeat(k + 1.0, [Real(0.0), Real(-1.0), Real(0.0)], lambda _, s: [s[1], s[2], 2.0 * x * s[2] - s[1]])
    return [b0, b2]


def chebyt_l(n: Real, x: Real) -> Real:
    """T_n(x), SciPy's eval_chebyt_l."""
    b0, b2 = _chebyshev(fabs(n), x)
    return (b0 - b2) / 2.0


def chebyu_l(n: Real, x: Real) -> Real:
    """U_n(x), SciPy's eval_chebyu_l."""
    b0 = _chebyshev(where(n < -1.0, -n - 2.0, fabs(n)), x)[0]
    return where(n == -1.0, 0.0, where(n < -1.0, -b0, b0))


def genlaguerre_l(n: Real, alpha: Real, x: Real) -> Real:
    """L_n^alpha(x), SciPy's eval_genlaguerre_l."""

    def recurrence() -> Real:
        d = -x / (alpha + 1.0)
        p = _differences(n - 1.0, d, d + 1.0, lambda k, d, p: -x / (k + alpha + 1.0) * p + (k / (k + alpha + 1.0)) * d)
        return binom(n + alpha, n) * p

    small = where(n < 0.0, 0.0, where(n == 0.0, 1.0, -x + alpha + 1.0))
    value = choose(n >= 2.0, recurrence, lambda: small)
    return where((alpha <= -1.0) | isnan(alpha) | isnan(x), float("nan"), value)


def gegenbauer_l(n: Real, alpha: Real, x: Real) -> Real:
    """C_n^alpha(x), SciPy's eval_gegenbauer_l."""

    def series() -> Real:
        a = floor(0.5 * n)
        first = where(_even(a), 1.0, -1.0) / beta(alpha, 1.0 + a)
        first = where(n == 2.0 * a, first / (a + alpha), first * 2.0 * x)
        return _series(a, first, lambda k: -4.0 * x * x * (a - k) * (-a + alpha + k + n)
                       / ((n + 1.0 - 2.0 * a + 2.0 * k) * (n + 2.0 - 2.0 * a + 2.0 * k)))

    def recurrence() -> Real:
        p = _differences(n - 1.0, x - 1.0, x, lambda k, d, p: (2.0 * (k + alpha) / (k + 2.0 * alpha)) * (x - 1.0) * p
                         + (k / (k + 2.0 * alpha)) * d)
        return where(fabs(alpha / n) < 1e-8, 2.0 * alpha / n * p, binom(n + 2.0 * alpha - 1.0, n) * p)

    at_zero = lambda: where(n >= GAMMA_OVERFLOW, float("nan"), 0.0 * chebyt_l(n, x))  # noqa: E731
    general = lambda: choose(alpha == 0.0, at_zero, lambda: choose(fabs(x) < SERIES, series, recurrence))  # noqa: E731
    small = where(n < 0.0, 0.0, where(n == 0.0, 1.0, 2.0 * alpha * x))
    value = choose(n >= 2.0, general, lambda: small)
    return where(isnan(alpha) | isnan(x), float("nan"), value)
