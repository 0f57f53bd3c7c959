"""NumPy 2's array-API spellings (tracing/arrayapi.py), np.size, np.resize, np.put, np.place with several values and
np.clip's out=, against NumPy on float32/float64 data with NaN and inf, C and Fortran layouts."""

from __future__ import annotations

import numpy as np
import pytest
from strategies import check

import egglog_tensor as et

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")


def data(shape: tuple[int, ...], dtype: str, seed: int = 0) -> np.ndarray:
    x = np.random.default_rng(seed).standard_normal(shape).astype(dtype)
    x.reshape(-1)[:2] = [np.nan, np.inf]
    return x


def array_api(x, s, v):
    return (np.matrix_transpose(x), np.linalg.matrix_transpose(s), np.unstack(x, axis=1)[2], np.unstack(s)[0],
            np.vecdot(x, v), np.vecdot(s, s, axis=0), np.linalg.vecdot(x, v[None, :]), np.matvec(x, v), np.vecmat(x[:, 0], s),
            np.linalg.vector_norm(x), np.linalg.vector_norm(x, axis=(0, 2), keepdims=True), np.linalg.vector_norm(x, ord=np.inf, axis=1),
            np.linalg.vector_norm(s, ord=1, axis=-1, keepdims=True), np.linalg.vector_norm(x, ord=0, axis=None, keepdims=True),
            np.linalg.matrix_norm(s), np.linalg.matrix_norm(x, ord=1, keepdims=True), np.linalg.matrix_norm(x, ord=-np.inf),
            np.linalg.trace(x, offset=1), np.linalg.diagonal(s, offset=-1), np.linalg.outer(v, s[0]), np.linalg.matmul(s, s),
            np.linalg.tensordot(x, s, axes=1), np.linalg.cross(x[..., :3], s[0, :3]), np.zeros(2) + np.size(x) + 100 * np.size(x, (0, 2)),
            np.resize(v, (2, 7)), np.resize(s, 3))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("layout", ["C", "F"])
def test_array_api_spellings_match_numpy(dtype: str, layout: str) -> None:
    x, s, v = data((3, 5, 5), dtype), data((5, 5), dtype, 1), data((5,), dtype, 2)
    if layout == "F":
        x, s = np.asfortranarray(x), np.asfortranarray(s)
    check(array_api, x, s, v, rtol=1e-4 if dtype == "float32" else 1e-12)


@pytest.mark.parametrize(("fn", "pattern"), [
    (lambda v: np.matrix_transpose(v), "at least 2-dimensional"),
    (lambda v: np.vecdot(v, v[:3]), "sizes differ"),
    (lambda v: np.linalg.outer(v[None], v), "must be one-dimensional"),
    (lambda v: np.linalg.cross(v[:2], v[:2]), "3-dimensional vectors"),
    (lambda v: np.resize(v, (-1, 2)), "non-negative"),
])
def test_array_api_errors(fn, pattern: str) -> None:
    with pytest.raises(et.TracingError, match=pattern):
        et.kernel(fn)(np.ones(4))


def updated(fn):
    """The first argument, copied, after `fn` updated it in place (NumPy's functions that return None)."""
    def run(a, *rest):
        b = a.copy(order="K")
        fn(b, *rest)
        return b
    return run


@pytest.mark.parametrize("layout", ["C", "F"])
@pytest.mark.parametrize("fn", [
    lambda a: np.put(a, [0, 5, -1, 5], [9.0, 8.0, 7.0]),
    lambda a: np.put(a, [0, 50, -100], [1.0, 2.0], mode="wrap"),
    lambda a: np.put(a, np.array([[0, 50], [-100, 3]]), 4.0, mode="clip"),
    lambda a: np.place(a, a > 4, [-1.0, -2.0, -3.0]),
    lambda a: np.place(a, a > 4, 5.0),
    lambda a: np.place(a, a > 100, np.zeros(0)),
    lambda a: np.clip(a, 2, 7, out=a),
], ids=["put", "put-wrap", "put-clip", "place-several", "place-one", "place-none", "clip-out"])
def test_put_place_clip_out_update_as_numpy(fn, layout: str) -> None:
    a = np.arange(12.0).reshape(3, 4)
    check(updated(fn), np.asfortranarray(a) if layout == "F" else a)


def test_put_and_place_with_traced_indices_and_masks() -> None:
    a = np.arange(12.0).reshape(3, 4)
    check(updated(lambda a, i: np.put(a, i, [3.0, 4.0])), a, np.array([1, -2, 3]))
    check(updated(lambda a, m, v: np.place(a, m, v)), a, (a % 3 == 1), np.array([10.0, 20.0, 30.0]))


def test_put_and_place_errors() -> None:
    a = np.arange(12.0).reshape(3, 4)
    with pytest.raises(et.IndexOutOfBoundsError, match="index 12 is out of bounds"):
        et.kernel(updated(lambda a: np.put(a, [12], [1.0])))(a)
    with pytest.raises(et.IndexOutOfBoundsError, match="out of bounds"):
        et.kernel(updated(lambda a, i: np.put(a, i, 1.0)))(a, np.array([-13]))
    with pytest.raises(et.DataValueError, match="Cannot insert from an empty array"):
        et.kernel(updated(lambda a, m: np.place(a, m, np.zeros(0))))(a, a > 5)
    with pytest.raises(et.TracingError, match="mask and data must be the same size"):
        et.kernel(updated(lambda a: np.place(a, a[:2] > 5, [1.0, 2.0])))(a)
