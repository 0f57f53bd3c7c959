"""Fusion as a choice in the term: any operand of an elementwise op or a reduction may be read from
its own buffer (`materialize(x)`) instead of being fused into the consumer's loop nest.

Both forms stay in the e-graph; the cost model picks per consumer. Fusing costs nothing in memory
traffic but recomputes the operand wherever it is read (per element of a broadcast, per consumer);
materializing costs a kernel, a write and a read. Unmarked elementwise work is always fused, so a
chain of elementwise ops is one loop nest and `sum(a*b)` reads a and b once.
"""

from __future__ import annotations

from egglog import Vec, i64, rewrite, ruleset

from egglog_tensor.graph import BINARY, UNARY
from egglog_tensor.ir import CONSTRUCTORS, DType, Tensor, materialize, where

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
