"""Row fusion with MLIR's transform dialect: the loop over row blocks of a `fuse_rows` kernel.

The emitter tags the linalg op computing `fuse_rows(x)` with `et.rows`. This stage tiles it along
its first loop into blocks of `block_rows` rows (`tile_using_forall`) and fuses into that loop,
consumers first, every producer whose rows are the block's rows (`fuse_into_containing_op`): row
reductions and their fills, materialized row-aligned values. A naive softmax becomes

    scf.forall (block) {  max of the block's rows; exp(x - max) of the block; its row sums; divide }

so x is read from memory once and the block's intermediates (a few KB) stay in cache. The forall
is the parallel loop of cpu-openmp (one block per iteration) and a sequential loop on cpu.

`fuse_rows_tiled(x, Vec(R))` in the term tags the op `et.rows = array<i64: R>`: blocks of R rows; a
bare `et.rows` (untiled `fuse_rows`) gets `block_rows`. Reductions in the loop keep the lanes they
chose themselves (`x.sum_lanes(axes, L)`: `et.lanes`, lowering/stages/lanes.py); tiling and fusion clone
them with the attribute.

Which producers fuse is read off the payload: an operand of a fused op whose indexing map sends
the op's row loop to the operand's first dim, defined by a linalg op whose output's first dim is
one of its parallel loops (that loop is its row loop), and whose every user is in the loop.
Identical block slices are merged (cse) inside the loop before each fusion, so a producer read by
several fused ops is computed once per block.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

from mlir import ir

from ...target import Target
from .. import scripts
from ..annotations import ROWS
from ..policy import block_rows
from ..payload import as_operation, element_bytes, indexing_maps, linalg_ops, loop_extents, reverses
from .stage import Stage



def tag(op: ir.Operation | ir.OpView, tiles: tuple[int, ...] | None = None) -> None:
    """Mark the op computing a `fuse_rows` value (the consumer whose row loop is tiled), with the
    tiles the term chose (`fuse_rows_tiled`: rows per block) if it chose them."""
    op.operation.attributes[ROWS] = ir.UnitAttr.get() if tiles is None else ir.DenseI64ArrayAttr.get(list(tiles))


def _row_loop(amap: ir.AffineMap) -> int | None:
    """The loop an indexing map sends to the first dim of its operand, if it is a bare loop index."""
    results = list(amap.results)
    if results and isinstance(results[0], ir.AffineDimExpr):
        return ir.AffineDimExpr(results[0]).position
    return None


def producers(root: ir.Operation) -> list[ir.Operation]:
    """The linalg ops that compute, block by block, rows the tiled rows of `root` read (unordered)."""
    found: list[ir.Operation] = []

    def visit(op: ir.Operation, row: int) -> None:
        maps = indexing_maps(op)
        if maps is None:
            return
        for operand, amap in zip(op.operands, maps, strict=True):
            producer = as_operation(operand.owner)
            if producer is None or _row_loop(amap) != row or producer in found:
                continue
            if producer.name == "linalg.fill":
                found.append(producer)
            elif producer.name == "linalg.generic" and len(producer.results) == 1 and not reverses(producer):
                inner = _row_loop(indexing_maps(producer)[-1])
                iterators = ir.ArrayAttr(producer.attributes["iterator_types"])
                if inner is not None and "parallel" in str(iterators[inner]):
                    found.append(producer)
                    visit(producer, inner)

    visit(root, 0)
    # Only producers whose every user is in the loop: one with a user outside (another output, say)
    # stays whole outside it (fusing it would add a loop result for the outside user, and MLIR
    # swapped the destinations of such results once the one-iteration loop folded).
    while True:
        group = [root, *found]
        outside = [p for p in found if any(as_operation(u.owner) not in group for u in p.results[0].uses)]
        if not outside:
            return found
        found = [p for p in found if p not in outside]


def _tiles(root: ir.Operation) -> tuple[int, ...]:
    """The (rows per block,) a tagged op carries, or () for a bare tag."""
    attr = root.attributes[ROWS]
    return tuple(ir.DenseI64ArrayAttr(attr)) if isinstance(attr, ir.DenseI64ArrayAttr) else ()


def _block(root: ir.Operation, group: list[ir.Operation], target: Target) -> int:
    """Rows per block of a tagged op's loop: the term's choice, else `block_rows` for the row-sized
    values of the op and its fused producers (`group`)."""
    chosen = _tiles(root)
    if chosen:
        return chosen[0]
    extents = loop_extents(root)
    itemsize = element_bytes(ir.ShapedType(root.results[0].type).element_type)
    values = 1 + sum(p.name == "linalg.generic" for p in group)
    return block_rows(extents[0], math.prod(extents[1:]) * itemsize * values, target)


def transform_script(module: ir.Module, target: Target) -> ir.Module | None:
    """The transform module building the row-block loop of each tagged op, or None if there is none
    (the loop's iterations are spread over `target`'s threads)."""
    ops = linalg_ops(module)
    roots = [op for op in ops if ROWS in op.attributes and op.name == "linalg.generic" and loop_extents(op)]
    if not roots:
        return None
    groups: list[list[int]] = []  # each root's producers to fuse (indices in ops), consumers first
    fused: set[int] = set()  # (a producer fuses into one loop only)
    for root in roots:
        groups.append(sorted({ops.index(p) for p in producers(root)} - fused, reverse=True))
        fused.update(groups[-1])

    def body(root_handle: ir.Value) -> None:
        handles = scripts.linalg_handles(root_handle, len(ops))
        funcs = scripts.match_kernel(root_handle)
        for root, group in zip(roots, groups, strict=True):
            sizes = [_block(root, [ops[p] for p in group], target)] + [0] * (len(loop_extents(root)) - 1)
            scripts.tile_and_fuse(handles[ops.index(root)], sizes, [handles[p] for p in group])
        scripts.tidy_fused(funcs)

    return scripts.build(module.context, body)


@dataclass(frozen=True)
class Rows(Stage):
    """Kernels tagged et.rows (fuse_rows in the term) become one loop over row blocks for the Target."""

    target: Target
    name: ClassVar[str] = "rows"
    passes: ClassVar[tuple[str, ...]] = ("canonicalize",)
    scripted: ClassVar[bool] = True

    def script(self, module: ir.Module) -> ir.Module | None:
        return transform_script(module, self.target)
