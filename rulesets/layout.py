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

layout = ruleset(name="layout")


@layout.register
def _row_major_operands(a: Tensor, b: Tensor, name: String, s: Vec[i64], dt: DType) -> object:
    t = Vec[i64](i64(1), i64(0))
    yield rewrite(a @ b.transpose(t)).to(a @ materialize(b.transpose(t)))
    yield rewrite(a.transpose(t) @ b).to(materialize(a.transpose(t)) @ b)
    f = Tensor.arg(name, s, dt, Layout.F)
    yield rewrite(a @ f).to(a @ materialize(f), eq(s.length()).to(i64(2)))
    yield rewrite(f @ b).to(materialize(f) @ b, eq(s.length()).to(i64(2)))
