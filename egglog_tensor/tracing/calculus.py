"""Numerical integration at trace time: np.trapezoid as NumPy writes it (the widths times the mean of
neighbours, summed), from the existing diff, slices and sum."""

from __future__ import annotations

from typing import Any

import numpy as np

from .core import IMPLEMENTATIONS, Tracer, as_tracer, implements, normalize_axis, trace_of
from .shapes import reshape


@implements("trapezoid")
def trapezoid(y: Any, x: Any = None, dx: float = 1.0, axis: int = -1) -> Tracer:
    """sum(d * (y[1:] + y[:-1]) / 2.0) along `axis`, d the spacing `dx` or diff(x) (a 1-D x along that axis)."""
    trace = trace_of([y, x])
    y = as_tracer(trace, y if isinstance(y, Tracer) else np.asarray(y))
    ax = normalize_axis(y.ndim, axis)
    d: Any = dx
    if x is not None:
        x = as_tracer(trace, x if isinstance(x, Tracer) else np.asarray(x))
        d = IMPLEMENTATIONS["diff"](x) if x.ndim == 1 else IMPLEMENTATIONS["diff"](x, axis=axis)
        if x.ndim == 1:
            d = reshape(d, tuple(d.shape[0] if i == ax else 1 for i in range(y.ndim)))
    later = tuple(slice(1, None) if i == ax else slice(None) for i in range(y.ndim))
    earlier = tuple(slice(None, -1) if i == ax else slice(None) for i in range(y.ndim))
    return IMPLEMENTATIONS["sum"](d * (y[later] + y[earlier]) / 2.0, ax)
