"""scipy.ndimage's linear and min/max filters in a kernel: SciPy runs them in C, which traced arrays cannot reach;
while a kernel is traced (and scipy.ndimage was imported) they are replaced in scipy.ndimage by these when an
argument is traced (creation.replace_foreign_while_tracing, as tracing/scipy_linalg.py).

Each filter is its window's sum (or min, max) of shifted slices of the input padded by np.pad (ndimage's boundary
modes: `reflect` and `grid-mirror` are np.pad's "symmetric", `mirror` its "reflect", `nearest` "edge", `wrap` and
`grid-wrap` "wrap", `constant` and `grid-constant` the constant `cval`), in float64 as ndimage's line buffers, the
result in the input's dtype (integers truncated, as ndimage's cast): `correlate1d convolve1d correlate convolve`
(`origin`, `axes`), `uniform_filter1d uniform_filter`, `gaussian_filter1d gaussian_filter` (SciPy's own kernel,
`order`, `truncate`, `radius`), `minimum_filter1d maximum_filter1d minimum_filter maximum_filter` (`size`; a
`footprint` too), `median_filter rank_filter percentile_filter` (each window's values sorted, NumPy's sort: NaN
last), `sobel prewitt laplace`; `output=` a dtype or an array (written in place and returned, as SciPy).
The window's terms are unrolled in the trace: one term per weight. The spline prefilter is tracing/splines.py's, the
spline interpolation (map_coordinates, shift, zoom, affine_transform) tracing/interpolation.py's; other ndimage
functions (generic_filter, rotate, morphology) keep SciPy's (their error names the compiled code).
"""

from __future__ import annotations

import itertools
import sys
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..errors import UnsupportedError
from .core import fail, traced_or_ndarray
from .creation import replace_foreign_while_tracing, traced_or_original

_PADS = {"reflect": "symmetric", "grid-mirror": "symmetric", "mirror": "reflect", "nearest": "edge", "wrap": "wrap",
         "grid-wrap": "wrap", "constant": "constant", "grid-constant": "constant"}


def _dtype(like: Any, output: Any) -> np.dtype:
    """ndimage's output dtype: the input's, `output` when it names a dtype, or the output array's."""
    if output is None:
        return np.dtype(like.dtype)
    return np.dtype(output) if isinstance(output, (type, np.dtype, str)) else np.dtype(output.dtype)


def _result(value: Any, like: Any, output: Any) -> Any:
    """value in ndimage's output dtype (integers truncated, as ndimage's cast); written into `output` when that is an
    array (one made in the kernel, or an argument: updated as NumPy's in-place writes are), which is returned."""
    value = value.astype(_dtype(like, output))
    if output is None or isinstance(output, (type, np.dtype, str)):
        return value
    output[...] = value
    return output


def _per_axis(value: Any, ndim: int, name: str) -> list[Any]:
    values = list(value) if isinstance(value, (list, tuple, np.ndarray)) else [value] * ndim
    if len(values) != ndim:
        raise fail(UnsupportedError, f"scipy.ndimage: {name} needs one value per axis ({ndim}), got {len(values)}")
    return values


def _padded(x: Any, before: Sequence[int], after: Sequence[int], mode: str, cval: float) -> Any:
    """x extended by `before`/`after` elements per axis as ndimage's boundary `mode` extends it."""
    if mode not in _PADS:
        raise fail(UnsupportedError, f"scipy.ndimage: mode {mode!r} is not supported (supported: {', '.join(_PADS)})")
    widths = list(zip(before, after, strict=True))
    if _PADS[mode] == "constant":
        return np.pad(x, widths, mode="constant", constant_values=cval)
    return np.pad(x, widths, mode=_PADS[mode])


def _window(x: Any, shape: Sequence[int], origins: Sequence[int], mode: str, cval: float,
            fold: Callable[[Any, Any, tuple[int, ...]], Any]) -> Any:
    """fold(total, slice, offset) over the window's offsets: each offset's slice of x padded so that element i of
    the slice is x[i + offset - (size // 2 + origin)] (ndimage's centre and origin on each axis)."""
    for size, origin in zip(shape, origins, strict=True):
        if not -(size // 2) <= origin <= (size - 1) // 2:
            raise fail(UnsupportedError, f"scipy.ndimage: invalid origin {origin} for a window of {size}")
    before = [size // 2 + origin for size, origin in zip(shape, origins, strict=True)]
    after = [size - 1 - b for size, b in zip(shape, before, strict=True)]
    padded = _padded(x, before, after, mode, cval)
    total = None
    for offset in itertools.product(*(range(size) for size in shape)):
        piece = padded[tuple(slice(o, o + n) for o, n in zip(offset, x.shape, strict=True))]
        total = fold(total, piece, offset)
    return total if total is not None else x * 0  # (every weight 0)


def _axes(ndim: int, axes: Any) -> list[int]:
    chosen = range(ndim) if axes is None else [axes] if isinstance(axes, int) else list(axes)
    return [a % ndim for a in chosen]


def _line(ndim: int, axis: int, size: int) -> list[int]:
    return [size if a == axis else 1 for a in range(ndim)]


def correlate1d(input: Any, weights: Any, axis: int = -1, output: Any = None, mode: str = "reflect", cval: float = 0.0,
                origin: int = 0) -> Any:
    x = traced_or_ndarray(input, np.float64)  # (ndimage's line buffers)
    w = np.asarray(weights, dtype=np.float64)
    axis %= x.ndim
    origins = [origin if a == axis else 0 for a in range(x.ndim)]
    value = _window(x, _line(x.ndim, axis, len(w)), origins, mode, cval, _weighted(lambda offset: w[offset[axis]], nonzero=False))
    return _result(value, input, output)


def _weighted(weight: Callable[[tuple[int, ...]], float], nonzero: bool) -> Callable[[Any, Any, tuple[int, ...]], Any]:
    """The fold of a correlation: each slice times its offset's weight, added; with `nonzero`, zero weights left out
    (N-D correlate's footprint of the nonzero weights: a NaN there does not spread; correlate1d multiplies them)."""
    def add(total: Any, piece: Any, offset: tuple[int, ...]) -> Any:
        w = weight(offset)
        if nonzero and w == 0:
            return total
        return piece * w if total is None else total + piece * w

    return add


def convolve1d(input: Any, weights: Any, axis: int = -1, output: Any = None, mode: str = "reflect", cval: float = 0.0,
               origin: int = 0) -> Any:
    """correlate1d with the weights reversed and the origin mirrored (one more step left for an even size), as SciPy."""
    w = np.asarray(weights)[::-1]
    return correlate1d(input, w, axis, output, mode, cval, -origin - (1 - len(w) % 2))


def correlate(input: Any, weights: Any, output: Any = None, mode: str = "reflect", cval: float = 0.0, origin: Any = 0, *,
              axes: Any = None) -> Any:
    x = traced_or_ndarray(input, np.float64)  # (ndimage's line buffers)
    w = np.asarray(weights, dtype=np.float64)
    chosen = _axes(x.ndim, axes)
    if w.ndim != len(chosen):
        raise fail(UnsupportedError, f"scipy.ndimage.correlate: weights of {w.ndim} dimensions for {len(chosen)} axes")
    shape, origins = [1] * x.ndim, [0] * x.ndim
    for a, size, o in zip(chosen, w.shape, _per_axis(origin, len(chosen), "origin"), strict=True):
        shape[a], origins[a] = size, o
    value = _window(x, shape, origins, mode, cval, _weighted(lambda offset: w[tuple(offset[a] for a in chosen)], nonzero=True))
    return _result(value, input, output)


def convolve(input: Any, weights: Any, output: Any = None, mode: str = "reflect", cval: float = 0.0, origin: Any = 0, *,
             axes: Any = None) -> Any:
    w = np.asarray(weights)
    flipped = w[tuple(slice(None, None, -1) for _ in range(w.ndim))]
    origins = [-o - (1 - size % 2) for o, size in zip(_per_axis(origin, w.ndim, "origin"), w.shape, strict=True)]
    return correlate(input, flipped, output, mode, cval, origins, axes=axes)


def _separable(one: Callable[..., Any], input: Any, per_axis: dict[str, Any], axes: Any, output: Any, name: str,
               skip: Callable[[dict[str, Any]], bool] = lambda _: False, **common: Any) -> Any:
    """`one` (a 1-D filter) along each chosen axis in turn, its per-axis arguments from per_axis; each pass's result
    in the output dtype, which the next reads (as SciPy passes its output array on)."""
    dtype = _dtype(input, output)
    x = traced_or_ndarray(input)
    chosen = _axes(x.ndim, axes)
    columns = {k: _per_axis(v, len(chosen), k) for k, v in per_axis.items()}
    for i, axis in enumerate(chosen):
        arguments = {k: v[i] for k, v in columns.items()}
        if not skip(arguments):
            x = one(x, axis=axis, output=dtype, **arguments, **common)
    return _result(x, input, output)


def uniform_filter1d(input: Any, size: int, axis: int = -1, output: Any = None, mode: str = "reflect", cval: float = 0.0,
                     origin: int = 0) -> Any:
    if size < 1:
        raise fail(UnsupportedError, "scipy.ndimage.uniform_filter1d: incorrect filter size")
    x = traced_or_ndarray(input, np.float64)  # (ndimage's line buffers)
    axis %= x.ndim
    origins = [origin if a == axis else 0 for a in range(x.ndim)]
    total = _window(x, _line(x.ndim, axis, size), origins, mode, cval, lambda t, piece, offset: piece if t is None else t + piece)
    return _result(total / size, input, output)


def uniform_filter(input: Any, size: Any = 3, output: Any = None, mode: str = "reflect", cval: float = 0.0, origin: Any = 0, *,
                   axes: Any = None) -> Any:
    return _separable(uniform_filter1d, input, {"size": size, "origin": origin, "mode": mode}, axes, output, "uniform_filter",
                      skip=lambda a: a["size"] <= 1, cval=cval)


def _extreme1d(pick: Callable[[Any, Any], Any], name: str) -> Callable[..., Any]:
    def filter1d(input: Any, size: int, axis: int = -1, output: Any = None, mode: str = "reflect", cval: float = 0.0,
                 origin: int = 0) -> Any:
        if size < 1:
            raise fail(UnsupportedError, f"scipy.ndimage.{name}: incorrect filter size")
        x = traced_or_ndarray(input)
        axis %= x.ndim
        origins = [origin if a == axis else 0 for a in range(x.ndim)]
        value = _window(x, _line(x.ndim, axis, size), origins, mode, cval, lambda t, piece, offset: piece if t is None else pick(t, piece))
        return _result(value, input, output)

    filter1d.__name__ = name
    return filter1d


def _footprint(x: Any, size: Any, footprint: Any, origin: Any, axes: Any, name: str) -> tuple[list[int], list[int], Callable[[tuple[int, ...]], bool], int]:
    """The window's extent and origin on each axis of x, which of its offsets are in the footprint (all, for a `size`),
    and how many are."""
    chosen = _axes(x.ndim, axes)
    if footprint is None:
        if size is None:
            raise fail(UnsupportedError, f"scipy.ndimage.{name}: no footprint or filter size provided")
        mask = np.ones([int(s) for s in _per_axis(size, len(chosen), "size")], dtype=bool)
    else:
        mask = np.asarray(footprint, dtype=bool)
    shape, origins = [1] * x.ndim, [0] * x.ndim
    for a, extent, o in zip(chosen, mask.shape, _per_axis(origin, len(chosen), "origin"), strict=True):
        shape[a], origins[a] = extent, o
    return shape, origins, lambda offset: bool(mask[tuple(offset[a] for a in chosen)]), int(mask.sum())


def _ranked(input: Any, rank: Callable[[int], int], size: Any, footprint: Any, output: Any, mode: str, cval: float, origin: Any,
            axes: Any, name: str) -> Any:
    """Each window's rank(count)-th smallest value (NumPy's sort: NaN last) over the footprint's elements."""
    x = traced_or_ndarray(input)
    shape, origins, selected, count = _footprint(x, size, footprint, origin, axes, name)
    r = rank(count)
    if not 0 <= r < count:
        raise fail(UnsupportedError, f"scipy.ndimage.{name}: rank not within filter footprint size")
    pieces = _window(x, shape, origins, mode, cval, lambda total, piece, offset: (total or []) + [piece] if selected(offset) else total)
    return _result(np.sort(np.stack(pieces, axis=-1), axis=-1)[..., r], input, output)


def median_filter(input: Any, size: Any = None, footprint: Any = None, output: Any = None, mode: str = "reflect", cval: float = 0.0,
                  origin: Any = 0, *, axes: Any = None) -> Any:
    return _ranked(input, lambda count: count // 2, size, footprint, output, mode, cval, origin, axes, "median_filter")


def rank_filter(input: Any, rank: int, size: Any = None, footprint: Any = None, output: Any = None, mode: str = "reflect",
                cval: float = 0.0, origin: Any = 0, *, axes: Any = None) -> Any:
    return _ranked(input, lambda count: rank + count if rank < 0 else rank, size, footprint, output, mode, cval, origin, axes,
                   "rank_filter")


def percentile_filter(input: Any, percentile: float, size: Any = None, footprint: Any = None, output: Any = None,
                      mode: str = "reflect", cval: float = 0.0, origin: Any = 0, *, axes: Any = None) -> Any:
    def rank(count: int) -> int:
        p = percentile + 100.0 if percentile < 0 else percentile
        r = int(float(count) * p / 100.0)
        return r - 1 if r == count else r

    return _ranked(input, rank, size, footprint, output, mode, cval, origin, axes, "percentile_filter")


def _extreme(pick: Callable[[Any, Any], Any], one: Callable[..., Any], name: str) -> Callable[..., Any]:
    def nd_filter(input: Any, size: Any = None, footprint: Any = None, output: Any = None, mode: str = "reflect", cval: float = 0.0,
                  origin: Any = 0, *, axes: Any = None) -> Any:
        x = traced_or_ndarray(input)
        if footprint is None:
            if size is None:
                raise fail(UnsupportedError, f"scipy.ndimage.{name}: no footprint or filter size provided")
            return _separable(one, x, {"size": size, "origin": origin, "mode": mode}, axes, output, name,
                              skip=lambda a: a["size"] <= 1, cval=cval)
        shape, origins, selected, _ = _footprint(x, size, footprint, origin, axes, name)

        def fold(total: Any, piece: Any, offset: tuple[int, ...]) -> Any:
            if not selected(offset):
                return total
            return piece if total is None else pick(total, piece)

        return _result(_window(x, shape, origins, mode, cval, fold), input, output)

    nd_filter.__name__ = name
    return nd_filter


# NaN pixels are passed over (np.fmin/fmax: NaN only where the whole window is); SciPy's C loops compare as they go,
# so whether its window with a NaN gives NaN depends on where in the window the NaN lies
minimum_filter1d = _extreme1d(np.fmin, "minimum_filter1d")
maximum_filter1d = _extreme1d(np.fmax, "maximum_filter1d")
minimum_filter = _extreme(np.fmin, minimum_filter1d, "minimum_filter")
maximum_filter = _extreme(np.fmax, maximum_filter1d, "maximum_filter")


def gaussian_filter1d(input: Any, sigma: float, axis: int = -1, order: int = 0, output: Any = None, mode: str = "reflect",
                      cval: float = 0.0, truncate: float = 4.0, *, radius: Any = None) -> Any:
    """SciPy's sampled Gaussian (or its order-th derivative) of radius int(truncate sigma + 0.5), correlated."""
    kernel = sys.modules["scipy.ndimage._filters"]._gaussian_kernel1d  # (SciPy's own weights, computed on constants)
    sd = float(sigma)
    reach = int(truncate * sd + 0.5) if radius is None else radius
    if not isinstance(reach, (int, np.integer)) or reach < 0:
        raise fail(UnsupportedError, "scipy.ndimage.gaussian_filter1d: radius must be a nonnegative integer")
    return correlate1d(input, kernel(sd, order, int(reach))[::-1], axis, output, mode, cval, 0)


def gaussian_filter(input: Any, sigma: Any, order: Any = 0, output: Any = None, mode: str = "reflect", cval: float = 0.0,
                    truncate: float = 4.0, *, radius: Any = None, axes: Any = None) -> Any:
    return _separable(gaussian_filter1d, input, {"sigma": sigma, "order": order, "mode": mode, "radius": radius}, axes, output,
                      "gaussian_filter", skip=lambda a: a["sigma"] <= 1e-15, cval=cval, truncate=truncate)


def _derivative(smoothing: Sequence[float], name: str) -> Callable[..., Any]:
    """sobel, prewitt: the difference [-1, 0, 1] along `axis`, the smoothing weights along the others."""
    def edge(input: Any, axis: int = -1, output: Any = None, mode: Any = "reflect", cval: float = 0.0) -> Any:
        dtype = _dtype(input, output)
        ndim = np.ndim(input)
        axis %= ndim
        modes = _per_axis(mode, ndim, "mode")
        x = correlate1d(input, [-1, 0, 1], axis, dtype, modes[axis], cval)
        for other in (a for a in range(ndim) if a != axis):
            x = correlate1d(x, smoothing, other, dtype, modes[other], cval)
        return _result(x, input, output)

    edge.__name__ = name
    return edge


sobel = _derivative([1, 2, 1], "sobel")
prewitt = _derivative([1, 1, 1], "prewitt")


def laplace(input: Any, output: Any = None, mode: Any = "reflect", cval: float = 0.0, *, axes: Any = None) -> Any:
    """The sum over the axes of the second differences [1, -2, 1], each in the output dtype, added in it (as SciPy)."""
    dtype = _dtype(input, output)
    chosen = _axes(np.ndim(input), axes)
    modes = _per_axis(mode, len(chosen), "mode")
    total = None
    for axis, axis_mode in zip(chosen, modes, strict=True):
        term = correlate1d(input, [1, -2, 1], axis, dtype, axis_mode, cval)
        total = term if total is None else total + term
    return _result(total, input, output)


FUNCTIONS: dict[str, Callable[..., Any]] = {fn.__name__: fn for fn in (
    correlate1d, convolve1d, correlate, convolve, uniform_filter1d, uniform_filter, gaussian_filter1d, gaussian_filter,
    minimum_filter1d, maximum_filter1d, minimum_filter, maximum_filter, median_filter, rank_filter, percentile_filter, sobel,
    prewitt, laplace)}


for _name, _ours in FUNCTIONS.items():
    replace_foreign_while_tracing(f"scipy.ndimage:{_name}", traced_or_original(_ours))
# (scipy.signal's savgol_filter binds convolve1d at its import)
replace_foreign_while_tracing("scipy.signal._savitzky_golay:convolve1d", traced_or_original(convolve1d))
