"""Minimal programs from bugs the differential fuzzer (tests/test_fuzz.py) found, as plain tests."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
import scipy.special as sp
from strategies import check

import egglog_tensor as et


def _abs_of_max_and_max(x):
    m = np.max(x, axis=1)
    return np.abs(m), m


def test_two_outputs_of_a_row_fused_1x1_consumer() -> None:
    """The 'rows' stage once fused the max (also an output) into abs's row loop; MLIR then swapped
    the two outputs' destinations when the one-iteration loop folded. Such producers stay outside."""
    check(_abs_of_max_and_max, np.array([[[-4.75]]], np.float32))


def test_two_outputs_of_a_row_fused_consumer() -> None:
    check(_abs_of_max_and_max, np.array([[[-4.75, 2.0]], [[1.0, -3.0]]], np.float32))


def _gram_and_where(x0):
    v1 = np.where(x0 == x0, x0, x0)
    return x0 @ np.swapaxes(x0, -1, -2), v1


def test_gram_of_a_single_row() -> None:
    """A 1x1 matmul output (register tile nr = 1) once took the packed-B path, whose pad then
    bufferized to a memref.copy runtime call the JIT cannot resolve (lowering/tiling.py)."""
    check(_gram_and_where, np.array([[3.0, -5.0]], np.float32))


def _nan_constants(x):
    return x * float("nan") + 1.0, np.copysign(x, -float("nan"))


def test_nan_constants_are_optimized() -> None:
    """A NaN constant read back from the e-graph was a new float, and NaN != NaN: the extracted term
    was never the traced one, so every program with a NaN constant compiled unoptimized (with a
    warning). A negative NaN keeps its sign through the e-graph as -(NaN)."""
    x = np.array([1.5, -0.0, -2.0], np.float32)
    assert not et.kernel(_nan_constants, cache=False).trace(x).optimize().report.fallback
    check(_nan_constants, x)


def _updated_copy_and_its_base(x0, x1):
    v2 = np.take(x1, np.array([0, 0]), None)
    v3 = v2.copy()
    v3[:1] = x0
    return v3, v2


def _updated_copy_of_an_elementwise_output(x0, x1):
    v2 = x1 * 2
    v3 = v2.copy()
    v3[:1] = x0
    return v2, v3


def test_an_updated_copy_leaves_its_returned_base_alone() -> None:
    """A wrong answer: B = v.copy(); B[:1] = y returning both B and v gave v the update too. The
    insert into v's tensor ran in place, and eliminate-empty-tensors had computed v in its output
    buffer; such a base is now copied first (lowering/emit.py, _update_slice)."""
    check(_updated_copy_and_its_base, np.array(-1.0936748, np.float32), np.array([[[1e15]]], np.float32))
    check(_updated_copy_of_an_elementwise_output, np.array(-1.5, np.float32), np.array([5.0, 6.0, 7.0], np.float32))


def _rounded(x):
    return np.round(x, 3), np.round(x, -1)


def test_round_of_bfloat16_stays_bfloat16() -> None:
    """np.round of bfloat16 gave float32 (its product with the Python float 10**d, bfloat16 having no
    weak scalars), where NumPy writes each step to a bfloat16 array: now bit for bit NumPy's, on every
    bfloat16 value."""
    x = np.arange(2**16, dtype=np.uint16).view(ml_dtypes.bfloat16)
    for got, want in zip(et.kernel(_rounded, cache=False)(x), _rounded(x), strict=True):
        assert got.dtype == want.dtype
        nan = np.isnan(want.astype(np.float32))
        assert np.array_equal(np.isnan(got.astype(np.float32)), nan)
        assert np.array_equal(got.view(np.uint16)[~nan], want.view(np.uint16)[~nan])


def _gammaln_and_gram(x0):
    return sp.gammaln(x0), x0 @ np.swapaxes(x0, -1, -2)


@pytest.mark.parametrize("target", ["cpu", "cpu-openmp"])
@pytest.mark.parametrize("shape", [(2, 1), (64, 48)])
def test_a_contraction_beside_a_library_call(target: str, shape: tuple[int, int]) -> None:
    """A matmul in a kernel whose scalar code calls a library function (gammaln: libm's lgamma, declared as a
    `func.func private`): the tile stage's script applied its patterns to every func.func and failed ("requires exactly
    one target handle"); the stages' scripts match the kernel's function alone (lowering/scripts.py match_kernel)."""
    x = np.random.default_rng(7).uniform(-4, 4, shape).astype(np.float32)
    got = et.kernel(_gammaln_and_gram, target=target, cache=False)(x)
    for g, w in zip(got, _gammaln_and_gram(x), strict=True):
        np.testing.assert_allclose(g, w, rtol=2e-5, atol=1e-5)
