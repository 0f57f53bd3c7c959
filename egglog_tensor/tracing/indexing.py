"""Gathers: np.take, np.take_along_axis and integer-array indexing (`A[idx]`, `A[:, idx]`, `A[i, j]`)
with NumPy's result shapes. Constant indices are checked while tracing and read as views (one slice
per arithmetic run); traced indices become a `gather` op whose indices are made valid in the kernel,
an out-of-range one flagged in a hidden output that the call turns into IndexOutOfBoundsError.
Boolean masks give data-dependent shapes: a clear error suggesting np.where."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from ..errors import IndexOutOfBoundsError, TracingError, UnsupportedError
from .core import IMPLEMENTATIONS, Trace, Tracer, as_array, as_tracer, check_at_run_time, fail, implements, known_value, lift, normalize_axis, result, trace_of
from .rearrange import runs, take_static
from .selections import MASK_HINT, mask_view, selected
from .shapes import broadcast_to, reshape, transpose

MAX_RUNS = 64  # constant indices read as at most this many slices; more: pass them as an argument


def is_index_array(k: Any) -> bool:
    """Whether an index entry is advanced: an array, a list, tuple or range (NumPy makes it an array), or a boolean scalar."""
    return isinstance(k, (Tracer, np.ndarray, list, tuple, range, bool, np.bool_))


def _constant(k: Any) -> np.ndarray | None:
    """A constant index as an integer array (None: a traced one); masks and non-integers refused."""
    if isinstance(k, Tracer):
        kind = k.dtype.kind
    else:
        k = np.asarray(k)
        kind = k.dtype.kind if k.size else "i"
    if kind == "b":
        raise fail(UnsupportedError, f"boolean-mask indexing (x[mask]) is not supported: {MASK_HINT}")
    if kind not in "iu":
        raise fail(TracingError, "arrays used as indices must be of integer (or boolean) type")
    return None if isinstance(k, Tracer) else k.astype(np.int64)


def _checked(k: np.ndarray, n: int, axis: int) -> np.ndarray:
    bad = (k < -n) | (k >= n)
    if bad.any():
        raise fail(IndexOutOfBoundsError, f"index {int(k[bad].flat[0])} is out of bounds for axis {axis} with size {n}")
    return k % max(n, 1)


def _valid(k: Tracer, n: int, axis: int, mode: str) -> Tracer:
    """Traced indices made valid for an axis of size n: wrapped or clipped (mode), or, for 'raise',
    negatives wrapped and out-of-range ones read at 0 and flagged for the call to raise."""
    k = k if k.dtype == np.int64 else k.astype("int64")
    if n == 0 and k.size:
        raise fail(IndexOutOfBoundsError, f"cannot do a non-empty take from an empty axis {axis}")
    if not k.size:
        return k
    if mode == "wrap":
        return np.remainder(k, n)
    if mode == "clip":
        return np.clip(k, 0, n - 1)
    bad = (k < -n) | (k >= n)
    check_at_run_time(bad, f"index out of bounds for axis {axis} with size {n}", of="indices ")
    return np.where(bad, 0, np.where(k < 0, k + n, k))


def gather(x: Tracer, k: Tracer, axis: int) -> Tracer:
    """x.take(k, axis) for valid traced int64 indices: the gather op, indices broadcast to the result."""
    trace = x._trace
    shape = x.shape[:axis] + k.shape + x.shape[axis + 1 :]
    idx = broadcast_to(reshape(k, (1,) * axis + k.shape + (1,) * (x.ndim - axis - 1)), shape)
    return result(trace, trace.make("gather", (x._node, lift(trace, idx, "int64")), (axis,)), x._weak)


def gather_along(x: Tracer, k: Tracer, axis: int) -> Tracer:
    """x's elements at valid int64 indices `k` along `axis` (k of the result's shape): the gather op."""
    return result(x._trace, x._trace.make("gather", (x._node, lift(x._trace, k, "int64")), (axis,)), x._weak)


def valid_indices(trace: Trace, k: Any, n: int, axis: int) -> Tracer:
    """Indices into an axis of size n, negatives wrapped: constant ones checked now, traced ones at run
    time (out-of-range ones read at 0 and flagged for the call to raise IndexError)."""
    constant = _constant(k)
    if constant is None:
        return _valid(k, n, axis, "raise")
    return as_tracer(trace, _checked(constant, n, axis) if constant.size else constant)


def take_constant(x: Tracer, k: np.ndarray, axis: int) -> Tracer:
    """x.take(k, axis) for valid constant indices: views of x (one slice per arithmetic run)."""
    flat = k.ravel().tolist()
    if len(runs(flat)) > MAX_RUNS:
        raise fail(UnsupportedError, f"constant indices of {k.size} elements with no regular pattern: "
                                     "pass them as a kernel argument (an int array) instead")
    taken = take_static(x, flat, axis)
    return reshape(taken, x.shape[:axis] + k.shape + x.shape[axis + 1 :])


def _take_axis(x: Tracer, k: Any, axis: int, mode: str) -> Tracer:
    constant = _constant(k)
    n = x.shape[axis]
    if constant is None:
        return gather(x, _valid(k, n, axis, mode), axis)
    if n == 0 and constant.size:
        raise fail(IndexOutOfBoundsError, f"cannot do a non-empty take from an empty axis {axis}")
    if mode == "wrap":
        constant = constant % max(n, 1)
    elif mode == "clip":
        constant = np.clip(constant, 0, max(n - 1, 0))
    return take_constant(x, _checked(constant, n, axis), axis)


@implements("take")
def take(a: Any, indices: Any, axis: Any = None, out: Any = None, mode: str = "raise") -> Tracer:
    """np.take: x read at `indices` along `axis` (the flattened array if None)."""
    if out is not None:
        raise fail(UnsupportedError, "np.take(out=...) is not supported")
    if mode not in ("raise", "wrap", "clip"):
        raise fail(TracingError, f"clipmode not understood: {mode!r}")
    x = as_tracer(trace_of([a, indices]), a)
    if axis is None:
        x, axis = reshape(x, (-1,)), 0
    return _take_axis(x, indices, normalize_axis(x.ndim, axis), mode)


@implements("take_along_axis")
def take_along_axis(arr: Any, indices: Any, axis: Any = -1) -> Tracer:
    """np.take_along_axis: traced indices, or constant ones differing along other axes, as one gather;
    constant ones the same along every other axis as a take (views)."""
    x = as_tracer(trace_of([arr, indices]), arr)
    if axis is None:
        x, axis = reshape(x, (-1,)), 0
    ndim = np.ndim(indices) if not isinstance(indices, Tracer) else indices.ndim
    if ndim != x.ndim:
        raise fail(TracingError, "`indices` and `arr` must have the same number of dimensions")
    ax = normalize_axis(x.ndim, axis)
    shape_k = indices.shape if isinstance(indices, Tracer) else np.shape(indices)
    try:
        shape = tuple(np.broadcast_shapes(*((s[:ax] + (1,) + s[ax + 1 :]) for s in (x.shape, tuple(shape_k)))))
    except ValueError:
        raise fail(TracingError, f"take_along_axis: shapes {x.shape} and {tuple(shape_k)} do not broadcast outside axis {ax}") from None
    shape = shape[:ax] + (shape_k[ax],) + shape[ax + 1 :]
    constant = _constant(indices)
    if constant is None:
        return gather_along(x, broadcast_to(_valid(indices, x.shape[ax], ax, "raise"), shape), ax)
    line = np.moveaxis(constant, ax, -1).reshape(-1, constant.shape[ax]) if constant.size else constant
    if constant.size and not (line == line[:1]).all():  # differing along other axes: a gather reading them
        return gather_along(x, broadcast_to(valid_indices(x._trace, constant, x.shape[ax], ax), shape), ax)
    along = line[0] if constant.size else np.zeros(0, np.int64)
    taken = take_constant(x, _checked(along, x.shape[ax], ax), ax)
    return broadcast_to(taken, shape)


def _indices_from(name: str) -> Callable[..., tuple[np.ndarray, ...]]:
    """np.`name` (tril_indices_from & co.): constant index arrays from the array's static shape, as NumPy's."""

    def indices(arr: Any, *args: Any, **kwargs: Any) -> tuple[np.ndarray, ...]:
        try:
            return getattr(np, name)(np.broadcast_to(np.False_, arr.shape), *args, **kwargs)
        except ValueError as error:
            raise fail(TracingError, f"np.{name}: {error}") from None

    return indices


for _name in ("tril_indices_from", "triu_indices_from", "diag_indices_from"):
    implements(_name)(_indices_from(_name))


def _value_shaped(name: str, advice: str) -> Callable[..., Tracer]:
    """np.`name`: its result has as many elements as the data says (nonzero, unique), so refused with a clear error."""

    def refuse(*args: Any, **kwargs: Any) -> Tracer:
        raise fail(UnsupportedError, f"np.{name} is not supported: its result shape depends on the values, which are not "
                                     f"known while tracing; {advice}")

    return refuse


for _name in ("nonzero", "argwhere", "flatnonzero", "extract"):
    implements(_name)(_value_shaped(_name, "use np.where(cond, x, fill)"))
implements("unique")(_value_shaped("unique", "call it outside the kernel, or use np.sort and compare neighbours "
                                             "(a[1:] != a[:-1]) to mark first occurrences"))


@implements("getitem.advanced")
def advanced_getitem(x: Tracer, key: tuple) -> Tracer:
    """Integer-array indexing with NumPy's result shape: the indexed dims become the indices'
    broadcast shape, in place when they are adjacent, else first. A constant mask is its nonzero indices (as
    NumPy reads it); a traced one beside slices and ints a Selection (tracing/selections.py)."""
    key = expand_masks(x, key)
    masks = [k for k in key if is_traced_mask(k)]
    view = mask_view(x, key, masks[0]) if len(masks) == 1 else None
    if view is not None:
        return selected(view[0], masks[0], view[1])
    for k in filter(is_index_array, key):
        _constant(k)  # (masks and non-integer arrays refused before any work)
    x = result(x._trace, x._node, x._weak)  # x's value: a copy is read, and x stays writable (no reshape of it freezes it)
    apart = indices_apart(key)
    x, key = _without_none(x, expand_key(x, key))
    advanced = [d for d, k in enumerate(key) if not isinstance(k, slice)]
    try:
        shape = tuple(np.broadcast_shapes(*(np.shape(k) if not isinstance(k, Tracer) else k.shape for k in (key[d] for d in advanced))))
    except ValueError:
        raise fail(TracingError, "shape mismatch: indexing arrays could not be broadcast together") from None
    y = IMPLEMENTATIONS["getitem"](x, tuple(slice(None) if d in advanced else k for d, k in enumerate(key)))
    at = 0 if apart else advanced[0]
    order = [d for d in range(y.ndim) if d not in advanced]
    y = transpose(y, order[:at] + advanced + order[at:])
    sizes = [y.shape[at + i] for i in range(len(advanced))]
    merged = reshape(y, y.shape[:at] + (math.prod(sizes),) + y.shape[at + len(advanced) :])
    flat = flat_index([key[d] for d in advanced], sizes, shape, advanced)
    if isinstance(flat, np.ndarray):
        return take_constant(merged, flat, at)
    return gather(merged, flat, at)


def expand_masks(x: Tracer, key: tuple) -> tuple:
    """The key with each constant boolean mask replaced by its nonzero() index arrays, as NumPy reads a mask, after
    checking each mask's shape against the dims it indexes; a traced mask beside index arrays refused: its count is dynamic.
    A traced mask of constants alone is read as its value (core.known_value)."""
    key = tuple(known if is_traced_mask(k) and (known := known_value(k)) is not None else k for k in key)
    is_mask = [is_constant_mask(k) or is_traced_mask(k) for k in key]
    width = [np.ndim(k) if m else 0 if k is None or k is Ellipsis else 1 for k, m in zip(key, is_mask, strict=True)]
    dim = 0
    for entry, mask, w in zip(key, is_mask, width, strict=True):
        if mask:
            for axis, k in enumerate(np.shape(entry) if not isinstance(entry, Tracer) else entry.shape, start=dim):
                if axis < x.ndim and k != x.shape[axis]:
                    raise fail(TracingError, f"boolean index did not match indexed array along axis {axis}; "
                                             f"size of axis is {x.shape[axis]} but size of corresponding boolean axis is {k}")
        dim += x.ndim - sum(width) if entry is Ellipsis else w
    key = tuple(k for entry in key for k in (np.nonzero(np.asarray(entry)) if is_constant_mask(entry) else (entry,)))
    if any(map(is_traced_mask, key)) and sum(1 for k in key if is_index_array(k) and not isinstance(k, (bool, np.bool_))) > 1:
        raise fail(UnsupportedError, "a traced boolean mask beside index arrays or another mask (x[m, idx], x[m1, m2]) is not "
                                     "supported: NumPy reads the mask as its nonzero() index arrays, whose length depends on "
                                     "the mask's values, which are not known while tracing; pass a constant mask, or use "
                                     "np.where over the indexed elements")
    return key


def indices_apart(key: tuple) -> bool:
    """Whether NumPy puts x[key]'s index-array dims first: its advanced entries (arrays, and ints beside them) do not
    stand together in the key as written (a slice, None or `...` between them, even a `...` of no dims)."""
    at = [i for i, k in enumerate(key) if not (k is None or k is Ellipsis or isinstance(k, slice))]
    return bool(at) and at != list(range(at[0], at[-1] + 1))


def is_traced_mask(k: Any) -> bool:
    """Whether an index entry is a traced boolean array of at least one dim."""
    return isinstance(k, Tracer) and k.dtype == np.bool_ and k.ndim > 0


def is_constant_mask(k: Any) -> bool:
    """Whether an index entry is a boolean array known while tracing (a list of bools too)."""
    return isinstance(k, (np.ndarray, list)) and np.ndim(k) > 0 and np.asarray(k).dtype == np.bool_


def expand_key(x: Tracer, key: tuple) -> tuple:
    """The key with its Ellipsis (or the missing trailing dims) as full slices and ints as 0-d arrays."""
    real = sum(1 for k in key if k is not None and k is not Ellipsis)
    if real > x.ndim:
        raise fail(TracingError, f"too many indices for array: array is {x.ndim}-dimensional, but {real} were indexed")
    if sum(1 for k in key if k is Ellipsis) > 1:
        raise fail(TracingError, "an index can only have a single ellipsis ('...')")
    fill = (slice(None),) * (x.ndim - real)
    at = next((i for i, k in enumerate(key) if k is Ellipsis), len(key))  # (`in` would compare tracers)
    key = key[:at] + fill + key[at + 1 :]
    return tuple(np.int64(k) if isinstance(k, (int, np.integer)) and not isinstance(k, (bool, np.bool_)) else k for k in key)


def _without_none(x: Tracer, key: tuple) -> tuple[Tracer, tuple]:
    """x with a unit dim at each None of the key, which becomes a full slice there."""
    shape, dims = [], iter(x.shape)
    for k in key:
        shape.append(1 if k is None else next(dims))
    return reshape(x, tuple(shape)), tuple(slice(None) if k is None else k for k in key)


def flat_index(keys: list[Any], sizes: list[int], shape: tuple[int, ...], axes: list[int]) -> Any:
    """The row-major index into the merged dims of `sizes`: a constant array if every key is one."""
    strides = [math.prod(sizes[i + 1 :]) for i in range(len(sizes))]
    constants = [_constant(k) for k in keys]
    if all(c is not None for c in constants):
        valid = [_checked(c, n, a) for c, n, a in zip(constants, sizes, axes, strict=True)]
        return np.broadcast_to(sum(v * s for v, s in zip(valid, strides, strict=True)), shape)
    trace = trace_of([k for k in keys if isinstance(k, Tracer)])
    parts = [(_valid(k, n, a, "raise") if c is None else as_tracer(trace, _checked(c, n, a)))
             for k, c, n, a in zip(keys, constants, sizes, axes, strict=True)]
    flat = parts[0] * strides[0] if strides[0] != 1 else parts[0]
    for p, s in zip(parts[1:], strides[1:], strict=True):
        flat = flat + (p * s if s != 1 else p)
    return broadcast_to(as_tracer(trace, flat), shape)


@implements("unravel_index")
def unravel_index(indices: Any, shape: Any, order: str = "C") -> tuple[Any, ...]:
    """The coordinates of flat indices in an array of `shape` (int64): constant ones NumPy's own; traced ones by
    division, an index outside [0, size) flagged for the call to raise IndexOutOfBoundsError (NumPy: ValueError)."""
    if not isinstance(indices, Tracer):
        return np.unravel_index(indices, shape, order)
    if order not in ("C", "F"):
        raise fail(TracingError, "only 'C' or 'F' order is permitted")
    if indices.dtype.kind not in "iu":
        raise fail(TracingError, f"only int indices permitted, not {indices.dtype}")
    dims = tuple(int(d) for d in (shape if isinstance(shape, (tuple, list)) else (shape,)))
    size = math.prod(dims)
    k = indices.astype("int64")
    bad = (k < 0) | (k >= size)
    check_at_run_time(bad, f"np.unravel_index: an index is out of bounds for an array of size {size}")
    k = np.where(bad, 0, k)
    out = []
    for d in (reversed(dims) if order == "C" else dims):
        out.append(k % d if d else k)
        k = k // d if d else k
    return tuple(reversed(out)) if order == "C" else tuple(out)


@implements("ravel_multi_index")
def ravel_multi_index(multi_index: Any, dims: Any, mode: Any = "raise", order: str = "C") -> Any:
    """The flat indices of coordinate arrays in an array of `dims` (int64): constant ones NumPy's own; traced ones
    by multiply-adds, each mode per coordinate ('raise': flagged at run time, IndexOutOfBoundsError; NumPy: ValueError)."""
    if not any(isinstance(k, Tracer) for k in multi_index):
        return np.ravel_multi_index(multi_index, dims, mode, order)
    dims = tuple(int(d) for d in (dims if isinstance(dims, (tuple, list)) else (dims,)))
    modes = mode if isinstance(mode, (tuple, list)) else (mode,) * len(dims)
    if len(multi_index) != len(dims) or len(modes) != len(dims) or order not in ("C", "F"):
        raise fail(TracingError, f"parameter multi_index must be a sequence of length {len(dims)} (one mode each, order 'C' or 'F')")
    if any(m not in ("raise", "wrap", "clip") for m in modes):
        raise fail(TracingError, f"clipmode not understood: {mode!r}")
    trace = trace_of(list(multi_index))
    strides = [math.prod(dims[i + 1:]) if order == "C" else math.prod(dims[:i]) for i in range(len(dims))]
    flat: Any = 0
    for k, d, m, stride in zip(multi_index, dims, modes, strides, strict=True):
        k = as_array(trace, k).astype("int64")
        if m == "raise":
            check_at_run_time((k < 0) | (k >= d), f"np.ravel_multi_index: invalid entry in coordinates array (dimension {d})")
        k = np.remainder(k, d) if m == "wrap" else np.clip(k, 0, d - 1)
        flat = flat + k * stride
    return flat
