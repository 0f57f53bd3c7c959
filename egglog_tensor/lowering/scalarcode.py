"""Float64 scalar code written with Python's operators, for special functions whose algorithms are series,
continued fractions and branches (lowering/incomplete.py): `Real` wraps an f64 SSA value (+ - * / ** and
comparisons build arith ops; comparisons are C's: ordered, false on NaN, except !=), `Truth` an i1 (& | ~);
`iterate` is an scf.while loop with a step limit, `choose` an scf.if that runs only the branch taken (a
branch can hold loops), `fold` an scf.for over a constant table's row. Built at the current insertion point, as a linalg body's scalar code is."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Union

import numpy as np
from mlir import ir
from mlir.dialects import arith, math, scf, tensor

from . import scalar

F = arith.CmpFPredicate
Operand = Union["Real", float]


class Truth:
    """An i1 value: a comparison's result, combined with & | ~."""

    __slots__ = ("value",)

    def __init__(self, value: ir.Value) -> None:
        self.value = value

    def __and__(self, other: Truth) -> Truth:
        return Truth(arith.andi(self.value, other.value))

    def __or__(self, other: Truth) -> Truth:
        return Truth(arith.ori(self.value, other.value))

    def __xor__(self, other: Truth) -> Truth:
        return Truth(arith.xori(self.value, other.value))

    def __invert__(self) -> Truth:
        return self ^ truth(True)


SCALAR_POW = "et.scalar_pow"  # the attribute marking a pow() of scalar code (Real.__pow__)


def truth(value: bool) -> Truth:
    return Truth(arith.constant(ir.IntegerType.get_signless(1), int(value)))


def _arithmetic(op: Callable[..., ir.Value], swapped: bool = False) -> Callable[[Real, Operand], Real]:
    """An operator method building `op` of self and other (other and self when swapped)."""
    return lambda self, other: Real(op(*((real(other).value, self.value) if swapped else (self.value, real(other).value))))


def _comparison(predicate: F) -> Callable[[Real, Operand], Truth]:
    return lambda self, other: Truth(arith.cmpf(predicate, self.value, real(other).value))


class Real:
    """An f64 value with Python's arithmetic and comparison operators."""

    __slots__ = ("value",)
    __hash__ = None  # type: ignore[assignment]  # (== builds a comparison)

    def __init__(self, value: ir.Value | float) -> None:
        self.value = value if isinstance(value, ir.Value) else scalar.constant(float(value), "float64")

    __add__, __radd__ = _arithmetic(arith.addf), _arithmetic(arith.addf, True)
    __sub__, __rsub__ = _arithmetic(arith.subf), _arithmetic(arith.subf, True)
    __mul__, __rmul__ = _arithmetic(arith.mulf), _arithmetic(arith.mulf, True)
    __truediv__, __rtruediv__ = _arithmetic(arith.divf), _arithmetic(arith.divf, True)
    def __pow__(self, other: Operand) -> Real:
        """pow(), marked as scalar code's (SCALAR_POW): a GPU target computes it as e^(y log x) in float64, the accuracy
        the function's own bounds allow (a user's float64 np.power there is refused: lowering/gpu/devmath.py)."""
        value = math.powf(self.value, real(other).value)
        value.owner.attributes[SCALAR_POW] = ir.UnitAttr.get()
        return Real(value)

    __lt__, __le__, __gt__, __ge__ = (_comparison(p) for p in (F.OLT, F.OLE, F.OGT, F.OGE))
    __eq__, __ne__ = _comparison(F.OEQ), _comparison(F.UNE)  # type: ignore[assignment]  # (!= is true on NaN, as C's)

    def __neg__(self) -> Real:
        return Real(arith.negf(self.value))


def real(x: Operand) -> Real:
    return x if isinstance(x, Real) else Real(x)


def _unary(op: Callable[[ir.Value], ir.Value]) -> Callable[[Operand], Real]:
    return lambda x: Real(op(real(x).value))


exp, log, sqrt, fabs, erf, erfc, sin, cos, tan, atan, floor, trunc = (
    _unary(f) for f in (math.exp, math.log, math.sqrt, math.absf, math.erf, math.erfc, math.sin, math.cos, math.tan, math.atan,
                        math.floor, math.trunc))
log1p, expm1 = _unary(scalar.log1p), _unary(scalar.expm1)  # accurate near 0 (convert-math-to-llvm's are not)
lgamma, tgamma = (_unary(lambda x, name=name: scalar.libm_call(name, x, "float64")) for name in ("lgamma", "tgamma"))


def two_sum(a: Real, b: Real) -> tuple[Real, Real]:
    """a + b and its rounding error (Knuth's TwoSum)."""
    s = a + b
    z = s - a
    return s, (a - (s - z)) + (b - z)


def two_product(a: Real, b: Real) -> tuple[Real, Real]:
    """a b and its rounding error (an FMA's)."""
    p = a * b
    return p, Real(math.fma(a.value, b.value, (-p).value))


def atan2(y: Real, x: Operand) -> Real:
    """C's atan2: the angle of the point (x, y)."""
    return Real(math.atan2(y.value, real(x).value))


def fmod(x: Real, y: Operand) -> Real:
    """C's fmod: x - trunc(x / y) y, exactly (arith.remf)."""
    return Real(arith.remf(x.value, real(y).value))


def horner(coefficients: Sequence[float], x: Real) -> Real:
    """sum c_i x^(n-1-i): a polynomial, its coefficients highest power first."""
    total = Real(coefficients[0])
    for c in coefficients[1:]:
        total = total * x + c
    return total


def chebyshev(coefficients: Sequence[float], x: Real) -> Real:
    """Cephes' chbevl: sum' c_i T_i(x / 2) by Clenshaw's recurrence, its coefficients highest order first."""
    b0, b1, b2 = Real(coefficients[0]), Real(0.0), Real(0.0)
    for c in coefficients[1:]:
        b2, b1 = b1, b0
        b0 = x * b1 - b2 + c
    return 0.5 * (b0 - b2)


def isnan(x: Real) -> Truth:
    return x != x


def isinf(x: Real) -> Truth:
    return fabs(x) == float("inf")


def copysign(magnitude: Operand, sign: Real) -> Real:
    return Real(math.copysign(real(magnitude).value, sign.value))


def where(condition: Truth, a: Operand, b: Operand) -> Real:
    """a where condition holds, else b (both computed: arith.select)."""
    return Real(arith.select(condition.value, real(a).value, real(b).value))


def choose(condition: Truth, then: Callable[[], Real], otherwise: Callable[[], Real]) -> Real:
    """then() where condition holds, else otherwise(): an scf.if, so only the branch taken runs."""
    f64 = ir.F64Type.get()
    branch = scf.IfOp(condition.value, [f64], has_else=True)
    for block, build in ((branch.then_block, then), (branch.else_block, otherwise)):
        with ir.InsertionPoint(block):
            scf.YieldOp([real(build()).value])
    return Real(branch.results[0])


def iterate(state: Sequence[Operand], step: Callable[[list[Real]], tuple[Sequence[Operand], Truth]], limit: int) -> list[Real]:
    """The state after step(state) -> (next state, done) ran until done, or `limit` times (an scf.while)."""
    i64, i1, f64 = ir.IntegerType.get_signless(64), ir.IntegerType.get_signless(1), ir.F64Type.get()
    types = [i64, i1] + [f64] * len(state)
    start = [arith.constant(i64, 0), arith.constant(i1, 1), *(real(s).value for s in state)]
    loop = scf.WhileOp(types, start)
    before = loop.before.blocks.append(*types)
    with ir.InsertionPoint(before):
        count, going = before.arguments[0], before.arguments[1]
        more = arith.andi(going, arith.cmpi(arith.CmpIPredicate.slt, count, arith.constant(i64, limit)))
        scf.ConditionOp(more, list(before.arguments))
    after = loop.after.blocks.append(*types)
    with ir.InsertionPoint(after):
        following, done = step([Real(v) for v in list(after.arguments)[2:]])
        count = arith.addi(after.arguments[0], arith.constant(i64, 1))
        scf.YieldOp([count, (~done).value, *(real(s).value for s in following)])
    return [Real(v) for v in list(loop.results)[2:]]


def table(rows: Sequence[Sequence[float]]) -> ir.Value:
    """A constant 2-D f64 tensor of `rows` (bufferized to a global), for `fold` to read."""
    data = np.asarray(rows, dtype=np.float64)
    return arith.constant(ir.RankedTensorType.get(list(data.shape), ir.F64Type.get()), ir.DenseElementsAttr.get(data))


def entry(values: ir.Value, row: Real, column: Real) -> Real:
    """values[row, column] of a `table` (row and column integral and in range)."""
    index, i64 = ir.IndexType.get(), ir.IntegerType.get_signless(64)
    at = [arith.index_cast(index, arith.fptosi(i64, v.value)) for v in (row, column)]
    return Real(tensor.extract(values, at))


def fold(values: ir.Value, row: Real, start: Operand, step: Callable[[Real, Real], Real]) -> Real:
    """step(...step(step(start, values[row, 0]), values[row, 1])..., values[row, -1]): an scf.for along a row of `table`."""
    index = ir.IndexType.get()
    width = ir.RankedTensorType(values.type).shape[1]
    i = arith.index_cast(index, arith.fptosi(ir.IntegerType.get_signless(64), row.value))
    loop = scf.ForOp(arith.constant(index, 0), arith.constant(index, width), arith.constant(index, 1), [real(start).value])
    with ir.InsertionPoint(loop.body):
        element = Real(tensor.extract(values, [i, loop.induction_variable]))
        scf.YieldOp([step(Real(loop.inner_iter_args[0]), element).value])
    return Real(loop.results[0])


def log1pmx(x: Real) -> Real:
    """log(1 + x) - x: by its series where |x| < 1/2 (no cancellation), else log1p(x) - x."""

    def series() -> Real:
        def step(state: list[Real]) -> tuple[list[Real], Truth]:
            n, power, total = state
            power = power * -x
            term = power / n
            total = total + term
            return [n + 1.0, power, total], fabs(term) < 2.0**-53 * fabs(total)

        return iterate([Real(2.0), x, Real(0.0)], step, 500)[2]

    return choose(fabs(x) < 0.5, series, lambda: log1p(x) - x)
