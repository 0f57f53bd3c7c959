"""Hostile call-time inputs: read-only, aliased and repeated arrays, odd views, ndarray subclasses,
and shapes whose arrays would not fit an int64 byte count. Each works like NumPy or raises a
clear error, never crashes (tests/test_errors.py has the wrong count/dtype/rank cases)."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.lib.stride_tricks import as_strided

import egglog_tensor as et


def _mix(a, b):
    return a * 2.0 - b, (a + b).sum(axis=0), a @ b.T


def _read_only(a: np.ndarray) -> np.ndarray:
    a = np.array(a, copy=True, order="K")
    a.flags.writeable = False
    return a


def _agree(fn, *args) -> None:
    """fn compiled equals fn run by NumPy on args, and no result shares memory with an argument."""
    got, want = et.kernel(fn)(*args), fn(*args)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-12)
        assert not any(np.shares_memory(g, a) for a in args)


def test_read_only_arguments() -> None:
    a = np.arange(12.0).reshape(3, 4)
    b = np.linspace(-1, 1, 12).reshape(3, 4)
    for layout in (lambda x: x, np.asfortranarray, lambda x: x[::-1, ::2], lambda x: x[:, ::-1]):
        _agree(_mix, _read_only(layout(a)), _read_only(layout(b)))


def test_same_array_twice_and_overlapping_views() -> None:
    a = np.arange(20.0).reshape(4, 5)
    _agree(_mix, a, a)
    buf = np.arange(30.0)
    _agree(_mix, buf[:25].reshape(5, 5), buf[5:].reshape(5, 5))  # the two arguments overlap in memory
    _agree(_mix, a[:, 1:], a[:, :-1])
    _agree(_mix, a.T[::-1], a.T)


def test_zero_stride_and_odd_stride_views() -> None:
    row = np.arange(5.0)
    b = np.broadcast_to(row, (4, 5))  # read-only, stride 0
    _agree(_mix, b, b[::-1])
    misaligned = np.frombuffer(np.zeros(8 * 20 + 1, np.uint8).data, np.float64, 20, 1).reshape(4, 5)
    assert not misaligned.flags.aligned
    _agree(_mix, misaligned, b)
    odd = as_strided(np.arange(40.0), shape=(4, 5), strides=(60, 12))  # strides not a multiple of 8
    _agree(_mix, odd, b)


def test_huge_zero_stride_argument() -> None:
    """A 2**29 x 2**30 zero-stride view (4 EiB if it were real): slices and small reductions of it work."""
    big = as_strided(np.full(1, 3.0), shape=(2**29, 2**30), strides=(0, 0))
    np.testing.assert_array_equal(et.kernel(lambda x: x[0, :4] * 2.0)(big), np.full(4, 6.0))
    np.testing.assert_array_equal(et.kernel(lambda x: x[:3, -5:].sum(axis=0))(big), np.full(5, 9.0))
    with pytest.raises(MemoryError):  # as NumPy: the 4 EiB result cannot be allocated
        et.kernel(lambda x: x * 2.0)(big)


@pytest.mark.parametrize(
    "fn",
    [
        lambda x: x[:, None] * x[None, :],
        lambda x: (x[:, None] * x[None, :])[:2, :2],
        lambda x: np.outer(x, x).sum(),
    ],
)
def test_intermediate_too_big_for_int64_is_an_error_not_a_crash(fn) -> None:
    """A (2**32, 2**32) float64 value has 2**67 bytes: NumPy refuses it, MLIR's size arithmetic would abort."""
    x = as_strided(np.ones(1), shape=(2**32,), strides=(0,))
    with pytest.raises(et.TracingError, match=r"shape \(4294967296, 4294967296\) .* is too big"):
        et.kernel(fn)(x)


def test_zero_size_with_huge_other_dims() -> None:
    z = as_strided(np.ones(1), shape=(2**59, 0), strides=(0, 0))
    assert et.kernel(lambda x: x.sum(axis=0) + 1.0)(z).shape == (0,)
    assert et.kernel(lambda x: x.T @ x)(z).shape == (0, 0)
    with pytest.raises(et.TracingError, match="too big"):
        et.kernel(lambda x: x @ x.T)(z)


@pytest.mark.filterwarnings("ignore:the matrix subclass:PendingDeprecationWarning")
@pytest.mark.parametrize(
    ("make", "kind"),
    [(lambda: np.ma.array([1.0, 2.0, 3.0], mask=[0, 1, 0]), "MaskedArray"), (lambda: np.matrix([[1.0, 2.0], [3.0, 4.0]]), "matrix")],
)
def test_ndarray_subclasses_are_refused(make, kind: str) -> None:
    """NumPy gives these other semantics (masks, `*` as matmul); computing on the raw data would be silently wrong."""
    value = make()
    with pytest.raises(et.KernelArgumentError, match=f"subclass {kind} is not supported"):
        et.kernel(lambda a: a * a)(value)


def test_memmap_argument(tmp_path) -> None:
    m = np.memmap(tmp_path / "m.bin", dtype=np.float32, mode="w+", shape=(3, 4))
    m[:] = np.arange(12.0).reshape(3, 4)
    np.testing.assert_array_equal(et.kernel(lambda a: a * 2.0)(m), np.asarray(m) * 2.0)
