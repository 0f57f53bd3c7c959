"""Arrays assembled from others at trace time: append, delete (static indices), meshgrid; views,
concatenations and broadcasts the optimizer fuses into their readers, no op of their own."""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

from ..errors import IndexOutOfBoundsError, TracingError, UnsupportedError
from .core import IMPLEMENTATIONS, Tracer, as_array, as_tracer, fail, implements, normalize_axis, trace_of
from .creation import replace_while_tracing
from .rearrange import take_static
from .shapes import broadcast_to, concatenate, reshape


def _array(trace: Any, v: Any) -> Tracer:
    """v as NumPy's functions read it with np.asarray: a Python number is a default-dtype array, not weak."""
    return as_array(trace, v)


def _along(name: str, a: Tracer, obj: Any, axis: Any) -> tuple[Tracer, int]:
    """delete's and insert's array and axis (None: the flattened array's), with indices `obj` known while tracing."""
    if isinstance(obj, Tracer):
        raise fail(UnsupportedError, f"np.{name}: the indices must be known while tracing (an int, slice or list), not a traced array")
    if axis is None:
        return reshape(a, (-1,)), 0
    return a, normalize_axis(a.ndim, axis)


@implements("append")
def append(arr: Any, values: Any, axis: Any = None) -> Tracer:
    """values joined after arr along `axis` (None: both flattened)."""
    trace = trace_of([arr, values])
    a, v = _array(trace, arr), _array(trace, values)
    if axis is None:
        return concatenate([reshape(a, (-1,)), reshape(v, (-1,))], 0)
    return concatenate([a, v], axis)


@implements("delete")
def delete(arr: Any, obj: Any, axis: Any = None) -> Tracer:
    """arr without the entries `obj` (an int, slice or list of ints known while tracing) along `axis`
    (None: of the flattened array): the kept entries taken as views."""
    a, ax = _along("delete", _array(trace_of([arr]), arr), obj, axis)
    n = a.shape[ax]
    if isinstance(obj, (int, np.integer)) and not -n <= operator.index(obj) < n:
        raise fail(TracingError, f"index {obj} is out of bounds for axis {ax} with size {n}")
    kept = np.delete(np.arange(n), obj)
    return take_static(a, kept.tolist(), ax)


@implements("meshgrid")
def meshgrid(*xi: Any, copy: bool = True, sparse: bool = False, indexing: str = "xy") -> tuple[Tracer, ...]:
    """Coordinate arrays: each input flattened along its own axis (the first two swapped for 'xy'), broadcast to
    the full grid unless `sparse`."""
    if indexing not in ("xy", "ij"):
        raise fail(TracingError, "Valid values for `indexing` are 'xy' and 'ij'.")
    trace = trace_of(list(xi))
    axes = [reshape(_array(trace, x), (-1,)) for x in xi]
    ndim = len(axes)
    out = []
    for i, x in enumerate(axes):
        at = (1 - i if i < 2 else i) if indexing == "xy" and ndim > 1 else i
        out.append(reshape(x, tuple(-1 if j == at else 1 for j in range(ndim))))
    if not sparse:
        shape = np.broadcast_shapes(*(x.shape for x in out))
        out = [broadcast_to(x, shape) for x in out]
    return tuple(out)


def _depth(arrays: Any) -> int:
    """How deeply np.block's lists nest (tuples are refused, as NumPy refuses them)."""
    if isinstance(arrays, tuple):
        raise fail(TracingError, "arrays is a tuple. Only lists can be used to arrange blocks, and np.block does not allow implicit conversion from tuple to ndarray.")
    if not isinstance(arrays, list):
        return 0
    if not arrays:
        raise fail(TracingError, "List at arrays cannot be empty")
    depths = {_depth(a) for a in arrays}
    if len(depths) != 1:
        raise fail(TracingError, "List depths are mismatched")
    return 1 + depths.pop()


def _leaves(x: Any) -> list[Any]:
    """The blocks of np.block's nested lists, in order."""
    return [leaf for e in x for leaf in _leaves(e)] if isinstance(x, list) else [x]


@implements("block")
def block(arrays: Any) -> Tracer:
    """Nested lists of blocks joined as NumPy's block: the innermost lists along the last axis, each outer
    level along the axis before; blocks first given leading 1s up to the result's rank."""
    depth = _depth(arrays)
    blocks = _leaves(arrays)
    trace = trace_of(blocks)
    ndim = max(depth, *(_array(trace, v).ndim for v in blocks))

    def join(x: Any, level: int) -> Tracer:
        if not isinstance(x, list):
            a = _array(trace, x)
            return reshape(a, (1,) * (ndim - a.ndim) + a.shape)
        return concatenate([join(e, level + 1) for e in x], level - depth + ndim)

    return join(arrays, 0)


@implements("insert")
def insert(arr: Any, obj: Any, values: Any, axis: Any = None) -> Tracer:
    """values put before the entries `obj` (an int, slice, or list of ints or bools known while tracing) along
    `axis` (None: of the flattened array), cast to arr's dtype and broadcast as NumPy's insert does: views joined."""
    trace = trace_of([arr, values])
    a, ax = _along("insert", _array(trace, arr), obj, axis)
    n = a.shape[ax]
    indices = np.arange(*obj.indices(n)) if isinstance(obj, slice) else np.array(obj)
    if indices.dtype == bool:
        indices = np.flatnonzero(indices)
    v = _array(trace, values).astype(a.dtype.name)
    if indices.size == 1:
        index = int(indices.item())
        if not -n <= index <= n:
            raise fail(IndexOutOfBoundsError, f"index {obj} is out of bounds for axis {ax} with size {n}")
        index += n if index < 0 else 0
        v = reshape(v, (1,) * (a.ndim - v.ndim) + v.shape)
        if indices.ndim == 0:  # a scalar index: values' first axis goes to `axis`, as NumPy's
            v = IMPLEMENTATIONS["moveaxis"](v, 0, ax)
        v = broadcast_to(v, tuple(v.shape[ax] if i == ax else d for i, d in enumerate(a.shape)))
        return concatenate([take_static(a, range(index), ax), v, take_static(a, range(index, n), ax)], ax)
    indices = np.where(indices < 0, indices + n, indices).astype(np.intp)
    order = indices.argsort(kind="mergesort")
    indices[order] += np.arange(indices.size)
    v = broadcast_to(v, tuple(indices.size if i == ax else d for i, d in enumerate(a.shape)))
    source = np.empty(n + indices.size, np.intp)
    old = np.ones(n + indices.size, bool)
    old[indices] = False
    source[old], source[indices] = np.arange(n), n + np.arange(indices.size)
    return take_static(concatenate([a, v], ax), source.tolist(), ax)


class _Concatenator:
    """np.r_ / np.c_ while tracing: NumPy's own converts each item with np.array, which a traced array cannot
    take; with a traced item, each item made an array of at least `ndmin` dims as NumPy's (a 1-D one a column
    for np.c_), Python numbers weak, joined along `axis`. Without one, NumPy's own."""

    def __init__(self, numpy: Any, axis: int, ndmin: int) -> None:
        self.numpy, self.axis, self.ndmin = numpy, axis, ndmin

    def __getitem__(self, key: Any) -> Any:
        items = key if isinstance(key, tuple) else (key,)
        if not any(isinstance(k, Tracer) for k in items):
            return self.numpy[key]
        name = "r_" if self.ndmin == 1 else "c_"
        if any(isinstance(k, str) for k in items):
            raise fail(UnsupportedError, f"np.{name} with a string directive and traced arrays is not supported; use np.concatenate")
        trace = trace_of(list(items))
        parts = []
        for k in items:
            if isinstance(k, slice):
                k = self.numpy[k]
            v = as_tracer(trace, k) if isinstance(k, Tracer) or type(k) in (int, float, bool) else _array(trace, k)
            if v.ndim < self.ndmin:  # r_: (1,); c_: a 1-D (n,) as (n, 1), 0-d as (1, 1)
                v = reshape(v, v.shape + (1,) * (self.ndmin - v.ndim) if v.ndim else (1,) * self.ndmin)
            parts.append(v)
        return concatenate(parts, self.axis)


replace_while_tracing("r_", _Concatenator(np.r_, 0, 1))
replace_while_tracing("c_", _Concatenator(np.c_, -1, 2))
