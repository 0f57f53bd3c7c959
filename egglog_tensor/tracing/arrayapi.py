"""NumPy 2's array-API spellings (`np.matrix_transpose`, `np.vecdot`, `np.matvec`, `np.unstack`, `np.linalg.vector_norm`,
`matrix_norm`, `trace`, `diagonal`, `outer`, `matmul`, `tensordot`, `cross`): each as the function of NumPy's older
surface that computes it (NumPy's own definitions), so they fuse and round as those do."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..errors import TracingError
from .core import IMPLEMENTATIONS, Tracer, as_tracer, fail, implements, normalize_axes, normalize_axis, trace_of
from .linalg import operands
from .shapes import reshape


def _array(x: Any) -> Tracer:
    """x as a Tracer of its trace (two operands: linalg.operands)."""
    return as_tracer(trace_of([x]), x)


@implements("matrix_transpose", "linalg.matrix_transpose")
def matrix_transpose(x: Any) -> Tracer:
    """The last two axes swapped (a view)."""
    x = _array(x)
    if x.ndim < 2:
        raise fail(TracingError, "matrix_transpose: Input array must be at least 2-dimensional")
    return np.swapaxes(x, -1, -2)


@implements("unstack")
def unstack(x: Any, /, *, axis: int = 0) -> tuple[Tracer, ...]:
    """The views along `axis`, as NumPy's tuple(np.moveaxis(x, axis, 0))."""
    x = _array(x)
    if x.ndim == 0:
        raise fail(TracingError, "np.unstack: Input array must be at least 1-d.")
    return tuple(np.moveaxis(x, normalize_axis(x.ndim, axis), 0))


@implements("ufunc.vecdot", "linalg.vecdot")
def vecdot(x1: Any, x2: Any, /, *, axis: int = -1) -> Tracer:
    """The dot product of vectors along `axis`, the other axes broadcast (a contraction, as einsum's)."""
    a, b = operands(x1, x2)
    if a.ndim == 0 or b.ndim == 0:
        raise fail(TracingError, "vecdot: Input arrays must be at least 1-dimensional (a scalar has no vector axis)")
    a, b = np.moveaxis(a, normalize_axis(a.ndim, axis), -1), np.moveaxis(b, normalize_axis(b.ndim, axis), -1)
    if a.shape[-1] != b.shape[-1]:
        raise fail(TracingError, f"vecdot: the vector axes' sizes differ ({a.shape[-1]} and {b.shape[-1]})")
    return np.einsum("...i,...i->...", a, b)


@implements("ufunc.matvec")
def matvec(x1: Any, x2: Any, /) -> Tracer:
    """Matrix-vector products over broadcast stacks: (..., m, n) and (..., n) to (..., m)."""
    return _stacked("matvec", "...ij,...j->...i", x1, x2)


@implements("ufunc.vecmat")
def vecmat(x1: Any, x2: Any, /) -> Tracer:
    """Vector-matrix products over broadcast stacks: (..., m) and (..., m, n) to (..., n)."""
    return _stacked("vecmat", "...i,...ij->...j", x1, x2)


def _stacked(name: str, subscripts: str, x1: Any, x2: Any) -> Tracer:
    """The einsum of a gufunc's product (`subscripts`: its core dims after '...'), its operands' shapes checked."""
    a, b = operands(x1, x2)
    first, second = (len(core) - 3 for core in subscripts.split("->")[0].split(","))
    if a.ndim < first or b.ndim < second or a.shape[-1] != b.shape[-second]:
        raise fail(TracingError, f"{name}: shapes {a.shape} and {b.shape} do not fit its signature {getattr(np, name).signature}")
    return np.einsum(subscripts, a, b)


@implements("linalg.vector_norm")
def vector_norm(x: Any, /, *, axis: Any = None, keepdims: bool = False, ord: Any = 2) -> Tracer:
    """NumPy's: np.linalg.norm of x flattened (axis None) or of the given axes moved first and merged, as a vector norm."""
    x = _array(x)
    if axis is None:
        value = IMPLEMENTATIONS["linalg.norm"](reshape(x, (-1,)), ord, 0)
        return reshape(value, (1,) * x.ndim) if keepdims else value
    if not isinstance(axis, tuple):
        return IMPLEMENTATIONS["linalg.norm"](x, ord, axis, keepdims)
    axes = normalize_axes(x.ndim, axis)
    rest = tuple(i for i in range(x.ndim) if i not in axes)
    merged = reshape(np.transpose(x, axes + rest), (math.prod(x.shape[i] for i in axes), *(x.shape[i] for i in rest)))
    value = IMPLEMENTATIONS["linalg.norm"](merged, ord, 0)
    return reshape(value, tuple(1 if i in axes else n for i, n in enumerate(x.shape))) if keepdims else value


@implements("linalg.matrix_norm")
def matrix_norm(x: Any, /, *, keepdims: bool = False, ord: Any = "fro") -> Tracer:
    """np.linalg.norm over the last two axes."""
    return IMPLEMENTATIONS["linalg.norm"](_array(x), ord, (-2, -1), keepdims)


@implements("linalg.trace")
def linalg_trace(x: Any, /, *, offset: int = 0, dtype: Any = None) -> Tracer:
    """np.trace over the last two axes."""
    return IMPLEMENTATIONS["trace"](_array(x), offset, -2, -1, dtype)


@implements("linalg.diagonal")
def linalg_diagonal(x: Any, /, *, offset: int = 0) -> Tracer:
    """np.diagonal over the last two axes."""
    return IMPLEMENTATIONS["diagonal"](_array(x), offset, -2, -1)


@implements("linalg.outer")
def linalg_outer(x1: Any, x2: Any, /) -> Tracer:
    """np.outer of two 1-D arrays (np.linalg's refuses other ranks)."""
    a, b = operands(x1, x2)
    if a.ndim != 1 or b.ndim != 1:
        raise fail(TracingError, f"np.linalg.outer: Input arrays must be one-dimensional, but they are {a.ndim}-d and {b.ndim}-d")
    return IMPLEMENTATIONS["outer"](a, b)


@implements("linalg.matmul")
def linalg_matmul(x1: Any, x2: Any, /) -> Tracer:
    a, b = operands(x1, x2)
    return a @ b


@implements("linalg.tensordot")
def linalg_tensordot(x1: Any, x2: Any, /, *, axes: Any = 2) -> Tracer:
    return IMPLEMENTATIONS["tensordot"](x1, x2, axes)


@implements("linalg.cross")
def linalg_cross(x1: Any, x2: Any, /, *, axis: int = -1) -> Tracer:
    """np.cross of 3-vectors along `axis` (np.linalg's refuses 2-vectors)."""
    a, b = operands(x1, x2)
    if a.shape[axis] != 3 or b.shape[axis] != 3:
        raise fail(TracingError, f"np.linalg.cross: both input arrays must be (arrays of) 3-dimensional vectors, "
                                 f"but they are {a.shape[axis]} and {b.shape[axis]} dimensional instead")
    return IMPLEMENTATIONS["cross"](a, b, axis=axis)
