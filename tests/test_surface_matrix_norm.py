"""np.linalg.norm's matrix norms against NumPy (issue 24): ord None/'fro', 1, -1, inf, -inf over any
2-tuple of axes of 2-D and 3-D arrays (negative and reversed axes, keepdims, NaN/inf, empty other
axes), and the SVD norms 2, -2 and 'nuc'."""

from __future__ import annotations

import numpy as np
import pytest
from strategies import check, make_array, with_layout

import egglog_tensor as et
from egglog_tensor.errors import TracingError

ORDS = [None, "fro", 1, -1, np.inf, -np.inf]
AXES = [(0, 1), (1, 0), (0, 2), (2, 0), (-1, -2), (1, -3)]


def _norms(pairs, keepdims=False):
    """A kernel of np.linalg.norm(a, ord, axis, keepdims) for each (ord, axis) of `pairs`."""
    def f(a):
        return tuple(np.linalg.norm(a, ord, axis=ax, keepdims=keepdims) for ord, ax in pairs)
    return f


EVERY_ORD_TWO_AXES = _norms([(o, AXES[i]) for i, o in enumerate(ORDS)] + [(o, AXES[(i + 3) % 6]) for i, o in enumerate(ORDS)])
EVERY_ORD_KEEPDIMS = _norms([(o, (0, 1) if i % 2 else (1, 0)) for i, o in enumerate(ORDS)], keepdims=True)
EVERY_ORD_LAST_TWO = _norms([(o, (1, 2) if i % 2 else (2, 1)) for i, o in enumerate(ORDS)])


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32"])
def test_matrix_norms_over_any_two_axes(dtype: str) -> None:
    x = make_array(5, dtype, (4, 3, 5))
    rtol = 1e-6 if dtype == "float32" else 1e-13
    check(EVERY_ORD_TWO_AXES, x, rtol=rtol)
    check(EVERY_ORD_KEEPDIMS, with_layout(x[1], "F"), rtol=rtol)


def test_matrix_norms_of_nan_inf_and_empty_batches() -> None:
    x = make_array(6, "float64", (3, 4, 4))
    x[0, 1, 2] = np.nan
    x[1, 3, 0] = np.inf
    x[2, :, 1] = -np.inf
    check(EVERY_ORD_LAST_TWO, x)
    check(EVERY_ORD_LAST_TWO, np.ones((0, 2, 3), np.float32))


def test_matrix_norm_of_an_empty_matrix_is_zero_where_numpy_gives_zero() -> None:
    check(_norms([("fro", (0, 1)), (1, (0, 1)), (np.inf, (1, 0))]), np.ones((0, 3), np.float32))


def test_matrix_norm_at_size_float32() -> None:
    """1- and -inf-norms of a 2048x2048 float32 matrix of 0.1s and one 7: within 1e-6 of the float64 sums (NumPy's
    column sums of a C-ordered matrix add row after row: 1.6e-5 off here)."""
    x = np.full((2048, 2048), 0.1, np.float32)
    x[-1, -1] = 7.0
    one, minus_inf = et.kernel(_norms([(1, (0, 1)), (-np.inf, (0, 1))]))(x)
    assert one.dtype == minus_inf.dtype == np.float32
    exact = np.abs(x.astype(np.float64))
    np.testing.assert_allclose(one, exact.sum(0).max(), rtol=1e-6)
    np.testing.assert_allclose(minus_inf, exact.sum(1).min(), rtol=1e-6)


def test_svd_norms_over_any_axes() -> None:
    """ord 2, -2, 'nuc': the largest, smallest, summed singular values (tracing/orthogonal.py's SVD), any 2 axes, keepdims."""
    x = np.random.default_rng(3).standard_normal((3, 4, 5))
    fn = lambda a: tuple(np.linalg.norm(a, ord, axis=axes, keepdims=keep) for ord in (2, -2, "nuc") for axes, keep in (((0, 2), False), ((2, 1), True)))
    for got, want in zip(et.kernel(fn)(x), fn(x), strict=True):
        assert got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=1e-12)


@pytest.mark.parametrize("ord", ["foo", 3, 0.5], ids=str)
def test_invalid_matrix_orders(ord) -> None:
    with pytest.raises(ValueError):
        np.linalg.norm(np.ones((3, 3)), ord)
    with pytest.raises(TracingError, match="invalid norm order"):
        et.kernel(lambda a: np.linalg.norm(a, ord))(np.ones((3, 3)))


def test_duplicate_axes() -> None:
    with pytest.raises(TracingError, match="duplicate axes"):
        et.kernel(lambda a: np.linalg.norm(a, 1, axis=(1, -1)))(np.ones((3, 3)))
