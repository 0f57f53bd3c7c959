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

Shared row values: for a row-fused output `fuse_rows(t)`, a transcendental value `a` that t reads
both element for element and through a reduction (the `exp(x - max)` of a naive softmax, read by
its sum and by the division) is also offered computed once for all its readers: `fuse_rows(t')`, t' being t with every read of `a` from `materialize_shared(a)`, a
block in cache inside the loop. t' is a term of its own, not merged with t's other forms:
extraction picks one term per e-class, so materializing `a` for one reader at a time could never
show the saving of computing it once for all of them. The cost model prices both loops.
"""

from __future__ import annotations

from egglog import Vec, eq, f64, function, i64, ne, relation, rewrite, rule, ruleset, String

from egglog_tensor.ops import BINARY, TRANSCENDENTAL, UNARY
from egglog_tensor.ir import (
    CONSTRUCTORS, DType, Layout, Program, Tensor, fuse_rows, materialize, materialize_shared, shape_of, where,
)
from egglog_tensor.rulesets.groups import group

fusion = ruleset(name="fusion")


@group("materialize", fusion)
def _materialize_operands(a: Tensor, b: Tensor, c: Tensor, dt: DType, axes: Vec[i64]) -> object:
    """Offer a materialized version of each operand of each elementwise op and reduction ([a]: a in a buffer of its own)."""
    for op in UNARY:
        f = CONSTRUCTORS[op]
        yield rewrite(f(a)).to(f(materialize(a)))  # f(a) = f([a])
    yield rewrite(a.astype(dt)).to(materialize(a).astype(dt))  # cast(a) = cast([a])
    for op in BINARY:
        f = CONSTRUCTORS[op]
        yield rewrite(f(a, b)).to(f(materialize(a), b))  # f(a, b) = f([a], b)
        yield rewrite(f(a, b)).to(f(a, materialize(b)))  # f(a, b) = f(a, [b])
    yield rewrite(where(a, b, c)).to(where(a, materialize(b), c))  # where(a, b, c) = where(a, [b], c)
    yield rewrite(where(a, b, c)).to(where(a, b, materialize(c)))  # where(a, b, c) = where(a, b, [c])
    for reduce in ("sum", "max", "min", "prod"):
        yield rewrite(getattr(a, reduce)(axes)).to(getattr(materialize(a), reduce)(axes))  # r(a) = r([a])
    yield rewrite(materialize(materialize(a))).to(materialize(a))  # [[a]] = [a]


MAX_OUTPUTS = 4  # outputs past this many are never row-fused


def _row_fusable(v: Vec[Tensor], k: i64, s: Vec[i64]) -> tuple[object, ...]:
    """Conditions on output k of Program(v) for row fusion: it exists and has rank >= 1 (shape s)."""
    return v.length() > k, eq(shape_of(v[k])).to(s), s.length() > i64(0)


@group("row-fusion", fusion)
def _row_fused_outputs(v: Vec[Tensor], a: Tensor, s: Vec[i64]) -> object:
    """Offer each output of rank >= 1 as `fuse_rows(output)` (rows: its first axis)."""
    for i in range(MAX_OUTPUTS):
        k = i64(i)
        # output k = fuse_rows(output k), of rank >= 1
        yield rewrite(Program(v)).to(Program(v.set(k, fuse_rows(v[k]))), *_row_fusable(v, k, s))
    yield rewrite(fuse_rows(fuse_rows(a))).to(fuse_rows(a))  # fuse_rows(fuse_rows(a)) = fuse_rows(a)


computed = relation("computed", Tensor)  # a value of transcendental work (worth computing once)
depends = relation("depends", Tensor, Tensor)  # depends(x, a): x is a, or elementwise work on it
reduces = relation("reduces", Tensor, Tensor)  # reduces(b, a): b reads a through a reduction


@function(unextractable=True)
def shared(b: Tensor, a: Tensor) -> Tensor:
    """b with every read of `a` from materialize_shared(a): a rewrite helper, never extracted."""


@group("shared-row-values", fusion)
def _shared_row_values(a: Tensor, b: Tensor, x: Tensor, y: Tensor, axes: Vec[i64], s: Vec[i64],
                       dt: DType, name: String, layout: Layout, v: f64, outs: Vec[Tensor], axis: i64) -> object:
    """Offer `fuse_rows(b')` for an output b, b' computing once a value b reads directly and
    through a reduction (one such value per variant: the variants do not multiply)."""
    for i in range(MAX_OUTPUTS):
        k = i64(i)
        # output k = fuse_rows(shared(output k, a)), a computed once for the row block
        yield rewrite(Program(outs)).to(
            Program(outs.set(k, fuse_rows(shared(outs[k], a)))),
            *_row_fusable(outs, k, s), eq(b).to(outs[k]), computed(a), depends(b, a), reduces(b, a),
        )
    # worth computing once: transcendental work (a cheap op is recomputed for less than a buffer costs)
    costly = [CONSTRUCTORS[op](x) for op in UNARY if op in TRANSCENDENTAL]
    costly += [CONSTRUCTORS[op](x, y) for op in BINARY if op in TRANSCENDENTAL]
    for t in costly:
        yield rule(eq(a).to(t)).then(computed(a), depends(a, a))  # a = f(x), f transcendental => computed(a), depends(a, a)
    # depends(b, a) when b is elementwise work on something that depends on a
    for op in UNARY:
        yield rule(eq(b).to(CONSTRUCTORS[op](x)), depends(x, a)).then(depends(b, a))
    for op in BINARY:
        f = CONSTRUCTORS[op]
        yield rule(eq(b).to(f(x, y)), depends(x, a)).then(depends(b, a))
        yield rule(eq(b).to(f(x, y)), depends(y, a)).then(depends(b, a))
    for reduce in ("sum", "max", "min", "prod"):
        yield rule(eq(b).to(getattr(x, reduce)(axes)), depends(x, a)).then(reduces(b, a))  # b = r(x), depends(x, a) => reduces(b, a)
    # reductions of a reach the reader through elementwise work, reshapes and broadcasts: b = t(x), reduces(x, a) => reduces(b, a)
    for t in [CONSTRUCTORS[op](x) for op in UNARY] + [x.reshape(s), x.broadcast_to(s), x.astype(dt), x.bitcast(dt)]:
        yield rule(eq(b).to(t), reduces(x, a)).then(reduces(b, a))
    for op in BINARY:
        f = CONSTRUCTORS[op]
        yield rule(eq(b).to(f(x, y)), reduces(x, a)).then(reduces(b, a))
        yield rule(eq(b).to(f(x, y)), reduces(y, a)).then(reduces(b, a))
    yield rewrite(materialize(materialize_shared(a))).to(materialize_shared(a))  # [shared a] = shared a
    # shared(b, a): push down to the reads of a; everything else is rebuilt as it was
    yield rewrite(shared(a, a)).to(materialize_shared(a))  # shared(a, a) = shared a
    yield rewrite(shared(Tensor.arg(name, s, dt, layout), a)).to(Tensor.arg(name, s, dt, layout))  # shared(arg, a) = arg
    yield rewrite(shared(Tensor.const(v, dt), a)).to(Tensor.const(v, dt))  # shared(c, a) = c
    yield rewrite(shared(Tensor.iota(s, axis, dt), a)).to(Tensor.iota(s, axis, dt))  # shared(iota, a) = iota
    for op in UNARY:
        g = CONSTRUCTORS[op]
        yield rewrite(shared(g(x), a)).to(g(shared(x, a)), ne(g(x)).to(a))  # shared(g(x), a) = g(shared(x, a))
    for op in BINARY:
        f = CONSTRUCTORS[op]
        yield rewrite(shared(f(x, y), a)).to(f(shared(x, a), shared(y, a)), ne(f(x, y)).to(a))  # shared(f(x, y), a) = f(shared(x, a), shared(y, a))
    for t, rebuild in [(x.astype(dt), lambda z: z.astype(dt)), (x.bitcast(dt), lambda z: z.bitcast(dt)), (x.reshape(s), lambda z: z.reshape(s)),
                       (x.broadcast_to(s), lambda z: z.broadcast_to(s)), (materialize(x), materialize),
                       (materialize_shared(x), materialize_shared),
                       *((getattr(x, r)(axes), lambda z, r=r: getattr(z, r)(axes)) for r in ("sum", "max", "min", "prod"))]:
        yield rewrite(shared(t, a)).to(rebuild(shared(x, a)), ne(t).to(a))  # shared(t(x), a) = t(shared(x, a))
