"""scipy.special's exponential integrals exp1 E1(x) and expi Ei(x) by SciPy's algorithms (Zhang and Jin's specfun
E1XB and EIX, as xsf's exp1 and expi), in float64 (float32: the float64 value rounded once, as SciPy's loops):

- E1(x): inf at 0; for x <= 1 its power series -gamma - log x + x sum_k (-x)^k k / (k + 1)!(k + 1) (to a relative
  1e-15, at most 25 terms; NaN for x < 0, where log x is), beyond the continued fraction e^-x / (x + 1/(1 + 1/(x + ...)))
  evaluated backwards from its 20 + trunc(80 / x)-th term.
- Ei(x): -inf at 0, -E1(-x) for x < 0, its power series gamma + log x + x sum_k x^k k / (k + 1)!(k + 1) for x <= 40
  (to a relative 1e-15, at most 100 terms), inf at inf, beyond e^x / x times 20 terms of the asymptotic series sum k! / x^k.
"""

from __future__ import annotations

from .digamma import EULER
from .scalarcode import Real, Truth, choose, exp, fabs, iterate, log, trunc, where

TOLERANCE = 1e-15  # specfun's series stop


def _exp1_series(x: Real) -> Real:
    """E1(x) for x <= 1 by its power series."""

    def step(state: list[Real]) -> tuple[list[Real], Truth]:
        k, r, total = state
        r = -r * k * x / ((k + 1.0) * (k + 1.0))
        total = total + r
        return [k + 1.0, r, total], fabs(r) <= fabs(total) * TOLERANCE

    total = iterate([Real(1.0), Real(1.0), Real(1.0)], step, 25)[2]
    return -EULER - log(x) + x * total


def _exp1_continued_fraction(x: Real) -> Real:
    """E1(x) for x > 1 by its continued fraction, from the (20 + trunc(80 / x))-th term back."""

    def step(state: list[Real]) -> tuple[list[Real], Truth]:
        k, t0 = state
        t0 = k / (1.0 + k / (x + t0))
        return [k - 1.0, t0], k <= 1.0

    t0 = iterate([20.0 + trunc(80.0 / x), Real(0.0)], step, 100)[1]
    return exp(-x) * (1.0 / (x + t0))


def exp1(x: Real) -> Real:
    """scipy.special.exp1: E1(x) = int_x^inf e^-t / t dt."""
    return choose(x == 0.0, lambda: Real(float("inf")),
                  lambda: choose(x <= 1.0, lambda: _exp1_series(x), lambda: _exp1_continued_fraction(x)))


def _expi_series(x: Real) -> Real:
    """Ei(x) for 0 < x <= 40 by its power series."""

    def step(state: list[Real]) -> tuple[list[Real], Truth]:
        k, r, total = state
        r = r * k * x / ((k + 1.0) * (k + 1.0))
        total = total + r
        return [k + 1.0, r, total], fabs(r / total) <= TOLERANCE

    total = iterate([Real(1.0), Real(1.0), Real(1.0)], step, 100)[2]
    return EULER + log(x) + x * total


def _expi_asymptotic(x: Real) -> Real:
    """Ei(x) for x > 40: e^x / x (1 + sum_{k <= 20} k! / x^k)."""
    total, r = Real(1.0), Real(1.0)
    for k in range(1, 21):
        r = r * float(k) / x
        total = total + r
    return exp(x) / x * total


def expi(x: Real) -> Real:
    """scipy.special.expi: Ei(x) = -PV int_-x^inf e^-t / t dt."""
    far = lambda: where(x == float("inf"), x, _expi_asymptotic(x))  # noqa: E731  (e^inf / inf would be NaN)
    return choose(x == 0.0, lambda: Real(float("-inf")), lambda: choose(
        x < 0.0, lambda: -exp1(-x), lambda: choose(fabs(x) <= 40.0, lambda: _expi_series(x), far)))
