"""The egglog term language: sorts for tensors, dtypes and layouts, and Node <-> term conversion.

Users write rules over these sorts (`Tensor`, `DType`, `Layout`, the functions below); the
optimizer turns a traced Node DAG into a `Program` term and the extracted term back into Nodes.
"""

from __future__ import annotations

import functools
import types
from collections.abc import Callable
from typing import ClassVar

from egglog import (
    Expr,
    StringLike,
    Vec,
    VecLike,
    f64,
    f64Like,
    function,
    get_callable_args,
    get_callable_fn,
    get_literal_value,
    i64,
    i64Like,
    set_,
)

from .graph import Builder, Node, topological
from .ops import OPS, Kind


class DType(Expr):
    """Element type of a tensor."""

    float32: ClassVar[DType]
    float64: ClassVar[DType]
    int32: ClassVar[DType]
    int64: ClassVar[DType]
    bool_: ClassVar[DType]
    float16: ClassVar[DType]
    int8: ClassVar[DType]
    int16: ClassVar[DType]
    uint8: ClassVar[DType]
    uint16: ClassVar[DType]
    uint32: ClassVar[DType]
    uint64: ClassVar[DType]
    bfloat16: ClassVar[DType]


class Layout(Expr):
    """Memory layout of an argument: C-contiguous, Fortran-contiguous or general strides."""

    C: ClassVar[Layout]
    F: ClassVar[Layout]
    strided: ClassVar[Layout]


class Tensor(Expr):
    """A tensor value with static shape; ops follow NumPy semantics (implicit broadcasting)."""

    @classmethod
    def arg(cls, name: StringLike, shape: VecLike[i64, i64Like], dtype: DType, layout: Layout) -> Tensor: ...

    @classmethod
    def const(cls, value: f64Like, dtype: DType) -> Tensor:
        """A 0-d constant; broadcasts like a NumPy scalar."""

    @classmethod
    def iota(cls, shape: VecLike[i64, i64Like], axis: i64Like, dtype: DType) -> Tensor:
        """An array of `shape` whose elements are their index along `axis`, as `dtype` (np.arange's
        and np.eye's building block): computed where it is read, never loaded from memory."""

    def __add__(self, other: Tensor) -> Tensor: ...
    def __sub__(self, other: Tensor) -> Tensor: ...
    def __mul__(self, other: Tensor) -> Tensor: ...
    def __truediv__(self, other: Tensor) -> Tensor: ...
    def __floordiv__(self, other: Tensor) -> Tensor: ...
    def __mod__(self, other: Tensor) -> Tensor: ...
    def __pow__(self, other: Tensor) -> Tensor: ...
    def __neg__(self) -> Tensor: ...
    def __matmul__(self, other: Tensor) -> Tensor: ...

    def matmul_tiled(self, other: Tensor, tiles: VecLike[i64, i64Like]) -> Tensor:
        """self @ other (2-D, or batched 3-D) with cache tiles (TM, TN, TK) of each product: a choice
        offered by rulesets.tiling."""

    def einsum_matmul(self, other: Tensor) -> Tensor:
        """self @ other from an einsum of 3+ operands: NumPy leaves their order unspecified, so
        rulesets.algebra's `einsum-order` may reassociate it without fast math."""

    def astype(self, dtype: DType) -> Tensor: ...
    def bitcast(self, dtype: DType) -> Tensor: ...
    def sum(self, axes: VecLike[i64, i64Like]) -> Tensor: ...
    def max(self, axes: VecLike[i64, i64Like]) -> Tensor: ...
    def min(self, axes: VecLike[i64, i64Like]) -> Tensor: ...
    def prod(self, axes: VecLike[i64, i64Like]) -> Tensor: ...
    def argmax(self, axes: VecLike[i64, i64Like]) -> Tensor: ...
    def argmin(self, axes: VecLike[i64, i64Like]) -> Tensor: ...
    def cumsum(self, axis: i64Like) -> Tensor: ...
    def cumprod(self, axis: i64Like) -> Tensor: ...
    def cummax(self, axis: i64Like) -> Tensor: ...
    def cummin(self, axis: i64Like) -> Tensor: ...
    def sort(self) -> Tensor: ...
    def argsort(self) -> Tensor: ...

    # A reduction with its vector lanes chosen (rulesets.tiling): its innermost loop, when that loop
    # reduces, accumulates `lanes` elements side by side (lowering/stages/lanes.py), in a row-fused loop too.
    def sum_lanes(self, axes: VecLike[i64, i64Like], lanes: i64Like) -> Tensor: ...
    def max_lanes(self, axes: VecLike[i64, i64Like], lanes: i64Like) -> Tensor: ...
    def min_lanes(self, axes: VecLike[i64, i64Like], lanes: i64Like) -> Tensor: ...
    def prod_lanes(self, axes: VecLike[i64, i64Like], lanes: i64Like) -> Tensor: ...
    def transpose(self, perm: VecLike[i64, i64Like]) -> Tensor: ...
    def reshape(self, shape: VecLike[i64, i64Like]) -> Tensor: ...
    def broadcast_to(self, shape: VecLike[i64, i64Like]) -> Tensor: ...

    def slice(self, start: VecLike[i64, i64Like], step: VecLike[i64, i64Like], size: VecLike[i64, i64Like]) -> Tensor:
        """out[i] = self[start + i * step] per dim, out has shape `size`."""

    def diagonal(self, offset: i64Like, axis1: i64Like, axis2: i64Like) -> Tensor: ...


class Program(Expr):
    """The root of a kernel: its outputs, extracted together so shared work is shared."""

    def __init__(self, outputs: VecLike[Tensor, Tensor]) -> None: ...


@function
def materialize(x: Tensor) -> Tensor:
    """x computed by its own loop nest into a buffer; elsewhere elementwise work fuses into its consumer."""


@function
def materialize_shared(x: Tensor) -> Tensor:
    """materialize(x) read by several consumers, chosen for all of them at once (rulesets.fusion,
    shared row values). A term of its own so that it is not merged with the consumers' other
    forms: extraction could not see the saving of one buffer read twice otherwise. Compiles and
    is priced exactly like materialize."""


@function
def fuse_rows(x: Tensor) -> Tensor:
    """x computed row block by row block in one loop, together with the kernels it needs that
    produce its rows (row reductions, materialized row-aligned values): their rows stay in cache."""


@function
def fuse_rows_tiled(x: Tensor, tiles: VecLike[i64, i64Like]) -> Tensor:
    """fuse_rows(x) with its tiles chosen (rulesets.tiling): Vec(rows per block). (The reductions in
    the loop choose their own lanes: `x.sum_lanes(axes, L)`.)"""


@function(merge=lambda old, new: old)
def shape_of(x: Tensor) -> Vec[i64]:
    """Static shape of a tensor e-class: seeded for every traced value, propagated by rulesets.shapes.

    Rules use it as a condition, e.g. `eq(shape_of(a)).to(shape_of(b))`.
    """


@function(merge=lambda old, new: old)
def dtype_of(x: Tensor) -> DType:
    """Element type of a tensor e-class, seeded and propagated like `shape_of`: rules that build
    constants of x's type, or hold only for integers, use it as a condition."""


def _unary(x: Tensor) -> Tensor: ...
def _binary(a: Tensor, b: Tensor) -> Tensor: ...
def _ternary(a: Tensor, b: Tensor, c: Tensor) -> Tensor: ...


def _elementwise_constructor(name: str, stub: Callable[..., Tensor]) -> Callable[..., Tensor]:
    """The egglog constructor `name` of an elementwise op: `stub`'s signature under the op's name."""
    fn = types.FunctionType(stub.__code__, stub.__globals__, name)
    fn.__annotations__, fn.__qualname__ = stub.__annotations__, name
    return function(fn)


# The plain elementwise constructors (exp, maximum, log1p, ...: the registry's unary and binary ops
# that are not Tensor methods), one per record, importable from here by name.
GENERATED = {
    record.name: _elementwise_constructor(record.term, _ternary if Kind.TERNARY in record.kind else _binary if Kind.BINARY in record.kind else _unary)
    for record in OPS.values()
    if Kind.ELEMENTWISE in record.kind and record.kind & (Kind.UNARY | Kind.BINARY | Kind.TERNARY) and not record.term.startswith("Tensor.")
}
globals().update({OPS[name].term: fn for name, fn in GENERATED.items()})


@function
def where(cond: Tensor, a: Tensor, b: Tensor) -> Tensor: ...
@function
def concat(parts: VecLike[Tensor, Tensor], axis: i64Like) -> Tensor: ...
@function
def gather(x: Tensor, idx: Tensor, axis: i64Like) -> Tensor:
    """x read at the int64 indices idx along `axis` (ops.py: the shape of idx)."""


@function
def searchsorted(a: Tensor, v: Tensor, right: i64Like) -> Tensor:
    """The int64 position of each element of v in the sorted 1-D a, before (right: after) equal ones (ops.py)."""


@function
def lu(a: Tensor) -> Tensor:
    """The LU factorization with partial pivoting of each matrix of a's last two axes, the pivot rows as a last column (ops.py)."""


@function
def lu_solve(f: Tensor, b: Tensor) -> Tensor:
    """x with a x = b for each factorization f = lu(a) and the matching (..., n, k) b (ops.py)."""


@function
def cholesky(a: Tensor) -> Tensor:
    """The lower triangular Cholesky factor of each symmetric positive definite matrix of a's last two axes (ops.py)."""


@function
def qr(a: Tensor, columns: i64Like) -> Tensor:
    """The Householder QR of each matrix of a's last two axes: Q's first `columns` columns, then R (ops.py)."""


@function
def eigh(a: Tensor) -> Tensor:
    """The eigenvectors and ascending eigenvalues of each symmetric matrix of a's last two axes, packed (ops.py)."""


@function
def svd(a: Tensor) -> Tensor:
    """The one-sided Jacobi SVD of each matrix of a's last two axes (rows >= columns), packed (ops.py)."""


@function
def recurrence(x: Tensor, coefficients: Tensor, state: Tensor, form: i64Like, columns: i64Like, axis: i64Like) -> Tensor:
    """x filtered along `axis` by the sections' coefficients from the state, `columns` final states appended (ops.py)."""


@function
def spline_filter(x: Tensor, order: i64Like, mode: i64Like, axis: i64Like) -> Tensor:
    """Each row of x along `axis` as the B-spline coefficients of `order` under boundary `mode` (ops.py)."""


@function
def scatter_add(idx: Tensor, weights: Tensor, bins: i64Like) -> Tensor:
    """`bins` bins, each the sum of the weights whose int64 index idx is that bin (ops.py)."""


@function
def array(data: StringLike, shape: VecLike[i64, i64Like], dtype: DType) -> Tensor:
    """A constant array (a captured NumPy array): its C-ordered bytes as hex."""


@function
def update_slice(base: Tensor, value: Tensor, start: VecLike[i64, i64Like], step: VecLike[i64, i64Like],
                 size: VecLike[i64, i64Like]) -> Tensor:
    """base with base[start + i * step] = value[i] for i < size (an in-place update, functionally)."""


def _constructor(term: str) -> object:
    """The egglog constructor a registry record names: "Tensor.<method>" or a function of this module."""
    return getattr(Tensor, term.removeprefix("Tensor.")) if term.startswith("Tensor.") else globals()[term]


# Node op name -> egglog constructor (egglog_tensor.ops); literal arguments in Node.attrs order.
CONSTRUCTORS = {record.name: _constructor(record.term) for record in OPS.values()}
# Reduction op -> its form with chosen lanes; extracted as that reduction with attrs (axes, lanes).
WITH_LANES = {"sum": Tensor.sum_lanes, "max": Tensor.max_lanes, "min": Tensor.min_lanes, "prod": Tensor.prod_lanes}
OP_OF = {fn: op for op, fn in CONSTRUCTORS.items()} | {materialize_shared: "materialize"} | {
    fn: op for op, fn in WITH_LANES.items()
}
OP_OF_REF = {fn.__egg_ref__: op for fn, op in OP_OF.items()}  # by egglog callable (a rule declaration's CallDecl)

DTYPE_TERMS = {
    "float32": DType.float32,
    "float64": DType.float64,
    "int32": DType.int32,
    "int64": DType.int64,
    "bool": DType.bool_,
    **{name: getattr(DType, name) for name in ("float16", "int8", "int16", "uint8", "uint16", "uint32", "uint64", "bfloat16")},
}
LAYOUT_TERMS = {"C": Layout.C, "F": Layout.F, "strided": Layout.strided}
CONSTANT_TEXT = {k: str(t) for terms in (DTYPE_TERMS, LAYOUT_TERMS) for k, t in terms.items()}  # "float64" -> "DType.float64"
# By callable, not by text: str() of a term pretty-prints it (a literal per node of each extracted term)
_CONSTANTS = {get_callable_fn(t): k for terms in (DTYPE_TERMS, LAYOUT_TERMS) for k, t in terms.items()}


@functools.lru_cache(maxsize=4096)
def _vec_term(value: tuple[int, ...]) -> object:
    """An int tuple as an egglog Vec[i64] (made once per tuple: egglog-python builds an expression in ~1 ms)."""
    return Vec[i64](*(i64(v) for v in value)) if value else Vec[i64].empty()


def _attr_term(value: object) -> object:
    """A Node attribute as an egglog value: ints, floats, strings, int tuples, dtypes, layouts."""
    if isinstance(value, tuple):
        return _vec_term(value)
    if isinstance(value, str) and value in DTYPE_TERMS:
        return DTYPE_TERMS[value]
    if isinstance(value, str) and value in LAYOUT_TERMS:
        return LAYOUT_TERMS[value]
    if isinstance(value, float):
        return f64(value)
    return value


def to_term(outputs: list[Node], memo: dict[int, Tensor] | None = None) -> Program:
    """The egglog Program term of a Node DAG; shared nodes become shared subterms.

    `memo` (if given) is filled with the term of every node, keyed by id(node).
    """
    memo = {} if memo is None else memo
    for node in topological(outputs):  # inputs first, so no recursion at any depth
        if id(node) not in memo:
            memo[id(node)] = node_term(node, memo)
    return Program(Vec[Tensor](*(memo[id(o)] for o in outputs)))


def constructor(node: Node) -> Callable[..., Tensor]:
    """The Tensor constructor of one node's term (a reduction with its lanes chosen: its WITH_LANES form)."""
    chosen = len(node.attrs) > len(OPS[node.op].attrs)
    return WITH_LANES[node.op] if chosen else CONSTRUCTORS[node.op]


def node_term(node: Node, memo: dict[int, Tensor]) -> Tensor:
    """The term of one node whose inputs' terms are in `memo`."""
    ctor = constructor(node)
    if node.op == "concat":
        return ctor(Vec[Tensor](*(memo[id(i)] for i in node.inputs)), node.attr("axis"))
    if node.op == "arg":
        name, shape, dtype, layout = node.attrs
        return ctor(name, _attr_term(shape), DTYPE_TERMS[dtype], LAYOUT_TERMS[layout])
    return ctor(*(memo[id(i)] for i in node.inputs), *(_attr_term(a) for a in node.attrs))


def static_facts(nodes: list[Node], memo: dict[int, Tensor]) -> list[object]:
    """egglog actions recording the traced shape and dtype of every node's term."""
    terms = [(n, memo[id(n)]) for n in nodes if id(n) in memo]
    return [set_(shape_of(t)).to(_attr_term(n.shape)) for n, t in terms] + [
        set_(dtype_of(t)).to(DTYPE_TERMS[n.dtype]) for n, t in terms
    ]


def literal(value: object) -> object:
    """The Python value of an extracted literal term (i64, f64, String, Vec[i64], DType, Layout)."""
    lit = get_literal_value(value)
    if lit is not None:
        return lit
    fn = get_callable_fn(value)
    if fn in _CONSTANTS:
        return _CONSTANTS[fn]
    if fn is not None and str(fn).startswith("Vec"):
        return tuple(literal(v) for v in get_callable_args(value))
    raise ValueError(f"not a literal term: {value}")


def from_term(program: Program, builder: Builder | None = None) -> list[Node]:
    """Nodes of an extracted Program term (shared subterms become shared nodes)."""
    builder = builder or Builder()
    memo: dict[int, Node] = {}

    def node(t: Tensor) -> Node:
        decl = t.__egg_typed_expr__  # type: ignore[attr-defined]
        done = memo.get(id(decl))
        if done is not None:
            return done
        fn = get_callable_fn(t)
        op = OP_OF.get(fn)
        if op is None:
            raise ValueError(f"term {t} is not part of the tensor language")
        args = get_callable_args(t)
        if op == "concat":
            parts, axis = args
            res = builder.make(op, tuple(node(p) for p in get_callable_args(parts)), (literal(axis),))
        else:
            tensors = tuple(node(a) for a in args if isinstance(a, Tensor))
            attrs = tuple(literal(a) for a in args if not isinstance(a, Tensor))
            if op == "const":
                attrs = (float(attrs[0]), attrs[1])
            res = builder.make(op, tensors, attrs)
        memo[id(decl)] = res
        return res

    (outs,) = get_callable_args(program)
    return [node(o) for o in get_callable_args(outs)]
