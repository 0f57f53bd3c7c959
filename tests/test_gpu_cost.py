"""The cost model on GPU targets (egglog_tensor/cost.py, docs/gpu.md): a compilation's estimate against
bounds computed here from its Device's numbers (bytes / bandwidth, flops / FLOP rate) plus the launch
overhead of each kernel it launches."""

from __future__ import annotations

import numpy as np
import pytest

import egglog_tensor as et
from egglog_tensor.cost import TensorCostModel
from egglog_tensor.graph import Builder, Node
from egglog_tensor.gpu.targets import gpu_target
from egglog_tensor.gpu.tiles import matmul_tiles
from test_outputs import ew as ew_chain, softmax  # run.py's ew_chain and softmax

TARGETS = ["rocdl:gfx942", "nvvm:sm_90"]
RNG = np.random.default_rng(0)
X = RNG.standard_normal((2048, 1024), np.float32)


def layernorm(x, g):
    mu = np.mean(x, axis=1, keepdims=True)
    var = np.mean((x - mu) * (x - mu), axis=1, keepdims=True)
    return (x - mu) / np.sqrt(var + 1e-5) * g


def matmul(a, b):
    return a @ b


def _estimate(fn, target: str, *args: np.ndarray) -> tuple[float, int]:
    """(the optimized program's estimate in ns, the kernels its lowering launches)."""
    lowered = et.kernel(fn, target=target).trace(*args).optimize().lower()
    return lowered.optimized.report.cost_after, len(dict(lowered.facts)["device"].kernels)


def _memory_bound(target: str, *arrays: np.ndarray) -> float:
    """ns to move `arrays` (the inputs and the output, each once) at the device's bandwidth."""
    device = gpu_target(target).device
    return sum(a.nbytes for a in arrays) / device.bandwidth_gbs


@pytest.mark.parametrize("target", TARGETS)
def test_elementwise_chain_near_bandwidth_bound(target: str) -> None:
    b = RNG.standard_normal(1024, np.float32)
    estimate, launches = _estimate(ew_chain, target, X, b)
    launch = gpu_target(target).machine.kernel_overhead_ns
    bound = _memory_bound(target, X, b, X)  # A and b in, the result out
    assert launches == 1
    assert bound + launch <= estimate <= 1.5 * bound + launch


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("fn", [softmax, layernorm])
def test_row_kernels_one_launch_near_bound(fn, target: str) -> None:
    """Softmax and layernorm are fused row kernels (lowering/gpu/rows.py), priced as one launch reading x once."""
    g = RNG.standard_normal(1024, np.float32)
    args = (X,) if fn is softmax else (X, g)
    estimate, launches = _estimate(fn, target, *args)
    launch = gpu_target(target).machine.kernel_overhead_ns
    bound = _memory_bound(target, *args, X)
    assert launches == 1
    assert bound + launch <= estimate <= 1.1 * bound + launch


def test_layernorm_ranks_with_softmax() -> None:
    """Both are a few row reductions and elementwise passes over x: neither is priced far below the other."""
    g = RNG.standard_normal(1024, np.float32)
    norm, _ = _estimate(layernorm, "rocdl:gfx942", X, g)
    soft, _ = _estimate(softmax, "rocdl:gfx942", X)
    assert 0.5 <= norm / soft <= 2.0


@pytest.mark.parametrize("target", TARGETS)
def test_matmul_priced_by_its_tiles(target: str) -> None:
    """A 4096^2 matmul (benchmarks/gpu.py's) is compute-bound: its FMAs at the FLOP rate, slowed by the
    register tile's workgroup loads (TM + TN beside TM x TN FMAs per k step); not at one thread per output."""
    n = 4096  # (only the shapes are traced: zeros suffice)
    a, b = np.zeros((n, n), np.float32), np.zeros((n, n), np.float32)
    estimate, launches = _estimate(matmul, target, a, b)
    target_ = gpu_target(target)
    tiles = matmul_tiles(target_.device, 4, (n, n, n))
    assert (tiles.block_m, tiles.register_m) == (128, 8)  # (the wider tiles: blocks enough to fill the device)
    fmas = tiles.register_m * tiles.register_n
    bound = 2.0 * n**3 / target_.device.gflops * (fmas + tiles.register_m + tiles.register_n) / fmas
    assert bound > _memory_bound(target, a, b) * n / tiles.block_n + _memory_bound(target, a)  # compute-bound: A and B read once per column / row of blocks
    assert launches == 1
    assert estimate == pytest.approx(bound + target_.machine.kernel_overhead_ns, rel=1e-3)


@pytest.mark.parametrize("target", TARGETS)
def test_matmul_memory_counts_tile_reuse(target: str) -> None:
    """A short k (4096 x 16 @ 16 x 4096) is memory-bound: A is read once per column of blocks, B once
    per row of them (the tiles' reuse through workgroup memory), C written once."""
    m, k = 4096, 16
    a, b = np.zeros((m, k), np.float32), np.zeros((k, m), np.float32)
    estimate, _ = _estimate(matmul, target, a, b)
    target_ = gpu_target(target)
    tiles = matmul_tiles(target_.device, 4, (m, m, k))
    moved = 4 * (m * k * m // tiles.block_n + k * m * m // tiles.block_m + m * m)
    assert estimate == pytest.approx(moved / target_.device.bandwidth_gbs + target_.machine.kernel_overhead_ns, rel=1e-3)


def test_matmul_with_few_blocks_uses_few_units() -> None:
    """128 x 128 @ k = 65536 is 4 blocks: 4 of gfx942's 304 CUs busy, priced at that share of its FLOP rate."""
    a, b = np.zeros((128, 2**16), np.float32), np.zeros((2**16, 128), np.float32)
    estimate, _ = _estimate(matmul, "rocdl:gfx942", a, b)
    device = gpu_target("rocdl:gfx942").device
    tiles = matmul_tiles(device, 4, (128, 128, 2**16))
    fmas = tiles.register_m * tiles.register_n
    rate = device.gflops * fmas / (fmas + tiles.register_m + tiles.register_n) * 4 / device.units
    assert estimate == pytest.approx(2.0 * 128 * 128 * 2**16 / rate + gpu_target("rocdl:gfx942").machine.kernel_overhead_ns, rel=1e-3)


def _price(model: TensorCostModel, node: Node) -> float:
    """ns of `node`'s program priced bottom-up by `model` (its output in memory)."""
    def cost(n: Node):
        return model.price(n.op, [cost(i) for i in n.inputs], n)
    return model.closed(cost(node))


@pytest.mark.parametrize("target", TARGETS)
def test_more_launches_cost_more(target: str) -> None:
    """exp(x) * x as one kernel vs exp(x) materialized first: a second launch, and its buffer written and read."""
    b = Builder()
    x = b.make("arg", (), ("x", (4096, 4096), "float32", "C"))
    fused = b.make("multiply", (b.make("exp", (x,)), x))
    split = b.make("multiply", (b.make("materialize", (b.make("exp", (x,)),)), x))
    model = TensorCostModel(gpu_target(target))
    m = model.machine
    assert _price(model, split) - _price(model, fused) >= m.kernel_overhead_ns + 2 * x.size * 4 / m.bandwidth_gbs


@pytest.mark.parametrize(("target", "fp64"), [("nvvm:sm_90", 1 / 2), ("nvvm:sm_89", 1 / 64), ("rocdl:gfx1100", 1 / 32),
                                              ("rocdl:gfx1201", 1 / 32), ("nvvm:sm_86", 1 / 64), ("nvvm:sm_100a", 1 / 2)])
def test_float64_priced_at_the_devices_float64_rate(target: str, fp64: float) -> None:
    """A compute-bound kernel (sinh of x, 40 times over) costs 1 / fp64_rate as much in float64 as in float32,
    whose sinh the device computes in float64 too; float32 sin (computed in float32) costs the float32 rate."""
    device = gpu_target(target).device
    assert device.fp64_rate == fp64

    def chain(op: str, dtype: str) -> Node:
        b = Builder()
        x = y = b.make("arg", (), ("x", (4096, 4096), dtype, "C"))
        for _ in range(40):
            y = b.make(op, (y,))
        return y

    model = TensorCostModel(gpu_target(target))
    m = model.machine
    flops = 40 * 4096 * 4096 * m.transcendental_flops
    assert _price(model, chain("sinh", "float64")) == pytest.approx(flops / fp64 / m.gflops + m.kernel_overhead_ns, rel=1e-6)
    assert _price(model, chain("sinh", "float32")) == pytest.approx(flops / fp64 / m.gflops + m.kernel_overhead_ns, rel=1e-6)
    assert _price(model, chain("sin", "float32")) == pytest.approx(flops / m.gflops + m.kernel_overhead_ns, rel=1e-6)
