"""Layout as a choice in the term: a matmul operand that is a transposed view may first be copied
into a fresh row-major buffer (`materialize(b.T)`).

The copy costs one pass over the operand; the contiguous inner loop of the tiled, vectorized
matmul can pay that back many times (a transposed B is ~4x slower at 512^3). The cost model
decides by shape: the copy is O(nk), the matmul O(mnk). A Fortran-ordered matrix argument
(`np.asfortranarray(b)`, a `.T` passed in) is the same case: `materialize(arg)` copies it row-major.
"""

from __future__ import annotations

from egglog import String, Vec, eq, i64, rewrite, ruleset

from egglog_tensor.ir import DType, Layout, Tensor, materialize
from egglog_tensor.rulesets.groups import group

layout = ruleset(name="layout")


@group("row-major-operands", layout)
def _row_major_operands(a: Tensor, b: Tensor, name: String, s: Vec[i64], dt: DType) -> object:
    """Offer a row-major copy ([x]) of a transposed or Fortran-ordered matrix operand of a matmul."""
    t = Vec[i64](i64(1), i64(0))
    yield rewrite(a @ b.transpose(t)).to(a @ materialize(b.transpose(t)))  # A @ B^T = A @ [B^T]
    yield rewrite(a.transpose(t) @ b).to(materialize(a.transpose(t)) @ b)  # A^T @ B = [A^T] @ B
    f = Tensor.arg(name, s, dt, Layout.F)
    yield rewrite(a @ f).to(a @ materialize(f), eq(s.length()).to(i64(2)))  # A @ F = A @ [F], F a Fortran-ordered matrix
    yield rewrite(f @ b).to(materialize(f) @ b, eq(s.length()).to(i64(2)))  # F @ B = [F] @ B
