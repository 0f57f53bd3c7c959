"""Polynomials at trace time, as NumPy computes them: np.polyval (Horner's steps from zeros_like(x), so
NumPy's dtypes and rounding), np.vander (columns of x's running products, multiply.accumulate's order),
np.polyfit (NumPy's scaled Vandermonde least squares, on the kernel's np.linalg.lstsq), and the coefficient
arithmetic np.polyder, polyint, polyadd, polysub and polymul (NumPy's own steps on the traced coefficients)."""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..errors import DataValueError, TracingError, UnsupportedError
from .core import (IMPLEMENTATIONS, Trace, Tracer, as_array, as_tracer, check_at_run_time, fail, implements, known_value,
                   trace_of)
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


@implements("polyder")
def polyder(p: Any, m: Any = 1) -> Tracer:
    """The m-th derivative's coefficients: p[:-1] * (n, n-1, ..., 1), m times (empty past the degree, as NumPy)."""
    m = operator.index(m)
    if m < 0:
        raise fail(ValueError, "Order of derivative must be positive (see polyint)")
    p = as_array(trace_of([p]), p)
    for _ in range(m):
        p = p[:-1] * np.arange(len(p) - 1, 0, -1)
    return p


@implements("polyint")
def polyint(p: Any, m: Any = 1, k: Any = None) -> Tracer:
    """The m-th antiderivative's coefficients: p / (n, n-1, ..., 1) then the integration constant k[i] appended,
    m times (k: a scalar for every step, or one per step; default zeros)."""
    m = operator.index(m)
    if m < 0:
        raise fail(ValueError, "Order of integral must be positive (see polyder)")
    trace = trace_of([p, k])
    k = as_array(trace, np.zeros(m) if k is None else k)
    k = reshape(k, (k.size,))
    if k.size == 1 and m > 1:
        k = broadcast_to(k, (m,)).astype(np.promote_types(k.dtype, np.float64))
    if k.size < m:
        raise fail(ValueError, "k must be a scalar or a rank-1 array of length 1 or >m.")
    p = as_array(trace, p)
    for i in range(m):
        p = concatenate([p / np.arange(len(p), 0, -1), k[i:i + 1]], 0)
    return p


@implements("roots")
def roots(p: Any) -> Tracer:
    """np.roots: refused with the reason (not the generic "not supported")."""
    raise fail(UnsupportedError, "np.roots is not supported in a kernel: the roots are the eigenvalues of a general "
                                 "(companion) matrix, complex in general, and their number depends on the values (NumPy "
                                 "trims leading and trailing zero coefficients); call it outside the kernel")


def _padded(a1: Any, a2: Any) -> tuple[Tracer, Tracer]:
    """a1 and a2 as 1-D (at least) coefficient arrays of one length: the shorter one's leading zeros added."""
    trace = trace_of([a1, a2])
    a1, a2 = (as_array(trace, a) for a in (a1, a2))
    a1, a2 = (reshape(a, (1,)) if a.ndim == 0 else a for a in (a1, a2))
    diff = len(a2) - len(a1)
    if diff > 0:
        a1 = concatenate([as_tracer(trace, np.zeros(diff, a1.dtype)), a1], 0)
    elif diff < 0:
        a2 = concatenate([as_tracer(trace, np.zeros(-diff, a2.dtype)), a2], 0)
    return a1, a2


@implements("polyadd")
def polyadd(a1: Any, a2: Any) -> Tracer:
    """The sum's coefficients (highest power first: the shorter one aligned on the constant term)."""
    a1, a2 = _padded(a1, a2)
    return a1 + a2


@implements("polysub")
def polysub(a1: Any, a2: Any) -> Tracer:
    """The difference's coefficients (as polyadd)."""
    a1, a2 = _padded(a1, a2)
    return a1 - a2


@implements("polymul")
def polymul(a1: Any, a2: Any) -> Tracer:
    """The product's coefficients: the full convolution of the two coefficient arrays, each as np.poly1d makes it
    (leading zeros trimmed: of a constant while tracing; of a traced array, a shape known only at run time, so a
    leading zero raises DataValueError after the call)."""
    trace = trace_of([a1, a2])
    return IMPLEMENTATIONS["convolve"](*(_poly1d(trace, a) for a in (a1, a2)))


def _poly1d(trace: Trace, a: Any) -> Tracer:
    """a's coefficients as np.poly1d holds them: 1-D, leading zeros trimmed (at least one coefficient)."""
    known = known_value(a) if isinstance(a, Tracer) else a
    if known is not None:
        return as_tracer(trace, np.poly1d(known).coeffs)
    if a.ndim > 1:
        raise fail(ValueError, "Polynomial must be 1d only.")
    a = reshape(a, (1,)) if a.ndim == 0 else a
    if a.size == 0:
        return as_tracer(trace, np.zeros(1, a.dtype))
    if a.size > 1:
        check_at_run_time(a[0] == 0, "np.polymul: a leading zero coefficient (NumPy trims it, which changes the "
                                     "result's shape: trim it before the kernel)", DataValueError)
    return a

