"""A GPU matmul's tiles, chosen from the Device (lowering/gpu/matmul.py builds the kernel, cost.py prices it).

Each block computes a BM x BN tile of C with 256 threads (whole waves of 64 or 32), each thread a
TM x TN register tile; the k loop steps by BK, the block copying BM x BK of A and BK x BN of B into
workgroup memory per step. BK is the longest of 32, 16, 8 whose two tiles take at most a quarter of
the block's shared memory, so four blocks can share a CU / SM. Of the tile shapes (`SHAPES`), the
cost model's `tile_time` with the Target's bandwidth, FLOP rate, CU count and occupancy limits picks
one per matmul: wider tiles halve the global traffic and issue fewer workgroup loads per FMA, but
leave CUs idle on small outputs and take more registers, so fewer blocks share a CU / SM to hide the
latency of each k step's global loads (gpu/occupancy.py).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..target import Device
from .occupancy import Occupancy, hidden, occupancy

# (block tile side, register tile side) with 256 threads each: 64 x 64 blocks of 4 x 4 registers (16 FMAs
# beside 8 workgroup loads a k step), and 128 x 128 of 8 x 8 (64 beside 16, half the global traffic) where
# the output has blocks enough to fill the device and its registers fit (not for 8-byte elements: `registers`).
SHAPES = ((64, 4), (128, 8))
K_TILES = (32, 16, 8)
BLOCKS_PER_UNIT = 4
# Registers a thread of a tiled matmul uses, estimated from its register tile: REGISTER_BASE (indices,
# addresses, loop counters) + REGISTERS_PER_WORD per 32-bit word of its accumulators and one k's
# operands (both backends unroll the k loop, keeping more operands live). Fitted to the compiled
# kernels' reports (ptxas -v; the HSACO's .vgpr_count) on sm_80, sm_90, gfx942 and gfx1100, 4 x 4 and
# 8 x 8 float32, 4 x 4 float64: each within REGISTER_MARGIN of it (tests/test_gpu_cost.py checks).
REGISTER_BASE, REGISTERS_PER_WORD, REGISTER_MARGIN = 40, 1.75, 0.3


@dataclass(frozen=True)
class MatmulTiles:
    """Block tile (m, n), k tile and register tile (m, n) of a GPU matmul."""

    block_m: int
    block_n: int
    block_k: int
    register_m: int
    register_n: int

    @property
    def threads(self) -> int:
        return (self.block_m // self.register_m) * (self.block_n // self.register_n)

    def shared_bytes(self, itemsize: int) -> int:
        """Workgroup memory of the A and B tiles."""
        return (self.block_m + self.block_n) * self.block_k * itemsize

    def grid(self, m: int, n: int) -> int:
        """Blocks over an m x n output."""
        return -(-m // self.block_m) * -(-n // self.block_n)


def registers(tiles: MatmulTiles, itemsize: int) -> int:
    """Registers a thread of `tiles` is estimated to use (REGISTER_BASE's comment); elements narrower than
    32 bits count one word each (float16 is computed in float32)."""
    words = -(-itemsize // 4)
    fmas = tiles.register_m * tiles.register_n
    return round(REGISTER_BASE + REGISTERS_PER_WORD * words * (fmas + tiles.register_m + tiles.register_n))


@dataclass(frozen=True)
class TilePrice:
    """A tile shape priced for one matmul: ns, the registers a thread is estimated to use, the blocks a
    CU / SM holds, and the busy share of a unit (the global loads' latency the resident blocks hide)."""

    tiles: MatmulTiles
    ns: float
    registers: int
    occupancy: Occupancy
    hidden: float

    def describe(self, device: Device) -> str:
        """"128x128 blocks of 8x8 (k tile 32): ~180 registers, 1 block (8 waves) per SM, bound by registers, 84% busy: 2,568 us"."""
        t = self.tiles
        if not self.occupancy.blocks:
            return (f"{t.block_m}x{t.block_n} blocks of {t.register_m}x{t.register_n}: ~{self.registers} registers a thread, "
                    f"over the {device.limits.max_registers} a thread may use (it would spill)")
        return (f"{t.block_m}x{t.block_n} blocks of {t.register_m}x{t.register_n} (k tile {t.block_k}): ~{self.registers} registers, "
                f"{self.occupancy.describe(device)}, {self.hidden:.0%} busy: {self.ns / 1e3:,.1f} us")


def candidates(device: Device, itemsize: int, loops: tuple[int, int, int], batch: int = 1, strided: float = 1.0) -> list[TilePrice]:
    """Each of `SHAPES` priced for the matmul (m, n, k) `loops` on `device`, in SHAPES' order."""
    return [price(device, _tiles(device, itemsize, block, register), loops, batch, itemsize, strided) for block, register in SHAPES]


def matmul_tiles(device: Device, itemsize: int, loops: tuple[int, int, int] | None = None, batch: int = 1) -> MatmulTiles:
    """The tiles for `device`, an element of `itemsize` bytes and the matmul's (m, n, k) `loops` (module docstring):
    of `SHAPES`, the one `tile_time` prices fastest (without loops, the first)."""
    if loops is None:
        return _tiles(device, itemsize, *SHAPES[0])
    return min(candidates(device, itemsize, loops, batch), key=lambda p: p.ns).tiles


def _tiles(device: Device, itemsize: int, block: int, register: int) -> MatmulTiles:
    """A block x block tile of register x register threads' tiles, its k tile the longest that fits (module docstring)."""
    fits = [k for k in K_TILES if 2 * block * k * itemsize * BLOCKS_PER_UNIT <= device.shared]
    return MatmulTiles(block, block, fits[0] if fits else K_TILES[-1], register, register)


def matmul_time(device: Device, loops: tuple[int, int, int], batch: int, dtype: str, strided: float = 1.0) -> float:
    """ns of one tiled matmul launch (batch x m x n x k, its tiles `matmul_tiles`'s) without its launch overhead."""
    itemsize = np.dtype(dtype).itemsize
    return min(p.ns for p in candidates(device, itemsize, loops, batch, strided))


def tile_time(device: Device, tiles: MatmulTiles, loops: tuple[int, int, int], batch: int, itemsize: int,
              strided: float = 1.0) -> float:
    """ns of a matmul with `tiles` (`price`)."""
    return price(device, tiles, loops, batch, itemsize, strided).ns


def price(device: Device, tiles: MatmulTiles, loops: tuple[int, int, int], batch: int, itemsize: int,
          strided: float = 1.0) -> TilePrice:
    """A matmul with `tiles`: the longer of its global traffic (A read once per column of blocks, B once
    per row, C written; `strided`: slower uncoalesced copies of a transposed operand) at the device's
    bandwidth and its FMAs at the FLOP rate, on whole tiles (ragged edges compute padding), with each k
    step's TM + TN workgroup loads issued beside TM x TN FMAs (8-byte elements at the device's float64
    rate), and only as many CUs busy as there are blocks; divided by the busy share of a CU / SM: the
    blocks it holds (`occupancy`, from the estimated `registers` and the tiles' workgroup memory) each
    compute a k step, then wait for the next step's global loads (`hidden`). Infinite where a thread's
    registers exceed the device's limit (it would spill)."""
    m, n, k = loops
    rows, cols = -(-m // tiles.block_m), -(-n // tiles.block_n)
    moved = batch * itemsize * (m * k * cols + k * n * rows + m * n) * strided
    fmas = tiles.register_m * tiles.register_n
    issue = fmas / (fmas + tiles.register_m + tiles.register_n)
    blocks = batch * rows * cols
    busy = min(1.0, blocks / device.units)
    flops = 2.0 * batch * rows * tiles.block_m * cols * tiles.block_n * k
    weight = device.flops_weight("float64" if itemsize == 8 else "float32")
    estimate = registers(tiles, itemsize)
    held = occupancy(device, tiles.threads, estimate, tiles.shared_bytes(itemsize))
    if not held.blocks:
        return TilePrice(tiles, math.inf, estimate, held, 0.0)
    lanes = device.gflops / 2.0 / device.units  # FMAs a CU / SM issues per ns
    step = tiles.threads * min(tiles.block_k, k) * (fmas + tiles.register_m + tiles.register_n) * weight / lanes
    share = hidden(device, min(held.blocks, -(-blocks // device.units)), step)
    return TilePrice(tiles, max(moved / device.bandwidth_gbs, flops * weight / (device.gflops * issue * busy)) / share, estimate, held, share)
