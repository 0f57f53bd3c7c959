"""scipy.signal's convolutions and median filters in a kernel: SciPy runs them in C (or by FFT, which a kernel has no
complex numbers for); while a kernel is traced (and scipy.signal was imported) they are replaced in scipy.signal by
these when an argument is traced (creation.replace_foreign_while_tracing, as tracing/scipy_linalg.py).

`convolve fftconvolve oaconvolve correlate convolve2d correlate2d`: the full convolution of in1 (extended by
len(in2) - 1 on each side: zeros, convolve2d's `fillvalue`, or its `boundary` "wrap"/"symm") with in2 flipped
(correlate: not flipped), then SciPy's centred slice for mode "same" (in1's shape; correlate2d's one element later
where in2's extent is even) or "valid"; each output
element sums its window directly, in the inputs' promoted dtype. An in2 of up to UNROLLED elements is summed as
shifted slices, which fuse; a larger 1-D zero-filled one is np.convolve's Toeplitz product (tracing/convolution.py);
others are unrolled up to UNROLLED_AT_MOST elements. FFT results differ from these by rounding only. `medfilt medfilt2d`:
the median of each zero-padded window (odd sizes): scipy_ndimage's median_filter with mode "constant", as SciPy's.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

import numpy as np

from ..errors import UnsupportedError
from .core import fail, traced_or_ndarray
from .creation import replace_foreign_while_tracing, traced_or_original
from .scipy_ndimage import median_filter

UNROLLED = 64  # in2's elements summed as shifted slices; above, 1-D zero-filled ones as np.convolve's Toeplitz product
UNROLLED_AT_MOST = 1024  # (N-D or extended otherwise: shifted slices up to this many)
_BOUNDARIES = {"fill": "constant", "pad": "constant", "wrap": "wrap", "circular": "wrap", "symm": "symmetric", "symmetric": "symmetric"}


def _flipped(w: Any) -> Any:
    return w[tuple(slice(None, None, -1) for _ in range(w.ndim))]


def _windows(padded: Any, w: Any, shape: tuple[int, ...]) -> Any:
    """out[i] = sum_o w[o] padded[i + o] for out of `shape`, as shifted slices of padded (they fuse)."""
    total = None
    for offset in itertools.product(*(range(k) for k in w.shape)):
        term = padded[tuple(slice(o, o + n) for o, n in zip(offset, shape, strict=True))] * w[offset]
        total = term if total is None else total + term
    return total


def _centered(full: Any, shape: tuple[int, ...], late: bool) -> Any:
    """The middle `shape` of full; an odd excess split with its larger half first when `late` (correlate2d's "same")."""
    starts = [(n - m + late) // 2 for n, m in zip(full.shape, shape, strict=True)]
    return full[tuple(slice(s, s + m) for s, m in zip(starts, shape, strict=True))]


def _convolution(name: str, in1: Any, in2: Any, mode: str, flip: bool, boundary: str = "fill", fillvalue: float = 0.0,
                 late: bool = False) -> Any:
    a, w = traced_or_ndarray(in1), traced_or_ndarray(in2)
    if a.ndim != w.ndim:
        raise fail(UnsupportedError, f"scipy.signal.{name}: in1 and in2 should have the same dimensionality")
    if mode not in ("full", "same", "valid"):
        raise fail(UnsupportedError, f"scipy.signal.{name}: acceptable mode flags are 'valid', 'same', or 'full'")
    if boundary not in _BOUNDARIES:
        raise fail(UnsupportedError, f"scipy.signal.{name}: acceptable boundary flags are {', '.join(_BOUNDARIES)}")
    if a.size == 0 or w.size == 0:
        raise fail(UnsupportedError, f"scipy.signal.{name}: empty inputs are not supported in a kernel")
    if mode == "valid" and not (all(p >= q for p, q in zip(a.shape, w.shape, strict=True))
                                or all(q >= p for p, q in zip(a.shape, w.shape, strict=True))):
        raise fail(UnsupportedError, f"scipy.signal.{name}: for 'valid' mode, one must be at least as large as the other in every dimension")
    dtype = np.result_type(a.dtype, w.dtype, np.int8) if a.dtype.kind != "f" and w.dtype.kind != "f" else np.result_type(a.dtype, w.dtype)
    a, w = a.astype(dtype), w.astype(dtype)
    kernel = _flipped(w) if flip else w  # (out[i] = sum_o kernel[o] in1_extended[i + o])
    pad = _BOUNDARIES[boundary]
    if w.size > UNROLLED and a.ndim == 1 and pad == "constant" and fillvalue == 0:
        full = np.convolve(a, _flipped(kernel))  # (tracing/convolution.py: a Toeplitz matrix of views, one product)
    elif w.size > UNROLLED_AT_MOST:
        raise fail(UnsupportedError, f"scipy.signal.{name}: in2 of {w.size} elements in {w.ndim} dimensions (a kernel sums each "
                                     f"output's window as {w.size} shifted slices; at most {UNROLLED_AT_MOST}, or 1-D zero-filled of any size)")
    else:
        widths = [(k - 1, k - 1) for k in w.shape]
        padded = np.pad(a, widths, mode="constant", constant_values=fillvalue) if pad == "constant" else np.pad(a, widths, mode=pad)
        full = _windows(padded, kernel, tuple(n + k - 1 for n, k in zip(a.shape, w.shape, strict=True)))
    if mode == "full":
        return full
    shape = a.shape if mode == "same" else tuple(abs(n - k) + 1 for n, k in zip(a.shape, w.shape, strict=True))
    return _centered(full, shape, late and mode == "same")


def convolve(in1: Any, in2: Any, mode: str = "full", method: str = "auto") -> Any:
    return _convolution("convolve", in1, in2, mode, flip=True)


def correlate(in1: Any, in2: Any, mode: str = "full", method: str = "auto") -> Any:
    return _convolution("correlate", in1, in2, mode, flip=False)


def fftconvolve(in1: Any, in2: Any, mode: str = "full", axes: Any = None) -> Any:
    if axes is not None:
        raise fail(UnsupportedError, "scipy.signal.fftconvolve(axes=...) is not supported in a kernel")
    return _convolution("fftconvolve", in1, in2, mode, flip=True)


def oaconvolve(in1: Any, in2: Any, mode: str = "full", axes: Any = None) -> Any:
    if axes is not None:
        raise fail(UnsupportedError, "scipy.signal.oaconvolve(axes=...) is not supported in a kernel")
    return _convolution("oaconvolve", in1, in2, mode, flip=True)


def convolve2d(in1: Any, in2: Any, mode: str = "full", boundary: str = "fill", fillvalue: float = 0) -> Any:
    return _convolution("convolve2d", in1, in2, mode, True, boundary, fillvalue)


def correlate2d(in1: Any, in2: Any, mode: str = "full", boundary: str = "fill", fillvalue: float = 0) -> Any:
    return _convolution("correlate2d", in1, in2, mode, False, boundary, fillvalue, late=True)


def medfilt(volume: Any, kernel_size: Any = None) -> Any:
    """The median of each window of kernel_size (3 per axis by default; odd), the volume zero-padded: the middle of
    the window's sorted values, in the volume's dtype."""
    x = traced_or_ndarray(volume)
    sizes = [3] * x.ndim if kernel_size is None else [int(k) for k in (kernel_size if np.ndim(kernel_size) else [kernel_size] * x.ndim)]
    if len(sizes) != x.ndim or any(k % 2 == 0 for k in sizes):
        raise fail(UnsupportedError, "scipy.signal.medfilt: each kernel_size should be odd, one per dimension")
    return median_filter(x, sizes, mode="constant")  # (as SciPy's medfilt: ndimage's rank filter, zero-padded)


def medfilt2d(input: Any, kernel_size: Any = 3) -> Any:
    return medfilt(input, kernel_size)


FUNCTIONS: dict[str, Callable[..., Any]] = {fn.__name__: fn for fn in (
    convolve, correlate, fftconvolve, oaconvolve, convolve2d, correlate2d, medfilt, medfilt2d)}


for _name, _ours in FUNCTIONS.items():
    replace_foreign_while_tracing(f"scipy.signal:{_name}", traced_or_original(_ours))
