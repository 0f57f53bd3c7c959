"""Sorts: np.sort, np.argsort and np.partition/argpartition (as full sorts) on the `sort`/`argsort`
primitives (a stable merge sort of the last axis, lowering/sorting.py: NaN last, ties in their
order, so argsort gives what kind="stable" gives whatever `kind` says), and on top of them
np.median, np.quantile and np.percentile (static q; methods linear, midpoint, lower, higher, nearest) and their
nan- forms (linear), composed as
NumPy composes them; np.searchsorted on its own primitive (a binary search per element, same order),
and np.interp on it."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import TracingError, UnsupportedError
from ..graph import is_float
from .core import (
    Tracer,
    as_array,
    as_tracer,
    fail,
    implements,
    lift,
    normalize_axes,
    normalize_axis,
    result,
    trace_of,
)
from .statistics import _no_out


def _sorted(op: str, a: Any, axis: Any, order: Any) -> Tracer:
    """a sorted (op "sort") or its sorting indices ("argsort") along `axis` (None: the flattened
    array): the axis moved last for the primitive, and back."""
    if order is not None:
        raise fail(UnsupportedError, f"np.{op}: `order` (sorting structured arrays by fields) is not supported")
    x = as_tracer(trace_of([a]), a)
    if axis is None:
        x, axis = x.reshape(-1), 0
    axis = normalize_axis(x.ndim, axis)  # (a 0-d array has no axis: TracingError, as NumPy's AxisError)
    moved = np.moveaxis(x, axis, -1)
    node = moved._node if not x.size else moved._trace.make(op, (moved._node,))
    out = result(moved._trace, node) if x.size else (moved if op == "sort" else moved.astype("int64"))
    return np.moveaxis(out, -1, axis)


@implements("sort")
def sort(a: Any, axis: Any = -1, kind: Any = None, order: Any = None, *, stable: Any = None) -> Tracer:
    """np.sort: ascending along `axis`, NaN last (stable, which every `kind` allows)."""
    return _sorted("sort", a, axis, order)


@implements("argsort")
def argsort(a: Any, axis: Any = -1, kind: Any = None, order: Any = None, *, stable: Any = None) -> Tracer:
    """np.argsort / x.argsort: the int64 indices sorting `axis`; ties in index order (kind="stable"'s
    result, which NumPy's default kind does not promise)."""
    return _sorted("argsort", a, axis, order)


@implements("partition")
def partition(a: Any, kth: Any, axis: Any = -1, kind: str = "introselect", order: Any = None) -> Tracer:
    """np.partition as a full sort: a valid partition for every kth (NumPy's own order of the
    elements on either side of kth is unspecified and differs)."""
    return _sorted("sort", a, axis, order)


@implements("argpartition")
def argpartition(a: Any, kth: Any, axis: Any = -1, kind: str = "introselect", order: Any = None) -> Tracer:
    """np.argpartition as a full stable argsort (a valid one for every kth)."""
    return _sorted("argsort", a, axis, order)


@implements("searchsorted")
def searchsorted(a: Any, v: Any, side: str = "left", sorter: Any = None) -> Tracer:
    """np.searchsorted: where each of v goes in the sorted 1-D a (`sorter`: a's sorting indices), as int64
    positions in v's shape, both cast to their common dtype first (a Python scalar v weakly, as NumPy)."""
    trace = trace_of([a, v, sorter])
    x = as_tracer(trace, a)
    if x.ndim != 1:
        raise fail(UnsupportedError, f"np.searchsorted: a must be 1-D, got shape {x.shape}")
    if side not in ("left", "right"):
        raise ValueError(f"np.searchsorted: side must be 'left' or 'right', got {side!r}")
    if sorter is not None:
        x = np.take(x, sorter)
    values = as_tracer(trace, v)
    common = np.result_type(x.dtype, v if type(v) in (bool, int, float) else values.dtype).name
    if not x.size or not values.size:
        return np.zeros(values.shape, np.int64) if values.shape else np.int64(0)
    flat = values.reshape(-1)
    node = trace.make("searchsorted", (lift(trace, x, common), lift(trace, flat, common)), (int(side == "right"),))
    return result(trace, node).reshape(values.shape)


@implements("interp")
def interp(x: Any, xp: Any, fp: Any, left: Any = None, right: Any = None, period: Any = None) -> Tracer:
    """np.interp (float64, real): each x's segment of the increasing xp found by searchsorted, then
    NumPy's compiled loop's cases: outside gives left/right (default fp's ends), x on a point of xp
    its fp, else slope * (x - xp[j]) + fp[j], retried from xp[j + 1] when that is NaN; NaN x stays NaN."""
    trace = trace_of([x, xp, fp, left, right, period])
    x, xp, fp = (as_tracer(trace, v).astype("float64") for v in (x, xp, fp))
    if period is not None:  # NumPy's: x and xp modulo the period, xp sorted and extended by a point each way
        if isinstance(period, Tracer):
            raise fail(UnsupportedError, "np.interp: a traced `period` is not supported; pass a number")
        if period == 0:
            raise fail(TracingError, "np.interp: period must be a non-zero value")
        if x.ndim != 1 or xp.ndim != 1 or xp.shape != fp.shape:
            raise fail(TracingError, "np.interp: Data points must be 1-D sequences" if x.ndim != 1 or xp.ndim != 1 else "fp and xp are not of the same length")
        period, left, right = abs(period), None, None
        x, xp = x % period, xp % period
        order = np.argsort(xp)
        xp, fp = np.take(xp, order), np.take(fp, order)
        xp = np.concatenate([xp[-1:] - period, xp, xp[:1] + period])
        fp = np.concatenate([fp[-1:], fp, fp[:1]])
    if xp.ndim != 1 or fp.ndim != 1 or xp.shape != fp.shape or not xp.size:
        raise ValueError(f"np.interp: xp and fp must be 1-D sequences of the same nonzero length, got {xp.shape} and {fp.shape}")
    n = xp.shape[0]
    low, high = (fp[end] if v is None else v for v, end in ((left, 0), (right, n - 1)))
    if n == 1:
        inside = fp[0]
    else:
        j = np.searchsorted(xp, x, side="right") - 1
        at = np.clip(j, 0, n - 2)
        x0, x1, y0, y1 = np.take(xp, at), np.take(xp, at + 1), np.take(fp, at), np.take(fp, at + 1)
        slope = (y1 - y0) / (x1 - x0)
        first, second = slope * (x - x0) + y0, slope * (x - x1) + y1
        retried = np.where(np.isnan(first), np.where(np.isnan(second) & (y0 == y1), y0, second), first)
        inside = np.where((j == n - 1) | (x == x0), np.where(j == n - 1, fp[n - 1], y0), retried)
        inside = np.where(np.isnan(x), x, inside)
    return np.where(x < xp[0], low, np.where(x > xp[n - 1], high, inside))


def _last_axis(a: Any, axis: Any) -> tuple[Tracer, tuple[int, ...]]:
    """a with the reduced `axis` (None: all, or a tuple) merged into one last axis, and the shape
    keepdims gives."""
    x = as_tracer(trace_of([a]), a)
    axes = normalize_axes(x.ndim, axis)
    kept = [d for d in range(x.ndim) if d not in axes]
    moved = np.transpose(x, kept + list(axes))
    kept_shape = tuple(x.shape[d] for d in kept)
    keep = tuple(1 if d in axes else n for d, n in enumerate(x.shape))
    return moved.reshape(kept_shape + (-1,)) if len(axes) != 1 else moved, keep


def _nan_where_nan(s: Tracer, value: Tracer) -> Tracer:
    """value, or the row's NaN where the sorted row `s` has one (it sorts last), as NumPy checks."""
    if not is_float(s.dtype):
        return value
    last = s[..., -1]
    return np.where(np.isnan(last), last, value)


@implements("median")
def median(a: Any, axis: Any = None, out: Any = None, overwrite_input: bool = False, keepdims: bool = False) -> Tracer:
    """np.median: the mean of the middle one or two of each sorted slice (NaN if it has one)."""
    _no_out("median", out)
    x, keep = _last_axis(a, axis)
    n = x.shape[-1]
    if not n:
        raise fail(UnsupportedError, "np.median of an empty slice (NumPy warns and gives NaN) is not supported")
    s = np.sort(x, axis=-1)
    half = n // 2
    value = _nan_where_nan(s, np.mean(s[..., half - 1 + n % 2:half + 1], axis=-1))
    return value.reshape(keep) if keepdims else value


def _quantile(name: str, a: Any, q: Any, axis: Any, out: Any, method: str, keepdims: bool, scale: float, **unsupported: Any) -> Tracer:
    """np.quantile/np.percentile (q divided by `scale`) with NumPy's "linear" method: each q's
    virtual index (n - 1) q between two sorted elements, interpolated as NumPy's _lerp; q static."""
    _no_out(name, out, **{k: v for k, v in unsupported.items() if v is not None})
    weak = type(q) in (int, float)
    qs = _static_q(name, q, method, scale, _METHODS)
    x, keep = _last_axis(a, axis)
    n = x.shape[-1]
    if not n:
        raise fail(UnsupportedError, f"np.{name} of an empty slice is not supported")
    s = np.sort(x, axis=-1)
    if method in _DISCRETE:  # an element itself, in the data's dtype
        values = [s[..., int(i)] for i in _DISCRETE[method]((n - 1) * qs).astype(np.intp).ravel()]
        return _per_q([_nan_where_nan(s, v) for v in values], qs, keep if keepdims else None)
    virtual = (n - 1) * qs if method == "linear" else 0.5 * (np.floor((n - 1) * qs) + np.ceil((n - 1) * qs))
    gamma = virtual - np.floor(virtual) if method == "linear" else np.where(virtual % 1 == 0, 0.0, 0.5)
    values = [_lerp(s, int(v), float(g) if weak else g) for v, g in zip(np.floor(virtual).ravel(), gamma.ravel(), strict=True)]
    return _per_q([_nan_where_nan(s, v) for v in values], qs, keep if keepdims else None)


def _per_q(values: list[Tracer], qs: np.ndarray, keep: tuple[int, ...] | None) -> Tracer:
    """One result per q, stacked in q's shape before the slices' (each in shape `keep` for keepdims)."""
    if keep is not None:
        values = [v.reshape(keep) for v in values]
    return values[0] if not qs.ndim else np.stack(values).reshape(qs.shape + values[0].shape)


_DISCRETE = {"lower": np.floor, "higher": np.ceil, "nearest": np.around}  # NumPy's index of the element each method takes
_METHODS = ("linear", "midpoint", *_DISCRETE)


def _static_q(name: str, q: Any, method: str, scale: float, methods: tuple[str, ...] = ("linear",)) -> np.ndarray:
    """q / scale as NumPy computes it, checked in [0, 1]; a static q and one of `methods`."""
    if method not in methods:
        raise fail(UnsupportedError, f"np.{name}: method={method!r} is not supported (only {', '.join(repr(m) for m in methods)})")
    if isinstance(q, Tracer):
        raise fail(UnsupportedError, f"np.{name}: q must be a static number or list of numbers, not a traced array")
    qs = np.true_divide(np.asanyarray(q), scale)
    if not (np.all(qs >= 0) and np.all(qs <= 1)):
        raise ValueError(f"np.{name}: q must be in the range [0, {scale:g}], got {q!r}")
    return qs


def _lerp(s: Tracer, previous: int, gamma: float) -> Tracer:
    """NumPy's _lerp between sorted elements `previous` and the next (the last past the end) at gamma."""
    n = s.shape[-1]
    a, b = s[..., min(previous, n - 1)], s[..., min(previous + 1, n - 1)]
    diff = b - a
    return b - diff * (1 - gamma) if gamma >= 0.5 else a + diff * gamma


def _nan_sorted(a: Any, axis: Any) -> tuple[Tracer, Tracer, tuple[int, ...]]:
    """The nan-functions' data: a's slices sorted (NaN last), each slice's count of numbers, keepdims' shape."""
    x, keep = _last_axis(a, axis)
    return np.sort(x, axis=-1), np.sum(~np.isnan(x), axis=-1), keep


def _at(s: Tracer, index: Tracer) -> Tracer:
    """s[..., index] with a traced index per slice (clipped into the slice)."""
    return np.take_along_axis(s, np.clip(index, 0, s.shape[-1] - 1)[..., None], axis=-1)[..., 0]


@implements("nanmedian")
def nanmedian(a: Any, axis: Any = None, out: Any = None, overwrite_input: bool = False, keepdims: bool = False) -> Tracer:
    """np.nanmedian: the median of each slice's numbers (NaN where it has none), ints as np.median."""
    x = as_tracer(trace_of([a]), a)
    if not is_float(x.dtype):
        return median(x, axis, out, overwrite_input, keepdims)
    _no_out("nanmedian", out)
    s, count, keep = _nan_sorted(x, axis)
    half = count // 2  # the middle two, or the middle one twice, summed from +0.0 and halved (NumPy's masked median)
    middle = np.stack([_at(s, np.where(count % 2 == 1, half, half - 1)), _at(s, half)], axis=-1)
    value = np.sum(middle, axis=-1) / 2
    return value.reshape(keep) if keepdims else value


def _nan_quantile(name: str, a: Any, q: Any, axis: Any, out: Any, method: str, keepdims: bool, scale: float,
                  **unsupported: Any) -> Tracer:
    """np.nanquantile/np.nanpercentile: _quantile of each slice's numbers, whose count is traced, so
    the index and gamma of each q are computed per slice (in float64, as NumPy, then weak q's in the data's dtype)."""
    x = as_tracer(trace_of([a]), a)
    if not is_float(x.dtype):
        return _quantile(name.removeprefix("nan"), x, q, axis, out, method, keepdims, scale, **unsupported)
    _no_out(name, out, **{k: v for k, v in unsupported.items() if v is not None})
    qs = _static_q(name, q, method, scale)
    s, count, keep = _nan_sorted(x, axis)
    weak = type(q) in (int, float)
    values = []
    for qi in qs.ravel():
        virtual = (count - 1) * qi
        gamma = virtual - np.floor(virtual)
        lo = np.floor(virtual).astype("int64")
        low, high = _at(s, lo), _at(s, np.minimum(lo + 1, count - 1))
        diff = high - low
        t, rest = (gamma.astype(x.dtype), (1 - gamma).astype(x.dtype)) if weak else (gamma, 1 - gamma)
        values.append(np.where(count == 0, np.nan, np.where(gamma >= 0.5, high - diff * rest, low + diff * t)))
    return _per_q(values, qs, keep if keepdims else None)


@implements("nanquantile")
def nanquantile(a: Any, q: Any, axis: Any = None, out: Any = None, overwrite_input: bool = False, method: str = "linear",
                keepdims: bool = False, *, weights: Any = None, interpolation: Any = None) -> Tracer:
    """np.nanquantile: q in [0, 1], static; NaN ignored."""
    return _nan_quantile("nanquantile", a, q, axis, out, method, keepdims, 1.0, weights=weights, interpolation=interpolation)


@implements("nanpercentile")
def nanpercentile(a: Any, q: Any, axis: Any = None, out: Any = None, overwrite_input: bool = False, method: str = "linear",
                  keepdims: bool = False, *, weights: Any = None, interpolation: Any = None) -> Tracer:
    """np.nanpercentile: q in [0, 100], static; NaN ignored."""
    return _nan_quantile("nanpercentile", a, q, axis, out, method, keepdims, 100.0, weights=weights, interpolation=interpolation)


@implements("quantile")
def quantile(a: Any, q: Any, axis: Any = None, out: Any = None, overwrite_input: bool = False, method: str = "linear",
             keepdims: bool = False, *, weights: Any = None, interpolation: Any = None) -> Tracer:
    """np.quantile: q in [0, 1], static."""
    return _quantile("quantile", a, q, axis, out, method, keepdims, 1.0, weights=weights, interpolation=interpolation)


@implements("percentile")
def percentile(a: Any, q: Any, axis: Any = None, out: Any = None, overwrite_input: bool = False, method: str = "linear",
               keepdims: bool = False, *, weights: Any = None, interpolation: Any = None) -> Tracer:
    """np.percentile: q in [0, 100], static."""
    return _quantile("percentile", a, q, axis, out, method, keepdims, 100.0, weights=weights, interpolation=interpolation)


@implements("lexsort")
def lexsort(keys: Any, axis: Any = -1) -> Tracer:
    """np.lexsort: the indices sorting by the last key, ties by the ones before it: stable argsorts from the first
    key (the least significant) to the last, each of the keys read in the order so far (NaN last, as NumPy's)."""
    trace = trace_of(list(keys) if isinstance(keys, (list, tuple)) else [keys])
    rows = [as_array(trace, k) for k in keys]
    if not rows:
        raise fail(TracingError, "need sequence of keys with len > 0 in lexsort")
    if any(r.shape != rows[0].shape for r in rows):
        raise fail(TracingError, "all keys need to be the same shape")
    ax = normalize_axis(rows[0].ndim, axis)
    order = argsort(rows[0], ax)
    for key in rows[1:]:
        order = np.take_along_axis(order, argsort(np.take_along_axis(key, order, ax), ax), ax)
    return order
