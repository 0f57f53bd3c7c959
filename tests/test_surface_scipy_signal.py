"""scipy.signal's convolutions and median filters in a kernel (tracing/scipy_signal.py) against SciPy's own: every
mode, in1 shorter and longer than in2, correlate2d's boundaries and its "same" alignment for even kernels, a long
1-D kernel (np.convolve's Toeplitz product), integer inputs, medfilt."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.signal as sg
from strategies import sweep

import egglog_tensor as et

RNG = np.random.default_rng(17)
A, SHORT, LONG = RNG.standard_normal(50), RNG.standard_normal(4), RNG.standard_normal(80)
IMAGE, KERNEL = RNG.standard_normal((12, 10)), RNG.standard_normal((3, 4))


def _assert_as_scipy(fn, *args) -> None:
    got, want = et.kernel(fn)(*args), fn(*args)
    for g, w in zip(got, want, strict=True):
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_allclose(g, w, rtol=1e-13, atol=1e-13)


@pytest.mark.parametrize("mode", sweep(["full", "same", "valid"], ["valid"]))
def test_one_dimensional(mode: str) -> None:
    def f(a, short, long):
        return (sg.convolve(a, short, mode), sg.convolve(short, a, mode), sg.correlate(a, short, mode), sg.correlate(short, a, mode),
                sg.fftconvolve(a, short, mode), sg.oaconvolve(a, short, mode), sg.convolve(a, long, mode), sg.correlate(long, a, mode))

    _assert_as_scipy(f, A, SHORT, LONG)
    ints = RNG.integers(-5, 5, 20), RNG.integers(-3, 3, 4)
    _assert_as_scipy(lambda a, b: (sg.convolve(a, b, mode), sg.correlate(a, b, mode)), *ints)


@pytest.mark.parametrize("mode", sweep(["full", "same", "valid"], ["same"]))
def test_two_dimensional(mode: str) -> None:
    def f(a, k):
        return (sg.convolve2d(a, k, mode), sg.correlate2d(a, k, mode), sg.convolve(a, k, mode), sg.correlate(a, k, mode),
                sg.convolve2d(a, k, mode, boundary="wrap"), sg.correlate2d(a, k, mode, boundary="symm"),
                sg.convolve2d(a, k, mode, fillvalue=2.0))

    _assert_as_scipy(f, IMAGE, KERNEL)


def test_median_filters_and_errors() -> None:
    _assert_as_scipy(lambda a, b: (sg.medfilt(a, 5), sg.medfilt2d(b), sg.medfilt(b, [3, 5])), A, IMAGE)
    with pytest.raises(et.UnsupportedError, match="should be odd"):
        et.kernel(lambda a: sg.medfilt(a, 4))(A)
    with pytest.raises(et.UnsupportedError, match="same dimensionality"):
        et.kernel(lambda a, b: sg.convolve(a, b))(A, IMAGE)
    with pytest.raises(et.UnsupportedError, match="at most 1024"):
        et.kernel(lambda a, b: sg.convolve2d(a, b))(IMAGE, np.ones((40, 30)))


def test_savgol_filter_every_mode() -> None:
    """savgol_filter: SciPy's own code, its convolve1d (bound at its import) and, for mode "interp", its polyfit of the
    edges through scipy.linalg.lstsq, both replaced while tracing."""
    rows = RNG.standard_normal((5, 40))

    def f(a, rows):
        return (sg.savgol_filter(a, 7, 2), sg.savgol_filter(a, 9, 3, deriv=1, mode="nearest"), sg.savgol_filter(a, 5, 2, mode="mirror"),
                sg.savgol_filter(rows, 7, 2, axis=1), sg.savgol_filter(rows, 5, 3, deriv=2, axis=0))

    _assert_as_scipy(f, A, rows)
