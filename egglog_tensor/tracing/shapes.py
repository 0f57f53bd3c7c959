"""Shapes and views: reshape, transpose, broadcasting, basic indexing, diagonal, concatenate and stack
(views where the op is an index map: they fuse into their readers)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..errors import TracingError, UnsupportedError
from ..ops import is_unit_reshape
from .core import (IMPLEMENTATIONS, Tracer, as_tracer, base_of, box_of, derived, dtype_key, dtype_name, fail, implements, lift, memory,
                   normalize_axes, normalize_axis, result, trace_of, view)


def in_memory_order(x: Tracer, order: str) -> tuple[Tracer, str]:
    """(x, "C" or "F") reading x's elements in `order` as NumPy's ravel does: "A" is F for an F-contiguous x, else C;
    "K" is x's memory order (its axes by decreasing |stride|, an axis of negative stride read as it runs: a
    transpose of x read in C order). UnsupportedError where the trace does not know x's layout (a strided argument)."""
    if order in ("C", "F"):
        return x, order
    if order not in ("A", "K"):
        raise fail(TracingError, f"order must be one of 'C', 'F', 'A', or 'K' (got {order!r})")
    stand_in = memory(x)
    if stand_in is None:
        raise fail(UnsupportedError, f"order={order!r}: the memory layout of this array is not known here (a strided argument, or "
                                     "a result NumPy lays out as its inputs); pass order='C' or 'F'")
    if stand_in.flags.c_contiguous or (order == "A" and not stand_in.flags.f_contiguous):
        return x, "C"
    if stand_in.flags.f_contiguous:
        return x, "F"
    strides = stand_in.strides
    return transpose(x, sorted(range(x.ndim), key=lambda d: -abs(strides[d]))), "C"


def reshape(x: Any, shape: Any, order: str = "C") -> Tracer:
    x = as_tracer(trace_of([x]), x)
    if order == "K":
        raise fail(TracingError, "order 'K' is not permitted for reshaping")
    x, order = in_memory_order(x, order)
    shape = tuple(int(s) for s in (shape if isinstance(shape, (tuple, list)) else (shape,)))
    if shape.count(-1) > 1:
        raise fail(TracingError, f"reshape {shape}: can only specify one unknown dimension")
    if -1 in shape:
        known = math.prod(s for s in shape if s != -1)
        if known == 0 or x.size % known:
            raise fail(TracingError, f"cannot reshape array of size {x.size} into shape {shape}")
        shape = tuple(x.size // known if s == -1 else s for s in shape)
    if math.prod(shape) != x.size or any(s < 0 for s in shape):
        raise fail(TracingError, f"cannot reshape array of size {x.size} into shape {shape}")
    if order == "F" and (x.ndim > 1 or len(shape) > 1):  # the reversed axes reshaped in C order
        return transpose(reshape(transpose(x), shape[::-1]))
    if shape == x.shape:
        return x
    if is_unit_reshape(x.shape, shape):
        return derived(x, "reshape", (shape,), box_of(x))
    stand_in = memory(x)
    if stand_in is None:
        out = result(x._trace, x._trace.make("reshape", (x._node,), (shape,)), x._weak)
        # NumPy's reshape is a view or a copy by memory layout, unknown here: writes into either would diverge from it.
        out._frozen = base_of(x)._frozen = ("it was reshaped, and NumPy's reshape shares memory with its input or not depending "
                                            "on its layout (unknown here: a strided argument, or a result NumPy lays out as its inputs)")
        return out
    try:
        np.reshape(stand_in, shape, copy=False)
    except ValueError:  # NumPy copies: an array of its own, in C order
        out = result(x._trace, x._trace.make("reshape", (x._node,), (shape,)), x._weak)
        out._order = "C"
        return out
    return derived(x, "reshape", (shape,), None)  # a view: writes into it reach x's base (updates.py)


def transpose(x: Any, axes: Any = None) -> Tracer:
    x = as_tracer(trace_of([x]), x)
    perm = tuple(reversed(range(x.ndim))) if axes is None else tuple(normalize_axis(x.ndim, a) for a in axes)
    if sorted(perm) != list(range(x.ndim)):
        raise fail(TracingError, f"transpose axes {axes!r} are not a permutation of {x.ndim} dims")
    if perm == tuple(range(x.ndim)):
        return x
    return view(x, "transpose", (perm,))


@implements("swapaxes")
def swapaxes(a: Any, axis1: int, axis2: int) -> Tracer:
    x = as_tracer(trace_of([a]), a)
    perm = list(range(x.ndim))
    i, j = normalize_axis(x.ndim, axis1), normalize_axis(x.ndim, axis2)
    perm[i], perm[j] = perm[j], perm[i]
    return transpose(x, perm)


@implements("broadcast_to")
def broadcast_to(array: Any, shape: Any, subok: bool = False) -> Tracer:
    x = as_tracer(trace_of([array]), array)
    shape = tuple(int(s) for s in (shape if isinstance(shape, (tuple, list)) else (shape,)))
    ok = len(shape) >= x.ndim and all(d in (1, s) for d, s in zip(x.shape, shape[len(shape) - x.ndim :], strict=True))
    if not ok:
        raise fail(TracingError, f"cannot broadcast shape {x.shape} to {shape}")
    return x if shape == x.shape else view(x, "broadcast_to", (shape,))


@implements("expand_dims")
def expand_dims(a: Any, axis: Any) -> Tracer:
    x = as_tracer(trace_of([a]), a)
    axes = axis if isinstance(axis, (tuple, list)) else (axis,)
    ndim = x.ndim + len(axes)
    positions = sorted(normalize_axis(ndim, a) for a in axes)
    dims = iter(x.shape)
    return reshape(x, tuple(1 if i in positions else next(dims) for i in range(ndim)))


@implements("squeeze")
def squeeze(a: Any, axis: Any = None) -> Tracer:
    x = as_tracer(trace_of([a]), a)
    axes = tuple(i for i, d in enumerate(x.shape) if d == 1) if axis is None else normalize_axes(x.ndim, axis)
    if any(x.shape[a] != 1 for a in axes):
        raise fail(TracingError, "cannot select an axis to squeeze out which has size not equal to one")
    return reshape(x, tuple(d for i, d in enumerate(x.shape) if i not in axes))


@implements("getitem")
def getitem(x: Tracer, key: Any) -> Tracer:
    """Basic indexing: a view, or for an integer per dim, NumPy's scalar: a copy."""
    out = basic_index(x, key)
    key = key if isinstance(key, tuple) else (key,)
    scalar = len(key) == x.ndim and all(isinstance(k, (int, np.integer)) for k in key)
    return result(x._trace, out._node, out._weak) if scalar else out


def basic_index(x: Tracer, key: Any) -> Tracer:
    """Basic indexing (ints, slices with steps, None, ...) as a slice view plus a unit reshape."""
    key = key if isinstance(key, tuple) else (key,)
    if any(isinstance(k, (Tracer, np.ndarray, list, tuple, range, bool, np.bool_)) for k in key):
        return IMPLEMENTATIONS["getitem.advanced"](x, key)  # tracing/indexing.py
    for k in key:
        if not (k is None or k is Ellipsis or isinstance(k, (slice, int, np.integer))):
            raise fail(UnsupportedError, f"indexing with {type(k).__name__} (advanced indexing) is not supported")
    n_real = sum(1 for k in key if k is not None and k is not Ellipsis)
    if n_real > x.ndim:
        raise fail(TracingError, f"too many indices for array: array is {x.ndim}-dimensional, but {n_real} were indexed")
    if sum(1 for k in key if k is Ellipsis) > 1:
        raise fail(TracingError, "an index can only have a single ellipsis ('...')")
    if Ellipsis in key:
        i = key.index(Ellipsis)
        key = key[:i] + (slice(None),) * (x.ndim - n_real) + key[i + 1 :]
    else:
        key = key + (slice(None),) * (x.ndim - n_real)
    start, step, size, out_shape = [], [], [], []
    dim = 0
    for k in key:
        if k is None:
            out_shape.append(1)
            continue
        n = x.shape[dim]
        if isinstance(k, slice):
            r = range(*k.indices(n))
            start.append(r.start if len(r) else 0)
            step.append(r.step)
            size.append(len(r))
            out_shape.append(len(r))
        else:
            if not -n <= k < n:
                raise fail(TracingError, f"index {k} is out of bounds for axis {dim} with size {n}")
            start.append(int(k) % n)
            step.append(1)
            size.append(1)
        dim += 1
    sliced = x
    if tuple(size) != x.shape or any(s != 0 for s in start) or any(s != 1 for s in step):
        sliced = view(x, "slice", (tuple(start), tuple(step), tuple(size)))
    return reshape(sliced, tuple(out_shape))


@implements("diagonal")
def diagonal(a: Any, offset: int = 0, axis1: int = 0, axis2: int = 1) -> Tracer:
    x = as_tracer(trace_of([a]), a)
    if x.ndim < 2:
        raise fail(TracingError, "diag requires an array of at least two dimensions")
    a1, a2 = normalize_axis(x.ndim, axis1, "axis1"), normalize_axis(x.ndim, axis2, "axis2")
    if a1 == a2:
        raise fail(TracingError, "axis1 and axis2 cannot be the same")
    return view(x, "diagonal", (int(offset), a1, a2))


@implements("concatenate")
def concatenate(arrays: Sequence[Any], axis: Any = 0, out: Any = None, dtype: Any = None, casting: str = "same_kind") -> Tracer:
    if out is not None:
        raise fail(UnsupportedError, "np.concatenate(out=...) is not supported")
    trace = trace_of(arrays)
    parts = [as_tracer(trace, a) for a in arrays]
    if axis is None:
        parts = [reshape(p, (-1,)) for p in parts]
        axis = 0
    if not parts:
        raise fail(TracingError, "need at least one array to concatenate")
    target = dtype_name(dtype) if dtype is not None else np.result_type(*[dtype_key(p) if not p._weak else p._weak(0) for p in parts]).name
    ndim = parts[0].ndim
    if ndim == 0:
        raise fail(TracingError, "zero-dimensional arrays cannot be concatenated")
    ax = normalize_axis(ndim, axis)
    for p in parts:
        if p.ndim != ndim or any(d != e for i, (d, e) in enumerate(zip(p.shape, parts[0].shape)) if i != ax):
            raise fail(TracingError, f"concatenate: shapes {[q.shape for q in parts]} differ outside axis {ax}")
    nodes = tuple(lift(trace, p, target) for p in parts)
    if len(nodes) == 1:
        return result(trace, nodes[0])
    return result(trace, trace.make("concat", nodes, (ax,)))


@implements("stack")
def stack(arrays: Sequence[Any], axis: int = 0, out: Any = None, dtype: Any = None, casting: str = "same_kind") -> Tracer:
    trace = trace_of(arrays)
    parts = [as_tracer(trace, a) for a in arrays]
    if not parts or any(p.shape != parts[0].shape for p in parts):
        raise fail(TracingError, "all input arrays must have the same shape")
    ax = normalize_axis(parts[0].ndim + 1, axis)
    return concatenate([expand_dims(p, ax) for p in parts], ax, out, dtype)




@implements("shape")
def shape(a: Any) -> tuple[int, ...]:
    return tuple(np.shape(a)) if not isinstance(a, Tracer) else a.shape



@implements("ndim")
def ndim(a: Any) -> int:
    return a.ndim if isinstance(a, Tracer) else np.ndim(a)


@implements("size")
def size(a: Any, axis: Any = None) -> int:
    """The number of elements (of one axis, or of several as NumPy 2.4's), a static int."""
    if axis is None:
        return a.size
    return math.prod(a.shape[i] for i in normalize_axes(a.ndim, axis if isinstance(axis, tuple) else (axis,)))


@implements("reshape")
def reshape_fn(a: Any, shape: Any = None, order: str = "C", **kw: Any) -> Tracer:
    """np.reshape (NumPy < 2.1 spelled `shape` as `newshape`)."""
    return reshape(a, shape if shape is not None else kw.get("newshape"), order)


@implements("ravel")
def ravel(a: Any, order: str = "C") -> Tracer:
    x, order = in_memory_order(as_tracer(trace_of([a]), a), order)
    return reshape(x, (-1,), order)


implements("in_memory_order")(in_memory_order)


@implements("transpose")
def transpose_fn(a: Any, axes: Any = None) -> Tracer:
    return transpose(a, axes)

