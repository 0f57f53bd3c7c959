"""scipy.ndimage's morphology in kernels (tracing/scipy_morphology.py): SciPy's own grey and binary morphology
functions traced unchanged, against SciPy element for element, on bool, float and integer images of 2 and 3 dims;
and values made of constants in the kernel (np.ones(3) / 3, np.eye(3, dtype=bool)) known while tracing
(tracing/constants.py), so ndimage's weights, footprints and structuring elements may be made inside the kernel."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.ndimage as ndi

import egglog_tensor as et
from egglog_tensor.errors import UnsupportedError

RNG = np.random.default_rng(0)
BINARY = RNG.random((12, 13)) > 0.4
GREY = RNG.standard_normal((12, 13)).astype(np.float32)
BYTES = RNG.integers(0, 200, (12, 13)).astype(np.uint8)
VOLUME = RNG.random((5, 6, 7)) > 0.5
FULL = ndi.generate_binary_structure(2, 2)
BUMP = np.array([[0, 1, 0], [1, 2, 1], [0, 1, 0]], float)

CASES = {
    "erosion": (lambda a: ndi.binary_erosion(a), BINARY),
    "dilation": (lambda a: ndi.binary_dilation(a), BINARY),
    "erosion_border_1": (lambda a: ndi.binary_erosion(a, border_value=1), BINARY),
    "dilation_border_1": (lambda a: ndi.binary_dilation(a, border_value=1), BINARY),
    "erosion_3_times": (lambda a: ndi.binary_erosion(a, FULL, iterations=3), BINARY),
    "dilation_2_times": (lambda a: ndi.binary_dilation(a, iterations=2), BINARY),
    "dilation_even_made": (lambda a: ndi.binary_dilation(a, np.ones((2, 3), bool)), BINARY),
    "erosion_origin": (lambda a: ndi.binary_erosion(a, FULL, origin=(1, 0)), BINARY),
    "opening": (lambda a: ndi.binary_opening(a), BINARY),
    "closing": (lambda a: ndi.binary_closing(a, FULL, iterations=2), BINARY),
    "dilation_masked": (lambda a: ndi.binary_dilation(a, iterations=3, mask=a[::-1]), BINARY),
    "hit_or_miss": (lambda a: ndi.binary_hit_or_miss(a, np.array([[0, 1, 0], [1, 1, 1], [0, 1, 0]])), BINARY),
    "erosion_3d": (lambda a: ndi.binary_erosion(a, ndi.generate_binary_structure(3, 1)), VOLUME),
    "dilation_axes": (lambda a: ndi.binary_dilation(a, np.ones((3, 3), bool), axes=(0, 2)), VOLUME),
    "grey_erosion": (lambda a: ndi.grey_erosion(a, size=3), GREY),
    "grey_dilation": (lambda a: ndi.grey_dilation(a, size=(3, 2)), GREY),
    "grey_dilation_made_footprint": (lambda a: ndi.grey_dilation(a, footprint=np.ones((3, 3), bool) & ~np.eye(3, dtype=bool)), GREY),
    "grey_erosion_structure": (lambda a: ndi.grey_erosion(a, structure=BUMP * 0.1), GREY),
    "grey_dilation_constant": (lambda a: ndi.grey_dilation(a, structure=BUMP, mode="constant", cval=1.5), GREY),
    "grey_erosion_wrap": (lambda a: ndi.grey_erosion(a, footprint=FULL & ~np.eye(3, dtype=bool), mode="wrap", origin=(0, 1)), GREY),
    "grey_opening": (lambda a: ndi.grey_opening(a, size=(3, 3)), GREY),
    "grey_closing": (lambda a: ndi.grey_closing(a, size=(2, 3), mode="nearest"), GREY),
    "gradient": (lambda a: ndi.morphological_gradient(a, size=3), GREY),
    "laplace": (lambda a: ndi.morphological_laplace(a, size=3), GREY),
    "white_tophat": (lambda a: ndi.white_tophat(a, size=3), GREY),
    "black_tophat": (lambda a: ndi.black_tophat(a, structure=BUMP), GREY),
    "bytes_structure_wraps": (lambda a: ndi.grey_erosion(a, structure=BUMP), BYTES),
    "bytes_tophat": (lambda a: ndi.white_tophat(a, size=3), BYTES),
}


@pytest.mark.parametrize("name", CASES)
def test_morphology_matches_scipy(name: str) -> None:
    fn, image = CASES[name]
    got, want = et.kernel(fn)(image), fn(image)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)


def test_filters_take_weights_and_footprints_made_in_the_kernel() -> None:
    """np.ones(3) / 3 and np.eye(3, dtype=bool) made in the kernel are constants ndimage can read (np.asarray of them
    while tracing: their values computed with NumPy), as when they are NumPy arrays made outside."""
    x = RNG.standard_normal((9, 11))
    cases = [lambda a: ndi.correlate1d(a, np.ones(3) / 3), lambda a: ndi.correlate(a, np.arange(9.0).reshape(3, 3)[::-1] / 9),
             lambda a: ndi.minimum_filter(a, footprint=np.eye(3, dtype=bool)), lambda a: ndi.median_filter(a, footprint=np.ones((3, 1), bool)),
             lambda a: ndi.convolve(a, np.outer(np.linspace(0, 1, 3), np.ones(2)), mode="mirror")]
    for fn in cases:
        np.testing.assert_allclose(et.kernel(fn)(x), fn(x), rtol=1e-12, atol=1e-12)


def test_what_tracing_cannot_know_is_refused_by_name() -> None:
    """A structure computed from an argument, and iterating until nothing changes (iterations < 1, binary_fill_holes,
    binary_propagation), are refused with errors that say so."""
    with pytest.raises(UnsupportedError, match="structure must be known while tracing"):
        et.kernel(lambda a, s: ndi.grey_erosion(a, structure=s))(GREY, BUMP)
    with pytest.raises(UnsupportedError, match="data-dependent number of steps"):
        et.kernel(lambda a: ndi.binary_erosion(a, iterations=0))(BINARY)
    with pytest.raises(UnsupportedError, match="data-dependent number of steps"):
        et.kernel(lambda a: ndi.binary_fill_holes(a))(BINARY)
    with pytest.raises(UnsupportedError, match="one axis per filtered axis"):
        et.kernel(lambda a: ndi.binary_erosion(a, np.ones((3, 3, 3), bool)))(BINARY)
