"""Algebraic identities over the tensor term language.

`algebra` holds rewrites that are exact under IEEE-754 for every input (NaN, inf and signed
zeros included), so they always run. `algebra_fastmath` holds rewrites that are not exact
(they change NaN/inf results or rounding) and only run when a kernel opts into fast math.

egglog's f64 treats -0.0 and 0.0 as one value, so the term language spells negative zero as
`-Tensor.const(0.0, dt)` and folding never produces a zero (whose sign it could not keep).
"""

from __future__ import annotations

from itertools import permutations

from egglog import Vec, eq, f64, i64, ne, rewrite, ruleset

from egglog_tensor.graph import BINARY, UNARY
from egglog_tensor.ir import CONSTRUCTORS, DType, Tensor, exp, log, reciprocal, shape_of, sqrt, square

algebra = ruleset(name="algebra")
algebra_fastmath = ruleset(name="algebra_fastmath")


def _perm(p: tuple[int, ...]) -> Vec[i64]:
    return Vec[i64](*(i64(v) for v in p))


@algebra.register
def _transposes(x: Tensor) -> object:
    """Transpose of a transpose composes (ranks 2 and 3); an identity permutation disappears."""
    for rank in (2, 3):
        identity = tuple(range(rank))
        perms = [p for p in permutations(range(rank)) if p != identity]
        for p in perms:
            for q in perms:
                composed = tuple(p[i] for i in q)
                yield rewrite(x.transpose(_perm(p)).transpose(_perm(q))).to(x.transpose(_perm(composed)))
        yield rewrite(x.transpose(_perm(identity))).to(x)


@algebra.register
def _transpose_sinks(a: Tensor, b: Tensor, s: Vec[i64], v: f64, dt: DType) -> object:
    """A 2-D transpose moves below elementwise ops to the leaves (where it is a free indexing map),
    and (A@B).T = B.T @ A.T. Exact: every element is computed by the same operations."""
    t = _perm((1, 0))
    for op in UNARY:
        yield rewrite(CONSTRUCTORS[op](a).transpose(t)).to(CONSTRUCTORS[op](a.transpose(t)))
    for op in BINARY:
        f = CONSTRUCTORS[op]
        yield rewrite(f(a, b).transpose(t)).to(
            f(a.transpose(t), b.transpose(t)), eq(shape_of(a)).to(s), eq(shape_of(b)).to(s)
        )
        c = Tensor.const(v, dt)
        yield rewrite(f(a, c).transpose(t)).to(f(a.transpose(t), c))
        yield rewrite(f(c, a).transpose(t)).to(f(c, a.transpose(t)))
    yield rewrite((a @ b).transpose(t)).to(b.transpose(t) @ a.transpose(t))


@algebra.register
def _contractions(a: Tensor, b: Tensor, s: Vec[i64], u: Vec[i64]) -> object:
    """Reductions of products are contractions: sum(A*x, axis=1) = A@x, sum(a*b) of vectors = a@b,
    trace(A@B.T) = sum(A*B), diagonal(A@B) = sum(A*B.T, axis=1) (n dot products, not n^2).

    Each side sums the same products; only the summation order may differ, which NumPy does not
    specify either (it sums pairwise, BLAS in blocks).
    """
    t = _perm((1, 0))
    two, one = i64(2), i64(1)
    for prod in (a * b, b * a):
        yield rewrite(prod.sum(_perm((1,)))).to(
            a @ b, eq(shape_of(a)).to(s), eq(s.length()).to(two), eq(shape_of(b)).to(u), eq(u.length()).to(one)
        )
        yield rewrite(prod.sum(_perm((0,)))).to(
            a @ b, eq(shape_of(a)).to(s), eq(s.length()).to(one), eq(shape_of(b)).to(s)
        )
    yield rewrite((a @ b.transpose(t)).diagonal(i64(0), i64(0), i64(1)).sum(_perm((0,)))).to(
        (a * b).sum(_perm((0, 1))), eq(shape_of(a)).to(s), eq(shape_of(b)).to(s)
    )
    yield rewrite((a @ b).diagonal(i64(0), i64(0), i64(1))).to(
        (a * b.transpose(t)).sum(_perm((1,))),
        eq(shape_of(a)).to(s), eq(shape_of(b)).to(u), eq(s.length()).to(two), eq(u.length()).to(two),
        eq(s[0]).to(u[1]),
    )


@algebra.register
def _powers(x: Tensor) -> object:
    """square(x) is x*x (exactly, one rounding); 1/x is reciprocal(x)."""
    yield rewrite(square(x)).to(x * x)
    yield rewrite(x * x).to(square(x))


@algebra.register
def _identities(x: Tensor, dt: DType) -> object:
    """Exact neutral elements: x*1, 1*x, x/1, x+(-0.0), x-0.0, --x. (x+0.0 is not exact: -0.0+0.0 = +0.0.)

    x*1 -> x keeps NaN and signed zeros (it does not canonicalize signalling NaNs, which NumPy ignores too).
    """
    one = Tensor.const(1.0, dt)
    yield rewrite(x * one).to(x)
    yield rewrite(one * x).to(x)
    yield rewrite(x / one).to(x)
    yield rewrite(x + -Tensor.const(0.0, dt)).to(x)
    yield rewrite(-Tensor.const(0.0, dt) + x).to(x)
    yield rewrite(x - Tensor.const(0.0, dt)).to(x)
    yield rewrite(-(-x)).to(x)


@algebra.register
def _exact_division(x: Tensor, dt: DType) -> object:
    """x / c = x * (1/c) exactly when c is a power of two (1/c is exact; both round the same real)."""
    for k in range(-16, 17):
        for c in (2.0**k, -(2.0**k)):
            yield rewrite(x / Tensor.const(c, dt)).to(x * Tensor.const(1.0 / c, dt))


@algebra.register
def _fold_float64(a: f64, b: f64) -> object:
    """Constant folding in float64, where egglog's f64 arithmetic is the IEEE operation itself.

    Only nonzero results fold: a zero result could be -0.0, which an f64 literal cannot hold.
    """
    dt = DType.float64
    zero = f64(0.0)
    yield rewrite(Tensor.const(a, dt) + Tensor.const(b, dt)).to(Tensor.const(a + b, dt), ne(a + b).to(zero))
    yield rewrite(Tensor.const(a, dt) - Tensor.const(b, dt)).to(Tensor.const(a - b, dt), ne(a - b).to(zero))
    yield rewrite(Tensor.const(a, dt) * Tensor.const(b, dt)).to(Tensor.const(a * b, dt), ne(a * b).to(zero))
    yield rewrite(-Tensor.const(a, dt)).to(Tensor.const(-a, dt), ne(a).to(zero))


@algebra_fastmath.register
def _fastmath(x: Tensor, dt: DType, a: f64, b: f64) -> object:
    """Reassociating constant factors and dividing by a reciprocal change rounding: fast math only."""
    yield rewrite((x * Tensor.const(a, dt)) * Tensor.const(b, dt)).to(x * Tensor.const(a * b, dt), ne(a * b).to(f64(0.0)))
    yield rewrite(x / Tensor.const(a, dt)).to(x * Tensor.const(f64(1.0) / a, dt), ne(a).to(f64(0.0)))


@algebra_fastmath.register
def _reassociation(a: Tensor, b: Tensor, c: Tensor, s: Vec[i64]) -> object:
    """Matrix-chain reordering and distributivity: same mathematics, different rounding.

    The cost model picks the cheaper association by shape: (A@B)@x -> A@(B@x) for a vector x.
    """
    yield rewrite((a @ b) @ c).to(a @ (b @ c))
    yield rewrite(a @ (b @ c)).to((a @ b) @ c)
    yield rewrite(a @ b + a @ c).to(a @ (b + c), eq(shape_of(b)).to(s), eq(shape_of(c)).to(s))
    yield rewrite(a @ c + b @ c).to((a + b) @ c, eq(shape_of(a)).to(s), eq(shape_of(b)).to(s))
    yield rewrite(a * b + a * c).to(a * (b + c), eq(shape_of(b)).to(s), eq(shape_of(c)).to(s))


@algebra_fastmath.register
def _domain_restricted(x: Tensor, y: Tensor) -> object:
    """Identities that fail on part of the domain: log(exp(x)) = x (exp overflows), exp(log(x)) = x
    (only for x > 0), exp(a)*exp(b) = exp(a+b) (overflow/rounding), x**-1 handled as 1/x."""
    yield rewrite(log(exp(x))).to(x)
    yield rewrite(exp(log(x))).to(x)
    yield rewrite(exp(x) * exp(y)).to(exp(x + y))
    yield rewrite(x / y).to(x * reciprocal(y))
    yield rewrite(sqrt(x) * sqrt(x)).to(x)
