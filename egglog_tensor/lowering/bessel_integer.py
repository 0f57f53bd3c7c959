"""scipy.special's Bessel functions of the second kind and modified ones of integer order n, yn and kn, in float64
(float32: the float64 value rounded once, as SciPy's loops); n a float64 holding an integer:

- bessel_yn: Cephes' yn, as SciPy 1.17's: Y_-n = (-1)^n Y_n; y0 and y1 for n = 0 and 1; -inf at x = 0 and NaN
  below; else the forward recurrence Y_(k+1) = (2k / x) Y_k - Y_(k-1) from y0 and y1, stopped once a value is not
  finite (Y grows with k: the recurrence is stable).
- bessel_kn: K_-n = K_n; k0 and k1 for n = 0 and 1; inf at x = 0, NaN below; else the forward recurrence
  K_(k+1) = K_(k-1) + (2k / x) K_k (stable: K grows with k) from k0 and k1, or beyond x = 700, where they underflow,
  from k0e and k1e, the result times exp(-x / 2) twice. (SciPy's kn is Amos' zbesk: within a few ULP times n.)
"""

from __future__ import annotations

from collections.abc import Callable

from .bessel import k0, k0e, k1, k1e
from .bessel_jy import y0, y1
from .orthopoly import LIMIT
from .scalarcode import Real, Truth, choose, exp, fabs, floor, isinf, iterate, where

_SCALED = 700.0  # beyond it K's recurrence runs on the scaled k0e, k1e


def _forward(n: Real, x: Real, first: Real, second: Real, step: Callable[[Real, Real, Real], Real]) -> Real:
    """The recurrence's value at order n >= 2 from orders 0 and 1: a_(k+1) = step(k, a_k, a_(k-1)), k = 1 ... n - 1,
    stopped once a value is not finite (Cephes' yn)."""

    def body(state: list[Real]) -> tuple[list[Real], Truth]:
        k, before, value = state
        following = step(k, value, before)
        return [k + 1.0, value, following], (k + 1.0 >= n) | ~(fabs(following) < float("inf"))

    return iterate([Real(1.0), first, second], body, LIMIT)[2]


def bessel_yn(n: Real, x: Real) -> Real:
    """Y_n(x) (Cephes' yn)."""
    m = fabs(n)
    sign = where((n < 0.0) & (m - 2.0 * floor(0.5 * m) == 1.0), -1.0, 1.0)

    def recurrence() -> Real:
        value = _forward(m, x, y0(x), y1(x), lambda k, a, b: 2.0 * k * a / x - b)
        return where(x == 0.0, float("-inf"), where(x < 0.0, float("nan"), value))

    return sign * choose(m == 0.0, lambda: y0(x), lambda: choose(m == 1.0, lambda: y1(x), recurrence))


def bessel_kn(n: Real, x: Real) -> Real:
    """K_n(x), by the forward recurrence."""
    m = fabs(n)

    def recurrence() -> Real:
        scaled = x > _SCALED
        first, second = where(scaled, k0e(x), k0(x)), where(scaled, k1e(x), k1(x))
        value = _forward(m, x, first, second, lambda k, a, b: b + 2.0 * k / x * a)
        value = where(scaled, value * exp(-0.5 * x) * exp(-0.5 * x), value)  # (a subnormal result rounded once)
        return where(x == 0.0, float("inf"), where(x < 0.0, float("nan"), where(isinf(x), 0.0, value)))

    return choose(m == 0.0, lambda: k0(x), lambda: choose(m == 1.0, lambda: k1(x), recurrence))
