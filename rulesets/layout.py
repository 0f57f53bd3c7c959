"""Layout as a choice in the term: a matmul operand that is a transposed view may first be copied
into a fresh row-major buffer (`materialize(b.T)`).

The copy costs one pass over the operand; the contiguous inner loop of the tiled, vectorized
matmul can pay that back many times (a transposed B is ~4x slower at 512^3). The cost model
decides by shape: the copy is O(nk), the matmul O(mnk). (A Fortran-ordered argument is priced
as strided too, but not copied yet: at the tensor level a same-shape copy is an identity that
MLIR folds away, so the layout change has to be expressed as a transpose of the reversed-shape
C-ordered buffer, which the emitter does not do yet.)
"""

from __future__ import annotations

from egglog import Vec, i64, rewrite, ruleset

from egglog_tensor.ir import Tensor, materialize

layout = ruleset(name="layout")


@layout.register
def _row_major_operands(a: Tensor, b: Tensor) -> object:
    t = Vec[i64](i64(1), i64(0))
    yield rewrite(a @ b.transpose(t)).to(a @ materialize(b.transpose(t)))
    yield rewrite(a.transpose(t) @ b).to(materialize(a.transpose(t)) @ b)
