"""A matmul (or batched matmul) tiled through workgroup memory, in the gpu-reduce stage.

gpu-tile leaves a matmul-shaped linalg op whole (`matmul_plan`; linalg.matmul and batch_matmul
generalized). After bufferization `tile_matmul` makes it one launch of a block per BM x BN tile of
C (n tiles on the grid's x, m tiles on y, the batch on z) with the threads of `gpu/tiles.py`: thread
(ty, tx) accumulates rows ty + i BM/TM and columns tx + j BN/TN of the tile (TM x TN registers,
loop-carried). The k loop steps by BK: the block copies A's BM x BK and B's BK x BN tiles into
workgroup memory (each thread a strided share, coalesced along the operands' rows; indices clamped
at the edges, so a partial tile reads valid memory and the k loop of the last step stops at k),
`gpu.barrier`, each thread folds the step's k into its registers with the op's own body (in k
order, from C's initial value: the fill's scalar or what C holds), `gpu.barrier`. Then each thread
stores the register tile's elements that fall inside C.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from mlir import ir
from mlir.dialects import arith, gpu, memref, scf

from ...gpu.tiles import MatmulTiles, matmul_tiles
from ...target import Device
from ..payload import element_bytes, indexing_maps, loop_extents
from .reduce import GRID_X, apply_map, block_forall, clone_body, folded_fill, index_constant
from .tile import GRID_YZ, WORKGROUP, loop_kinds

_DEFAULT_MAPS = {"linalg.matmul": ("(m, n, k) -> (m, k)", "(m, n, k) -> (k, n)", "(m, n, k) -> (m, n)"),
                 "linalg.batch_matmul": ("(b, m, n, k) -> (b, m, k)", "(b, m, n, k) -> (b, k, n)", "(b, m, n, k) -> (b, m, n)")}


@dataclass(frozen=True)
class MatmulPlan:
    """A matmul's loops (batch, m, n, k: the op's last three loops m, n, k) and its tiles."""

    extents: tuple[int, ...]
    tiles: MatmulTiles

    @property
    def grid(self) -> list[int]:
        *batch, m, n, _ = self.extents
        return [*batch, -(-m // self.tiles.block_m), -(-n // self.tiles.block_n)]


def _maps(op: ir.Operation) -> list[ir.AffineMap] | None:
    maps = indexing_maps(op)
    if maps is None and op.name in _DEFAULT_MAPS:
        return [ir.AffineMapAttr(ir.Attribute.parse(f"affine_map<{text}>")).value for text in _DEFAULT_MAPS[op.name]]
    return maps


def _dims(amap: ir.AffineMap) -> list[int] | None:
    """The loops a projected-permutation map reads, in result order (None for other maps)."""
    dims = [e.position if isinstance(e, ir.AffineDimExpr) else -1 for e in amap.results]
    return None if -1 in dims else dims


def matmul_plan(op: ir.Operation, device: Device) -> MatmulPlan | None:
    """The tiling of a matmul-shaped linalg op (two inputs, loops [batch] m n k with k the only
    reduction, A not reading n, B not reading m, C the parallel loops in order, every map a
    projected permutation), or None for any other op or a grid beyond the device's limits."""
    if op.name not in (*_DEFAULT_MAPS, "linalg.generic") or len(op.operands) != 3:
        return None
    kinds = loop_kinds(op)
    if kinds not in ("ppr", "pppr"):
        return None
    maps = _maps(op)
    dims = [_dims(m) for m in maps] if maps else None
    if dims is None or None in dims:
        return None
    loops = len(kinds)
    m, n, k = loops - 3, loops - 2, loops - 1
    a, b, c = dims
    if n in a or m in b or k not in a or k not in b or c != list(range(loops - 1)):
        return None
    if op.name == "linalg.generic" and any(o.operation.name == "linalg.index" for o in op.regions[0].blocks[0].operations):
        return None
    extents = loop_extents(op)
    if 0 in extents:
        return None
    *batch, m_extent, n_extent, k_extent = extents
    tiles = matmul_tiles(device, element_bytes(ir.ShapedType(op.operands[2].type).element_type), (m_extent, n_extent, k_extent), math.prod(batch))
    plan = MatmulPlan(extents, tiles)
    *batch, rows, cols = plan.grid
    if rows > GRID_YZ or cols > GRID_X or any(x > GRID_YZ for x in batch):
        return None
    return plan


def _min(value: ir.Value, bound: int) -> ir.Value:
    return arith.minui(value, index_constant(bound))


def tile_matmul(op: ir.Operation, plan: MatmulPlan) -> None:
    """Replace a bufferized matmul-shaped linalg.generic by its tiled launch (module docstring)."""
    view = op.opview
    a, b = list(view.inputs)
    out = view.outputs[0]
    amap, bmap, _ = _maps(op)
    body = op.regions[0].blocks[0]
    t = plan.tiles
    *_, m_extent, n_extent, k_extent = plan.extents
    element = ir.ShapedType(out.type).element_type
    space = ir.Attribute.parse(WORKGROUP)
    across = t.block_n // t.register_n  # threads along n
    with ir.InsertionPoint(op), op.location:
        init = folded_fill(op, out)
        forall = block_forall(plan.grid, t.threads)
        with ir.InsertionPoint(forall.body.operations[0]):
            *batch, block_m, block_n = forall.induction_variables
            tid = gpu.ThreadIdOp(gpu.Dimension.x).result
            tx, ty = arith.remui(tid, index_constant(across)), arith.divui(tid, index_constant(across))
            m0, n0 = arith.muli(block_m, index_constant(t.block_m)), arith.muli(block_n, index_constant(t.block_n))
            local_rows = [arith.addi(ty, index_constant(i * t.block_m // t.register_m)) for i in range(t.register_m)]
            local_cols = [arith.addi(tx, index_constant(j * t.block_n // t.register_n)) for j in range(t.register_n)]
            rows, cols = [arith.addi(m0, r) for r in local_rows], [arith.addi(n0, c) for c in local_cols]
            if init is not None:
                accs = [init] * (t.register_m * t.register_n)
            else:  # (C's element, or a valid one at the edge: those are not stored)
                accs = [memref.LoadOp(out, [*batch, _min(r, m_extent - 1), _min(c, n_extent - 1)]).result for r in rows for c in cols]
            shared_a = memref.AllocOp(ir.MemRefType.get([t.block_m, t.block_k], element, memory_space=space), [], []).result
            shared_b = memref.AllocOp(ir.MemRefType.get([t.block_k, t.block_n], element, memory_space=space), [], []).result
            steps = scf.ForOp(index_constant(0), index_constant(k_extent), index_constant(t.block_k), accs)
            with ir.InsertionPoint(steps.body):
                k0 = steps.induction_variable

                def copy(source: ir.Value, amap: ir.AffineMap, tile: ir.Value, shape: tuple[int, int],
                         at: Callable[[ir.Value, ir.Value], list[ir.Value]]) -> None:
                    """Each thread's share of a tile: elements tid, tid + threads, ... in row-major order."""
                    height, width = shape
                    for step in range(height * width // t.threads):
                        flat = arith.addi(tid, index_constant(step * t.threads))
                        row, col = arith.divui(flat, index_constant(width)), arith.remui(flat, index_constant(width))
                        value = memref.LoadOp(source, apply_map(amap, at(row, col))).result
                        memref.StoreOp(value, tile, [row, col])

                zero = index_constant(0)
                copy(a, amap, shared_a, (t.block_m, t.block_k),
                     lambda r, c: [*batch, _min(arith.addi(m0, r), m_extent - 1), zero, _min(arith.addi(k0, c), k_extent - 1)])
                copy(b, bmap, shared_b, (t.block_k, t.block_n),
                     lambda r, c: [*batch, zero, _min(arith.addi(n0, c), n_extent - 1), _min(arith.addi(k0, r), k_extent - 1)])
                gpu.BarrierOp()
                depth = arith.minui(index_constant(t.block_k), arith.subi(index_constant(k_extent), k0))
                inner = scf.ForOp(index_constant(0), depth, index_constant(1), list(steps.inner_iter_args))
                with ir.InsertionPoint(inner.body):
                    kk = inner.induction_variable
                    a_values = [memref.LoadOp(shared_a, [r, kk]).result for r in local_rows]
                    b_values = [memref.LoadOp(shared_b, [kk, c]).result for c in local_cols]
                    carried = list(inner.inner_iter_args)
                    scf.YieldOp([clone_body(body, [x, y, carried[i * t.register_n + j]])[0]
                                 for i, x in enumerate(a_values) for j, y in enumerate(b_values)])
                gpu.BarrierOp()
                scf.YieldOp(list(inner.results))
            for i, r in enumerate(rows):
                for j, c in enumerate(cols):
                    inside = arith.andi(arith.cmpi(arith.CmpIPredicate.ult, r, index_constant(m_extent)),
                                        arith.cmpi(arith.CmpIPredicate.ult, c, index_constant(n_extent)))
                    branch = scf.IfOp(inside)
                    with ir.InsertionPoint(branch.then_block):
                        memref.StoreOp(steps.results[i * t.register_n + j], out, [*batch, r, c])
                        scf.YieldOp([])
    op.erase()

