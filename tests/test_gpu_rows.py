"""Fused GPU row kernels (lowering/gpu/rows.py): softmax and layernorm over rows are one launch, a
block per row, on rocdl:gfx942 and nvvm:sm_90; checked device code (ptxas without spills, the
HSACO's interface) and the outlined kernel emulated on the CPU against NumPy."""

from __future__ import annotations

import re

import numpy as np
import pytest
from test_gpu_kernels import check_device_code

import egglog_tensor as et
from egglog_tensor.lowering.gpu.emulate import emulate
from egglog_tensor.lowering.gpu.rows import REGISTER_ELEMENTS, STAGE_BYTES

TARGETS = ("rocdl:gfx942", "nvvm:sm_90")
rng = np.random.default_rng(27)


def softmax(x):
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def layernorm(x, g, b):
    m = x.mean(-1, keepdims=True)
    v = ((x - m) ** 2).mean(-1, keepdims=True)
    return (x - m) / np.sqrt(v + 1e-5) * g + b


def arguments(fn, rows: int, n: int, dtype) -> tuple[np.ndarray, ...]:
    x = (rng.standard_normal((rows, n)) * 3 + 1).astype(dtype)
    return (x,) if fn is softmax else (x, rng.standard_normal(n).astype(dtype), rng.standard_normal(n).astype(dtype))


# (the default run: a few of each; the slow run: every row length and count, both dtypes and targets)
QUICK = {(softmax, np.float32, 33, 1000, TARGETS[0]), (softmax, np.float64, 1, 7, TARGETS[1]), (layernorm, np.float32, 33, 4097, TARGETS[1]),
         (layernorm, np.float64, 33, 64, TARGETS[0]), (softmax, np.float32, 33, 1, TARGETS[1])}
CASES = [pytest.param(fn, dtype, rows, n, target, marks=() if (fn, dtype, rows, n, target) in QUICK else pytest.mark.slow,
                      id=f"{fn.__name__}-{np.dtype(dtype).name}-{rows}x{n}-{target}")
         for fn in (softmax, layernorm) for dtype in (np.float32, np.float64) for rows in (1, 33) for n in (1, 7, 64, 1000, 4097)
         for target in TARGETS]


@pytest.mark.parametrize(("fn", "dtype", "rows", "n", "target"), CASES)
def test_one_launch_per_row_kernel(fn, dtype, rows: int, n: int, target: str) -> None:
    """One launch of a block per row (threads: the row rounded up to whole waves, at most 256), the row kept
    in registers (at most REGISTER_ELEMENTS columns a thread) or staged in workgroup memory when it fits (read
    from global memory once either way), checked device code, NumPy's values."""
    args = arguments(fn, rows, n, dtype)
    comp = et.kernel(fn, target=target).inspect(*args)
    wave = 64 if target.startswith("rocdl") else 32
    threads = min(256, max(wave, 1 << max(n - 1, 1).bit_length()))
    assert [(k.grid, k.block) for k in comp.facts["device"].kernels] == [((rows, 1, 1), (threads, 1, 1))]
    device = comp.stage("noalias")
    staged = f"memref<{n}xf{np.dtype(dtype).itemsize * 8}, #gpu.address_space<workgroup>>" in device
    kept = -(-n // threads) <= REGISTER_ELEMENTS and dtype == np.float32
    assert staged == (not kept and n * np.dtype(dtype).itemsize <= STAGE_BYTES)
    if kept:  # (each of a thread's columns of x loaded once)
        assert len(re.findall(r"memref\.load %arg0\[", device)) == -(-n // threads)
    check_device_code(comp)
    (out,) = emulate(comp, *args)
    expected = fn(*(a.astype(np.float64) for a in args))
    assert out.dtype == dtype
    tol = 2e-6 if dtype == np.float32 else 1e-13
    scale = 1.0 if fn is softmax else np.abs(args[1]) * 4 + np.abs(args[2])  # (layernorm: |g| |xhat| + |b|, |xhat| < 4 here)
    np.testing.assert_array_less(np.abs(out - expected), tol * (np.abs(expected) + scale) + 1e-30)


@pytest.mark.parametrize(("n", "loads", "workgroup"), [(1000, 4, False), (4097, 1, True)])
def test_row_reads_in_global_memory(n: int, loads: int, workgroup: bool) -> None:
    """Softmax's fused kernel loads x from global memory once: a row of 1000 (4 columns a thread of 256) in
    registers, each column loaded by the max and kept for the sum and the normalization; one of 4097 (17 a
    thread) in the max's loop, which stages it in workgroup memory for the others."""
    x = rng.standard_normal((33, n)).astype(np.float32)
    device = et.kernel(softmax, target=TARGETS[0]).inspect(x).stage("noalias")
    assert len(re.findall(r"memref\.load %arg0\[", device)) == loads
    assert (f"memref<{n}xf32, #gpu.address_space<workgroup>>" in device) == workgroup


# (global loads, barriers) instructions of the asm stage: PTX's ld.global / bar.sync, AMDGPU's global_load / s_barrier
_INSTRUCTIONS = {"nvvm": (r"ld\.global", r"bar\.sync"), "rocdl": (r"global_load\w*", r"s_barrier")}


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize(("fn", "inputs"), [(softmax, 1), (layernorm, 3)])
def test_reduced_values_stay_in_registers(fn, inputs: int, target: str) -> None:
    """Every thread holds a row's reduced value after the block reduction and later ops use it, and a row of 1000
    is kept in registers (4 columns a thread of 256): the kernel's global loads are its inputs' (softmax x;
    layernorm x, g, b), one per column a thread; no workgroup memory but the two reductions' wave slots; one
    barrier per reduction (its waves' exchange). Before (each reduced value reloaded after a barrier, the row
    staged in workgroup memory): softmax 3 global loads on sm_90 (4 on gfx942), 4 barriers, 4064 bytes of shared
    memory (4032 of LDS); layernorm 5 (6) and 4."""
    comp = et.kernel(fn, target=target).inspect(*arguments(fn, 33, 1000, np.float32))
    load, barrier = _INSTRUCTIONS[comp.options.target.name]
    asm = comp.stage("asm")
    assert len(re.findall(rf"^\s*{load}\b", asm, re.MULTILINE)) == 4 * inputs
    assert len(re.findall(rf"^\s*{barrier}\b", asm, re.MULTILINE)) == 2
    slots = 2 * 256 // (64 if target.startswith("rocdl") else 32) * 4  # (two reductions, a float32 per wave)
    report = comp.stage("hsaco") if target.startswith("rocdl") else comp.stage("ptxas")
    assert (f"group_segment_fixed_size: {slots}" if target.startswith("rocdl") else f"used 1 barriers, {slots} bytes smem") in report


def test_plain_row_sums_and_full_reductions_stay() -> None:
    """A row sum alone is a block reduction of its own; a full reduction keeps its two launches."""
    x = rng.standard_normal((33, 1000)).astype(np.float32)
    comp = et.kernel(lambda x: x.sum(-1), target=TARGETS[1]).inspect(x)
    assert [(k.grid, k.block) for k in comp.facts["device"].kernels] == [((33, 1, 1), (256, 1, 1))]
    np.testing.assert_allclose(emulate(comp, x)[0], x.sum(-1), rtol=1e-5, atol=1e-5)
    m = rng.standard_normal(10**6).astype(np.float32)
    comp = et.kernel(lambda x: x.max(), target=TARGETS[0]).inspect(m)
    assert len(comp.facts["device"].kernels) == 2
    assert emulate(comp, m)[0] == m.max()


def test_long_row_not_staged() -> None:
    """A row longer than STAGE_BYTES is one launch still, each op reading it from global memory."""
    x = rng.standard_normal((2, STAGE_BYTES // 4 + 1000)).astype(np.float32)
    comp = et.kernel(softmax, target=TARGETS[0]).inspect(x)
    assert [(k.grid, k.block) for k in comp.facts["device"].kernels] == [((2, 1, 1), (256, 1, 1))]
    device = comp.stage("noalias")
    assert "workgroup>>" in device and f"memref<{x.shape[1]}xf32, #gpu" not in device
    assert len(re.findall(r"memref\.load %arg0\[", device)) == 3
    np.testing.assert_allclose(emulate(comp, x)[0], softmax(x), rtol=2e-6, atol=1e-12)


def test_rows_over_two_loops() -> None:
    """Layernorm over the last axis of a 3-d array (scale only): rows over the grid's x and y, one launch."""
    x, g = rng.standard_normal((3, 5, 200)).astype(np.float32), rng.standard_normal(200).astype(np.float32)

    def scaled(x, g):
        return layernorm(x, g, 0.0)

    comp = et.kernel(scaled, target=TARGETS[1]).inspect(x, g)
    assert [(k.grid, k.block) for k in comp.facts["device"].kernels] == [((5, 3, 1), (256, 1, 1))]
    np.testing.assert_allclose(emulate(comp, x, g)[0], scaled(x, g), rtol=1e-5, atol=1e-5)
