"""`np.<ufunc>.outer` (tracing/ufunc_outer.py): every pair, NumPy's shapes and dtypes, exact where NumPy is."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import egglog_tensor as et

RNG = np.random.default_rng(0)


def data(shape: tuple[int, ...], dtype: str) -> np.ndarray:
    """Values of dtype with ties and (for floats) NaN, inf and -0.0 among them."""
    x = RNG.integers(-3, 4, size=shape).astype(dtype)
    if dtype.startswith("float") and x.size >= 3:
        x.flat[:3] = [np.nan, np.inf, -0.0]
    return x


@pytest.mark.parametrize(("ufunc", "dtype"), [(np.add, "float32"), (np.add, "int32"), (np.subtract, "float64"),
                                              (np.multiply, "int64"), (np.maximum, "float32"), (np.minimum, "float64"),
                                              (np.greater, "int32"), (np.arctan2, "float64")])
def test_outer_matches_numpy(ufunc: np.ufunc, dtype: str) -> None:
    """ufunc.outer of a 1-D and a 2-D array (shape a.shape + b.shape) is NumPy's, bit for bit (arctan2: 8 ulp)."""
    a, b = data((5,), dtype), data((3, 4), dtype)
    got, want = et.kernel(lambda a, b: ufunc.outer(a, b))(a, b), ufunc.outer(a, b)
    assert got.dtype == want.dtype and got.shape == want.shape
    if ufunc is np.arctan2:
        np.testing.assert_array_max_ulp(got, want, maxulp=8)
    else:
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("scalar", [2, 2.5])
def test_outer_with_a_python_number(scalar: Any) -> None:
    """A Python number operand is converted as np.asarray converts it (outer does): int64 or float64, not weak."""
    b = data((4,), "float32")
    got, want = et.kernel(lambda b: np.multiply.outer(scalar, b))(b), np.multiply.outer(scalar, b)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)


def test_floyd_warshall_step() -> None:
    """NPBench floyd_warshall's step, np.minimum(path, np.add.outer(path[:, k], path[k, :])), on int32."""
    path = RNG.integers(1, 1000, size=(9, 9)).astype(np.int32)
    step = lambda p: np.minimum(p, np.add.outer(p[:, 2], p[2, :]))
    np.testing.assert_array_equal(et.kernel(step)(path), step(path))
