"""The shape analysis agrees with the op registry: after the optimizer's rewriting (the default
schedule, and with fast math), every e-class holding a tensor-language term has `shape_of` and
`dtype_of`, and they equal what `ops.infer` gives each of its e-nodes from its children's.

The e-graph is read through egglog's `freeze()`: each e-class's e-nodes and the rows of
`shape_of`/`dtype_of`. Hand-written programs together reach every op of the registry (checked);
the fuzzer's program generator adds random ones.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest
import scipy.special as sp
from egglog import EGraph, get_callable_fn
from egglog.declarations import CallDecl, LitDecl, TypedExprDecl, ValueDecl
from egglog.runtime import RuntimeExpr
from fuzz_programs import Program, programs
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from egglog_tensor import ops
from egglog_tensor.compiler import Options
from egglog_tensor.errors import TracingError, UnsupportedError
from egglog_tensor.graph import Node, topological
from egglog_tensor.ir import OP_OF, literal
from egglog_tensor.optimize import Limits, rewritten
from egglog_tensor.rulesets import DEFAULT
from egglog_tensor.target import Target
from egglog_tensor.spec import spec_of
from egglog_tensor.tracing import trace_function


@dataclass(frozen=True)
class Typed:
    """What `ops.infer` reads of an input: its shape and dtype."""

    shape: tuple[int, ...] | None
    dtype: str | None


@dataclass(frozen=True)
class ENode:
    """One tensor-language e-node: its registry op, child e-classes and attributes (Node.attrs order)."""

    op: str
    children: tuple[Any, ...]
    attrs: tuple[Any, ...]


@dataclass(frozen=True)
class Analysis:
    """The saturated e-graph: tensor e-classes' e-nodes, and the shape_of / dtype_of rows."""

    classes: dict[Any, list[ENode]]
    shapes: dict[Any, tuple[int, ...]]
    dtypes: dict[Any, str]


def _decode(expr: TypedExprDecl, constants: dict[Any, str]) -> Any:
    """A literal argument as Python: a number or string, a DType/Layout name, an e-class, a Vec as a tuple."""
    match expr.expr:
        case LitDecl(value=value):
            return value
        case ValueDecl(value=value):
            return constants.get(value, value)
        case CallDecl(args=args):
            return tuple(_decode(a, constants) for a in args)
    raise AssertionError(f"unexpected argument {expr}")


def _tensors(tp: Any) -> bool | None:
    """Whether an argument of type `tp` is one tensor (True), a Vec of them (False), or neither (None)."""
    if tp.ident.name == "Tensor":
        return True
    if tp.ident.name == "Vec" and tp.args[0].ident.name == "Tensor":
        return False
    return None


def _enode(op: str, args: tuple[TypedExprDecl, ...], constants: dict[Any, str]) -> ENode:
    """The e-node of op `op` with call arguments `args`: tensors and Vecs of tensors are children."""
    children: list[Any] = []
    attrs: list[Any] = []
    for arg in args:
        kind, value = _tensors(arg.tp), _decode(arg, constants)
        if kind is None:
            attrs.append(value)
        else:
            children += [value] if kind else value
    return ENode(op, tuple(children), tuple(attrs))


def _analysis(egraph: EGraph) -> Analysis:
    """The frozen e-graph as e-classes of registry e-nodes and their shape_of/dtype_of (egglog thread)."""
    frozen = egraph.freeze()
    decls, decl = frozen.__egg_decls__, frozen.decl

    def expr(tp: Any, call: CallDecl) -> RuntimeExpr:
        return RuntimeExpr.__from_values__(decls, TypedExprDecl(tp, call))

    constants = {value: literal(expr(tp, calls[0]))
                 for value, (tp, calls) in decl.e_classes.items() if tp.ident.name in ("DType", "Layout")}
    classes: dict[Any, list[ENode]] = {}
    for value, (tp, calls) in decl.e_classes.items():
        for call in calls if tp.ident.name == "Tensor" else ():
            op = OP_OF.get(get_callable_fn(expr(tp, call)))
            if op is not None:  # (else a rule's helper, fusion.shared: not a tensor-language term)
                classes.setdefault(value, []).append(_enode(op, call.args, constants))
    facts: dict[str, dict[Any, Any]] = {"shape_of": {}, "dtype_of": {}}
    for call, result in decl.sets.items():
        table = facts.get(call.callable.ident.name)
        if table is not None:
            (arg,) = call.args
            table[arg.expr.value] = _decode(result, constants)
    return Analysis(classes, facts["shape_of"], facts["dtype_of"])


def disagreements(analysis: Analysis) -> dict[str, str]:
    """Per op, one e-node of it whose e-class lacks a shape or dtype, or whose shape or dtype is not
    what ops.infer gives it from its children's (e-nodes with an untyped child are skipped: that
    child's own e-class is reported)."""
    found: dict[str, str] = {}
    for cls, enodes in analysis.classes.items():
        have = (analysis.shapes.get(cls), analysis.dtypes.get(cls))
        for n in enodes:
            if None in have:
                found.setdefault(n.op, f"{n.op}{n.attrs}: e-class without {'shape_of' if have[0] is None else 'dtype_of'}")
            typed = [Typed(analysis.shapes.get(c), analysis.dtypes.get(c)) for c in n.children]
            if any(t.shape is None or t.dtype is None for t in typed):
                continue
            try:
                want = ops.infer(n.op, typed, n.attrs)
            except TracingError as e:
                found.setdefault(n.op, f"{n.op}{n.attrs} of {typed}: ill-typed ({e})")
                continue
            if None not in have and want != have:
                found.setdefault(n.op, f"{n.op}{n.attrs} of {typed}: e-class has {have}, the registry infers {want}")
    return found


def schedule(fastmath: bool) -> Any:
    """The schedule `@kernel` runs by default (with fast math or not)."""
    return Options(DEFAULT, fastmath, Target.host(), Limits()).schedule()


def arguments(outputs: list[Node]) -> list[Node]:
    """The leaves of a traced program: seeded alone, the shape rules must type every other term."""
    return [n for n in topological(outputs) if not n.inputs]


def saturated(fn: Any, *args: np.ndarray, fastmath: bool = False, seeded: Any = topological) -> Analysis:
    """The analysis of fn's e-graph after the optimizer's rewriting for arguments like `args`, the
    shapes and dtypes of `seeded(outputs)` seeded (the optimizer's choice: every traced value)."""
    names = [f"a{i}" for i in range(len(args))]
    outputs, _ = trace_function(fn, names, [spec_of(a, n) for a, n in zip(args, names, strict=True)])
    return rewritten(outputs, schedule(fastmath), _analysis, seeded=seeded)


def f64(*shape: int) -> np.ndarray:
    """A float64 argument of `shape` (only its shape and dtype matter here)."""
    return np.ones(shape)


_CAPTURED = np.linspace(0.0, 1.0, 5)  # made outside the kernel: a constant of the program


def _updated(x: np.ndarray) -> np.ndarray:
    """In-place updates (update_slice) of an array the program owns, and a captured NumPy array."""
    b = x * 2.0
    b[1:3, ::2] = x[:2, :3] + 1.0
    return b * _CAPTURED  # a captured array: the `array` op


# Programs that together build every op of the registry (test_every_op_is_covered checks it).
PROGRAMS = {
    "unary": (lambda x: -np.abs(np.square(np.reciprocal(np.sign(np.exp(np.log(np.sqrt(np.tanh(np.sin(np.cos(x)))))))))), f64(4, 5)),
    "binary, same shapes": (lambda x, y: (x + y) - (x * y) / (x // y) % (x ** y) + np.maximum(x, y) + np.minimum(x, y) + np.arctan2(y, x), f64(4, 5), f64(4, 5)),
    "math functions": (lambda x, y: sum(getattr(np, f)(x) for f in ("log1p", "expm1", "log2", "log10", "exp2", "sinh", "cosh", "arcsinh",
        "arccosh", "arctanh", "arcsin", "arccos", "arctan", "tan", "cbrt", "floor", "ceil", "trunc", "rint", "fabs", "deg2rad", "rad2deg"))
        + np.where(np.signbit(x) | np.isnan(y) | np.isinf(x) | np.isfinite(y), np.copysign(x, y), np.fmod(x, y))
        + np.heaviside(x, y) + np.hypot(x, y) + np.logaddexp(x, y) + np.logaddexp2(y, x) + sp.erf(x) + sp.erfc(y) + sp.gammaln(y)
        + sp.gammainc(x, y) + sp.gammaincc(y, x) + sp.gammaincinv(x, y) + sp.gammainccinv(y, x) + sp.gamma(x) + sp.psi(y)
        + sp.betainc(x, y, x) + sp.betaincc(y, x, y) + sp.betaincinv(x, y, x) + sp.betainccinv(y, x, y) + sp._ufuncs._beta_pdf(x, y, x) + sp.beta(x, y) + sp.betaln(y, x) + sp.binom(x, y) + sp.poch(x, y) + sp.zeta(x) + sp.zeta(x, y)
        + sp.owens_t(x, y)
        + sum(getattr(sp, f)(x) for f in ("exp1", "expi", "i0e", "i1", "i1e", "k0", "k0e", "k1", "k1e", "j0", "j1", "y0", "y1",
                                          "ellipk", "ellipkm1", "ellipe", "spence", "zetac", "dawsn", "erfi", "kolmogorov", "kolmogi"))
        + sp.agm(x, y) + sp.expn(x, y) + sp.ellipkinc(x, y) + sp.ellipeinc(x, y) + sp.elliprc(x, y) + sp.elliprd(x, y, x)
        + sp.elliprf(y, x, y) + sp.elliprg(x, y, y), f64(4, 5), f64(4, 5)),
    "integer orders": (lambda n, x: sp.eval_legendre(n, x) + sp.eval_chebyt(n, x) + sp.eval_chebyu(n, x)
        + sp.eval_genlaguerre(n, x, x) + sp.eval_gegenbauer(n, x, x) + sp.yn(n, x) + sp.kn(n, x) + sp.jv(n, x) + sp.ive(n, x) + sp.kve(n, x), np.ones((4, 5), np.int64), f64(4, 5)),
    "integer bitwise": (lambda i, j: ((i & j) | (i ^ ~j)) + (i << j) + (i >> j), np.ones((4, 5), np.int64), np.ones((4, 5), np.int64)),
    "binary, broadcast": (lambda x, y, z: (x + y) * (y - z) + np.maximum(x, z) / 3.0, f64(4, 1), f64(5), f64(3, 1, 1)),
    "powers": (lambda x, i: x ** 3 + x ** 2.0 + x ** 0.0 + x ** 1.0 + (i ** 5).astype(np.float64) + x / 4.0, f64(4, 5), np.ones((4, 5), np.int64)),
    "predicates": (lambda x, y: np.where(np.logical_xor(np.logical_and(x < y, x <= y), np.logical_or(x > y, np.logical_not(x >= y))), x, 0.0)
                   + np.where(np.logical_and(x == y, x != y), y, x), f64(4, 5), f64(4, 5)),
    "size 0, broadcast": (lambda x, y: (x * y).sum(axis=0) + np.where(x > 0, y, x).max(axis=1).sum(), f64(0, 5), f64(1, 5)),
    "where, broadcast": (lambda c, a, b: np.where(c > 0, a, b), f64(5), f64(4, 5), f64(4, 1)),
    "astype": (lambda x: x.astype(np.float32) * np.float32(2) + (x.astype(np.int32) - x.astype(np.int32)).astype(np.float32), f64(4, 5)),
    "bitcast": (lambda x: (x.view(np.int64) >> 1).view(np.float64) + x, f64(4, 5)),
    "reductions rank 3": (lambda x: sum(getattr(np, r)(x, axis=a).sum() for r in ("sum", "max", "min", "prod")
                                        for a in (0, 1, 2, (0, 1), (0, 2), (1, 2), None)), f64(2, 3, 4)),
    "index reductions": (lambda x: np.argmax(x, axis=1) + np.argmin(x) + np.argmax(x.reshape(2, 2, 5), axis=1).sum(), f64(4, 5)),
    "scans": (lambda x: np.cumsum(x * 2.0, axis=1) + np.cumprod(x, axis=0) + np.cumsum(x).reshape(4, 5)
              + np.maximum.accumulate(x, axis=1) - np.minimum.accumulate(x), f64(4, 5)),
    "sorts": (lambda x: np.sort(x * 2.0, axis=0) + np.argsort(x, axis=1) + np.median(x, axis=1, keepdims=True)
              + np.searchsorted(x[0], x, side="right"), f64(4, 5)),
    "linear algebra, i0": (lambda a, b: np.linalg.solve(a, b) + np.linalg.cholesky(a)[..., :2] + np.linalg.det(a)[:, None, None]
                           + np.i0(b), f64(2, 3, 3), f64(2, 3, 2)),
    "qr, eigh, svd": (lambda a, w: np.linalg.qr(a).R.sum() + np.linalg.qr(a, mode="complete").Q[:, :2, :2] + np.linalg.eigh(a[:, :2, :2]).eigenvectors
                      + np.linalg.svd(a).S[:, None, :2] + np.linalg.svdvals(w)[None, None, :2], f64(2, 4, 3), f64(3, 5)),
    "reductions rank 2 and 1, keepdims": (lambda x, v: x.sum(axis=1, keepdims=True) + x.max(axis=0) + v.prod() + x.min(), f64(4, 5), f64(5)),
    "rank 4": (lambda x, y: (np.broadcast_to(x, (2, 3, 4, 5)) * y).sum(axis=(0, 1, 2, 3)) + np.transpose(y, (3, 1, 2, 0)).max(axis=(1, 3)).sum(), f64(4, 5), f64(2, 1, 4, 5)),
    "matmuls": (lambda a, b, v, w: (a @ b).sum() + (a @ v).sum() + (w @ a).sum() + v @ v, f64(4, 5), f64(5, 6), f64(5), f64(4)),
    "batched matmul": (lambda a, b: (a @ b) * 2.0, f64(2, 3, 4), f64(2, 4, 5)),
    "einsum chain": (lambda a, b, c, v: np.einsum("ij,jk,kl,l->i", a, b, c, v), f64(3, 4), f64(4, 5), f64(5, 2), f64(2)),
    "large matmul (tiles)": (lambda a, b: np.tanh(a @ b.T), f64(300, 200), f64(400, 200)),
    "transposes": (lambda x, m: sum(np.transpose(x, p).sum(axis=0).sum() for p in ((1, 0, 2), (2, 1, 0), (1, 2, 0), (2, 0, 1), (0, 2, 1)))
                   + (m.T * 2.0).T.sum() + np.exp(m).T.sum(), f64(2, 3, 4), f64(4, 5)),
    "slices, diagonal, contractions": (lambda a, b: a[1:3, ::2].sum() + a[::-1, 0].sum() + np.diagonal(a).sum() + np.diagonal(a, 1).sum()
                                       + np.trace(a @ b.T) + np.diagonal(a @ b).sum() + (a * b).sum(axis=1).sum(), f64(5, 5), f64(5, 5)),
    "broadcast_to, reshape, concat": (lambda x, v: np.broadcast_to(v, (4, 5)).sum(axis=0) + x.reshape(20)[:5] + x.reshape(5, 4).sum(axis=1)
                                      + np.concatenate([x, x], axis=0).sum(axis=0) + np.concatenate([x, 2.0 * x], axis=1)[0, :5], f64(4, 5), f64(5)),
    "gathers": (lambda x, i, j: np.take(x, i, axis=1).sum(axis=0) + x[i % 4, :3].sum(axis=1) + np.take_along_axis(x, j, axis=1)[:, 0].sum(),
                f64(4, 5), np.ones(3, np.int64), np.ones((4, 2), np.int32)),
    "update_slice, array": (_updated, f64(4, 5)),
    "scatter_add, gcd, lcm": (lambda x, i: np.bincount(i % 3, weights=x, minlength=3) + np.gcd(i, i + 2)[:3] + np.lcm(i, 3)[:3],
                              f64(5), np.ones(5, np.int64)),
    "collapses": (lambda x, v: (x - x) + np.broadcast_to(v, (4, 5)).sum(axis=0) * 1.0 + np.broadcast_to(v, (3, 4, 5)).sum(axis=(0, 1)), f64(4, 5), f64(5)),
    "softmax rows": (lambda x: np.exp(x - x.max(axis=1, keepdims=True)) / np.exp(x - x.max(axis=1, keepdims=True)).sum(axis=1, keepdims=True), f64(64, 100)),
    "layer norm rows": (lambda x: (x - x.mean(axis=1, keepdims=True)) / np.sqrt(((x - x.mean(axis=1, keepdims=True)) ** 2).mean(axis=1, keepdims=True) + 1e-5), f64(64, 100)),
    "arrays made in the kernel": (lambda x: x + np.arange(5) * 0.5 + np.eye(4, 5, 1) + np.tril(x) + np.linspace(0.0, 1.0, 5), f64(4, 5)),
    "fast math": (lambda a, b, v, x, y: (a @ b) @ v + np.log(np.exp(x)) + np.exp(x) * np.exp(y) + x / y + np.sqrt(x) * np.sqrt(x), f64(5, 5), f64(5, 5), f64(5), f64(5), f64(5)),
}  # fmt: skip


@pytest.mark.parametrize("seeded", [topological, arguments], ids=["seeded", "leaves"])
@pytest.mark.parametrize("fastmath", [False, True], ids=["default", "fastmath"])
@pytest.mark.parametrize("name", list(PROGRAMS))
def test_shapes_agree_with_registry(name: str, fastmath: bool, seeded: Any) -> None:
    fn, *args = PROGRAMS[name]
    assert disagreements(saturated(fn, *args, fastmath=fastmath, seeded=seeded)) == {}


def test_every_op_is_covered() -> None:
    seen = set()
    for fn, *args in PROGRAMS.values():
        seen |= {n.op for enodes in saturated(fn, *args, fastmath=True).classes.values() for n in enodes}
    assert seen == set(ops.OPS)


@pytest.mark.slow  # (a drawn sweep: minutes on a loaded 2-core machine; .ci/run runs it after the default run)
@settings(max_examples=100, derandomize=True, database=None, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(programs(), st.booleans(), st.sampled_from([topological, arguments]))
def test_fuzzed_programs_shapes_agree_with_registry(program: Program, fastmath: bool, seeded: Any) -> None:
    args = [np.ones(shape, dtype) for shape, dtype in program.inputs]
    try:
        analysis = saturated(program.function(), *args, fastmath=fastmath, seeded=seeded)
    except UnsupportedError:  # NumPy takes it, the compiler does not (e.g. a 4-D matmul)
        assume(False)
    assert disagreements(analysis) == {}, program.source()
