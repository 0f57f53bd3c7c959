"""Transposed copies in square blocks: an elementwise op whose innermost loop steps across the rows of
one of its buffers is tiled so that each block's rows stay in the L1 cache.

`np.ascontiguousarray(b.T)`, the layout ruleset's row-major copy of a transposed matmul operand, and
`a + b.T` are one loop nest over the output, whose innermost loop writes a row contiguously and reads
a column of the transposed buffer: every element from another cache line, each line evicted before
the next row of the output needs its other elements. A 1024 x 1024 float32 transpose took 7.6 ms, 25x
a copy of the same bytes. Tiled in BLOCK x BLOCK blocks along the output's innermost loop and the loop
the strided buffer is contiguous along, a block's BLOCK lines of that buffer are read once from memory
and then from L1 (BLOCK = 32: 32 lines of 64 bytes, 2 KiB of float32 or 4 KiB of float64, beside the
block's 32 output lines).

After bufferization (memref types give the strides: a strided argument or view counts as a map does).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from mlir import ir
from mlir.dialects.transform import vector as vector_transform

from .. import scripts
from ..payload import linalg_ops
from .flatten import scalar_body
from .stage import Stage, count_ops

VECTOR = 8  # rows and columns of the vector tile transposed in registers
BLOCK = 32  # rows and columns of a block: its strided buffer's lines fit L1 with room to spare


def _strides(value_type: ir.Type) -> list[int] | None:
    """The static strides of a memref in elements (None: not a memref, or a stride known only at run time)."""
    try:
        memref = ir.MemRefType(value_type)
    except ValueError:
        return None
    strides, _ = memref.get_strides_and_offset()
    return None if any(s == ir.ShapedType.get_dynamic_stride_or_offset() for s in strides) else list(strides)


def _by_loop(op: ir.Operation, operand: int, values: list[int], loops: int) -> list[int] | None:
    """`values` (one per dimension of operand `operand`) each at the loop its indexing map reads that
    dimension with, 0 at loops it does not read (None: a map result neither a loop nor a constant)."""
    amap = ir.AffineMapAttr(ir.ArrayAttr(op.attributes["indexing_maps"])[operand]).value
    along = [0] * loops
    for value, expr in zip(values, amap.results, strict=True):
        if isinstance(expr, ir.AffineDimExpr):
            along[expr.position] = value
        elif not isinstance(expr, ir.AffineConstantExpr):
            return None
    return along


def blocked_loops(op: ir.Operation) -> tuple[int, int] | None:
    """The two loops to tile of an all-parallel linalg op whose innermost loop reads or writes a buffer
    with a stride > 1 that another loop steps through contiguously: (that loop, the innermost); None if none."""
    if "iterator_types" not in op.attributes or "indexing_maps" not in op.attributes:
        return None
    iterators = ir.ArrayAttr(op.attributes["iterator_types"])
    loops = len(iterators)
    if loops < 2 or not all("parallel" in str(it) for it in iterators):
        return None
    for operand in range(len(op.operands)):
        strides = _strides(op.operands[operand].type)
        along = None if strides is None else _by_loop(op, operand, strides, loops)
        if along is None or abs(along[-1]) <= 1:
            continue
        contiguous = [d for d in range(loops - 1) if abs(along[d]) == 1]
        if contiguous:
            return contiguous[-1], loops - 1
    return None


def _extents(op: ir.Operation, loops: int) -> list[int] | None:
    """The static trip count of each loop of an elementwise op, from its output's map and shape (None: one is dynamic)."""
    output = len(op.operands) - 1
    extents = _by_loop(op, output, ir.MemRefType(op.operands[output].type).shape, loops)
    return None if extents is None or any(e < 0 for e in extents) else extents


def vectorized(op: ir.Operation, pair: tuple[int, int], loops: int) -> bool:
    """Whether the blocks of `op` are transposed VECTOR x VECTOR in registers: the pair is the last two
    loops, whole blocks tile them (static sizes) and the body computes scalars only."""
    extents = _extents(op, loops)
    return (pair == (loops - 2, loops - 1) and extents is not None and all(extents[d] % BLOCK == 0 for d in pair)
            and scalar_body(op))


def _shuffled_transposes() -> None:
    """The pattern op lowering vector.transpose to one vector.shuffle (LLVM picks the unpack/shuffle sequence)."""
    vector_transform.ApplyLowerTransposePatternsOp(lowering_strategy=vector_transform.VectorTransposeLowering.Shuffle1D)


def transform_script(module: ir.Module) -> ir.Module | None:
    """The transform module tiling each op `blocked_loops` picks (None when there is none)."""
    ops = linalg_ops(module)
    chosen = {i: pair for i, op in enumerate(ops) if (pair := blocked_loops(op)) is not None}
    if not chosen:
        return None

    def body(root: ir.Value) -> None:
        handles = scripts.linalg_handles(root, len(ops))
        for i, pair in chosen.items():
            loops = len(ir.ArrayAttr(ops[i].attributes["iterator_types"]))
            sizes = [BLOCK if d in pair else 0 for d in range(loops)]
            tiled, outer = scripts.tile_using_for(handles[i], sizes)
            if vectorized(ops[i], pair, loops):
                inner, _ = scripts.tile_using_for(tiled, [VECTOR if d in pair else 1 for d in range(loops)])
                scripts.vectorize(inner)
                scripts.apply_patterns(outer[0], vector_transform.ApplyTransferPermutationPatternsOp, _shuffled_transposes)

    return scripts.build(module.context, body)


@dataclass(frozen=True)
class Blocked:
    """What the transposes stage decided: how many elementwise ops it tiled in square blocks, and how
    many of those transpose VECTOR x VECTOR tiles in registers."""

    ops: int
    vectorized: int


@dataclass(frozen=True)
class Transposes(Stage):
    """Elementwise ops reading or writing across rows in their innermost loop, tiled in square blocks."""

    name: ClassVar[str] = "transposes"
    passes: ClassVar[tuple[str, ...]] = ("canonicalize",)
    scripted: ClassVar[bool] = True

    def script(self, module: ir.Module) -> ir.Module | None:
        return transform_script(module)

    def decided(self, script: ir.Module) -> Blocked:
        """The ops the script tiles (a tile_using_for each, and a second one and a vectorize where vectorized)."""
        vectorized = count_ops(script, "transform.structured.vectorize")
        return Blocked(count_ops(script, "transform.structured.tile_using_for") - vectorized, vectorized)
