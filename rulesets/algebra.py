"""Algebraic identities over the tensor term language.

`algebra` holds rewrites that are exact under IEEE-754 for every input (NaN, inf and signed
zeros included), so they always run. `algebra_fastmath` holds rewrites that are not exact
(they change NaN/inf results or rounding) and only run when a kernel opts into fast math.
Integer arithmetic wraps (it is exact modulo 2**bits), so some identities are exact for integer
dtypes and fast math only for floats: `x - x` = 0 (NaN - NaN and inf - inf are NaN), the sum of
a broadcast as one multiply (n additions round n times), and integer powers by repeated
squaring (more roundings than one pow).

egglog's f64 treats -0.0 and 0.0 as one value, so the term language spells negative zero as
`-Tensor.const(0.0, dt)` and folding never produces a zero (whose sign it could not keep).
"""

from __future__ import annotations

from collections.abc import Iterator
from itertools import combinations, permutations

from egglog import Vec, eq, f64, i64, ne, rewrite, ruleset

from egglog_tensor.ops import BINARY, UNARY
from egglog_tensor.ir import CONSTRUCTORS, DType, Tensor, dtype_of, exp, log, reciprocal, shape_of, sqrt, square
from egglog_tensor.rulesets.shapes import MAX_RANK, vec

algebra = ruleset(name="algebra")
algebra_fastmath = ruleset(name="algebra_fastmath")

INTS = (DType.int32, DType.int64)
FLOATS = (DType.float32, DType.float64)
MAX_EXPONENT = 64.0  # integer powers up to this are expanded (at most log2 of it rewrite steps)


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
def _powers(x: Tensor, dt: DType, s: Vec[i64]) -> object:
    """square(x) is x*x (exactly, one rounding). x**0 = 1 for every x (NaN too, as in C and NumPy)
    and x**1 = x: pow returns exactly these (within its error bound of under one ulp, x and 1 are
    the only candidates; only the sign of a NaN may differ, which IEEE 754 leaves unspecified). x**2 = x*x for integers (both wrap the same). The tracer already turns
    x**2, x**0.5 and x**-1 with a constant exponent into square, sqrt and 1/x (NumPy's semantics);
    the power terms these rules see come from integer exponents and the fast-math power rules."""
    yield rewrite(square(x)).to(x * x)
    yield rewrite(x * x).to(square(x))
    yield rewrite(x ** Tensor.const(0.0, dt)).to(Tensor.const(1.0, dt).broadcast_to(s), eq(shape_of(x)).to(s))
    yield rewrite(x ** Tensor.const(1.0, dt)).to(x)
    for it in INTS:
        yield rewrite(x ** Tensor.const(2.0, it)).to(square(x))


def _power(x: Tensor, e: f64, dt: DType) -> Tensor:
    """x ** e for a constant exponent e of dtype dt."""
    return x ** Tensor.const(e, dt)


def _squarings(x: Tensor, a: f64, dt: DType) -> Iterator[object]:
    """x**a for an integer 3 <= a <= MAX_EXPONENT by squaring: x**2k = square(x**k), x**(2k+1) = square(x**k)*x."""
    bounded = (a >= f64(3.0), a <= f64(MAX_EXPONENT))
    half = _power(x, a / f64(2.0), dt)
    yield rewrite(_power(x, a, dt)).to(square(half), *bounded, eq(a % f64(2.0)).to(f64(0.0)))
    half = _power(x, (a - f64(1.0)) / f64(2.0), dt)
    yield rewrite(_power(x, a, dt)).to(square(half) * x, *bounded, eq(a % f64(2.0)).to(f64(1.0)))


@algebra.register
def _integer_powers(x: Tensor, a: f64) -> object:
    """Integer x**n by squaring: exact, multiplication wraps modulo 2**bits in any order (and the
    lowering's pow loops over all 32/64 exponent bits). Negative exponents stay (0 here, NumPy raises)."""
    for dt in INTS:
        yield from _squarings(x, a, dt)


def _collapses(x: Tensor, s: Vec[i64], big: Vec[i64], dt: DType) -> Iterator[object]:
    """x - x = zeros of x's shape and dtype dt; sum(broadcast_to(x, S), axes) = x * n when `axes`
    are exactly the broadcast's new leading axes plus size-1 axes of x (n = the product of their
    extents, at least 1), reshaped without x's summed unit axes."""
    typed = eq(dtype_of(x)).to(dt)
    yield rewrite(x - x).to(Tensor.const(0.0, dt).broadcast_to(s), typed, eq(shape_of(x)).to(s))
    for rank in range(1, MAX_RANK + 1):
        for r in range(rank + 1):
            lead = rank - r
            for k in range(r + 1):
                for units in combinations(range(r), k):
                    axes = (*range(lead), *(lead + j for j in units))
                    if not axes:
                        continue
                    n = big[axes[0]]
                    for i in axes[1:]:
                        n = n * big[i]
                    conds = [eq(shape_of(x)).to(s), eq(s.length()).to(i64(r)), eq(big.length()).to(i64(rank)), n >= i64(1)]
                    conds += [eq(s[j]).to(i64(1)) if j in units else eq(s[j]).to(big[lead + j]) for j in range(r)]
                    scaled = x * Tensor.const(f64.from_i64(n), dt)
                    result = scaled.reshape(vec(*(s[j] for j in range(r) if j not in units))) if units else scaled
                    yield rewrite(x.broadcast_to(big).sum(_perm(axes))).to(result, typed, *conds)


@algebra.register
def _integer_collapses(x: Tensor, s: Vec[i64], big: Vec[i64], dt: DType) -> object:
    """Integer x - x = 0 and the sum of a broadcast as one multiply: exact, n additions of
    x wrap to n*x. A cast of a broadcast is the broadcast of the cast (exact for every dtype, fewer
    casts), so int32 sums, which NumPy accumulates in int64, meet the sum rule."""
    yield rewrite(x.broadcast_to(big).astype(dt)).to(x.astype(dt).broadcast_to(big))
    for it in INTS:
        yield from _collapses(x, s, big, it)


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


@algebra_fastmath.register
def _float_collapses(x: Tensor, s: Vec[i64], big: Vec[i64], dt: DType) -> object:
    """Float x - x = 0 (NaN - NaN and inf - inf are NaN) and the sum of a broadcast as x*n (n
    roundings become one; for an inf or NaN x both agree): fast math only. These match any dtype;
    for integers they repeat what `algebra` already did."""
    yield from _collapses(x, s, big, dt)


@algebra_fastmath.register
def _float_powers(x: Tensor, a: f64, b: f64) -> object:
    """Float x**n for integer n by squaring (each squaring doubles the relative error: up to ~|n|
    ulp instead of pow's one, and 1/x**n overflows or underflows where pow does not); x**2 = x*x
    and x**-1 = 1/x (their correctly rounded values, which libm's pow can miss by an ulp); and
    x**a / x**b = x**(a-b) for integer a, b, which needs x != 0 and no overflow (x**6 / x**4 is x*x)."""
    whole = (eq(a % f64(1.0)).to(f64(0.0)), eq(b % f64(1.0)).to(f64(0.0)))
    for dt in FLOATS:
        yield from _squarings(x, a, dt)
        yield rewrite(_power(x, a, dt)).to(
            reciprocal(_power(x, -a, dt)), a <= f64(-2.0), a >= f64(-MAX_EXPONENT), whole[0]
        )
        yield rewrite(_power(x, f64(2.0), dt)).to(square(x))
        yield rewrite(_power(x, f64(-1.0), dt)).to(reciprocal(x))
        yield rewrite(_power(x, a, dt) / _power(x, b, dt)).to(_power(x, a - b, dt), *whole)
        yield rewrite(_power(x, a, dt) / square(x)).to(_power(x, a - f64(2.0), dt), whole[0])
        yield rewrite(_power(x, a, dt) / x).to(_power(x, a - f64(1.0), dt), whole[0])
