"""In-place updates of the arrays a kernel owns: `B[1:-1] = v`, `B[i] += v`, `B[mask] = v`, `x += y`,
`np.put_along_axis`.

Each is traced as a functional update that rebinds the written array (a strided box replaced:
`update_slice`; a mask: `where`); the views taken of it follow (core.derived), as NumPy's views
see writes into their base. A written argument is recorded (Trace.written): its final value is a
hidden output the call copies into the caller's array, as NumPy would have changed it.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..errors import TracingError, UnsupportedError
from ..graph import Node
from .core import Trace, Tracer, as_tracer, base_of, box_of, fail, implements, lift, normalize_axis, result, trace_of
from .indexing import gather_along, valid_indices
from .shapes import basic_index, broadcast_to, reshape


@implements("setitem")
def setitem(x: Tracer, key: Any, value: Any) -> None:
    """`x[key] = value`: basic indices write a box of x, a boolean mask (after full slices) selects where."""
    key = key if isinstance(key, tuple) else (key,)
    arrays = [i for i, k in enumerate(key) if isinstance(k, (Tracer, np.ndarray, list))]
    if not arrays:
        store(basic_index(x, key), value)
        return
    (at,) = arrays if len(arrays) == 1 else (None,)
    mask = key[at] if at is not None else None
    if not (is_mask(mask) and all(k == slice(None) for i, k in enumerate(key) if i != at)):
        raise fail(UnsupportedError, "assignment through an index array, or a mask with other indices than full slices "
                                     "(x[idx] = v, x[m, 1:] = v), is not supported; use slices, a boolean mask, or np.where")
    store(x, masked(x, at, mask, value))


@implements("copy")
def copy(a: Any, order: str = "K", subok: bool = False) -> Tracer:
    """`np.copy(a)` / `a.copy()`: an array of its own, which the kernel may write into."""
    x = as_tracer(trace_of([a]), a)
    return result(x._trace, x._node, x._weak)


def is_mask(k: Any) -> bool:
    """Whether index `k` is a boolean array (a mask)."""
    return isinstance(k, (Tracer, np.ndarray)) and k.dtype == np.bool_ and np.ndim(k) > 0


def store(target: Tracer, value: Any) -> None:
    """`target[...] = value`: value broadcast to target's shape and cast as NumPy assigns, written
    into the array target is (or views): that array is rebound to its updated value."""
    writable(target)
    node = assigned(target._trace, value, target.shape, target._node.dtype)
    start, step, size = box_of(target)
    base = base_of(target)
    if 0 in size or node is target._node:
        return
    trace = target._trace
    part = node if node.shape == size else trace.make("reshape", (node,), (size,))
    if any(k < 0 for k in step):  # a box walked backwards: the value reversed into the box walked forwards
        part = trace.make("slice", (part,), (tuple(n - 1 if k < 0 else 0 for k, n in zip(step, size)),
                                             tuple(-1 if k < 0 else 1 for k in step), size))
        start = tuple(a + k * (n - 1) if k < 0 else a for a, k, n in zip(start, step, size))
        step = tuple(abs(k) for k in step)
    whole = size == base.shape and not any(start) and all(k == 1 for k in step)
    base._own = part if whole else trace.make("update_slice", (base._node, part), (start, step, size))
    if base._view and not any(w is base for w in trace.written):
        trace.written.append(base)


def writable(target: Tracer) -> None:
    """Refuse writes NumPy would refuse (a Python number, a transposed or broadcast view), or that this trace cannot follow."""
    base = base_of(target)
    if base._view and base._weak is not None:
        raise fail(TracingError, "a Python number argument cannot be written into (only rebound: n = n + 1)")
    reason = target._frozen or base._frozen
    if reason:
        raise fail(UnsupportedError, f"writing into this array is not supported: {reason}; write into a copy (x.copy())")
    if box_of(target) is None:
        raise fail(UnsupportedError, "writing into a transposed, broadcast or diagonal view is not supported; "
                                     "write into the array it views, through slices")


def assigned(trace: Trace, value: Any, shape: tuple[int, ...], dtype: str) -> Node:
    """The node of `value` as NumPy assigns it into an array of `shape` and `dtype`: broadcast (extra
    leading unit dims dropped), cast unsafely (a Python int must fit an integer dtype)."""
    if not isinstance(value, Tracer) and np.ndim(value) == 0:  # a Python int stays exact: trace.const checks its range
        value = result(trace, lift(trace, value if type(value) is int and np.dtype(dtype).kind in "iu" else np.asarray(value).astype(dtype), dtype))
    v = as_tracer(trace, value)
    while v.ndim > len(shape) and v.shape[0] == 1:
        v = reshape(v, v.shape[1:])
    if v.ndim > len(shape) or any(d not in (1, n) for d, n in zip(reversed(v.shape), reversed(shape))):
        raise fail(TracingError, f"could not broadcast input array from shape {v.shape} into shape {shape}")
    return lift(trace, broadcast_to(v, shape), dtype)


def masked(x: Tracer, at: int, mask: Any, value: Any) -> Tracer:
    """x with `value` where `mask`, over x's dims from `at` on, is True: np.where(mask, value, x)."""
    trace = x._trace
    m = as_tracer(trace, mask)
    if at + m.ndim > x.ndim:
        raise fail(TracingError, f"too many indices for array: array is {x.ndim}-dimensional, but {at + m.ndim} were indexed")
    for axis, (k, n) in enumerate(zip(m.shape, x.shape[at:]), start=at):
        if k != n:
            raise fail(TracingError, f"boolean index did not match indexed array along axis {axis}; "
                                     f"size of axis is {n} but size of corresponding boolean axis is {k}")
    lead, rest = x.shape[:at], x.shape[at + m.ndim:]
    shape = np.shape(value) if not isinstance(value, Tracer) else value.shape
    count = len(shape) - len(rest) - 1  # the value's dim matching the True elements' count, if it has one
    if 0 <= count and math.prod(shape[: count + 1]) != 1 and shape[count] != 1:
        raise fail(UnsupportedError,
                   f"assigning an array of shape {shape} to a boolean-masked selection needs one value per True "
                   "element, a count known only at run time; use np.where(mask, values, x)")
    v = assigned(trace, value, lead + (1,) + rest, x._node.dtype)
    v = trace.make("reshape", (v,), (lead + (1,) * m.ndim + rest,))
    cond = reshape(m, (1,) * at + m.shape + (1,) * len(rest))._node
    return result(trace, trace.make("where", (cond, v, x._node)))


@implements("put_along_axis")
def put_along_axis(arr: Any, indices: Any, values: Any, axis: Any) -> None:
    """np.put_along_axis: arr's elements at `indices` along `axis` (None: of the flattened array) set
    to `values` broadcast to the indices' shape, a functional update of arr: each position along the
    axis takes the last value NumPy writes to it (the largest index j with indices[j] == position)."""
    if not isinstance(arr, Tracer):
        raise fail(UnsupportedError, "np.put_along_axis into an array the kernel did not receive or make "
                                     "is not supported; pass it as an argument or write into a copy")
    trace = arr._trace
    x = result(trace, arr._node, arr._weak)  # arr's value (a reshape of arr itself would freeze it against writes)
    x, ax = (reshape(x, (-1,)), 0) if axis is None else (x, normalize_axis(arr.ndim, axis))
    if np.ndim(indices) != x.ndim:
        raise fail(TracingError, "`indices` and `arr` must have the same number of dimensions")
    k = valid_indices(trace, indices, x.shape[ax], ax)
    try:
        shape = tuple(np.broadcast_shapes(x.shape[:ax] + (1,) + x.shape[ax + 1:], k.shape[:ax] + (1,) + k.shape[ax + 1:]))
    except ValueError:
        raise fail(TracingError, f"put_along_axis: shapes {x.shape} and {k.shape} do not broadcast outside axis {ax}") from None
    if shape[:ax] + shape[ax + 1:] != x.shape[:ax] + x.shape[ax + 1:]:
        raise fail(UnsupportedError, f"np.put_along_axis: indices of shape {k.shape} reach past arr's shape {x.shape} "
                                     "outside the axis (NumPy writes each element several times)")
    shape = shape[:ax] + (k.shape[ax],) + shape[ax + 1:]
    v = result(trace, assigned(trace, values, shape, x._node.dtype))
    n, count = x.shape[ax], shape[ax]
    if not count or not x.size:
        return
    k = np.moveaxis(broadcast_to(k, shape).astype("int64"), ax, -1)
    hits = np.expand_dims(k, -2) == np.arange(n).reshape(n, 1)  # (..., n, count): position p written by index j
    last = np.max(np.where(hits, np.arange(count), -1), axis=-1)  # the last j writing p, -1: none
    written = gather_along(np.moveaxis(v, ax, -1), np.maximum(last, 0), x.ndim - 1)
    updated = np.moveaxis(np.where(last >= 0, written, np.moveaxis(x, ax, -1)), -1, ax)
    store(arr, reshape(updated, arr.shape))
