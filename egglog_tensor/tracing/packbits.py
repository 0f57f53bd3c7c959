"""np.packbits and np.unpackbits at trace time, as NumPy computes them: packing reads each element as a bit
(nonzero: 1), pads the axis with zero bits to whole bytes and sums each byte's eight bits times their weights
(128 ... 1 for bitorder "big", 1 ... 128 for "little") as uint8; unpacking shifts each uint8 right by the
bits' positions and keeps the low bit, count bits kept (or zero bits added) along the axis."""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

from ..errors import UnsupportedError
from .core import Tracer, as_array, fail, implements, normalize_axis, trace_of
from .rearrange import moveaxis
from .shapes import concatenate, reshape


def _weights(bitorder: str, name: str) -> np.ndarray:
    """Each of a byte's eight bits' value, in the order they are read or written."""
    if bitorder not in ("big", "little"):
        raise fail(ValueError, f"np.{name}: 'order' must be either 'little' or 'big'")
    weights = 1 << np.arange(8, dtype=np.uint8)
    return weights[::-1].copy() if bitorder == "big" else weights


def _on_last_axis(name: str, a: Any, axis: Any) -> tuple[Tracer, int | None]:
    """a with the axis to (un)pack last (axis None: a flattened), and that axis as given (normalized)."""
    x = as_array(trace_of([a]), a)
    if x.dtype.kind not in "biu":
        raise fail(TypeError, f"Expected an input array of integer or boolean data type (np.{name} of {x.dtype})")
    if axis is None:
        return reshape(x, (x.size,)), None
    axis = normalize_axis(x.ndim, operator.index(axis))
    return moveaxis(x, axis, -1), axis


@implements("packbits")
def packbits(a: Any, axis: Any = None, bitorder: str = "big") -> Tracer:
    """Eight elements of the axis (zero bits added to the last byte) as one uint8, in `bitorder`."""
    weights = _weights(bitorder, "packbits")
    x, axis = _on_last_axis("packbits", a, axis)
    n = x.shape[-1]
    bits = (x != 0).astype(np.uint8)
    if n % 8:
        bits = concatenate([bits, np.zeros(x.shape[:-1] + (8 - n % 8,), np.uint8)], -1)
    packed = np.sum(reshape(bits, bits.shape[:-1] + (bits.shape[-1] // 8, 8)) * weights, axis=-1, dtype=np.uint8)
    return packed if axis is None else moveaxis(packed, -1, axis)


@implements("unpackbits")
def unpackbits(a: Any, axis: Any = None, count: Any = None, bitorder: str = "big") -> Tracer:
    """Each uint8 of the axis as its eight bits (uint8 0 or 1) in `bitorder`; `count` bits kept (negative:
    that many dropped from the end; more than there are: zero bits added)."""
    weights = _weights(bitorder, "unpackbits")
    x = as_array(trace_of([a]), a)
    if x.dtype != np.uint8:
        raise fail(TypeError, f"Expected an input array of unsigned byte data type (np.unpackbits of {x.dtype})")
    if isinstance(count, Tracer):
        raise fail(UnsupportedError, "np.unpackbits: a traced `count` is not supported (it sets the result's shape)")
    x, axis = _on_last_axis("unpackbits", x, axis)
    bits = ((reshape(x, x.shape + (1,)) & weights) != 0).astype(np.uint8)
    bits = reshape(bits, x.shape[:-1] + (x.shape[-1] * 8,))
    if count is not None:
        count = operator.index(count)
        total = bits.shape[-1]
        keep = count if count >= 0 else total + count
        if keep < 0:
            raise fail(ValueError, f"np.unpackbits: -count larger than number of elements ({count}, {total} bits)")
        bits = bits[..., :keep] if keep <= total else concatenate(
            [bits, np.zeros(bits.shape[:-1] + (keep - total,), np.uint8)], -1)
    return bits if axis is None else moveaxis(bits, -1, axis)
