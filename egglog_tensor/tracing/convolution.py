"""1-D convolution and correlation at trace time (np.convolve, np.correlate): a matrix-vector product
with the Toeplitz matrix of the zero-padded longer operand, built from views (tile, reshape), then the
mode's slice of the full result, at NumPy's offsets; of floats without the padding's products (NumPy's: a
NaN or inf spreads only where it overlaps)."""

from __future__ import annotations

from typing import Any

import numpy as np

from .core import Tracer, as_array, fail, implements, trace_of
from .creation import iota
from .shapes import concatenate, reshape

_MODES = ("full", "same", "valid")


def _full_convolution(a: Tracer, v: Tracer) -> Tracer:
    """The full convolution of 1-D a and v (n + m - 1 elements): v @ W with W[j, k] = a[k - j] (0
    outside a), the rows of W read from the tiled [a, 0 * m] (each row one element further on). Of floats,
    the products with the padding are left out of the sum (where, not 0 * v[j]): NumPy sums only the
    overlapping products, so a NaN or inf in v reaches only the outputs it overlaps."""
    n, m = a.shape[0], v.shape[0]
    length = n + m - 1
    padded = concatenate([a, np.zeros(m, a.dtype)])  # length + 1 elements: row j starts j elements late
    rows = reshape(np.tile(padded, m)[: m * length], (m, length))
    if a.dtype.kind != "f" or m == 1:
        return v @ rows
    offset = iota(a._trace, (m, length), 1) - iota(a._trace, (m, length), 0)
    products = reshape(v, (m, 1)) * rows
    return np.sum(np.where((offset >= 0) & (offset < n), products, np.zeros((), a.dtype)), axis=0)


def _operands(name: str, a: Any, v: Any, mode: Any) -> tuple[Tracer, Tracer, str]:
    """a and v as 1-D tracers of their common dtype, checked as NumPy checks them."""
    trace = trace_of([a, v])
    a, v = (as_array(trace, x) for x in (a, v))
    if mode not in _MODES:
        raise fail(ValueError, f"np.{name}: mode must be one of {', '.join(map(repr, _MODES))}, not {mode!r}")
    if a.ndim > 1 or v.ndim > 1:
        raise fail(ValueError, f"np.{name}: object too deep for desired array (operands of shapes {a.shape} and {v.shape}; 1-D only)")
    a, v = (reshape(x, (x.size,)) for x in (a, v))
    if not a.size or not v.size:
        raise fail(ValueError, f"np.{name}: {'a' if not a.size else 'v'} cannot be empty")
    dtype = np.result_type(a, v)
    return a.astype(dtype), v.astype(dtype), mode


def _cut(full: Tracer, mode: str, n: int, m: int, same_start: int) -> Tracer:
    """The mode's part of the full result: all of it, max(n, m) elements from same_start, or the
    |n - m| + 1 elements where the shorter operand lies inside the longer."""
    if mode == "full":
        return full
    if mode == "same":
        return full[same_start: same_start + max(n, m)]
    return full[min(n, m) - 1: max(n, m)]


@implements("convolve")
def convolve(a: Any, v: Any, mode: str = "full") -> Tracer:
    """np.convolve (modes full, same, valid; the operands in either order, as NumPy swaps them)."""
    a, v, mode = _operands("convolve", a, v, mode)
    n, m = a.shape[0], v.shape[0]
    s = min(n, m)
    return _cut(_full_convolution(a, v) if n >= m else _full_convolution(v, a), mode, n, m, (s - 1) // 2)


@implements("correlate")
def correlate(a: Any, v: Any, mode: str = "valid") -> Tracer:
    """np.correlate: the convolution with v reversed; 'same' centred as NumPy centres it (which
    depends on which operand is longer)."""
    a, v, mode = _operands("correlate", a, v, mode)
    n, m = a.shape[0], v.shape[0]
    s = min(n, m)
    full = _full_convolution(a, v[::-1]) if n >= m else _full_convolution(v[::-1], a)
    return _cut(full, mode, n, m, s - 1 - s // 2 if n >= m else s // 2)
