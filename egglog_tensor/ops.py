"""The op registry: one record per op of the tensor language, the single place that says what an op is.

A record holds the op's name (as in `Node.op`), its kind (elementwise, view, reduction, ...), the
names of its static attributes in the order `Node.attrs` and the egglog constructor hold them,
how many tensor inputs it takes, the egglog constructor's name in `egglog_tensor.ir`, and its shape
and dtype inference, and for an elementwise op its scalar semantics per dtype class. The op sets
the tracer, rules, cost model and emitter use are derived from it. Adding an elementwise function
is one record here and tests: `ir.py` generates its egglog constructor from the record, and
`lowering/scalar.py` emits the MLIR op the record names ("math.log1p"); only semantics that take
several ops are written by hand there (`tests/test_ops.py` checks the three agree). The
shape analysis (`rulesets/shapes.py`) gives the op's terms shapes and dtypes by its kind
(`tests/test_shapes_registry.py` checks they are this module's inference).
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .errors import TracingError, UnsupportedError

if TYPE_CHECKING:
    from .graph import Node

Shape = tuple[int, ...]


class Kind(enum.Flag):
    """What an op is, for the passes that treat ops by class."""

    LEAF = enum.auto()  # an argument or a constant
    ELEMENTWISE = enum.auto()  # one output element from the same element of each (broadcast) input: fuses into one loop body
    UNARY = enum.auto()
    BINARY = enum.auto()
    TERNARY = enum.auto()  # three operands of one dtype, broadcast (scipy.special.betainc)
    PREDICATE = enum.auto()  # a comparison: bool result
    LOGICAL = enum.auto()  # inputs read as truth values: bool result
    TRANSCENDENTAL = enum.auto()  # priced higher by the cost model
    VIEW = enum.auto()  # an index map over its input, no computation (reshape is one when it only moves unit dims)
    SHAPE = enum.auto()  # rearranges elements: reshape, concat
    REDUCTION = enum.auto()
    CONTRACTION = enum.auto()
    SCHEDULE = enum.auto()  # a choice of how to compute its input (materialize, fuse_rows), same value
    INDEX = enum.auto()  # a reduction giving where its pick is (argmax): an int64 index, not a value
    SCAN = enum.auto()  # a running reduction along one axis (cumsum): its input's shape
    SORT = enum.auto()  # a stable sort of the last axis (sort, argsort): its input's shape
    FACTOR = enum.auto()  # a factorization of the matrices of the last two axes, or a solve with one (lu, lu_solve, cholesky)


Infer = Callable[[Sequence["Node"], tuple[Any, ...]], tuple[Shape, str]]
COMPOSED = ""  # scalar semantics written by hand in lowering/scalar.py (several MLIR ops)
DTYPE_CLASSES = ("float", "int", "bool")


def dtype_class(dtype: str) -> str:
    """The class of a dtype name that scalar semantics are given per: "float", "int" or "bool"."""
    return "float" if "float" in dtype else ("bool" if dtype == "bool" else "int")  # float16..64, bfloat16


@dataclass(frozen=True)
class OpDef:
    """One op: `inputs` tensor inputs (None: a list of them), attributes named `attrs` (in Node.attrs
    order; `chosen` ones follow them when the rules chose them, e.g. a reduction's vector lanes), the
    egglog constructor `term` (a `Tensor` method as "Tensor.<name>", else a function of ir.py) and,
    for an elementwise op, its `scalar` semantics per operand dtype class it supports ("float",
    "int", "bool"): the one MLIR op computing it ("math.log1p", "arith.andi") or COMPOSED."""

    name: str
    kind: Kind
    inputs: int | None
    attrs: tuple[str, ...]
    term: str
    infer: Infer
    chosen: tuple[str, ...] = ()
    scalar: dict[str, str] = field(default_factory=dict, compare=False)

    def attr(self, attrs: tuple[Any, ...], name: str) -> Any:
        """The attribute `name` of a node of this op with attributes `attrs` (None: a chosen one not chosen)."""
        names = self.attrs + self.chosen
        if name not in names:
            raise KeyError(f"op {self.name} has no attribute {name!r} (it has {', '.join(names) or 'none'})")
        index = names.index(name)
        return attrs[index] if index < len(attrs) else None


def broadcast_shapes(*shapes: Shape) -> Shape:
    """NumPy broadcasting of static shapes; raises TracingError on mismatch."""
    rank = max((len(s) for s in shapes), default=0)
    out = []
    for i in range(rank):
        dims = {s[len(s) - rank + i] for s in shapes if len(s) - rank + i >= 0}
        dims.discard(1)
        if len(dims) > 1:
            raise TracingError(f"shapes {' and '.join(map(str, shapes))} cannot be broadcast together")
        out.append(dims.pop() if dims else 1)
    return tuple(out)


def is_unit_reshape(src: Shape, dst: Shape) -> bool:
    """True when a reshape only inserts or removes size-1 dims (so it is a free view)."""
    return [d for d in src if d != 1] == [d for d in dst if d != 1]


# --- inference, by form -------------------------------------------------------------------------
def _arg(ins: Sequence[Node], attrs: tuple) -> tuple[Shape, str]:
    return tuple(attrs[1]), attrs[2]


def _array(ins: Sequence[Node], attrs: tuple) -> tuple[Shape, str]:
    return tuple(attrs[1]), attrs[2]


def _const(ins: Sequence[Node], attrs: tuple) -> tuple[Shape, str]:
    return (), attrs[1]


def _same(ins: Sequence[Node], attrs: tuple) -> tuple[Shape, str]:
    return ins[0].shape, ins[0].dtype


def _to_bool(ins: Sequence[Node], attrs: tuple) -> tuple[Shape, str]:
    return ins[0].shape, "bool"


def _binary(result: str | None) -> Infer:
    """Operands of one dtype, broadcast; the result of dtype `result` (None: the operands')."""

    def infer(ins: Sequence[Node], attrs: tuple) -> tuple[Shape, str]:
        a, b = ins
        if a.dtype != b.dtype:
            raise TracingError(f"operand dtypes differ ({a.dtype}, {b.dtype}); cast first")
        return broadcast_shapes(a.shape, b.shape), result or a.dtype

    return infer


def _ternary(ins: Sequence[Node], attrs: tuple) -> tuple[Shape, str]:
    """Operands of one dtype, broadcast; the result of theirs."""
    a, b, c = ins
    if not a.dtype == b.dtype == c.dtype:
        raise TracingError(f"operand dtypes differ ({a.dtype}, {b.dtype}, {c.dtype}); cast first")
    return broadcast_shapes(a.shape, b.shape, c.shape), a.dtype


def _where(ins: Sequence[Node], attrs: tuple) -> tuple[Shape, str]:
    c, a, b = ins
    return broadcast_shapes(c.shape, a.shape, b.shape), a.dtype


def _astype(ins: Sequence[Node], attrs: tuple) -> tuple[Shape, str]:
    return ins[0].shape, attrs[0]


def _reduce(op: str) -> Infer:
    def infer(ins: Sequence[Node], attrs: tuple) -> tuple[Shape, str]:
        (x,) = ins
        axes = attrs[0]
        if op in ("max", "min") and any(x.shape[a] == 0 for a in axes):
            raise TracingError(f"zero-size array to reduction operation {op} which has no identity")
        return tuple(d for i, d in enumerate(x.shape) if i not in axes), x.dtype

    return infer


def _index_reduce(op: str) -> Infer:
    """argmax/argmin: the reduction's shape, an int64 index; an empty reduced axis has no index."""

    def infer(ins: Sequence[Node], attrs: tuple) -> tuple[Shape, str]:
        (x,) = ins
        if any(x.shape[a] == 0 for a in attrs[0]):
            raise TracingError(f"attempt to get {op} of an empty sequence")
        return tuple(d for i, d in enumerate(x.shape) if i not in attrs[0]), "int64"

    return infer


def _scan(ins: Sequence[Node], attrs: tuple) -> tuple[Shape, str]:
    """cumsum/cumprod/cummax/cummin along one axis of an array of rank >= 1: its shape and dtype."""
    (x,) = ins
    if not 0 <= attrs[0] < len(x.shape):
        raise TracingError(f"axis {attrs[0]} is out of bounds for an array of shape {x.shape}")
    return x.shape, x.dtype


def _sort(op: str) -> Infer:
    """sort/argsort of the last axis of an array of rank >= 1: its shape; argsort's indices are int64."""

    def infer(ins: Sequence[Node], attrs: tuple) -> tuple[Shape, str]:
        (x,) = ins
        if not x.shape:
            raise TracingError(f"{op}: a 0-d array has no axis to sort")
        return x.shape, "int64" if op == "argsort" else x.dtype

    return infer


def _square_matrices(op: str, x: Node) -> int:
    """n, for a float `x` of stacked n x n matrices (..., n, n); TracingError naming `op` and the shape otherwise."""
    if len(x.shape) < 2 or x.shape[-1] != x.shape[-2] or "float" not in x.dtype:
        raise TracingError(f"{op}: float matrices of shape (..., n, n) expected, got {x.dtype}{list(x.shape)}")
    return x.shape[-1]


def _lu(ins: Sequence[Node], attrs: tuple) -> tuple[Shape, str]:
    """lu(a): each n x n matrix's L\\U packed, with the row each step swapped in as a last column: (..., n, n + 1)."""
    (a,) = ins
    n = _square_matrices("lu", a)
    return a.shape[:-1] + (n + 1,), a.dtype


def _lu_solve(ins: Sequence[Node], attrs: tuple) -> tuple[Shape, str]:
    """lu_solve(lu, b): x with a x = b for each (..., n, n + 1) factorization and (..., n, k) b of its dtype: b's shape."""
    f, b = ins
    if len(f.shape) < 2 or f.shape[-1] != f.shape[-2] + 1 or b.shape[:-2] != f.shape[:-2] or b.shape[-2:-1] != f.shape[-2:-1] or f.dtype != b.dtype:
        raise TracingError(f"lu_solve: a factorization (..., n, n + 1) and right-hand sides (..., n, k) of its dtype expected, "
                           f"got {f.dtype}{list(f.shape)} and {b.dtype}{list(b.shape)}")
    return b.shape, b.dtype


def _cholesky(ins: Sequence[Node], attrs: tuple) -> tuple[Shape, str]:
    """cholesky(a): the lower triangular L with L L^T = a of each matrix: a's shape."""
    (a,) = ins
    _square_matrices("cholesky", a)
    return a.shape, a.dtype


def _float_matrices(op: str, x: Node) -> tuple[int, int]:
    """(m, n), for a float `x` of stacked m x n matrices (..., m, n); TracingError naming `op` and the shape otherwise."""
    if len(x.shape) < 2 or "float" not in x.dtype:
        raise TracingError(f"{op}: float matrices of shape (..., m, n) expected, got {x.dtype}{list(x.shape)}")
    return x.shape[-2], x.shape[-1]


def _qr(ins: Sequence[Node], attrs: tuple) -> tuple[Shape, str]:
    """qr(a, columns): each m x n matrix's first `columns` columns of Q then its R (m x n): (..., m, columns + n)."""
    (a,) = ins
    m, n = _float_matrices("qr", a)
    return a.shape[:-1] + (attrs[0] + n,), a.dtype


def _eigh(ins: Sequence[Node], attrs: tuple) -> tuple[Shape, str]:
    """eigh(a): row i of each symmetric n x n matrix's the i-th eigenvector then its eigenvalue, ascending: (..., n, n + 1)."""
    (a,) = ins
    n = _square_matrices("eigh", a)
    return a.shape[:-1] + (n + 1,), a.dtype


def _svd(ins: Sequence[Node], attrs: tuple) -> tuple[Shape, str]:
    """svd(a) of m x n matrices, m >= n: row i the i-th column of a V (m), of V (n) and its norm, descending: (..., n, m + n + 1)."""
    (a,) = ins
    m, n = _float_matrices("svd", a)
    if m < n:
        raise TracingError(f"svd: matrices with at least as many rows as columns expected, got {list(a.shape)}")
    return a.shape[:-2] + (n, m + n + 1), a.dtype


def _searchsorted(ins: Sequence[Node], attrs: tuple) -> tuple[Shape, str]:
    """searchsorted(a, v, right): where each element of v goes in the sorted 1-D a (int64), v's shape."""
    a, v = ins
    if len(a.shape) != 1 or a.dtype != v.dtype:
        raise TracingError(f"searchsorted: a must be 1-D and of v's dtype, got {a.dtype}{list(a.shape)} and {v.dtype}")
    return v.shape, "int64"


def _matmul(ins: Sequence[Node], attrs: tuple) -> tuple[Shape, str]:
    a, b = ins
    if a.dtype != b.dtype:
        raise TracingError(f"matmul: operand dtypes differ ({a.dtype}, {b.dtype})")
    sa, sb = a.shape, b.shape
    if sa[-1] != (sb[0] if len(sb) == 1 else sb[-2]):
        raise TracingError(f"matmul: inner dimensions differ: {sa} @ {sb}")
    if len(sa) == 3 or len(sb) == 3:
        if len(sa) != len(sb) or sa[0] != sb[0]:
            raise TracingError(f"matmul: batch shapes differ: {sa} @ {sb}")
        return (sa[0], sa[1], sb[2]), a.dtype
    return (sa[:-1] + sb[1:] if len(sb) == 2 else sa[:-1]), a.dtype


def _transpose(ins: Sequence[Node], attrs: tuple) -> tuple[Shape, str]:
    return tuple(ins[0].shape[p] for p in attrs[0]), ins[0].dtype


def _to_shape(ins: Sequence[Node], attrs: tuple) -> tuple[Shape, str]:
    return tuple(attrs[0]), ins[0].dtype


def _slice(ins: Sequence[Node], attrs: tuple) -> tuple[Shape, str]:
    return tuple(attrs[2]), ins[0].dtype


def _diagonal(ins: Sequence[Node], attrs: tuple) -> tuple[Shape, str]:
    (x,) = ins
    offset, a1, a2 = attrs
    n = max(0, min(x.shape[a1] - max(-offset, 0), x.shape[a2] - max(offset, 0)))
    return tuple(d for i, d in enumerate(x.shape) if i not in (a1, a2)) + (n,), x.dtype


def _gather(ins: Sequence[Node], attrs: tuple) -> tuple[Shape, str]:
    """gather(x, idx, axis): shaped like idx, which has x's dims with `axis` replaced by k >= 0 dims;
    a dim of x is 1 (broadcast) or the idx dim it meets."""
    x, idx = ins
    axis, rank = attrs[0], len(x.shape)
    k = len(idx.shape) - rank + 1
    if idx.dtype != "int64" or k < 0 or not 0 <= axis < rank:
        raise TracingError(f"int64 indices of rank >= {rank - 1} along an axis of x (rank {rank}) expected, got {idx.dtype}{list(idx.shape)}")
    meets = [idx.shape[d if d < axis else d + k - 1] for d in range(rank) if d != axis]
    if any(n not in (1, m) for n, m in zip((n for d, n in enumerate(x.shape) if d != axis), meets, strict=True)):
        raise TracingError(f"x {list(x.shape)} does not broadcast against indices {list(idx.shape)} outside axis {axis}")
    return idx.shape, x.dtype


def _scatter_add(ins: Sequence[Node], attrs: tuple) -> tuple[Shape, str]:
    """scatter_add(idx, weights, bins): `bins` bins of the weights' dtype; idx int64 and shaped like the 1-D weights."""
    idx, w = ins
    if idx.dtype != "int64" or len(idx.shape) != 1 or w.shape != idx.shape or attrs[0] < 0:
        raise TracingError(f"1-D int64 indices shaped like the weights and bins >= 0 expected, got "
                           f"{idx.dtype}{list(idx.shape)}, {w.dtype}{list(w.shape)}, bins {attrs[0]}")
    return (attrs[0],), w.dtype


def _iota(ins: Sequence[Node], attrs: tuple) -> tuple[Shape, str]:
    shape, axis, dtype = attrs
    if not 0 <= axis < len(shape) or dtype == "bool":
        raise TracingError(f"the index along axis {axis} of shape {tuple(shape)} as {dtype} is not a value it has")
    return tuple(shape), dtype


def _update_slice(ins: Sequence[Node], attrs: tuple) -> tuple[Shape, str]:
    base, value = ins
    start, step, size = attrs
    if value.shape != tuple(size) or value.dtype != base.dtype:
        raise TracingError(f"the value {value.dtype}{list(value.shape)} must be {base.dtype}{list(size)}")
    if not len(start) == len(step) == len(size) == len(base.shape) or any(
        n and not (0 <= a and 0 < k and a + k * (n - 1) < d) for a, k, n, d in zip(start, step, size, base.shape, strict=True)
    ):
        raise TracingError(f"box start={start} step={step} size={size} does not fit shape {base.shape}")
    return base.shape, base.dtype


def _concat(ins: Sequence[Node], attrs: tuple) -> tuple[Shape, str]:
    axis, first = attrs[0], ins[0]
    total = sum(t.shape[axis] for t in ins)
    return first.shape[:axis] + (total,) + first.shape[axis + 1 :], first.dtype


# --- the registry -------------------------------------------------------------------------------
E, U, B, T, P = Kind.ELEMENTWISE, Kind.UNARY, Kind.BINARY, Kind.TRANSCENDENTAL, Kind.PREDICATE
C = COMPOSED


def _unary(name: str, scalar: dict[str, str], kind: Kind = Kind(0), term: str | None = None, infer: Infer = _same) -> OpDef:
    """A unary elementwise op; its constructor a function of ir.py named like it unless `term`."""
    return OpDef(name, E | U | kind, 1, (), term or name, infer, scalar=scalar)


def _binary_op(name: str, scalar: dict[str, str], kind: Kind = Kind(0), term: str | None = None, result: str | None = None) -> OpDef:
    """A binary elementwise op of operands of one dtype, broadcast; its result of dtype `result` (None: theirs)."""
    return OpDef(name, E | B | kind, 2, (), term or name, _binary(result), scalar=scalar)


def _ternary_op(name: str, scalar: dict[str, str], kind: Kind = Kind(0)) -> OpDef:
    """A ternary elementwise op of operands of one dtype, broadcast; its constructor a function of ir.py named like it."""
    return OpDef(name, E | Kind.TERNARY | kind, 3, (), name, _ternary, scalar=scalar)


def _float(op: str) -> dict[str, str]:
    return {"float": op}


_ALL = dict.fromkeys(DTYPE_CLASSES, C)
_NUMERIC = {"float": C, "int": C}
_RECORDS = [
    OpDef("arg", Kind.LEAF, 0, ("name", "shape", "dtype", "layout"), "Tensor.arg", _arg),
    OpDef("const", Kind.LEAF, 0, ("value", "dtype"), "Tensor.const", _const),
    # arrays made in the kernel (tracing/creation.py): each element's index along `axis` of `shape`,
    # as `dtype`, computed in the loop body that reads it (linalg.index), never stored unless materialized
    OpDef("iota", Kind.LEAF, 0, ("shape", "axis", "dtype"), "Tensor.iota", _iota),
    # unary elementwise (Tensor.__neg__ is `-x`)
    _unary("negative", {"float": "arith.negf", "int": C}, term="Tensor.__neg__"),
    _unary("absolute", {"float": "math.absf", "int": "math.absi", "bool": C}),
    _unary("square", _ALL),
    _unary("reciprocal", {"float": C}),
    _unary("sign", _NUMERIC),
    *(_unary(name, _float(f"math.{name}"), T) for name in ("exp", "log", "sqrt", "tanh", "sin", "cos")),
    _unary("logical_not", _ALL, Kind.LOGICAL, infer=_to_bool),
    *(_unary(name, _float(f"math.{op}"), T) for name, op in (
        ("log2", "log2"), ("log10", "log10"), ("exp2", "exp2"),
        ("sinh", "sinh"), ("cosh", "cosh"), ("arcsinh", "asinh"), ("arccosh", "acosh"), ("arctanh", "atanh"),
        ("arcsin", "asin"), ("arccos", "acos"), ("arctan", "atan"), ("tan", "tan"), ("cbrt", "cbrt"),
        ("erf", "erf"), ("erfc", "erfc"))),  # erf, erfc: scipy.special's (tracing/special.py); NumPy has none
    # composed: convert-math-to-llvm expands math.log1p/expm1 as log(1 + x), exp(x) - 1 (tiny x lost)
    *(_unary(name, _float(C), T) for name in ("log1p", "expm1")),
    _unary("i0", _float(C), T),  # np.i0 (tracing/elementwise.py), the Bessel function I0: lowering/special.py
    _unary("gammaln", _float(C), T),  # scipy.special.gammaln (tracing/special.py): libm's lgamma, called (lowering/scalar.py)
    _unary("gamma", _float(C), T),  # scipy.special.gamma: libm's tgamma, called
    _unary("psi", _float(C), T),  # scipy.special.psi (digamma): SciPy's algorithm in scalar code (lowering/digamma.py)
    # scipy.special's Riemann zeta (lowering/zeta.py), exponential integrals (expint.py) and modified Bessel functions of
    # orders 0 and 1 (bessel.py), by SciPy's algorithms in scalar code
    *(_unary(name, _float(C), T) for name in ("riemann_zeta", "exp1", "expi", "i0e", "i1", "i1e", "k0", "k0e", "k1", "k1e")),
    # scipy.special's Bessel functions of the first and second kinds of orders 0 and 1 (lowering/bessel_jy.py)
    *(_unary(name, _float(C), T) for name in ("j0", "j1", "y0", "y1")),
    # scipy.special's limiting Kolmogorov distribution's survival function and its inverse (lowering/kolmogorov.py)
    *(_unary(name, _float(C), T) for name in ("kolmogorov", "kolmogi")),
    # scipy.special's complete elliptic integrals (lowering/elliptic.py) and dilogarithm (dilogarithm.py)
    *(_unary(name, _float(C), T) for name in ("ellipk", "ellipkm1", "ellipe", "spence")),
    _unary("zetac", _float(C), T),  # scipy.special.zetac: Riemann's zeta - 1 (lowering/zeta.py)
    *(_unary(name, _float(C), T) for name in ("dawsn", "erfi")),  # scipy.special's Dawson integral, erfi (lowering/dawson.py)
    # rounding: integers (NumPy has loops for them) are their own floor, ceil and trunc
    *(_unary(name, {"float": f"math.{name}", "int": C, "bool": C}) for name in ("floor", "ceil", "trunc")),
    _unary("rint", _float("math.roundeven")),
    _unary("fabs", _float("math.absf")),
    _unary("signbit", _float(C), P, infer=_to_bool),
    *(_unary(name, _ALL, P, infer=_to_bool) for name in ("isnan", "isinf", "isfinite")),
    *(_unary(name, _float(C)) for name in ("deg2rad", "rad2deg")),
    _unary("invert", {"int": C, "bool": C}),
    # binary elementwise: arithmetic operators are Tensor's, the rest functions of ir.py
    _binary_op("add", {"float": "arith.addf", "int": "arith.addi", "bool": "arith.ori"}, term="Tensor.__add__"),
    _binary_op("subtract", {"float": "arith.subf", "int": "arith.subi", "bool": "arith.xori"}, term="Tensor.__sub__"),
    _binary_op("multiply", {"float": "arith.mulf", "int": "arith.muli", "bool": "arith.andi"}, term="Tensor.__mul__"),
    _binary_op("divide", _float("arith.divf"), term="Tensor.__truediv__"),
    _binary_op("floor_divide", _NUMERIC, term="Tensor.__floordiv__"),
    _binary_op("remainder", _NUMERIC, term="Tensor.__mod__"),
    _binary_op("power", {"float": "math.powf", "int": C}, T, term="Tensor.__pow__"),
    _binary_op("maximum", {"float": "arith.maximumf", "int": "arith.maxsi", "bool": "arith.ori"}),
    _binary_op("minimum", {"float": "arith.minimumf", "int": "arith.minsi", "bool": "arith.andi"}),
    _binary_op("arctan2", _float("math.atan2"), T),
    _binary_op("copysign", _float("math.copysign")),
    _binary_op("fmod", {"float": "arith.remf", "int": C}),
    _binary_op("heaviside", _float(C)),
    *(_binary_op(name, _float(C), T) for name in ("hypot", "logaddexp", "logaddexp2")),
    # scipy.special's regularized incomplete gamma functions and their inverses (tracing/special.py): series,
    # continued fractions and Newton's method in scalar loops (lowering/incomplete.py, incomplete_inverse.py)
    *(_binary_op(name, _float(C), T) for name in ("gammainc", "gammaincc", "gammaincinv", "gammainccinv")),
    # scipy.special's beta function, its log, binom and poch (lowering/betafunction.py), Hurwitz's zeta (zeta.py)
    *(_binary_op(name, _float(C), T) for name in ("beta", "betaln", "binom", "poch", "zeta")),
    # scipy.special's arithmetic-geometric mean (lowering/elliptic.py), generalized exponential integral (expn.py),
    # incomplete elliptic integrals (elliptic_incomplete.py)
    *(_binary_op(name, _float(C), T) for name in ("agm", "expn", "ellipkinc", "ellipeinc")),
    _binary_op("owens_t", _float(C), T),  # scipy.special.owens_t: Patefield and Tandy's methods (lowering/owens.py)
    # scipy.special's orthogonal polynomials of integer degree n (a float64 operand): SciPy's recurrences (lowering/orthopoly.py)
    *(_binary_op(name, _float(C), T) for name in ("legendre_l", "chebyt_l", "chebyu_l")),
    # scipy.special's yn and kn of integer order n (a float64 operand): forward recurrences (lowering/bessel_integer.py)
    *(_binary_op(name, _float(C), T) for name in ("bessel_jn", "bessel_yn", "bessel_kn", "bessel_kne", "bessel_ive")),
    *(_binary_op(f"bitwise_{op}", {"int": f"arith.{op}i", "bool": f"arith.{op}i"}) for op in ("and", "or", "xor")),
    *(_binary_op(name, {"int": C}) for name in ("left_shift", "right_shift")),
    *(_binary_op(name, _ALL, P, result="bool")
      for name in ("equal", "not_equal", "less", "less_equal", "greater", "greater_equal")),
    *(_binary_op(name, _ALL, Kind.LOGICAL, result="bool") for name in ("logical_and", "logical_or", "logical_xor")),
    # scipy.special's regularized incomplete beta integral (lowering/incompletebeta.py) and its inverses
    # (incompletebeta_inverse.py)
    *(_ternary_op(name, _float(C), T) for name in ("betainc", "betaincc", "betaincinv", "betainccinv")),
    _ternary_op("beta_pdf", _float(C), T),
    # scipy.special's Carlson symmetric elliptic integrals (lowering/carlson.py)
    _binary_op("elliprc", _float(C), T),
    *(_ternary_op(name, _float(C), T) for name in ("elliprd", "elliprf", "elliprg")),  # scipy.stats.beta's pdf (SciPy's private _beta_pdf: x, a, b)
    *(_ternary_op(name, _float(C), T) for name in ("genlaguerre_l", "gegenbauer_l")),  # (n, alpha, x: lowering/orthopoly.py)
    OpDef("where", E, 3, (), "where", _where),
    OpDef("astype", E, 1, ("dtype",), "Tensor.astype", _astype),
    # ndarray.view(dtype) of a dtype of the same itemsize (tracing/bitviews.py): each element's bits read as `dtype`
    OpDef("bitcast", E, 1, ("dtype",), "Tensor.bitcast", _astype),
    # reductions: `lanes` once rulesets.tiling chose them (the `<op>_lanes` constructors of ir.py)
    *(OpDef(name, Kind.REDUCTION, 1, ("axes",), f"Tensor.{name}", _reduce(name), chosen=("lanes",))
      for name in ("sum", "max", "min", "prod")),
    # reductions (issue 24): argmax/argmin, the row-major index within `axes` of the first max/min (NaN first)
    *(OpDef(name, Kind.REDUCTION | Kind.INDEX, 1, ("axes",), f"Tensor.{name}", _index_reduce(name)) for name in ("argmax", "argmin")),
    # scans (issue 24, tracing/scans.py): the running sum/product/max/min along `axis`, emitted as loops carrying it
    *(OpDef(name, Kind.SCAN, 1, ("axis",), f"Tensor.{name}", _scan) for name in ("cumsum", "cumprod", "cummax", "cummin")),
    # sorts (tracing/sorting.py): a stable merge sort of each row of the last axis, NaN last; searchsorted
    # (right: 0 or 1, NumPy's side) a binary search of the sorted 1-D a for each element of v
    *(OpDef(name, Kind.SORT, 1, (), f"Tensor.{name}", _sort(name)) for name in ("sort", "argsort")),
    OpDef("searchsorted", Kind.SHAPE, 2, ("right",), "searchsorted", _searchsorted),
    # dense linear algebra (tracing/solve.py, lowering/factor.py): LU with partial pivoting (LAPACK's getrf)
    # and Cholesky of each matrix of the last two axes, and the forward and back substitution of an LU
    OpDef("lu", Kind.FACTOR, 1, (), "lu", _lu),
    OpDef("lu_solve", Kind.FACTOR, 2, (), "lu_solve", _lu_solve),
    OpDef("cholesky", Kind.FACTOR, 1, (), "cholesky", _cholesky),
    # orthogonal factorizations (tracing/orthogonal.py, lowering/orthogonal.py): Householder QR (LAPACK's
    # geqrf signs), cyclic Jacobi eigh and one-sided Jacobi SVD, each packed into one array
    OpDef("qr", Kind.FACTOR, 1, ("columns",), "qr", _qr),
    OpDef("eigh", Kind.FACTOR, 1, (), "eigh", _eigh),
    OpDef("svd", Kind.FACTOR, 1, (), "svd", _svd),
    OpDef("matmul", Kind.CONTRACTION, 2, (), "Tensor.__matmul__", _matmul),
    OpDef("matmul_tiled", Kind.CONTRACTION, 2, ("tiles",), "Tensor.matmul_tiled", _matmul),
    # einsum order (issue 24): a product of a 3+-operand einsum, whose pairwise order is free
    OpDef("einsum_matmul", Kind.CONTRACTION, 2, (), "Tensor.einsum_matmul", _matmul),
    OpDef("transpose", Kind.VIEW, 1, ("perm",), "Tensor.transpose", _transpose),
    OpDef("broadcast_to", Kind.VIEW, 1, ("shape",), "Tensor.broadcast_to", _to_shape),
    OpDef("slice", Kind.VIEW, 1, ("start", "step", "size"), "Tensor.slice", _slice),
    OpDef("diagonal", Kind.VIEW, 1, ("offset", "axis1", "axis2"), "Tensor.diagonal", _diagonal),
    OpDef("reshape", Kind.SHAPE, 1, ("shape",), "Tensor.reshape", _to_shape),
    OpDef("concat", Kind.SHAPE, None, ("axis",), "concat", _concat),
    # shapefns: a gather reads x at run-time indices along one axis (np.take, take_along_axis, x[idx])
    OpDef("gather", Kind.SHAPE, 2, ("axis",), "gather", _gather),
    # in-place updates (tracing/updates.py): base with the strided box start + i * step (i < size) replaced by value
    OpDef("update_slice", Kind.SHAPE, 2, ("start", "step", "size"), "update_slice", _update_slice),
    # captured NumPy arrays (tracing/core.py's constant_array): C-ordered bytes as hex, embedded in the module
    OpDef("array", Kind.LEAF, 0, ("data", "shape", "dtype"), "array", _array),
    # scatter (bincount, histogram: tracing/scatter.py): integer gcd/lcm, and scatter_add, the
    # weights summed into `bins` bins at the int64 indices (each in range: the tracer checks)
    *(_binary_op(name, {"int": C}) for name in ("gcd", "lcm")),
    OpDef("scatter_add", Kind.SHAPE, 2, ("bins",), "scatter_add", _scatter_add),
    OpDef("materialize", Kind.SCHEDULE, 1, (), "materialize", _same),
    OpDef("fuse_rows", Kind.SCHEDULE, 1, (), "fuse_rows", _same),
    OpDef("fuse_rows_tiled", Kind.SCHEDULE, 1, ("tiles",), "fuse_rows_tiled", _same),
]  # fmt: skip
OPS: dict[str, OpDef] = {r.name: r for r in _RECORDS}


def names(kind: Kind, without: Kind = Kind(0)) -> tuple[str, ...]:
    """Names of the ops of `kind` (every flag of it) and none of `without`, in registry order."""
    return tuple(r.name for r in _RECORDS if kind in r.kind and not r.kind & without)


UNARY = names(Kind.UNARY)
BINARY = names(Kind.BINARY)
TERNARY = names(Kind.TERNARY)
PREDICATES = names(Kind.PREDICATE | Kind.BINARY)
ELEMENTWISE = frozenset(names(Kind.ELEMENTWISE))
TRANSCENDENTAL = frozenset(names(Kind.TRANSCENDENTAL))
REDUCTIONS = names(Kind.REDUCTION)
INDEX_REDUCTIONS = names(Kind.INDEX)
SCANS = names(Kind.SCAN)
SORTS = names(Kind.SORT)
FACTORS = names(Kind.FACTOR)
VIEWS = frozenset(names(Kind.VIEW))


def op(name: str) -> OpDef:
    """The record of op `name`; UnsupportedError for an op the language does not have."""
    record = OPS.get(name)
    if record is None:
        raise UnsupportedError(f"unknown op {name!r}")
    return record


def supports(name: str, dtype: str) -> bool:
    """Whether elementwise op `name` has scalar semantics for operands of `dtype` (where, astype and bitcast: any)."""
    return name in ("where", "astype", "bitcast") or dtype_class(dtype) in op(name).scalar


def infer(name: str, inputs: Sequence[Node], attrs: tuple[Any, ...]) -> tuple[Shape, str]:
    """Shape and dtype of op `name` applied to `inputs` with attributes `attrs` (TracingError naming
    the op for inputs it cannot take)."""
    record = op(name)
    if record.inputs is not None and len(inputs) != record.inputs:
        raise TracingError(f"{name}: takes {record.inputs} tensor inputs, got {len(inputs)}")
    try:
        return record.infer(inputs, attrs)
    except TracingError as exc:
        message = str(exc)
        raise TracingError(message if message.startswith(f"{name}:") else f"{name}: {message}") from None


def is_view(name: str, source: Shape, shape: Shape) -> bool:
    """Whether op `name` from an input of shape `source` to `shape` is a view (an index map, no copy)."""
    return name in VIEWS or (name == "reshape" and is_unit_reshape(source, shape))
