"""Numerical calculus at trace time, as NumPy writes it, from existing slices, diff and sum: np.trapezoid
(the widths times the mean of neighbours, summed), np.gradient (central and one-sided differences),
np.ediff1d and np.unwrap (differences corrected modulo a period, summed by cumsum)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import TracingError, UnsupportedError
from .core import IMPLEMENTATIONS, Tracer, as_array, fail, implements, normalize_axis, trace_of
from .shapes import reshape


@implements("trapezoid")
def trapezoid(y: Any, x: Any = None, dx: float = 1.0, axis: int = -1) -> Tracer:
    """sum(d * (y[1:] + y[:-1]) / 2.0) along `axis`, d the spacing `dx` or diff(x) (a 1-D x along that axis)."""
    trace = trace_of([y, x])
    y = as_array(trace, y)
    ax = normalize_axis(y.ndim, axis)
    d: Any = dx
    if x is not None:
        x = as_array(trace, x)
        d = IMPLEMENTATIONS["diff"](x) if x.ndim == 1 else IMPLEMENTATIONS["diff"](x, axis=axis)
        if x.ndim == 1:
            d = reshape(d, tuple(d.shape[0] if i == ax else 1 for i in range(y.ndim)))
    later = tuple(slice(1, None) if i == ax else slice(None) for i in range(y.ndim))
    earlier = tuple(slice(None, -1) if i == ax else slice(None) for i in range(y.ndim))
    return IMPLEMENTATIONS["sum"](d * (y[later] + y[earlier]) / 2.0, ax)


@implements("gradient")
def gradient(f: Any, *varargs: Any, axis: Any = None, edge_order: int = 1) -> Any:
    """NumPy's central differences inside and one-sided ones of `edge_order` 1 or 2 at the edges, along each axis, with
    a scalar spacing or coordinates per axis (constants or arguments: NumPy's uniform formulas when their steps are all
    equal, a choice made when the kernel runs for traced ones); ints as float64. One axis: an array, else a tuple."""
    trace = trace_of([f, *varargs])
    y = as_array(trace, f)
    axes = tuple(range(y.ndim)) if axis is None else tuple(normalize_axis(y.ndim, a) for a in (axis if isinstance(axis, (tuple, list)) else (axis,)))
    if not varargs:
        spacings = [1.0] * len(axes)
    elif len(varargs) == 1 and np.ndim(varargs[0]) == 0:
        spacings = list(varargs) * len(axes)
    elif len(varargs) == len(axes):
        spacings = [_steps(trace, d, y.shape[ax]) for d, ax in zip(varargs, axes, strict=True)]
    else:
        raise fail(TracingError, "invalid number of arguments")
    if edge_order not in (1, 2):
        raise fail(TracingError, "'edge_order' greater than 2 not supported" if edge_order > 2 else f"edge_order {edge_order!r} must be 1 or 2")
    if y.dtype.kind in "iub":
        y = y.astype("float64")
    outs = []
    for ax, dx in zip(axes, spacings, strict=True):
        if y.shape[ax] < edge_order + 1:
            raise fail(TracingError, "Shape of array too small to calculate a numerical gradient, at least (edge_order + 1) elements are required.")
        if isinstance(dx, Tracer) and dx.ndim:  # traced coordinates: NumPy's uniform formulas when every step is the first
            out = np.where(np.all(dx == dx[0]), _along(y, ax, dx[0], edge_order), _along(y, ax, dx, edge_order))
        else:
            out = _along(y, ax, dx, edge_order)
        outs.append(out.astype(y.dtype))
    return outs[0] if len(outs) == 1 else tuple(outs)


def _steps(trace: Any, distances: Any, n: int) -> Any:
    """An axis' spacing from np.gradient's argument: a scalar as is, coordinates as their steps (float64 for ints), a
    constant's steps one scalar when all equal (NumPy's uniform case)."""
    if np.ndim(distances) == 0:
        return distances
    d = as_array(trace, distances) if isinstance(distances, Tracer) else np.asarray(distances)
    if d.ndim != 1:
        raise fail(TracingError, "distances must be either scalars or 1d")
    if d.shape[0] != n:
        raise fail(TracingError, "when 1d, distances must match the length of the corresponding dimension")
    d = d.astype(np.float64) if d.dtype.kind in "iub" else d
    steps = d[1:] - d[:-1]
    return steps[0] if not isinstance(steps, Tracer) and (steps == steps[0]).all() else steps


def _along(y: Tracer, ax: int, dx: Any, edge_order: int) -> Tracer:
    """np.gradient's formulas along one axis for a scalar spacing or 1-D steps `dx` (in NumPy's order of operations)."""
    def part(start: Any, stop: Any) -> Tracer:
        return y[tuple(slice(start, stop) if i == ax else slice(None) for i in range(y.ndim))]

    if np.ndim(dx) == 0:
        inner = (part(2, None) - part(None, -2)) / (2.0 * dx)
        if edge_order == 1:
            first, last = (part(1, 2) - part(0, 1)) / dx, (part(-1, None) - part(-2, -1)) / dx
        else:
            first = -1.5 / dx * part(0, 1) + 2.0 / dx * part(1, 2) + -0.5 / dx * part(2, 3)
            last = 0.5 / dx * part(-3, -2) + -2.0 / dx * part(-2, -1) + 1.5 / dx * part(-1, None)
    else:
        shape = tuple(-1 if i == ax else 1 for i in range(y.ndim))
        dx1, dx2 = np.reshape(dx[:-1], shape), np.reshape(dx[1:], shape)
        a, b, c = -dx2 / (dx1 * (dx1 + dx2)), (dx2 - dx1) / (dx1 * dx2), dx1 / (dx2 * (dx1 + dx2))
        inner = a * part(None, -2) + b * part(1, -1) + c * part(2, None)
        if edge_order == 1:
            first, last = (part(1, 2) - part(0, 1)) / dx[0], (part(-1, None) - part(-2, -1)) / dx[-1]
        else:
            d1, d2 = dx[0], dx[1]
            first = (-(2.0 * d1 + d2) / (d1 * (d1 + d2)) * part(0, 1) + (d1 + d2) / (d1 * d2) * part(1, 2)
                     + -d1 / (d2 * (d1 + d2)) * part(2, 3))
            d1, d2 = dx[-2], dx[-1]
            last = (d2 / (d1 * (d1 + d2)) * part(-3, -2) + -(d2 + d1) / (d1 * d2) * part(-2, -1)
                    + (2.0 * d2 + d1) / (d2 * (d1 + d2)) * part(-1, None))
    return IMPLEMENTATIONS["concatenate"]([p for p in (first, inner, last) if p.shape[ax]], ax)


@implements("ediff1d")
def ediff1d(ary: Any, to_end: Any = None, to_begin: Any = None) -> Tracer:
    """The differences of the flattened array, with `to_begin` and `to_end` (flattened, cast to ary's
    dtype under NumPy's same_kind rule) around them."""
    trace = trace_of([ary, to_end, to_begin])
    x = as_array(trace, ary)
    x = reshape(x, (x.size,))
    parts = [x[1:] - x[:-1]]
    for name, extra, at in (("to_begin", to_begin, 0), ("to_end", to_end, len(parts) + 1)):
        if extra is None:
            continue
        extra = as_array(trace, extra)
        if not np.can_cast(extra.dtype, x.dtype, casting="same_kind"):
            raise fail(TracingError, f"dtype of `{name}` must be compatible with input `ary` under the `same_kind` rule.")
        parts.insert(at, reshape(extra, (extra.size,)).astype(x.dtype))
    return IMPLEMENTATIONS["concatenate"](parts) if len(parts) > 1 else parts[0]


@implements("unwrap")
def unwrap(p: Any, discont: Any = None, axis: int = -1, *, period: Any = 2 * np.pi) -> Tracer:
    """Steps between neighbours larger than `discont` (default period / 2) replaced by their value
    modulo `period`, the corrections summed along `axis`: NumPy's steps (ints exact with an int period)."""
    trace = trace_of([p])
    x = as_array(trace, p)
    ax = normalize_axis(x.ndim, axis)
    if any(isinstance(v, Tracer) for v in (discont, period)):
        raise fail(UnsupportedError, "np.unwrap with a traced `discont` or `period` is not supported; pass numbers")
    dd = IMPLEMENTATIONS["diff"](x, axis=ax)
    discont = period / 2 if discont is None else discont
    dtype = np.result_type(dd.dtype, period)
    if dtype.kind in "iu":
        high, rem = divmod(period, 2)
        ambiguous = rem == 0
    else:
        high, ambiguous = period / 2, True
    ddmod = np.mod(dd - -high, period) + -high
    if ambiguous:
        ddmod = np.where((ddmod == -high) & (dd > 0), high, ddmod)
    correction = np.where(np.abs(dd) < discont, 0, ddmod - dd).astype(dtype)
    later = tuple(slice(1, None) if i == ax else slice(None) for i in range(x.ndim))
    first = tuple(slice(0, 1) if i == ax else slice(None) for i in range(x.ndim))
    up = x.astype(dtype)
    if not x.shape[ax]:
        return up
    return IMPLEMENTATIONS["concatenate"]([up[first], (x[later] + np.cumsum(correction, axis=ax)).astype(dtype)], ax)
