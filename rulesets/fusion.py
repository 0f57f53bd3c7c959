"""Fusion as a choice in the term: any operand of an elementwise op or a reduction may be read from
its own buffer (`materialize(x)`) instead of being fused into the consumer's loop nest.

Both forms stay in the e-graph; the cost model picks per consumer. Fusing costs nothing in memory
traffic but recomputes the operand wherever it is read (per element of a broadcast, per consumer);
materializing costs a kernel, a write and a read. Unmarked elementwise work is always fused, so a
chain of elementwise ops is one loop nest and `sum(a*b)` reads a and b once.

Row fusion: an output may be computed as `fuse_rows(x)`, one loop over row blocks in which the
row reductions and materialized row-aligned values x needs are computed for the block first. A
naive softmax or layer norm then reads its input from memory once and writes its output once;
`materialize(exp(x - max))` inside such a loop is a block in cache, so the shared exp is computed
once. The cost model prices both forms (lowering/rows.py builds the loop).
"""

from __future__ import annotations

from egglog import Vec, eq, i64, rewrite, ruleset

from egglog_tensor.graph import BINARY, UNARY
from egglog_tensor.ir import CONSTRUCTORS, DType, Program, Tensor, fuse_rows, materialize, shape_of, where

fusion = ruleset(name="fusion")


@fusion.register
def _materialize_operands(a: Tensor, b: Tensor, c: Tensor, dt: DType, axes: Vec[i64]) -> object:
    """Offer a materialized version of each operand of each elementwise op and reduction."""
    for op in UNARY:
        f = CONSTRUCTORS[op]
        yield rewrite(f(a)).to(f(materialize(a)))
    yield rewrite(a.astype(dt)).to(materialize(a).astype(dt))
    for op in BINARY:
        f = CONSTRUCTORS[op]
        yield rewrite(f(a, b)).to(f(materialize(a), b))
        yield rewrite(f(a, b)).to(f(a, materialize(b)))
    yield rewrite(where(a, b, c)).to(where(a, materialize(b), c))
    yield rewrite(where(a, b, c)).to(where(a, b, materialize(c)))
    for reduce in ("sum", "max", "min", "prod"):
        yield rewrite(getattr(a, reduce)(axes)).to(getattr(materialize(a), reduce)(axes))
    yield rewrite(materialize(materialize(a))).to(materialize(a))


MAX_OUTPUTS = 4  # outputs past this many are never row-fused


@fusion.register
def _row_fused_outputs(v: Vec[Tensor], a: Tensor, s: Vec[i64]) -> object:
    """Offer each output of rank >= 2 as `fuse_rows(output)`."""
    for i in range(MAX_OUTPUTS):
        k = i64(i)
        yield rewrite(Program(v)).to(
            Program(v.set(k, fuse_rows(v[k]))), v.length() > k, eq(shape_of(v[k])).to(s), s.length() > i64(1)
        )
    yield rewrite(fuse_rows(fuse_rows(a))).to(fuse_rows(a))
