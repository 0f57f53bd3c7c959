"""Column strips: two reductions of one input's outer axes, the second reading the first, run strip by strip.

`np.var(x, axis=0)` reduces x's rows twice: the column means, then the squared deviations from them
(both blocked sums, lowering/blocking.py). Emitted whole, each reduction reads x from memory. This
stage tiles the consumer-most op of such a chain along its loop over the last (kept) axis into
strips of columns (`tile_using_forall`) and fuses into that loop every producer computing the
strip's columns (`fuse_into_containing_op`, consumers first; the extract_slice a fused op reads
bubbled up through the blocked sums' expand_shape views first):

    scf.forall (strip) {  the strip's column means;  the strip's squared deviations;  var  }

so a strip (its rows x `strip_columns` values, half the L2 cache) is read from memory once and the
second reduction finds it in cache. Each strip row is a whole number of 4 KB pages: a narrower one
reads every row from its own page (a TLB miss every few lines, and streams too short for the
prefetchers), so an input with too many rows for a page of each in half the L2 (4096x4096 float32:
16 MB a page-wide strip) keeps its two whole passes (docs/perf/2026-11-28-var.md). Tiling a kept (parallel) loop changes no arithmetic: every
column is summed in the same order as before. The forall is cpu-openmp's parallel loop (the
parallel stage leaves ops in a forall alone) and a sequential loop on cpu.

Blocks: `np.var` over the leading axes of a large array is traced as moments of blocks of 64 rows
(tracing/statistics.py `_blocks`: one (blocks, 3, columns) value, materialized). Its root's block loop
indexes the values its producers compute, so the forall also steps it one block at a time
(`_block_loops`); a strip then holds one block's rows, so strips as narrow as BLOCK_UNIT bytes a row
fit half the L2 (64 rows of a few pages touch few TLB entries): x is read from memory once.

A chain qualifies when its ops (the root and the producers fused with it) hold two reductions that
read the same source value (a function argument, or any value computed before the chain), each
keeping its last dim, and that source is larger than half the L2 cache (smaller inputs stay in
cache anyway). Producers follow the root's last loop: an operand read with that loop as its last
index, defined by a fill or by a one-result generic whose own last loop is parallel and writes its
output's last dim (through expand_shapes that keep the last dim alone), every user in the chain.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

from mlir import ir

from ...target import Target
from .. import scripts
from ..payload import as_operation, element_bytes, in_forall, indexing_maps, linalg_ops, loop_extents, reverses
from .stage import Stage

EXPAND = "tensor.expand_shape"
PAGE = 4096  # bytes of a memory page (the TLB's unit)
BLOCK_UNIT = 512  # bytes of a block's strip row at least (8 cache lines: a stream the prefetchers follow)


def _last_loop(amap: ir.AffineMap) -> int | None:
    """The loop an indexing map sends bare to its operand's last dim."""
    results = list(amap.results)
    if results and isinstance(results[-1], ir.AffineDimExpr):
        return ir.AffineDimExpr(results[-1]).position
    return None


def _column_loop(op: ir.Operation) -> int | None:
    """A one-result generic's parallel loop writing its output's last dim (None if there is none)."""
    if op.name != "linalg.generic" or len(op.results) != 1 or reverses(op):
        return None
    loop = _last_loop(indexing_maps(op)[-1])
    iterators = ir.ArrayAttr(op.attributes["iterator_types"])
    return loop if loop is not None and "parallel" in str(iterators[loop]) else None


def _through_views(value: ir.Value) -> ir.Value:
    """`value` seen through expand_shapes that keep its last dim alone (the blocked sums' views)."""
    while (owner := as_operation(value.owner)) is not None and owner.name == EXPAND:
        groups = ir.ArrayAttr(owner.attributes["reassociation"])
        if len(ir.ArrayAttr(groups[len(groups) - 1])) != 1:
            break
        value = owner.operands[0]
    return value


def _reads(op: ir.Operation, loop: int) -> list[ir.Value]:
    """The values (seen through views) op reads with `loop` as their last index."""
    return [_through_views(v) for v, m in zip(op.operands[:-1], indexing_maps(op)[:-1], strict=True)
            if _last_loop(m) == loop]


def chain(root: ir.Operation) -> list[ir.Operation]:
    """The fills and generics computing, strip by strip, the columns `root`'s column loop reads (unordered)."""
    found: list[ir.Operation] = []

    def visit(op: ir.Operation, loop: int) -> None:
        for value, amap in zip(op.operands, indexing_maps(op), strict=True):
            producer = as_operation(_through_views(value).owner)
            if producer is None or producer in found or _last_loop(amap) != loop:
                continue
            if producer.name == "linalg.fill":
                found.append(producer)
            elif (inner := _column_loop(producer)) is not None:
                found.append(producer)
                visit(producer, inner)

    visit(root, _column_loop(root))
    while True:  # only producers whose every user is in the loop (as stages/rows.py)
        group = [root, *found]
        outside = [p for p in found if any(_outside(u.owner, group) for u in p.results[0].uses)]
        if not outside:
            return found
        found = [p for p in found if p not in outside]


def _outside(owner: object, group: list[ir.Operation]) -> bool:
    """Whether a use (through the views between) is by an op not in `group`."""
    op = as_operation(owner)
    if op is not None and op.name == EXPAND:
        return any(_outside(u.owner, group) for u in op.results[0].uses)
    return op not in group


def _source(group: list[ir.Operation], l2: int) -> ir.Value | None:
    """The value two reductions of `group` read along their column loops, if it is larger than half the L2."""
    seen: list[ir.Value] = []
    for op in group:
        if op.name != "linalg.generic" or "reduction" not in str(op.attributes["iterator_types"]):
            continue
        for value in _reads(op, _column_loop(op)):
            kind = ir.ShapedType(value.type)
            if value in seen and kind.has_static_shape and math.prod(kind.shape) * element_bytes(kind.element_type) > l2 // 2:
                return value
            seen.append(value)
    return None


def _block_loops(root: ir.Operation, producers: list[ir.Operation]) -> list[int]:
    """The root's parallel loops, but its column loop, that index a value a producer computes (the blocks of
    `np.var`'s blocked form, tracing/statistics.py): a strip covers one step of each, so only a block's rows."""
    iterators = ir.ArrayAttr(root.attributes["iterator_types"])
    column = _column_loop(root)
    found: set[int] = set()
    for value, amap in zip(root.operands[:-1], indexing_maps(root)[:-1], strict=True):
        if as_operation(_through_views(value).owner) in producers:
            found |= {r.position for r in amap.results if isinstance(r, ir.AffineDimExpr)}
    return sorted(loop for loop in found if loop != column and "parallel" in str(iterators[loop]))


def strip_columns(source: ir.Value, target: Target, blocks: int = 1) -> int | None:
    """Columns per strip: whole pages of each row of `source` (PAGE bytes; its rows split among `blocks`), as many as
    half the L2 cache holds for a block's rows; None when not even one page a row fits (see the module's docstring)."""
    kind = ir.ShapedType(source.type)
    itemsize = element_bytes(kind.element_type)
    rows = math.prod(kind.shape[:-1])
    if rows % blocks:
        return None
    rows //= blocks
    unit = (PAGE if blocks == 1 else BLOCK_UNIT) // itemsize
    width = target.l2 // 2 // max(1, rows * itemsize) // unit * unit
    return width or None


def roots(module: ir.Module, target: Target) -> list[tuple[ir.Operation, list[ir.Operation], list[int]]]:
    """Each chain to run in strips: (its consumer-most op, its producers consumers first, its tile sizes)."""
    ops = [op for op in linalg_ops(module) if not in_forall(op)]
    taken: list[ir.Operation] = []
    found = []
    for op in reversed(ops):
        if op in taken or _column_loop(op) is None:
            continue
        group = chain(op)
        source = _source([op, *group], target.l2)
        blocks = _block_loops(op, group)
        extents = loop_extents(op)
        width = None if source is None else strip_columns(source, target, math.prod(extents[b] for b in blocks))
        if width is None or (extents[_column_loop(op)] <= width and not blocks):
            continue
        sizes = [0] * len(extents)
        sizes[_column_loop(op)] = min(width, extents[_column_loop(op)])
        for loop in blocks:
            sizes[loop] = 1
        producers = sorted(group, key=ops.index, reverse=True)
        found.append((op, producers, sizes))
        taken += [op, *producers]
    return found


def transform_script(module: ir.Module, target: Target) -> ir.Module | None:
    """The transform module building the strip loop of each qualifying chain, or None if there is none."""
    chosen = roots(module, target)
    if not chosen:
        return None
    ops = linalg_ops(module)

    def body(root_handle: ir.Value) -> None:
        handles = scripts.linalg_handles(root_handle, len(ops))
        funcs = scripts.match_kernel(root_handle)
        for root, producers, sizes in chosen:
            scripts.tile_and_fuse(handles[ops.index(root)], sizes, [handles[ops.index(p)] for p in producers], bubble_slices=True)
        scripts.tidy_fused(funcs)

    return scripts.build(module.context, body)


@dataclass(frozen=True)
class Strips(Stage):
    """Two reductions of one large input's outer axes, the second reading the first, as one loop over column strips."""

    target: Target
    name: ClassVar[str] = "strips"
    passes: ClassVar[tuple[str, ...]] = ("canonicalize",)
    scripted: ClassVar[bool] = True

    def script(self, module: ir.Module) -> ir.Module | None:
        return transform_script(module, self.target)
