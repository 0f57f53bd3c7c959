"""Scans (issue 24): cumsum/cumprod, their nan- forms, cumulative_sum/cumulative_prod and
`ufunc.accumulate`, on the `cumsum`/`cumprod`/`cummax`/`cummin` primitives (a running value along one
axis), with NumPy's accumulator dtypes."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import TracingError, UnsupportedError
from ..graph import is_float
from .core import (
    Tracer,
    as_tracer,
    dtype_name,
    fail,
    implements,
    lift,
    normalize_axis,
    result,
    trace_of,
)
from .reductions import accumulator_dtype
from .shapes import concatenate, reshape
from .statistics import _filled, _no_out

_IDENTITY = {"cumsum": 0, "cumprod": 1}
# ufunc -> its scan; logical_and/or scan the array read as bool (True > False) by min/max
ACCUMULATE_UFUNCS = {"add": "cumsum", "multiply": "cumprod", "maximum": "cummax", "minimum": "cummin",
                     "logical_and": "cummin", "logical_or": "cummax"}


def scan(op: str, a: Any, axis: Any, dtype: Any, out: Any) -> Tracer:
    """The running sum/product/max/min along `axis` (None: of the flattened array), in `dtype`
    (else a's; for sums and products small ints and bool widen to int64), the input cast to it first."""
    _no_out(op, out)  # (out=: tracing/outs.py, which wraps the functions calling this)
    trace = trace_of([a])
    x = as_tracer(trace, a)
    if axis is None or not x.ndim:
        if axis is not None:
            normalize_axis(1, axis)
        x, axis = reshape(x, (x.size,)), 0
    axis = normalize_axis(x.ndim, axis)
    if dtype is not None:
        target = dtype_name(dtype)
    else:
        target = accumulator_dtype(x.dtype.name) if op in _IDENTITY else x.dtype.name
    node = lift(trace, x, target)
    if not x.size:
        return result(trace, node)
    return result(trace, trace.make(op, (node,), (axis,)))


@implements("cumsum")
def cumsum(a: Any, axis: Any = None, dtype: Any = None, out: Any = None) -> Tracer:
    """np.cumsum / x.cumsum: the running sum along an axis."""
    return scan("cumsum", a, axis, dtype, out)


@implements("cumprod")
def cumprod(a: Any, axis: Any = None, dtype: Any = None, out: Any = None) -> Tracer:
    """np.cumprod / x.cumprod: the running product along an axis."""
    return scan("cumprod", a, axis, dtype, out)


def _nan_scan(op: str, a: Any, axis: Any, dtype: Any, out: Any) -> Tracer:
    """nancumsum/nancumprod: NaN read as the identity (0, 1), as NumPy replaces it before scanning."""
    trace = trace_of([a])
    x = as_tracer(trace, a)
    if is_float(x.dtype):
        x = np.where(np.isnan(x), x.dtype.type(_IDENTITY[op]), x)
    return scan(op, x, axis, dtype, out)


@implements("nancumsum")
def nancumsum(a: Any, axis: Any = None, dtype: Any = None, out: Any = None) -> Tracer:
    """np.nancumsum: the running sum with NaN counted as 0."""
    return _nan_scan("cumsum", a, axis, dtype, out)


@implements("nancumprod")
def nancumprod(a: Any, axis: Any = None, dtype: Any = None, out: Any = None) -> Tracer:
    """np.nancumprod: the running product with NaN counted as 1."""
    return _nan_scan("cumprod", a, axis, dtype, out)


def _cumulative(op: str, x: Any, axis: Any, dtype: Any, out: Any, include_initial: bool) -> Tracer:
    """np.cumulative_sum/prod (the array API's): axis needed above 1-D; `include_initial` puts the
    identity before the first element along the axis."""
    x = as_tracer(trace_of([x]), x)
    if axis is None and x.ndim > 1:
        raise fail(TracingError, f"np.cumulative_{op.removeprefix('cum')}: an array of more than one dimension needs `axis`")
    scanned = scan(op, x, axis, dtype, out)
    if not include_initial:
        return scanned
    axis = normalize_axis(scanned.ndim, 0 if axis is None else axis)
    shape = tuple(1 if d == axis else n for d, n in enumerate(scanned.shape))
    return concatenate([_filled(scanned._trace, _IDENTITY[op], scanned.dtype.name, shape), scanned], axis=axis)


@implements("cumulative_sum")
def cumulative_sum(x: Any, /, *, axis: Any = None, dtype: Any = None, out: Any = None, include_initial: bool = False) -> Tracer:
    """np.cumulative_sum: cumsum, optionally starting with 0."""
    return _cumulative("cumsum", x, axis, dtype, out, include_initial)


@implements("cumulative_prod")
def cumulative_prod(x: Any, /, *, axis: Any = None, dtype: Any = None, out: Any = None, include_initial: bool = False) -> Tracer:
    """np.cumulative_prod: cumprod, optionally starting with 1."""
    return _cumulative("cumprod", x, axis, dtype, out, include_initial)



@implements("ufunc.accumulate")
def ufunc_accumulate(ufunc: np.ufunc, array: Any, axis: Any = 0, dtype: Any = None, out: Any = None) -> Tracer:
    """`np.add.accumulate(x, axis, dtype)` and kin: NumPy's default axis 0, a 0-d array refused, logical
    ufuncs giving bool; maximum/minimum propagate NaN as np.maximum does."""
    name = ufunc.__name__
    if name not in ACCUMULATE_UFUNCS:
        raise fail(UnsupportedError, f"np.{name}.accumulate is not supported (accumulating ufuncs: {', '.join(ACCUMULATE_UFUNCS)})")
    x = as_tracer(trace_of([array]), array)
    if not x.ndim:
        raise fail(TracingError, "cannot accumulate on a scalar")
    if axis is None and x.ndim > 1 or isinstance(axis, (tuple, list)):
        raise fail(TracingError, "accumulate does not allow multiple axes")
    if name.startswith("logical_"):
        if dtype not in (None, bool, np.bool_, "bool"):
            raise fail(UnsupportedError, f"np.{name}.accumulate(dtype={dtype!r}) is not supported; its result is bool")
        x, dtype = x.astype("bool"), None
    return scan(ACCUMULATE_UFUNCS[name], x, 0 if axis is None else axis, dtype, out)
