"""Elementwise ops that read or write across rows run in square blocks (lowering/stages/transposes.py),
and the cost model prices such copies and the outputs no kernel writes (cost.py `written`)."""

from __future__ import annotations

import numpy as np
import pytest

import egglog_tensor as et
from egglog_tensor.lowering.pipelines import resolve_target
from tests.strategies import threaded

CASES = {
    "b.T copied": (lambda b: np.ascontiguousarray(b.T), ((64, 96),)),
    "a + b.T": (lambda a, b: a + b.T, ((96, 64), (64, 96))),
    "exp(b.T) * 2": (lambda b: np.exp(b.T) * 2, ((64, 96),)),
    "last two axes swapped": (lambda b: np.ascontiguousarray(np.swapaxes(b, 1, 2)), ((3, 64, 96),)),
    "axes reversed": (lambda b: np.ascontiguousarray(b.transpose(2, 1, 0)), ((64, 3, 96),)),
    "axes rotated": (lambda b: np.ascontiguousarray(b.transpose(2, 0, 1)), ((64, 32, 96),)),
}


def _scaled(shape: tuple[int, ...], extra: int) -> tuple[int, ...]:
    """`shape` with `extra` added to every axis of 32 or more (a size no block divides)."""
    return tuple(n + extra if n >= 32 else n for n in shape)


@pytest.mark.parametrize("extra", [0, 5], ids=["whole blocks", "partial blocks"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32])
@pytest.mark.parametrize("name", list(CASES))
def test_transposed_elementwise_ops_match_numpy(name: str, dtype: type, extra: int) -> None:
    fn, shapes = CASES[name]
    if dtype is np.int32 and "exp" in name:
        return  # (exp of int32 is float64: the float cases cover it)
    rng = np.random.default_rng(0)
    args = [(rng.standard_normal(_scaled(s, extra)) * (100 if dtype is np.int32 else 3)).astype(dtype) for s in shapes]
    kernel = et.kernel(fn, target="cpu")
    got = kernel(*args)
    np.testing.assert_allclose(got, fn(*args), rtol=1e-6 if dtype == np.float32 else 1e-13)
    blocked = kernel.inspect(*args).facts["transposes"]
    assert blocked.ops == 1
    assert blocked.vectorized == (extra == 0 and "rotated" not in name and "reversed" not in name)


@pytest.mark.parametrize("shape", [(1024, 512), (1000, 999)])
def test_every_element_lands_where_numpy_puts_it(shape: tuple[int, int]) -> None:
    """Distinct values (an arange, exact in float32) transposed over many blocks, on one and on two threads."""
    b = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
    for target in ("cpu", threaded(2)):
        got = et.kernel(lambda b: b.T + 0, target=target)(b)
        np.testing.assert_array_equal(got, b.T)


def test_strided_arguments_are_blocked_where_they_are_read_across_rows() -> None:
    rng = np.random.default_rng(1)
    fortran = np.asfortranarray(rng.standard_normal((256, 128)).astype(np.float32))
    kernel = et.kernel(lambda x: x * 2.0, target="cpu")
    np.testing.assert_array_equal(kernel(fortran), fortran * 2.0)
    assert kernel.inspect(fortran).facts["transposes"].ops == 1
    flipped = rng.standard_normal((256, 128)).astype(np.float32)[::-1, ::2]  # no loop reads it contiguously
    np.testing.assert_array_equal(kernel(flipped), flipped * 2.0)
    assert "transposes" not in kernel.inspect(flipped).facts


def test_outputs_no_kernel_writes_are_priced_as_copies() -> None:
    """An argument returned transposed is copied into the output (read across rows): not free, and
    dearer than the same bytes copied as they lie, so the one-thread bound does not take it for tiny."""
    b = np.ones((1024, 1024), np.float32)
    machine = resolve_target("cpu").machine  # (the default numbers scaled to one thread)
    copy_ns = 2 * b.nbytes / machine.bandwidth_gbs
    plain = et.kernel(lambda b: b[1:], target="cpu").inspect(b).report.cost_after
    transposed = et.kernel(lambda b: b.T, target="cpu").inspect(b).report.cost_after
    assert 0.9 * copy_ns < plain < 1.5 * copy_ns
    assert transposed > 0.9 * machine.transposed_copy_slowdown * copy_ns
