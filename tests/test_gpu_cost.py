"""The cost model on GPU targets (egglog_tensor/cost.py, docs/gpu.md): a compilation's estimate against
bounds computed here from its Device's numbers (bytes / bandwidth, flops / FLOP rate) plus the launch
overhead of each kernel it launches."""

from __future__ import annotations

import re

import numpy as np
import pytest

import egglog_tensor as et
from egglog_tensor.cost import TensorCostModel
from egglog_tensor.graph import Builder, Node
from egglog_tensor.gpu.targets import gpu_target
from egglog_tensor.gpu.occupancy import occupancy
from egglog_tensor.gpu.tiles import REGISTER_MARGIN, candidates, matmul_tiles, price, registers
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


def _busy(target: str, tiles, loops: tuple[int, int, int], itemsize: int = 4) -> float:
    """The busy share of a CU / SM for a matmul with `tiles`: the blocks it holds (at most its share of the grid)
    each compute a k step (256 threads x BK x (TM TN + TM + TN) issue slots at the unit's FMA rate), then wait
    for the global loads (the device's latency)."""
    device = gpu_target(target).device
    m, n, k = loops
    held = occupancy(device, tiles.threads, registers(tiles, itemsize), tiles.shared_bytes(itemsize)).blocks
    resident = min(held, -(-(-(-m // tiles.block_m) * -(-n // tiles.block_n)) // device.units))
    step = 256 * min(k, tiles.block_k) * (tiles.register_m * tiles.register_n + tiles.register_m + tiles.register_n) / (device.gflops / 2 / device.units)
    return min(1.0, resident * step / (step + device.limits.latency_ns))


@pytest.mark.parametrize("target", TARGETS)
def test_matmul_priced_by_its_tiles(target: str) -> None:
    """A 4096^2 matmul (benchmarks/gpu.py's) is compute-bound: its FMAs at the FLOP rate, slowed by the
    register tile's workgroup loads (TM + TN beside TM x TN FMAs per k step) and by the latency its
    resident blocks leave unhidden; not at one thread per output."""
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
    assert estimate == pytest.approx(bound / _busy(target, tiles, (n, n, n)) + target_.machine.kernel_overhead_ns, rel=1e-3)


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
    busy = _busy(target, tiles, (m, m, k))
    assert estimate == pytest.approx(moved / target_.device.bandwidth_gbs / busy + target_.machine.kernel_overhead_ns, rel=1e-3)


def test_matmul_with_few_blocks_uses_few_units() -> None:
    """128 x 128 @ k = 65536 is 4 blocks of 64 x 64 (or one of 128 x 128): that many of gfx942's 304 CUs busy,
    priced at that share of its FLOP rate."""
    a, b = np.zeros((128, 2**16), np.float32), np.zeros((2**16, 128), np.float32)
    estimate, _ = _estimate(matmul, "rocdl:gfx942", a, b)
    device = gpu_target("rocdl:gfx942").device
    tiles = matmul_tiles(device, 4, (128, 128, 2**16))
    fmas = tiles.register_m * tiles.register_n
    blocks = (128 // tiles.block_m) ** 2
    rate = device.gflops * fmas / (fmas + tiles.register_m + tiles.register_n) * blocks / device.units * _busy("rocdl:gfx942", tiles, (128, 128, 2**16))
    assert estimate == pytest.approx(2.0 * 128 * 128 * 2**16 / rate + gpu_target("rocdl:gfx942").machine.kernel_overhead_ns, rel=1e-3)


@pytest.mark.parametrize(("target", "threads", "registers_", "shared", "blocks", "limit"), [
    # NVIDIA's occupancy calculator: 64K registers an SM allocated by 256 a warp, 64 warps, 228 KiB (1 KiB a block reserved)
    ("nvvm:sm_90", 256, 199, 32768, 1, "registers"), ("nvvm:sm_90", 256, 64, 16384, 4, "registers"),
    ("nvvm:sm_90", 256, 32, 65536, 3, "shared memory"), ("nvvm:sm_90", 256, 16, 0, 8, "waves"),
    ("nvvm:sm_80", 256, 80, 16384, 3, "registers"), ("nvvm:sm_89", 256, 32, 0, 6, "waves"),
    # LLVM's AMDGPU occupancy (its test occupancy-levels.ll, waves per SIMD; one wave per SIMD a block here):
    # 512 VGPRs a lane by 8 on gfx90a/gfx942/gfx950 (72 -> 7, 80 -> 6, 128 -> 4, 200 -> 2), 1536 by 24 on gfx1100 wave32 (100 -> 12, 256 -> 5)
    ("rocdl:gfx942", 256, 72, 0, 7, "registers"), ("rocdl:gfx942", 256, 80, 0, 6, "registers"),
    ("rocdl:gfx942", 256, 128, 0, 4, "registers"), ("rocdl:gfx942", 256, 200, 0, 2, "registers"),
    ("rocdl:gfx942", 256, 24, 0, 8, "waves"), ("rocdl:gfx942", 256, 64, 16384, 4, "shared memory"),
    ("rocdl:gfx1100", 64, 100, 0, 12, "registers"), ("rocdl:gfx1100", 64, 256, 0, 5, "registers"),
    ("rocdl:gfx1100", 64, 40, 0, 16, "waves"), ("nvvm:sm_90", 256, 256, 0, 0, "registers"),
])
def test_occupancy_follows_the_vendors_rules(target: str, threads: int, registers_: int, shared: int, blocks: int, limit: str) -> None:
    """Blocks a CU / SM holds from the Target's UnitLimits (gpu/occupancy.py), against the vendors' numbers."""
    held = occupancy(gpu_target(target).device, threads, registers_, shared)
    assert (held.blocks, held.limit) == (blocks, limit)


_COMPILED = [("nvvm:sm_90", 4096, np.float32), ("rocdl:gfx942", 96, np.float32)]
_COMPILED_SLOW = [(t, n, d) for t in ("nvvm:sm_80", "nvvm:sm_90", "rocdl:gfx942", "rocdl:gfx1100")
                  for n, d in ((4096, np.float32), (96, np.float32), (96, np.float64)) if (t, n, d) not in _COMPILED]


def _compiled_registers(comp: et.Compilation) -> tuple[int, str]:
    """(registers a thread of the matmul kernel, the report's line): ptxas -v's, or the HSACO metadata's .vgpr_count."""
    if comp.options.target.name == "nvvm":
        line = next(ln for ln in comp.stage("ptxas").splitlines() if "barriers" in ln and "used 1 barriers" in ln)
        return int(re.search(r"Used (\d+) registers", line)[1]), line.strip()
    text = comp.stage("hsaco")
    assert re.search(r"\.vgpr_spill_count:\s+0\b", text) and re.search(r"\.private_segment_fixed_size:\s+0\b", text)
    count = int(re.search(r"\.vgpr_count:\s+(\d+)", text)[1])
    return count, f".vgpr_count: {count}, .sgpr_count: {re.search(r'[.]sgpr_count:[ ]+([0-9]+)', text)[1]}"


@pytest.mark.parametrize(("target", "n", "dtype"), _COMPILED + [pytest.param(*case, marks=pytest.mark.slow) for case in _COMPILED_SLOW])
def test_register_estimate_near_the_compiled_kernels(target: str, n: int, dtype) -> None:
    """The tile's register estimate (gpu/tiles.py's `registers`, which occupancy prices) is within REGISTER_MARGIN
    of what the backend allocated for the compiled matmul (ptxas -v; the HSACO's .vgpr_count), with no spills."""
    a = np.zeros((n, n), dtype)
    comp = et.kernel(matmul, target=target).inspect(a, a)
    device = comp.options.target.device
    itemsize = np.dtype(dtype).itemsize
    tiles = matmul_tiles(device, itemsize, (n, n, n))
    compiled, line = _compiled_registers(comp)
    estimate = registers(tiles, itemsize)
    assert abs(compiled - estimate) <= REGISTER_MARGIN * estimate, line
    if target.startswith("nvvm"):
        assert "0 bytes spill stores, 0 bytes spill loads" in comp.stage("ptxas")
        assert f"{tiles.shared_bytes(itemsize)} bytes smem" in line
    else:
        assert f"group_segment_fixed_size: {tiles.shared_bytes(itemsize)}" in comp.stage("hsaco")


# What the tile choice picks (gpu/tiles.py), per target, element size and matmul: (block tile, register tile).
# float16 (2 bytes) is listed for the tiles alone: a float16 matmul is traced as a float32 one (NumPy's rounding), so it compiles to these float32 tiles.
CHOICES = {(t, size, n): ((128, 8) if n == 4096 else (64, 4)) for t in ("nvvm:sm_80", "nvvm:sm_90", "rocdl:gfx942", "rocdl:gfx1100")
           for size in (4, 2) for n in (4096, 96)}


@pytest.mark.parametrize(("target", "itemsize", "n"), sorted(CHOICES))
def test_tile_choice_per_target(target: str, itemsize: int, n: int) -> None:
    """4096^2 fills every device with 128 x 128 blocks of 8 x 8 (half the traffic, 80 issue slots per 64 FMAs: worth
    their occupancy); a 96 x 96 matmul has too few blocks for them, 64 x 64 of 4 x 4. Each candidate's reasons are priced."""
    device = gpu_target(target).device
    prices = candidates(device, itemsize, (n, n, n))
    best = min(prices, key=lambda p: p.ns)
    assert (best.tiles.block_m, best.tiles.register_m) == CHOICES[target, itemsize, n]
    assert all(0.0 < p.hidden <= 1.0 and p.occupancy.blocks >= 1 for p in prices)


def test_occupancy_changes_a_tile_choice() -> None:
    """On sm_90, 128 x 128 blocks of 8 x 8 (~180 registers: one block per SM) would win a 1000 x 1000 x 16 matmul
    on traffic and issue slots alone; with the latency one block cannot hide (72% busy), 64 x 64 of 4 x 4 wins.
    Float64 8 x 8 tiles (~320 registers) exceed a thread's 255: never chosen."""
    device = gpu_target("nvvm:sm_90").device
    wide, narrow = candidates(device, 4, (1000, 1000, 16))[::-1]
    assert wide.ns * wide.hidden < narrow.ns * narrow.hidden and wide.ns > narrow.ns
    assert wide.occupancy.describe(device) == "1 block (8 waves) per SM, bound by registers"
    assert matmul_tiles(device, 4, (1000, 1000, 16)).block_m == 64
    spilled = price(device, candidates(device, 8, (4096, 4096, 4096))[1].tiles, (4096, 4096, 4096), 1, 8)
    assert spilled.ns == float("inf") and spilled.occupancy.blocks == 0 and "it would spill" in spilled.describe(device)
    assert matmul_tiles(device, 8, (4096, 4096, 4096)).block_m == 64


def test_explain_names_the_gpu_tile_choice() -> None:
    """comp.explain() on a GPU target says which tiles a matmul got and the occupancy behind the choice."""
    a = np.zeros((96, 96), np.float32)
    text = et.kernel(matmul, target="nvvm:sm_90").inspect(a, a).explain()
    line = next(ln for ln in text.splitlines() if ln.startswith("The matmul of 96x96 by 96x96"))
    assert "tiled in 64x64 blocks of 4x4 (k tile 32): ~82 registers, 2 blocks (16 waves) per SM, bound by registers" in line
    assert "against 128x128 blocks of 8x8" in line and line.endswith("[gpu-reduce]")


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
