"""Scalar semantics of each elementwise op, as arith/math ops inside a linalg body.

Each lowering follows NumPy's own definition, including the awkward cases: NaN-propagating
max/min, Python-style floor division and modulo, integer division by zero giving 0 (never a
trap), sign of NaN and -0.0.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import numpy as np
from mlir import ir
from mlir.dialects import arith, func, math, scf

from egglog_tensor import ops
from egglog_tensor.errors import UnsupportedError
from egglog_tensor.fastmath import FastMath
from egglog_tensor.graph import NARROW_FLOATS, is_float, itemsize

from . import special

F = arith.CmpFPredicate
I = arith.CmpIPredicate
Composed = Callable[[list[ir.Value], str], ir.Value]


def element_type(dtype: str) -> ir.Type:
    """MLIR element type of a NumPy dtype name (bool is i1, one byte in memory like NumPy's; signed and
    unsigned integers are both signless, the ops say which they are)."""
    if is_float(dtype):
        return ir.BF16Type.get() if dtype == "bfloat16" else {16: ir.F16Type.get, 32: ir.F32Type.get, 64: ir.F64Type.get}[_bits(dtype)]()
    return ir.IntegerType.get_signless(_bits(dtype))


def storage_type(dtype: str) -> ir.Type:
    """Element type of tensors and memrefs: like element_type, but bool is stored as i8 (0/1).

    MLIR 22's memref-to-LLVM lowering aborts on i1 memrefs; NumPy's bool is a 0/1 byte anyway.
    """
    return ir.IntegerType.get_signless(8) if dtype == "bool" else element_type(dtype)


def load(value: ir.Value, dtype: str) -> ir.Value:
    """A stored element as a computable scalar (i8 -> i1 for bool)."""
    return arith.trunci(element_type("bool"), value) if dtype == "bool" else value


def store(value: ir.Value, dtype: str) -> ir.Value:
    """A computed scalar as a stored element (i1 -> i8 for bool)."""
    return arith.extui(storage_type("bool"), value) if dtype == "bool" else value


def constant(value: float, dtype: str, stored: bool = False, lanes: int = 0) -> ir.Value:
    """A scalar constant of `dtype` (of its storage type when `stored`); with `lanes`, a vector of
    that many copies (the operand of vector code such as lowering/argrows.py's)."""
    t = storage_type(dtype) if stored else element_type(dtype)
    if is_float(dtype):
        attr = ir.FloatAttr.get(t, float(value))
    else:
        bits = _bits(dtype)
        value = int(value) % (1 << bits) if bits > 1 else int(value)  # an unsigned value as its signless bit pattern
        attr = ir.IntegerAttr.get(t, value - (1 << bits) if bits > 1 and value >> (bits - 1) else value)
    if lanes:
        t = ir.VectorType.get([lanes], t)
        attr = ir.DenseElementsAttr.get_splat(t, attr)
    return arith.constant(t, attr)


def _is_unsigned(dtype: str) -> bool:
    return dtype.startswith("uint")


def _bits(dtype: str) -> int:
    return 1 if dtype == "bool" else itemsize(dtype) * 8


def bitcast(x: ir.Value, src: str, dst: str) -> ir.Value:
    """x's bits read as `dst`, of src's itemsize (ndarray.view(dtype)); a bool is its byte, 0 or 1, and a nonzero byte is True."""
    if src == "bool":
        return arith.extui(element_type(dst), x)
    if dst == "bool":
        return arith.cmpi(I.ne, x, constant(0, src))
    return x if element_type(src) == element_type(dst) else arith.bitcast(element_type(dst), x)


def cast(x: ir.Value, src: str, dst: str) -> ir.Value:
    """NumPy astype: float<->float, int<->int, int<->float, bool<->anything (nonzero is True)."""
    if src == dst:
        return x
    if "bfloat16" in (src, dst) and "float32" not in (src, dst):  # as ml_dtypes: every bfloat16 cast goes through float32
        return cast(cast(x, src, "float32"), "float32", dst)
    if src == "bfloat16":
        return _bfloat16_to_float32(x)
    if dst == "bfloat16":
        return _float32_to_bfloat16(x)
    t = element_type(dst)
    if dst == "bool":
        zero = constant(0, src)
        return arith.cmpf(F.UNE, x, zero) if is_float(src) else arith.cmpi(I.ne, x, zero)
    if src == "bool":
        return arith.uitofp(t, x) if is_float(dst) else arith.extui(t, x)
    if src == "float64" and dst == "float16":
        return arith.truncf(t, _float64_to_float32_odd(x))
    if is_float(src) and is_float(dst):
        return arith.extf(t, x) if _bits(dst) > _bits(src) else arith.truncf(t, x)
    if is_float(dst):
        return (arith.uitofp if _is_unsigned(src) else arith.sitofp)(t, x)
    if is_float(src):
        return _float_to_int(x, dst, t)
    if _bits(dst) == _bits(src):  # int32 <-> uint32: the same bits
        return x
    if _bits(dst) < _bits(src):
        return arith.trunci(t, x)
    return (arith.extui if _is_unsigned(src) else arith.extsi)(t, x)


def _float_to_int(x: ir.Value, dst: str, t: ir.Type) -> ir.Value:
    """A float to an integer as NumPy's C cast does on x86-64: truncated toward zero into a 32-bit int (a
    64-bit one for uint32 and the 64-bit types), its low bits kept: -1.0 -> uint8 255, 300.0 -> uint8 44.
    (LLVM's fptoui/fptosi straight into a narrow type are poison out of its range, and vector code then
    saturates: -1.0 -> uint8 0.) A negative float to uint64 is its int64's bits."""
    bits = _bits(dst)
    if dst == "uint64":
        i64 = element_type("int64")
        negative = arith.cmpf(F.OLT, x, arith.constant(x.type, 0.0))
        return arith.select(negative, arith.fptosi(i64, x), arith.fptoui(i64, x))
    wide = 64 if bits == 64 or dst == "uint32" else 32
    if bits == wide:
        return arith.fptosi(t, x)
    return arith.trunci(t, arith.fptosi(element_type(f"int{wide}"), x))


def _bfloat16_to_float32(x: ir.Value) -> ir.Value:
    """A bfloat16's bits are the high half of the float32 of the same value (exact)."""
    i16, i32 = ir.IntegerType.get_signless(16), ir.IntegerType.get_signless(32)
    wide = arith.extui(i32, arith.bitcast(i16, x))
    return arith.bitcast(ir.F32Type.get(), arith.shli(wide, arith.constant(i32, 16)))


def _float64_to_float32_odd(x: ir.Value) -> ir.Value:
    """float64 to float32 rounded to odd (toward zero, the last bit set when inexact): rounded to nearest
    once more, to float16, that is float64 to float16 correctly rounded, as NumPy converts (rounding to odd
    in 24 >= 11 + 2 bits first cannot round twice). x86 has no float64 -> float16 instruction, and LLVM's
    libcall for it (__truncdfhf2) is in no library the JIT can be counted on to find."""
    i32 = ir.IntegerType.get_signless(32)
    nearest = arith.truncf(ir.F32Type.get(), x)
    beyond = arith.cmpf(F.OGT, math.absf(arith.extf(x.type, nearest)), math.absf(x))  # rounded away from zero
    bits = arith.bitcast(i32, nearest)
    toward_zero = arith.select(beyond, arith.subi(bits, arith.constant(i32, 1)), bits)
    inexact = arith.cmpf(F.ONE, arith.extf(x.type, arith.bitcast(ir.F32Type.get(), toward_zero)), x)
    return arith.bitcast(ir.F32Type.get(), arith.ori(toward_zero, arith.extui(i32, inexact)))


def _float32_to_bfloat16(x: ir.Value) -> ir.Value:
    """float32 to bfloat16 rounded to nearest even as ml_dtypes (Eigen) rounds, in integer ops (no libcall,
    no bf16 instructions needed): a NaN becomes the quiet NaN 0x7fc0 with x's sign, overflow gives inf."""
    i16, i32 = ir.IntegerType.get_signless(16), ir.IntegerType.get_signless(32)
    bits = arith.bitcast(i32, x)
    odd = arith.andi(arith.shrui(bits, arith.constant(i32, 16)), arith.constant(i32, 1))
    rounded = arith.shrui(arith.addi(bits, arith.addi(odd, arith.constant(i32, 0x7FFF))), arith.constant(i32, 16))
    nan = arith.ori(arith.andi(arith.shrui(bits, arith.constant(i32, 16)), arith.constant(i32, 0x8000)), arith.constant(i32, 0x7FC0))
    chosen = arith.select(arith.cmpf(F.UNO, x, x), nan, rounded)
    return arith.bitcast(ir.BF16Type.get(), arith.trunci(i16, chosen))


def _sign(x: ir.Value, dtype: str) -> ir.Value:
    one, minus_one, zero = constant(1, dtype), constant(-1, dtype), constant(0, dtype)
    if is_float(dtype):
        pos, neg, is_zero = arith.cmpf(F.OGT, x, zero), arith.cmpf(F.OLT, x, zero), arith.cmpf(F.OEQ, x, zero)
        return arith.select(pos, one, arith.select(neg, minus_one, arith.select(is_zero, zero, x)))
    if _is_unsigned(dtype):
        return arith.select(arith.cmpi(I.ne, x, zero), one, zero)
    pos, neg = arith.cmpi(I.sgt, x, zero), arith.cmpi(I.slt, x, zero)
    return arith.select(pos, one, arith.select(neg, minus_one, zero))


def _float_divmod(a: ir.Value, b: ir.Value, dtype: str) -> tuple[ir.Value, ir.Value]:
    """NumPy's npy_divmod for floats: (floor quotient, modulo with the sign of b)."""
    zero, one, half = constant(0, dtype), constant(1, dtype), constant(0.5, dtype)
    mod = arith.remf(a, b)
    div = arith.divf(arith.subf(a, mod), b)
    mod_nonzero = arith.cmpf(F.UNE, mod, zero)
    signs_differ = arith.xori(arith.cmpf(F.OLT, b, zero), arith.cmpf(F.OLT, mod, zero))
    adjust = arith.andi(mod_nonzero, signs_differ)
    mod = arith.select(adjust, arith.addf(mod, b), arith.select(mod_nonzero, mod, math.copysign(zero, b)))
    div = arith.select(adjust, arith.subf(div, one), div)
    floor = math.floor(div)
    floor = arith.select(arith.cmpf(F.OGT, arith.subf(div, floor), half), arith.addf(floor, one), floor)
    quotient = arith.select(arith.cmpf(F.UNE, div, zero), floor, math.copysign(zero, arith.divf(a, b)))
    b_zero = arith.cmpf(F.OEQ, b, zero)
    quotient = arith.select(b_zero, arith.divf(a, b), quotient)
    return quotient, mod


def _int_divmod(a: ir.Value, b: ir.Value, dtype: str, want: str) -> ir.Value:
    """Python-style integer // and %, with NumPy's 0 for division by zero and no INT_MIN // -1 trap."""
    zero, one, minus_one = constant(0, dtype), constant(1, dtype), constant(-1, dtype)
    if _is_unsigned(dtype):
        b_zero = arith.cmpi(I.eq, b, zero)
        divided = (arith.divui if want == "floor_divide" else arith.remui)(a, arith.select(b_zero, one, b))
        return arith.select(b_zero, zero, divided)
    b_zero, b_minus_one = arith.cmpi(I.eq, b, zero), arith.cmpi(I.eq, b, minus_one)
    safe_b = arith.select(arith.ori(b_zero, b_minus_one), one, b)
    if want == "floor_divide":
        q = arith.floordivsi(a, safe_b)
        return arith.select(b_zero, zero, arith.select(b_minus_one, arith.subi(zero, a), q))
    r = arith.remsi(a, safe_b)
    fix = arith.andi(arith.cmpi(I.ne, r, zero), arith.xori(arith.cmpi(I.slt, r, zero), arith.cmpi(I.slt, b, zero)))
    r = arith.select(fix, arith.addi(r, b), r)
    return arith.select(arith.ori(b_zero, b_minus_one), zero, r)


def _int_power(a: ir.Value, b: ir.Value, dtype: str) -> ir.Value:
    """Integer a**b by square-and-multiply over every bit of b, wrapping like NumPy; branch-free.

    (math.ipowi has no lowering to LLVM. NumPy rejects negative exponents; they give 0 here.)
    """
    zero, one = constant(0, dtype), constant(1, dtype)
    result, base, bits = one, a, b
    for _ in range(_bits(dtype) - 1):
        odd = arith.cmpi(I.ne, arith.andi(bits, one), zero)
        result = arith.select(odd, arith.muli(result, base), result)
        base = arith.muli(base, base)
        bits = arith.shrui(bits, one)
    return result if _is_unsigned(dtype) else arith.select(arith.cmpi(I.slt, b, zero), zero, result)


_FLOAT_PREDICATES = {"equal": F.OEQ, "not_equal": F.UNE, "less": F.OLT, "less_equal": F.OLE, "greater": F.OGT, "greater_equal": F.OGE}
_INT_PREDICATES = {"equal": I.eq, "not_equal": I.ne, "less": I.slt, "less_equal": I.sle, "greater": I.sgt, "greater_equal": I.sge}
_BOOL_PREDICATES = {"equal": I.eq, "not_equal": I.ne, "less": I.ult, "less_equal": I.ule, "greater": I.ugt, "greater_equal": I.uge}
_LOGICAL = {"logical_and": arith.andi, "logical_or": arith.ori, "logical_xor": arith.xori}
_DIALECTS = {"arith": arith, "math": math}


def _compare(op: str) -> Composed:
    def emit(args: list[ir.Value], dtype: str) -> ir.Value:
        if is_float(dtype):
            return arith.cmpf(_FLOAT_PREDICATES[op], *args)
        unsigned = dtype == "bool" or _is_unsigned(dtype)
        return arith.cmpi((_BOOL_PREDICATES if unsigned else _INT_PREDICATES)[op], *args)

    return emit


def _logical(op: str) -> Composed:
    def emit(args: list[ir.Value], dtype: str) -> ir.Value:
        a, b = (cast(x, dtype, "bool") for x in args)
        return _LOGICAL[op](a, b)

    return emit


def _square(args: list[ir.Value], dtype: str) -> ir.Value:
    (x,) = args
    return arith.mulf(x, x) if is_float(dtype) else (x if dtype == "bool" else arith.muli(x, x))


def _divmod(op: str) -> Composed:
    def emit(args: list[ir.Value], dtype: str) -> ir.Value:
        if is_float(dtype):
            return _float_divmod(*args, dtype)[0 if op == "floor_divide" else 1]
        return _int_divmod(*args, dtype, op)

    return emit


def _signbit(args: list[ir.Value], dtype: str) -> ir.Value:
    """The sign bit of a float, NaN's and -0.0's too (a signed compare of its bits with 0)."""
    int_type = ir.IntegerType.get_signless(_bits(dtype))
    return arith.cmpi(I.slt, arith.bitcast(int_type, args[0]), arith.constant(int_type, 0))


def _float_class(predicate: F, finite_ints: bool) -> Composed:
    """isnan/isinf/isfinite: |x| compared with inf (unordered for NaN); every integer is finite."""

    def emit(args: list[ir.Value], dtype: str) -> ir.Value:
        if not is_float(dtype):
            return constant(int(finite_ints), "bool")
        return arith.cmpf(predicate, math.absf(args[0]), constant(float("inf"), dtype))

    return emit


def _scale(numerator: float, denominator: float) -> Composed:
    """x * (numerator / denominator) with the factor rounded to x's dtype as NumPy's deg2rad/rad2deg do."""

    def emit(args: list[ir.Value], dtype: str) -> ir.Value:
        typed = np.dtype(dtype).type
        return arith.mulf(args[0], constant(float(typed(numerator) / typed(denominator)), dtype))

    return emit


def _int_fmod(args: list[ir.Value], dtype: str) -> ir.Value:
    """C's truncated integer remainder as NumPy's fmod: 0 for a zero divisor, no MIN % -1 trap."""
    a, b = args
    zero, one, minus_one = constant(0, dtype), constant(1, dtype), constant(-1, dtype)
    no_remainder = arith.cmpi(I.eq, b, zero)
    if not _is_unsigned(dtype):
        no_remainder = arith.ori(no_remainder, arith.cmpi(I.eq, b, minus_one))
    remainder = arith.remui if _is_unsigned(dtype) else arith.remsi
    return arith.select(no_remainder, zero, remainder(a, arith.select(no_remainder, one, b)))


def _heaviside(args: list[ir.Value], dtype: str) -> ir.Value:
    """NumPy's npy_heaviside: NaN for NaN, h0 at zero, 0 below, 1 above."""
    x, h0 = args
    zero, one = constant(0, dtype), constant(1, dtype)
    step = arith.select(arith.cmpf(F.OLT, x, zero), zero, arith.select(arith.cmpf(F.OEQ, x, zero), h0, one))
    return arith.select(arith.cmpf(F.UNO, x, x), x, step)


def _widened(tiny: float, compute: Callable[[ir.Value], ir.Value], accurate: Callable[[ir.Value], ir.Value]) -> Composed:
    """A float32 x: compute(x) in float64 rounded once, x itself where |x| < tiny (there f(x) rounds
    to x): within about 0.6 ULP. A float64 x: `accurate(x)`."""

    def emit(args: list[ir.Value], dtype: str) -> ir.Value:
        (x,) = args
        if dtype == "float64":
            return accurate(x)
        wide = cast(compute(cast(x, dtype, "float64")), "float64", dtype)
        return arith.select(arith.cmpf(F.OLT, math.absf(x), constant(tiny, dtype)), x, wide)

    return emit


def log1p(x: ir.Value) -> ir.Value:
    """log(1 + x) accurate for tiny x (Goldberg: log(u) * x / (u - 1) with u = 1 + x rounded), for a
    float64 x. (convert-math-to-llvm expands math.log1p as log(1 + x), which loses tiny x entirely.)"""
    one, inf = constant(1, "float64"), constant(float("inf"), "float64")
    u = arith.addf(x, one)
    result = arith.mulf(math.log(u), arith.divf(x, arith.subf(u, one)))
    result = arith.select(arith.cmpf(F.OEQ, u, one), x, result)
    return arith.select(arith.cmpf(F.OEQ, x, inf), x, result)


def expm1(x: ir.Value) -> ir.Value:
    """exp(x) - 1 accurate for tiny x (Kahan: (u - 1) * x / log(u) with u = exp(x) rounded), for a
    float64 x; u - 1 itself where |x| >= 1, which u's error alone bounds (Kahan's factor x / log(u)
    adds up to 2 ULP there: 2.0-2.6 -> 0.9-1.5 ULP; expm1(-36.5) one ULP off put geom.ppf's step one
    further than SciPy's). (convert-math-to-llvm expands math.expm1 as exp(x) - 1.)"""
    one, minus_one, inf = constant(1, "float64"), constant(-1, "float64"), constant(float("inf"), "float64")
    u = math.exp(x)
    um1 = arith.subf(u, one)
    result = arith.divf(arith.mulf(um1, x), math.log(u))
    result = arith.select(arith.ori(arith.cmpf(F.OLE, x, minus_one), arith.cmpf(F.OGE, x, one)), um1, result)
    result = arith.select(arith.cmpf(F.OEQ, u, inf), u, result)
    return arith.select(arith.cmpf(F.OEQ, u, one), x, result)


# float32 in float64: 1 + x is exact for |x| >= 2^-24 and exp(x) - 1 loses at most 2^-52 / |x| relative
# (0.12 ULP from |x| = 2^-25); below those log1p(x) and expm1(x) round to x.
_LOG1P = _widened(2.0**-24, lambda x: math.log(arith.addf(x, constant(1, "float64"))), log1p)
_EXPM1 = _widened(2.0**-25, lambda x: arith.subf(math.exp(x), constant(1, "float64")), expm1)


def _hypot(args: list[ir.Value], dtype: str) -> ir.Value:
    """sqrt(x^2 + y^2) without overflow or underflow: in float64 for float32 (exact squares, one
    rounding at the end), else scaled by the larger magnitude; an infinite operand gives inf, NaN too."""
    x, y = (math.absf(a) for a in args)
    inf = constant(float("inf"), dtype)
    if dtype == "float32":
        wx, wy = (cast(a, dtype, "float64") for a in (x, y))
        result = cast(math.sqrt(arith.addf(arith.mulf(wx, wx), arith.mulf(wy, wy))), "float64", dtype)
    else:
        big, small = arith.maximumf(x, y), arith.minimumf(x, y)
        ratio = arith.divf(small, big)
        result = arith.mulf(big, math.sqrt(arith.addf(constant(1, dtype), arith.mulf(ratio, ratio))))
        result = arith.select(arith.cmpf(F.OEQ, big, constant(0, dtype)), big, result)
    either_inf = arith.ori(arith.cmpf(F.OEQ, x, inf), arith.cmpf(F.OEQ, y, inf))
    return arith.select(either_inf, inf, result)


def _logaddexp(base2: bool) -> Composed:
    """NumPy's npy_logaddexp(2): x + log(1 + e^-(x-y)) from the larger operand; equal operands (the
    same infinities too) give x + log(2) (+1), NaN gives NaN."""

    def emit(args: list[ir.Value], dtype: str) -> ir.Value:
        x, y = args
        zero = constant(0, dtype)
        power, log2 = (math.exp2, constant(np.log2(np.e), dtype)) if base2 else (math.exp, None)

        def log1p_of(t: ir.Value) -> ir.Value:
            term = cast(log1p(cast(power(t), dtype, "float64")), "float64", dtype)
            return arith.mulf(log2, term) if log2 is not None else term

        diff = arith.subf(x, y)
        above = arith.addf(x, log1p_of(arith.negf(diff)))
        below = arith.addf(y, log1p_of(diff))
        unequal = arith.select(arith.cmpf(F.OGT, diff, zero), above, arith.select(arith.cmpf(F.OLE, diff, zero), below, diff))
        tie = arith.addf(x, constant(1.0 if base2 else np.log(2.0), dtype))
        return arith.select(arith.cmpf(F.OEQ, x, y), tie, unequal)

    return emit


def _shift(op: str) -> Composed:
    """NumPy's shifts: a count of the bit width or more (a negative one too, read unsigned) shifts
    every bit out: 0 for << and an unsigned >>, the sign for a signed >>."""

    def emit(args: list[ir.Value], dtype: str) -> ir.Value:
        a, b = args
        last = constant(_bits(dtype) - 1, dtype)
        if op == "right_shift" and not _is_unsigned(dtype):
            return arith.shrsi(a, arith.minui(b, last))
        if op == "right_shift":
            return arith.select(arith.cmpi(I.ule, b, last), arith.shrui(a, b), constant(0, dtype))
        return arith.select(arith.cmpi(I.ule, b, last), arith.shli(a, b), constant(0, dtype))

    return emit


def _magnitude(x: ir.Value, dtype: str) -> ir.Value:
    """|x| read as unsigned, as NumPy's npy_gcd takes it (|INT_MIN| wraps to 2**(bits-1))."""
    return arith.select(arith.cmpi(I.slt, x, constant(0, dtype)), arith.subi(constant(0, dtype), x), x)


def _euclid(a: ir.Value, b: ir.Value) -> ir.Value:
    """gcd of unsigned a and b by Euclid's loop (scf.while: while a != 0, (a, b) = (b % a, a)), as NumPy's npy_gcdu."""
    loop = scf.WhileOp([a.type, a.type], [a, b])
    before = loop.before.blocks.append(a.type, a.type)
    with ir.InsertionPoint(before):
        x, y = before.arguments
        scf.ConditionOp(arith.cmpi(I.ne, x, arith.constant(a.type, 0)), [x, y])
    after = loop.after.blocks.append(a.type, a.type)
    with ir.InsertionPoint(after):
        x, y = after.arguments
        scf.YieldOp([arith.remui(y, x), x])
    return loop.results[1]


def _gcd(args: list[ir.Value], dtype: str) -> ir.Value:
    """NumPy's gcd of integers: of their magnitudes, never negative (but gcd(INT_MIN, 0) wraps, as NumPy's)."""
    return _euclid(*(_magnitude(x, dtype) for x in args))


def _lcm(args: list[ir.Value], dtype: str) -> ir.Value:
    """NumPy's lcm: |a| / gcd * |b| in unsigned arithmetic wrapping like NumPy's, 0 if either is 0."""
    a, b = (_magnitude(x, dtype) for x in args)
    g = _euclid(a, b)
    zero = constant(0, dtype)
    g_zero = arith.cmpi(I.eq, g, zero)
    return arith.select(g_zero, zero, arith.muli(arith.divui(a, arith.select(g_zero, constant(1, dtype), g)), b))


# scipy.special's functions written in scalar code (lowering/scalarcode.py): name -> the module that computes them
SCALAR_CODE = {"gammainc": "incomplete", "gammaincc": "incomplete", "gammaincinv": "incomplete_inverse", "gammainccinv": "incomplete_inverse",
               **dict.fromkeys(("betainc", "betaincc", "beta_pdf"), "incompletebeta"), "psi": "digamma",
               "betaincinv": "incompletebeta_inverse", "betainccinv": "incompletebeta_inverse",
               **dict.fromkeys(("beta", "betaln", "binom", "poch"), "betafunction"), **dict.fromkeys(("zeta", "riemann_zeta"), "zeta"),
               **dict.fromkeys(("exp1", "expi"), "expint"), **dict.fromkeys(("i0e", "i1", "i1e", "k0", "k0e", "k1", "k1e"), "bessel"),
               **dict.fromkeys(("j0", "j1", "y0", "y1"), "bessel_jy"), **dict.fromkeys(("ellipk", "ellipkm1", "ellipe"), "elliptic"),
               "spence": "dilogarithm", "owens_t": "owens", "zetac": "zeta", "agm": "elliptic", "expn": "expn",
               **dict.fromkeys(("ellipkinc", "ellipeinc"), "elliptic_incomplete"),
               **dict.fromkeys(("elliprc", "elliprd", "elliprf", "elliprg"), "carlson"), **dict.fromkeys(("dawsn", "erfi"), "dawson"),
               "kolmogorov": "kolmogorov", "kolmogi": "kolmogorov",
               **dict.fromkeys(("legendre_l", "chebyt_l", "chebyu_l", "genlaguerre_l", "gegenbauer_l"), "orthopoly"),
               **dict.fromkeys(("bessel_jn", "bessel_yn", "bessel_kn", "bessel_kne", "bessel_ive"), "bessel_integer")}
# The ops whose semantics take several MLIR ops (records mark them ops.COMPOSED), by name: the
# scalar result from the operands and their dtype.
_COMPOSED: dict[str, Composed] = {
    "negative": lambda args, dtype: arith.subi(constant(0, dtype), args[0]),
    "absolute": lambda args, dtype: args[0],  # bool
    "square": _square,
    "reciprocal": lambda args, dtype: arith.divf(constant(1, dtype), args[0]),
    "sign": lambda args, dtype: _sign(args[0], dtype),
    "logical_not": lambda args, dtype: arith.xori(cast(args[0], dtype, "bool"), constant(1, "bool")),
    "floor_divide": _divmod("floor_divide"),
    "remainder": _divmod("remainder"),
    "power": lambda args, dtype: _int_power(*args, dtype),
    **{op: _compare(op) for op in _FLOAT_PREDICATES},
    **{op: _logical(op) for op in _LOGICAL},
    **dict.fromkeys(("floor", "ceil", "trunc"), lambda args, dtype: args[0]),  # integers
    "log1p": _LOG1P,
    "expm1": _EXPM1,
    "signbit": _signbit,
    "isnan": _float_class(F.UNO, False),
    "isinf": _float_class(F.OEQ, False),
    "isfinite": _float_class(F.OLT, True),
    "deg2rad": _scale(np.pi, 180),
    "rad2deg": _scale(180, np.pi),
    "invert": lambda args, dtype: arith.xori(args[0], constant(1 if dtype == "bool" else -1, dtype)),
    "fmod": _int_fmod,
    "heaviside": _heaviside,
    "hypot": _hypot,
    "logaddexp": _logaddexp(base2=False),
    "logaddexp2": _logaddexp(base2=True),
    "left_shift": _shift("left_shift"),
    "right_shift": _shift("right_shift"),
    "gcd": _gcd,
    "lcm": _lcm,
    "i0": lambda *args: special.i0(*args),  # (looked up when called: special.py imports this module)
    "gammaln": lambda args, dtype: _gammaln(args[0], dtype),
    "gamma": lambda args, dtype: libm_call("tgamma", args[0], dtype),  # (within 4 ULP of mpmath here; SciPy's Cephes 5)
    **{name: lambda args, dtype, name=name: _in_scalar_code(name, args, dtype) for name in SCALAR_CODE},
}


def _in_scalar_code(name: str, args: list[ir.Value], dtype: str) -> ir.Value:
    """scipy.special's function `name`, written in scalar code (SCALAR_CODE names its module), in float64, the
    result rounded to dtype once."""
    import importlib

    from .scalarcode import Real

    module = importlib.import_module(f".{SCALAR_CODE[name]}", __package__)
    value = getattr(module, name)(*(Real(cast(x, dtype, "float64")) for x in args))
    return cast(value.value, "float64", dtype)


def _gammaln(x: ir.Value, dtype: str) -> ir.Value:
    """scipy.special.gammaln: libm's lgamma, but -inf at -inf (SciPy's Cephes; lgamma gives +inf)."""
    return arith.select(arith.cmpf(F.OEQ, x, constant(-np.inf, dtype)), x, libm_call("lgamma", x, dtype))


def libm_call(name: str, x: ir.Value, dtype: str) -> ir.Value:
    """libm's float64 function `name` of x (float32: widened, the result rounded once), called: for functions MLIR's
    math dialect lacks (lgamma). The module declares it (once); the JIT resolves it in the process's libm."""
    f64 = ir.F64Type.get()
    wide = x if dtype == "float64" else arith.extf(f64, x)
    module = ir.InsertionPoint.current.block.owner
    while module.name != "builtin.module":
        module = module.parent
    if name not in ir.SymbolTable(module.operation):
        with ir.InsertionPoint.at_block_begin(module.regions[0].blocks[0]), ir.Location.unknown():
            func.FuncOp(name, ([f64], [f64]), visibility="private")
    value = func.call([f64], ir.FlatSymbolRefAttr.get(name), [wide])
    return value if dtype == "float64" else arith.truncf(x.type, value)


def mlir_op(name: str) -> Callable[..., ir.Value]:
    """The builder of the MLIR op a registry record names: "math.log1p" is mlir.dialects.math.log1p."""
    dialect, op = name.split(".")
    return getattr(_DIALECTS[dialect], op)


def apply(op: str, dtype: str, out_dtype: str, args: list[ir.Value]) -> ir.Value:
    """The scalar result of `op` on `args` (all of `dtype`), of `out_dtype`: the MLIR op its registry
    record names for dtype's class, or its composed semantics."""
    if op == "astype":
        return cast(args[0], dtype, out_dtype)
    if op == "bitcast":
        return bitcast(args[0], dtype, out_dtype)
    if op == "where":
        return arith.select(*args)
    if not ops.supports(op, dtype):
        raise UnsupportedError(f"op {op} is not supported for dtype {dtype}")
    if dtype in NARROW_FLOATS:
        return _in_float32(op, dtype, out_dtype, args)
    named = ops.op(op).scalar[ops.dtype_class(dtype)]
    if _is_unsigned(dtype) and named in _UNSIGNED:
        return _UNSIGNED[named](*args)
    return mlir_op(named)(*args) if named != ops.COMPOSED else _COMPOSED[op](args, dtype)


# The signed ops of the "int" records and their unsigned forms (np.abs of an unsigned is itself).
_UNSIGNED: dict[str, Callable[..., ir.Value]] = {"arith.maxsi": arith.maxui, "arith.minsi": arith.minui, "math.absi": lambda x: x}


def _in_float32(op: str, dtype: str, out_dtype: str, args: list[ir.Value]) -> ir.Value:
    """A float16/bfloat16 op as NumPy's half loops and ml_dtypes compute it: in float32, the result
    rounded back."""
    wide = "float32" if out_dtype == dtype else out_dtype
    value = apply(op, "float32", wide, [cast(a, dtype, "float32") for a in args])
    return cast(value, wide, out_dtype)


# Where NumPy starts a float sum: NumPy 2 starts at the identity +0.0 (sum([-0.0]) is 0.0), older
# NumPy at the first element, which is the same as starting at -0.0.
_SUM_START = float(np.add.reduce(np.array([-0.0])))


def reduction_identity(op: str, dtype: str, empty: bool) -> float:
    """Start value of a reduction (float sums: where NumPy starts them, see _SUM_START)."""
    if op == "sum":
        return _SUM_START if is_float(dtype) and not empty else 0
    if op == "prod":
        return 1
    if is_float(dtype):
        return float("-inf") if op == "max" else float("inf")
    if dtype == "bool":
        return 0 if op == "max" else 1
    info = np.iinfo(dtype)
    return int(info.min) if op == "max" else int(info.max)


STEPS = {"sum": "add", "prod": "multiply", "max": "maximum", "min": "minimum"}  # a reduction's binary op


def combine(op: str, dtype: str, value: ir.Value, acc: ir.Value) -> ir.Value:
    """One reduction step acc' = acc (op) value.

    Float sums and products carry `fastmath<reassoc>` on this step only: the summation order of a
    reduction is unspecified (NumPy sums pairwise), and the flag lets LLVM keep vector-wide partial
    sums, as cpu-openmp keeps one partial result per thread. Nothing else in the body may be
    reassociated; max/min need no flag (they vectorize as is)."""
    result = apply(STEPS[op], dtype, dtype, [acc, value])
    if is_float(dtype) and dtype not in NARROW_FLOATS and op in ("sum", "prod"):  # (narrow: the step ends in a rounding)
        result.owner.attributes["fastmath"] = ir.Attribute.parse("#arith.fastmath<reassoc>")
    return result


FAST_MATH_OPS = frozenset({"arith.addf", "arith.subf", "arith.mulf", "arith.divf", "arith.remf", "arith.negf"})
_FLAGS_TEXT = re.compile(r"<([^>]*)>")


def allow_fast_math(root: ir.Operation, flags: frozenset[str]) -> None:
    """Give each float arithmetic op under `root` (FAST_MATH_OPS: not compares, selects or max/min,
    whose NaN and inf handling and reduction identities stay exact, nor an op whose bits are read,
    as order_key's -0.0 + 0.0) the fast-math `flags` the kernel allows, joined with its own (a
    reduction step's reassoc): LLVM may then contract, reassociate..."""
    if not flags:
        return

    def tag(op: ir.Operation) -> ir.WalkResult:
        if op.name in FAST_MATH_OPS and not any(use.owner.name == "arith.bitcast" for use in op.result.uses):
            own = _FLAGS_TEXT.search(str(op.attributes["fastmath"])) if "fastmath" in op.attributes else None
            joined = flags | set(own[1].replace(" ", "").split(",") if own else ()) - {"none"}
            op.attributes["fastmath"] = ir.Attribute.parse(f"#arith.fastmath<{str(FastMath(joined))}>")
        return ir.WalkResult.ADVANCE

    root.walk(tag)


KEYS = {"float32": "int32", "float64": "int64"}  # argmax/argmin compare these floats as integer keys (order_key)


def order_key(op: str, dtype: str, value: ir.Value, lanes: int = 0) -> ir.Value:
    """A float32/float64 `value` as the integer (KEYS[dtype]) whose signed order is the float order,
    with -0.0 equal to 0.0 and every NaN the extreme `op` picks first (NaN wins, as NumPy's argmax):
    the arg-reduction then keeps a running integer max/min, which vectorizes without masked stores.
    Other dtypes are their own keys. `lanes`: `value` is a vector of that many."""
    if dtype not in KEYS:
        return value
    key, bits = KEYS[dtype], _bits(dtype)
    raw_type = ir.VectorType.get([lanes], element_type(key)) if lanes else element_type(key)
    raw = arith.bitcast(raw_type, arith.addf(value, constant(0.0, dtype, lanes=lanes)))  # -0.0 + 0.0 is 0.0
    magnitude = arith.andi(arith.shrsi(raw, constant(bits - 1, key, lanes=lanes)), constant((1 << (bits - 1)) - 1, key, lanes=lanes))
    nan = constant((1 << (bits - 1)) - 1 if op == "max" else -(1 << (bits - 1)), key, lanes=lanes)
    return arith.select(arith.cmpf(F.UNO, value, value), nan, arith.xori(raw, magnitude))


def pick(op: str, dtype: str, value: ir.Value, index: ir.Value, best: ir.Value, best_index: ir.Value,
         ascending: bool = False) -> tuple[ir.Value, ir.Value]:
    """One step of argmax (op "max") or argmin: (value, index) replaces (best, best_index) when it
    is larger (smaller), equal at a smaller index, or NaN where best is not (both NaN: the smaller
    index). A total order, so the result is NumPy's (the first index of the first max, or of the
    first NaN) in whatever order the elements come; with `ascending` (integers met in ascending
    index order, as each lane of a split reduction meets them) a tie never wins: one test fewer."""
    if is_float(dtype):
        earlier = arith.cmpi(I.slt, index, best_index)
        beyond = arith.cmpf(F.OGT if op == "max" else F.OLT, value, best)
        tie = arith.andi(arith.cmpf(F.OEQ, value, best), earlier)
        nan = arith.andi(arith.cmpf(F.UNO, value, value), arith.ori(arith.cmpf(F.ORD, best, best), earlier))
        better = arith.ori(arith.ori(beyond, tie), nan)
        return arith.select(better, value, best), arith.select(better, index, best_index)
    # bool (i1) compares unsigned: True is 1, not -1
    signed = dtype != "bool" and not _is_unsigned(dtype)
    order = {("max", True): I.sgt, ("min", True): I.slt, ("max", False): I.ugt, ("min", False): I.ult}[op, signed]
    better = arith.cmpi(order, value, best)
    if not ascending:
        better = arith.ori(better, arith.andi(arith.cmpi(I.eq, value, best), arith.cmpi(I.slt, index, best_index)))
    extreme = {("max", True): arith.maxsi, ("min", True): arith.minsi, ("max", False): arith.maxui, ("min", False): arith.minui}[op, signed]
    return extreme(value, best), arith.select(better, index, best_index)  # the winner's value is the extreme (ties are equal)
