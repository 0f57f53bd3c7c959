"""Reductions: sum, prod, max, min, mean, trace and `ufunc.reduce`, with NumPy's accumulator dtypes."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..errors import UnsupportedError
from ..graph import FLOAT_DTYPES, NARROW_FLOATS, is_float
from .core import IMPLEMENTATIONS, Tracer, as_tracer, dtype_name, fail, implements, lift, normalize_axes, result, trace_of
from .shapes import diagonal, reshape
from .ufuncs import apply_ufunc


REDUCE_UFUNCS = {"add": "sum", "multiply": "prod", "maximum": "max", "minimum": "min"}
LOGICAL_UFUNCS = {"logical_and": "all", "logical_or": "any"}  # reduce to bool: tracing/statistics.py


def accumulator_dtype(dtype: str) -> str:
    """NumPy's default accumulator for sum/prod: small ints and bool widen to int64, small unsigned ints to uint64."""
    return {"bool": "int64", "int8": "int64", "int16": "int64", "int32": "int64",
            "uint8": "uint64", "uint16": "uint64", "uint32": "uint64"}.get(dtype, dtype)


def reduce(op: str, x: Any, axis: Any, keepdims: bool, dtype: Any = None, **unsupported: Any) -> Tracer:
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


@implements("ufunc.reduce")
def ufunc_reduce(ufunc: np.ufunc, x: Any, axis: Any = 0, dtype: Any = None, keepdims: bool = False, **unsupported: Any) -> Tracer:
    """`np.add.reduce(x, axis, dtype, keepdims=...)` and kin (NumPy passes all but `x` as keywords)."""
    if ufunc.__name__ not in REDUCE_UFUNCS | LOGICAL_UFUNCS:
        raise fail(UnsupportedError, f"np.{ufunc.__name__}.reduce is not supported "
                                     f"(reducing ufuncs: {', '.join(REDUCE_UFUNCS | LOGICAL_UFUNCS)})")
    if unsupported.get("where", False) is True:  # where=True is the default: every element
        del unsupported["where"]
    if unsupported:
        given = ", ".join(f"{k}=..." for k in sorted(unsupported))
        raise fail(UnsupportedError, f"np.{ufunc.__name__}.reduce({given}) is not supported; axis, dtype and keepdims are")
    if ufunc.__name__ in LOGICAL_UFUNCS and dtype in (None, bool, np.bool_, "bool"):
        return IMPLEMENTATIONS[LOGICAL_UFUNCS[ufunc.__name__]](x, axis, None, keepdims)
    if ufunc.__name__ in LOGICAL_UFUNCS:
        raise fail(UnsupportedError, f"np.{ufunc.__name__}.reduce(dtype={dtype!r}) is not supported; its result is bool")
    return reduce(REDUCE_UFUNCS[ufunc.__name__], x, axis, keepdims, dtype)


@implements("sum")
def sum_(x: Any, axis: Any = None, dtype: Any = None, out: Any = None, keepdims: bool = False, **kw: Any) -> Tracer:
    if out is not None:
        kw["out"] = out
    return reduce("sum", x, axis, keepdims, dtype, **kw)


@implements("mean")
def mean(x: Any, axis: Any = None, dtype: Any = None, out: Any = None, keepdims: bool = False, **kw: Any) -> Tracer:
    trace = trace_of([x])
    x = as_tracer(trace, x)
    if dtype is None and x.dtype.name in NARROW_FLOATS:  # NumPy sums and divides in float32, then rounds back
        return mean(x, axis, "float32", out, keepdims, **kw).astype(x.dtype.name)
    if dtype is None:
        dtype = x.dtype.name if is_float(x.dtype) else "float64"
    total = sum_(x, axis, dtype, out, keepdims, **kw)
    count = math.prod(x.shape[a] for a in normalize_axes(x.ndim, axis))
    return apply_ufunc(trace, np.divide, (total, np.asarray(count, dtype=dtype_name(dtype))))


@implements("trace")
def trace_(x: Any, offset: int = 0, axis1: int = 0, axis2: int = 1, dtype: Any = None, out: Any = None) -> Tracer:
    return sum_(diagonal(x, offset, axis1, axis2), -1, dtype, out)




@implements("prod")
def prod(a: Any, axis: Any = None, dtype: Any = None, out: Any = None, keepdims: bool = False, **kw: Any) -> Tracer:
    return reduce("prod", a, axis, keepdims, dtype, **({"out": out} if out is not None else {}), **kw)


@implements("max", "amax")
def max_(a: Any, axis: Any = None, out: Any = None, keepdims: bool = False, **kw: Any) -> Tracer:
    return reduce("max", a, axis, keepdims, **({"out": out} if out is not None else {}), **kw)


@implements("min", "amin")
def min_(a: Any, axis: Any = None, out: Any = None, keepdims: bool = False, **kw: Any) -> Tracer:
    return reduce("min", a, axis, keepdims, **({"out": out} if out is not None else {}), **kw)

