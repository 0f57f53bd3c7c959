"""Accuracy of contractions with long k loops (issue 21): matmul, batched matmul, matvec, vecmat and
dot of same-sign data stay within C * eps * log2(k) of the exact result (C = 6, docs/accuracy.md "Known
differences"), on one thread and with OpenMP, and the OpenMP result does not depend on the thread
count. Built from `np.full` and broadcast views (a 2^18 x 16 float64 matrix is 32 MiB); before
blocked accumulation these sizes were off by 10-1000 times the bound (one chain of k products)."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import pytest

import egglog_tensor as et

pytestmark = pytest.mark.slow  # minutes long: .ci/run runs it after the default run

C = 6  # the bound's constant; measured at most 4.9 (float64 y @ A, k = 2^18), NumPy up to 8.2 (float32 C @ B, k = 2^20)


def matmul(a, b):
    return a @ b


def _full(shape: tuple[int, ...], dtype: type) -> np.ndarray:
    return np.full(shape, 0.1, dtype)


def _broadcast(shape: tuple[int, ...], dtype: type) -> np.ndarray:
    """A stride-0 view: every element the same 0.1, no memory."""
    return np.broadcast_to(dtype(0.1), shape)


# name: (shape of a, shape of b, maker of a, maker of b); k is a's last dim
CASES: dict[str, tuple[tuple[int, ...], tuple[int, ...], Callable, Callable]] = {
    "matmul": ((16, 1 << 16), (1 << 16, 16), _full, _full),
    "matmul_chunks": ((16, 1 << 18), (1 << 18, 16), _full, _full),  # more than 128 k steps: chunks
    "matmul_one_tile": ((8, 1 << 16), (1 << 16, 32), _full, _full),  # the accumulator carried by every k loop
    "batch_matmul": ((2, 16, 1 << 16), (2, 1 << 16, 16), _full, _full),
    # 9 rows: a masked register tile of rows, its sums in C (k in chunks of ~sqrt(k) products)
    "batch_matmul_masked_rows": ((2, 9, 1 << 16), (2, 1 << 16, 20), _full, _full),
    "matvec": ((16, 1 << 18), (1 << 18,), _full, _full),
    "matvec_broadcast": ((16, 1 << 18), (1 << 18,), _broadcast, _full),
    "vecmat": ((1 << 18,), (1 << 18, 16), _full, _full),
    "vecmat_prime_k": ((65521,), (65521, 16), _full, _full),  # k blocks that do not divide k
    "dot": ((1 << 22,), (1 << 22,), _full, _full),
}


def _relative_error(got: np.ndarray, a: np.ndarray, b: np.ndarray) -> float:
    """Largest relative error of `got` against the exact a @ b (every product of 0.1s is exact in
    float64 for float32 data; the float64 data's exact value in integers of its ulp)."""
    k = a.shape[-1]
    value = a.dtype.type(0.1)
    if a.dtype == np.float32:
        exact = float(value) * float(value) * k
    else:  # 0.1 is m * 2^e with a 53-bit m: the exact sum is m^2 * k * 2^(2e)
        mantissa, exponent = math.frexp(float(value))
        m = int(mantissa * 2**53)
        exact = float(m * m * k) * 2.0 ** (2 * (exponent - 53))
    return float(np.max(np.abs(np.asarray(got, np.float64) - exact))) / exact


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("target", ["cpu", "cpu-openmp"])
@pytest.mark.parametrize("case", list(CASES))
def test_long_k_within_bound(case: str, target: str, dtype: type) -> None:
    """Relative error <= C * eps * log2(k) for same-sign data (one chain of k products: k * eps)."""
    shape_a, shape_b, make_a, make_b = CASES[case]
    a, b = make_a(shape_a, dtype), make_b(shape_b, dtype)
    k = shape_a[-1]
    bound = C * np.finfo(dtype).eps * math.log2(k)
    error = _relative_error(et.kernel(matmul, target=target)(a, b), a, b)
    assert error <= bound, f"{case} {np.dtype(dtype).name} {target}: relative error {error:.3g} > {bound:.3g} (k = {k})"


@pytest.mark.parametrize("case", ["matmul", "matvec", "vecmat", "dot"])
def test_long_k_same_for_any_thread_count(case: str) -> None:
    """The blocks' sums are combined in a fixed order: one, two or three threads, and the one-thread
    target, give the same bits."""
    shape_a, shape_b, make_a, _ = CASES[case]
    rng = np.random.default_rng(21)
    a = rng.random(shape_a, np.float32) if make_a is _full else make_a(shape_a, np.float32)
    b = rng.random(shape_b, np.float32)
    want = et.kernel(matmul, target="cpu")(a, b)
    for threads in (1, 2, 3):
        np.testing.assert_array_equal(et.kernel(matmul, target="cpu-openmp", threads=threads)(a, b), want)


def relu_matmul(a, b):
    return np.maximum(a @ b, 0)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("target", ["cpu", "cpu-openmp"])
def test_long_k_masked_epilogue_within_bound(target: str, dtype: type) -> None:
    """A matmul with an epilogue is not padded: its 9th row is a masked register tile."""
    a, b = _full((9, 1 << 16), dtype), _full((1 << 16, 20), dtype)
    bound = C * np.finfo(dtype).eps * 16
    error = _relative_error(et.kernel(relu_matmul, target=target)(a, b), a, b)
    assert error <= bound, f"{np.dtype(dtype).name} {target}: relative error {error:.3g} > {bound:.3g}"


def chain(a, b, x):
    return (a @ b) @ x


@pytest.mark.parametrize("rows", [9, 16])
@pytest.mark.parametrize("target", ["cpu", "cpu-openmp"])
def test_matvec_epilogue_chain_within_bound(target: str, rows: int) -> None:
    """(a @ b) @ x with k = 4096 in both products: the matvec reduces each block of the product as it is
    made; the errors of the two sums add (reference: float64, exact enough for float32 data)."""
    a, b, x = _full((rows, 4096), np.float32), _full((4096, 4096), np.float32), _full((4096,), np.float32)
    want = chain(a.astype(np.float64), b.astype(np.float64), x.astype(np.float64))
    error = float(np.max(np.abs(et.kernel(chain, target=target)(a, b, x) - want) / want))
    bound = C * np.finfo(np.float32).eps * 2 * 12
    assert error <= bound, f"{target} {rows} rows: relative error {error:.3g} > {bound:.3g}"
