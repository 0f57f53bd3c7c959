"""`x.view(dtype)`: x's bytes read as another dtype, as NumPy's view does (little-endian, as the CPU targets).

Of the same itemsize it is a view: the `bitcast` op, elementwise (it fuses), re-derived when x is written and written
through (`y = x.view(np.int32); y[0] = 1` changes x). Of another itemsize, NumPy's last axis changes length by the
ratio: each element split into (or made of) unsigned pieces by shifts, a computed array whose writes, and the writes
into x after it, are refused (they would have to reach the other array bit by bit)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import TracingError, UnsupportedError
from ..graph import DTYPES
from .core import Tracer, base_of, derived, dtype_name, fail, implements, memory, result
from .shapes import concatenate, expand_dims, reshape


def unsigned(itemsize: int) -> str:
    """The unsigned integer dtype of `itemsize` bytes."""
    return f"uint{8 * itemsize}"


def bits(x: Tracer, dtype: str) -> Tracer:
    """x's elements' bits as `dtype`, of x's itemsize: a view of x (a bitcast)."""
    return x if x.dtype == dtype else derived(x, "bitcast", (dtype,), None)


@implements("ndarray.view")
def view(x: Tracer, dtype: Any = None, type: Any = None) -> Tracer:
    """ndarray.view: x itself as a view in its own dtype, or its bytes read as `dtype` (NumPy's errors where the
    itemsize changes and x is 0-d, its last axis is not contiguous, or its length in bytes is not a multiple)."""
    if type not in (None, np.ndarray):
        raise fail(UnsupportedError, f"ndarray.view(type={getattr(type, '__name__', type)}) is not supported (only np.ndarray)")
    if dtype is None or dtype is np.ndarray:
        return x[...]
    target = dtype_name(dtype)
    if target not in DTYPES:
        raise fail(UnsupportedError, f"ndarray.view({target}) is not supported (supported: {', '.join(DTYPES)})")
    old, new = x.dtype.itemsize, np.dtype(target).itemsize
    if old == new:
        return bits(x[...], target)
    if x.ndim == 0:
        raise fail(TracingError, "Changing the dtype of a 0d array is only supported if the itemsize is unchanged")
    stand_in = memory(x)
    if stand_in is None:
        raise fail(UnsupportedError, f"x.view({target}) of a {x.dtype} array whose memory order NumPy decides by its inputs' (C or F: "
                                     "the last axis contiguous or not) is not supported; view a copy, x.copy().view(...)")
    if x.shape[-1] != 1 and stand_in.strides[-1] != 1:
        raise fail(TracingError, "To change to a dtype of a different size, the last axis must be contiguous")
    if (x.shape[-1] * old) % new:
        raise fail(TracingError, "When changing to a larger dtype, its size must be a divisor of the total size in bytes "
                                 "of the last axis of the array.")
    pieces = split(x, old, new) if old > new else joined(x, old, new)
    out = result(x._trace, bits(pieces, target)._node)
    out._order = "C" if stand_in.flags.c_contiguous else None
    out._frozen = base_of(x)._frozen = (f"it was viewed as another itemsize (a {x.dtype} array's view({target})): writes into either "
                                        "would have to reach the other bit by bit")
    return out


def split(x: Tracer, old: int, new: int) -> Tracer:
    """Each element of x as old // new unsigned pieces of `new` bytes, lowest first, along the last axis."""
    u = bits(x, unsigned(old))
    pieces = [expand_dims((u >> (8 * new * i)).astype(unsigned(new)), -1) for i in range(old // new)]
    joined_pieces = concatenate(pieces, -1)
    return reshape(joined_pieces, x.shape[:-1] + (x.shape[-1] * old // new,))


def joined(x: Tracer, old: int, new: int) -> Tracer:
    """Each new // old consecutive elements of x's last axis as one unsigned element of `new` bytes, lowest first."""
    ratio = new // old
    u = reshape(bits(x, unsigned(old)), x.shape[:-1] + (x.shape[-1] // ratio, ratio)).astype(unsigned(new))
    total = u[..., 0]
    for i in range(1, ratio):
        total = total | (u[..., i] << (8 * old * i))
    return total
