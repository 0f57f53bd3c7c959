"""scipy.special's Bessel functions of the second kind and modified ones of integer order n, yn and kn, in float64
(float32: the float64 value rounded once, as SciPy's loops); n a float64 holding an integer:

- bessel_yn: Cephes' yn, as SciPy 1.17's: Y_-n = (-1)^n Y_n; y0 and y1 for n = 0 and 1; -inf at x = 0 and NaN
  below; else the forward recurrence Y_(k+1) = (2k / x) Y_k - Y_(k-1) from y0 and y1, stopped once a value is not
  finite (Y grows with k: the recurrence is stable).
- bessel_jn: J_-n = J_n(-x) = (-1)^n J_n; j0 and j1 for n = 0 and 1; where |n| < |x| the forward recurrence
  J_(k+1) = (2k / x) J_k - J_(k-1) from j0 and j1 (stable there), else Miller's backward recurrence normalized by
  J_0 + 2 (J_2 + J_4 + ...) = 1 (SciPy's jv is Amos' zbesj: within 1600 eps of max(|J_n|, the envelope) of mpmath,
  these within 64 + |n| + |x|: the j0 and j1 ops' phase x - pi/4 is rounded as Cephes').
- bessel_kn: K_-n = K_n; k0 and k1 for n = 0 and 1; inf at x = 0, NaN below; else the forward recurrence
  K_(k+1) = K_(k-1) + (2k / x) K_k (stable: K grows with k) from k0 and k1, or beyond x = 700, where they underflow,
  from k0e and k1e, the result times exp(-x / 2) twice; bessel_kne: e^x K_n, from k0e and k1e (NaN at inf, Amos'). (SciPy's kn is Amos' zbesk: within a few ULP times n.)
"""

from __future__ import annotations

from collections.abc import Callable

from .bessel import i0e, i1e, k0, k0e, k1, k1e
from .bessel_jy import j0, j1, y0, y1
from .orthopoly import LIMIT
from .scalarcode import Real, Truth, choose, exp, fabs, floor, isinf, isnan, iterate, sqrt, where

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


def _bessel_k(n: Real, x: Real, exponentially_scaled: bool) -> Real:
    """K_n(x) (e^x K_n(x): exponentially_scaled) by the forward recurrence, on the scaled k0e, k1e where the result is
    scaled or x > 700 (there unscaled by exp(-x / 2) twice: a subnormal result rounded once)."""
    m = fabs(n)
    first_order = (k0e, k1e) if exponentially_scaled else (k0, k1)

    def recurrence() -> Real:
        scaled = x > _SCALED
        if exponentially_scaled:
            value = _forward(m, x, k0e(x), k1e(x), lambda k, a, b: b + 2.0 * k / x * a)
        else:
            value = _forward(m, x, where(scaled, k0e(x), k0(x)), where(scaled, k1e(x), k1(x)), lambda k, a, b: b + 2.0 * k / x * a)
            value = where(scaled, value * exp(-0.5 * x) * exp(-0.5 * x), value)
        at_infinity = float("nan") if exponentially_scaled else 0.0  # (Amos' kve: NaN)
        return where(x == 0.0, float("inf"), where(x < 0.0, float("nan"), where(isinf(x), at_infinity, value)))

    return choose(m == 0.0, lambda: first_order[0](x), lambda: choose(m == 1.0, lambda: first_order[1](x), recurrence))


def bessel_kn(n: Real, x: Real) -> Real:
    """K_n(x)."""
    return _bessel_k(n, x, False)


def bessel_kne(n: Real, x: Real) -> Real:
    """e^x K_n(x) (scipy.special.kve at integral orders)."""
    return _bessel_k(n, x, True)


_RESCALE, _RESCALED = 1e250, 1e-250  # Miller's recurrence's values scaled down past the first


def _backward(n: Real, x: Real, m: Real, sign: float) -> list[Real]:
    """Miller's backward recurrence a_(k-1) = (2k / x) a_k + sign a_(k+1) from a_(m+1) = 0, a_m = 1 (m even): (a_n,
    a_0, a_0 + 2 (a_2 + a_4 + ...)), all rescaled by 1e-250 whenever a value exceeds 1e250 (their ratios are the
    functions' where m is far enough beyond n and x that a_m's own error has died out)."""

    def body(state: list[Real]) -> tuple[list[Real], Truth]:
        k, following, value, total, at_n = state
        before = 2.0 * k / x * value + sign * following
        k = k - 1.0
        at_n = where(k == n, before, at_n)
        even = k == 2.0 * floor(0.5 * k)
        total = total + where(k == 0.0, before, where(even, 2.0 * before, 0.0))
        scale = where(fabs(before) > _RESCALE, _RESCALED, 1.0)
        return [k, value * scale, before * scale, total * scale, at_n * scale], k <= 0.0

    k, _, first, total, at_n = iterate([m, Real(0.0), Real(1.0), Real(2.0), Real(0.0)], body, LIMIT)
    return [at_n, first, total]


def _start(order: Real) -> Real:
    """Miller's starting order for orders and arguments up to `order`: the even m = order + 30 + sqrt(160 order)."""
    return 2.0 * floor(0.5 * (order + 30.0 + sqrt(160.0 * order)))


def bessel_jn(n: Real, x: Real) -> Real:
    """J_n(x) of integer n: j0, j1 for |n| = 0, 1; the forward recurrence from j0 and j1 where |n| < |x|, else Miller's
    backward recurrence (J_n over J_0 + 2 (J_2 + J_4 + ...) = 1); J_-n = J_n(-x) = (-1)^n J_n; 0 at x = 0 (1 for
    n = 0), NaN at +-inf and NaN."""
    m, t = fabs(n), fabs(x)
    odd = m - 2.0 * floor(0.5 * m) == 1.0
    sign = where(odd & ((n < 0.0) ^ (x < 0.0)), -1.0, 1.0)

    def higher() -> Real:
        forward = lambda: _forward(m, t, j0(t), j1(t), lambda k, a, b: 2.0 * k / t * a - b)  # noqa: E731
        value = choose(m < t, forward, lambda: _miller_j(m, where(t > 0.0, t, 1.0)))
        return where(t == 0.0, 0.0, where(isinf(t) | isnan(t), float("nan"), value))

    return sign * choose(m == 0.0, lambda: j0(t), lambda: choose(m == 1.0, lambda: j1(t), higher))


def _miller_j(n: Real, x: Real) -> Real:
    """J_n(x) for 0 < x <= n: Miller's a_n over a_0 + 2 (a_2 + a_4 + ...) (= 1 for J)."""
    at_n, _, total = _backward(n, x, _start(n), -1.0)
    return at_n / total


def bessel_ive(n: Real, x: Real) -> Real:
    """e^-|x| I_n(x) of integer n: i0e, i1e for |n| = 0, 1; else Miller's backward recurrence I_(k-1) = (2k / x) I_k
    + I_(k+1) from beyond max(|n|, |x|), I_n / I_0 times i0e(x); I_-n = I_n, I_n(-x) = (-1)^n I_n(x); 0 at x = 0, NaN
    at +-inf (Amos') and NaN."""
    m, t = fabs(n), fabs(x)
    sign = where((x < 0.0) & (m - 2.0 * floor(0.5 * m) == 1.0), -1.0, 1.0)

    def higher() -> Real:
        safe = where((t > 0.0) & (t < float("inf")), t, 1.0)
        at_n, first, _ = _backward(m, safe, _start(where(m > safe, m, safe)), 1.0)
        value = at_n / first * i0e(safe)
        return where(t == 0.0, 0.0, where(isinf(t) | isnan(t), float("nan"), value))

    return sign * choose(m == 0.0, lambda: i0e(t), lambda: choose(m == 1.0, lambda: i1e(t), higher))
