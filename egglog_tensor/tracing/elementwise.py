"""NumPy functions that are compositions of elementwise ops, written as NumPy writes them, so the
results are NumPy's bit for bit: round/around (scale, rint, unscale), nan_to_num, float_power,
i0 (an op of its own, within a few ulp), and diff (differences of neighbours: a subtraction of two shifted views)."""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

from ..errors import DataValueError, TracingError, UFuncTypeError, UnsupportedError
from ..graph import float_info, is_float
from .core import IMPLEMENTATIONS, Tracer, as_array, as_tracer, astype, check_at_run_time, describe, fail, implements, lift, normalize_axis, result, trace_of
from .shapes import broadcast_to, concatenate
from .ufuncs import apply_ufunc, loop_dtypes


def _power_of_ten(n: int) -> float:
    """10**n as NumPy's round computes it (calculation.c power_of_ten: a table to 1e8, then by tens)."""
    if n < 9:
        return float(10**n)
    value = 1e9
    for _ in range(n - 9):
        value *= 10.0
    return value


@implements("round", "around")
def round_(a: Any, decimals: Any = 0, out: Any = None) -> Tracer:
    """np.round: x * 10**d, rint, / 10**d in x's dtype (d < 0: / then *); integers unchanged for d >= 0,
    else rounded in float64 and cast back, as NumPy does (halves to even). Each step is written to an
    array of x's dtype, as NumPy's: bfloat16's products with the Python float, float32, are cast back."""
    if out is not None:
        raise fail(UnsupportedError, "np.round(out=...) is not supported")
    trace = trace_of([a])
    x = as_tracer(trace, a)
    d = operator.index(decimals)
    if x.dtype.kind == "b":
        raise fail(UnsupportedError, "np.round of a bool array is not supported")
    if x.dtype.kind in "iu" and d >= 0:
        return IMPLEMENTATIONS["copy"](x)
    scaled = astype(x, "float64") if x.dtype.kind in "iu" else x
    f = _power_of_ten(abs(d))
    first, then = (np.multiply, np.true_divide) if d >= 0 else (np.true_divide, np.multiply)
    dtype = scaled.dtype.name
    scaled = astype(apply_ufunc(trace, first, (scaled, f)), dtype)
    rounded = astype(apply_ufunc(trace, then, (apply_ufunc(trace, np.rint, (scaled,)), f)), dtype)
    return astype(rounded, x.dtype.name) if x.dtype.kind in "iu" else rounded


@implements("nan_to_num")
def nan_to_num(x: Any, copy: bool = True, nan: float = 0.0, posinf: float | None = None, neginf: float | None = None) -> Tracer:
    """NaN -> `nan`, +inf -> `posinf` (default the dtype's largest), -inf -> `neginf` (its most negative);
    integers and bools unchanged."""
    trace = trace_of([x])
    x = as_tracer(trace, x)
    if not is_float(x.dtype):
        return IMPLEMENTATIONS["copy"](x)
    info = float_info(x.dtype)
    big = float(info.max) if posinf is None else posinf
    small = float(info.min) if neginf is None else neginf
    where = IMPLEMENTATIONS["where"]
    finite = where(apply_ufunc(trace, np.equal, (x, np.inf)), big, where(apply_ufunc(trace, np.equal, (x, -np.inf)), small, x))
    return astype(where(apply_ufunc(trace, np.isnan, (x,)), nan, finite), x.dtype.name)


@implements("ufunc.float_power")
def float_power(x1: Any, x2: Any) -> Tracer:
    """x1 ** x2 computed in float64 (NumPy's float_power: C pow, no special exponents)."""
    trace = trace_of([x1, x2])
    loop = loop_dtypes(np.float_power, (x1, x2))
    if loop[-1] != np.float64:
        raise fail(UnsupportedError, f"np.float_power({describe([x1, x2])}) in {loop[-1]} is not supported (float64 only)")
    return result(trace, trace.make("power", (lift(trace, x1, "float64"), lift(trace, x2, "float64"))))


_NO_VALUE = getattr(np, "_NoValue", None)


@implements("diff")
def diff(a: Any, n: int = 1, axis: int = -1, prepend: Any = _NO_VALUE, append: Any = _NO_VALUE) -> Tracer:
    """a[1:] - a[:-1] along `axis`, n times (not_equal for bools), after `prepend`/`append` are joined
    on (a scalar broadcast to one slice; NumPy makes them arrays first: a Python number is not weak)."""
    trace = trace_of([a, prepend, append])
    x = as_tracer(trace, a)
    n = operator.index(n)
    if n < 0:
        raise fail(TracingError, f"order must be non-negative but got {n}")
    if x.ndim == 0:
        raise fail(TracingError, "diff requires input that is at least one dimensional")
    ax = normalize_axis(x.ndim, axis)
    parts = []
    for extra in (prepend, x, append):
        if extra is _NO_VALUE:
            continue
        part = extra if isinstance(extra, Tracer) else as_tracer(trace, np.asarray(extra))
        if part.ndim == 0:
            part = broadcast_to(part, tuple(1 if i == ax else d for i, d in enumerate(x.shape)))
        parts.append(part)
    x = concatenate(parts, ax) if len(parts) > 1 else x
    op = np.not_equal if x.dtype == np.bool_ else np.subtract
    later = tuple(slice(1, None) if i == ax else slice(None) for i in range(x.ndim))
    earlier = tuple(slice(None, -1) if i == ax else slice(None) for i in range(x.ndim))
    for _ in range(n):
        x = apply_ufunc(trace, op, (x[later], x[earlier]))
    return x


def _float_operand(trace: Any, v: Any) -> Any:
    """isclose's reading of an operand: a Python number stays one (weak), anything else is an array (a 0-d one is not weak)."""
    return v if type(v) in (int, float) else as_array(trace, v)


@implements("isclose")
def isclose(a: Any, b: Any, rtol: Any = 1e-05, atol: Any = 1e-08, equal_nan: bool = False) -> Tracer:
    """|a - b| <= atol + rtol * |b| where b is finite, or a == b (NaN == NaN with `equal_nan`), as NumPy
    computes it: b in result_type(b, 1.0), rtol and atol as float64 arrays (not weak)."""
    trace = trace_of([a, b, rtol, atol])
    x, y, rtol, atol = (_float_operand(trace, v) for v in (a, b, rtol, atol))
    if isinstance(y, Tracer):
        y = astype(y, np.result_type(y.dtype, 1.0).name)
    elif type(y) is int:
        y = float(y)
    ufunc = lambda f, *args: apply_ufunc(trace, f, args)  # noqa: E731
    close = ufunc(np.less_equal, ufunc(np.absolute, ufunc(np.subtract, x, y)), ufunc(np.add, atol, ufunc(np.multiply, rtol, ufunc(np.absolute, y))))
    out = ufunc(np.logical_or, ufunc(np.logical_and, close, ufunc(np.isfinite, y)), ufunc(np.equal, x, y))
    if equal_nan:
        out = ufunc(np.logical_or, out, ufunc(np.logical_and, ufunc(np.isnan, x), ufunc(np.isnan, y)))
    return as_tracer(trace, out)


@implements("allclose")
def allclose(a: Any, b: Any, rtol: Any = 1e-05, atol: Any = 1e-08, equal_nan: bool = False) -> Tracer:
    """all(isclose(...)): a 0-d bool array (NumPy returns a Python bool, which needs the values)."""
    return IMPLEMENTATIONS["all"](isclose(a, b, rtol, atol, equal_nan))


def _nan_ignoring(pick: np.ufunc, x1: Any, x2: Any) -> Tracer:
    """fmax (pick maximum) / fmin (minimum): `pick`, but x1 where x2 is NaN and x2 where x1 is. Equal zeros
    of opposite signs give `pick`'s zero (NumPy's fmax gives x1's or x2's depending on the array's length)."""
    trace = trace_of([x1, x2])
    picked = apply_ufunc(trace, pick, (x1, x2))
    if not is_float(picked.dtype):
        return picked
    where = IMPLEMENTATIONS["where"]
    return where(apply_ufunc(trace, np.isnan, (x2,)), x1, where(apply_ufunc(trace, np.isnan, (x1,)), x2, picked))


@implements("ufunc.fmax")
def fmax(x1: Any, x2: Any) -> Tracer:
    """np.fmax: the maximum, NaN only where both are NaN."""
    return _nan_ignoring(np.maximum, x1, x2)


@implements("ufunc.fmin")
def fmin(x1: Any, x2: Any) -> Tracer:
    """np.fmin: the minimum, NaN only where both are NaN."""
    return _nan_ignoring(np.minimum, x1, x2)


@implements("sinc")
def sinc(x: Any) -> Tracer:
    """sin(pi x) / (pi x) as NumPy computes it: pi * x with x an array (ints: float64), 0 replaced by the dtype's eps."""
    trace = trace_of([x])
    y = apply_ufunc(trace, np.multiply, (np.pi, as_array(trace, x)))
    eps = float_info(y.dtype).eps if is_float(y.dtype) else 1e-20
    y = IMPLEMENTATIONS["where"](apply_ufunc(trace, np.not_equal, (y, 0)), y, y.dtype.type(eps))
    return apply_ufunc(trace, np.divide, (apply_ufunc(trace, np.sin, (y,)), y))


@implements("i0")
def i0(x: Any) -> Tracer:
    """np.i0, the modified Bessel function I0 (lowering/special.py): in x's dtype (float32, float64; integers
    as float64), as NumPy computes it; half floats refused (NumPy computes them in float16)."""
    trace = trace_of([x])
    y = as_array(trace, x)
    dtype = y.dtype.name if is_float(y.dtype.name) else "float64"
    if dtype not in ("float32", "float64"):
        raise fail(UnsupportedError, f"np.i0 of {dtype} is not supported (NumPy computes it in {dtype}); cast to float32")
    return result(trace, trace.make("i0", (lift(trace, y, dtype),)))


@implements("fix")
def fix(x: Any, out: Any = None) -> Tracer:
    """Rounded toward zero as NumPy writes it: floor where x >= 0, else ceil (so -0.5 gives -0.0)."""
    if out is not None:
        raise fail(UnsupportedError, "np.fix(out=...) is not supported")
    x = _real_only(x)
    return IMPLEMENTATIONS["where"](x >= 0, np.floor(x), np.ceil(x))


@implements("angle")
def angle(z: Any, deg: bool = False) -> Tracer:
    """The argument of a real array: arctan2(0, z) (pi for negatives and -0.0), in degrees if `deg`."""
    a = apply_ufunc(trace_of([z]), np.arctan2, (0, _real_only(z)))
    return a * (180 / np.pi) if deg else a


def _real_only(x: Any) -> Tracer:
    """A traced array is real (complex arguments are refused), so its real part is itself."""
    return as_array(trace_of([x]), x)


@implements("real")
def real(val: Any) -> Tracer:
    """np.real of a real array: the array."""
    return IMPLEMENTATIONS["copy"](_real_only(val))


@implements("imag")
def imag(val: Any) -> Tracer:
    """np.imag of a real array: zeros of its dtype and shape."""
    return IMPLEMENTATIONS["zeros_like"](_real_only(val))


@implements("ufunc.conjugate")
def conjugate(x: Any) -> Tracer:
    """np.conj / np.conjugate of a real array: the array, in the dtype NumPy's loop gives (bool: int8)."""
    a = _real_only(x)
    return astype(a, np.conjugate.resolve_dtypes((a.dtype, None))[-1].name)


@implements("select")
def select(condlist: Any, choicelist: Any, default: Any = 0) -> Tracer:
    """The first choice whose condition holds, else `default`: np.where from the last condition to the first,
    in result_type of the choices and default (Python numbers weak, as NumPy's select keeps them)."""
    if len(condlist) != len(choicelist):
        raise fail(TracingError, "list of cases must be same length as list of conditions")
    if not condlist:
        raise fail(TracingError, "select with an empty condition list is not possible")
    trace = trace_of([*condlist, *choicelist, default])
    choices = [v if type(v) in (int, float) or isinstance(v, Tracer) else np.asarray(v) for v in (*choicelist, default)]
    dtype = IMPLEMENTATIONS["result_type"](*choices).name
    conds = [as_array(trace, c) for c in condlist]
    for i, c in enumerate(conds):
        if c.dtype != np.bool_:
            raise fail(TracingError, f"invalid entry {i} in condlist: should be boolean ndarray")
    shape = np.broadcast_shapes(*(c.shape for c in conds), *(np.shape(v) if not isinstance(v, Tracer) else v.shape for v in choices))
    out = broadcast_to(astype(as_tracer(trace, choices[-1]), dtype), shape)
    for cond, choice in zip(reversed(conds), reversed(choices[:-1]), strict=True):
        out = astype(IMPLEMENTATIONS["where"](cond, choice, out), dtype)
    return out


@implements("choose")
def choose(a: Any, choices: Any, out: Any = None, mode: str = "raise") -> Tracer:
    """choices[a[i]][i] over the broadcast shape of a and the choices: np.where from the last choice to the first, in
    result_type of the choices; an index out of range raises at run time (mode "raise", NumPy's ValueError), is taken
    modulo their count ("wrap") or clipped to it ("clip")."""
    if out is not None:
        raise fail(UnsupportedError, "np.choose(..., out=...) is not supported in a kernel; use its result")
    if mode not in ("raise", "wrap", "clip"):
        raise fail(TracingError, f"np.choose: clipmode not understood: {mode!r}")
    if isinstance(choices, Tracer):
        choices = list(choices)
    trace = trace_of([a, *choices])
    index = as_array(trace, a)
    if index.dtype.kind not in "iub":
        raise fail(TracingError, f"np.choose: the index array must be integers, not {index.dtype}")
    n = len(choices)
    if not n:
        raise fail(TracingError, "np.choose: choices must not be empty")
    if mode == "wrap":
        index = index % n
    elif mode == "clip":
        index = np.clip(index, 0, n - 1)
    else:
        check_at_run_time((index < 0) | (index >= n), "np.choose: invalid entry in choice array", DataValueError, of="indices ")
    values = [v if type(v) in (int, float) or isinstance(v, Tracer) else np.asarray(v) for v in choices]
    dtype = IMPLEMENTATIONS["result_type"](*values).name
    shape = np.broadcast_shapes(index.shape, *(v.shape if isinstance(v, Tracer) else np.shape(v) for v in values))
    chosen = broadcast_to(astype(as_tracer(trace, values[-1]), dtype), shape)
    for k in range(n - 2, -1, -1):
        chosen = astype(IMPLEMENTATIONS["where"](index == k, values[k], chosen), dtype)
    return chosen


@implements("ufunc.ldexp")
def ldexp(x1: Any, x2: Any) -> Tracer:
    """x1 * 2**x2 in NumPy's loop dtype (float x1, int x2): the scaling computed in float32 (float16) or float64 and
    rounded once (exact but where that dtype itself overflows or goes subnormal)."""
    trace = trace_of([x1, x2])
    loop = loop_dtypes(np.ldexp, (x1, x2))
    work = "float32" if loop[-1] == np.float16 else "float64"  # wide enough that x1 * 2**x2 rounds once, at the cast
    scale = apply_ufunc(trace, np.exp2, (as_tracer(trace, x2).astype(work),))
    return astype(apply_ufunc(trace, np.multiply, (as_tracer(trace, x1).astype(work), scale)), loop[-1].name)


@implements("ufunc.modf")
def modf(x: Any) -> tuple[Tracer, Tracer]:
    """(fractional part, integral part), both with x's sign as C's modf (modf(-3.0) is (-0.0, -3.0), modf(inf) (0.0, inf))."""
    trace = trace_of([x])
    a = as_tracer(trace, x)
    if not is_float(a.dtype):
        a = astype(a, np.modf.resolve_dtypes((a.dtype, None, None))[-1].name)
    whole = apply_ufunc(trace, np.trunc, (a,))
    frac = IMPLEMENTATIONS["where"](apply_ufunc(trace, np.isinf, (a,)), a.dtype.type(0), apply_ufunc(trace, np.subtract, (a, whole)))
    return apply_ufunc(trace, np.copysign, (frac, a)), whole


@implements("ufunc.divmod")
def divmod_(x1: Any, x2: Any) -> tuple[Tracer, Tracer]:
    """np.divmod: (floor_divide, remainder), NumPy's two ufuncs."""
    trace = trace_of([x1, x2])
    return apply_ufunc(trace, np.floor_divide, (x1, x2)), apply_ufunc(trace, np.remainder, (x1, x2))


@implements("ufunc.frexp")
def frexp(x: Any) -> tuple[Tracer, Tracer]:
    """(m, e) with x = m * 2**e, 0.5 <= |m| < 1 (0, inf and NaN: x itself and 0), e int32: e from log2 |x|,
    corrected by one either way, and m = x / 2**e divided in two exact halves (no overflow at the dtype's max)."""
    trace = trace_of([x])
    a = as_tracer(trace, x)
    a = astype(a, np.frexp.resolve_dtypes((a.dtype, None, None))[1].name)
    where = IMPLEMENTATIONS["where"]
    f = lambda name, *args: apply_ufunc(trace, getattr(np, name), args)  # noqa: E731
    special = f("logical_or", f("equal", a, 0), f("logical_not", f("isfinite", a)))
    magnitude = where(special, a.dtype.type(1), f("absolute", a))
    e = f("add", f("floor", f("log2", magnitude)), 1)

    def scaled(e: Tracer) -> Tracer:
        half = f("floor", f("multiply", e, 0.5))
        return f("divide", f("divide", magnitude, f("exp2", half)), f("exp2", f("subtract", e, half)))

    e = where(f("greater_equal", scaled(e), 1), f("add", e, 1), e)
    e = where(f("less", scaled(e), 0.5), f("subtract", e, 1), e)
    m = f("copysign", scaled(e), a)
    return where(special, a, m), astype(where(special, a.dtype.type(0), e), "int32")


@implements("ufunc.bitwise_count")
def bitwise_count(x: Any) -> Tracer:
    """np.bitwise_count: the 1 bits of |x| as uint8 (bool: itself), by SWAR sums of bit pairs, nibbles and bytes in
    x's unsigned type (LLVM turns them into one popcnt)."""
    trace = trace_of([x])
    a = as_tracer(trace, x)
    if a.dtype == np.bool_:
        return astype(a, "uint8")
    if a.dtype.kind not in "iu":
        raise fail(UFuncTypeError, f"ufunc 'bitwise_count' not supported for the input types ({a.dtype}): integers only")
    unsigned = np.dtype(f"uint{8 * a.dtype.itemsize}").type
    f = lambda name, *args: apply_ufunc(trace, getattr(np, name), args)  # noqa: E731
    v = astype(f("absolute", a), unsigned.__name__) if a.dtype.kind == "i" else a
    ones = lambda byte: unsigned(int.from_bytes(bytes([byte]) * a.dtype.itemsize, "little"))  # noqa: E731  (`byte` in every byte)
    v = f("subtract", v, f("bitwise_and", f("right_shift", v, unsigned(1)), ones(0x55)))
    v = f("add", f("bitwise_and", v, ones(0x33)), f("bitwise_and", f("right_shift", v, unsigned(2)), ones(0x33)))
    v = f("bitwise_and", f("add", v, f("right_shift", v, unsigned(4))), ones(0x0F))
    if a.dtype.itemsize > 1:
        v = f("right_shift", f("multiply", v, ones(0x01)), unsigned(8 * a.dtype.itemsize - 8))
    return astype(v, "uint8")


@implements("ufunc.nextafter")
def nextafter(x1: Any, x2: Any) -> Tracer:
    """The float after x1 toward x2, from frexp's exponent: |x1| plus or minus its spacing on that side (half
    as much below a power of two; the smallest subnormal at least), sign kept; 0 steps to +-that subnormal,
    inf to +-max; x2 itself where equal (float16: x1, as NumPy's half loop), NaN where either is."""
    trace = trace_of([x1, x2])
    dtype = loop_dtypes(np.nextafter, (x1, x2))[-1]
    if dtype not in (np.float16, np.float32, np.float64):
        raise fail(UnsupportedError, f"np.nextafter({describe([x1, x2])}) is not supported (float16, float32, float64 are)")
    a, b = (as_tracer(trace, v).astype(dtype.name) for v in (x1, x2))
    f = lambda name, *args: apply_ufunc(trace, getattr(np, name), args)  # noqa: E731
    where, one = IMPLEMENTATIONS["where"], dtype.type(1)
    info = float_info(dtype.name)
    digits, tiny = np.finfo(dtype).nmant + 1, dtype.type(np.finfo(dtype).smallest_subnormal)
    magnitude = f("absolute", a)
    m, e = frexp(where(f("isfinite", a), magnitude, one))
    below = where(f("equal", m, dtype.type(0.5)), f("subtract", e, digits + 1), f("subtract", e, digits))
    up = f("add", magnitude, f("maximum", ldexp(one, f("subtract", e, digits)), tiny))
    down = f("subtract", magnitude, f("maximum", ldexp(one, below), tiny))
    away = f("equal", f("greater", b, a), f("greater", a, 0))
    stepped = where(f("isinf", a), dtype.type(info.max), where(away, up, down))
    stepped = where(f("equal", a, 0), f("copysign", tiny, b), f("copysign", stepped, a))
    stepped = where(f("equal", a, b), a if dtype == np.float16 else b, stepped)  # (NumPy's half loop: x; C's nextafter: y)
    return where(f("logical_or", f("isnan", a), f("isnan", b)), f("add", a, b), stepped)


@implements("ufunc.spacing")
def spacing(x: Any) -> Tracer:
    """The distance from x to the next float away from zero (negative for negative x; 0: the smallest
    subnormal; float16 as NumPy's half loop)."""
    trace = trace_of([x])
    dtype = loop_dtypes(np.spacing, (x,))[-1]
    a = as_tracer(trace, x).astype(dtype.name)
    f = lambda name, *args: apply_ufunc(trace, getattr(np, name), args)  # noqa: E731
    step = f("subtract", nextafter(a, f("copysign", dtype.type(np.inf), a)), a)
    if dtype == np.float16:  # NumPy's half loop: for negative x, |x| less the float below |x| (positive)
        magnitude = f("absolute", a)
        below = f("subtract", magnitude, nextafter(magnitude, 0))
        step = IMPLEMENTATIONS["where"](f("logical_and", f("signbit", a), f("isfinite", a)), below, step)
    return IMPLEMENTATIONS["where"](f("equal", a, 0), dtype.type(np.finfo(dtype).smallest_subnormal), step)

