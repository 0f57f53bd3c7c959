"""Scatter-add reductions: np.bincount with a static `minlength`, np.histogram and np.histogramdd/histogram2d with a static
bin count (over a static range or the data's min and max) or bin edges, each a `scatter_add` (the weights summed into static
bins at computed indices, in NumPy's order). Their result shapes would depend on the data without those static arguments
(bincount without minlength, bins='auto'): a clear error says what to pass. Indices outside the bins are flagged at run time (the call raises
IndexOutOfBoundsError), never written. np.gcd and np.lcm are registry ops reached through ufuncs.py."""

from __future__ import annotations

import builtins
import math
import operator
from typing import Any

import numpy as np

try:  # NumPy's histogram internals, reused so that bins and edges are NumPy's own (numpy.lib.histograms before 2.0)
    from numpy.lib import _histograms_impl as numpy_histograms
except ImportError:  # pragma: no cover
    from numpy.lib import histograms as numpy_histograms  # type: ignore[no-redef]

from ..errors import DataValueError, TracingError, UnsupportedError
from .core import Trace, Tracer, as_tracer, check_at_run_time, fail, implements, result, trace_of
from .creation import iota
from .indexing import expand_masks, gather, is_traced_mask
from .shapes import broadcast_to, reshape
from .updates import require_traced, write_indexed

SEARCH_FROM = 64  # bin edges beyond this many are searched (log2 steps), not each compared with every element
BLOCK = 65536  # NumPy's histogram adds up its bins block by block of this many elements (a float sum's rounding)


def scatter_add(idx: Tracer, weights: Tracer, bins: int) -> Tracer:
    """`bins` bins, each the sum of the weights whose int64 index (each in [0, bins)) is that bin."""
    trace = idx._trace
    return result(trace, trace.make("scatter_add", (idx.astype("int64")._node, weights._node), (bins,)))


def _ones(trace: Trace, n: int) -> Tracer:
    """n int64 ones: the weight of each element of an unweighted count."""
    return broadcast_to(as_tracer(trace, np.int64(1)), (n,))


def _static_int(name: str, value: Any) -> int:
    """A static integer argument (a Python or NumPy int), else a clear error."""
    if isinstance(value, Tracer):
        raise fail(UnsupportedError, f"{name} must be a static Python int (it sets the result's shape), not a traced value")
    try:
        return operator.index(value)
    except TypeError:
        raise fail(TracingError, f"{name} must be an integer, got {type(value).__name__} {value!r}") from None


@implements("bincount")
def bincount(x: Any, weights: Any = None, minlength: Any = None) -> Tracer:
    """np.bincount with exactly `minlength` bins: int64 counts, or float64 sums of the weights."""
    if minlength is None:
        raise fail(UnsupportedError, "np.bincount needs a static minlength= in a kernel: its result has max(x) + 1 bins, "
                                     "which depends on the data; pass minlength=N (then every value must be < N)")
    bins = _static_int("np.bincount: minlength", minlength)
    if bins < 0:
        raise fail(TracingError, "np.bincount: 'minlength' must not be negative")
    trace = trace_of([x, weights])
    x = as_tracer(trace, x)
    if x.ndim != 1:
        raise fail(TracingError, f"np.bincount: x must be 1-D, got {x.ndim}-D")
    if not np.can_cast(x.dtype, np.int64, "safe"):
        raise fail(TracingError, f"np.bincount: cannot cast x from {x.dtype} to int64 according to the rule 'safe'")
    w = _ones(trace, x.size) if weights is None else as_tracer(trace, weights)
    if w.shape != x.shape:
        raise fail(TracingError, f"np.bincount: the weights {w.shape} and x {x.shape} don't have the same length")
    idx = x.astype("int64")
    negative, beyond = idx < 0, idx >= bins
    check_at_run_time(negative, "np.bincount: x has a negative value (NumPy raises ValueError: "
                                "'list' argument must have no negative elements)")
    check_at_run_time(beyond, f"np.bincount: x has a value >= minlength={bins}, the kernel's number of bins; pass a larger minlength")
    idx = np.where(negative | beyond, 0, idx)
    if weights is None or not x.size:  # NumPy counts an empty x as int64, weighted or not
        return scatter_add(idx, _ones(trace, x.size), bins)
    return scatter_add(idx, w.astype("float64"), bins)


@implements("histogram")
def histogram(a: Any, bins: Any = 10, range: Any = None, density: Any = None, weights: Any = None) -> tuple[Tracer, Any]:
    """np.histogram with static bins: equal bins of a static range (NumPy's bin index computation,
    bit for bit) or bin edges (a constant or an argument); values outside them, and NaN, dropped."""
    trace = trace_of([a, weights, bins])
    x = reshape(as_tracer(trace, a), (-1,))
    w = None
    if weights is not None:
        w = as_tracer(trace, weights)
        if w.shape != as_tracer(trace, a).shape:
            raise fail(TracingError, "np.histogram: weights should have the same shape as a")
        w = reshape(w, (-1,))
    if isinstance(bins, Tracer):
        hist, edges = _by_traced_edges(x, bins, w), bins
    else:
        edges, uniform = _edges(x, bins, range)
        hist = _by_edges(x, as_tracer(trace, edges), w) if uniform is None else _uniform(x, edges, uniform, w)
    if density:
        width = (edges[1:] - edges[:-1]).astype("float64") if isinstance(edges, Tracer) else np.array(np.diff(edges), float)
        hist = hist / width / hist.sum()
    return hist, edges


def _edges(x: Tracer, bins: Any, range: Any) -> tuple[Any, tuple | None]:
    """NumPy's bin edges (and its (first, last, count) of equal bins) of bins not traced: of the data's range
    for an int count without a range (`_data_edges`), else constants."""
    if np.ndim(bins) == 0 and not isinstance(bins, str) and range is None and x.size:
        return _data_edges(x, bins)
    return _static_edges(x, bins, range)


def _static_edges(x: Tracer, bins: Any, range: Any) -> tuple[np.ndarray, tuple | None]:
    """NumPy's bin edges (and its (first, last, count) of equal bins) of static bins and range."""
    if isinstance(bins, str):
        raise fail(UnsupportedError, f"np.histogram(bins={bins!r}): the number of bins would depend on the data; "
                                     "pass an int and a static range=(lo, hi), or the bin edges")
    if range is not None and any(isinstance(v, Tracer) for v in range):
        raise fail(UnsupportedError, "np.histogram: range must be static (Python or NumPy numbers), not traced values")
    if np.ndim(bins) == 1 and np.isnan(np.asarray(bins, float)).any():
        raise fail(TracingError, "np.histogram: bin edges must not be NaN")
    try:
        return numpy_histograms._get_bin_edges(np.empty(0, x.dtype), bins, range, None)
    except (ValueError, TypeError) as e:
        raise fail(TracingError, f"np.histogram: {e}") from None


def _data_edges(x: Tracer, bins: Any) -> tuple[Tracer, tuple]:
    """NumPy's equal bins of the data's range (bins an int, no range, x not empty): its min and max (a range
    of one value widened by 0.5 each way; checked finite when the kernel runs) and their linspace, in NumPy's
    bin dtype (x's, float64 for integers): the edges and the (first, last, count, width) `_uniform` bins by."""
    n = _static_int("np.histogram: bins", bins)
    if n < 1:
        raise fail(TracingError, "np.histogram: `bins` must be positive, when an integer")
    if x.dtype == np.bool_:
        raise fail(TracingError, "np.histogram of booleans: NumPy's range of them subtracts booleans (TypeError); pass x.astype(int)")
    low, high, first, last = _data_range(x, "np.histogram: the autodetected range of the data is not finite (NumPy raises "
                                            "ValueError); pass range=(lo, hi)")
    if np.issubdtype(x.dtype, np.inexact):
        width = high - low  # (NumPy's _unsigned_subtract of floats)
    else:  # NumPy subtracts integer edges in the unsigned type of their width
        width = (high.astype("int64") - low.astype("int64")).astype("uint64").astype("float64")
    edges = np.linspace(first, last, n + 1, dtype=first.dtype.name)
    check_at_run_time(np.any(edges[:-1] >= edges[1:]), f"np.histogram: Too many bins for data range. Cannot create {n} "
                                                      "finite-sized bins. (NumPy raises ValueError)", DataValueError)
    return edges, (first, last, n, np.where(low == high, np.asarray(1.0, first.dtype), width.astype(first.dtype.name)))


def _data_range(x: Tracer, not_finite: str) -> tuple[Tracer, Tracer, Tracer, Tracer]:
    """NumPy's autodetected range of x (not empty): its min and max, and the outer edges (first, last) in NumPy's
    bin dtype (x's, float64 for integers), a range of one value widened by 0.5 each way; `not_finite` the
    DataValueError's message when the kernel finds it not finite."""
    dtype = x.dtype.name if np.issubdtype(x.dtype, np.inexact) else "float64"
    low, high = np.min(x), np.max(x)
    if np.issubdtype(x.dtype, np.inexact):
        check_at_run_time(~(np.isfinite(low) & np.isfinite(high)), not_finite, DataValueError)
    same = low == high
    return low, high, np.where(same, low.astype(dtype) - 0.5, low.astype(dtype)), np.where(same, high.astype(dtype) + 0.5, high.astype(dtype))


def _uniform(x: Tracer, edges: Any, uniform: tuple, weights: Tracer | None) -> Tracer:
    """Equal bins as NumPy computes each element's bin: (a - first) / (last - first) * n truncated,
    then corrected against the edges (last bin closed); elements outside [first, last] dropped.
    `uniform` is NumPy's (first, last, n) of a static range, or `_data_edges`' (traced, with their width)."""
    first, last, n = uniform[:3]
    denom = uniform[3] if len(uniform) > 3 else numpy_histograms._unsigned_subtract(last, first)
    keep = (x >= first) & (x <= last)
    xa = x.astype(edges.dtype.name)
    f = np.where(keep, (xa - first) / denom * n, 0)
    idx = f.astype("int64")
    idx = np.where(idx == n, n - 1, idx)
    table = edges if isinstance(edges, Tracer) else as_tracer(x._trace, edges)
    idx = idx - (xa < gather(table, idx, 0)).astype("int64")
    idx = idx + ((xa >= gather(table, idx + 1, 0)) & (idx != n - 1)).astype("int64")
    return _count(idx, keep, weights, n)


def _edges_at_most(x: Tracer, edges: Tracer) -> Tracer:
    """How many of the sorted edges are <= each element (0 for NaN): every edge compared with it
    when they are few, else a binary search (a gather of one edge per element and step)."""
    count = edges.size
    if count <= SEARCH_FROM:
        return np.sum(reshape(x, (x.size, 1)) >= reshape(edges, (1, count)), axis=1)
    found = broadcast_to(as_tracer(x._trace, np.int64(0)), x.shape)
    step = 1 << (count.bit_length() - 1)
    while step:
        more = found + step
        below = (more <= count) & (gather(edges, np.minimum(more, count) - 1, 0) <= x)
        found, step = np.where(below, more, found), step // 2
    return found


def _by_edges(x: Tracer, edges: Tracer, weights: Tracer | None) -> Tracer:
    """Bins of sorted edges: an element's bin is the last edge <= it (the last bin closed);
    elements outside the edges, and NaN, dropped."""
    n = edges.size - 1
    if n < 1:
        raise fail(TracingError, "np.histogram: bins must have at least 2 edges")
    idx = np.minimum(_edges_at_most(x, edges) - 1, n - 1)
    keep = (x >= edges[0]) & (x <= edges[n])
    return _count(np.where(keep, idx, 0), keep, weights, n)


def _by_traced_edges(x: Tracer, edges: Tracer, weights: Tracer | None) -> Tracer:
    """Bin edges passed as an argument: 1-D, checked to increase monotonically at run time."""
    if edges.ndim != 1:
        raise fail(TracingError, "np.histogram: `bins` must be 1d, when an array")
    if edges.size >= 2:
        check_at_run_time(edges[:-1] > edges[1:], "np.histogram: `bins` must increase monotonically, when an array "
                                                  "(NumPy raises ValueError)")
    return _by_edges(x, edges, weights)


def _count(idx: Tracer, keep: Tracer, weights: Tracer | None, n: int) -> Tracer:
    """The histogram of bin indices (valid where kept): int64 counts, or the weights summed as NumPy
    does (in float64 per block of BLOCK elements, each block's sums cast to the weights' dtype and added)."""
    idx = np.where(keep, idx, 0)
    if weights is None:
        return scatter_add(idx, keep.astype("int64"), n)
    w = np.where(keep, weights.astype("float64"), 0.0)
    blocks = -(-idx.size // BLOCK)
    if blocks <= 1:
        return scatter_add(idx, w, n).astype(weights.dtype.name)
    block = iota(idx._trace, idx.shape, 0) // BLOCK
    parts = reshape(scatter_add(block * n + idx, w, blocks * n), (blocks, n))
    total = parts[0].astype(weights.dtype.name)
    for b in range(1, blocks):
        total = total + parts[b].astype(weights.dtype.name)
    return total


@implements("histogramdd")
def histogramdd(sample: Any, bins: Any = 10, range: Any = None, density: Any = None, weights: Any = None) -> tuple[Tracer, list]:
    """np.histogramdd with static bins per dim (an int with a static range, or edges: a constant or an argument): NumPy's
    bin of each element (the last edge's in the last bin; NaN and outliers dropped), float64 counts or weight sums."""
    trace = trace_of([sample, weights, bins])
    if isinstance(sample, (list, tuple)):  # a sequence of 1-D arrays, as NumPy's atleast_2d(sample).T reads it
        columns = np.stack([as_tracer(trace, c) for c in sample]) if sample else None
    else:
        s = as_tracer(trace, sample)
        columns = np.transpose(s) if s.ndim == 2 else np.atleast_2d(s)
    if columns is None or columns.ndim != 2:
        raise fail(TracingError, "np.histogramdd: the sample must be an (N, D) array or a sequence of D 1-D arrays")
    dims = columns.shape[0]
    per_dim = list(bins) if isinstance(bins, (Tracer, np.ndarray, list, tuple)) else [bins] * dims
    ranges = [None] * dims if range is None else list(range)
    if len(per_dim) != dims or len(ranges) != dims:
        raise fail(TracingError, f"np.histogramdd: the dimension of {'bins' if len(per_dim) != dims else 'range'} must be "
                                 "equal to the dimension of the sample x")
    edges = [_edges_of(trace, b, r, i, c) for i, (b, r, c) in enumerate(zip(per_dim, ranges, columns))]
    sizes = [e.shape[0] - 1 for e in edges]
    flat, keep = 0, True
    for column, e, n in zip(columns, edges, sizes):
        table = e if isinstance(e, Tracer) else as_tracer(trace, e)
        idx = _edges_at_most(column, table) - (column == table[-1]).astype("int64")  # on the last edge: the last bin
        keep = keep & (idx >= 1) & (idx <= n)
        flat = flat * n + idx - 1
    total = math.prod(sizes)
    flat = np.where(keep, flat, 0)
    if weights is None:
        hist = scatter_add(flat, keep.astype("int64"), total).astype("float64")
    else:
        w = as_tracer(trace, weights)
        if w.shape != (columns.shape[1],):
            raise fail(TracingError, f"np.histogramdd: the weights {w.shape} and the sample's {columns.shape[1]} points don't match")
        hist = scatter_add(flat, np.where(keep, w.astype("float64"), 0.0), total)
    hist = reshape(hist, tuple(sizes))
    if density:
        s = hist.sum()
        for i, e in enumerate(edges):
            hist = hist / reshape(e[1:] - e[:-1] if isinstance(e, Tracer) else as_tracer(trace, np.diff(e)), tuple(-1 if d == i else 1 for d in builtins.range(dims)))
        hist = hist / s
    return hist, edges


def _edges_of(trace: Trace, bins: Any, range: Any, i: int, column: Tracer) -> Any:
    """Dim i's bin edges as np.histogramdd makes them: linspace of the range for an int (a static one, else the
    column's min and max, checked finite at run time; a range of one value widened by 0.5 each way), constant
    edges checked to increase, traced ones checked at run time."""
    if isinstance(bins, Tracer):
        if bins.ndim != 1:
            raise fail(TracingError, f"np.histogramdd: `bins[{i}]` must be a scalar or 1d array")
        if bins.size >= 2:
            check_at_run_time(bins[:-1] > bins[1:], f"np.histogramdd: `bins[{i}]` must be monotonically increasing, when an array")
        return bins
    if np.ndim(bins) == 1:
        edges = np.asarray(bins)
        if np.any(edges[:-1] > edges[1:]):
            raise fail(TracingError, f"np.histogramdd: `bins[{i}]` must be monotonically increasing, when an array")
        return edges
    if np.ndim(bins) != 0:
        raise fail(TracingError, f"np.histogramdd: `bins[{i}]` must be a scalar or 1d array")
    n = _static_int(f"np.histogramdd: bins[{i}]", bins)
    if n < 1:
        raise fail(TracingError, f"np.histogramdd: `bins[{i}]` must be positive, when an integer")
    if range is None and column.size:
        _, _, first, last = _data_range(column, f"np.histogramdd: the autodetected range of dim {i} of the sample is not finite "
                                                "(NumPy raises ValueError)")
        return np.linspace(first, last, n + 1)
    if range is not None and any(isinstance(v, Tracer) for v in range):  # (no range and no data: NumPy's [0, 1])
        raise fail(UnsupportedError, "np.histogramdd: range must be static (Python or NumPy numbers), not traced values")
    try:
        first, last = numpy_histograms._get_outer_edges(np.empty(0), range)
    except ValueError as e:
        raise fail(TracingError, f"np.histogramdd: {e}") from None
    return np.linspace(first, last, n + 1)


@implements("histogram2d")
def histogram2d(x: Any, y: Any, bins: Any = 10, range: Any = None, density: Any = None, weights: Any = None) -> tuple[Tracer, Any, Any]:
    """np.histogram2d: np.histogramdd of [x, y] (bins one count or edges for both, or a pair)."""
    if isinstance(bins, (Tracer, np.ndarray, list, tuple)) and len(bins) not in (1, 2):  # NumPy's test: edges for both
        bins = [bins, bins]
    hist, (xedges, yedges) = histogramdd([x, y], bins, range, density, weights)
    return hist, xedges, yedges


@implements("ufunc.at")
def ufunc_at(ufunc: np.ufunc, a: Any, indices: Any, b: Any = None) -> None:
    """np.add.at / np.subtract.at(a, indices, b): b added at each index in turn, repeats accumulating (embedding
    gradients, histograms by hand): the values are scatter-added into a zero array of a's size, added to a once
    (a float sum rounded in that order: to rounding of NumPy's one add per index)."""
    if ufunc.__name__ not in ("add", "subtract") or b is None:
        raise fail(UnsupportedError, f"np.{ufunc.__name__}.at is not supported (np.add.at and np.subtract.at are)")
    require_traced(a, f"np.{ufunc.__name__}.at")
    key = expand_masks(a, indices if isinstance(indices, tuple) else (indices,))  # (a constant mask: its nonzero indices)
    if any(map(is_traced_mask, key)) or a.dtype == np.bool_:
        raise fail(UnsupportedError, f"np.{ufunc.__name__}.at with a traced boolean mask or into a bool array is not supported")
    given = (b._weak(0) if b._weak else b.dtype) if isinstance(b, Tracer) else b if type(b) in (int, float, bool) else np.asarray(b).dtype
    dtype = np.result_type(a.dtype, given)
    if not np.can_cast(dtype, a.dtype, "same_kind"):
        raise fail(TracingError, f"Cannot cast ufunc '{ufunc.__name__}' output from {dtype!r} to {a.dtype!r} with casting rule 'same_kind'")

    def accumulate(x: Tracer, k: Any, v: Tracer) -> Tracer:
        row = math.prod(x.shape[1:])
        k = as_tracer(x._trace, k) if isinstance(k, np.ndarray) else k
        flat = reshape(reshape(k, (-1, 1)) * row + np.arange(row), (-1,))
        total = reshape(scatter_add(flat, reshape(v, (-1,)), x.size), x.shape)
        return x + total if ufunc.__name__ == "add" else x - total

    write_indexed(a, key, b, accumulate)


@implements("histogram_bin_edges")
def histogram_bin_edges(a: Any, bins: Any = 10, range: Any = None, weights: Any = None) -> Any:
    """np.histogram's edges for static bins: NumPy's own (a constant; the data only sets their dtype), or of the
    data's range (an int count without a range)."""
    x = reshape(as_tracer(trace_of([a]), a), (-1,))
    return _edges(x, bins, range)[0]
