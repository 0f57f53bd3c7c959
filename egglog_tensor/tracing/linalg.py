"""Contractions: matmul (`@`, np.matmul, batched), dot and outer."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import TracingError, UnsupportedError
from ..graph import Node
from ..spec import PYTHON_SCALARS
from .core import Trace, Tracer, as_tracer, fail, implements, result, trace_of
from .shapes import reshape
from .ufuncs import apply_ufunc


@implements("matmul")  # from apply_ufunc (np.matmul, @), on nodes of the resolved dtype
def matmul(trace: Trace, a: Node, b: Node) -> Tracer:
    if a.ndim == 0 or b.ndim == 0:
        raise fail(TracingError, "matmul: input operand does not have enough dimensions (0-d)")
    if a.ndim > 3 or b.ndim > 3 or (max(a.ndim, b.ndim) == 3 and min(a.ndim, b.ndim) == 1):
        raise fail(UnsupportedError, f"matmul of shapes {a.shape} @ {b.shape} is not supported (up to batched 3-D)")
    if a.dtype == "bool":
        raise fail(UnsupportedError, "matmul of bool arrays is not supported")
    if max(a.ndim, b.ndim) == 3:
        batch = max(a.shape[0] if a.ndim == 3 else 1, b.shape[0] if b.ndim == 3 else 1)
        a = broadcast_batch(trace, a, batch)
        b = broadcast_batch(trace, b, batch)
    return result(trace, trace.make("matmul", (a, b)))


def broadcast_batch(trace: Trace, x: Node, batch: int) -> Node:
    shape = (batch, *x.shape[-2:])
    if x.shape == shape:
        return x
    if x.ndim == 2:
        x = trace.make("reshape", (x,), ((1, *x.shape),))
    if x.shape[0] != 1:
        raise fail(TracingError, f"matmul: batch dimensions {x.shape[0]} and {batch} do not broadcast")
    return trace.make("broadcast_to", (x,), (shape,))


def strong(v: Any) -> Any:
    """An operand as np.dot / np.outer see it: a Python number (also a Python-number argument) is
    converted to an array first, so it is not weak: np.dot(float32, 2.0) is float64."""
    if isinstance(v, Tracer):
        return Tracer(v._trace, v._node) if v._weak else v
    return np.asarray(v) if type(v) in PYTHON_SCALARS else v


@implements("dot")
def dot(a: Any, b: Any, out: Any = None) -> Tracer:
    trace = trace_of([a, b])
    a, b = strong(a), strong(b)
    if out is not None:
        raise fail(UnsupportedError, "np.dot(out=...) is not supported")
    if np.ndim(a) == 0 or np.ndim(b) == 0:
        return apply_ufunc(trace, np.multiply, (a, b))
    if np.ndim(a) > 2 or np.ndim(b) > 2:
        raise fail(UnsupportedError, "np.dot of arrays with more than 2 dimensions is not supported; use matmul")
    return apply_ufunc(trace, np.matmul, (a, b))


@implements("outer")
def outer(a: Any, b: Any, out: Any = None) -> Tracer:
    trace = trace_of([a, b])
    a, b = reshape(as_tracer(trace, strong(a)), (-1, 1)), reshape(as_tracer(trace, strong(b)), (1, -1))
    return apply_ufunc(trace, np.multiply, (a, b))
