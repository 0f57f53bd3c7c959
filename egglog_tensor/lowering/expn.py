"""scipy.special.expn, the generalized exponential integral E_n(x) = int_1^inf e^(-xt) / t^n dt of an integer order,
by SciPy's algorithm (Cephes' expn, as SciPy 1.17's), in float64 (float32: the float64 value rounded once, as SciPy's
loops). n is truncated to an integer as SciPy's cast does (NaN where that cast has no int: NaN, infinite or beyond
2^31; NaN for n < 0 or x < 0 and at NaN); 0 beyond MAXLOG; at x = 0 inf for n < 2, else 1 / (n - 1); e^-x / x for
n = 0; for n > 50 the asymptotic expansion in 1/n (DLMF 8.20(ii): e^-x / (x + n) sum_k A_k(x / n) / (n (1 + x/n)^2)^k,
A_k by their recurrence, up to 13 terms); else for x > 1 the continued fraction DLMF 8.19.17, its convergents
rescaled when they grow beyond 2^57, and for x <= 1 the power series DLMF 8.19.8 with psi(n) summed.
"""

from __future__ import annotations

import math as pymath
from fractions import Fraction

from .digamma import EULER
from .scalarcode import Real, Truth, choose, entry, exp, fabs, fmod, horner, iterate, log, table, trunc, truth, where

MACHEP = 2.0**-53
MAXLOG = 7.09782712893383996843e2  # log(DBL_MAX): e^-x underflows beyond
BIG = 1.44115188075855872e17  # 2^57: the continued fraction's convergents rescaled beyond it
LARGE_N = 50  # the asymptotic expansion above it


def _expansion_polynomials(count: int) -> list[tuple[float, ...]]:
    """A_k(l) for k < count, highest power first: A_0 = A_1 = 1, A_(k+1) = (1 - 2kl) A_k + l (l + 1) A_k'."""
    polynomials = [[1], [1]]  # (lowest power first while built)
    for k in range(1, count - 1):
        a = polynomials[-1]
        derivative = [i * c for i, c in enumerate(a)][1:]
        following = [0] * (len(a) + 1)
        for i, c in enumerate(a):
            following[i] += c
            following[i + 1] -= 2 * k * c
        for i, c in enumerate(derivative):
            following[i + 1] += c
            following[i + 2] += c
        polynomials.append(following)
    return [tuple(float(c) for c in reversed(p)) for p in polynomials]


_A = _expansion_polynomials(13)
# 1 / (n - 1)! for n <= LARGE_N (Cephes' rgamma(n) there), n = 0 unused
_RECIPROCAL_FACTORIAL = [0.0] + [float(Fraction(1, pymath.factorial(n - 1))) for n in range(1, LARGE_N + 1)]


def _large_n(n: Real, x: Real) -> Real:
    """E_n(x) for n > 50 by the asymptotic expansion (0 where its e^-x factor underflows)."""
    ratio = x / n
    multiplier = 1.0 / n / (ratio + 1.0) / (ratio + 1.0)
    factor = exp(-ratio * n) / (ratio + 1.0) / n
    fac = multiplier
    total = 1.0 + fac
    done = truth(False)
    for coefficients in _A[2:]:
        fac = fac * multiplier
        term = fac * horner(coefficients, ratio)
        total = where(done, total, total + term)
        done = done | (fabs(term) < MACHEP * fabs(total))
    return where(factor == 0.0, 0.0, factor * total)


def _continued_fraction(n: Real, x: Real) -> Real:
    """E_n(x) for x > 1: the continued fraction's convergents p_k / q_k until two agree to MACHEP, times e^-x."""

    def step(state: list[Real]) -> tuple[list[Real], Truth]:
        k, pkm2, pkm1, qkm2, qkm1, answer = state
        k = k + 1.0
        odd = fmod(k, 2.0) == 1.0
        yk, xk = where(odd, 1.0, x), where(odd, n + 0.5 * (k - 1.0), 0.5 * k)
        pk, qk = pkm1 * yk + pkm2 * xk, qkm1 * yk + qkm2 * xk
        r = pk / where(qk != 0.0, qk, 1.0)
        t = where(qk != 0.0, fabs((answer - r) / r), 1.0)
        answer = where(qk != 0.0, r, answer)
        scale = where(fabs(pk) > BIG, 1.0 / BIG, 1.0)
        return [k, pkm1 * scale, pk * scale, qkm1 * scale, qk * scale, answer], ~(t > MACHEP)

    start = [Real(1.0), Real(1.0), Real(1.0), x, x + n, 1.0 / (x + n)]
    return iterate(start, step, 100000)[5] * exp(-x)


def _series(n: Real, x: Real) -> Real:
    """E_n(x) for 0 < x <= 1: (-x)^(n-1) psi(n) / (n-1)! - sum_k (-x)^k / (k! (k + 1 - n)) (the k = n - 1 term left out)."""

    def harmonic(state: list[Real]) -> tuple[list[Real], Truth]:
        i, psi = state
        return [i + 1.0, psi + 1.0 / i], ~(i + 1.0 < n)

    psi = choose(n > 1.0, lambda: iterate([Real(1.0), -EULER - log(x)], harmonic, LARGE_N)[1], lambda: -EULER - log(x))

    def step(state: list[Real]) -> tuple[list[Real], Truth]:
        xk, yk, pk, answer = state
        xk = xk + 1.0
        yk = yk * -x / xk
        pk = pk + 1.0
        answer = where(pk != 0.0, answer + yk / where(pk != 0.0, pk, 1.0), answer)
        t = where(answer != 0.0, fabs(yk / answer), 1.0)
        return [xk, yk, pk, answer], ~(t > MACHEP)

    first = where(n == 1.0, 0.0, 1.0 / (1.0 - n))
    answer = iterate([Real(0.0), Real(1.0), 1.0 - n, first], step, 1000)[3]
    power = x ** (n - 1.0) * where(fmod(n - 1.0, 2.0) == 1.0, -1.0, 1.0)  # (-x)^(n-1)
    return power * psi * entry(table([_RECIPROCAL_FACTORIAL]), Real(0.0), n) - answer


def expn(order: Real, x: Real) -> Real:
    """scipy.special.expn (module docstring)."""
    n = trunc(order)
    invalid = ~((n >= 0.0) & (n < 2.0**31)) | ~(x >= 0.0)

    def regular() -> Real:
        return choose(n == 0.0, lambda: exp(-x) / x, lambda: choose(
            n > LARGE_N, lambda: _large_n(n, x), lambda: choose(x > 1.0, lambda: _continued_fraction(n, x), lambda: _series(n, x))))

    at_zero = where(n < 2.0, float("inf"), 1.0 / (n - 1.0))
    edge = invalid | (x > MAXLOG) | (x == 0.0)
    return choose(edge, lambda: where(invalid, float("nan"), where(x == 0.0, at_zero, 0.0)), regular)
