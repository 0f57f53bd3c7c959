"""Tiling as a choice in the term: cache tiles of matmuls, row blocks of row loops, vector lanes of reductions.

A 2-D matmul, or each product of a batched (3-D) one, may be computed with cache tiles (TM, TN, TK).

The rules are the same for every Target (egglog_tensor.target): what they offer is the Target's, read
from facts the optimizer adds with each program (`target_facts`), so one base e-graph serves every
machine. Candidates come from the Target's caches: TK so the B micro-panel fills a quarter or half
of L1 (or a power of two that fits, which often divides k: then the tile stage packs B), TM so the
A block fits in L2, TN a few register tiles wide. The
cost model (cost.tile_slowdown) prices each against the actual shapes (cache fit, remainder
tiles) and the chosen `a.matmul_tiled(b, Vec(TM, TN, TK))` is what the "tile" stage applies: visible
in the extracted term and as `et.tiles` on the emitted linalg.matmul.

A row-fused output `fuse_rows(x)` may be computed as `fuse_rows_tiled(x, Vec(R))`: R rows per block
(the block's rows of every fused value must stay in L2: cost.rows_slowdown prices that, the
threads' balance and the per-block overhead); `et.rows = array<i64: R>` in the MLIR.

A reduction `x.sum(axes)` (max, min, prod alike) may be computed as `x.sum_lanes(axes, L)`: its
innermost loop, when that loop reduces, accumulates L elements side by side (L / VF vector
accumulators, VF the SIMD lanes of float32 here), standalone or inside a row-fused loop.
cost.reduce_slowdown prices each L against LLVM's own choice (four vectors and a vectorized
remainder): too few accumulators wait on the add latency, elements past the last multiple of L go
one at a time, and the accumulators are combined at the end; so a short or odd row (100 = 3 x 32
+ 4) may take fewer vectors, and long rows keep LLVM's. The emitter tags the op `et.lanes = L`;
lowering/lanes.py hands L to LLVM's vectorizer.
"""

from __future__ import annotations

from collections.abc import Callable
from itertools import product

from egglog import Unit, Vec, eq, i64, relation, rewrite, ruleset

from egglog_tensor.ir import WITH_LANES, Tensor, fuse_rows, fuse_rows_tiled, shape_of
from egglog_tensor.lowering.policy import ACCUMULATORS, BLOCK_ROWS, register_tile, simd_lanes
from egglog_tensor.target import Target


def candidates(itemsize: int, target: Target) -> list[tuple[int, int, int]]:
    """Cache-tile candidates (TM, TN, TK) for `target`: TK from L1 (half of it for the B micro-panel,
    or a power of two that often divides k, so B can be packed), TM from L2."""
    mr, nr = register_tile(itemsize, target)
    tk_full = max(8, target.l1 // 2 // (nr * itemsize) // 8 * 8)
    tks = sorted({tk_full // 2, tk_full} | {t for t in (64, 128, 256) if (nr + mr) * t * itemsize <= target.l1})
    tms = sorted({t for t in (64, 128, 256, 512) if t * tk_full * itemsize <= target.l2 // 3} or {64})
    tns = [2 * nr, 4 * nr, 8 * nr, 16 * nr]
    return list(product(tms, tns, tks))


matmul_tile = relation("matmul_tile", i64, i64, i64, i64, i64, i64)
"""matmul_tile(TM, TN, TK, M, N, K): the target offers the cache tile (TM, TN, TK) to a matmul whose m, n
and k loops are longer than M, N and K (-1: any): a tile past a loop's extent is clipped to it, so of the
candidates past a loop only the smallest is offered (a 50x40 @ 40x30 product gets one, not every one:
fewer e-nodes, a faster optimizer)."""
reduction_lanes = relation("reduction_lanes", i64)
"""reduction_lanes(L): the target offers L lanes to a reduction's innermost loop."""


def target_facts(target: Target) -> list[tuple[Callable[..., Unit], tuple[int, ...]]]:
    """What the tiling rules read of `target`, as facts the optimizer adds to each program's e-graph
    (seed.py): its cache tiles and reduction lanes. The rules themselves are the same for every
    target, so one base e-graph (and the packaged one, prebuilt.py) serves every machine."""
    cands = candidates(4, target)
    values = [sorted({c[d] for c in cands}) for d in range(3)]
    facts: list[tuple[Callable[..., Unit], tuple[int, ...]]] = []
    for tiles in cands:
        floors = tuple(max((w for w in v if w < t), default=-1) for t, v in zip(tiles, values, strict=True))
        facts.append((matmul_tile, (*tiles, *floors)))
    return facts + [(reduction_lanes, (vectors * simd_lanes(4, target),)) for vectors in ACCUMULATORS]


tiling = ruleset(name="tiling")


@tiling.register
def _tiles(a: Tensor, b: Tensor, s: Vec[i64], u: Vec[i64], tm: i64, tn: i64, tk: i64, m: i64, n: i64, k: i64) -> object:
    """Each cache tile the target offers (`matmul_tile`) to a matmul or each product of a batched one."""
    for rank in (2, 3):  # a matmul, a batch_matmul (each product of the batch)
        yield rewrite(a @ b).to(
            a.matmul_tiled(b, Vec[i64](tm, tn, tk)),
            eq(shape_of(a)).to(s), eq(s.length()).to(i64(rank)), eq(shape_of(b)).to(u),
            eq(u.length()).to(i64(rank)), matmul_tile(tm, tn, tk, m, n, k),
            s[rank - 2] > m, u[rank - 1] > n, s[rank - 1] > k,
        )


@tiling.register
def _row_tiles(a: Tensor) -> object:
    for r in BLOCK_ROWS:
        yield rewrite(fuse_rows(a)).to(fuse_rows_tiled(a, Vec[i64](i64(r))))


@tiling.register
def _reduction_lanes(x: Tensor, axes: Vec[i64], lanes: i64) -> object:
    """Each number of lanes the target offers (`reduction_lanes`) to a reduction."""
    for op, with_lanes in WITH_LANES.items():
        yield rewrite(getattr(x, op)(axes)).to(with_lanes(x, axes, lanes), reduction_lanes(lanes))
