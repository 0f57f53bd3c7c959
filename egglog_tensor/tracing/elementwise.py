"""NumPy functions that are compositions of elementwise ops, written as NumPy writes them, so the
results are NumPy's bit for bit: round/around (scale, rint, unscale), nan_to_num, float_power,
and diff (differences of neighbours: a subtraction of two shifted views)."""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

from ..errors import TracingError, UnsupportedError
from ..graph import float_info, is_float
from ..spec import PYTHON_SCALARS
from .core import IMPLEMENTATIONS, Tracer, as_tracer, astype, describe, dtype_key, fail, implements, lift, normalize_axis, result, trace_of
from .shapes import broadcast_to, concatenate
from .ufuncs import apply_ufunc


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
    keys = tuple(dtype_key(v) for v in (x1, x2))
    if all(isinstance(k, type) for k in keys):  # no array: NumPy makes default-dtype arrays of the numbers
        keys = tuple(np.dtype(PYTHON_SCALARS[k]) for k in keys)
    loop = np.float_power.resolve_dtypes((*keys, None))
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
