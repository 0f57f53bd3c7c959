"""`exp` (float32 and float64) and float32 `tanh` computed inline: range reduction and a polynomial
(or, for tanh under fastmath, a rational function), as arith/math ops in the loop body.

glibc's vector `expf` (libmvec, the vecmath stage) costs 0.37 ns per element on one core of
an AMD EPYC (Zen 4, 2.6 GHz), and each call spills the loop's live vectors. Written as ordinary ops,
the same function is sixteen vector instructions that LLVM schedules with the rest of the
loop: 1.58x faster (in cache: `benchmarks/families.py --only exp`; 2.0x NumPy's), and more
accurate. float64: 1.12x libmvec's `exp` (`--only exp64`), 1 ULP instead of 3. The `math` stage
rewrites every float32 and float64 (scalar or vector) `math.exp` and float32 `math.tanh` this
way; the other functions keep libmvec.

exp(x): clamp x to [-104, 89] ([-746, 710] for float64: past total underflow and overflow; NaN
passes: the compares are unordered), k = round(x / ln 2) with the 1.5 * 2^23 (2^52) shifter (k
lands in the low mantissa bits: no float-to-int conversion, which NaN would make poison),
r = x - k ln 2 in two FMA steps (fdlibm's ln 2 = hi + lo split: the first step is exact), exp(r)
by a polynomial with FMAs (float32: degree 6, minimax relative error 0.06 ULP, fitted with Lawson's
algorithm; float64: Taylor to degree 13, below 0.05 ULP), then times 2^k rounded once (a subnormal
result too; 2^128 (2^1024) overflows to inf as it must): with AVX-512 one vscalefps/pd (LLVM's
ldexp; 1.1-1.17x faster exp than the alternative, softmax 1.09x, ew_chain 1.27x in cache, paired
A/B), elsewhere 2^floor(k/2) * 2^ceil(k/2) from exponent bits, both factors normal for every k of
the clamped range. Both give the same bits. NaN in, NaN out; exp(0) = 1 exactly.

float32 tanh(x): below |x| = 0.7, x + x^3 P(x^2) (minimax relative error 0.04 ULP; the x term
dominates, so its rounding is the result's); from there on 1 - 2 / (exp(2|x|) + 1) with the exp
above (|x| limited to 10, where float32 tanh is 1: no overflow; 2/(e+1) <= 0.4, so the subtraction
loses nothing); x's sign copied onto either (-0.0 stays -0.0, NaN passes). Max error 1 ULP over
every float32 (1.06 ULP from the float64 reference), as libmvec's. In L2 on one core tanh takes
25.6 cycles per 16 elements against libmvec's 28.5 and gelu 32 against 32 (with the interleaving
of the interleave stage: 41 without); over 4096x4096, where libmvec's calls also keep the second
core from helping as much, gelu is 1.26x faster on two cores, 1.06x on one
(`benchmarks/families.py --only tanh`).

tanh(x) in kernels compiled with fastmath=True (the function carries et.fastmath): x P(x^2) / Q(x^2)
on [-9, 9] (minimax relative error 0.4 ULP for these float32 coefficients), +-1 beyond. The float32
evaluation of the two polynomials adds up to ~4 ULP near |x| = 4..9, so it is fastmath only: 17
cycles per 16 elements in L2, gelu 26 (`benchmarks/families.py --only fasttanh`: 1.19-1.47x).

Accuracy (max ULP distance from an np.longdouble reference rounded to the result's dtype, over the
inputs of tests/test_vecmath.py; libmvec's in parentheses): exp 1 (3) for both dtypes, float32 tanh
1 (1), fast tanh 4 (1); MAX_ULP in vecmath.py and FAST_MAX_ULP here are the bounds tested. Each op is IEEE
arithmetic with its one rounding, and the vector loop and its scalar remainder run the same code
(equal inputs give equal results wherever they sit).
"""

from __future__ import annotations

import math as pymath
from collections.abc import Callable
from dataclasses import dataclass
from typing import ClassVar

from mlir import ir
from mlir.dialects import arith
from mlir.dialects import llvm as llvmd
from mlir.dialects import math as mathd

from ...target import Target
from ..annotations import FASTMATH
from .stage import Stage



@dataclass(frozen=True)
class _Format:
    """What exp needs to know of a float format: its bits, and the constants of its reduction."""

    bits: int
    mantissa: int  # explicit mantissa bits; the exponent field starts above them
    bias: int
    low: float  # exp's input clamp: below, the result rounds to 0; above, it overflows to inf
    high: float
    ln2_hi: float  # fdlibm's split of ln 2: x - k * ln2_hi is exact for the k of clamped x
    ln2_lo: float
    poly: tuple[float, ...]  # exp(r) on [-ln(2)/2, ln(2)/2], highest coefficient first

    @property
    def shifter(self) -> float:
        """x + shifter rounds x to an integer held in the low mantissa bits (|x| < 2^(mantissa-1))."""
        return 1.5 * 2.0**self.mantissa


_FORMATS = {
    # 1 + r + c2 r^2 + ... + c6 r^6: minimax relative error (Lawson's algorithm), 0.06 ULP as float32.
    "f32": _Format(32, 23, 127, -104.0, 89.0, 0.693145751953125, 1.42860682030941723212e-6,
                   (0.001381461275741458, 0.008368710055947304, 0.04166838899254799, 0.1666652113199234,
                    0.4999999403953552, 1.0, 1.0)),
    # Taylor to r^13: truncation error below 0.05 ULP.
    "f64": _Format(64, 52, 1023, -746.0, 710.0, 6.93147180369123816490e-01, 1.90821492927058770002e-10,
                   tuple(1.0 / pymath.factorial(n) for n in range(13, 1, -1)) + (1.0, 1.0)),
}
# tanh(x) ~ x P(x^2) / Q(x^2) on [-9, 9], highest coefficient first; from |x| = 9 on, float32 tanh is +-1.
_TANH_P = (-8.488394313615685e-14, 5.27782435810753e-11, -2.0224966590376425e-08, 1.1154244930366985e-05,
           0.003103950060904026, 0.13084004819393158, 1.0)
_TANH_Q = (0.0002546136383898556, 0.02449515461921692, 0.4641733169555664, 1.0)
_TANH_ONE = 9.0
# (tanh(x) - x) / x^3 ~ P(x^2) for |x| < 0.7: minimax relative error 0.04 ULP in float32.
_TANH_SMALL = (0.0019018029561266303, -0.007892187684774399, 0.021575842052698135, -0.053922124207019806,
               0.13332995772361755, -0.33333325386047363)
_TANH_SMALL_BELOW = 0.7
_TANH_EXP_UP_TO = 10.0  # |x| limited to this before exp(2|x|): float32 tanh is 1 from |x| = 9.01 on

FAST_MAX_ULP = {"tanh": 6}  # tested bound of the fastmath tanh (measured 4; ~5 on dense sweeps of [4, 9])


class _Builder:
    """Emits ops on floats like `like` (f32 or f64, scalar or vector) at the current insertion
    point; constants splat, integers are as wide as the floats."""

    def __init__(self, like: ir.Type, target: Target) -> None:
        self.type = like
        self.vector = _vector(like)
        self.element = _element(like)
        self.format = _FORMATS[str(self.element)]
        self.int_element = ir.IntegerType.get_signless(self.format.bits)
        self.int_type = ir.VectorType.get(self.vector.shape, self.int_element) if self.vector else self.int_element
        # LLVM's ldexp (vscalefps/pd) for scalars, which its loop vectorizer widens; MLIR's
        # llvm.intr.ldexp takes no vector exponent, so vector code keeps the exponent-bit scalings.
        self.scalef = self.vector is None and target.has("avx512f")

    def const(self, value: float) -> ir.Value:
        attr = ir.FloatAttr.get(self.element, value)
        return arith.constant(self.type, ir.DenseElementsAttr.get_splat(self.type, attr) if self.vector else attr)

    def int_const(self, value: int) -> ir.Value:
        attr = ir.IntegerAttr.get(self.int_element, value)
        return arith.constant(self.int_type, ir.DenseElementsAttr.get_splat(self.int_type, attr) if self.vector else attr)

    def horner(self, coefficients: tuple[float, ...], x: ir.Value) -> ir.Value:
        """c0 x^n + c1 x^(n-1) + ... + cn, one FMA per coefficient."""
        acc = self.const(coefficients[0])
        for c in coefficients[1:]:
            acc = mathd.fma(acc, x, self.const(c))
        return acc

    def at_most(self, x: ir.Value, high: float) -> ir.Value:
        """min(x, high); NaN stays NaN (the unordered compare picks x: one vminps)."""
        hi = self.const(high)
        return arith.select(arith.cmpf(arith.CmpFPredicate.ULT, x, hi), x, hi)

    def clamp(self, x: ir.Value, low: float, high: float) -> ir.Value:
        """x limited to [low, high]; NaN stays NaN (unordered compares pick x: one vminps, one vmaxps)."""
        below, lo = self.at_most(x, high), self.const(low)
        return arith.select(arith.cmpf(arith.CmpFPredicate.UGT, below, lo), below, lo)

    def pow2(self, k: ir.Value) -> ir.Value:
        """2^k for an integer k within the normal exponents, built from its exponent bits."""
        f = self.format
        biased = arith.addi(arith.shli(k, self.int_const(f.mantissa)), self.int_const(f.bias << f.mantissa))
        return arith.bitcast(self.type, biased)

    def scale(self, p: ir.Value, k: ir.Value) -> ir.Value:
        """p * 2^k rounded once (a subnormal result too; 2^128 or 2^1024 and more: inf), for the k of
        exp's clamped range. AVX-512 has it as one instruction (vscalefps, LLVM's ldexp); elsewhere
        2^floor(k/2) * 2^ceil(k/2): both factors normal, so only the second product rounds."""
        if self.scalef:
            exponent = arith.trunci(ir.IntegerType.get_signless(32), k) if self.format.bits != 32 else k
            return llvmd.intr_ldexp(self.type, p, exponent)
        half = arith.shrsi(k, self.int_const(1))
        return arith.mulf(arith.mulf(p, self.pow2(half)), self.pow2(arith.subi(k, half)))

    def exp(self, x: ir.Value) -> ir.Value:
        f = self.format
        return self.exp_clamped(self.clamp(x, f.low, f.high))

    def exp_clamped(self, x: ir.Value) -> ir.Value:
        """exp of an x already within the format's [low, high] (or NaN)."""
        f = self.format
        shifter = self.const(f.shifter)
        t = mathd.fma(x, self.const(1.0 / pymath.log(2.0)), shifter)  # k = round(x / ln 2) in t's low bits
        k = arith.subf(t, shifter)
        r = mathd.fma(k, self.const(-f.ln2_hi), x)
        r = mathd.fma(k, self.const(-f.ln2_lo), r)
        p = self.horner(f.poly, r)
        return self.scale(p, arith.subi(arith.bitcast(self.int_type, t), arith.bitcast(self.int_type, shifter)))

    def tanh(self, x: ir.Value) -> ir.Value:
        """float32: x + x^3 P(x^2) below |x| = 0.7; from there on 1 - 2 / (exp(2|x|) + 1), with x's sign."""
        ax = mathd.absf(x)
        z = arith.mulf(ax, ax)
        small = mathd.fma(arith.mulf(ax, z), self.horner(_TANH_SMALL, z), ax)
        limited = self.at_most(ax, _TANH_EXP_UP_TO)
        e = self.exp_clamped(arith.addf(limited, limited))
        one = self.const(1.0)
        big = arith.subf(one, arith.divf(self.const(2.0), arith.addf(e, one)))
        small_or_big = arith.select(arith.cmpf(arith.CmpFPredicate.OLT, ax, self.const(_TANH_SMALL_BELOW)), small, big)
        return mathd.copysign(small_or_big, x)

    def tanh_rational(self, x: ir.Value) -> ir.Value:
        """float32 only (see the table below)."""
        xc = self.clamp(x, -_TANH_ONE, _TANH_ONE)
        z = arith.mulf(xc, xc)
        y = arith.divf(arith.mulf(xc, self.horner(_TANH_P, z)), self.horner(_TANH_Q, z))
        saturated = mathd.copysign(self.const(1.0), x)
        return arith.select(arith.cmpf(arith.CmpFPredicate.ULT, mathd.absf(x), self.const(_TANH_ONE)), y, saturated)


# (op, element type) -> builder. EXACT: as accurate as libmvec or more; APPROXIMATE: fastmath only.
EXACT: dict[tuple[str, str], Callable[[_Builder, ir.Value], ir.Value]] = {
    ("math.exp", "f32"): _Builder.exp, ("math.exp", "f64"): _Builder.exp, ("math.tanh", "f32"): _Builder.tanh}
APPROXIMATE: dict[tuple[str, str], Callable[[_Builder, ir.Value], ir.Value]] = {("math.tanh", "f32"): _Builder.tanh_rational}


def _vector(value_type: ir.Type) -> ir.VectorType | None:
    try:
        return ir.VectorType(value_type)
    except ValueError:
        return None


def _element(value_type: ir.Type) -> ir.Type:
    """The element type of a vector type, or the type itself."""
    vector = _vector(value_type)
    return vector.element_type if vector else value_type


def inline_math(module: ir.Module, target: Target) -> None:
    """Replace each float32/float64 math.exp and float32 math.tanh (the rational one in FASTMATH
    functions) by its inline computation for `target` (in place)."""
    found: list[tuple[ir.Operation, Callable[[_Builder, ir.Value], ir.Value]]] = []
    for func in module.body.operations:
        func = func.operation
        fast = FASTMATH in func.attributes
        if fast:
            del func.attributes[FASTMATH]
        table = {**EXACT, **APPROXIMATE} if fast else EXACT

        def visit(op: ir.Operation, table=table) -> ir.WalkResult:
            if op.name.startswith("math.") and len(op.results) == 1:
                build = table.get((op.name, str(_element(op.results[0].type))))
                if build is not None:
                    found.append((op, build))
            return ir.WalkResult.ADVANCE

        func.walk(visit)
    for op, build in found:
        with ir.InsertionPoint(op), op.location:
            value = build(_Builder(op.results[0].type, target), op.operands[0])
        op.results[0].replace_all_uses_with(value)
        op.erase()


@dataclass(frozen=True)
class Math(Stage):
    """exp (float32, float64) and float32 tanh, scalar or vector, as inline arith/math ops for the Target, before the loops are made."""

    target: Target
    name: ClassVar[str] = "math"

    def rewrite(self, module: ir.Module) -> None:
        inline_math(module, self.target)
