"""Shape and dtype analysis: `shape_of` and `dtype_of` for terms that rewrites create, so later
rules can test them.

Every traced value's shape and dtype is seeded by the optimizer; these rules give shapes to new
subterms (transposes, matmuls, reductions, elementwise results) and dtypes to new constants,
casts, views and materialized values. The optimizer runs this ruleset to saturation after every
step of the user's schedule; it never changes the program.
"""

from __future__ import annotations

from itertools import combinations, permutations

from egglog import Vec, eq, f64, i64, rule, ruleset, set_

from egglog_tensor.ops import BINARY, UNARY
from egglog_tensor.ir import (
    CONSTRUCTORS, DType, Tensor, dtype_of, fuse_rows, fuse_rows_tiled, materialize, materialize_shared, shape_of, where,
)

shapes = ruleset(name="shapes")

MAX_RANK = 3


def vec(*items: object) -> Vec[i64]:
    """A Vec[i64] term (possibly of i64 expressions)."""
    return Vec[i64](*items) if items else Vec[i64].empty()


@shapes.register
def _views(x: Tensor, s: Vec[i64]) -> object:
    """Transposes permute the shape; reductions drop their axes (ranks up to MAX_RANK)."""
    for rank in range(1, MAX_RANK + 1):
        for p in permutations(range(rank)):
            t = x.transpose(vec(*(i64(i) for i in p)))
            yield rule(eq(t).to(t), eq(shape_of(x)).to(s), eq(s.length()).to(i64(rank))).then(
                set_(shape_of(t)).to(vec(*(s[i] for i in p)))
            )
        for k in range(1, rank + 1):
            for axes in combinations(range(rank), k):
                kept = [s[i] for i in range(rank) if i not in axes]
                for red in (x.sum, x.max, x.min, x.prod):
                    r = red(vec(*(i64(a) for a in axes)))
                    yield rule(eq(r).to(r), eq(shape_of(x)).to(s), eq(s.length()).to(i64(rank))).then(
                        set_(shape_of(r)).to(vec(*kept))
                    )


@shapes.register
def _literal_shapes(x: Tensor, s: Vec[i64], start: Vec[i64], step: Vec[i64], v: f64, dt: DType) -> object:
    """reshape / broadcast_to / slice carry their result shape; constants are 0-d."""
    for t in (x.reshape(s), x.broadcast_to(s), x.slice(start, step, s)):
        yield rule(eq(t).to(t)).then(set_(shape_of(t)).to(s))
    c = Tensor.const(v, dt)
    yield rule(eq(c).to(c)).then(set_(shape_of(c)).to(vec()))


@shapes.register
def _elementwise(a: Tensor, b: Tensor, c: Tensor, s: Vec[i64], dt: DType, v: Vec[i64]) -> object:
    """Elementwise results: same shape as equal-shaped operands, or as the non-scalar side."""
    empty = vec()
    for op in UNARY:
        t = CONSTRUCTORS[op](a)
        yield rule(eq(t).to(t), eq(shape_of(a)).to(s)).then(set_(shape_of(t)).to(s))
    for t in (a.astype(dt), materialize(a), materialize_shared(a), fuse_rows(a), fuse_rows_tiled(a, v)):
        yield rule(eq(t).to(t), eq(shape_of(a)).to(s)).then(set_(shape_of(t)).to(s))
    for op in BINARY:
        t = CONSTRUCTORS[op](a, b)
        yield rule(eq(t).to(t), eq(shape_of(a)).to(s), eq(shape_of(b)).to(s)).then(set_(shape_of(t)).to(s))
        yield rule(eq(t).to(t), eq(shape_of(a)).to(s), eq(shape_of(b)).to(empty)).then(set_(shape_of(t)).to(s))
        yield rule(eq(t).to(t), eq(shape_of(a)).to(empty), eq(shape_of(b)).to(s)).then(set_(shape_of(t)).to(s))
    t = where(c, a, b)  # (a condition of the values' shape or a scalar one)
    for cond in (s, empty):
        yield rule(eq(t).to(t), eq(shape_of(c)).to(cond), eq(shape_of(a)).to(s), eq(shape_of(b)).to(s)).then(set_(shape_of(t)).to(s))


@shapes.register
def _matmul(a: Tensor, b: Tensor, s: Vec[i64], t: Vec[i64], v: Vec[i64]) -> object:
    """matmul: (n,k)@(k,m), (n,k)@(k,), (k,)@(k,m), (k,)@(k,), (b,n,k)@(b,k,m)."""
    m = a @ b
    cases = {
        (2, 2): vec(s[0], t[1]),
        (2, 1): vec(s[0]),
        (1, 2): vec(t[1]),
        (1, 1): vec(),
        (3, 3): vec(s[0], s[1], t[2]),
    }
    for (ra, rb), out in cases.items():
        if (ra, rb) in ((2, 2), (3, 3)):  # a tiled matmul has the same shape
            for tiled in (a.matmul_tiled(b, v),):
                yield rule(
                    eq(tiled).to(tiled), eq(shape_of(a)).to(s), eq(shape_of(b)).to(t),
                    eq(s.length()).to(i64(ra)), eq(t.length()).to(i64(rb)),
                ).then(set_(shape_of(tiled)).to(out))
        yield rule(
            eq(m).to(m), eq(shape_of(a)).to(s), eq(shape_of(b)).to(t),
            eq(s.length()).to(i64(ra)), eq(t.length()).to(i64(rb)),
        ).then(set_(shape_of(m)).to(out))


@shapes.register
def _dtypes(a: Tensor, s: Vec[i64], v: f64, dt: DType) -> object:
    """dtype_of through what rewrites create around traced values: constants and casts carry their
    dtype, views, materialize and row fusion keep their operand's."""
    for t in (Tensor.const(v, dt), a.astype(dt)):
        yield rule(eq(t).to(t)).then(set_(dtype_of(t)).to(dt))
    for t in (materialize(a), materialize_shared(a), fuse_rows(a), fuse_rows_tiled(a, s), a.transpose(s), a.reshape(s), a.broadcast_to(s)):
        yield rule(eq(t).to(t), eq(dtype_of(a)).to(dt)).then(set_(dtype_of(t)).to(dt))
