"""Layout as a choice in the term: a matmul operand that is not row-major (a transposed view or a
Fortran-ordered argument) may first be copied into a fresh row-major buffer (`materialize`).

The copy costs one pass over the operand; the contiguous inner loop of the tiled, vectorized
matmul can pay that back many times (a transposed B is ~4x slower at 512^3). The cost model
decides by shape: the copy is O(nk), the matmul O(mnk).
"""

from __future__ import annotations

from egglog import StringLike, Vec, i64, rewrite, ruleset

from egglog_tensor.ir import DType, Layout, Tensor, materialize

layout = ruleset(name="layout")


@layout.register
def _row_major_operands(a: Tensor, b: Tensor, name: StringLike, s: Vec[i64], dt: DType) -> object:
    t = Vec[i64](i64(1), i64(0))
    yield rewrite(a @ b.transpose(t)).to(a @ materialize(b.transpose(t)))
    yield rewrite(a.transpose(t) @ b).to(materialize(a.transpose(t)) @ b)
    for order in (Layout.F, Layout.strided):
        arg = Tensor.arg(name, s, dt, order)
        yield rewrite(a @ arg).to(a @ materialize(arg))
        yield rewrite(arg @ b).to(materialize(arg) @ b)
