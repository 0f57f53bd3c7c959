"""Polynomials at trace time, as NumPy computes them: np.polyval (Horner's steps from zeros_like(x), so
NumPy's dtypes and rounding) and np.vander (columns of x's running products, multiply.accumulate's order)."""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..errors import TracingError
from .core import IMPLEMENTATIONS, Tracer, as_array, as_tracer, fail, implements, trace_of
from .rearrange import flip
from .shapes import broadcast_to, concatenate, reshape


@implements("polyval")
def polyval(p: Any, x: Any) -> Tracer:
    """y = y * x + p[i] for each coefficient, highest power first, from y = zeros_like(x)."""
    trace = trace_of([p, x])
    x = as_array(trace, x)
    p = p if isinstance(p, Tracer) else np.asarray(p)
    return horner(x, [IMPLEMENTATIONS["zeros_like"](x), *(p[i] for i in range(len(p)))])


def horner(x: Any, coefficients: Sequence[Any]) -> Any:
    """c0 * x**(n-1) + ... + c(n-1), highest power first, as Horner's running value * x + c (from c0 itself)."""
    value = coefficients[0]
    for c in coefficients[1:]:
        value = value * x + c
    return value


@implements("vander")
def vander(x: Any, N: Any = None, increasing: bool = False) -> Tracer:
    """Columns x**0, x**1, ... (decreasing unless `increasing`) in NumPy's dtype (x's promoted with int), the powers
    as x's running products."""
    x = as_array(trace_of([x]), x)
    if x.ndim != 1:
        raise fail(TracingError, "x must be a one-dimensional array or sequence.")
    n = len(x) if N is None else operator.index(N)
    dtype = np.promote_types(x.dtype, int).name
    column = reshape(x.astype(dtype), (x.shape[0], 1))
    parts = [broadcast_to(as_tracer(x._trace, np.ones((1, 1), dtype)), (x.shape[0], 1))][:n]
    if n > 1:
        parts.append(IMPLEMENTATIONS["ufunc.accumulate"](np.multiply, broadcast_to(column, (x.shape[0], n - 1)), axis=1))
    v = concatenate(parts, 1) if parts else broadcast_to(as_tracer(x._trace, np.zeros((1, 1), dtype)), (x.shape[0], 0))
    return v if increasing else flip(v, 1)
