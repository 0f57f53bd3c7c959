"""Blocked accumulation of the contractions' register tiles: each k block starts from zero.

After the tile stage (lowering/tiling.py) a register tile's accumulator lives in vector registers
across its k loop: read from C before the loop, written back after it (`hoist_loop_invariant_subsets`).
Carried over every k step, each output element summed its k products in one chain, whose
rounding error grows like k * eps (float32 C @ B with k = 2^16 of 0.1: 5e-4 relative error, NumPy
9e-7). `restart` makes each such loop start from zero and adds C after it (C += block, as BLAS does
per KC block): a chain of one k step (TK products, a cache tile), then one add per k step into C.
The read of C moves after the loop, so it holds no registers during it; the cost is one vector add
per accumulator and k step.
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import arith

from .tiling import as_operation


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


def _zero(vector: ir.Type) -> ir.Value:
    element = ir.VectorType(vector).element_type
    zero = ir.FloatAttr.get(element, 0.0) if not isinstance(element, ir.IntegerType) else ir.IntegerAttr.get(element, 0)
    return arith.constant(vector, ir.DenseElementsAttr.get_splat(vector, zero))


def restart(module: ir.Module) -> None:
    """Every hoisted accumulator of a k loop (`_accumulator`) starts from zero; C is read after the
    loop and added to the block's sum before it is written back."""
    loops: list[ir.Operation] = []

    def visit(op: ir.Operation) -> ir.WalkResult:
        if op.name == "scf.for":
            loops.append(op)
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit)
    for loop in loops:
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
