"""Rearranging functions: flip, roll, pad, tile, repeat, moveaxis/rollaxis, split and the stacks,
each composed of views (slices, broadcasts, transposes, unit reshapes) and
concatenations at trace time, so they fuse into their readers."""

from __future__ import annotations

import math
import operator
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..errors import TracingError, UnsupportedError
from .core import IMPLEMENTATIONS, Trace, Tracer, as_array, as_tracer, fail, implements, lift, normalize_axes, normalize_axis, result, trace_of, view
from .shapes import broadcast_to, concatenate, reshape, transpose

LINE_LIMIT = 256  # np.apply_along_axis traces func1d once per line: at most this many
_PAD_MODES = ("constant", "edge", "reflect", "symmetric", "wrap", "linear_ramp")
_PAD_STATS = {"maximum": np.max, "minimum": np.min, "mean": np.mean, "median": np.median}


def _tracer(x: Any) -> Tracer:
    return as_tracer(trace_of([x]), x)


def _ints(value: Any, what: str) -> tuple[int, ...]:
    """An int or a sequence of ints as a tuple of Python ints (TracingError for anything else)."""
    items = value if isinstance(value, (tuple, list, np.ndarray)) else (value,)
    try:
        return tuple(operator.index(v) for v in np.asarray(items, dtype=object).ravel())
    except TypeError:
        raise fail(TracingError, f"{what} must be integers, got {value!r}") from None


def slice_axis(x: Tracer, axis: int, start: int, step: int, size: int) -> Tracer:
    """The view x[..., start : start + step*size : step, ...] along `axis` (any step but 0)."""
    starts, steps, sizes = [0] * x.ndim, [1] * x.ndim, list(x.shape)
    starts[axis], steps[axis], sizes[axis] = start if size else 0, step, size
    if (starts[axis], steps[axis], sizes[axis]) == (0, 1, x.shape[axis]):
        return x
    return view(x, "slice", (tuple(starts), tuple(steps), tuple(sizes)))


def runs(indices: Sequence[int]) -> list[tuple[int, int, int]]:
    """`indices` as maximal arithmetic runs (start, step, length), greedily from the left."""
    found, i = [], 0
    while i < len(indices):
        step = indices[i + 1] - indices[i] if i + 1 < len(indices) else 1
        j = i + 1
        while j < len(indices) and indices[j] - indices[j - 1] == step:
            j += 1
        found.append((indices[i], step, j - i))
        i = j
    return found


def take_static(x: Tracer, indices: Sequence[int], axis: int) -> Tracer:
    """x.take(indices, axis) for known in-range indices, as a concatenation of views: one slice per
    arithmetic run (a run repeating one index is a broadcast), so it fuses into its reader. An array of its
    own, as NumPy's copy (writes into x do not reach it, nor writes into it x)."""
    parts = []
    for start, step, length in runs(list(indices)) or [(0, 1, 0)]:
        if step:
            parts.append(slice_axis(x, axis, start, step, length))
        else:
            one = slice_axis(x, axis, start, 1, 1)
            parts.append(broadcast_to(one, tuple(length if d == axis else n for d, n in enumerate(one.shape))))
    return own(parts[0] if len(parts) == 1 else concatenate(parts, axis))


def own(x: Tracer) -> Tracer:
    """x's value as an array of its own (NumPy's functions that copy): not a view of x's base, nor frozen."""
    return result(x._trace, x._node, x._weak)


@implements("flip")
def flip(m: Any, axis: Any = None) -> Tracer:
    """Reversed along `axis` (all axes if None): slices with step -1."""
    x = _tracer(m)
    for a in normalize_axes(x.ndim, axis):
        x = slice_axis(x, a, x.shape[a] - 1, -1, x.shape[a])
    return x


@implements("flipud")
def flipud(m: Any) -> Tracer:
    x = _tracer(m)
    if x.ndim < 1:
        raise fail(TracingError, "Input must be >= 1-d.")
    return flip(x, 0)


@implements("fliplr")
def fliplr(m: Any) -> Tracer:
    x = _tracer(m)
    if x.ndim < 2:
        raise fail(TracingError, "Input must be >= 2-d.")
    return flip(x, 1)


@implements("roll")
def roll(a: Any, shift: Any, axis: Any = None) -> Tracer:
    """Elements shifted cyclically: per axis, the concatenation of the two slices it wraps into (a new array)."""
    x = own(_tracer(a))  # (its value: a reshape of `a` itself would freeze it against writes)
    if axis is None:
        return own(reshape(roll(reshape(x, (-1,)), shift, 0), x.shape))
    shifts, axes = _ints(shift, "roll shifts"), _ints(axis, "roll axes")
    try:
        pairs = np.broadcast(np.asarray(shifts), np.asarray(axes))
    except ValueError:
        raise fail(TracingError, f"roll: shift {shift!r} and axis {axis!r} cannot be broadcast together") from None
    total = [0] * x.ndim
    for s, ax in pairs:
        total[normalize_axis(x.ndim, int(ax))] += int(s)
    for ax, s in enumerate(total):
        n = x.shape[ax]
        if n and s % n:
            k = n - s % n
            x = concatenate([slice_axis(x, ax, k, 1, n - k), slice_axis(x, ax, 0, 1, k)], ax)
    return own(x)


def _pairs(value: Any, ndim: int, what: str) -> list[tuple[Any, Any]]:
    """NumPy's (before, after) per axis from a scalar, a pair, or one pair per axis."""
    array = np.asarray(value, dtype=object)
    try:
        return [tuple(p) for p in np.broadcast_to(array, (ndim, 2)).tolist()]
    except ValueError:
        raise fail(TracingError, f"np.pad: {what} {value!r} cannot be broadcast to ({ndim}, 2)") from None


@implements("pad")
def pad(array: Any, pad_width: Any, mode: str = "constant", **kwargs: Any) -> Tracer:
    """np.pad, axis by axis as NumPy does: constant pads are broadcast constants concatenated
    around the array; edge/reflect/symmetric/wrap read the array at the indices np.pad gives an
    arange, as views (reflect_type="odd": NumPy's chunks, computed); linear_ramp and the stat modes computed."""
    x = _tracer(array)
    if not isinstance(mode, str) or mode not in (*_PAD_MODES, *_PAD_STATS):
        raise fail(UnsupportedError, f"np.pad mode {mode!r} is not supported (supported: {', '.join((*_PAD_MODES, *_PAD_STATS))})")
    allowed = ({"constant_values"} if mode == "constant" else {"reflect_type"} if mode in ("reflect", "symmetric")
               else {"stat_length"} if mode in _PAD_STATS else {"end_values"} if mode == "linear_ramp" else set())
    if set(kwargs) - allowed:
        raise fail(TracingError, f"np.pad: unsupported keyword arguments for mode {mode!r}: {set(kwargs) - allowed}")
    widths = [_ints(pair, "`pad_width`") for pair in _pairs(pad_width, x.ndim, "pad_width")]
    if any(w < 0 for pair in widths for w in pair):
        raise fail(TracingError, "index can't contain negative values")
    if mode == "constant":
        values = _pairs(kwargs.get("constant_values", 0), x.ndim, "constant_values")
        return own(_pad_constant(x, widths, values))
    if mode in _PAD_STATS:
        return own(_pad_stat(x, widths, _pairs(kwargs.get("stat_length"), x.ndim, "stat_length"), mode))
    if mode == "linear_ramp":
        return own(_pad_ramp(x, widths, _pairs(kwargs.get("end_values", 0), x.ndim, "end_values")))
    for ax, (before, after) in enumerate(widths):
        if kwargs.get("reflect_type") == "odd" and x.shape[ax] > 1:
            x = _reflect_odd(x, ax, before, after, mode == "symmetric")
        elif before or after:
            try:
                indices = np.pad(np.arange(x.shape[ax]), (before, after), mode=mode)
            except ValueError as e:
                raise fail(TracingError, f"np.pad: {e}") from None
            x = take_static(x, indices.tolist(), ax)
    return own(x)


def _pad_stat(x: Tracer, widths: list[tuple[int, int]], lengths: list[tuple[Any, Any]], mode: str) -> Tracer:
    """np.pad's maximum/minimum/mean/median modes as NumPy pads them: axis by axis (an axis' stats read the earlier
    axes' padding), each side the stat of its `stat_length` elements next to it (None: the whole axis), ints rounded."""
    for ax, ((before, after), pair) in enumerate(zip(widths, lengths, strict=True)):
        if not (before or after):
            continue
        n = x.shape[ax]
        sides = []
        for width, length, at_end in ((before, pair[0], False), (after, pair[1], True)):
            length = n if length is None else min(_ints(length, "stat_length")[0], n)
            if not length and mode in ("maximum", "minimum"):
                raise fail(TracingError, "stat_length of 0 yields no value for padding")
            stat = _PAD_STATS[mode](slice_axis(x, ax, n - length if at_end else 0, 1, length), axis=ax, keepdims=True)
            if x.dtype.kind in "iu":  # NumPy's _round_if_needed: half to even, then stored in the int dtype
                stat = np.round(stat)
            sides.append(broadcast_to(stat.astype(x.dtype.name), tuple(width if d == ax else m for d, m in enumerate(x.shape))))
        x = concatenate([p for p in (sides[0], x, sides[1]) if p.shape[ax]], ax)
    return x


def _pad_ramp(x: Tracer, widths: list[tuple[int, int]], ends: list[tuple[Any, Any]]) -> Tracer:
    """np.pad's linear_ramp axis by axis as NumPy pads: each side np.linspace(end value, the edge, width,
    endpoint=False) along the axis in x's dtype, the after side reversed."""
    for ax, ((before, after), pair) in enumerate(zip(widths, ends, strict=True)):
        sides = []
        for width, end, at_end in ((before, pair[0], False), (after, pair[1], True)):
            edge = reshape(slice_axis(x, ax, x.shape[ax] - 1 if at_end else 0, 1, 1), x.shape[:ax] + x.shape[ax + 1:])
            ramp = np.linspace(end, edge, width, endpoint=False, dtype=x.dtype, axis=ax) if width else None
            sides.append(slice_axis(ramp, ax, width - 1, -1, width) if at_end and width else ramp)
        x = concatenate([p for p in (sides[0], x, sides[1]) if p is not None], ax)
    return x


def _reflect_odd(x: Tracer, ax: int, before: int, after: int, include_edge: bool) -> Tracer:
    """np.pad's reflect/symmetric with reflect_type='odd' along one axis as NumPy's loop fills it: chunks of at most a
    period reflected about the current edge (2 * edge - mirrored), each read from what is padded so far."""
    n = x.shape[ax]
    while before > 0 or after > 0:
        size = x.shape[ax]
        period = size // n * n if include_edge else (size - 1) // (n - 1) * (n - 1)
        parts = []
        for width, at_end in ((before, False), (after, True)):
            count = min(period, width)
            first = size - 2 + include_edge if at_end else count - include_edge  # mirrored, read outward from the edge
            edge = slice_axis(x, ax, size - 1 if at_end else 0, 1, 1)
            parts.append(2 * edge - slice_axis(x, ax, first, -1, count) if count else None)
        before, after = before - min(period, before), after - min(period, after)
        x = concatenate([p for p in (parts[0], x, parts[1]) if p is not None], ax)
    return x


def _pad_constant(x: Tracer, widths: list[tuple[int, int]], values: list[tuple[Any, Any]]) -> Tracer:
    trace, dtype = x._trace, x.dtype.name
    for ax, ((before, after), (vb, va)) in enumerate(zip(widths, values, strict=True)):
        parts = []
        for width, value in ((before, vb), (after, va)):
            constant = result(trace, lift(trace, _cast(value, dtype), dtype))
            parts.append(broadcast_to(constant, tuple(width if d == ax else n for d, n in enumerate(x.shape))) if width else None)
        if before or after:
            x = concatenate([p for p in (parts[0], x, parts[1]) if p is not None], ax)
    return x


def _cast(value: Any, dtype: str) -> Any:
    """A pad value as np.pad stores it into the array (an unsafe cast: 1.7 pads an int array with 1)."""
    if isinstance(value, Tracer):
        return value
    stored = np.empty((), dtype)
    try:
        stored[()] = value
    except (ValueError, OverflowError, TypeError) as e:
        raise fail(TracingError, f"np.pad: constant value {value!r} cannot be stored in {dtype}: {e}") from None
    return stored[()]


@implements("apply_along_axis")
def apply_along_axis(func1d: Any, axis: Any, arr: Any, *args: Any, **kwargs: Any) -> Tracer:
    """np.apply_along_axis: func1d traced on each 1-D line along `axis` (at most LINE_LIMIT lines: each is a call), the
    results (cast to the first's dtype) stacked with their dims where `axis` was, as NumPy lays them out."""
    x = _tracer(arr)
    moved = np.moveaxis(x, normalize_axis(x.ndim, axis), -1)
    outer, at = moved.shape[:-1], normalize_axis(x.ndim, axis)
    if not math.prod(outer):
        raise fail(TracingError, "Cannot apply_along_axis when any iteration dimensions are 0")
    if math.prod(outer) > LINE_LIMIT:
        raise fail(UnsupportedError, f"np.apply_along_axis over {math.prod(outer)} lines is not supported (at most {LINE_LIMIT}: each "
                                     "line is a traced call); write func1d on the whole array with axis=")
    lines = [as_array(x._trace, func1d(moved[index], *args, **kwargs)) for index in np.ndindex(outer)]
    if any(v.shape != lines[0].shape for v in lines):
        raise fail(TracingError, f"np.apply_along_axis: func1d's results differ in shape ({lines[0].shape} and others)")
    stacked = reshape(IMPLEMENTATIONS["stack"]([v.astype(lines[0].dtype) for v in lines]), outer + lines[0].shape)
    dims = len(outer)
    return transpose(stacked, [*range(at), *range(dims, stacked.ndim), *range(at, dims)])


@implements("tile")
def tile(A: Any, reps: Any) -> Tracer:
    """np.tile: the array broadcast along a new axis before each axis, the pairs merged by a reshape (of A's value)."""
    x = own(_tracer(A))
    reps = _ints(reps, "tile reps")
    if any(r < 0 for r in reps):
        raise fail(TracingError, f"tile: negative repetitions {reps}")
    ndim = max(x.ndim, len(reps))
    reps = (1,) * (ndim - len(reps)) + reps
    x = reshape(x, (1,) * (ndim - x.ndim) + x.shape)
    if all(r == 1 for r in reps):
        return own(x)
    interleaved = tuple(d for pair in zip([1] * ndim, x.shape, strict=True) for d in pair)
    grown = tuple(d for pair in zip(reps, x.shape, strict=True) for d in pair)
    return reshape(broadcast_to(reshape(x, interleaved), grown), tuple(r * n for r, n in zip(reps, x.shape, strict=True)))


@implements("resize")
def resize(a: Any, new_shape: Any) -> Tracer:
    """np.resize: a's elements in order, repeated as often as the new shape needs (zeros when a is empty)."""
    x = reshape(_tracer(a), (-1,))
    shape = _ints(new_shape, "np.resize: new_shape")
    if any(n < 0 for n in shape):
        raise fail(TracingError, "np.resize: all elements of `new_shape` must be non-negative")
    count = math.prod(shape)
    if not x.size or not count:
        return IMPLEMENTATIONS["zeros"](shape, dtype=x.dtype)
    repeats = -(-count // x.size)
    return reshape(concatenate([x] * repeats)[:count] if repeats > 1 else own(x[:count]), shape)


@implements("repeat")
def repeat(a: Any, repeats: Any, axis: Any = None) -> Tracer:
    """np.repeat: one count is a broadcast along a new axis after `axis`, merged by a reshape;
    counts per element read the array at the indices they give (views of a's value)."""
    x = own(_tracer(a))
    if isinstance(repeats, Tracer):
        raise fail(UnsupportedError, "np.repeat with traced counts is not supported: the result's length is their sum, known "
                                     "only at run time; pass the counts as a constant (a list, or a static argument)")
    if axis is None:
        x, axis = reshape(x, (-1,)), 0
    ax = normalize_axis(x.ndim, axis)
    counts = _ints(repeats, "repeats")
    if any(c < 0 for c in counts):
        raise fail(TracingError, "repeat: negative dimensions are not allowed")
    n = x.shape[ax]
    if len(counts) == 1:  # one count (or a one-element sequence) broadcasts to every element
        split = x.shape[: ax + 1] + (1,) + x.shape[ax + 1 :]
        grown = x.shape[: ax + 1] + (counts[0],) + x.shape[ax + 1 :]
        return reshape(broadcast_to(reshape(x, split), grown), x.shape[:ax] + (n * counts[0],) + x.shape[ax + 1 :])
    if len(counts) != n:
        raise fail(TracingError, f"repeat: operands could not be broadcast together with shape ({n},) ({len(counts)},)")
    return take_static(x, np.repeat(np.arange(n), counts).tolist(), ax)


@implements("moveaxis")
def moveaxis(a: Any, source: Any, destination: Any) -> Tracer:
    x = _tracer(a)
    src = [normalize_axis(x.ndim, s, "source") for s in _ints(source, "source")]
    dst = [normalize_axis(x.ndim, d, "destination") for d in _ints(destination, "destination")]
    if len(src) != len(dst):
        raise fail(TracingError, "`source` and `destination` arguments must have the same number of elements")
    if len(set(src)) != len(src) or len(set(dst)) != len(dst):
        raise fail(TracingError, "repeated axis in moveaxis source or destination")
    order = [n for n in range(x.ndim) if n not in src]
    for d, s in sorted(zip(dst, src, strict=True)):
        order.insert(d, s)
    return transpose(x, order)


@implements("rollaxis")
def rollaxis(a: Any, axis: int, start: int = 0) -> Tracer:
    x = _tracer(a)
    ax = normalize_axis(x.ndim, axis)
    if not -x.ndim <= start <= x.ndim:
        raise fail(TracingError, f"rollaxis: start {start} out of range for an array of dimension {x.ndim}")
    start %= x.ndim + 1
    if ax < start:
        start -= 1
    if ax == start:
        return x
    order = [n for n in range(x.ndim) if n != ax]
    order.insert(start, ax)
    return transpose(x, order)


def _split(x: Tracer, sections: Any, axis: int, equal: bool) -> list[Tracer]:
    ax = normalize_axis(x.ndim, axis)
    n = x.shape[ax]
    if isinstance(sections, (int, np.integer)):
        count = int(sections)
        if count <= 0:
            raise fail(TracingError, "number sections must be larger than 0.")
        if equal and n % count:
            raise fail(TracingError, "array split does not result in an equal division")
        each, extra = divmod(n, count)
        bounds = np.cumsum([0] + extra * [each + 1] + (count - extra) * [each]).tolist()
    else:
        bounds = [0, *_ints(sections, "split indices"), n]
    parts = []
    for lo, hi in zip(bounds[:-1], bounds[1:], strict=True):
        r = range(*slice(lo, hi).indices(n))
        parts.append(slice_axis(x, ax, r.start if len(r) else 0, 1, len(r)))
    return parts


@implements("split")
def split(ary: Any, indices_or_sections: Any, axis: int = 0) -> list[Tracer]:
    """np.split: a list of slice views."""
    return _split(_tracer(ary), indices_or_sections, axis, equal=True)


@implements("array_split")
def array_split(ary: Any, indices_or_sections: Any, axis: int = 0) -> list[Tracer]:
    """np.array_split: a list of slice views, the first n % sections one longer."""
    return _split(_tracer(ary), indices_or_sections, axis, equal=False)


def _at_least(arrays: Sequence[Any], ndim: int) -> list[Tracer]:
    """np.atleast_1d/2d/3d of each: 1-D (n,) becomes (1, n) and (1, n, 1), 2-D (m, n) becomes (m, n, 1)."""
    trace = trace_of(arrays)
    out = []
    for x in (_strong(trace, a) for a in arrays):
        if x.ndim == 1 and ndim > 1:
            x = reshape(x, ((1,) + x.shape + (1,))[:ndim])
        out.append(reshape(x, ((1,) * ndim + x.shape)[-ndim:] if x.ndim == 0 else x.shape + (1,) * (ndim - x.ndim)))
    return out


def _strong(trace: Trace, a: Any) -> Tracer:
    """A stacked value as NumPy makes it an array first: a Python number has its default dtype (not weak)."""
    return as_array(trace, a)


def _stack_parts(tup: Any, what: str) -> list[Any]:
    if isinstance(tup, Tracer) or not isinstance(tup, (tuple, list)):
        raise fail(TracingError, f"np.{what} needs a sequence of arrays (a list or tuple)")
    return list(tup)


@implements("hstack")
def hstack(tup: Any, *, dtype: Any = None, casting: str = "same_kind") -> Tracer:
    arrays = _at_least(_stack_parts(tup, "hstack"), 1)
    return concatenate(arrays, 0 if arrays and arrays[0].ndim == 1 else 1, dtype=dtype, casting=casting)


@implements("vstack")
def vstack(tup: Any, *, dtype: Any = None, casting: str = "same_kind") -> Tracer:
    return concatenate(_at_least(_stack_parts(tup, "vstack"), 2), 0, dtype=dtype, casting=casting)


@implements("dstack")
def dstack(tup: Any) -> Tracer:
    return concatenate(_at_least(_stack_parts(tup, "dstack"), 3), 2)


@implements("column_stack")
def column_stack(tup: Any) -> Tracer:
    trace = trace_of(_stack_parts(tup, "column_stack"))
    columns = [_strong(trace, a) for a in tup]
    return concatenate([reshape(c, (c.size, 1)) if c.ndim < 2 else c for c in columns], 1)



def _atleast(ndim: int) -> Any:
    def atleast(*arys: Any) -> Any:
        """np.atleast_{n}d: views with unit dims added as NumPy adds them; one array for one argument, else a tuple."""
        out = _at_least(list(arys), ndim)
        return out[0] if len(out) == 1 else tuple(out)
    return atleast


for _n in (1, 2, 3):
    implements(f"atleast_{_n}d")(_atleast(_n))


def _split_along(name: str, ndim: int, axis: int) -> Any:
    def split_along(ary: Any, indices_or_sections: Any) -> list[Tracer]:
        """np.hsplit/vsplit/dsplit: np.split along the axis NumPy picks for the array's rank."""
        x = _tracer(ary)
        if x.ndim < ndim:
            raise fail(TracingError, f"{name} only works on arrays of {ndim} or more dimensions")
        return _split(x, indices_or_sections, 0 if name == "hsplit" and x.ndim == 1 else axis, equal=True)
    return split_along


for _name, _ndim, _axis in (("hsplit", 1, 1), ("vsplit", 2, 0), ("dsplit", 3, 2)):
    implements(_name)(_split_along(_name, _ndim, _axis))


@implements("rot90")
def rot90(m: Any, k: int = 1, axes: Any = (0, 1)) -> Tracer:
    """np.rot90 as NumPy composes it: flips and a transpose (views)."""
    x = _tracer(m)
    axes = tuple(axes)
    if len(axes) != 2:
        raise fail(TracingError, "len(axes) must be 2.")
    if axes[0] == axes[1] or abs(axes[0] - axes[1]) == x.ndim:
        raise fail(TracingError, "Axes must be different.")
    if not all(-x.ndim <= a < x.ndim for a in axes):
        raise fail(TracingError, f"Axes={axes} out of range for array of ndim={x.ndim}.")
    k = operator.index(k) % 4
    if k == 0:
        return x
    if k == 2:
        return flip(flip(x, axes[0]), axes[1])
    order = list(range(x.ndim))
    order[axes[0]], order[axes[1]] = order[axes[1]], order[axes[0]]
    return transpose(flip(x, axes[1]), order) if k == 1 else flip(transpose(x, order), axes[1])


@implements("broadcast_arrays")
def broadcast_arrays(*args: Any, subok: bool = False) -> tuple[Tracer, ...]:
    """The arrays broadcast to their common shape (read-only views, as NumPy's)."""
    trace = trace_of(list(args))
    arrays = [_strong(trace, a) for a in args]
    try:
        shape = np.broadcast_shapes(*(a.shape for a in arrays))
    except ValueError as e:
        raise fail(TracingError, str(e)) from None
    return tuple(a if a.shape == shape else broadcast_to(a, shape) for a in arrays)


@implements("stride_tricks.sliding_window_view")
def sliding_window_view(x: Any, window_shape: Any, axis: Any = None, *, subok: bool = False, writeable: bool = False) -> Tracer:
    """Windows of `window_shape` along `axis` (None: every axis), each window's dims appended as NumPy's: per window
    dim, its w shifted slices stacked (views, read-only)."""
    v = _tracer(x)
    shape = _ints(window_shape, "window_shape")
    axes = tuple(range(v.ndim)) if axis is None else tuple(normalize_axis(v.ndim, a) for a in _ints(axis, "axis"))
    if len(shape) != len(axes):
        raise fail(TracingError, "Must provide matching length window_shape and axis; got "
                                 f"{len(shape)} window_shape elements and {len(axes)} axes elements.")
    if writeable:
        raise fail(UnsupportedError, "sliding_window_view(writeable=True) is not supported")
    out = v
    for ax, w in zip(axes, shape, strict=True):
        n = v.shape[ax]
        if w < 0 or w > n:
            raise fail(TracingError, "window shape cannot be larger than input array shape" if w > n else "`window_shape` cannot contain negative values")
        if not w:
            raise fail(UnsupportedError, "sliding_window_view with an empty window is not supported")
        out = concatenate([reshape(slice_axis(out, ax, j, 1, n - w + 1), out.shape[:ax] + (n - w + 1,) + out.shape[ax + 1:] + (1,))
                           for j in range(w)], out.ndim)
    return out
