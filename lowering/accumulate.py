"""Blocked accumulation of the contractions' register tiles: each k block starts from zero.

After the tile stage (lowering/tiling.py) a register tile's accumulator lives in vector registers
across its k loop: read from C before the loop, written back after it (`hoist_loop_invariant_subsets`).
Carried over every k step, each output element summed its k products in one chain, whose
rounding error grows like k * eps (float32 C @ B with k = 2^16 of 0.1: 5e-4 relative error, NumPy
9e-7). `restart` makes each such loop start from zero and adds C after it (C += block, as BLAS does
per KC block): a chain of one k step (TK products, a cache tile), then one add per k step into C.
The read of C moves after the loop, so it holds no registers during it; the cost is one vector add
per accumulator and k step. A long k loop runs in chunks of K_CHUNK_STEPS k steps (tiling's
`_k_steps`, the chunk's k loop marked et.kchunk): each chunk sums into a zero-filled block that is
then added to C's block, so the sums of k steps are chains of at most K_CHUNK_STEPS too (float32
C @ B with k = 2^18: 1.8e-5 -> 9.3e-7).
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import arith, linalg, tensor

from .tiling import KCHUNK, as_operation


def _accumulator(loop: ir.Operation, index: int) -> tuple[ir.Operation, ir.Operation] | None:
    """(read, write) when iter_arg `index` of the scf.for `loop` is a hoisted accumulator: a vector
    read from a tensor by a transfer_read used only there, written back to the same tensor and
    indices by the transfer_write that is the only user of the loop's result."""
    init = loop.operands[3 + index]
    result = loop.results[index]
    read = as_operation(init.owner)
    uses = list(result.uses)
    if read is None or read.name != "vector.transfer_read" or len(list(init.uses)) != 1 or len(uses) != 1:
        return None
    write = as_operation(uses[0].owner)
    if write.name != "vector.transfer_write" or uses[0].operand_number != 0:
        return None
    # transfer_read (source, indices, padding, mask), transfer_write (vector, dest, indices, mask): unmasked
    (_, read_indices, _, read_mask), (_, _, write_indices, write_mask) = (
        ir.DenseI32ArrayAttr(op.attributes["operandSegmentSizes"]) for op in (read, write))
    same = (read_mask == write_mask == 0 and read_indices == write_indices and write.operands[1] == read.operands[0]
            and all(write.operands[2 + i] == read.operands[1 + i] for i in range(read_indices))
            and read.attributes["permutation_map"] == write.attributes["permutation_map"])
    return (read, write) if same else None


def _zero(kind: ir.Type) -> ir.Value:
    """A zero of the scalar or vector type `kind`."""
    element = kind.element_type if isinstance(kind, ir.VectorType) else kind
    zero = ir.FloatAttr.get(element, 0.0) if not isinstance(element, ir.IntegerType) else ir.IntegerAttr.get(element, 0)
    return arith.constant(kind, ir.DenseElementsAttr.get_splat(kind, zero) if isinstance(kind, ir.VectorType) else zero)


def _restart_chunk(loop: ir.Operation) -> None:
    """The k-chunk loop `loop` (tiling's et.kchunk) sums into a zero-filled block of C's shape, which
    is then added to C's block (linalg.add) in place of the loop's result."""
    del loop.attributes[KCHUNK]
    block = loop.operands[3]
    shape = block.type.shape
    with ir.InsertionPoint(loop), loop.location:
        sizes = [tensor.dim(block, arith.constant(ir.IndexType.get(), d)) if block.type.is_dynamic_dim(d) else e
                 for d, e in enumerate(shape)]
        zero = _zero(block.type.element_type)
        loop.operands[3] = linalg.fill(zero, outs=[tensor.empty(sizes, block.type.element_type)])
    with ir.InsertionPoint.after(loop), loop.location:
        total = linalg.add(block, loop.results[0], outs=[block], emit_generic=False)
    loop.results[0].replace_all_uses_except(total, total.owner.operation)


def restart(module: ir.Module) -> None:
    """Every hoisted accumulator of a k loop (`_accumulator`) starts from zero; C is read after the
    loop and added to the block's sum before it is written back. So does each chunk of a long k loop
    (`_restart_chunk`)."""
    loops: list[ir.Operation] = []

    def visit(op: ir.Operation) -> ir.WalkResult:
        if op.name == "scf.for":
            loops.append(op)
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit)
    for loop in loops:
        if KCHUNK in loop.attributes:
            _restart_chunk(loop)
        for index in range(len(loop.results)):
            found = _accumulator(loop, index)
            if found is None:
                continue
            read, write = found
            with ir.InsertionPoint(loop), read.location:
                loop.operands[3 + index] = _zero(read.results[0].type)
            read.move_before(write)
            with ir.InsertionPoint(write), read.location:
                element = ir.VectorType(read.results[0].type).element_type
                add = arith.addi if isinstance(element, ir.IntegerType) else arith.addf
                write.operands[0] = add(read.results[0], loop.results[index])
