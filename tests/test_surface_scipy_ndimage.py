"""scipy.ndimage's linear and min/max filters in a kernel (tracing/scipy_ndimage.py), against SciPy's own: every
boundary mode, origins, axes, float64/float32/uint8 images (each pass's result in the image's dtype, as SciPy),
NaN and inf pixels."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.ndimage as nd
from strategies import sweep

import egglog_tensor as et

RNG = np.random.default_rng(9)
IMAGE = RNG.standard_normal((23, 17))
IMAGES = {"float64": IMAGE, "float32": IMAGE.astype(np.float32), "uint8": (RNG.random((23, 17)) * 255).astype(np.uint8)}
MODES = ("reflect", "mirror", "nearest", "wrap", "constant", "grid-wrap", "grid-mirror", "grid-constant")


def _assert_as_scipy(fn, image: np.ndarray) -> None:
    """fn's results in a kernel against SciPy's: float64 within 1e-14 of the values' scale, float32 within 2 ULP of it,
    integers within 1 (a float64 sum a few ULP apart truncates to the integer below)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = fn(image)
        got = et.kernel(fn)(image)
    for g, w in zip(got if isinstance(got, tuple) else (got,), want if isinstance(want, tuple) else (want,), strict=True):
        assert g.dtype == w.dtype and g.shape == w.shape
        scale = np.max(np.abs(w[np.isfinite(w)]), initial=1.0)
        tolerance = {"f": 1e-14 if g.dtype == np.float64 else 2.4e-7}.get(g.dtype.kind, 1)
        np.testing.assert_allclose(g.astype(np.float64), w.astype(np.float64), rtol=0, atol=tolerance * (scale if g.dtype.kind == "f" else 1))
        np.testing.assert_array_equal(np.isnan(g.astype(np.float64)), np.isnan(w.astype(np.float64)))


@pytest.mark.parametrize("dtype", sweep(sorted(IMAGES), ["float32"]))
def test_one_dimensional_correlations_in_every_mode(dtype: str) -> None:
    def f(x):
        return tuple(g for mode in MODES for g in (nd.correlate1d(x, [0.2, 0.5, 0.1, 0.7], axis=0, mode=mode, cval=1.5, origin=1),
                                                   nd.convolve1d(x, [1.0, -2.0, 0.5], mode=mode, origin=-1)))

    _assert_as_scipy(f, IMAGES[dtype])


@pytest.mark.parametrize("dtype", sweep(sorted(IMAGES), ["uint8", "float64"]))
def test_filters(dtype: str) -> None:
    footprint = np.array([[1, 0, 1], [0, 1, 0]])

    def f(x):
        return (nd.correlate(x, np.array([[1, 2, 0], [0.5, -1, 3]]), mode="mirror", origin=(0, 1)),
                nd.convolve(x, np.array([[1, 2, 0], [0.5, -1, 3]]), mode="constant", cval=2.0),
                nd.uniform_filter(x, 4), nd.uniform_filter(x, (3, 1), mode="wrap"), nd.uniform_filter1d(x, 5, axis=0, origin=2),
                nd.gaussian_filter(x, 1.5), nd.gaussian_filter(x, (0.7, 2.0), order=(1, 0), mode="nearest"),
                nd.gaussian_filter1d(x, 2.0, order=2, truncate=2.0), nd.gaussian_filter(x, 1.0, radius=2, axes=(1,)),
                nd.minimum_filter(x, 3), nd.maximum_filter(x, (2, 5), mode="constant", cval=0.5), nd.maximum_filter1d(x, 4, axis=0),
                nd.minimum_filter(x, footprint=footprint), nd.sobel(x), nd.sobel(x, axis=0), nd.prewitt(x, mode="wrap"), nd.laplace(x),
                nd.gaussian_filter(x, 1.0, output=np.float64))

    _assert_as_scipy(f, IMAGES[dtype])


@pytest.mark.parametrize("dtype", sweep(["float64", "uint8"], ["uint8"]))
def test_median_rank_and_percentile_filters(dtype: str) -> None:
    footprint = np.array([[1, 0, 1], [0, 1, 0], [1, 1, 1]])

    def f(x):
        return (nd.median_filter(x, 3), nd.median_filter(x, (2, 5), mode="wrap"), nd.rank_filter(x, -2, 4),
                nd.percentile_filter(x, 30, footprint=footprint, mode="constant", cval=0.5), nd.percentile_filter(x, -20, 3),
                nd.median_filter(x, footprint=footprint, origin=(1, 0)), nd.rank_filter(x, 0, size=(1, 3)))

    _assert_as_scipy(f, IMAGES[dtype])


def test_nan_and_inf_pixels_spread_as_in_scipy() -> None:
    """Through every weight of a 1-D correlation (0 * NaN too: sobel's centre), only the nonzero weights of an N-D
    one; min/max filters pass over NaN (np.fmin/fmax: SciPy's result there depends on the NaN's place in the window)."""
    image = IMAGE.copy()
    image[3, 4], image[10, 0], image[20, 16] = np.nan, np.inf, -np.inf
    ring = np.array([[1, 0, 1], [0, 0, 0], [1, 0, 1]])
    _assert_as_scipy(lambda x: (nd.sobel(x), nd.gaussian_filter(x, 1.0), nd.laplace(x, mode="wrap"), nd.correlate(x, ring)), image)
    got = et.kernel(lambda x: nd.maximum_filter(x, 3))(image)
    padded = np.pad(image, 1, mode="symmetric")
    want = np.fmax.reduce([padded[i : i + 23, j : j + 17] for i in range(3) for j in range(3)])
    np.testing.assert_array_equal(got, want)


def test_output_arrays_and_scipys_own_functions_as_the_kernel() -> None:
    """output= an array made in the kernel is written and returned; SciPy's sobel itself as the kernel function
    (its module's correlate1d rebound while traced) passes its own output array on."""
    def f(x):
        out = np.empty_like(x)
        returned = nd.gaussian_filter(x, 1.0, output=out)
        return out, returned

    _assert_as_scipy(f, IMAGE)
    np.testing.assert_allclose(et.kernel(nd.sobel)(IMAGE), nd.sobel(IMAGE), rtol=0, atol=1e-13)


def test_what_a_kernel_cannot_do_is_named() -> None:
    with pytest.raises(et.UnsupportedError, match="mode 'spline'"):
        et.kernel(lambda x: nd.uniform_filter(x, 3, mode="spline"))(IMAGE)
    with pytest.raises(et.ConcreteValueError, match="generic_filter"):  # (SciPy's compiled code, given a tracer)
        et.kernel(lambda x: nd.generic_filter(x, np.mean, 3))(IMAGE)
