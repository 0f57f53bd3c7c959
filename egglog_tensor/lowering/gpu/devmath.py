"""Device math: the elementwise math functions of the CPU path computed inline on a GPU target, so
that no device math library (ROCm's ocml, CUDA's libdevice) is linked. The `math` stage of a GPU
pipeline runs the CPU's (exp, float32 tanh: ../stages/math.py), then this:

- float64: log by its exponent and the series of 2 atanh(s) on [sqrt(1/2), sqrt(2)); sin, cos and
  tan by a three-part Cody-Waite reduction by pi/2 and Taylor polynomials on [-pi/4, pi/4]; atan by
  reduction to |t| <= tan(pi/8) and its series; exp2 by exact splitting of its argument; the rest
  built from these and exp (expm1 and log1p by Kahan's and Goldberg's compensations, the inverse
  hyperbolics through log1p, arcsin/arccos/arctan2 through atan, cbrt by exp(log/3) and a Newton step).
- float32: log, and sin and cos below |x| = 105615 (`FLOAT32`), by the same code in float32 with
  float32 constants and shorter polynomials (FP64 runs at 1/32-1/64 of the FP32 rate on consumer GPUs);
  sin and cos of larger |x| (a branch), and every other function, by the float64 code on the widened
  argument, rounded back once (float32 pow too); float64 pow is refused (it would need log in more
  than double precision).
- sqrt, floor, ceil, trunc and rint stay math ops, which the conversions turn into device library
  calls; `native_calls` then puts back the LLVM intrinsic (one instruction, IEEE-exact) both
  backends select.

The CPU emulation runs this same code (it takes the IR after the math stage): docs/gpu.md's table
of ULP errors is measured that way (tests/test_gpu_math.py).
"""

from __future__ import annotations

import math as pymath
import struct
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction

from mlir import ir
from mlir.dialects import arith
from mlir.dialects import llvm as llvmd
from mlir.dialects import math as mathd
from mlir.dialects import scf

from ...errors import UnsupportedError
from ..stages.math import Math, _Builder, inline_math
from ..scalarcode import SCALAR_POW

_PI = Fraction("3.14159265358979323846264338327950288419716939937510582097494459")


def _split(value: Fraction, parts: int, single: bool = False) -> tuple[float, ...]:
    """value as a sum of `parts` doubles (float32 values if `single`), each the rounding of what the ones before leave."""
    out: list[float] = []
    for _ in range(parts):
        part = float(value - sum(map(Fraction, out)))
        out.append(float(struct.unpack("f", struct.pack("f", part))[0]) if single else part)
    return tuple(out)


# pi/2 in three parts for Cody-Waite: r = x - k P1 - k P2 - k P3, each step one FMA (float64, float32).
_HALF_PI = _split(_PI / 2, 3)
_HALF_PI_32 = _split(_PI / 2, 3, single=True)
_PI_2 = _split(_PI, 2)
_QUARTER_PI = _split(_PI / 4, 2)
_LOG2_E = _split(Fraction("1.442695040888963407359924681001892137426645954152985934135"), 2)
_LOG10_E = _split(Fraction("0.434294481903251827651128918916605082294397005803666566114"), 2)
_SQRT2 = 1.4142135623730951
# Series, highest coefficient first: log(1+f) = f - s (f - z Q(z)), s = f / (2 + f), z = s^2, Q = sum 2 z^k / (2k + 3)
_LOG_Q = tuple(2.0 / (2 * k + 3) for k in range(10, -1, -1))
_SIN = tuple((-1) ** k / pymath.factorial(2 * k + 1) for k in range(9, 0, -1))  # sin r = r + r^3 S(r^2)
_COS = tuple((-1) ** k / pymath.factorial(2 * k) for k in range(9, 1, -1))  # cos r = 1 - r^2/2 + r^4 C(r^2)
# float32: the series' leading terms, the first left out below 2^-28 relative (|z| <= 0.0295 for log, |r| <= pi/4)
_LOG_Q32, _SIN32, _COS32 = _LOG_Q[-5:], _SIN[-4:], _COS[-4:]
_TRIG32_BELOW = 105615.0  # float32 sin, cos: the three-part float32 reduction up to here (as CUDA's sinf), the float64 code beyond
_ATAN = tuple((-1) ** k / (2 * k + 1) for k in range(21, 0, -1))  # atan t = t + t^3 A(t^2), |t| <= tan(pi/8)
_TAN_PI_8 = 0.41421356237309503
_TRIG_UP_TO = 2.0**50  # sin, cos, tan: NaN from here on (the reduction's k would not fit the rounding shifter)
_BIG = 2.0**28  # asinh, acosh: from here on log(2x) (x^2 + 1 rounds to x^2)


class _Inline(_Builder):
    """float64 math from arith, math.fma and math.sqrt (scalar or vector, like its `like` type); float32
    for FLOAT32's functions (their constants and series by `single`)."""

    @property
    def single(self) -> bool:
        return self.format.bits == 32

    def cmp(self, predicate: str, a: ir.Value, b: ir.Value | float) -> ir.Value:
        return arith.cmpf(getattr(arith.CmpFPredicate, predicate), a, self.const(b) if isinstance(b, float) else b)

    def select(self, cond: ir.Value, a: ir.Value, b: ir.Value | float) -> ir.Value:
        return arith.select(cond, a, self.const(b) if isinstance(b, float) else b)

    def series(self, x: ir.Value, coefficients: tuple[float, ...]) -> ir.Value:
        """x + x^3 P(x^2)."""
        z = arith.mulf(x, x)
        return mathd.fma(arith.mulf(x, z), self.horner(coefficients, z), x)

    def log(self, x: ir.Value) -> ir.Value:
        f = self.format
        tiny = self.cmp("OLT", x, 2.0 ** (1 - f.bias))  # subnormals scaled by 2^(mantissa + 2) first
        xs = self.select(tiny, arith.mulf(x, self.const(2.0 ** (f.mantissa + 2))), x)
        bits = arith.bitcast(self.int_type, xs)
        mantissa_mask = (1 << f.mantissa) - 1
        m = arith.bitcast(self.type, arith.ori(arith.andi(bits, self.int_const(mantissa_mask)), self.int_const(f.bias << f.mantissa)))
        e = arith.subi(arith.shrui(bits, self.int_const(f.mantissa)), self.int_const(f.bias))
        high = self.cmp("OGT", m, _SQRT2)  # m in [sqrt(1/2), sqrt(2))
        m = self.select(high, arith.mulf(m, self.const(0.5)), m)
        ef = arith.addf(arith.sitofp(self.type, e), self.select(high, self.const(1.0), 0.0))
        ef = arith.subf(ef, self.select(tiny, self.const(f.mantissa + 2.0), 0.0))
        g = arith.subf(m, self.const(1.0))
        s = arith.divf(g, arith.addf(g, self.const(2.0)))
        z = arith.mulf(s, s)
        log_m = arith.subf(g, arith.mulf(s, arith.subf(g, arith.mulf(z, self.horner(_LOG_Q32 if self.single else _LOG_Q, z)))))
        value = mathd.fma(ef, self.const(f.ln2_hi), mathd.fma(ef, self.const(f.ln2_lo), log_m))
        special = self.select(self.cmp("OEQ", x, 0.0), self.const(-pymath.inf),
                              self.select(self.cmp("OEQ", x, pymath.inf), x, pymath.nan))
        return self.select(arith.andi(self.cmp("OGT", x, 0.0), self.cmp("OLT", x, pymath.inf)), value, self.select(self.cmp("UNO", x, x), x, special))

    def log1p(self, x: ir.Value) -> ir.Value:
        """log(u) x / (u - 1), u = 1 + x: the rounding of u cancels (x where u rounds to 1)."""
        u = arith.addf(self.const(1.0), x)
        d = arith.subf(u, self.const(1.0))
        value = arith.mulf(self.log(u), arith.divf(x, d))
        return self.select(self.cmp("OEQ", d, 0.0), x, self.select(self.cmp("OEQ", u, pymath.inf), u, value))

    def expm1(self, x: ir.Value) -> ir.Value:
        """(u - 1) x / log(u), u = exp(x) (Kahan): x where u rounds to 1, -1 and inf where u - 1 is."""
        u = self.exp(x)
        um1 = arith.subf(u, self.const(1.0))
        value = arith.divf(arith.mulf(um1, x), self.log(u))
        edge = arith.ori(self.cmp("OEQ", um1, -1.0), self.cmp("OEQ", u, pymath.inf))
        return self.select(self.cmp("OEQ", u, 1.0), x, self.select(edge, um1, value))

    def round_int(self, x: ir.Value) -> tuple[ir.Value, ir.Value]:
        """(k as a float, k as an integer), k = x rounded to an integer (|x| < 2^51)."""
        shifter = self.const(self.format.shifter)
        t = arith.addf(x, shifter)
        return arith.subf(t, shifter), arith.subi(arith.bitcast(self.int_type, t), arith.bitcast(self.int_type, shifter))

    def exp2(self, x: ir.Value) -> ir.Value:
        xc = self.clamp(x, -1100.0, 1100.0)
        k, k_int = self.round_int(xc)
        p = self.exp_clamped(arith.mulf(arith.subf(xc, k), self.const(pymath.log(2.0))))
        return self.scale(p, k_int)

    def scaled(self, x: ir.Value, parts: tuple[float, ...]) -> ir.Value:
        """x times the constant whose `parts` sum to it (a two-part constant: one more FMA)."""
        return mathd.fma(x, self.const(parts[0]), arith.mulf(x, self.const(parts[1])))

    def log2(self, x: ir.Value) -> ir.Value:
        return self.scaled(self.log(x), _LOG2_E)

    def log10(self, x: ir.Value) -> ir.Value:
        return self.scaled(self.log(x), _LOG10_E)

    def sin_cos(self, x: ir.Value, offset: int) -> ir.Value:
        """sin x (offset 0) or cos x (offset 1) = sin(x + offset pi/2): quadrant q = k + offset;
        NaN from |x| = 2^50 on, where k no longer fits the rounding shifter (no Payne-Hanek reduction)."""
        k, k_int = self.round_int(arith.mulf(x, self.const(2.0 / pymath.pi)))
        r = x
        for part in _HALF_PI_32 if self.single else _HALF_PI:
            r = mathd.fma(k, self.const(-part), r)
        q = arith.addi(k_int, self.int_const(offset))
        z = arith.mulf(r, r)
        s = self.series(r, _SIN32 if self.single else _SIN)
        c = arith.addf(self.const(1.0), mathd.fma(z, self.const(-0.5), arith.mulf(arith.mulf(z, z), self.horner(_COS32 if self.single else _COS, z))))
        odd = arith.cmpi(arith.CmpIPredicate.ne, arith.andi(q, self.int_const(1)), self.int_const(0))
        value = self.select(odd, c, s)
        negative = arith.cmpi(arith.CmpIPredicate.ne, arith.andi(q, self.int_const(2)), self.int_const(0))
        value = self.select(negative, arith.negf(value), value)
        if offset == 0:  # sin(-0.0) = -0.0 (the series' fma adds +0.0 to it)
            value = self.select(self.cmp("OEQ", x, 0.0), x, value)
        return self.select(self.cmp("ULT", mathd.absf(x), _TRIG_UP_TO), value, pymath.nan)

    def sin(self, x: ir.Value) -> ir.Value:
        return self.sin_cos(x, 0)

    def cos(self, x: ir.Value) -> ir.Value:
        return self.sin_cos(x, 1)

    def tan(self, x: ir.Value) -> ir.Value:
        return arith.divf(self.sin_cos(x, 0), self.sin_cos(x, 1))

    def atan(self, x: ir.Value) -> ir.Value:
        a = mathd.absf(x)
        big = self.cmp("OGT", a, 1.0)
        t = self.select(big, arith.divf(self.const(1.0), a), a)
        mid = self.cmp("OGT", t, _TAN_PI_8)
        one = self.const(1.0)
        t = self.select(mid, arith.divf(arith.subf(t, one), arith.addf(t, one)), t)
        quarter = self.select(mid, self.const(_QUARTER_PI[1]), 0.0)
        value = arith.addf(self.select(mid, self.const(_QUARTER_PI[0]), 0.0), arith.addf(self.series(t, _ATAN), quarter))
        value = self.select(big, arith.addf(arith.subf(self.const(_HALF_PI[0]), value), self.const(_HALF_PI[1])), value)
        return mathd.copysign(value, x)

    def atan2(self, y: ir.Value, x: ir.Value) -> ir.Value:
        both_inf = arith.andi(self.cmp("OEQ", mathd.absf(y), pymath.inf), self.cmp("OEQ", mathd.absf(x), pymath.inf))
        one = self.const(1.0)
        ratio = arith.divf(self.select(both_inf, mathd.copysign(one, y), y), self.select(both_inf, mathd.copysign(one, x), x))
        negative_x = arith.cmpi(arith.CmpIPredicate.slt, arith.bitcast(self.int_type, x), self.int_const(0))
        pi = mathd.copysign(self.const(_PI_2[0]), y)
        value = self.atan(ratio)
        value = self.select(negative_x, arith.addf(pi, arith.addf(value, mathd.copysign(self.const(_PI_2[1]), y))), value)
        on_axis = self.select(negative_x, pi, mathd.copysign(self.const(0.0), y))  # y = 0: +-0 or +-pi by x's sign bit
        nan = arith.ori(self.cmp("UNO", x, x), self.cmp("UNO", y, y))
        return self.select(nan, arith.addf(x, y), self.select(self.cmp("OEQ", y, 0.0), on_axis, value))

    def asin(self, x: ir.Value) -> ir.Value:
        one = self.const(1.0)
        return self.atan(arith.divf(x, mathd.sqrt(arith.mulf(arith.subf(one, x), arith.addf(one, x)))))

    def acos(self, x: ir.Value) -> ir.Value:
        one = self.const(1.0)
        half = self.atan(mathd.sqrt(arith.divf(arith.subf(one, x), arith.addf(one, x))))
        return arith.addf(half, half)

    def log_big(self, a: ir.Value) -> ir.Value:
        """log(2a), for the inverse hyperbolics of |x| >= 2^28."""
        return arith.addf(self.log(a), self.const(pymath.log(2.0)))

    def asinh(self, x: ir.Value) -> ir.Value:
        a = mathd.absf(x)
        a2 = arith.mulf(a, a)
        small = self.log1p(arith.addf(a, arith.divf(a2, arith.addf(self.const(1.0), mathd.sqrt(arith.addf(a2, self.const(1.0)))))))
        return mathd.copysign(self.select(self.cmp("OGE", a, _BIG), self.log_big(a), small), x)

    def acosh(self, x: ir.Value) -> ir.Value:
        t = arith.subf(x, self.const(1.0))
        small = self.log1p(arith.addf(t, mathd.sqrt(mathd.fma(t, t, arith.addf(t, t)))))
        return self.select(self.cmp("OGE", x, _BIG), self.log_big(x), small)

    def atanh(self, x: ir.Value) -> ir.Value:
        a = mathd.absf(x)
        value = self.log1p(arith.divf(arith.addf(a, a), arith.subf(self.const(1.0), a)))
        return mathd.copysign(arith.mulf(self.const(0.5), value), x)

    def sinh_cosh(self, x: ir.Value, sign: float) -> ir.Value:
        """(e^|x| + sign e^-|x|) / 2; past 709 as h (h / 2) with h = e^(|x|/2) (no overflow before the result's)."""
        a = mathd.absf(x)
        half = self.const(0.5)
        e = self.exp(a)
        h = self.exp(arith.mulf(a, half))
        large = arith.mulf(arith.mulf(h, half), h)
        return self.select(self.cmp("OLT", a, 709.0), mathd.fma(half, e, arith.divf(self.const(0.5 * sign), e)), large)

    def sinh(self, x: ir.Value) -> ir.Value:
        a = mathd.absf(x)
        em = self.expm1(a)
        small = arith.mulf(self.const(0.5), arith.addf(em, arith.divf(em, arith.addf(em, self.const(1.0)))))
        return mathd.copysign(self.select(self.cmp("OLT", a, 1.0), small, self.sinh_cosh(x, -1.0)), x)

    def cosh(self, x: ir.Value) -> ir.Value:
        return self.sinh_cosh(x, 1.0)

    def tanh(self, x: ir.Value) -> ir.Value:
        a = mathd.absf(x)
        em = self.expm1(arith.addf(a, a))
        value = self.select(self.cmp("ULT", a, 22.0), arith.divf(em, arith.addf(em, self.const(2.0))), 1.0)  # (NaN passes)
        return mathd.copysign(value, x)

    def cbrt(self, x: ir.Value) -> ir.Value:
        a = mathd.absf(x)
        y = self.exp(arith.mulf(self.log(a), self.const(1.0 / 3.0)))
        newton = arith.addf(y, arith.mulf(arith.subf(arith.divf(a, arith.mulf(y, y)), y), self.const(1.0 / 3.0)))
        finite = arith.andi(self.cmp("OGT", y, 0.0), self.cmp("OLT", y, pymath.inf))
        return mathd.copysign(self.select(finite, newton, y), x)

    def pow(self, x: ir.Value, y: ir.Value) -> ir.Value:
        """exp(y log|x|), with C's special cases: (x, 0), (1, y) and (-1, +-inf) are 1; finite negative
        x: integer y only (odd: negative), else NaN. float32 only: float64 needs log in extra precision."""
        one = self.const(1.0)
        value = self.exp(arith.mulf(y, self.log(mathd.absf(x))))
        integer = self.cmp("OEQ", mathd.floor(y), y)
        half = arith.mulf(y, self.const(0.5))
        odd = arith.andi(integer, self.cmp("ONE", mathd.floor(half), half))
        negative = arith.cmpi(arith.CmpIPredicate.slt, arith.bitcast(self.int_type, x), self.int_const(0))
        value = self.select(arith.andi(negative, odd), arith.negf(value), value)
        finite_negative = arith.andi(self.cmp("OLT", x, 0.0), self.cmp("OGT", x, -pymath.inf))
        value = self.select(arith.andi(finite_negative, arith.xori(integer, self.bool(True))), self.const(pymath.nan), value)
        unit = arith.ori(self.cmp("OEQ", x, 1.0), arith.andi(self.cmp("OEQ", x, -1.0), self.cmp("OEQ", mathd.absf(y), pymath.inf)))
        return self.select(arith.ori(self.cmp("OEQ", y, 0.0), unit), one, value)

    def bool(self, value: bool) -> ir.Value:
        return arith.constant(ir.IntegerType.get_signless(1), int(value))


# math op -> its float64 computation; float32 ops widen, compute, round back.
FUNCTIONS: dict[str, Callable[..., ir.Value]] = {
    "math.log": _Inline.log, "math.log1p": _Inline.log1p, "math.expm1": _Inline.expm1, "math.exp2": _Inline.exp2,
    "math.log2": _Inline.log2, "math.log10": _Inline.log10, "math.sin": _Inline.sin, "math.cos": _Inline.cos, "math.tan": _Inline.tan,
    "math.atan": _Inline.atan, "math.atan2": _Inline.atan2, "math.asin": _Inline.asin, "math.acos": _Inline.acos,
    "math.asinh": _Inline.asinh, "math.acosh": _Inline.acosh, "math.atanh": _Inline.atanh, "math.sinh": _Inline.sinh,
    "math.cosh": _Inline.cosh, "math.tanh": _Inline.tanh, "math.cbrt": _Inline.cbrt, "math.powf": _Inline.pow}
# float32 functions computed in float32: op -> the |x| below which (None: everywhere); beyond, the float64 code (a branch).
FLOAT32: dict[str, float | None] = {"math.log": None, "math.sin": _TRIG32_BELOW, "math.cos": _TRIG32_BELOW}
# Exact math kept as ops (IEEE-exact, one instruction on both backends); the conversions call the device
# library for some of them (libdevice's __nv_sqrtf, ocml's __ocml_floor_f64...), native_calls undoes that.
NATIVE = {"sqrt": llvmd.intr_sqrt, "floor": llvmd.intr_floor, "ceil": llvmd.intr_ceil, "trunc": llvmd.intr_trunc,
          "rint": llvmd.intr_roundeven, "fma": llvmd.intr_fma, "fabs": llvmd.intr_fabs, "copysign": llvmd.intr_copysign}
NATIVE_MATH = {"math.sqrt": "sqrt", "math.floor": "floor", "math.ceil": "ceil", "math.trunc": "trunc", "math.roundeven": "rint",
               "math.fma": "fma", "math.absf": "fabs", "math.copysign": "copysign"}


def device_math(module: ir.Module, backend: str) -> None:
    """Replace each float32/float64 math op of FUNCTIONS in the gpu.modules by its inline computation
    (in place); float64 pow raises UnsupportedError naming it and the target, but scalar code's (e^(y log x): the
    special functions' pow(), whose accuracy there is e^(a log x)'s, as before they took pow())."""
    found: list[ir.Operation] = []

    def visit(op: ir.Operation) -> ir.WalkResult:
        if op.name in FUNCTIONS and str(op.results[0].type) in ("f32", "f64"):
            found.append(op)
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit)
    f64 = ir.F64Type.get()
    for op in found:
        dtype = str(op.results[0].type)
        if op.name == "math.powf" and dtype == "f64" and SCALAR_POW not in op.attributes:
            raise UnsupportedError(f"GPU target {backend}: float64 power (np.power, **) is not supported "
                                   "(it needs log in more than double precision); float32 is")
        with ir.InsertionPoint(op), op.location:
            if dtype == "f32" and op.name in FLOAT32:
                value = _single(op, f64)
            else:
                value = FUNCTIONS[op.name](_Inline(f64, _NO_CPU), *op.operands) if dtype == "f64" else _widened(op, f64)
        op.results[0].replace_all_uses_with(value)
        op.erase()


def _widened(op: ir.Operation, f64: ir.Type) -> ir.Value:
    """A float32 op's function by the float64 code on its widened operands, rounded back once."""
    value = FUNCTIONS[op.name](_Inline(f64, _NO_CPU), *[arith.extf(f64, a) for a in op.operands])
    return arith.truncf(op.results[0].type, value)


def _single(op: ir.Operation, f64: ir.Type) -> ir.Value:
    """A float32 op of FLOAT32 computed in float32; beyond its |x| bound (sin, cos) the widened float64
    code in the other arm of an scf.if, so a thread runs only one of them."""
    f32, x, below = op.results[0].type, op.operands[0], FLOAT32[op.name]
    single = _Inline(f32, _NO_CPU)
    if below is None:
        return FUNCTIONS[op.name](single, x)
    branch = scf.IfOp(single.cmp("ULT", mathd.absf(x), below), [f32], has_else=True)  # (NaN: the float32 arm)
    with ir.InsertionPoint(branch.then_block):
        scf.YieldOp([FUNCTIONS[op.name](single, x)])
    with ir.InsertionPoint(branch.else_block):
        scf.YieldOp([_widened(op, f64)])
    return branch.results[0]


class _NoCpu:
    """The target the shared builder asks for CPU features: a GPU has none of them (no AVX-512 ldexp)."""

    @staticmethod
    def has(feature: str) -> bool:
        return False


_NO_CPU = _NoCpu()


def _library_name(symbol: str) -> str | None:
    """The function a libdevice or ocml symbol computes ("__nv_sqrtf", "__ocml_sqrt_f32": "sqrt"), else None."""
    if symbol.startswith("__nv_"):
        base = symbol.removeprefix("__nv_")
        return base[:-1] if base.endswith("f") and base[:-1] in NATIVE else base
    if symbol.startswith("__ocml_"):
        return symbol.removeprefix("__ocml_").rsplit("_", 1)[0]
    return None


def native_calls(module: ir.Module) -> None:
    """After the ROCDL/NVVM conversion: each call of the device library's sqrt, floor, ceil, trunc, rint,
    fma, fabs or copysign (`__nv_sqrtf`, `__ocml_floor_f64`, ...) as the LLVM intrinsic, which both
    backends select as one instruction (the conversions mark the intrinsics illegal and call the
    library instead), as is each of these math ops a conversion left; the library's declarations removed."""
    found: list[tuple[ir.Operation, Callable[..., ir.Value]]] = []
    declared: list[ir.Operation] = []

    def visit(op: ir.Operation) -> ir.WalkResult:
        if op.name == "llvm.call" and "callee" in op.attributes:
            base = _library_name(ir.FlatSymbolRefAttr(op.attributes["callee"]).value)
            if base in NATIVE:
                found.append((op, NATIVE[base]))
        elif op.name in NATIVE_MATH:
            found.append((op, NATIVE[NATIVE_MATH[op.name]]))
        elif op.name == "llvm.func" and _library_name(ir.StringAttr(op.attributes["sym_name"]).value) in NATIVE:
            declared.append(op)
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit)
    for op, intrinsic in found:
        with ir.InsertionPoint(op), op.location:
            value = intrinsic(*op.operands)
        op.results[0].replace_all_uses_with(value)
        op.erase()
    for op in declared:
        op.erase()


@dataclass(frozen=True)
class DeviceMath(Math):
    """A GPU target's math stage: the CPU's inline exp and float32 tanh, then every other math
    function of FUNCTIONS inline (device_math)."""

    def rewrite(self, module: ir.Module) -> None:
        inline_math(module, self.target)
        device_math(module, self.target.name)
