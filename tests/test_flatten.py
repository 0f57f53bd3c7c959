"""Elementwise ops over contiguous buffers become one flat loop (lowering/stages/flatten.py)."""

from __future__ import annotations

import re
from dataclasses import replace

import numpy as np
import pytest

import egglog_tensor as et
from egglog_tensor.target import Target


def gelu(x):
    return 0.5 * x * (1 + np.tanh(0.7978846 * (x + 0.044715 * x * x * x)))


def nested_loops(loops_stage: str) -> int:
    """The deepest scf.for nesting in a stage's text (by indentation: one loop per level)."""
    depths = [len(m[1]) for m in re.finditer(r"^( *)scf\.for", loops_stage, re.MULTILINE)]
    return len(set(depths))


@pytest.mark.parametrize("shape", [(100, 100), (3, 5), (1, 7), (67, 1000), (4, 5, 6), (0, 5)])
def test_contiguous_elementwise_kernels_run_one_flat_loop(shape: tuple[int, ...]) -> None:
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32) * 3
    kernel = et.kernel(gelu, target="cpu")
    comp = kernel.inspect(x)
    if x.size:
        assert f"into memref<{x.size}xf32>" in comp.stage("flatten")
        assert nested_loops(comp.stage("loops")) == 1
        assert "flattened: 1 elementwise op(s)" in comp.summary()
    np.testing.assert_allclose(kernel(x), gelu(x), rtol=2e-6, atol=2e-7)


def test_openmp_chunks_of_whole_rows_flatten() -> None:
    """Each thread's block of whole rows is contiguous: collapsed from its strided subview."""
    x = np.random.default_rng(1).standard_normal((512, 300)).astype(np.float32)
    kernel = et.kernel(lambda a, b: a * b + a, target="cpu-openmp", threads=2)
    comp = kernel.inspect(x, x)
    assert re.search(r"memref\.collapse_shape %subview\w* \[\[0, 1\]\] : memref<256x300xf32, strided<\[300, 1\], "
                     r"offset: \?>> into memref<76800xf32", comp.stage("flatten"))
    np.testing.assert_array_equal(kernel(x, x), x * x + x)


@pytest.mark.parametrize("target", ["cpu", "cpu-openmp"])
def test_broadcasts_transposes_and_strided_views_keep_their_loop_nest(target: str) -> None:
    """A row vector broadcast over rows, a transposed operand and a strided input view cannot be
    one flat index: their ops keep the nest, and compute the same as NumPy."""
    rng = np.random.default_rng(2)
    a, b = rng.standard_normal((96, 200)).astype(np.float32), rng.standard_normal(200).astype(np.float32)
    sq = rng.standard_normal((160, 160)).astype(np.float32)
    cases = [(lambda x, y: np.exp(x + y) * 2, (a, b)), (lambda x: x.T * 2 + x, (sq,)), (lambda x: np.exp(x) * 2, (a[:, ::2],))]
    for fn, args in cases:
        kernel = et.kernel(fn, target=target)
        comp = kernel.inspect(*args)
        assert "collapse_shape" not in comp.stage("flatten"), comp.stage("flatten")
        np.testing.assert_allclose(kernel(*args), fn(*args), rtol=2e-6)


@pytest.mark.parametrize("target", ["cpu", "cpu-openmp"])
def test_gathers_of_two_dimensional_indices_keep_their_loop_nest(target: str) -> None:
    """np.take with 2-D run-time indices loads from its source in the body: flatten_elementwise
    refuses such an op (it failed the stage), so it keeps its nest; the product after it flattens."""
    xp, idx = np.arange(30.0), np.random.default_rng(3).integers(0, 30, (4, 50))
    kernel = et.kernel(lambda a, i: np.take(a, i) * 2.0, target=target)
    assert kernel.inspect(xp, idx).facts["flatten"].ops == 1
    np.testing.assert_array_equal(kernel(xp, idx), np.take(xp, idx) * 2.0)


@pytest.mark.parametrize("target", ["cpu", "cpu-openmp"])
def test_flattened_large_outputs_still_stream(target: str) -> None:
    """The collapsed view of a large output (made outside the versioned nest on one thread) is
    shown aligned too, so the flat loop's vector stores are non-temporal; rows of 1001 floats
    (never whole cache lines) stream as one flat run (on two threads, chunks of 64 rows: each
    starts on a cache line); aligned and misaligned out= both correct."""
    machine = replace(Target.host(), l3=4 << 16)  # outputs from 64 KiB stream (loops.min_bytes)
    a = np.random.default_rng(3).standard_normal((128, 1001)).astype(np.float32)
    kernel = et.kernel(lambda x: x * 3 + x * x, target=replace(machine, name=target), threads=2)
    comp = kernel.inspect(a)
    assert "collapse_shape" in comp.stage("flatten") and "vmovnt" in comp.stage("asm")
    want = a * 3 + a * a
    np.testing.assert_array_equal(kernel(a), want)
    for skew in (0, 1):
        raw = np.empty(a.size + 64, np.float32)
        start = (-raw.ctypes.data % 64) // 4 + skew
        out = raw[start:start + a.size].reshape(a.shape)
        assert kernel(a, out=out) is out
        np.testing.assert_array_equal(out, want)
