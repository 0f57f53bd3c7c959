"""scipy.ndimage's spline interpolation in a kernel: `map_coordinates`, `shift`, `zoom`, `affine_transform` (orders 0
to 5, every boundary mode, `cval`, `prefilter`, `output`; zoom's `grid_mode`; a constant or traced affine matrix).
SciPy runs them in C (ni_interpolation.c); while a kernel is traced (and scipy.ndimage was imported) they are replaced
in scipy.ndimage by these when an argument is traced (creation.replace_foreign_while_tracing, as
tracing/scipy_ndimage.py).

Each is SciPy's composition: the image's B-spline coefficients (tracing/splines.py's spline_filter, after SciPy's
12-sample prepadding for "nearest" and "grid-constant"), then at each output point, along each axis, the coordinate
mapped into the image by the boundary mode (map_coordinate), the first of the order + 1 taps, their indices mapped
by the prefilter's boundary (beyond the image: cval for "grid-constant") and their weights
(get_spline_interpolation_weights); the taps' coefficients are gathered and summed in SciPy's order (the footprint
row-major, each coefficient times each axis's weight in turn), cval where a coordinate falls outside in mode
"constant" or is NaN. Arrays and traced values run the same code: zoom's and shift's coordinates are constants, an
affine transform's the offset plus each column's term in turn; the arithmetic is C's in its order, so results are
SciPy's bit for bit. Integer outputs round half away from zero and clip, as SciPy's.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Callable
from typing import Any

import numpy as np

from ..errors import DataValueError, UnsupportedError
from .core import as_tracer, check_at_run_time, fail, trace_of, traced_or_ndarray
from .creation import replace_foreign_while_tracing, traced_or_original
from .scipy_ndimage import _dtype, _result
from .splines import spline_filter

_MODES = ("constant", "nearest", "mirror", "reflect", "grid-mirror", "wrap", "grid-wrap", "grid-constant")


def _mapped(x: Any, n: int, mode: str) -> Any:
    """ni_interpolation.c's map_coordinate: x (float64) mapped into [0, n - 1] by the boundary `mode` where outside it
    (-1 for "constant")."""
    if mode == "constant":
        outside_low = outside_high = -1.0
    elif mode == "nearest":
        outside_low, outside_high = 0.0, float(n - 1)
    elif n <= 1:
        outside_low = outside_high = 0.0
    elif mode == "mirror":
        period = 2 * n - 2
        low = period * np.trunc(-x / period) + x
        outside_low = np.where(low <= 1 - n, low + period, -low)
        high = x - period * np.trunc(x / period)
        outside_high = np.where(high >= n, period - high, high)
    elif mode in ("reflect", "grid-mirror"):
        period = 2 * n
        low = np.where(x < -period, period * np.trunc(-x / period) + x, x)
        outside_low = np.where(low < -n, low + period, np.where(low > -1e-15, 1e-15, -low) - 1)  # (SciPy's -1e-15 guard)
        high = x - period * np.trunc(x / period)
        outside_high = np.where(high >= n, period - high - 1, high)
    elif mode == "wrap":
        period = n - 1
        outside_low = x + period * (np.trunc(-x / period) + 1)
        outside_high = x - period * np.trunc(x / period)
    else:  # grid-wrap
        outside_low = x + n * (np.trunc((-1 - x) / n) + 1)
        outside_high = x - n * np.trunc(x / n)
    return np.where(x < 0, outside_low, np.where(x > n - 1, outside_high, x))


def _weights(x: Any, order: int) -> list[Any]:
    """ni_splines.c's get_spline_interpolation_weights: the order + 1 taps' weights at x, the last 1 less the others."""
    x = x - np.floor(x if order & 1 else x + 0.5)
    y, z = x, 1.0 - x
    if order == 1:
        w = [1.0 - x]
    elif order == 2:
        y = 0.5 - x
        w = [0.5 * y * y, 0.75 - x * x]
    elif order == 3:
        w = [z * z * z / 6.0, (y * y * (y - 2.0) * 3.0 + 4.0) / 6.0, (z * z * (z - 2.0) * 3.0 + 4.0) / 6.0]
    elif order == 4:
        t = x * x
        middle = t * (t * 0.25 - 0.625) + 115.0 / 192.0
        y = 1.0 + x
        w1 = y * (y * (y * (5.0 - y) / 6.0 - 1.25) + 5.0 / 24.0) + 55.0 / 96.0
        w3 = z * (z * (z * (5.0 - z) / 6.0 - 1.25) + 5.0 / 24.0) + 55.0 / 96.0
        t = (0.5 - x) * (0.5 - x)
        w = [t * t / 24.0, w1, middle, w3]
    else:
        t = y * y
        w2 = t * (t * (0.25 - y / 12.0) - 0.5) + 0.55
        t = z * z
        w3 = t * (t * (0.25 - z / 12.0) - 0.5) + 0.55
        y, z = y + 1.0, z + 1.0
        w1 = y * (y * (y * (y * (y / 24.0 - 0.375) + 1.25) - 1.75) + 0.625) + 0.425
        w4 = z * (z * (z * (z * (z / 24.0 - 0.375) + 1.25) - 1.75) + 0.625) + 0.425
        y = 1.0 - x
        t = y * y
        w = [y * t * t / 120.0, w1, w2, w3, w4]
    last = 1.0
    for weight in w:
        last = last - weight
    return [*w, last]


def _interpolated(coefficients: Any, coordinates: list[Any], order: int, mode: str, cval: float, pad: int) -> Any:
    """The spline of `order` through `coefficients` (float64) at the points whose coordinates along each axis are
    `coordinates` (broadcast together; pad added), as ni_interpolation.c's NI_GeometricTransform and NI_ZoomShift."""
    flat = coefficients.reshape(-1)
    taps_mode = "mirror" if mode in ("constant", "wrap") else mode
    mapped = mode not in ("grid-constant", "nearest")
    outside, axes = False, []
    strides = [int(np.prod(coefficients.shape[h + 1:])) for h in range(coefficients.ndim)]
    trace = trace_of([coefficients, *coordinates])
    for n, c in zip(coefficients.shape, coordinates, strict=True):
        c = as_tracer(trace, c) + float(pad)  # (traced: the taps are gathers at computed indices, even for constant coordinates)
        c = _mapped(c, n, mode) if mapped else c
        if mapped:
            outside = outside | ~(c > -1.0)  # (NaN too: SciPy's constant border)
            c = np.where(c > -1.0, c, 0.0)
        first = (np.floor(c if order & 1 else c + 0.5) - order // 2).astype(np.int64)
        taps = [first + k for k in range(order + 1)]
        beyond = [(t < 0) | (t >= n) for t in taps] if mode == "grid-constant" else None
        taps = [np.clip(t, 0, n - 1) if beyond else _mapped(t.astype(np.float64), n, taps_mode).astype(np.int64) for t in taps]
        axes.append((taps, beyond, _weights(c, order) if order else None))
    total = 0.0
    for footprint in itertools.product(range(order + 1), repeat=coefficients.ndim):
        index = sum(axis[0][k] * stride for axis, k, stride in zip(axes, footprint, strides, strict=True))
        value = np.take(flat, index)
        if mode == "grid-constant":
            value = np.where(functools.reduce(np.logical_or, [axis[1][k] for axis, k in zip(axes, footprint, strict=True)]), cval, value)
        for axis, k in zip(axes, footprint, strict=True):
            if order:
                value = value * axis[2][k]
        total = total + value
    return np.where(outside, cval, total) if mapped else total


def _stored(t: Any, like: Any, output: Any) -> Any:
    """t in the output dtype as ni_interpolation.c stores it: integers rounded half away from zero and clipped."""
    dtype = _dtype(like, output)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        rounded = np.where(t > 0, t + 0.5, t - 0.5 if dtype.kind == "i" else 0.0)
        t = np.clip(rounded, float(info.min), float(info.max))
    return _result(t, like, output)


def _coefficients(name: str, input: Any, order: int, mode: str, cval: float, prefilter: bool) -> tuple[Any, int]:
    """The B-spline coefficients of the image and SciPy's prepadding (12 samples for "nearest" and "grid-constant")."""
    if not isinstance(order, (int, np.integer)) or not 0 <= order <= 5:
        raise fail(UnsupportedError, f"scipy.ndimage.{name}: spline order {order!r} not supported (SciPy's: 0 to 5)")
    if mode not in _MODES:
        raise fail(UnsupportedError, f"scipy.ndimage.{name}: mode {mode!r} is not supported (supported: {', '.join(_MODES)})")
    x = traced_or_ndarray(input)
    if x.ndim < 1 or x.dtype.kind == "c":
        raise fail(UnsupportedError, f"scipy.ndimage.{name}: a real input of rank > 0 expected, got {x.dtype}{list(x.shape)}")
    if not (prefilter and order > 1):
        return x.astype(np.float64), 0
    pad = 12 if mode in ("nearest", "grid-constant") else 0
    if pad:
        x = np.pad(x, pad, mode="edge") if mode == "nearest" else np.pad(x, pad, mode="constant", constant_values=cval)
    return spline_filter(x, order, output=np.float64, mode=mode), pad


def map_coordinates(input: Any, coordinates: Any, output: Any = None, order: int = 3, mode: str = "constant", cval: float = 0.0,
                    prefilter: bool = True) -> Any:
    """The spline of `order` through input at each point of coordinates (input.ndim, ...): an array of its shape[1:]."""
    coefficients, pad = _coefficients("map_coordinates", input, order, mode, cval, prefilter)
    where = traced_or_ndarray(coordinates)
    if where.dtype.kind == "c" or where.ndim < 2 or where.shape[0] != coefficients.ndim:
        raise fail(UnsupportedError, f"scipy.ndimage.map_coordinates: real coordinates of shape ({coefficients.ndim}, ...) expected, "
                                     f"got {where.dtype}{list(where.shape)}")
    where = as_tracer(trace_of([coefficients, where]), where).astype(np.float64)
    t = _interpolated(coefficients, [where[h] for h in range(where.shape[0])], order, mode, float(cval), pad)
    return _stored(t, input, output)


def _along(axis: int, ndim: int, values: np.ndarray) -> np.ndarray:
    return values.reshape([-1 if d == axis else 1 for d in range(ndim)])


def shift(input: Any, shift: Any, output: Any = None, order: int = 3, mode: str = "constant", cval: float = 0.0,
          prefilter: bool = True) -> Any:
    """input shifted by `shift` (per axis), the spline of `order` at each output point less the shift."""
    coefficients, pad = _coefficients("shift", input, order, mode, cval, prefilter)
    ndim = np.ndim(input)
    amounts = np.broadcast_to(np.asarray(shift, dtype=np.float64), (ndim,))
    coordinates = [_along(h, ndim, np.arange(n, dtype=np.float64) + -amounts[h]) for h, n in enumerate(np.shape(input))]
    return _stored(_interpolated(coefficients, coordinates, order, mode, float(cval), pad), input, output)


def zoom(input: Any, zoom: Any, output: Any = None, order: int = 3, mode: str = "constant", cval: float = 0.0,
         prefilter: bool = True, *, grid_mode: bool = False) -> Any:
    """input resampled to round(shape * zoom) points per axis (the corners' centres aligned, or with grid_mode the
    pixels' edges), the spline of `order` at each."""
    coefficients, pad = _coefficients("zoom", input, order, mode, cval, prefilter)
    shape = np.shape(input)
    factors = np.broadcast_to(np.asarray(zoom, dtype=np.float64), (len(shape),))
    out_shape = tuple(int(round(n * f)) for n, f in zip(shape, factors, strict=True))
    if all(f == 1 for f in factors) and prefilter:
        return _result(traced_or_ndarray(input), input, output)
    coordinates = []
    for h, (n, m) in enumerate(zip(shape, out_shape, strict=True)):
        nominator, divisor = (n, m) if grid_mode else (n - 1, m - 1)
        ratio = nominator / divisor if divisor else 1.0
        c = np.arange(m, dtype=np.float64)
        c = (c + 0.5) * ratio - 0.5 if grid_mode else c * ratio
        coordinates.append(_along(h, len(shape), c))
    t = _interpolated(coefficients, coordinates, order, mode, float(cval), pad)
    return _stored(np.broadcast_to(t, out_shape), input, output)


def affine_transform(input: Any, matrix: Any, offset: Any = 0.0, output_shape: Any = None, output: Any = None, order: int = 3,
                     mode: str = "constant", cval: float = 0.0, prefilter: bool = True) -> Any:
    """The spline of `order` at matrix @ o + offset for each output point o (a homogeneous (ndim + 1)-square or
    ndim x (ndim + 1) matrix carries the offset; a 1-D matrix is a diagonal one, SciPy's zoom and shift)."""
    coefficients, pad = _coefficients("affine_transform", input, order, mode, cval, prefilter)
    ndim = np.ndim(input)
    if output_shape is None:
        output_shape = output.shape if hasattr(output, "shape") and not isinstance(output, (type, np.dtype)) else np.shape(input)
    output_shape = tuple(int(n) for n in output_shape)
    m = traced_or_ndarray(matrix, np.float64)
    if m.ndim == 2 and m.shape[1] == ndim + 1 and m.shape[0] in (ndim, ndim + 1):
        if m.shape[0] == ndim + 1:
            bottom = [0.0] * ndim + [1.0]
            message = f"scipy.ndimage.affine_transform: expected a homogeneous transformation matrix, its bottom row {bottom}"
            if isinstance(m, np.ndarray) and not np.all(m[ndim] == bottom):
                raise fail(DataValueError, message)
            if not isinstance(m, np.ndarray):
                check_at_run_time(m[ndim] != np.array(bottom), message, DataValueError, of="matrix ")
        m, offset = m[:ndim, :ndim], m[:ndim, ndim]
    if m.ndim not in (1, 2) or m.shape[0] != ndim or m.ndim == 2 and m.shape[1] != len(output_shape):
        raise fail(UnsupportedError, f"scipy.ndimage.affine_transform: a matrix of {ndim} rows and {len(output_shape)} columns "
                                     f"(or 1-D, or homogeneous) expected, got {list(m.shape)}")
    shift = np.broadcast_to(traced_or_ndarray(offset, np.float64), (ndim,))
    grids = [_along(h, len(output_shape), np.arange(n, dtype=np.float64)) for h, n in enumerate(output_shape)]
    if m.ndim == 1:  # (SciPy's zoom_shift: (o + offset / m) * m)
        coordinates = [(grids[h] + shift[h] / m[h]) * m[h] for h in range(ndim)]
    else:  # (ni_interpolation.c: the offset, then each column's term added in turn)
        coordinates = []
        for h in range(ndim):
            total = shift[h]
            for column, grid in enumerate(grids):
                total = total + grid * m[h, column]
            coordinates.append(total)
    t = _interpolated(coefficients, coordinates, order, mode, float(cval), pad)
    return _stored(np.broadcast_to(t, output_shape), input, output)


FUNCTIONS: dict[str, Callable[..., Any]] = {fn.__name__: fn for fn in (map_coordinates, shift, zoom, affine_transform)}


for _name, _ours in FUNCTIONS.items():
    replace_foreign_while_tracing(f"scipy.ndimage:{_name}", traced_or_original(_ours))
