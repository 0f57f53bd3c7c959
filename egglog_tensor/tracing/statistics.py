"""Statistics and index reductions (issue 24): argmax/argmin (the `argmax` primitive), any/all,
count_nonzero, ptp, var/std, average, the nan-reductions and np.linalg.norm, decomposed at trace
time into the existing primitives where that gives NumPy's exact semantics."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..errors import TracingError, UnsupportedError
from ..graph import is_float
from .core import IMPLEMENTATIONS, Trace, Tracer, as_array, as_tracer, dtype_name, fail, implements, normalize_axes, normalize_axis, result, trace_of
from .creation import iota
from .reductions import divide_count, max_, mean, min_, prod, reduce, sum_
from .shapes import broadcast_to, reshape, transpose
from .ufuncs import result_type


def _no_out(name: str, out: Any, **unsupported: Any) -> None:
    """Refuse `out=` and keyword arguments the traced function does not take."""
    given = sorted(k for k, v in unsupported.items() if v is not None and v is not np._NoValue) + (["out"] if out is not None else [])
    if given:
        raise fail(UnsupportedError, f"np.{name}: keyword arguments {given} are not supported")


def _ddof(name: str, ddof: Any, correction: Any) -> Any:
    """ddof, or NumPy 2's `correction` (its alias: one of them may be given)."""
    if correction is np._NoValue:
        return ddof
    if ddof != 0:
        raise fail(TracingError, f"np.{name}: ddof and correction can't be provided simultaneously.")
    return correction


def _reduced_shape(x: Tracer, axes: tuple[int, ...], keepdims: bool) -> tuple[int, ...]:
    """The shape of a reduction of `axes` of x (with them kept as size 1 when `keepdims`)."""
    return tuple(1 if i in axes else d for i, d in enumerate(x.shape) if keepdims or i not in axes)


def _index_reduction(op: str, a: Any, axis: Any, out: Any, keepdims: bool) -> Tracer:
    """argmax/argmin: the index of the first max/min (of the first NaN) over the flattened array
    (axis=None) or along one axis, int64."""
    _no_out(op, out)
    trace = trace_of([a])
    x = as_tracer(trace, a)
    if axis is not None and not isinstance(axis, (int, np.integer)):
        raise fail(UnsupportedError, f"np.{op}: axis must be an int or None, got {axis!r}")
    if not x.ndim:  # a 0-d array is read as its one element (axis 0 or -1 allowed)
        normalize_axes(1, axis)
        return result(trace, trace.const(0, "int64"))
    axes = normalize_axes(x.ndim, axis)
    out = result(trace, trace.make(op, (x._node,), (axes,)))
    return reshape(out, _reduced_shape(x, axes, True)) if keepdims else out


@implements("argmax")
def argmax(a: Any, axis: Any = None, out: Any = None, *, keepdims: bool = False) -> Tracer:
    """np.argmax / x.argmax: the index of the first max (or first NaN)."""
    return _index_reduction("argmax", a, axis, out, keepdims)


@implements("argmin")
def argmin(a: Any, axis: Any = None, out: Any = None, *, keepdims: bool = False) -> Tracer:
    """np.argmin / x.argmin: the index of the first min (or first NaN)."""
    return _index_reduction("argmin", a, axis, out, keepdims)


def _empty(x: Tracer, axes: tuple[int, ...]) -> bool:
    """Whether the reduction of `axes` of x reads no element."""
    return any(x.shape[a] == 0 for a in axes)


def _filled(trace: Trace, value: Any, dtype: str, shape: tuple[int, ...]) -> Tracer:
    """`value` of `dtype` broadcast to `shape`: what a reduction over an empty axis gives."""
    return broadcast_to(result(trace, trace.const(value, dtype)), shape)


def _truth(op: str, a: Any, axis: Any, out: Any, keepdims: bool, where: Any) -> Tracer:
    """any (op "max") or all ("min") of a's truth values: a bool reduction (empty: False, True)."""
    _no_out("any" if op == "max" else "all", out, where=None if where is True else where)
    trace = trace_of([a])
    x = as_tracer(trace, a)
    axes = normalize_axes(x.ndim, axis)
    if _empty(x, axes):
        return _filled(trace, op == "min", "bool", _reduced_shape(x, axes, keepdims))
    return reduce(op, x.astype("bool"), axis, keepdims)


@implements("any")
def any_(a: Any, axis: Any = None, out: Any = None, keepdims: bool = False, *, where: Any = True) -> Tracer:
    """np.any / x.any: whether some element is nonzero."""
    return _truth("max", a, axis, out, keepdims, where)


@implements("all")
def all_(a: Any, axis: Any = None, out: Any = None, keepdims: bool = False, *, where: Any = True) -> Tracer:
    """np.all / x.all: whether every element is nonzero."""
    return _truth("min", a, axis, out, keepdims, where)


@implements("count_nonzero")
def count_nonzero(a: Any, axis: Any = None, *, keepdims: bool = False) -> Tracer:
    """The number of nonzero (True, NaN) elements, int64."""
    x = as_tracer(trace_of([a]), a)
    return sum_(x.astype("bool"), axis, "int64", keepdims=keepdims)


@implements("ptp")
def ptp(a: Any, axis: Any = None, out: Any = None, keepdims: bool = False) -> Tracer:
    """max - min, in a's dtype (ints wrap like NumPy's)."""
    _no_out("ptp", out)
    return max_(a, axis, keepdims=keepdims) - min_(a, axis, keepdims=keepdims)


def _accumulator(x: Tracer, dtype: Any) -> str:
    """NumPy's dtype for var's and std's sums: `dtype`, else x's float dtype, float64 for ints and bools."""
    return dtype_name(dtype) if dtype is not None else (x.dtype.name if is_float(x.dtype) else "float64")


def _var(name: str, a: Any, axis: Any, dtype: Any, out: Any, ddof: Any, keepdims: bool, **given: Any) -> Tracer:
    """NumPy's two-pass variance: the mean in the accumulator dtype, then the mean square of
    x - mean (in the promotion of x's and the accumulator's dtype), divided by max(n - ddof, 0)."""
    ddof = _ddof(name, ddof, given.pop("correction", np._NoValue))
    mean = given.pop("mean", np._NoValue)
    _no_out(name, out, where=None if given.pop("where", True) is True else True, **given)
    trace = trace_of([a, mean])
    x = as_tracer(trace, a)
    axes = normalize_axes(x.ndim, axis)
    acc = _accumulator(x, dtype)
    n = math.prod(x.shape[i] for i in axes)
    rows = _rows(trace, x, axes) if mean is np._NoValue else None
    if rows is not None:
        return reshape(_var_of_rows(trace, rows, acc, max(n - ddof, 0)), _reduced_shape(x, axes, keepdims))
    blocks = _blocks(trace, x, axes) if mean is np._NoValue else None
    if blocks is not None:
        return reshape(_var_of_blocks(trace, blocks, acc, max(n - ddof, 0)), _reduced_shape(x, axes, keepdims))
    centered = x - (divide_count(sum_(x, axis, acc, keepdims=True), n) if mean is np._NoValue else mean)
    return divide_count(sum_(centered * centered, axis, acc, keepdims=keepdims), max(n - ddof, 0))


ROWS_FROM = 1 << 20  # bytes of x from which var over all of x runs in one pass, row by row


def _rows(trace: Trace, x: Tracer, axes: tuple[int, ...]) -> Tracer | None:
    """x's value as rows for a one-pass variance over all of x (`axes`: all of them) from ROWS_FROM bytes: its own
    rows (the last axis, of 64 to 65536 elements), else x flattened into rows of a divisor of its size from 64 to 4096;
    None otherwise (over the leading axes only: `_blocks`)."""
    if x.size * x.dtype.itemsize < ROWS_FROM or len(axes) != x.ndim:
        return None
    row = x.shape[-1] if x.ndim > 1 and 64 <= x.shape[-1] <= 65536 else max(d for d in range(1, 4097) if x.size % d == 0)
    return reshape(result(trace, x._node, x._weak), (-1, row)) if row >= 64 else None  # (x's value: a reshape of x freezes it)


def _var_of_rows(trace: Trace, rows: Tracer, acc: str, dof: int) -> Tracer:
    """The variance of all of `rows` (2-D) in one pass over memory. Each row has its mean m (in the accumulator
    dtype: rounded), the sum of its deviations d = x - m and of their squares computed together, the row read twice
    from cache (one loop over blocks of rows: the rows stage, `fuse_rows` of the three as one (rows, 3) value), the
    rows combined in float64 (`_combined`). NumPy's two passes each read x from memory."""
    fused = result(trace, trace.make("fuse_rows", (_moments(trace, rows, acc)._node,), ())).astype("float64")
    return _combined(fused[:, 0], fused[:, 1], fused[:, 2], rows.shape[1], dof).astype(acc)


def _moments(trace: Trace, x: Tracer, acc: str) -> Tracer:
    """Over axis 1 of x: its mean m (in the accumulator dtype: rounded; materialized, so that no reader divides per
    element), the sum of d = x - m and of d^2, as one value with the three along axis 1 (m, sum(d^2), sum(d)), so that
    one stage computes them together. Below float64 the sum is taken in float64, which gives sum(d) as sum - n m
    without a pass of its own."""
    count = x.shape[1]
    if acc == "float64":
        means = materialized(trace, divide_count(sum_(x, 1, acc, keepdims=True), count))
        drifts = sum_(x - means, 1, acc, keepdims=True)
    else:
        sums = sum_(x, 1, "float64", keepdims=True)
        means = materialized(trace, (sums / count).astype(acc))
        drifts = (sums - means.astype("float64") * count).astype(acc)
    centered = x - means
    which = iota(trace, tuple(3 if i == 1 else 1 for i in range(x.ndim)), 1)
    return np.where(which == 0, means, np.where(which == 1, sum_(centered * centered, 1, acc, keepdims=True), drifts))


def materialized(trace: Trace, x: Tracer) -> Tracer:
    """x computed once and stored (the `materialize` schedule op): its readers neither recompute nor fuse it."""
    return result(trace, trace.make("materialize", (x._node,), ()))


BLOCK_ROWS = 64  # rows of x whose column moments one block computes (var over leading axes: partials 3/64 of x)
BLOCK_ROW_BYTES = (4096, 16384)  # the rows' sizes blocks measured faster for (docs/perf/2026-11-29-var-blocks.md)


def _blocks(trace: Trace, x: Tracer, axes: tuple[int, ...]) -> Tracer | None:
    """x as (blocks, BLOCK_ROWS, columns) for a variance over its leading axes (not all) from ROWS_FROM bytes, when
    at least two blocks of BLOCK_ROWS rows make its rows and a row is 4-16 KB; None otherwise (two passes: narrower
    rows make blocks too small for their loop's overhead, wider ones strips of several pages a row that measured
    slower than two whole passes)."""
    lead = len(axes)
    if x.size * x.dtype.itemsize < ROWS_FROM or axes != tuple(range(lead)) or lead == x.ndim:
        return None
    n = math.prod(x.shape[:lead])
    row = x.size // max(n, 1) * x.dtype.itemsize
    if n % BLOCK_ROWS or n < 2 * BLOCK_ROWS or not BLOCK_ROW_BYTES[0] <= row <= BLOCK_ROW_BYTES[1]:
        return None
    return reshape(result(trace, x._node, x._weak), (n // BLOCK_ROWS, BLOCK_ROWS, x.size // n))


def _var_of_blocks(trace: Trace, blocks: Tracer, acc: str, dof: int) -> Tracer:
    """The variance over the first two axes of `blocks` (blocks, rows, columns), x read from memory once: each block's
    column means m, sums of d = x - m and of d^2 as one (blocks, 3, columns) value, which the strips stage
    (lowering/stages/strips.py) computes block by block and strip by strip of columns (each strip of a block read
    twice from cache); the blocks combine in float64 as `_combined`."""
    three = materialized(trace, _moments(trace, blocks, acc)).astype("float64")
    return _combined(three[:, 0], three[:, 1], three[:, 2], blocks.shape[1], dof).astype(acc)


def _combined(means: Tracer, squares: Tracer, drifts: Tracer, within: int, dof: int) -> Tracer:
    """The variance of groups of `within` values (axis 0: the groups) from each group's rounded mean m, sum of d =
    x - m and sum of d^2 (float64). Each group's sum of squares is taken about its exact mean, sum(d^2) -
    sum(d)^2/within (m's rounding taken out: a mean 0.0005 off on 1e4 + noise of variance 1e-4 would add its square
    per element); the groups combine as Chan et al. do for equal counts: M2 = the groups' sum + within * sum of
    (group mean - mean)^2, each group mean's deviation formed as (m - mean of m) + (sum(d)/within - its mean), whose
    rounding errors are one offset for all groups (canceling to first order, as in NumPy's two passes)."""
    count = means.shape[0]
    drift = drifts / within
    deviations = (means - divide_count(means.sum(0), count)) + (drift - divide_count(drift.sum(0), count))
    own = np.maximum(squares - drifts * drift, 0.0)  # (>= 0 but for rounding: Cauchy-Schwarz)
    return divide_count(own.sum(0) + within * (deviations * deviations).sum(0), dof)


@implements("var")
def var(a: Any, axis: Any = None, dtype: Any = None, out: Any = None, ddof: Any = 0, keepdims: bool = False, **kw: Any) -> Tracer:
    """np.var / x.var (`correction` as ddof's alias)."""
    return _var("var", a, axis, dtype, out, ddof, keepdims, **kw)


@implements("std")
def std(a: Any, axis: Any = None, dtype: Any = None, out: Any = None, ddof: Any = 0, keepdims: bool = False, **kw: Any) -> Tracer:
    """np.std / x.std: the square root of var."""
    return np.sqrt(_var("std", a, axis, dtype, out, ddof, keepdims, **kw))


def _without_nan(x: Tracer, value: float) -> Tracer:
    """x with its NaNs replaced by `value` (NumPy's _replace_nan), or x itself if it cannot hold NaN."""
    return np.where(np.isnan(x), x.dtype.type(value), x) if is_float(x.dtype) else x  # (typed: bfloat16 has no weak scalars)


def _nan_args(name: str, a: Any, out: Any, **unsupported: Any) -> Tracer:
    _no_out(name, out, **unsupported)
    return as_tracer(trace_of([a]), a)


@implements("nansum")
def nansum(a: Any, axis: Any = None, dtype: Any = None, out: Any = None, keepdims: bool = False, initial: Any = None, where: Any = None) -> Tracer:
    """np.nansum: NaN skipped."""
    x = _nan_args("nansum", a, out, initial=initial, where=where)
    return sum_(_without_nan(x, 0), axis, dtype, keepdims=keepdims)


@implements("nanprod")
def nanprod(a: Any, axis: Any = None, dtype: Any = None, out: Any = None, keepdims: bool = False, initial: Any = None, where: Any = None) -> Tracer:
    """np.nanprod: NaN skipped."""
    x = _nan_args("nanprod", a, out, initial=initial, where=where)
    return prod(_without_nan(x, 1), axis, dtype, keepdims=keepdims)


def _nan_extreme(op: str, a: Any, axis: Any, out: Any, keepdims: bool, **unsupported: Any) -> Tracer:
    """nanmax (op "max") / nanmin: the max (min) of the non-NaN elements; an all-NaN slice gives NaN
    (NumPy also warns: no warning here)."""
    x = _nan_args(f"nan{op}", a, out, **unsupported)
    pick = max_ if op == "max" else min_
    if not is_float(x.dtype):
        return pick(x, axis, keepdims=keepdims)
    found = pick(_without_nan(x, -np.inf if op == "max" else np.inf), axis, keepdims=keepdims)
    return np.where(all_(np.isnan(x), axis, keepdims=keepdims), x.dtype.type(np.nan), found)


@implements("nanmax")
def nanmax(a: Any, axis: Any = None, out: Any = None, keepdims: bool = False, initial: Any = None, where: Any = None) -> Tracer:
    """np.nanmax: NaN skipped (an all-NaN slice: NaN)."""
    return _nan_extreme("max", a, axis, out, keepdims, initial=initial, where=where)


@implements("nanmin")
def nanmin(a: Any, axis: Any = None, out: Any = None, keepdims: bool = False, initial: Any = None, where: Any = None) -> Tracer:
    """np.nanmin: NaN skipped (an all-NaN slice: NaN)."""
    return _nan_extreme("min", a, axis, out, keepdims, initial=initial, where=where)


def _nan_index(op: str, a: Any, axis: Any, out: Any, keepdims: bool) -> Tracer:
    """nanargmax (op "argmax") / nanargmin: the arg-reduction of a with NaN read as -inf (+inf), as NumPy.
    An all-NaN slice gives -1 (as jax.numpy), where NumPy raises ValueError: the values are not known while tracing."""
    x = _nan_args(f"nan{op}", a, out)
    if not is_float(x.dtype):
        return _index_reduction(op, x, axis, None, keepdims)
    found = _index_reduction(op, _without_nan(x, -np.inf if op == "argmax" else np.inf), axis, None, keepdims)
    return np.where(all_(np.isnan(x), axis, keepdims=keepdims), np.int64(-1), found)


@implements("nanargmax")
def nanargmax(a: Any, axis: Any = None, out: Any = None, *, keepdims: bool = False) -> Tracer:
    """np.nanargmax: the index of the first max of the non-NaN elements (an all-NaN slice: -1)."""
    return _nan_index("argmax", a, axis, out, keepdims)


@implements("nanargmin")
def nanargmin(a: Any, axis: Any = None, out: Any = None, *, keepdims: bool = False) -> Tracer:
    """np.nanargmin: the index of the first min of the non-NaN elements (an all-NaN slice: -1)."""
    return _nan_index("argmin", a, axis, out, keepdims)


@implements("nanmean")
def nanmean(a: Any, axis: Any = None, dtype: Any = None, out: Any = None, keepdims: bool = False, *, where: Any = None) -> Tracer:
    """The mean of the non-NaN elements (an all-NaN slice: NaN, without NumPy's warning)."""
    x = _nan_args("nanmean", a, out, where=where)
    if not is_float(x.dtype):
        return mean(x, axis, dtype, keepdims=keepdims)
    total = sum_(_without_nan(x, 0), axis, dtype, keepdims=keepdims)
    return divide_count(total, count_nonzero(~np.isnan(x), axis, keepdims=keepdims))


def _nanvar(name: str, a: Any, axis: Any, dtype: Any, out: Any, ddof: Any, keepdims: bool, mean: Any, correction: Any,
            **unsupported: Any) -> Tracer:
    """NumPy's nanvar: NaN replaced by 0, the mean over the non-NaN count (or `mean`), the deviations (in a's dtype,
    NaN's 0) squared and summed, over count - ddof (NaN where that is <= 0, without NumPy's warning)."""
    x = _nan_args(name, a, out, **unsupported)
    ddof = _ddof(name, ddof, correction)
    if not is_float(x.dtype):
        return _var(name, x, axis, dtype, None, ddof, keepdims, mean=mean)
    nan = np.isnan(x)
    arr = _without_nan(x, 0)
    if mean is np._NoValue:
        avg = divide_count(sum_(arr, axis, dtype, keepdims=True), count_nonzero(~nan, axis, keepdims=True))
    else:
        avg = mean
    deviation = np.where(nan, x.dtype.type(0), (arr - avg).astype(x.dtype.name))
    dof = count_nonzero(~nan, axis, keepdims=keepdims) - ddof
    var = divide_count(sum_(deviation * deviation, axis, dtype, keepdims=keepdims), dof)
    return np.where(dof <= 0, var.dtype.type(np.nan), var)


@implements("nanvar")
def nanvar(a: Any, axis: Any = None, dtype: Any = None, out: Any = None, ddof: Any = 0, keepdims: bool = False, *, where: Any = None,
           mean: Any = np._NoValue, correction: Any = np._NoValue) -> Tracer:
    return _nanvar("nanvar", a, axis, dtype, out, ddof, keepdims, mean, correction, where=where)


@implements("nanstd")
def nanstd(a: Any, axis: Any = None, dtype: Any = None, out: Any = None, ddof: Any = 0, keepdims: bool = False, *, where: Any = None,
           mean: Any = np._NoValue, correction: Any = np._NoValue) -> Tracer:
    """The square root of nanvar."""
    return np.sqrt(_nanvar("nanstd", a, axis, dtype, out, ddof, keepdims, mean, correction, where=where))


@implements("average")
def average(a: Any, axis: Any = None, weights: Any = None, returned: bool = False, *, keepdims: bool = False) -> Tracer:
    """The mean, or sum(a * w) / sum(w) in NumPy's result dtype (weights of a's shape, or of the
    reduced axes' extents). Weights summing to zero give inf/NaN, where NumPy raises. `returned`: also the sum
    of the weights (the count without weights), in the result's dtype and shape."""
    trace = trace_of([a, weights])
    x = as_tracer(trace, a)
    if weights is None:
        out = mean(x, axis, keepdims=keepdims)
        if not out.size:  # NumPy divides by the result's size (for `returned`) and raises
            raise fail(TracingError, "np.average of an empty result: NumPy raises ZeroDivisionError")
        return (out, broadcast_to(as_tracer(trace, out.dtype.type(x.size / out.size)), out.shape)) if returned else out
    w = as_tracer(trace, weights)
    dtype = np.result_type(x.dtype, w.dtype, *(["f8"] if x.dtype.kind in "biu" else [])).name
    if w.shape != x.shape:
        if axis is None:
            raise fail(TracingError, "np.average: axis must be specified when shapes of a and weights differ")
        axes = tuple(normalize_axis(x.ndim, i) for i in (axis if isinstance(axis, tuple) else (axis,)))
        if w.shape != tuple(x.shape[i] for i in axes):
            raise fail(TracingError, f"np.average: weights of shape {w.shape} do not fit a's axes {axes} of {x.shape}")
        w = reshape(transpose(w, tuple(np.argsort(axes))), tuple(d if i in axes else 1 for i, d in enumerate(x.shape)))
    w = w.astype(dtype)
    total = sum_(w, axis, keepdims=keepdims)
    out = sum_(x.astype(dtype) * w, axis, keepdims=keepdims) / total
    return (out, broadcast_to(total, out.shape)) if returned else out


def _max_or_zero(x: Tracer, axis: Any, keepdims: bool) -> Tracer:
    """x.max(axis, initial=0) of a nonnegative x: 0 over an empty axis."""
    axes = normalize_axes(x.ndim, axis)
    if _empty(x, axes):
        return _filled(x._trace, 0, x.dtype.name, _reduced_shape(x, axes, keepdims))
    return max_(x, axis, keepdims=keepdims)


def _vector_norm(x: Tracer, ord: Any, axis: tuple[int, ...], keepdims: bool) -> Tracer:
    """Vector norms along one axis: max/min |x| (±inf), nonzero count (0), sum |x|^ord ** 1/ord."""
    if ord is None or ord == 2:
        return np.sqrt(sum_(x * x, axis, keepdims=keepdims))
    if ord == np.inf:
        return _max_or_zero(abs(x), axis, keepdims)
    if ord == -np.inf:
        return min_(abs(x), axis, keepdims=keepdims)
    if ord == 0:
        return sum_((x != 0).astype(x.dtype), axis, keepdims=keepdims)
    if ord == 1:
        return sum_(abs(x), axis, keepdims=keepdims)
    if isinstance(ord, str):
        raise fail(TracingError, f"np.linalg.norm: invalid norm order {ord!r} for vectors")
    return sum_(abs(x) ** ord, axis, keepdims=keepdims) ** np.reciprocal(float(ord), dtype=x.dtype)


def _matrix_norm(x: Tracer, ord: Any, rows: int, cols: int, keepdims: bool) -> Tracer:
    """Matrix norms over axes (rows, cols): Frobenius, or the max/min absolute column (1, -1) or row (inf, -inf) sum."""
    if rows == cols:
        raise fail(TracingError, "np.linalg.norm: duplicate axes given")
    if ord in (None, "fro", "f"):
        out = np.sqrt(sum_(x * x, (rows, cols)))
    elif ord in (1, -1, np.inf, -np.inf):
        summed, other = (rows, cols) if ord in (1, -1) else (cols, rows)
        sums = sum_(abs(x), summed)
        other -= other > summed
        out = _max_or_zero(sums, other, False) if ord > 0 else min_(sums, other)
    elif ord in (2, -2, "nuc"):  # the largest, smallest or summed singular values
        s = IMPLEMENTATIONS["linalg.svdvals"](IMPLEMENTATIONS["moveaxis"](x, (rows, cols), (-2, -1)))
        out = s[..., 0] if ord == 2 else s[..., -1] if ord == -2 else sum_(s, s.ndim - 1)
    else:
        raise fail(TracingError, f"np.linalg.norm: invalid norm order {ord!r} for matrices")
    return reshape(out, tuple(1 if i in (rows, cols) else d for i, d in enumerate(x.shape))) if keepdims else out


@implements("linalg.norm")
def norm(x: Any, ord: Any = None, axis: Any = None, keepdims: bool = False) -> Tracer:
    """np.linalg.norm of vectors (ord None, 0, ±1, 2, ±inf, or any p) and matrices (Frobenius, ±1, ±2, ±inf, nuclear); ints as float64."""
    trace = trace_of([x])
    a = as_tracer(trace, x)
    if not is_float(a.dtype):
        a = a.astype("float64")
    if axis is None and (ord is None or (ord in ("f", "fro") and a.ndim == 2) or (ord == 2 and a.ndim == 1)):
        out = np.sqrt(sum_(a * a))
        return reshape(out, (1,) * a.ndim) if keepdims else out
    axes = tuple(range(a.ndim)) if axis is None else axis if isinstance(axis, tuple) else (axis,)
    if len(axes) == 1:
        return _vector_norm(a, ord, normalize_axes(a.ndim, axes), keepdims)
    if len(axes) == 2:
        return _matrix_norm(a, ord, normalize_axis(a.ndim, axes[0]), normalize_axis(a.ndim, axes[1]), keepdims)
    raise fail(TracingError, "np.linalg.norm: improper number of dimensions to norm")


def _variables(v: Any, dtype: str, rowvar: bool, transpose_1d: bool) -> Tracer:
    """cov's reading of m or y: at least 2-D in `dtype`, one variable per row (columns when not rowvar)."""
    x = as_array(trace_of([v]), v)
    if x.ndim > 2:
        raise fail(TracingError, "m has more than 2 dimensions")
    flip = not rowvar and (x.ndim != 1 if transpose_1d else x.ndim == 2 and x.shape[0] != 1)
    x = reshape(x.astype(dtype), (1, -1)) if x.ndim < 2 else x.astype(dtype)
    return transpose(x) if flip else x


@implements("cov")
def cov(m: Any, y: Any = None, rowvar: bool = True, bias: bool = False, ddof: Any = None, fweights: Any = None,
        aweights: Any = None, *, dtype: Any = None) -> Tracer:
    """The covariance matrix as NumPy computes it: rows centred on their means, X @ X.T times 1 / (n - ddof), in
    result_type(m, y, float64) (float32 data too); weights are not supported."""
    _no_out("cov", None, fweights=fweights, aweights=aweights)
    if dtype is None:
        dtype = result_type(*(v for v in (m, y) if v is not None), np.float64)
    dtype = dtype_name(dtype)
    x = _variables(m, dtype, rowvar, True)
    if y is not None:
        x = IMPLEMENTATIONS["concatenate"]([x, _variables(y, dtype, rowvar, False)], 0)
    if x.shape[0] == 0:
        raise fail(UnsupportedError, "np.cov of no variables (NumPy gives a 0x0 array) is not supported")
    ddof = (0 if bias else 1) if ddof is None else ddof
    fact = max(x.shape[1] - ddof, 0.0)
    x = x - mean(x, 1, keepdims=True)
    c = ((x @ transpose(x)) * np.true_divide(1, fact)).astype(dtype)  # (c *= 1 / fact: in float64, cast back)
    return IMPLEMENTATIONS["squeeze"](c)


@implements("corrcoef")
def corrcoef(x: Any, y: Any = None, rowvar: bool = True, *, dtype: Any = None) -> Tracer:
    """cov divided by the standard deviations of its rows and columns, clipped to [-1, 1] (one variable: c / c)."""
    c = cov(x, y, rowvar, dtype=dtype)
    if c.ndim == 0:
        return c / c
    stddev = np.sqrt(IMPLEMENTATIONS["diagonal"](c))
    return np.clip(c / stddev[:, None] / stddev[None, :], -1, 1)


@implements("digitize")
def digitize(x: Any, bins: Any, right: bool = False) -> Tracer:
    """The bin of each x as NumPy's searchsorted gives it: for increasing bins the number of bins <= x (< x when
    `right`), for decreasing ones the number > x (>= x); NaN past the last bin. Constant bins must be monotonic
    (else ValueError's message); traced bins are read as increasing when bins[0] <= bins[-1] (not checked further)."""
    trace = trace_of([x, bins])
    a = as_array(trace, x)
    if isinstance(bins, Tracer):
        b = bins
        if b.ndim != 1:
            raise fail(TracingError, "object too deep for desired array")
        increasing: Any = b[0] <= b[-1] if b.shape[0] else True
    else:
        edges = np.asarray(bins)
        if edges.ndim != 1:
            raise fail(TracingError, "object too deep for desired array")
        steps = np.diff(edges)
        if not (np.all(steps >= 0) or np.all(steps <= 0)):
            raise fail(TracingError, "bins must be monotonically increasing or decreasing")
        b, increasing = as_tracer(trace, edges), bool(edges.size < 2 or edges[-1] >= edges[0])  # (all equal: increasing, as NumPy)
    column = a[..., None]
    up = sum_((b < column) if right else (b <= column), -1, "int64")
    if is_float(a.dtype):
        up = np.where(np.isnan(a), np.int64(b.shape[0]), up)
    if increasing is True:
        return up
    down = sum_((b >= column) if right else (b > column), -1, "int64")
    return down if increasing is False else np.where(increasing, up, down)
