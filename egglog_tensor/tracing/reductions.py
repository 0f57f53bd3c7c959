"""Reductions: sum, prod, max, min, mean, trace and `ufunc.reduce`, with NumPy's accumulator dtypes."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..errors import IndexOutOfBoundsError, TracingError, UnsupportedError
from ..graph import FLOAT_DTYPES, NARROW_FLOATS, is_float
from .core import IMPLEMENTATIONS, Tracer, as_array, as_tracer, dtype_name, fail, implements, lift, normalize_axes, result, trace_of
from .shapes import broadcast_to, diagonal, reshape
from .ufuncs import apply_ufunc


REDUCE_UFUNCS = {"add": "sum", "multiply": "prod", "maximum": "max", "minimum": "min"}
LOGICAL_UFUNCS = {"logical_and": "all", "logical_or": "any"}  # reduce to bool: tracing/statistics.py
_NO_VALUE = getattr(np, "_NoValue", None)  # NumPy's "not given" default for initial= and where=


def accumulator_dtype(dtype: str) -> str:
    """NumPy's default accumulator for sum/prod: small ints and bool widen to int64, small unsigned ints to uint64."""
    return {"bool": "int64", "int8": "int64", "int16": "int64", "int32": "int64",
            "uint8": "uint64", "uint16": "uint64", "uint32": "uint64"}.get(dtype, dtype)


def reduce(op: str, x: Any, axis: Any, keepdims: bool, dtype: Any = None, initial: Any = None, where: Any = True, **unsupported: Any) -> Tracer:
    initial = None if initial is _NO_VALUE else initial
    if initial is not None or not (where is True or where is _NO_VALUE):
        return _masked_reduce(op, x, axis, keepdims, dtype, initial, where)
    if unsupported:
        raise fail(UnsupportedError, f"np.{op}: keyword arguments {sorted(unsupported)} are not supported")
    trace = trace_of([x])
    x = as_tracer(trace, x)
    axes = normalize_axes(x.ndim, axis)
    if dtype is not None:
        target = dtype_name(dtype)
    else:
        target = accumulator_dtype(x.dtype.name) if op in ("sum", "prod") else x.dtype.name
    if target in NARROW_FLOATS and op in ("sum", "prod"):  # NumPy's half loops (ours for bfloat16) accumulate in float32, round once
        return reduce(op, x.astype(target).astype("float32"), axis, keepdims).astype(target)
    node = lift(trace, x, target)
    if axes:
        reduced = trace.make(op, (node,), (axes,))
    elif op == "sum" and target in FLOAT_DTYPES and not np.signbit(np.sum(np.array(-0.0), axis=())):
        reduced = trace.make("add", (node, trace.const(0.0, target)))  # NumPy adds to its identity: -0.0 -> 0.0
    else:
        reduced = node
    out = result(trace, reduced)
    if keepdims:
        out = reshape(out, tuple(1 if i in axes else d for i, d in enumerate(x.shape)))
    return out


def _mask(where: Any, x: Tracer) -> Tracer:
    """A reduction's `where=` (an array or a list of bools) broadcast to x's shape."""
    return broadcast_to(as_array(x._trace, where), x.shape)


def _masked_reduce(op: str, x: Any, axis: Any, keepdims: bool, dtype: Any, initial: Any, where: Any) -> Tracer:
    """`initial=` and `where=`: the elements `where` leaves out read as the op's identity (max/min: as
    `initial`, which NumPy demands with `where`), then `initial` joined to the result in its dtype."""
    trace = trace_of([x, where])
    x = as_tracer(trace, x)
    ufunc = {"sum": np.add, "prod": np.multiply, "max": np.maximum, "min": np.minimum}[op]
    if initial is None and op in ("max", "min"):
        raise fail(TracingError, f"reduction operation '{ufunc.__name__}' does not have an identity, so to use a where mask one has to specify 'initial'")
    target = dtype_name(dtype) if dtype is not None else accumulator_dtype(x.dtype.name) if op in ("sum", "prod") else x.dtype.name
    work = "float32" if target in NARROW_FLOATS else target  # as reduce: half sums accumulate in float32
    x = x.astype(work)
    identity = np.asarray({"sum": 0, "prod": 1}.get(op, initial)).astype(work)  # (cast unsafely, as NumPy casts initial)
    if not (where is True or where is _NO_VALUE):
        x = IMPLEMENTATIONS["where"](_mask(where, x), x, identity)
    axes = normalize_axes(x.ndim, axis)
    if any(x.shape[a] == 0 for a in axes):  # nothing to reduce: the identity (max/min: initial, below)
        shape = tuple(1 if i in axes else d for i, d in enumerate(x.shape) if keepdims or i not in axes)
        out = broadcast_to(as_tracer(trace, identity), shape)
    else:
        out = reduce(op, x, axis, keepdims)
    if initial is not None:
        out = apply_ufunc(trace, ufunc, (np.asarray(initial).astype(work), out))
    return out.astype(target)


@implements("ufunc.reduce")
def ufunc_reduce(ufunc: np.ufunc, x: Any, axis: Any = 0, dtype: Any = None, out: Any = None, keepdims: bool = False,
                 initial: Any = None, where: Any = True, **unsupported: Any) -> Tracer:
    """`np.add.reduce(x, axis, dtype, keepdims=..., initial=..., where=...)` and kin (NumPy passes all but `x` as keywords;
    `out=`: tracing/outs.py);
    another binary ufunc's (np.logaddexp.reduce, np.bitwise_or.reduce, np.gcd.reduce...) as a fold (`folded`)."""
    if ufunc.__name__ not in REDUCE_UFUNCS | LOGICAL_UFUNCS:
        if unsupported or dtype is not None or where is not True or ufunc.nin != 2 or ufunc.nout != 1:
            raise fail(UnsupportedError, f"np.{ufunc.__name__}.reduce with dtype=, where= or a ufunc of other than two inputs "
                                         f"is not supported (any dtype: {', '.join(REDUCE_UFUNCS | LOGICAL_UFUNCS)})")
        return folded(ufunc, x, axis, keepdims, initial)
    if ufunc.__name__ in LOGICAL_UFUNCS and initial is not None:
        unsupported["initial"] = initial
    if unsupported:
        given = ", ".join(f"{k}=..." for k in sorted(unsupported))
        raise fail(UnsupportedError, f"np.{ufunc.__name__}.reduce({given}) is not supported; axis, dtype, keepdims, initial and where are")
    if ufunc.__name__ in LOGICAL_UFUNCS and dtype in (None, bool, np.bool_, "bool"):
        return IMPLEMENTATIONS[LOGICAL_UFUNCS[ufunc.__name__]](x, axis, None, keepdims, where=where)
    if ufunc.__name__ in LOGICAL_UFUNCS:
        raise fail(UnsupportedError, f"np.{ufunc.__name__}.reduce(dtype={dtype!r}) is not supported; its result is bool")
    return reduce(REDUCE_UFUNCS[ufunc.__name__], x, axis, keepdims, dtype, initial, where)


FOLD_LIMIT = 256  # a reduction by another ufunc is unrolled: at most this many steps


def folded(ufunc: np.ufunc, a: Any, axis: Any, keepdims: bool, initial: Any) -> Tracer:
    """ufunc.reduce as NumPy's loop runs it for a ufunc with no reduction of its own: from the first element
    (or `initial`) each next one combined in turn along one axis (None: the flattened array), unrolled."""
    x = as_tracer(trace_of([a]), a)
    if isinstance(axis, (tuple, list)) and len(axis) != 1:
        raise fail(UnsupportedError, f"np.{ufunc.__name__}.reduce over several axes is not supported; reduce one at a time")
    if axis is None:
        x, ax, kept = reshape(x, (-1,)), 0, (1,) * x.ndim
    else:
        ax = normalize_axes(x.ndim, axis)[0]
        kept = x.shape[:ax] + (1,) + x.shape[ax + 1:]
    n = x.shape[ax]
    if n > FOLD_LIMIT:
        raise fail(UnsupportedError, f"np.{ufunc.__name__}.reduce over {n} elements: a reduction by this ufunc is unrolled, at most "
                                     f"{FOLD_LIMIT} steps")
    steps = [x[(slice(None),) * ax + (i,)] for i in range(n)]
    if initial is not None:
        steps.insert(0, broadcast_to(as_tracer(x._trace, initial), steps[0].shape if steps else x.shape[:ax] + x.shape[ax + 1:]))
    elif not steps:
        if ufunc.identity is None:
            raise fail(TracingError, f"zero-size array to reduction operation {ufunc.__name__} which has no identity")
        steps = [broadcast_to(as_tracer(x._trace, np.asarray(ufunc.identity, x.dtype)), x.shape[:ax] + x.shape[ax + 1:])]
    out = steps[0]
    for step in steps[1:]:
        out = ufunc(out, step)
    out = IMPLEMENTATIONS["copy"](out)  # (one element: a view of x, which NumPy's result is not)
    return reshape(out, kept) if keepdims else out


@implements("sum")
def sum_(a: Any, axis: Any = None, dtype: Any = None, out: Any = None, keepdims: bool = False, **kw: Any) -> Tracer:
    if out is not None:
        kw["out"] = out
    return reduce("sum", a, axis, keepdims, dtype, **kw)


@implements("mean")
def mean(a: Any, axis: Any = None, dtype: Any = None, out: Any = None, keepdims: bool = False, *, where: Any = True) -> Tracer:
    """The sum over the count; with `where`, of the chosen elements over their number (divided as NumPy: in float64, rounded)."""
    trace = trace_of([a, where])
    x = as_tracer(trace, a)
    if dtype is None and x.dtype.name in NARROW_FLOATS:  # NumPy sums and divides in float32, then rounds back
        return mean(x, axis, "float32", out, keepdims, where=where).astype(x.dtype.name)
    if dtype is None:
        dtype = x.dtype.name if is_float(x.dtype) else "float64"
    total = sum_(x, axis, dtype, out, keepdims, where=where)
    if not (where is True or where is _NO_VALUE):
        return divide_count(total, sum_(_mask(where, x), axis, "int64", keepdims=keepdims))
    count = math.prod(x.shape[a] for a in normalize_axes(x.ndim, axis))
    return apply_ufunc(trace, np.divide, (total, np.asarray(count, dtype=dtype_name(dtype))))


def divide_count(total: Tracer, count: Any) -> Tracer:
    """A reduction's total divided by its count as NumPy does it (true_divide into the total with
    casting='unsafe'): in float64, rounded to the total's dtype."""
    return (total.astype("float64") / as_tracer(total._trace, count).astype("float64")).astype(total.dtype)


@implements("trace")
def trace_(a: Any, offset: int = 0, axis1: int = 0, axis2: int = 1, dtype: Any = None, out: Any = None) -> Tracer:
    return sum_(diagonal(a, offset, axis1, axis2), -1, dtype, out)




@implements("prod")
def prod(a: Any, axis: Any = None, dtype: Any = None, out: Any = None, keepdims: bool = False, **kw: Any) -> Tracer:
    return reduce("prod", a, axis, keepdims, dtype, **({"out": out} if out is not None else {}), **kw)


@implements("max", "amax")
def max_(a: Any, axis: Any = None, out: Any = None, keepdims: bool = False, **kw: Any) -> Tracer:
    return reduce("max", a, axis, keepdims, **({"out": out} if out is not None else {}), **kw)


@implements("min", "amin")
def min_(a: Any, axis: Any = None, out: Any = None, keepdims: bool = False, **kw: Any) -> Tracer:
    return reduce("min", a, axis, keepdims, **({"out": out} if out is not None else {}), **kw)



@implements("ufunc.reduceat")
def ufunc_reduceat(ufunc: np.ufunc, array: Any, indices: Any, axis: Any = 0, dtype: Any = None, out: Any = None) -> Tracer:
    """`np.add.reduceat(x, indices, axis)` and kin with constant indices: each segment [indices[i], indices[i + 1])
    reduced as ufunc.reduce does (one element where the next index is not larger), joined along the axis."""
    if out is not None or isinstance(indices, Tracer):
        raise fail(UnsupportedError, f"np.{ufunc.__name__}.reduceat with out= or traced indices is not supported")
    x = as_tracer(trace_of([array]), array)
    ax = normalize_axes(x.ndim, axis)[0]
    n, idx = x.shape[ax], np.asarray(indices).ravel()
    if idx.dtype.kind not in "iu" or not idx.size:
        raise fail(TracingError, f"np.{ufunc.__name__}.reduceat: indices must be a non-empty sequence of integers")
    if ((idx < 0) | (idx >= n)).any():
        raise fail(IndexOutOfBoundsError, f"index {int(idx[(idx < 0) | (idx >= n)][0])} out-of-bounds in {ufunc.__name__}.reduceat [0, {n})")
    parts = []
    for i, start in enumerate(idx.tolist()):
        stop = idx[i + 1] if i + 1 < idx.size else n
        segment = x[(slice(None),) * ax + (slice(start, stop if start < stop else start + 1),)]
        parts.append(ufunc_reduce(ufunc, segment, ax, dtype, keepdims=True))
    return IMPLEMENTATIONS["concatenate"](parts, ax)
