"""Polynomials at trace time, as NumPy computes them: np.polyval (Horner's steps from zeros_like(x), so
NumPy's dtypes and rounding), np.vander (columns of x's running products, multiply.accumulate's order) and
np.polyfit (NumPy's scaled Vandermonde least squares, on the kernel's np.linalg.lstsq)."""

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


@implements("polyfit")
def polyfit(x: Any, y: Any, deg: Any, rcond: Any = None, full: bool = False, w: Any = None, cov: Any = False) -> Any:
    """NumPy's least-squares fit: the Vandermonde matrix of x (weighted rows with `w`), its columns scaled to unit
    norm, lstsq with rcond len(x) eps, the coefficients scaled back; `full` gives (c, residuals, rank, s, rcond).
    NumPy's RankWarning (a rank known only at run time) is not raised; `cov` is refused."""
    trace = trace_of([x, y, w])
    x, y = as_array(trace, x) + 0.0, as_array(trace, y) + 0.0
    order = operator.index(deg) + 1
    if order < 1 or x.ndim != 1 or x.size == 0 or y.ndim not in (1, 2) or x.shape[0] != y.shape[0]:
        raise fail(TracingError, "np.polyfit: expected deg >= 0, a non-empty 1-D x and a 1-D or 2-D y of x's length")
    if cov:
        raise fail(TracingError, "np.polyfit(cov=...) is not supported in a kernel")
    rcond = len(x) * np.finfo(x.dtype).eps if rcond is None else rcond
    lhs, rhs = vander(x, order), y
    if w is not None:
        w = as_array(trace, w) + 0.0
        lhs = lhs * reshape(w, (w.shape[0], 1))
        rhs = rhs * (reshape(w, (w.shape[0], 1)) if rhs.ndim == 2 else w)
    scale = np.sqrt(np.sum(lhs * lhs, axis=0))
    c, residuals, rank, s = IMPLEMENTATIONS["linalg.lstsq"](lhs / scale, rhs, rcond)
    c = (c.T / scale).T
    return (c, residuals, rank, s, rcond) if full else c
