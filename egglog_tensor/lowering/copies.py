"""Strided buffer copies as loops: no call into MLIR's C runtime library.

One-shot bufferization copies a buffer with `memref.copy` wherever a tensor op cannot reuse it in
place: a reshape of a Fortran-ordered, column-strided or negative-stride argument (collapsing a
non-contiguous buffer), an argument returned as is, and so on. Between two contiguous buffers it
becomes `llvm.memcpy`; any other layout lowers to a call of `memrefCopy`, a function of MLIR's
runtime library that the JIT-loaded kernel cannot link against. The `bufferize` stage's `explicit`
rewrite turns each such copy into a `linalg.copy`, which the loops stage lowers to a loop nest.
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import linalg


def _identity(value: ir.Value) -> bool:
    memref = ir.MemRefType(value.type)
    return memref.layout == ir.AffineMapAttr.get(ir.AffineMap.get_identity(memref.rank))


def explicit(module: ir.Module) -> None:
    """Every `memref.copy` of a non-identity-layout memref becomes a `linalg.copy` (see the module docstring)."""
    strided: list[ir.Operation] = []

    def visit(op: ir.Operation) -> ir.WalkResult:
        if op.name == "memref.copy" and not all(_identity(v) for v in op.operands):
            strided.append(op)
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit)
    for op in strided:
        source, target = op.operands
        with ir.InsertionPoint(op), op.location:
            linalg.copy(source, outs=[target])
        op.erase()
