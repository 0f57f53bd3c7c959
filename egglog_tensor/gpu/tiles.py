"""A GPU matmul's tiles, chosen from the Device (lowering/gpu/matmul.py builds the kernel, cost.py prices it).

Each block computes a BM x BN tile of C with 256 threads (whole waves of 64 or 32), each thread a
TM x TN register tile; the k loop steps by BK, the block copying BM x BK of A and BK x BN of B into
workgroup memory per step. BK is the longest of 32, 16, 8 whose two tiles take at most a quarter of
the block's shared memory, so four blocks can share a CU / SM. Of the tile shapes (`SHAPES`), the
cost model's `tile_time` with the Target's bandwidth, FLOP rate and CU count picks one per matmul:
wider tiles halve the global traffic and issue fewer workgroup loads per FMA, but leave CUs idle on
small outputs.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..target import Device

# (block tile side, register tile side) with 256 threads each: 64 x 64 blocks of 4 x 4 registers (16 FMAs
# beside 8 workgroup loads a k step), and, for 4-byte elements, 128 x 128 of 8 x 8 (64 beside 16, half the
# global traffic; 64 accumulators a thread: no spills on sm_90) where the output has blocks enough to fill the device.
SHAPES = ((64, 4), (128, 8))
WIDE_ITEMSIZE = 4
K_TILES = (32, 16, 8)
BLOCKS_PER_UNIT = 4


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


def matmul_tiles(device: Device, itemsize: int, loops: tuple[int, int, int] | None = None, batch: int = 1) -> MatmulTiles:
    """The tiles for `device`, an element of `itemsize` bytes and the matmul's (m, n, k) `loops` (module docstring):
    of `SHAPES`, the one `tile_time` prices fastest (without loops, the first)."""
    shapes = SHAPES if loops is not None and itemsize <= WIDE_ITEMSIZE else SHAPES[:1]
    options = [_tiles(device, itemsize, block, register) for block, register in shapes]
    return min(options, key=lambda t: tile_time(device, t, loops, batch, itemsize)) if loops is not None else options[0]


def _tiles(device: Device, itemsize: int, block: int, register: int) -> MatmulTiles:
    """A block x block tile of register x register threads' tiles, its k tile the longest that fits (module docstring)."""
    fits = [k for k in K_TILES if 2 * block * k * itemsize * BLOCKS_PER_UNIT <= device.shared]
    return MatmulTiles(block, block, fits[0] if fits else K_TILES[-1], register, register)


def matmul_time(device: Device, loops: tuple[int, int, int], batch: int, dtype: str, strided: float = 1.0) -> float:
    """ns of one tiled matmul launch (batch x m x n x k, its tiles `matmul_tiles`'s) without its launch overhead."""
    itemsize = np.dtype(dtype).itemsize
    return tile_time(device, matmul_tiles(device, itemsize, loops, batch), loops, batch, itemsize, strided)


def tile_time(device: Device, tiles: MatmulTiles, loops: tuple[int, int, int], batch: int, itemsize: int,
              strided: float = 1.0) -> float:
    """ns of a matmul with `tiles`: the longer of its global traffic (A read once per column of blocks, B once
    per row, C written; `strided`: slower uncoalesced copies of a transposed operand) at the device's
    bandwidth and its FMAs at the FLOP rate, on whole tiles (ragged edges compute padding), with each k
    step's TM + TN workgroup loads issued beside TM x TN FMAs (8-byte elements at the device's float64
    rate), and only as many CUs busy as there are blocks."""
    m, n, k = loops
    rows, cols = -(-m // tiles.block_m), -(-n // tiles.block_n)
    moved = batch * itemsize * (m * k * cols + k * n * rows + m * n) * strided
    fmas = tiles.register_m * tiles.register_n
    issue = fmas / (fmas + tiles.register_m + tiles.register_n)
    busy = min(1.0, batch * rows * cols / device.units)
    flops = 2.0 * batch * rows * tiles.block_m * cols * tiles.block_n * k
    weight = device.flops_weight("float64" if itemsize == 8 else "float32")
    return max(moved / device.bandwidth_gbs, flops * weight / (device.gflops * issue * busy))
