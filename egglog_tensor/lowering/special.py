"""Special functions' scalar semantics: np.i0, the modified Bessel function of the first kind of order 0.

I0(a), a = |x|, in float64: up to SERIES_END its power series sum_k t^k / (k!)^2 with t = a^2 / 4 (positive
terms, no cancellation), plus t's rounding error (which the series amplifies about a / 4-fold) times the
series' derivative, from an FMA's exact a^2; beyond, the asymptotic expansion e^a sum_k c_k a^-k / sqrt(2 pi a),
c_k = prod_{j <= k} (2j - 1)^2 / (8j), whose truncation error is below e^-2a. Within 3 ulp of I0 on
[0, 700], as NumPy's Cephes Chebyshev series. e^a is formed last, as NumPy's: inf where it overflows
(a > 709.78), NaN at +-inf (inf / inf) and NaN. float32: the float64 value rounded, and inf where
NumPy's float32 e^a overflows (a > FLOAT32_EXP_END; NaN at +-inf), as NumPy computes float32 i0 in float32.
"""

from __future__ import annotations

import math as pymath
from fractions import Fraction

from mlir import ir
from mlir.dialects import arith, math

from . import scalar

SERIES_END = 20.0  # the power series below (its 41 terms reach 1e-19 of the sum), the expansion above (e^-40)
FLOAT32_EXP_END = 88.72283172607421875  # the largest float32 whose float32 exp is finite
# (the coefficients highest power first, scalarcode.horner's order)
_SERIES = [1 / pymath.factorial(k) ** 2 for k in range(40, -1, -1)]
_SLOPE = [(k + 1) / pymath.factorial(k + 1) ** 2 for k in range(39, -1, -1)]  # the series' derivative in t


def _expansion(terms: int) -> list[float]:
    c, out = Fraction(1), [1.0]
    for j in range(1, terms):
        c *= Fraction((2 * j - 1) ** 2, 8 * j)
        out.append(float(c))
    return out


_EXPANSION = _expansion(41)[::-1]


def i0(args: list[ir.Value], dtype: str) -> ir.Value:
    """np.i0 of a float32 or float64 x (module docstring)."""
    from .scalarcode import Real, horner  # (here: scalarcode imports scalar, which imports this module)

    (x,) = args
    a = math.absf(scalar.cast(x, dtype, "float64"))
    quarter = scalar.constant(0.25, "float64")
    square = arith.mulf(a, a)
    t, error = arith.mulf(square, quarter), arith.mulf(math.fma(a, a, arith.negf(square)), quarter)
    series = arith.addf(horner(_SERIES, Real(t)).value, arith.mulf(error, horner(_SLOPE, Real(t)).value))
    width = math.sqrt(arith.mulf(scalar.constant(2 * pymath.pi, "float64"), a))
    scaled = arith.divf(horner(_EXPANSION, Real(arith.divf(scalar.constant(1.0, "float64"), a))).value, width)
    value = arith.select(arith.cmpf(arith.CmpFPredicate.OLE, a, scalar.constant(SERIES_END, "float64")),
                         series, arith.mulf(math.exp(a), scaled))
    if dtype == "float64":
        return value
    overflow = arith.divf(scalar.constant(float("inf"), "float64"), math.sqrt(a))
    value = arith.select(arith.cmpf(arith.CmpFPredicate.OGT, a, scalar.constant(FLOAT32_EXP_END, "float64")), overflow, value)
    return scalar.cast(value, "float64", dtype)
