"""The tile stage: contractions tiled and vectorized on tensors (lowering/tiling.py's script), then
blocked accumulation of their register tiles: each k block starts from zero.

No cse in its passes: merging the contractions' identical tensor.empty/fill inits makes
eliminate-empty-tensors write several outputs through one output buffer (wrong results); cse runs
after bufferization.

After the tiling script a register tile's accumulator lives in vector registers
across its k loop: read from C before the loop, written back after it (`hoist_loop_invariant_subsets`;
with a single register tile per block, carried across the outer k loops too). Carried over every k
step, each output element summed its k products in one chain, whose rounding error grows like
k * eps (float32 C @ B with k = 2^16 of 0.1: 5e-4 relative error, NumPy 9e-7). `restart` makes the
innermost such loop start from zero and adds C after it (C += block, as BLAS does per KC block): a
chain of one k step (TK products, a cache tile), then one add per k step into C. The read of C
moves after the loop, so it holds no registers during it; the cost is one vector add per
accumulator and k step. (A masked register tile, the last rows of a block not padded to whole
tiles, is not hoisted: it sums its products into C, one chain per chunk, below.) A long k loop runs
in chunks (tiling's `chunk_steps`: K_CHUNK_STEPS k steps, or about max(256, sqrt(k)) products for a
block with a masked tile; the chunk's k loop marked et.kchunk): each chunk sums into a zero-filled
block that is then added to C's block, so the sums of k steps are chains of at most a chunk too
(float32 C @ B with k = 2^18: 1.8e-5 -> 9.3e-7; (2, 9, 2^16) @ (2, 2^16, 20), masked: 6.6e-5 -> 8.9e-7).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from mlir import ir
from mlir.dialects import arith, linalg, tensor

from ...target import Target
from ..payload import as_operation
from ..plan import Plan
from ..annotations import KCHUNK
from ..tiling import transform_script
from .stage import Stage


def _addend(use: ir.OpOperand) -> bool:
    """Whether `use` of an accumulator only adds to it: the addend of a vector.fma, an operand of an
    add, or a vector.extract of it whose every use is one."""
    owner = as_operation(use.owner)
    if owner.name == "vector.extract" and use.operand_number == 0:
        return all(_addend(u) for u in owner.results[0].uses)
    return (owner.name == "vector.fma" and use.operand_number == 2) or owner.name in ("arith.addf", "arith.addi")


def _accumulates(loop: ir.Operation, index: int) -> bool:
    """Whether iter_arg `index` of the scf.for `loop` is a register accumulator of its k loop, not
    already zero: a vector the body only adds to (the innermost loop: an outer loop passes it on to
    the inner one), not initialized by a constant."""
    arg = loop.regions[0].blocks[0].arguments[1 + index]
    init = as_operation(loop.operands[3 + index].owner)
    uses = list(arg.uses)
    return (isinstance(arg.type, ir.VectorType) and bool(uses) and all(_addend(u) for u in uses)
            and (init is None or init.name != "arith.constant"))


def _restart_vector(loop: ir.Operation, index: int) -> None:
    """Iter_arg `index` of `loop` (`_accumulates`) starts from zero and its initial value is added to
    the loop's result; a transfer_read giving that value moves after the loop (no registers held)."""
    init = loop.operands[3 + index]
    result = loop.results[index]
    with ir.InsertionPoint(loop), loop.location:
        loop.operands[3 + index] = _zero(init.type)
    element = init.type.element_type
    with ir.InsertionPoint.after(loop), loop.location:
        total = (arith.addi if isinstance(element, ir.IntegerType) else arith.addf)(init, result)
    read = as_operation(init.owner)
    if read is not None and read.name == "vector.transfer_read" and len(list(init.uses)) == 1:
        read.move_before(total.owner)
    result.replace_all_uses_except(total, total.owner.operation)


def _zero(kind: ir.Type) -> ir.Value:
    """A zero of the scalar or vector type `kind`."""
    element = kind.element_type if isinstance(kind, ir.VectorType) else kind
    zero = ir.FloatAttr.get(element, 0.0) if not isinstance(element, ir.IntegerType) else ir.IntegerAttr.get(element, 0)
    return arith.constant(kind, ir.DenseElementsAttr.get_splat(kind, zero) if isinstance(kind, ir.VectorType) else zero)


def _restart_chunk(loop: ir.Operation) -> None:
    """The k loop `loop` of a chunk (tiling's et.kchunk) sums into a zero-filled block of C's shape,
    which is then added to C's block (linalg.add) in place of the loop's result (for each tensor it
    carries; a vector one is an accumulator, `_accumulates`)."""
    del loop.attributes[KCHUNK]
    for index, result in enumerate(loop.results):
        block = loop.operands[3 + index]
        if not isinstance(block.type, ir.RankedTensorType):
            continue
        with ir.InsertionPoint(loop), loop.location:
            sizes = [tensor.dim(block, arith.constant(ir.IndexType.get(), d)) if block.type.is_dynamic_dim(d) else e
                     for d, e in enumerate(block.type.shape)]
            empty = tensor.empty(sizes, block.type.element_type)
            loop.operands[3 + index] = linalg.fill(_zero(block.type.element_type), outs=[empty])
        with ir.InsertionPoint.after(loop), loop.location:
            total = linalg.add(block, result, outs=[block], emit_generic=False)
        result.replace_all_uses_except(total, total.owner.operation)


def restart(module: ir.Module) -> None:
    """Every register accumulator of a k loop (`_accumulates`) starts from zero, its initial value
    (C's) added after the loop, innermost loop first (an outer loop carrying the accumulator then
    only adds to it, and restarts too); so does the block of each chunk of a long k loop
    (`_restart_chunk`)."""
    loops: list[ir.Operation] = []

    def visit(op: ir.Operation) -> ir.WalkResult:
        if op.name == "scf.for":
            loops.append(op)
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit, ir.WalkOrder.POST_ORDER)
    for loop in loops:
        if KCHUNK in loop.attributes:
            _restart_chunk(loop)
        for index in range(len(loop.results)):
            if _accumulates(loop, index):
                _restart_vector(loop, index)


@dataclass(frozen=True)
class Tile(Stage):
    """Contractions tagged et.tiles / et.vec tiled and vectorized for the Target; each register tile's k loop summed from zero."""

    target: Target
    name: ClassVar[str] = "tile"
    passes: ClassVar[tuple[str, ...]] = ("canonicalize",)
    scripted: ClassVar[bool] = True
    planned: ClassVar[bool] = True

    def script(self, module: ir.Module, plan: Plan) -> ir.Module | None:
        return transform_script(module, plan)

    def rewrite(self, module: ir.Module) -> None:
        restart(module)
