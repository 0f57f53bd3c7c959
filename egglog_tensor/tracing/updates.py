"""In-place updates of the arrays a kernel owns: `B[1:-1] = v`, `B[i] += v`, `B[mask] = v`, `x += y`,
`np.put_along_axis`.

Each is traced as a functional update that rebinds the written array (a strided box replaced:
`update_slice`; a mask: `where`); the views taken of it follow (core.derived), as NumPy's views
see writes into their base. A written argument is recorded (Trace.written): its final value is a
hidden output the call copies into the caller's array, as NumPy would have changed it.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from ..errors import DataValueError, IndexOutOfBoundsError, TracingError, UnsupportedError
from ..graph import Node
from .core import Box, Trace, Tracer, as_array, as_tracer, base_of, box_of, check_at_run_time, fail, implements, lift, memory_order, normalize_axis, result, trace_of
from .indexing import expand_key, expand_masks, flat_index, gather_along, indices_apart, is_traced_mask, valid_indices
from .selections import Selection, check_mask, mask_view, masked_value
from .shapes import basic_index, broadcast_to, reshape, transpose


@implements("setitem")
def setitem(x: Tracer, key: Any, value: Any) -> None:
    """`x[key] = value`: basic indices write a box of x, a boolean mask (after full slices) selects where; a 0-d
    traced boolean (`r[r_is_constant] = nan` on a 0-d r, as array-api-extra's `at(...).set` writes) all of x or none."""
    if isinstance(key, Tracer) and key.dtype == np.bool_ and key.ndim == 0:
        store(basic_index(x, ()), np.reshape(np.where(key, value, x), x.shape))
        return
    key = expand_masks(x, key if isinstance(key, tuple) else (key,))  # (constant masks: their nonzero indices, as NumPy reads them)
    arrays = [i for i, k in enumerate(key) if isinstance(k, (Tracer, np.ndarray, list))]
    if not arrays:
        store(basic_index(x, key), value)
        return
    (at,) = arrays if len(arrays) == 1 else (None,)
    mask = key[at] if at is not None and is_traced_mask(key[at]) else None
    view = mask_view(x, key, mask) if mask is not None else None
    if view is not None:
        target, start = view
        if isinstance(value, Selection):  # x[m] = x[m] * 2, x[m, 0] += 1: the selection's value where the mask is
            if value.mask._node is not mask._node or value.at != start:
                raise fail(UnsupportedError, "storing a mask selection through another mask (x[m1] = y[m2]) is not supported; use np.where")
            store(target, masked_value(target, value))
            return
        store(target, masked(target, start, mask, value))
        return
    if mask is not None or any(k is None for k in key):
        raise fail(UnsupportedError, "assignment through a traced mask with None beside it, or an int apart from it "
                                     "(x[m, None] = v, x[0, :, m] = v) is not supported; use np.where")
    write_indexed(x, key, value)


def write_indexed(x: Tracer, key: tuple, value: Any, combine: Callable[[Tracer, Any, Tracer], Tracer] | None = None) -> None:
    """`x[key] = value` with integer index arrays (ints, slices): into the view of x's slices, `indexed` of it."""
    apart = indices_apart(key)
    key = expand_key(x, key)
    target = basic_index(x, tuple(k if isinstance(k, slice) else slice(None) for k in key))
    store(target, indexed(target, tuple(slice(None) if isinstance(k, slice) else k for k in key), value, combine, apart))


def indexed(x: Tracer, key: tuple, value: Any, combine: Callable[[Tracer, Any, Tracer], Tracer] | None = None,
            apart: bool = False) -> Tracer:
    """x's value after `x[key] = value` with integer index arrays and full slices: value broadcast to `x[key]`'s
    shape, each indexed element set to the last value NumPy writes to it; or `combine(x, k, v)` of x with its
    indexed dims merged into axis 0, the flat indices k (K,) and the values v (K, ...) (np.add.at: scatter.py);
    `apart`: the key as written had its advanced entries apart, so x[key] has the indices' dims first."""
    trace = x._trace
    adv = [d for d, k in enumerate(key) if not isinstance(k, slice)]
    rest = [d for d in range(x.ndim) if d not in adv]
    shape = tuple(np.broadcast_shapes(*(np.shape(key[d]) if not isinstance(key[d], Tracer) else key[d].shape for d in adv)))
    sizes, kept = [x.shape[d] for d in adv], tuple(x.shape[d] for d in rest)
    at = adv[0] if not apart and adv == list(range(adv[0], adv[-1] + 1)) else 0  # where NumPy puts the indices' dims in x[key]
    v = result(trace, assigned(trace, value, kept[:at] + shape + kept[at:], x._node.dtype))
    v = transpose(v, [*range(at, at + len(shape)), *range(at), *range(at + len(shape), v.ndim)])
    v = reshape(v, (math.prod(shape),) + kept)
    flat = flat_index([key[d] for d in adv], sizes, shape, adv)
    value_of_x = reshape(transpose(result(trace, x._node), adv + rest), (math.prod(sizes),) + kept)
    updated = (combine or last_writes)(value_of_x, np.ravel(flat) if isinstance(flat, np.ndarray) else reshape(flat, (-1,)), v)
    return transpose(reshape(updated, tuple(sizes) + kept), np.argsort(adv + rest).tolist())


def last_writes(x: Tracer, k: Any, v: Tracer) -> Tracer:
    """x with x[k[j]] = v[j] along axis 0 for each j in turn (the last write to an element wins), k valid int64
    indices: a constant k by a map of the writer of each position made now, a traced one by comparing each of
    the n positions with the K indices (n x K work)."""
    n, count = x.shape[0], v.shape[0]
    if not count or not x.size:
        return x
    if isinstance(k, np.ndarray):
        last = np.full(n, -1, np.int64)
        last[k] = np.arange(count)
    else:
        last = last_writer(k, n)
    at = reshape(as_tracer(x._trace, last) if isinstance(last, np.ndarray) else last, (n,) + (1,) * (x.ndim - 1))
    written = gather_along(v, broadcast_to(np.maximum(at, 0), x.shape), 0)
    return np.where(at >= 0, written, x)


@implements("copy")
def copy(a: Any, order: str = "K", subok: bool = False) -> Tracer:
    """`np.copy(a)` / `a.copy()`: an array of its own, which the kernel may write into."""
    x = as_tracer(trace_of([a]), a)
    out = result(x._trace, x._node, x._weak)
    out._order = memory_order(x, order)
    return out


def require_traced(target: Any, name: str) -> None:
    """UnsupportedError unless `target`, which `name` writes into, is an array of the trace (an argument or made in the kernel)."""
    if not isinstance(target, Tracer):
        raise fail(UnsupportedError, f"{name} into an array the kernel did not receive or make is not supported; "
                                     "pass it as an argument or write into a copy")


def store(target: Tracer, value: Any) -> None:
    """`target[...] = value`: value broadcast to target's shape and cast as NumPy assigns, written
    into the array target is (or views): that array is rebound to its updated value."""
    writable(target)
    node = assigned(target._trace, value, target.shape, target._node.dtype)
    base, box = base_of(target), box_of(target)
    if not target.size or node is target._node:
        return
    trace = target._trace
    base._own = boxed(trace, base._node, node, box) if box is not None else written_back(trace, base._node, target._steps, node)
    if base._view and not any(w is base for w in trace.written):
        trace.written.append(base)


def boxed(trace: Trace, whole: Node, part: Node, box: Box) -> Node:
    """`whole` with the strided box `box` (start, step, size per dim) replaced by `part` (any shape of that size)."""
    start, step, size = box
    part = part if part.shape == size else trace.make("reshape", (part,), (size,))
    if any(k < 0 for k in step):  # a box walked backwards: the value reversed into the box walked forwards
        part = trace.make("slice", (part,), (tuple(n - 1 if k < 0 else 0 for k, n in zip(step, size)),
                                             tuple(-1 if k < 0 else 1 for k in step), size))
        start = tuple(a + k * (n - 1) if k < 0 else a for a, k, n in zip(start, step, size))
        step = tuple(abs(k) for k in step)
    if size == whole.shape and not any(start) and all(k == 1 for k in step):
        return part
    return trace.make("update_slice", (whole, part), (start, step, size))


def written_back(trace: Trace, base: Node, steps: tuple[tuple[str, tuple], ...], value: Node) -> Node:
    """`base` with the view of it that `steps` (transposes, reshapes, bitcasts, slices) make replaced by `value`: each step undone
    from the last, a slice as the box it replaces in its input."""
    inputs = [base]
    for op, attrs in steps[:-1]:
        inputs.append(trace.make(op, (inputs[-1],), attrs))
    for (op, attrs), source in zip(reversed(steps), reversed(inputs), strict=True):
        if op == "transpose":
            value = trace.make("transpose", (value,), (tuple(np.argsort(attrs[0]).tolist()),))
        elif op == "reshape":
            value = trace.make("reshape", (value,), (source.shape,))
        elif op == "bitcast":
            value = trace.make("bitcast", (value,), (source.dtype,))
        else:
            value = boxed(trace, source, value, attrs)
    return value


def writable(target: Tracer) -> None:
    """Refuse writes NumPy would refuse (a Python number, a broadcast or diagonal view), or that this trace cannot follow."""
    base = base_of(target)
    if base._view and base._weak is not None:
        raise fail(TracingError, "a Python number argument cannot be written into (only rebound: n = n + 1)")
    reason = target._frozen or base._frozen
    if reason:
        raise fail(UnsupportedError, f"writing into this array is not supported: {reason}; write into a copy (x.copy())")
    read_only = sorted({op for op, _ in target._steps if op in ("broadcast_to", "diagonal")})
    if read_only:
        raise fail(UnsupportedError, f"writing into a view made by {' and '.join(read_only)} is not supported (NumPy's are read-only: "
                                     "assignment destination is read-only); write into the array it views")


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
    check_mask(x, m, at)
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
    require_traced(arr, "np.put_along_axis")
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
    last = last_writer(np.moveaxis(broadcast_to(k, shape).astype("int64"), ax, -1), n)
    written = gather_along(np.moveaxis(v, ax, -1), np.maximum(last, 0), x.ndim - 1)
    updated = np.moveaxis(np.where(last >= 0, written, np.moveaxis(x, ax, -1)), -1, ax)
    store(arr, reshape(updated, arr.shape))


def last_writer(k: Tracer, n: int) -> Tracer:
    """For indices k (..., count) into n positions: (..., n), the last j with k[..., j] == p for each position p, or
    -1 (none), found by comparing each position with each index (n x count work)."""
    hits = np.expand_dims(k, -2) == np.arange(n).reshape(n, 1)
    return np.max(np.where(hits, np.arange(k.shape[-1]), -1), axis=-1)


def _cyclic(trace: Trace, values: Any, count: int, dtype: str) -> Tracer:
    """`values` flattened and repeated to `count` elements, as NumPy's flat assignments and putmask reuse them."""
    v = as_array(trace, values).astype(dtype)
    v = reshape(v, (v.size,))
    if not v.size:
        raise fail(TracingError, "cannot assign from an empty array of values")
    return v if v.size == count else v[np.arange(count) % v.size]


@implements("fill_diagonal")
def fill_diagonal(a: Any, val: Any, wrap: bool = False) -> None:
    """np.fill_diagonal: a's main diagonal (a tall matrix's, with `wrap`, every m + 1 rows) set to val, repeated."""
    require_traced(a, "np.fill_diagonal")
    if a.ndim < 2 or (a.ndim > 2 and len(set(a.shape)) != 1):
        raise fail(TracingError, "array must be at least 2-d" if a.ndim < 2 else "All dimensions of input must be of equal length")
    step = a.shape[1] + 1 if a.ndim == 2 else 1 + int(np.cumprod(a.shape[:-1]).sum())
    end = a.shape[1] * a.shape[1] if a.ndim == 2 and not wrap else None
    flat = np.arange(a.size)[:end:step]
    write_indexed(a, np.unravel_index(flat, a.shape), _cyclic(a._trace, val, flat.size, a._node.dtype))


@implements("putmask")
def putmask(a: Any, mask: Any, values: Any) -> None:
    """np.putmask: a[n] = values[n % len(values)] wherever mask[n] (values repeated over a's flat positions)."""
    require_traced(a, "np.putmask")
    trace = a._trace
    m = as_tracer(trace, mask).astype("bool")
    if m.shape != a.shape:
        raise fail(TracingError, "putmask: mask and data must be the same size")
    v = reshape(_cyclic(trace, values, a.size, a._node.dtype), a.shape)
    store(a, np.where(m, v, result(trace, a._node, a._weak)))


@implements("copyto")
def copyto(dst: Any, src: Any, casting: str = "same_kind", where: Any = True) -> None:
    """np.copyto: src broadcast into dst where `where` is true, cast under `casting`."""
    require_traced(dst, "np.copyto")
    trace = dst._trace
    s = as_tracer(trace, src if isinstance(src, Tracer) or type(src) in (int, float, bool) else np.asarray(src))
    if not np.can_cast(np.result_type(s._weak(0)) if s._weak else s.dtype, dst.dtype, casting):  # (a Python number: its kind)
        raise fail(TracingError, f"Cannot cast array data from {s.dtype!r} to {dst.dtype!r} according to the rule {casting!r}")
    value = result(trace, assigned(trace, s, dst.shape, dst._node.dtype))
    store(dst, value if where is True else np.where(where, value, result(trace, dst._node, dst._weak)))


@implements("place")
def place(arr: Any, mask: Any, vals: Any) -> None:
    """np.place: the True elements of mask (in C order) take vals' values in turn, repeated as needed: the k-th
    True element vals[k % len(vals)], k a running count of the mask (so a traced mask works too)."""
    require_traced(arr, "np.place")
    trace = arr._trace
    m = as_tracer(trace, mask).astype("bool")
    if m.size != arr.size:
        raise fail(TracingError, "place: mask and data must be the same size")
    m = reshape(m, arr.shape)
    v = reshape(as_array(trace, vals).astype(arr._node.dtype), (-1,))
    if v.size <= 1:
        if v.size:
            putmask(arr, m, v)
        else:
            check_at_run_time(m, "np.place: Cannot insert from an empty array! (NumPy raises ValueError)", DataValueError)
        return
    k = reshape(np.cumsum(reshape(m, (-1,))) - 1, arr.shape)
    store(arr, np.where(m, v[k % v.size], result(trace, arr._node, arr._weak)))


@implements("put")
def put(a: Any, ind: Any, v: Any, mode: str = "raise") -> None:
    """np.put: a.flat[ind] = v in C order whatever a's layout (v repeated as needed, the last of repeated indices
    winning); `mode` 'raise' takes indices in [-size, size) (checked while tracing for constants, when the kernel
    runs for traced ones), 'wrap' modulo the size, 'clip' into range."""
    require_traced(a, "np.put")
    if mode not in ("raise", "wrap", "clip"):
        raise fail(TracingError, f"np.put: clipmode must be one of 'clip', 'raise', or 'wrap' (got {mode!r})")
    flat = reshape(ind, (-1,)) if isinstance(ind, Tracer) else np.asarray(ind, np.int64).reshape(-1)
    if not flat.size:
        return
    if a.size == 0:
        raise fail(TracingError, "np.put: cannot replace elements of an empty array")
    if mode == "wrap":
        flat = flat % a.size
    elif mode == "clip":
        flat = np.clip(flat, 0, a.size - 1)
    elif not isinstance(flat, Tracer):
        beyond = flat[(flat < -a.size) | (flat >= a.size)]
        if beyond.size:
            raise fail(IndexOutOfBoundsError, f"np.put: index {beyond[0]} is out of bounds for axis 0 with size {a.size}")
        flat = flat % a.size
    else:  # (np.unravel_index checks the range when the kernel runs)
        flat = np.where(flat < 0, flat + a.size, flat)
    write_indexed(a, np.unravel_index(flat, a.shape), _cyclic(a._trace, v, flat.size, a._node.dtype))


class Flat:
    """ndarray.flat of a traced array: read as the flattened array (a copy, as NumPy's), written at flat positions
    known while tracing (values repeated over them, as NumPy's flat assignment)."""

    def __init__(self, x: Tracer) -> None:
        self.x = x

    def _flattened(self) -> Tracer:
        return reshape(result(self.x._trace, self.x._node, self.x._weak), (-1,))

    def __getitem__(self, key: Any) -> Tracer:
        return self._flattened()[key]

    def __iter__(self) -> Any:
        """The elements in C order (`a, b, c, d = np.cov(x, y).flat`, as scipy.stats.linregress unpacks)."""
        return iter(self._flattened())

    def __len__(self) -> int:
        return self.x.size

    def __setitem__(self, key: Any, value: Any) -> None:
        if isinstance(key, Tracer) or (isinstance(key, tuple) and any(isinstance(k, Tracer) for k in key)):
            raise fail(UnsupportedError, "x.flat[k] = v at traced positions k is not supported; use np.put_along_axis on x.ravel()")
        flat = np.arange(self.x.size)[key].ravel()
        if flat.size:
            write_indexed(self.x, np.unravel_index(flat, self.x.shape), _cyclic(self.x._trace, value, flat.size, self.x._node.dtype))


@implements("flat")
def flat(x: Tracer) -> Flat:
    """`x.flat`: the flat iterator's indexing (tracing/core.py's Tracer.flat)."""
    return Flat(x)

