"""scipy.ndimage's morphology in kernels: SciPy's own Python functions (grey_erosion, grey_dilation, their openings,
closings, gradients, laplace and top-hats; binary_erosion, binary_dilation, their openings and closings,
binary_hit_or_miss) trace unchanged once the two private functions they call the C code through are replaced while
tracing: `_filters._min_or_max_filter` (a minimum or maximum over a footprint, less or plus a structuring element's
values) and `_morphology._binary_erosion` (an AND over the structure's offsets, an OR for a dilation, repeated a static
number of times). Iterating until nothing changes (iterations < 1: binary_propagation, binary_fill_holes) takes a
data-dependent number of steps and is refused by name.
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

from ..errors import UnsupportedError
from .core import Tracer, fail, known_value, traced_or_ndarray
from .creation import replace_foreign_while_tracing, traced_or_original
from .scipy_ndimage import _axes, _footprint, _result, _window, maximum_filter, minimum_filter


def _concrete(value: Any, what: str, name: str) -> np.ndarray:
    """A structuring element or footprint, which decides the window's shape: a traced one is refused."""
    if isinstance(value, Tracer):
        if (known := known_value(value)) is None:
            raise fail(UnsupportedError, f"scipy.ndimage.{name}: the {what} must be known while tracing (it shapes the window): "
                                         "a NumPy array or one made of constants, not a value computed from the arguments")
        return known
    return np.asarray(value)


def min_or_max_filter(input: Any, size: Any, footprint: Any, structure: Any, output: Any, mode: Any, cval: float, origin: Any,
                      minimum: int, axes: Any = None) -> Any:
    """SciPy's `_min_or_max_filter`: without a structure, minimum_filter/maximum_filter; with one, each window's
    minimum of x - s (maximum of x + s) over the footprint (all of the structure's offsets by default), computed in
    x's dtype as ndimage's C loop (integers wrap around), cast to the output dtype."""
    name = "grey_erosion" if minimum else "grey_dilation"
    if structure is None:
        if footprint is not None and not _concrete(footprint, "footprint", name).any():
            raise fail(UnsupportedError, f"scipy.ndimage.{name}: all-zero footprint is not supported")
        pick = minimum_filter if minimum else maximum_filter
        return pick(input, size, footprint, output, mode, cval, origin, axes=axes)
    weights = _concrete(structure, "structure", name).astype(np.float64)
    mask = np.ones(weights.shape, bool) if footprint is None else _concrete(footprint, "footprint", name).astype(bool)
    if not isinstance(mode, str):
        raise fail(UnsupportedError, f"scipy.ndimage.{name}: a sequence of modes is not supported for non-separable footprints")
    if mask.shape != weights.shape:
        raise fail(UnsupportedError, f"scipy.ndimage.{name}: structure {weights.shape} and footprint {mask.shape} differ in shape")
    x = traced_or_ndarray(input)
    shape, origins, selected, _ = _footprint(x, None, mask, origin, axes, name)
    chosen = _axes(x.ndim, axes)
    pick = np.fmin if minimum else np.fmax

    def fold(total: Any, piece: Any, offset: tuple[int, ...]) -> Any:
        if not selected(offset):
            return total
        weight = weights[tuple(offset[a] for a in chosen)].astype(x.dtype)  # (in the input's dtype, as ndimage's C loop)
        value = piece - weight if minimum else piece + weight
        return value if total is None else pick(total, value)

    return _result(_window(x, shape, origins, mode, cval, fold), input, output)


def binary_erosion(input: Any, structure: Any, iterations: Any, mask: Any, output: Any, border_value: Any, origin: Any,
                   invert: int, brute_force: bool, axes: Any) -> Any:
    """SciPy's `_binary_erosion`: each element where `mask` holds (everywhere without one) becomes the AND of the
    input's elements at the structure's true offsets (outside the array: border_value), with `invert` (a dilation,
    whose structure SciPy reflected) their OR; `iterations` times, each on the last's result. Returns bool, or the
    `output` dtype given."""
    name = "binary_dilation" if invert else "binary_erosion"
    try:
        count = operator.index(iterations)
    except TypeError as e:
        raise TypeError("iterations parameter should be an integer") from e
    if count < 1:
        raise fail(UnsupportedError, f"scipy.ndimage.{name}: iterations={count} repeats until nothing changes, a data-dependent "
                                     "number of steps (binary_propagation and binary_fill_holes too): give a positive count")
    x = traced_or_ndarray(input)
    chosen = _axes(x.ndim, axes)
    if structure is None:
        from scipy.ndimage import generate_binary_structure  # (SciPy's default: the caller imported it)

        strel = generate_binary_structure(len(chosen), 1)
    else:
        strel = _concrete(structure, "structure", name).astype(bool)
    if strel.ndim != len(chosen) or strel.size < 1:
        raise fail(UnsupportedError, f"scipy.ndimage.{name}: the structure must be non-empty, with one axis per filtered axis "
                                     f"of the input ({len(chosen)}), not of shape {strel.shape}")
    if mask is not None and np.shape(mask) != x.shape:
        raise fail(UnsupportedError, f"scipy.ndimage.{name}: mask and input must have equal sizes")
    extent, origins, selected, _ = _footprint(x, None, strel, origin, axes, name)
    combine = np.logical_or if invert else np.logical_and

    def fold(total: Any, piece: Any, offset: tuple[int, ...]) -> Any:
        if not selected(offset):
            return total
        return piece if total is None else combine(total, piece)

    value = x != 0
    for _ in range(count):
        step = _window(value, extent, origins, "constant", bool(border_value), fold)
        value = step if mask is None else np.where(traced_or_ndarray(mask) != 0, step, value)
    return _result(value, value, output if isinstance(output, np.ndarray) else None)


replace_foreign_while_tracing("scipy.ndimage._filters:_min_or_max_filter", traced_or_original(min_or_max_filter))
replace_foreign_while_tracing("scipy.ndimage._morphology:_binary_erosion", traced_or_original(binary_erosion))
