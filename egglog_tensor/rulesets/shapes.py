"""Shape and dtype analysis: `shape_of` and `dtype_of` for terms that rewrites create, so later
rules can test them.

Every traced value's shape and dtype is seeded by the optimizer; these rules give both to every
term built from typed children, for every op of the registry (egglog_tensor.ops), in each egglog
form it takes (`x.sum_lanes`, `materialize_shared`). The rules are chosen by the op's kind:
elementwise ops and schedule choices keep their operand's shape (bool for predicates and logical
ops), binary ops and `where` broadcast their operands', reductions drop their axes, contractions
follow matmul; views, reshapes, concatenation, casts and leaves have a rule each. An op the
rules cannot place is an error at import. tests/test_shapes_registry.py checks, after the
optimizer's rewriting, that every e-class's shape and dtype are the registry's inference.

The optimizer runs this ruleset to saturation after every step of the user's schedule; it never
changes the program.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence

from egglog import String, Vec, eq, f64, function, i64, relation, rule, ruleset, set_, var

from egglog_tensor.ir import OP_OF, WITH_LANES, DType, Layout, Tensor, concat, dtype_of, shape_of, where
from egglog_tensor.ops import OPS, Kind, OpDef

shapes = ruleset(name="shapes")

MAX_RANK = 3  # ranks the rank-specific rewrite rules cover (transposes, reductions of broadcasts)
SHAPE_RANK = 4  # ranks the shape analysis covers (broadcasting, transposes, reduced axes)


def vec(*items: object) -> Vec[i64]:
    """A Vec[i64] term (possibly of i64 expressions)."""
    return Vec[i64](*items) if items else Vec[i64].empty()


@function(merge=lambda old, new: old)
def broadcast_shape(s: Vec[i64], u: Vec[i64]) -> Vec[i64]:
    """NumPy's broadcast of shapes s and u, computed for the pairs `broadcasting` asks for."""


broadcasting = relation("broadcasting", Vec[i64], Vec[i64])  # broadcast_shape(s, u) is wanted


@function(merge=lambda old, new: old)
def concat_extent(parts: Vec[Tensor], axis: i64, n: i64) -> i64:
    """The sum of the extents along `axis` of the first n of `parts` (a concat's, part by part)."""


# One variable per attribute name of the registry, of its egglog sort.
ATTRS = {name: var(name, sort) for name, sort in {
    "name": String, "data": String, "shape": Vec[i64], "dtype": DType, "layout": Layout, "value": f64, "axes": Vec[i64],
    "lanes": i64, "tiles": Vec[i64], "perm": Vec[i64], "start": Vec[i64], "step": Vec[i64], "size": Vec[i64],
    "offset": i64, "axis1": i64, "axis2": i64, "axis": i64, "bins": i64, "right": i64, "columns": i64, "form": i64, "order": i64, "mode": i64,
}.items()}  # fmt: skip
a, b, c = var("a", Tensor), var("b", Tensor), var("c", Tensor)
s, u = var("s", Vec[i64]), var("u", Vec[i64])
dt = var("dt", DType)


def _forms(record: OpDef, *tensors: object) -> list[Tensor]:
    """Op `record` applied to `tensors` and its attribute variables, in every egglog form it takes:
    its constructor, and those the rules choose it as (x.sum_lanes(axes, lanes), materialize_shared)."""
    lanes = set(WITH_LANES.values())
    forms = [fn for fn, name in OP_OF.items() if name == record.name]
    return [fn(*tensors, *(ATTRS[n] for n in record.attrs + (record.chosen if fn in lanes else ()))) for fn in forms]


def _typed(x: Tensor, shape: Vec[i64], dtype: DType) -> tuple[object, object]:
    """Conditions: x has shape `shape` and dtype `dtype`."""
    return eq(shape_of(x)).to(shape), eq(dtype_of(x)).to(dtype)


def _gives(t: Tensor, shape: Vec[i64], dtype: DType) -> tuple[object, object]:
    """Actions: t has shape `shape` and dtype `dtype`."""
    return set_(shape_of(t)).to(shape), set_(dtype_of(t)).to(dtype)


def _result_dtype(record: OpDef, operand: DType) -> DType:
    """The result dtype of a same-shape op on operands of dtype `operand`: bool for comparisons
    and logical ops, int64 for argsort's indices (as ops.infer says)."""
    if record.name == "argsort":
        return DType.int64
    return DType.bool_ if record.kind & (Kind.PREDICATE | Kind.LOGICAL) else operand


def _same_shape(record: OpDef) -> Iterator[object]:
    """Unary elementwise ops, scans, sorts, cholesky and schedule choices: the operand's shape."""
    for t in _forms(record, a):
        yield rule(eq(t).to(t), *_typed(a, s, dt)).then(*_gives(t, s, _result_dtype(record, dt)))


def _broadcast_rules(t: Tensor, operands: Sequence[Tensor], dtype_from: Tensor, dtype: Callable[[DType], DType]) -> Iterator[object]:
    """t has the broadcast of its operands' shapes (folded left to right, asking `broadcasting` for
    each step) and dtype(dtype_from's dtype)."""
    sizes = [var(f"s{i}", Vec[i64]) for i in range(len(operands))]
    known = [eq(t).to(t), *(eq(shape_of(x)).to(v) for x, v in zip(operands, sizes, strict=True))]
    folded = sizes[0]
    for i, v in enumerate(sizes[1:]):
        yield rule(*known).then(broadcasting(folded, v))
        step = var(f"b{i}", Vec[i64])
        known.append(eq(step).to(broadcast_shape(folded, v)))
        folded = step
    yield rule(*known, eq(dtype_of(dtype_from)).to(dt)).then(*_gives(t, folded, dtype(dt)))


def _binary(record: OpDef) -> Iterator[object]:
    """Binary elementwise ops: the broadcast of the operands' shapes."""
    for t in _forms(record, a, b):
        yield from _broadcast_rules(t, (a, b), a, lambda d: _result_dtype(record, d))


def _ternary(record: OpDef) -> Iterator[object]:
    """Ternary elementwise ops: the broadcast of the three shapes, the first operand's dtype."""
    for t in _forms(record, a, b, c):
        yield from _broadcast_rules(t, (a, b, c), a, lambda d: d)


def _where(record: OpDef) -> Iterator[object]:
    """where(c, a, b): the broadcast of the three shapes, a's dtype."""
    yield from _broadcast_rules(where(c, a, b), (c, a, b), a, lambda d: d)


def _reduction(record: OpDef) -> Iterator[object]:
    """Reductions drop their axes (ascending, as the tracer and the rules write them); an index
    reduction (argmax) is int64."""
    axes = ATTRS["axes"]
    dtype = DType.int64 if Kind.INDEX in record.kind else dt
    for k in range(SHAPE_RANK + 1):
        kept = s
        for j in reversed(range(k)):
            kept = kept.remove(axes[j])
        for t in _forms(record, a):
            yield rule(eq(t).to(t), *_typed(a, s, dt), eq(axes.length()).to(i64(k))).then(*_gives(t, kept, dtype))


def _contraction(record: OpDef) -> Iterator[object]:
    """matmul (tiled or not): (n,k)@(k,m), (n,k)@(k,), (k,)@(k,m), (k,)@(k,), (b,n,k)@(b,k,m)."""
    cases = {(2, 2): vec(s[0], u[1]), (2, 1): vec(s[0]), (1, 2): vec(u[1]), (1, 1): vec(), (3, 3): vec(s[0], s[1], u[2])}
    for t in _forms(record, a, b):
        for (ra, rb), out in cases.items():
            yield rule(
                eq(t).to(t), *_typed(a, s, dt), eq(shape_of(b)).to(u), eq(s.length()).to(i64(ra)), eq(u.length()).to(i64(rb))
            ).then(*_gives(t, out, dt))


def _transpose(record: OpDef) -> Iterator[object]:
    """A transpose permutes its operand's shape."""
    perm = ATTRS["perm"]
    for t in _forms(record, a):
        for rank in range(SHAPE_RANK + 1):
            yield rule(eq(t).to(t), *_typed(a, s, dt), eq(perm.length()).to(i64(rank))).then(
                *_gives(t, vec(*(s[perm[i]] for i in range(rank))), dt)
            )


def _attribute_shape(attr: str) -> Callable[[OpDef], Iterator[object]]:
    """Ops whose result shape is their attribute `attr` (reshape, broadcast_to, slice), the operand's dtype."""

    def rules(record: OpDef) -> Iterator[object]:
        for t in _forms(record, a):
            yield rule(eq(t).to(t), eq(dtype_of(a)).to(dt)).then(*_gives(t, ATTRS[attr], dt))

    return rules


def _astype(record: OpDef) -> Iterator[object]:
    """A cast keeps the shape; its dtype is its attribute."""
    for t in _forms(record, a):
        yield rule(eq(t).to(t), eq(shape_of(a)).to(s)).then(*_gives(t, s, ATTRS["dtype"]))


def _diagonal(record: OpDef) -> Iterator[object]:
    """diagonal(offset, axis1, axis2): the other axes, then the diagonal's length (0 if it misses)."""
    offset, a1, a2 = (ATTRS[n] for n in record.attrs)
    zero = i64(0)
    n = (s[a1] - (zero - offset).max(zero)).min(s[a2] - offset.max(zero)).max(zero)
    for t in _forms(record, a):
        yield rule(eq(t).to(t), *_typed(a, s, dt)).then(*_gives(t, s.remove(a1.max(a2)).remove(a1.min(a2)).push(n), dt))


def _concat(record: OpDef) -> Iterator[object]:
    """concat(parts, axis): the first part's shape with the parts' extents along `axis` summed
    (concat_extent adds them part by part)."""
    parts, axis = var("parts", Vec[Tensor]), ATTRS["axis"]
    n, extent = var("n", i64), var("extent", i64)
    t = concat(parts, axis)
    yield rule(eq(t).to(t)).then(set_(concat_extent(parts, axis, i64(0))).to(i64(0)))
    yield rule(eq(extent).to(concat_extent(parts, axis, n)), n < parts.length(), eq(shape_of(parts[n])).to(s)).then(
        set_(concat_extent(parts, axis, n + 1)).to(extent + s[axis])
    )
    yield rule(eq(t).to(t), eq(extent).to(concat_extent(parts, axis, parts.length())), *_typed(parts[i64(0)], s, dt)).then(
        *_gives(t, s.set(axis, extent), dt)
    )


def _gather(record: OpDef) -> Iterator[object]:
    """gather(x, idx, axis): the shape of idx, the dtype of x."""
    for t in _forms(record, a, b):
        yield rule(eq(t).to(t), eq(shape_of(b)).to(s), eq(dtype_of(a)).to(dt)).then(*_gives(t, s, dt))


def _searchsorted(record: OpDef) -> Iterator[object]:
    """searchsorted(a, v, right): the shape of v, int64."""
    for t in _forms(record, a, b):
        yield rule(eq(t).to(t), eq(shape_of(b)).to(s)).then(*_gives(t, s, DType.int64))


def _extra_column(record: OpDef) -> Iterator[object]:
    """lu(a), eigh(a): a's shape with one more column (the pivot rows, the eigenvalues), a's dtype."""
    last = s.length() - 1
    for t in _forms(record, a):
        yield rule(eq(t).to(t), *_typed(a, s, dt)).then(*_gives(t, s.set(last, s[last] + 1), dt))


def _lu_solve(record: OpDef) -> Iterator[object]:
    """lu_solve(f, b): the shape and dtype of b."""
    for t in _forms(record, a, b):
        yield rule(eq(t).to(t), *_typed(b, s, dt)).then(*_gives(t, s, dt))


def _qr(record: OpDef) -> Iterator[object]:
    """qr(a, columns): a's shape with `columns` more columns (Q's, before R), a's dtype."""
    last = s.length() - 1
    for t in _forms(record, a):
        yield rule(eq(t).to(t), *_typed(a, s, dt)).then(*_gives(t, s.set(last, s[last] + ATTRS["columns"]), dt))


def _recurrence(record: OpDef) -> Iterator[object]:
    """recurrence(x, coefficients, state, form, columns, axis): x's shape with `columns` more along `axis` (the final
    states, after the outputs), x's dtype."""
    axis = ATTRS["axis"]
    for t in _forms(record, a, b, c):
        yield rule(eq(t).to(t), *_typed(a, s, dt)).then(*_gives(t, s.set(axis, s[axis] + ATTRS["columns"]), dt))


def _svd(record: OpDef) -> Iterator[object]:
    """svd(a) of (..., m, n): (..., n, m + n + 1), a's dtype."""
    rows, last = s.length() - 2, s.length() - 1
    for t in _forms(record, a):
        yield rule(eq(t).to(t), *_typed(a, s, dt)).then(*_gives(t, s.set(rows, s[last]).set(last, s[rows] + s[last] + 1), dt))


def _scatter_add(record: OpDef) -> Iterator[object]:
    """scatter_add(idx, weights, bins): `bins` bins of the weights' dtype."""
    for t in _forms(record, a, b):
        yield rule(eq(t).to(t), eq(dtype_of(b)).to(dt)).then(*_gives(t, vec(ATTRS["bins"]), dt))


def _update_slice(record: OpDef) -> Iterator[object]:
    """update_slice(base, value, box): the base's shape and dtype."""
    for t in _forms(record, a, b):
        yield rule(eq(t).to(t), *_typed(a, s, dt)).then(*_gives(t, s, dt))


def _leaf(record: OpDef) -> Iterator[object]:
    """Arguments carry their shape and dtype, constants are 0-d of theirs."""
    shape = ATTRS["shape"] if "shape" in record.attrs else vec()
    for t in _forms(record):
        yield rule(eq(t).to(t)).then(*_gives(t, shape, ATTRS["dtype"]))


# Rules of the ops that are not placed by their kind alone.
BY_NAME: dict[str, Callable[[OpDef], Iterator[object]]] = {
    "where": _where, "astype": _astype, "bitcast": _astype, "transpose": _transpose, "diagonal": _diagonal, "concat": _concat,
    "gather": _gather,
    "scatter_add": _scatter_add, "searchsorted": _searchsorted, "lu": _extra_column, "lu_solve": _lu_solve,
    "qr": _qr, "recurrence": _recurrence, "spline_filter": _same_shape, "eigh": _extra_column, "svd": _svd,
    "update_slice": _update_slice,
    "reshape": _attribute_shape("shape"), "broadcast_to": _attribute_shape("shape"), "slice": _attribute_shape("size"),
}  # fmt: skip
BY_KIND: tuple[tuple[Kind, Callable[[OpDef], Iterator[object]]], ...] = (
    (Kind.LEAF, _leaf), (Kind.UNARY, _same_shape), (Kind.SCHEDULE, _same_shape), (Kind.BINARY, _binary), (Kind.TERNARY, _ternary),
    (Kind.REDUCTION, _reduction), (Kind.CONTRACTION, _contraction), (Kind.SCAN, _same_shape),
    (Kind.SORT, _same_shape), (Kind.FACTOR, _same_shape),
)  # fmt: skip


def rules_of(record: OpDef) -> Iterator[object]:
    """The shape and dtype rules of one registry op, by name or else by kind (LookupError: none fits)."""
    if record.name in BY_NAME:
        return BY_NAME[record.name](record)
    for kind, rules in BY_KIND:
        if kind in record.kind:
            return rules(record)
    raise LookupError(f"op {record.name} has no shape rule: give its kind or name one in rulesets/shapes.py")


def _extent(x: i64, y: i64) -> i64:
    """The broadcast of two compatible extents (equal, or one of them 1): the larger, or 0 when one is 0."""
    return x.max(y) * x.min(y).min(i64(1))


def _broadcast_shapes() -> Iterator[object]:
    """broadcast_shape(s, u) for the pairs asked for, per pair of ranks (NumPy's right alignment)."""
    for ra in range(SHAPE_RANK + 1):
        for rb in range(SHAPE_RANK + 1):
            rank = max(ra, rb)
            dims = []
            for i in range(rank):
                ia, ib = i - rank + ra, i - rank + rb
                dims.append(u[ib] if ia < 0 else s[ia] if ib < 0 else _extent(s[ia], u[ib]))
            yield rule(broadcasting(s, u), eq(s.length()).to(i64(ra)), eq(u.length()).to(i64(rb))).then(
                set_(broadcast_shape(s, u)).to(vec(*dims))
            )


@shapes.register
def _registry() -> Iterator[object]:
    """The rules of every op of the registry, and the broadcasting they ask for."""
    for record in OPS.values():
        yield from rules_of(record)
    yield from _broadcast_shapes()
