"""Algebraic identities over the tensor term language.

`algebra` holds rewrites that are exact under IEEE-754 for every input (NaN, inf and signed
zeros included), so they always run. `algebra_fastmath` holds rewrites that are not exact
(they change NaN/inf results or rounding) and only run when a kernel opts into fast math: each of
its groups names the LLVM fast-math flags it needs (`needs=`), and runs when `fastmath=` allows them.
Integer arithmetic wraps (it is exact modulo 2**bits, for every width, signed or not: NumPy's integer
loops and the lowering both wrap), so some identities are exact for every integer dtype (INTS) and
fast math only for floats: `x - x` = 0 (NaN - NaN and inf - inf are NaN), the sum of
a broadcast as one multiply (n additions round n times), and integer powers by repeated
squaring (more roundings than one pow).

egglog's f64 treats -0.0 and 0.0 as one value, so the term language spells negative zero as
`-Tensor.const(0.0, dt)` and folding never produces a zero (whose sign it could not keep).
"""

from __future__ import annotations

from collections.abc import Iterator
from itertools import combinations

from egglog import Vec, eq, f64, i64, ne, rewrite, ruleset

from egglog_tensor.ops import BINARY, UNARY
from egglog_tensor.ir import CONSTRUCTORS, DType, Tensor, dtype_of, exp, log, reciprocal, shape_of, sqrt, square
from egglog_tensor.rulesets.groups import group
from egglog_tensor.rulesets.shapes import MAX_RANK, vec

algebra = ruleset(name="algebra")
algebra_fastmath = ruleset(name="algebra_fastmath")

INTS = (DType.int32, DType.int64, DType.int8, DType.int16, DType.uint8, DType.uint16, DType.uint32, DType.uint64)
FLOATS = (DType.float32, DType.float64)
MAX_EXPONENT = 64.0  # integer powers up to this are expanded (at most log2 of it rewrite steps)


def _perm(p: tuple[int, ...]) -> Vec[i64]:
    return Vec[i64](*(i64(v) for v in p))


@group("transpose", algebra)
def _transposes(x: Tensor, p: Vec[i64], q: Vec[i64]) -> object:
    """A transpose of a transpose composes, and an identity permutation disappears (ranks 2 and 3)."""
    for rank in (2, 3):
        composed = Vec[i64](*(p[q[i]] for i in range(rank)))
        same_rank = (eq(p.length()).to(i64(rank)), eq(q.length()).to(i64(rank)))
        yield rewrite(x.transpose(p).transpose(q)).to(x.transpose(composed), *same_rank)  # (x^T_p)^T_q = x^T_{p∘q}, (p∘q)[i] = p[q[i]]
        yield rewrite(x.transpose(_perm(tuple(range(rank))))).to(x)  # x^T_id = x


@group("transpose-sinking", algebra)
def _transpose_sinks(a: Tensor, b: Tensor, s: Vec[i64], v: f64, dt: DType) -> object:
    """A 2-D transpose moves below elementwise ops to the leaves (where it is a free indexing map),
    and (A@B).T = B.T @ A.T. Exact: every element is computed by the same operations."""
    t = _perm((1, 0))
    for op in UNARY:
        yield rewrite(CONSTRUCTORS[op](a).transpose(t)).to(CONSTRUCTORS[op](a.transpose(t)))  # f(a)^T = f(a^T)
    for op in BINARY:
        f = CONSTRUCTORS[op]
        yield rewrite(f(a, b).transpose(t)).to(  # f(a, b)^T = f(a^T, b^T), a and b of one shape
            f(a.transpose(t), b.transpose(t)), eq(shape_of(a)).to(s), eq(shape_of(b)).to(s)
        )
        c = Tensor.const(v, dt)
        yield rewrite(f(a, c).transpose(t)).to(f(a.transpose(t), c))  # f(a, c)^T = f(a^T, c)
        yield rewrite(f(c, a).transpose(t)).to(f(c, a.transpose(t)))  # f(c, a)^T = f(c, a^T)
    yield rewrite((a @ b).transpose(t)).to(b.transpose(t) @ a.transpose(t))  # (A@B)^T = B^T @ A^T


@group("contraction", algebra)
def _contractions(a: Tensor, b: Tensor, s: Vec[i64], u: Vec[i64]) -> object:
    """Reductions of products are contractions: sum(A*x, axis=1) = A@x, sum(a*b) of vectors = a@b,
    trace(A@B.T) = sum(A*B), diagonal(A@B) = sum(A*B.T, axis=1) (n dot products, not n^2).

    Each side sums the same products; only the summation order may differ, which NumPy does not
    specify either (it sums pairwise, BLAS in blocks).
    """
    t = _perm((1, 0))
    two, one = i64(2), i64(1)
    for prod in (a * b, b * a):
        yield rewrite(prod.sum(_perm((1,)))).to(  # sum_j A[i,j] x[j] = (A@x)[i]
            a @ b, eq(shape_of(a)).to(s), eq(s.length()).to(two), eq(shape_of(b)).to(u), eq(u.length()).to(one)
        )
        yield rewrite(prod.sum(_perm((0,)))).to(  # sum_i a[i] b[i] = a@b
            a @ b, eq(shape_of(a)).to(s), eq(s.length()).to(one), eq(shape_of(b)).to(s)
        )
    yield rewrite((a @ b.transpose(t)).diagonal(i64(0), i64(0), i64(1)).sum(_perm((0,)))).to(  # tr(A B^T) = sum(A*B)
        (a * b).sum(_perm((0, 1))), eq(shape_of(a)).to(s), eq(shape_of(b)).to(s)
    )
    yield rewrite((a @ b).diagonal(i64(0), i64(0), i64(1))).to(  # diag(A@B)[i] = sum_j A[i,j] B^T[i,j]
        (a * b.transpose(t)).sum(_perm((1,))),
        eq(shape_of(a)).to(s), eq(shape_of(b)).to(u), eq(s.length()).to(two), eq(u.length()).to(two),
        eq(s[0]).to(u[1]),
    )


@group("power", algebra)
def _powers(x: Tensor, dt: DType, s: Vec[i64]) -> object:
    """square(x) is x*x (exactly, one rounding). x**0 = 1 for every x (NaN too, as in C and NumPy)
    and x**1 = x: pow returns exactly these (within its error bound of under one ulp, x and 1 are
    the only candidates; only the sign of a NaN may differ, which IEEE 754 leaves unspecified). x**2 = x*x for integers (both wrap the same). The tracer already turns
    x**2, x**0.5 and x**-1 with a constant exponent into square, sqrt and 1/x (NumPy's semantics);
    the power terms these rules see come from integer exponents and the fast-math power rules."""
    yield rewrite(square(x)).to(x * x)  # square(x) = x*x
    yield rewrite(x * x).to(square(x))  # x*x = square(x)
    yield rewrite(x ** Tensor.const(0.0, dt)).to(Tensor.const(1.0, dt).broadcast_to(s), eq(shape_of(x)).to(s))  # x^0 = 1
    yield rewrite(x ** Tensor.const(1.0, dt)).to(x)  # x^1 = x
    for it in INTS:
        yield rewrite(x ** Tensor.const(2.0, it)).to(square(x))  # x^2 = square(x), integer x


def _power(x: Tensor, e: f64, dt: DType) -> Tensor:
    """x ** e for a constant exponent e of dtype dt."""
    return x ** Tensor.const(e, dt)


def _squarings(x: Tensor, a: f64, dt: DType) -> Iterator[object]:
    """x**a for an integer 3 <= a <= MAX_EXPONENT by squaring: x**2k = square(x**k), x**(2k+1) = square(x**k)*x."""
    bounded = (a >= f64(3.0), a <= f64(MAX_EXPONENT))
    half = _power(x, a / f64(2.0), dt)
    yield rewrite(_power(x, a, dt)).to(square(half), *bounded, eq(a % f64(2.0)).to(f64(0.0)))  # x^2k = (x^k)^2
    half = _power(x, (a - f64(1.0)) / f64(2.0), dt)
    yield rewrite(_power(x, a, dt)).to(square(half) * x, *bounded, eq(a % f64(2.0)).to(f64(1.0)))  # x^(2k+1) = (x^k)^2 x


@group("integer-power", algebra)
def _integer_powers(x: Tensor, a: f64) -> object:
    """Integer x**n by squaring: exact, multiplication wraps modulo 2**bits in any order (and the
    lowering's pow loops over all 32/64 exponent bits). Negative exponents stay (0 here, NumPy raises)."""
    for dt in INTS:
        yield from _squarings(x, a, dt)  # x^2k = (x^k)^2, x^(2k+1) = (x^k)^2 x


def _self_difference(x: Tensor, s: Vec[i64], dt: DType) -> object:
    """x - x = zeros of x's shape and dtype dt."""
    typed = eq(dtype_of(x)).to(dt)
    return rewrite(x - x).to(Tensor.const(0.0, dt).broadcast_to(s), typed, eq(shape_of(x)).to(s))  # x - x = 0


def _broadcast_sums(x: Tensor, s: Vec[i64], big: Vec[i64], dt: DType) -> Iterator[object]:
    """sum(broadcast_to(x, S), axes) = x * n for x of dtype dt when `axes` are exactly the broadcast's
    new leading axes plus size-1 axes of x (n = the product of their extents, at least 1), reshaped
    without x's summed unit axes."""
    typed = eq(dtype_of(x)).to(dt)
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
                    # sum(broadcast_to(x, S), axes) = x * n, n = prod(S[axes]) (axes: new or size-1 in x)
                    yield rewrite(x.broadcast_to(big).sum(_perm(axes))).to(result, typed, *conds)


@group("integer-collapse", algebra)
def _integer_collapses(x: Tensor, s: Vec[i64], big: Vec[i64], dt: DType) -> object:
    """Integer x - x = 0 and the sum of a broadcast as one multiply: exact, n additions of
    x wrap to n*x. A cast of a broadcast is the broadcast of the cast (exact for every dtype, fewer
    casts), so int32 sums, which NumPy accumulates in int64, meet the sum rule."""
    yield rewrite(x.broadcast_to(big).astype(dt)).to(x.astype(dt).broadcast_to(big))  # cast(bcast(x)) = bcast(cast(x))
    for it in INTS:
        yield _self_difference(x, s, it)  # x - x = 0
        yield from _broadcast_sums(x, s, big, it)  # sum(broadcast_to(x, S), axes) = x * n


@group("identity", algebra)
def _identities(x: Tensor, dt: DType) -> object:
    """Exact neutral elements: x*1, 1*x, x/1, x+(-0.0), x-0.0, --x. (x+0.0 is not exact: -0.0+0.0 = +0.0.)

    x*1 -> x keeps NaN and signed zeros (it does not canonicalize signalling NaNs, which NumPy ignores too).
    """
    one = Tensor.const(1.0, dt)
    yield rewrite(x * one).to(x)  # x*1 = x
    yield rewrite(one * x).to(x)  # 1*x = x
    yield rewrite(x / one).to(x)  # x/1 = x
    yield rewrite(x + -Tensor.const(0.0, dt)).to(x)  # x + (-0) = x
    yield rewrite(-Tensor.const(0.0, dt) + x).to(x)  # (-0) + x = x
    yield rewrite(x - Tensor.const(0.0, dt)).to(x)  # x - 0 = x
    yield rewrite(-(-x)).to(x)  # --x = x


@group("exact-division", algebra)
def _exact_division(x: Tensor, c: f64, dt: DType) -> object:
    """x / c = x * (1/c) exactly when c = ±2^k, |k| <= 16 (1/c is exact; both round the same real)."""
    scaled = abs(c) * f64(2.0**16)  # an integer from 1 to 2^32 when |c| = 2^k: a power of two n
    n = scaled.to_i64()
    power_of_two = (abs(c) >= f64(2.0**-16), abs(c) <= f64(2.0**16), eq(f64.from_i64(n)).to(scaled),
                    eq(n & (n - i64(1))).to(i64(0)))
    yield rewrite(x / Tensor.const(c, dt)).to(x * Tensor.const(f64(1.0) / c, dt), *power_of_two)  # x / 2^k = x * 2^-k


@group("constant-folding", algebra)
def _fold_float64(a: f64, b: f64) -> object:
    """Constant folding in float64, where egglog's f64 arithmetic is the IEEE operation itself.

    Only nonzero results fold: a zero result could be -0.0, which an f64 literal cannot hold.
    """
    dt = DType.float64
    zero = f64(0.0)
    yield rewrite(Tensor.const(a, dt) + Tensor.const(b, dt)).to(Tensor.const(a + b, dt), ne(a + b).to(zero))  # a + b = fl(a+b)
    yield rewrite(Tensor.const(a, dt) - Tensor.const(b, dt)).to(Tensor.const(a - b, dt), ne(a - b).to(zero))  # a - b = fl(a-b)
    yield rewrite(Tensor.const(a, dt) * Tensor.const(b, dt)).to(Tensor.const(a * b, dt), ne(a * b).to(zero))  # a * b = fl(a*b)
    yield rewrite(-Tensor.const(a, dt)).to(Tensor.const(-a, dt), ne(a).to(zero))  # -(a) = (-a)


@group("constant-reassociation", algebra_fastmath, needs={"reassoc"})
def _fastmath(x: Tensor, dt: DType, a: f64, b: f64) -> object:
    """Reassociating constant factors changes rounding: fast math (reassoc) only."""
    yield rewrite((x * Tensor.const(a, dt)) * Tensor.const(b, dt)).to(  # (x*a)*b = x*(a*b)
        x * Tensor.const(a * b, dt), ne(a * b).to(f64(0.0))
    )


@group("reciprocal", algebra_fastmath, needs={"arcp"})
def _reciprocals(x: Tensor, y: Tensor, dt: DType, a: f64) -> object:
    """A division as a multiply by the reciprocal (two roundings instead of one): fast math (arcp) only."""
    yield rewrite(x / Tensor.const(a, dt)).to(x * Tensor.const(f64(1.0) / a, dt), ne(a).to(f64(0.0)))  # x/a = x*(1/a)
    yield rewrite(x / y).to(x * reciprocal(y))  # x/y = x * (1/y)


@group("reassociation", algebra_fastmath, needs={"reassoc"})
def _reassociation(a: Tensor, b: Tensor, c: Tensor, s: Vec[i64], sa: Vec[i64], sc: Vec[i64]) -> object:
    """Matrix-chain reordering and distributivity: same mathematics, different rounding.

    The cost model picks the cheaper association by shape: (A@B)@x -> A@(B@x) for a vector x. A chain
    reassociates when its middle factor is a matrix, or when all three are matrices or stacks of them: with
    a vector B, A@B and B@C contract different axes (a (m,k) @ (k,) @ (m,p) chain has no B@C); with a
    stack B and a vector C, B@C drops C's axis and A@(B@C) multiplies A by B's stack of rows.
    """
    matrix_b = (eq(shape_of(b)).to(s), eq(s.length()).to(i64(2)))
    stacks = (eq(shape_of(a)).to(sa), eq(shape_of(b)).to(s), eq(shape_of(c)).to(sc),
              sa.length() >= i64(2), s.length() >= i64(3), sc.length() >= i64(2))
    for conds in (matrix_b, stacks):
        yield rewrite((a @ b) @ c).to(a @ (b @ c), *conds)  # (A@B)@C = A@(B@C)
        yield rewrite(a @ (b @ c)).to((a @ b) @ c, *conds)  # A@(B@C) = (A@B)@C
    yield rewrite(a @ b + a @ c).to(a @ (b + c), eq(shape_of(b)).to(s), eq(shape_of(c)).to(s))  # A@B + A@C = A@(B+C)
    yield rewrite(a @ c + b @ c).to((a + b) @ c, eq(shape_of(a)).to(s), eq(shape_of(b)).to(s))  # A@C + B@C = (A+B)@C
    yield rewrite(a * b + a * c).to(a * (b + c), eq(shape_of(b)).to(s), eq(shape_of(c)).to(s))  # ab + ac = a(b+c)


@group("einsum-order", algebra)
def _einsum_order(a: Tensor, b: Tensor, c: Tensor) -> object:
    """The products of a 3+-operand einsum reassociate without fast math: NumPy leaves einsum's
    contraction order unspecified, so every order is its result (tracing/einsum.py traces a chain
    left to right; the cost model picks the cheapest order). Each is also a plain `@`, so the
    matmul rules (tiling, transposes, epilogues) apply to it."""
    yield rewrite(a.einsum_matmul(b)).to(a @ b)  # the product itself
    yield rewrite(a.einsum_matmul(b).einsum_matmul(c)).to(a.einsum_matmul(b.einsum_matmul(c)))  # (AB)C = A(BC)
    yield rewrite(a.einsum_matmul(b.einsum_matmul(c))).to(a.einsum_matmul(b).einsum_matmul(c))  # A(BC) = (AB)C


@group("domain-restricted", algebra_fastmath, needs={"afn", "nnan", "ninf"})
def _domain_restricted(x: Tensor, y: Tensor) -> object:
    """Identities of math functions that fail on part of the domain: log(exp(x)) = x (exp overflows
    to inf), exp(log(x)) = x (NaN for x < 0), exp(a)*exp(b) = exp(a+b) (inf*0, rounding)."""
    yield rewrite(log(exp(x))).to(x)  # log(e^x) = x
    yield rewrite(exp(log(x))).to(x)  # e^log(x) = x
    yield rewrite(exp(x) * exp(y)).to(exp(x + y))  # e^x e^y = e^(x+y)


@group("square-root", algebra_fastmath, needs={"afn", "nnan"})
def _square_roots(x: Tensor) -> object:
    """sqrt(x)^2 = x: NaN for x < 0, and off by the square root's rounding."""
    yield rewrite(sqrt(x) * sqrt(x)).to(x)  # sqrt(x) sqrt(x) = x


@group("float-collapse", algebra_fastmath, needs={"nnan", "ninf"})
def _float_collapses(x: Tensor, s: Vec[i64], dt: DType) -> object:
    """Float x - x = 0 (NaN - NaN and inf - inf are NaN; for finite x the difference is +0.0 exactly):
    fast math only. It matches any dtype; for integers it repeats what `algebra` already did."""
    yield _self_difference(x, s, dt)  # x - x = 0


@group("zero-product", algebra_fastmath, needs={"nnan", "ninf", "nsz"})
def _zero_products(x: Tensor, s: Vec[i64], dt: DType) -> object:
    """Float x*0 = 0*x = 0 (NaN for an inf or NaN x, -0.0 for a negative x)."""
    zero = Tensor.const(0.0, dt)
    for product in (x * zero, zero * x):
        yield rewrite(product).to(zero.broadcast_to(s), eq(dtype_of(x)).to(dt), eq(shape_of(x)).to(s))  # x*0 = 0*x = 0


@group("broadcast-sum", algebra_fastmath, needs={"reassoc"})
def _float_broadcast_sums(x: Tensor, s: Vec[i64], big: Vec[i64], dt: DType) -> object:
    """Float sum of a broadcast as x*n: n roundings become one (for an inf or NaN x both agree)."""
    yield from _broadcast_sums(x, s, big, dt)  # sum(broadcast_to(x, S), axes) = x * n


@group("float-power", algebra_fastmath, needs={"afn"})
def _float_powers(x: Tensor, a: f64) -> object:
    """Float x**n for integer n by squaring (each squaring doubles the relative error: up to ~|n|
    ulp instead of pow's one, and 1/x**n overflows or underflows where pow does not); x**2 = x*x
    and x**-1 = 1/x (their correctly rounded values, which libm's pow can miss by an ulp)."""
    for dt in FLOATS:
        yield from _squarings(x, a, dt)  # x^2k = (x^k)^2, x^(2k+1) = (x^k)^2 x
        yield rewrite(_power(x, a, dt)).to(  # x^-n = 1 / x^n
            reciprocal(_power(x, -a, dt)), a <= f64(-2.0), a >= f64(-MAX_EXPONENT), eq(a % f64(1.0)).to(f64(0.0))
        )
        yield rewrite(_power(x, f64(2.0), dt)).to(square(x))  # x^2 = square(x)
        yield rewrite(_power(x, f64(-1.0), dt)).to(reciprocal(x))  # x^-1 = 1/x


@group("power-quotient", algebra_fastmath, needs={"afn", "nnan", "ninf"})
def _power_quotients(x: Tensor, a: f64, b: f64) -> object:
    """x**a / x**b = x**(a-b) for integer a, b: needs x != 0 (0/0 is NaN) and no overflow (inf/inf);
    x**6 / x**4 is x*x."""
    whole = (eq(a % f64(1.0)).to(f64(0.0)), eq(b % f64(1.0)).to(f64(0.0)))
    for dt in FLOATS:
        yield rewrite(_power(x, a, dt) / _power(x, b, dt)).to(_power(x, a - b, dt), *whole)  # x^a / x^b = x^(a-b)
        yield rewrite(_power(x, a, dt) / square(x)).to(_power(x, a - f64(2.0), dt), whole[0])  # x^a / x^2 = x^(a-2)
        yield rewrite(_power(x, a, dt) / x).to(_power(x, a - f64(1.0), dt), whole[0])  # x^a / x = x^(a-1)
