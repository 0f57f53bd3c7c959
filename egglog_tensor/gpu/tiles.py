"""A GPU matmul's tiles, chosen from the Device (lowering/gpu/matmul.py builds the kernel, cost.py prices it).

Each block computes a BM x BN tile of C with 256 threads (whole waves of 64 or 32), each thread a
TM x TN register tile; the k loop steps by BK, the block copying BM x BK of A and BK x BN of B into
workgroup memory per step. BK is the longest of 32, 16, 8 whose two tiles take at most a quarter of
the block's shared memory, so four blocks can share a CU / SM.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..target import Device

BLOCK_M = BLOCK_N = 64
REGISTER_M = REGISTER_N = 4  # 16 accumulators and 8 workgroup-memory loads per k step a thread
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


def matmul_tiles(device: Device, itemsize: int) -> MatmulTiles:
    """The tiles for `device` and an element of `itemsize` bytes (module docstring)."""
    fits = [k for k in K_TILES if (BLOCK_M + BLOCK_N) * k * itemsize * BLOCKS_PER_UNIT <= device.shared]
    return MatmulTiles(BLOCK_M, BLOCK_N, fits[0] if fits else K_TILES[-1], REGISTER_M, REGISTER_N)


def matmul_time(device: Device, loops: tuple[int, int, int], batch: int, dtype: str, strided: float = 1.0) -> float:
    """ns of one tiled matmul launch (batch x m x n x k) without its launch overhead: the longer of its
    global traffic (A read once per column of blocks, B once per row, C written; `strided`: slower
    uncoalesced copies of a transposed operand) at the device's bandwidth and its FMAs at the FLOP
    rate, on whole tiles (ragged edges compute padding), with each k step's TM + TN workgroup loads
    issued beside TM x TN FMAs (float64's at the device's float64 rate), and only as many CUs busy as there are blocks."""
    m, n, k = loops
    itemsize = np.dtype(dtype).itemsize
    tiles = matmul_tiles(device, itemsize)
    rows, cols = -(-m // tiles.block_m), -(-n // tiles.block_n)
    moved = batch * itemsize * (m * k * cols + k * n * rows + m * n) * strided
    fmas = tiles.register_m * tiles.register_n
    issue = fmas / (fmas + tiles.register_m + tiles.register_n)
    busy = min(1.0, batch * rows * cols / device.units)
    flops = 2.0 * batch * rows * tiles.block_m * cols * tiles.block_n * k
    return max(moved / device.bandwidth_gbs, flops * device.flops_weight(dtype) / (device.gflops * issue * busy))

