"""Output buffers: the recycling pool for large results and the `out=` argument of kernel calls."""

from __future__ import annotations

import gc
import sys

import numpy as np
import pytest

import egglog_tensor as et
from egglog_tensor.errors import KernelArgumentError
from egglog_tensor.outputs import MIN_BYTES, POOL, OutputPool

N = 1024  # a 1024x1024 float32 result is MIN_BYTES: pooled


def ew(a, b):
    return np.exp(np.maximum(a + b, 0.0)) * 0.5 + a


def softmax(x):
    e = np.exp(x - np.max(x, axis=1, keepdims=True))
    return e / np.sum(e, axis=1, keepdims=True)


def two(a, b):
    return a @ b, np.sum(a, axis=0)


@pytest.fixture(scope="module")
def data() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(3)
    return rng.standard_normal((N, N), dtype=np.float32), rng.standard_normal(N, dtype=np.float32)


def test_large_results_start_on_a_cache_line(data) -> None:
    """NumPy's large arrays start 16 bytes past a cache line; pooled results start on one, so the
    kernel's vector stores do not straddle lines. Correct values whatever the input's offset."""
    a, b = data
    k = et.kernel(ew, target="cpu-openmp")
    POOL.clear()
    results = [k(a, b) for _ in range(3)]
    assert all(r.ctypes.data % 64 == 0 and r.flags.c_contiguous and r.flags.writeable for r in results)
    np.testing.assert_allclose(results[-1], ew(a, b), rtol=2e-6, atol=2e-6)
    assert OutputPool(1 << 30).empty((N, N + 1), np.dtype(np.float64)).ctypes.data % 64 == 0


def test_large_results_reuse_a_released_buffer(data) -> None:
    a, b = data
    assert a.nbytes == MIN_BYTES
    k = et.kernel(ew, target="cpu")
    expected = ew(a, b)
    POOL.clear()
    first = k(a, b)
    second = k(a, b)  # the first result is alive: its buffer must not be handed out again
    assert not np.shares_memory(first, second)
    addresses = {first.ctypes.data, second.ctypes.data}
    view = first[3:, :5]
    del first, second
    gc.collect()
    third = k(a, b)  # the view keeps the first buffer alive; the second one is reused
    assert not np.shares_memory(third, view)
    assert third.ctypes.data in addresses
    np.testing.assert_allclose(third, expected, rtol=2e-6, atol=2e-6)
    del view, third
    gc.collect()
    assert POOL.idle_bytes == 2 * MIN_BYTES
    fourth = k(a, b)
    assert fourth.ctypes.data in addresses
    np.testing.assert_allclose(fourth, expected, rtol=2e-6, atol=2e-6)


def test_pool_limit_and_small_results() -> None:
    pool = OutputPool(limit=MIN_BYTES)
    small = pool.empty((4, 4), np.dtype(np.float32))
    assert small.base is None  # below MIN_BYTES: a plain np.empty
    big = pool.empty((N, N), np.dtype(np.float32))
    other = pool.empty((N, N), np.dtype(np.float32))
    big[:] = 1.0
    assert big.flags.writeable and big.flags.c_contiguous and big.shape == (N, N)
    address = big.ctypes.data
    del big, other
    gc.collect()
    assert pool.idle_bytes == MIN_BYTES  # the second released buffer is over the limit: freed
    assert pool.empty((N // 2, 2 * N), np.dtype(np.float32)).ctypes.data == address  # same byte size
    assert OutputPool(limit=0).empty((N, N), np.dtype(np.float32)).base is None
    pool.clear()
    assert pool.idle_bytes == 0


@pytest.mark.parametrize("target", ["cpu", "cpu-openmp"])
def test_out_is_written_and_returned(data, target: str) -> None:
    a, b = data
    k = et.kernel(ew, target=target)
    out = np.full_like(a, np.nan)
    assert k(a, b, out=out) is out
    np.testing.assert_allclose(out, ew(a, b), rtol=2e-6, atol=2e-6)
    strided = np.full((N, 2 * N), np.nan, np.float32)[:, ::2]  # not contiguous: through a temporary
    assert k(a, b, out=strided) is strided
    np.testing.assert_array_equal(strided, out)
    fortran = np.asfortranarray(np.zeros_like(a))
    k(a, b, out=fortran)
    np.testing.assert_array_equal(fortran, out)


def test_out_overlapping_an_input_gives_numpys_result() -> None:
    rng = np.random.default_rng(5)
    x = rng.standard_normal((64, 48), dtype=np.float32)
    expected = softmax(x)
    k = et.kernel(softmax, target="cpu")
    assert k(x, out=x) is x  # every row is read again after its first outputs are written
    np.testing.assert_allclose(x, expected, rtol=2e-6, atol=1e-7)
    a = rng.standard_normal((32, 32), dtype=np.float32)
    expected_mm = (a @ a, np.sum(a, axis=0))
    m = et.kernel(two, target="cpu")
    second = np.empty(32, np.float32)
    result = m(a, a, out=(a, second))
    assert result[0] is a and result[1] is second
    np.testing.assert_allclose(a, expected_mm[0], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(second, expected_mm[1], rtol=1e-5, atol=1e-5)


def test_out_fast_path_skips_python_checks_and_falls_back_when_refused(data, monkeypatch) -> None:
    """After the first call, a fitting out= goes straight to the native reader (no Python check);
    one it refuses (overlapping an input, strided, wrong shape) takes the checked path."""
    kernel_module = sys.modules["egglog_tensor.kernel"]  # (the package's `kernel` is the decorator)
    a, b = data
    k = et.kernel(ew, target="cpu")
    out = np.full_like(a, np.nan)
    k(a, b, out=out)  # compiles: the slow path
    checked = []
    real_check = kernel_module.check_out
    monkeypatch.setattr(kernel_module, "check_out", lambda *args: checked.append(args) or real_check(*args))
    out[:] = np.nan
    assert k(a, b, out=out) is out and not checked
    np.testing.assert_allclose(out, ew(a, b), rtol=2e-6, atol=2e-6)
    expected = ew(a, a)
    assert k(a.copy(), a, out=a) is a and len(checked) == 1  # out is the second input: refused, then via a temporary
    np.testing.assert_allclose(a, expected, rtol=2e-6, atol=2e-6)
    with pytest.raises(KernelArgumentError, match="expected shape"):
        k(a, b, out=np.empty((N, N - 1), np.float32))
    assert len(checked) == 2


@pytest.mark.parametrize("with_scalar", [False, True], ids=["one-array path", "general path"])
def test_arrays_the_native_reader_refuses_take_the_first_calls_path(with_scalar: bool) -> None:
    """The fast path (keyed on shape, dtype and layout) hands the arrays to the native reader; one it
    refuses, a misaligned C-contiguous array here, is copied and run as on the first call, every
    time (no error on the second call), with or without out=."""
    k = et.kernel((lambda a, b: a * b + 2.0) if with_scalar else (lambda a, b: a * b + a), target="cpu")
    a = np.arange(16, dtype=np.float32).reshape(4, 4)
    expected = a * a + (2.0 if with_scalar else a)
    np.testing.assert_array_equal(k(a, a), expected)  # makes the fast path
    raw = np.zeros(a.nbytes + 1, np.uint8)
    misaligned = raw[1:].view(np.float32).reshape(4, 4)
    misaligned[:] = a
    assert not misaligned.flags.aligned and misaligned.flags.c_contiguous
    for _ in range(2):
        np.testing.assert_array_equal(k(misaligned, a), expected)
        out = np.zeros_like(a)
        assert k(a, misaligned, out=out) is out
        np.testing.assert_array_equal(out, expected)


def test_scalar_result_into_a_0d_array() -> None:
    k = et.kernel(lambda a, b: np.sum(a * b), target="cpu")
    a = np.arange(10, dtype=np.float64)
    out = np.zeros(())
    assert k(a, a, out=out) is out
    assert out[()] == np.sum(a * a)


@pytest.mark.parametrize(
    ("out", "message"),
    [
        (np.empty((N, N - 1), np.float32), r"ew\(\): out=: expected shape \(1024, 1024\) and dtype float32, got shape \(1024, 1023\)"),
        (np.empty((N, N), np.float64), r"got shape \(1024, 1024\) and dtype float64"),
        ([[0.0]], r"out=: expected a numpy.ndarray, got list"),
        ((np.empty((N, N), np.float32), np.empty((N, N), np.float32)), r"out= needs 1 array\(s\), one per result; got 2"),
    ],
)
def test_bad_out_is_refused(data, out: object, message: str) -> None:
    a, b = data
    with pytest.raises(KernelArgumentError, match=message):
        et.kernel(ew, target="cpu")(a, b, out=out)


def test_read_only_out_is_refused(data) -> None:
    a, b = data
    out = np.empty_like(a)
    out.flags.writeable = False
    with pytest.raises(KernelArgumentError, match="read-only"):
        et.kernel(ew, target="cpu")(a, b, out=out)


def test_a_parameter_named_out_is_the_functions() -> None:
    def shift(x, out):
        return x + out

    x = np.arange(6.0)
    np.testing.assert_array_equal(et.kernel(shift, target="cpu")(x, out=x), 2 * x)
