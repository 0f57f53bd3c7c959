"""Algebraic identities over the tensor term language.

`algebra` holds rewrites that are exact under IEEE-754 for every input (NaN, inf and signed
zeros included), so they always run. `algebra_fastmath` holds rewrites that are not exact
(they change NaN/inf results or rounding) and only run when a kernel opts into fast math.

egglog's f64 treats -0.0 and 0.0 as one value, so the term language spells negative zero as
`-Tensor.const(0.0, dt)` and folding never produces a zero (whose sign it could not keep).
"""

from __future__ import annotations

from itertools import permutations

from egglog import Vec, f64, i64, ne, rewrite, ruleset

from egglog_tensor.ir import DType, Tensor

algebra = ruleset(name="algebra")
algebra_fastmath = ruleset(name="algebra_fastmath")


def _perm(p: tuple[int, ...]) -> Vec[i64]:
    return Vec[i64](*(i64(v) for v in p))


@algebra.register
def _transposes(x: Tensor) -> object:
    """Transpose of a transpose composes (ranks 2 and 3); an identity permutation disappears."""
    for rank in (2, 3):
        perms = list(permutations(range(rank)))
        for p in perms:
            for q in perms:
                composed = tuple(p[i] for i in q)
                yield rewrite(x.transpose(_perm(p)).transpose(_perm(q))).to(x.transpose(_perm(composed)))
        yield rewrite(x.transpose(_perm(tuple(range(rank))))).to(x)


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
