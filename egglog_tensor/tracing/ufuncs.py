"""Elementwise functions: NumPy's ufuncs with NumPy's own dtype resolution (`ufunc.resolve_dtypes`,
NEP 50 weak Python scalars), and `where` and `clip` built from them."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..errors import DataValueError, TracingError, UFuncTypeError, UnsupportedError
from ..graph import DTYPES, Node, is_float
from ..ops import BINARY, PREDICATES, TERNARY, UNARY, supports
from ..spec import PYTHON_SCALARS
from .core import (IMPLEMENTATIONS, Trace, Tracer, any_order, as_tracer, astype, base_of, check_at_run_time, check_dtype, describe, dtype_key, dtype_name,
                   fail, implements, lift, memory_order, result, trace_of)
from . import special
from .shapes import broadcast_to
from .updates import store

_WEAK_OF = {dtype: kind for kind, dtype in PYTHON_SCALARS.items()}  # a result dtype -> the Python type it stays weak as
_UFUNC_OPS = {"true_divide": "divide", "radians": "deg2rad", "degrees": "rad2deg"}


def apply_ufunc(trace: Trace, ufunc: np.ufunc, inputs: Sequence[Any], dtype: Any = None, casting: str = "same_kind") -> Tracer:
    """Apply a NumPy ufunc to traced/scalar inputs with NumPy's own dtype resolution (`dtype`: the loop's output dtype,
    the inputs cast under `casting`, as the ufunc's keywords); the result laid out as NumPy's where that is sure
    (matmul's C, another ufunc's C or F when all its array operands are), so that reshape's views follow NumPy's."""
    out = _applied(trace, ufunc, inputs, dtype, casting)
    base = base_of(out)
    if any_order(base.shape):  # (memory() takes it as C)
        return out
    if base._order is None and not base._view and not any(base is base_of(v) for v in inputs if isinstance(v, Tracer)):
        orders = {memory_order(v) for v in inputs if isinstance(v, (Tracer, np.ndarray))}
        if ufunc is np.matmul or orders <= {"C"}:
            base._order = "C"
        elif orders == {"F"}:
            base._order = "F"
    return out


def _applied(trace: Trace, ufunc: np.ufunc, inputs: Sequence[Any], dtype: Any = None, casting: str = "same_kind") -> Tracer:
    """apply_ufunc's value."""
    name = _UFUNC_OPS.get(ufunc.__name__) or special.PRIVATE_OPS.get(ufunc.__name__, ufunc.__name__)
    if ufunc.__name__.endswith("(vectorized)"):
        raise fail(UnsupportedError, f"a ufunc made by np.frompyfunc ({ufunc.__name__}) runs a Python function on each "
                                     "element, which a kernel cannot trace; call the function on the whole array instead")
    if not special.is_op(ufunc):  # another library's ufunc (SciPy's private ones too), or a SciPy one's method
        raise fail(UnsupportedError, f"the ufunc {ufunc.__name__!r} of {describe(inputs)} is not NumPy's; of other libraries' "
                                     f"ufuncs, calls of scipy.special's are supported ({', '.join(special.supported())})")
    if name not in (*UNARY, *BINARY, *TERNARY, "positive", "matmul"):
        raise fail(UnsupportedError, f"np.{ufunc.__name__}({describe(inputs)}) is not supported")
    loop = loop_dtypes(ufunc, inputs, dtype)
    _check_casting(ufunc, inputs, loop, casting)
    all_weak = all(isinstance(dtype_key(v), type) for v in inputs)
    check_dtype(ufunc.__name__, loop, inputs)
    if name in PREDICATES and loop[0].kind in "iu":
        if any(type(v) is int and not -(2**63) <= v < 2**63 for v in inputs):  # beyond int64: one answer for every element
            value = np.bool_(ufunc(*(v if type(v) is int else np.int64(0) for v in inputs)))
            shape = np.broadcast_shapes(*(v.shape if isinstance(v, Tracer) else np.shape(v) for v in inputs))
            return broadcast_to(as_tracer(trace, value), shape)
        loop = exact_int_comparison(loop, inputs)
    nodes = tuple(lift(trace, v, dt.name) for v, dt in zip(inputs, loop[: len(inputs)], strict=True))
    weak = _WEAK_OF.get(loop[-1].name) if all_weak else None
    if name == "positive":
        return result(trace, nodes[0], weak)
    if name == "matmul":  # linalg.py: nodes of the resolved dtype
        return IMPLEMENTATIONS["matmul"](trace, *nodes)
    if not supports(name, nodes[0].dtype):
        raise fail(UnsupportedError, f"np.{ufunc.__name__} on {nodes[0].dtype} is not supported ({describe(inputs)})")
    if name == "power" and loop[1].kind == "i":
        _refuse_negative_powers(inputs, nodes)
    if name == "power" and nodes[1].ndim == 0 and not isinstance(inputs[1], Tracer):
        node = scalar_power(trace, nodes[0], float(np.asarray(inputs[1]).item()))
        if node is not None:
            return result(trace, node, weak)
    return result(trace, trace.make(name, nodes), weak)


def _refuse_negative_powers(inputs: Sequence[Any], nodes: Sequence[Node]) -> None:
    """NumPy's ValueError for an integer power with a negative exponent (when the result has elements): while tracing
    for a constant exponent, after the call for a traced one."""
    message = "Integers to negative integer powers are not allowed."
    if not math.prod(np.broadcast_shapes(*(n.shape for n in nodes))):
        return
    if isinstance(inputs[1], Tracer):
        check_at_run_time(inputs[1] < 0, message, DataValueError, of="exponents ")
    elif np.any(np.asarray(inputs[1]) < 0):
        raise fail(DataValueError, message)


def loop_dtypes(ufunc: np.ufunc, inputs: Sequence[Any], dtype: Any = None) -> tuple[np.dtype, ...]:
    """NumPy's loop dtypes for `ufunc` on these inputs (Python numbers weak; `dtype`: the output's, as ufunc(dtype=)),
    or UFuncTypeError."""
    keys = tuple(dtype_key(v) for v in inputs)
    if all(isinstance(k, type) for k in keys):  # no array takes part: NumPy makes default-dtype arrays of the Python numbers
        keys = tuple(np.dtype(PYTHON_SCALARS[k]) for k in keys)
    try:
        if dtype is None:
            return ufunc.resolve_dtypes((*keys, None))
        return ufunc.resolve_dtypes((*keys, None), signature=(None,) * len(keys) + (np.dtype(dtype),))
    except (TypeError, np.exceptions.DTypePromotionError) as e:
        raise fail(UFuncTypeError, f"np.{ufunc.__name__}({describe(inputs)}): {e}") from None


def _check_casting(ufunc: np.ufunc, inputs: Sequence[Any], loop: Sequence[np.dtype], casting: str) -> None:
    """NumPy's UFuncTypeError for an array input its loop dtype cannot take under `casting` (Python numbers are weak)."""
    if casting not in ("no", "equiv", "safe", "same_kind", "unsafe"):
        raise fail(TracingError, f"casting must be one of 'no', 'equiv', 'safe', 'same_kind', or 'unsafe' (got {casting!r})")
    for i, (v, dt) in enumerate(zip(inputs, loop, strict=False)):
        key = dtype_key(v)
        if not isinstance(key, type) and not np.can_cast(key, dt, casting):
            raise fail(UFuncTypeError, f"Cannot cast ufunc {ufunc.__name__!r} input {i} from {np.dtype(key)!r} to {dt!r} "
                                       f"with casting rule {casting!r}")


def exact_int_comparison(loop: Sequence[np.dtype], inputs: Sequence[Any]) -> Sequence[np.dtype]:
    """NumPy compares an integer array with a Python int exactly (NEP 50: `int32_array < 2**40` is
    True): compare in int64 when the int does not fit the loop's dtype or is a runtime argument."""
    info = np.iinfo(loop[0])
    wide = any((type(v) is int and not info.min <= v <= info.max) or (isinstance(v, Tracer) and v._weak is int) for v in inputs)
    return (np.dtype("int64"),) * len(inputs) + (loop[-1],) if wide else loop


def scalar_power(trace: Trace, x: Node, exponent: float) -> Node | None:
    """NumPy's special cases for a scalar exponent: x**2 is square(x), x**0.5 is sqrt(x), x**-1 is 1/x.

    They are NumPy's semantics, not optimizations: np.power(-inf, 0.5) is nan (sqrt), where C pow gives inf.
    """
    if exponent == 2.0:
        return trace.make("square", (x,))
    if is_float(x.dtype):
        if exponent == 0.5:
            return trace.make("sqrt", (x,))
        if exponent == -1.0:
            return trace.make("reciprocal", (x,))
        if exponent == 1.0:
            return x
    return None


def in_place(out: tuple, result: Tracer, casting: str = "same_kind") -> Tracer:
    """`x += y` / `out=x`: x, an array of the kernel or an argument, updated in place (cast as NumPy's `casting`)."""
    (target,) = out
    if isinstance(target, Tracer) and target._weak is not None:  # a Python number: `n += 1` rebinds n
        return result
    if not isinstance(target, Tracer):
        raise fail(UnsupportedError, f"out= must be an array of the kernel, not {type(target).__name__}")
    if result.shape != target.shape:
        raise fail(TracingError, f"non-broadcastable output operand with shape {target.shape} doesn't match the broadcast shape {result.shape}")
    if not np.can_cast(result.dtype, target.dtype, casting):
        raise fail(TracingError, f"Cannot cast ufunc output from {result.dtype} to {target.dtype} with casting rule {casting!r}")
    store(target, result)
    return target




@implements("result_type")
def result_type(*arrays_and_dtypes: Any) -> np.dtype:
    """np.result_type with traced arrays among its arguments: their dtypes, a weak Python-number tracer's
    as a Python number's (NEP 50); no common dtype: UnsupportedError naming the operands."""
    def operand(v: Any) -> Any:
        if isinstance(v, (np.dtype, type, str)):
            return v  # a dtype, scalar type or name, as NumPy takes it
        key = dtype_key(v)
        return key(0) if key is int or key is float else key

    try:
        return np.result_type(*map(operand, arrays_and_dtypes))
    except np.exceptions.DTypePromotionError as e:
        raise fail(UnsupportedError, f"np.result_type({describe(arrays_and_dtypes)}): {e}") from None


@implements("where")
def where(cond: Any, x: Any = None, y: Any = None) -> Tracer:
    if x is None or y is None:
        raise fail(UnsupportedError, "np.where(cond) with one argument (the indices of the true elements) is not supported: "
                                     "its result shape depends on cond's values, which are not known while tracing; "
                                     "use np.where(cond, x, fill) for a result of cond's shape")
    trace = trace_of([cond, x, y])
    target = result_type(x, y).name
    if target not in DTYPES:
        raise fail(UnsupportedError, f"np.where result dtype {target} is not supported")
    c = lift(trace, cond, "bool")
    return result(trace, trace.make("where", (c, lift(trace, x, target), lift(trace, y, target))))


@implements("clip")
def clip(a: Any, a_min: Any = None, a_max: Any = None, out: Any = None, **kw: Any) -> Tracer:
    """np.clip, bounds as a_min/a_max or NumPy 2.1's min=/max= (not both spellings of one bound); `out=` as a ufunc's."""
    for name, given in (("min", a_min), ("max", a_max)):
        if name in kw and given is not None:
            raise fail(TracingError, f"Passed more than one argument for the same bound: a_{name} and {name}")
    a_min, a_max = kw.pop("min", a_min), kw.pop("max", a_max)
    if kw:
        raise fail(UnsupportedError, f"np.clip: keyword arguments {sorted(kw)} are not supported")
    if out is not None:
        return in_place(out if isinstance(out, tuple) else (out,), clip(a, a_min, a_max))
    result = a
    trace = trace_of([a])
    if isinstance(a, Tracer) and a._weak is None and a.dtype.kind in "iu":  # as NumPy: an int bound beyond the dtype cannot bind
        info = np.iinfo(a.dtype)
        a_min = None if type(a_min) is int and a_min < info.min else a_min
        a_max = None if type(a_max) is int and a_max > info.max else a_max
    if a_min is not None:
        result = apply_ufunc(trace, np.maximum, (result, a_min))
    if a_max is not None:
        result = apply_ufunc(trace, np.minimum, (result, a_max))
    return as_tracer(trace, result)



@implements("ufunc.__call__")
def call_ufunc(ufunc: np.ufunc, *inputs: Any, out: Any = None, where: Any = True, dtype: Any = None, casting: str = "same_kind",
               **kwargs: Any) -> Tracer:
    """`np.<ufunc>(...)` with a traced operand; `out=` only as an in-place update of a kernel's array (or argument),
    `where=`: out keeps its elements where it is False (without out NumPy leaves them uninitialized: here the ufunc's);
    `dtype=` and `casting=` as NumPy's (a composed ufunc takes neither)."""
    composed = special.composed(ufunc) or IMPLEMENTATIONS.get(f"ufunc.{ufunc.__name__}")  # a ufunc with no op of its own
    # (scipy.special's: special.py; NumPy's: elementwise.py, arrayapi.py)
    if composed is not None and (dtype is not None or casting != "same_kind"):
        kwargs.update(dtype=dtype, casting=casting)
    if kwargs and not (composed is not None and ufunc.signature and set(kwargs) <= {"axis"}):  # (a gufunc's vector axis)
        raise fail(UnsupportedError, f"np.{ufunc.__name__}: keyword arguments {sorted(kwargs)} are not supported")
    value = composed(*inputs, **kwargs) if composed is not None else apply_ufunc(trace_of(inputs), ufunc, inputs, dtype, casting)
    if out is None:
        return value
    return in_place(out, value if where is True else IMPLEMENTATIONS["where"](where, value, out[0]), casting)



@implements("astype")
def astype_fn(x: Any, dtype: Any, copy: bool = True, device: Any = None) -> Tracer:
    return astype(x, dtype_name(dtype))
