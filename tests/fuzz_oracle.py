"""The fuzzer's oracle: NumPy's result for a Program, with what an implementation may differ by.

`evaluate` runs the program with NumPy and carries, per element, two more facts:

- `exact`: computed by IEEE-754 operations that are correctly rounded and specified bit for bit
  (+ - * / sqrt, conversions, comparisons, max/min, where, views, NumPy's floor_divide/remainder,
  sums and products of at most one element), from arguments. Any conforming compiler must give
  the same bits: NaN, inf and the sign of zero included.
- `err`: a first-order running bound on the distance of NumPy's value from the program evaluated
  exactly on NumPy's own inputs: half an ULP per rounding, 8 ULP per math function (libmvec and
  NumPy are each within 4 ULP), SUM_BOUND*log2(n)*eps*sum|x| per sum over n terms (the
  blocked summation's bound, lowering/blocking.py; the reference sum itself is taken in long double,
  so NumPy's own linear sums along strided axes do not loosen it), n*eps*|result| per product and
  k*eps*sum|a*b| per contraction over k terms, propagated through each op's derivative. `inf` marks a fragile element: a division by, a log
  of, or a comparison between values within their error of the critical point, an overflow that
  depends on rounding or summation order, a discontinuity (floor, remainder, sign, arctan2's
  cut). For a non-finite value, err 0 means its NaN/inf is certain.

`check_result` then requires bit equality where `exact`, identical NaN/+inf/-inf positions and
|kernel - NumPy| <= TOLERANCE * err elsewhere (both sides are within err of the exact value,
plus second-order slack), and skips fragile elements. Under fast math (`fast=True`) only
elements finite in both results are compared, within the same bound.

NumPy's maximum/minimum return their second operand on a tie of 0.0 and -0.0 where IEEE (and
the kernels) pick by sign; `evaluate` raises Tie for such data so the fuzzer skips it.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from fuzz_programs import BINARY, COMPARE_FNS, OPS, SCALAR, UNARY, Program, Step

TOLERANCE = 4.0
SUM_BOUND = 2.0  # float sums: |error| <= SUM_BOUND * eps * log2(n) * sum|x| (docs/accuracy.md, "Known differences")
MATH_ULPS = 8.0  # libmvec's 4 ULP plus NumPy's own SIMD math's 4 ULP
ROUNDED = 0.5
f64 = np.float64


class Tie(Exception):
    """The data hits NumPy's maximum/minimum tie rule for signed zeros (a documented difference)."""


@dataclass
class Approx:
    """NumPy's value with, per element, an error bound (inf: fragile) and whether it is exact."""

    value: np.ndarray
    err: np.ndarray
    exact: np.ndarray


def _argument(a: np.ndarray) -> Approx:
    return Approx(np.asarray(a), np.zeros(np.shape(a)), np.ones(np.shape(a), bool))


def _constant(c: float) -> Approx:
    """A Python float operand: kept a Python float, so NumPy treats it as weak (NEP 50)."""
    return Approx(c, np.zeros(()), np.ones((), bool))  # type: ignore[arg-type]


def _eps(dtype: np.dtype) -> tuple[float, float, float]:
    info = np.finfo(dtype)
    return float(info.eps), float(info.smallest_subnormal), float(info.max)


def _finish(out: Any, ins: list[Approx], prop: Any, exact_op: bool, ulps: float) -> Approx:
    """An elementwise result: propagated error `prop` plus this op's rounding, fragility and exactness."""
    out = np.asarray(out)
    shape = out.shape
    vals = [np.broadcast_to(np.asarray(a.value, f64), shape) for a in ins]
    errs = [np.broadcast_to(a.err, shape) for a in ins]
    eps, sub, big = _eps(out.dtype)
    finite_in = np.logical_and.reduce([np.isfinite(v) for v in vals])
    uncertain = np.logical_or.reduce([e > 0 for e in errs])
    fragile_in = np.logical_or.reduce([np.isinf(e) for e in errs])
    near_zero = np.logical_or.reduce([np.isfinite(v) & (np.abs(v) <= e) & (e > 0) for v, e in zip(vals, errs)])
    with np.errstate(all="ignore"):
        e = np.broadcast_to(np.asarray(prop, f64), shape)
        e = np.where(uncertain, e, 0.0)
        e = np.where(np.isnan(e), np.where(finite_in, np.inf, 0.0), e)
        mag = np.abs(out.astype(f64))
        e = e + (ulps * eps * mag + sub if ulps else 0.0)
        e = np.where(np.abs(mag) + TOLERANCE * e > big, np.inf, e)  # could overflow in a rounding
        e = np.where(np.isfinite(out), e, np.where((finite_in & uncertain) | near_zero, np.inf, 0.0))
    e = np.where(fragile_in, np.inf, e)
    exact = np.logical_and.reduce([np.broadcast_to(a.exact, shape) for a in ins]) & exact_op
    return Approx(out, e, exact)


def _unary_bound(op: str, x: np.ndarray, e: np.ndarray, out: np.ndarray) -> tuple[Any, bool, float]:
    """(propagated error, exact op?, rounding in ULP) of a unary op at x with error e."""
    ax, r = np.abs(x), np.abs(np.asarray(out, f64))

    def step(name: str) -> Callable[[], tuple[Any, bool, float]]:
        """A rounding to an integer: exact, and fragile where x's error interval holds a step."""
        fn = getattr(np, name)
        return lambda: (np.where(fn(x - e) == fn(x + e), 0.0, np.inf), True, 0)

    table: dict[str, Callable[[], tuple[Any, bool, float]]] = {
        "negative": lambda: (e, True, 0),
        "absolute": lambda: (e, True, 0),
        "sign": lambda: (np.where(ax > e, 0.0, np.inf), True, 0),
        "square": lambda: (2 * ax * e + e * e, True, ROUNDED),
        "reciprocal": lambda: (np.where(ax > e, e / (ax * (ax - e)), np.inf), True, ROUNDED),
        "sqrt": lambda: (np.where(x >= e, e / (np.sqrt(ax) + np.sqrt(np.maximum(x - e, 0))), np.inf), True, ROUNDED),
        "exp": lambda: (r * np.expm1(e), False, MATH_ULPS),
        "log": lambda: (np.where(x > e, e / (x - e), np.inf), False, MATH_ULPS),
        "tanh": lambda: (np.minimum(e, 2), False, MATH_ULPS),
        "sin": lambda: (np.minimum(e, 2), False, MATH_ULPS),
        "cos": lambda: (np.minimum(e, 2), False, MATH_ULPS),
        "log1p": lambda: (np.where(x + 1 > e, e / (x + 1 - e), np.inf), False, MATH_ULPS),
        "expm1": lambda: ((r + 1) * np.expm1(e), False, MATH_ULPS),
        "log2": lambda: (np.where(x > e, e / (x - e) / np.log(2), np.inf), False, MATH_ULPS),
        "log10": lambda: (np.where(x > e, e / (x - e) / np.log(10), np.inf), False, MATH_ULPS),
        "exp2": lambda: (r * np.expm1(e * np.log(2)), False, MATH_ULPS),
        "sinh": lambda: (np.cosh(ax + e) * e, False, MATH_ULPS),
        "cosh": lambda: (np.cosh(ax + e) * e, False, MATH_ULPS),  # |sinh| <= cosh
        "arcsinh": lambda: (e, False, MATH_ULPS),  # |derivative| <= 1
        "arctan": lambda: (e, False, MATH_ULPS),
        "cbrt": lambda: (np.where(ax > e, e / (3 * np.cbrt(ax - e) ** 2), np.inf), False, MATH_ULPS),
        **{name: step(name) for name in ("floor", "ceil", "trunc", "rint")},
        "fabs": lambda: (e, True, 0),
        "deg2rad": lambda: (e * (np.pi / 180), True, ROUNDED),
        "rad2deg": lambda: (e * (180 / np.pi), True, ROUNDED),
    }
    return table[op]()


def _binary_bound(op: str, a: np.ndarray, ea: np.ndarray, b: np.ndarray, eb: np.ndarray, out: np.ndarray) -> tuple[Any, bool, float]:
    """(propagated error, exact op?, rounding in ULP) of a binary op."""
    aa, ab, r = np.abs(a), np.abs(b), np.abs(np.asarray(out, f64))
    jump = np.where(ea + eb == 0, 0.0, np.inf)  # discontinuous: only exact operands give a bound

    def power() -> Any:
        grow = np.abs(b) * ea / (a - ea) + np.abs(np.log(np.where(a > 0, a, 1))) * eb
        return np.where(a > ea, r * np.expm1(grow), jump)

    def arctan2() -> Any:
        radius = np.hypot(a, b) - ea - eb
        turn = np.where(radius > 0, (ea + eb) / radius, np.inf)
        return np.where((b < 0) & (aa <= ea) & (ea > 0), np.inf, turn)  # the branch cut at y = +-0, x < 0

    table: dict[str, Callable[[], tuple[Any, bool, float]]] = {
        "add": lambda: (ea + eb, True, ROUNDED),
        "subtract": lambda: (ea + eb, True, ROUNDED),
        "multiply": lambda: (aa * eb + ab * ea + ea * eb, True, ROUNDED),
        "divide": lambda: (np.where(ab > eb, (ea + r * eb) / (ab - eb), np.inf), True, ROUNDED),
        "floor_divide": lambda: (jump, True, ROUNDED),
        "remainder": lambda: (jump, True, ROUNDED),
        "maximum": lambda: (np.maximum(ea, eb), True, 0),
        "minimum": lambda: (np.maximum(ea, eb), True, 0),
        "power": lambda: (power(), False, MATH_ULPS),
        "arctan2": lambda: (arctan2(), False, MATH_ULPS),
        "hypot": lambda: (ea + eb, False, MATH_ULPS),  # |gradient| <= 1 per operand
        "copysign": lambda: (np.where((ab > eb) | (eb == 0), ea, np.inf), True, 0),
        "fmod": lambda: (jump, True, 0),
        "heaviside": lambda: (np.where(aa > ea, eb * (aa == 0), jump), True, 0),
    }
    return table[op]()


def _check_tie(op: str, a: np.ndarray, b: np.ndarray) -> None:
    if op in ("maximum", "minimum"):
        if np.any((a == 0) & (b == 0) & (np.signbit(a) != np.signbit(b))):
            raise Tie(op)


def _elementwise(step: Step, ins: list[Approx]) -> Approx:
    op = step.op.removesuffix("_scalar")
    out = np.asarray(OPS[op].run([a.value for a in ins], ()))
    shape = out.shape
    v = [np.broadcast_to(np.asarray(a.value, f64), shape) for a in ins]
    e = [np.broadcast_to(a.err, shape) for a in ins]
    with np.errstate(all="ignore"):
        if step.op in UNARY:
            prop, exact, ulps = _unary_bound(step.op, v[0], e[0], out)
        else:
            _check_tie(op, np.broadcast_to(ins[0].value, shape), np.broadcast_to(ins[1].value, shape))
            prop, exact, ulps = _binary_bound(op, v[0], e[0], v[1], e[1], out)
    return _finish(out, ins, prop, exact, ulps)


def _where(step: Step, ins: list[Approx]) -> Approx:
    out = np.asarray(OPS["where"].run([a.value for a in ins], step.params))
    shape = out.shape
    a, b = (np.broadcast_to(np.asarray(x.value, f64), shape) for x in ins[:2])
    ea, eb, ex, ey = (np.broadcast_to(x.err, shape) for x in ins)
    cond = np.broadcast_to(COMPARE_FNS[step.params[0]](ins[0].value, ins[1].value), shape)
    exact_cond = np.broadcast_to(np.logical_and(ins[0].exact, ins[1].exact), shape)
    with np.errstate(all="ignore"):
        certain_nan = (np.isnan(a) & (ea == 0)) | (np.isnan(b) & (eb == 0))
        both_certain = (ea == 0) & (eb == 0)
        stable = exact_cond | (np.abs(a - b) > ea + eb) | certain_nan | (both_certain & ~np.isfinite(a - b))
    err = np.where(stable, np.where(cond, ex, ey), np.inf)
    exact = exact_cond & np.where(cond, np.broadcast_to(ins[2].exact, shape), np.broadcast_to(ins[3].exact, shape))
    return Approx(out, err, exact)


def _reduce(step: Step, ins: list[Approx]) -> Approx:
    name, axis, keepdims = step.params
    x = ins[0]
    out = np.asarray(OPS["reduce"].run([x.value], step.params))
    v, e = np.asarray(x.value, f64), x.err
    n = int(np.prod([v.shape[a] for a in _axes(v.ndim, axis)]))
    eps, sub, big = _eps(out.dtype)

    def red(fn: Callable[..., Any], a: np.ndarray) -> np.ndarray:
        return np.asarray(fn(a, axis=axis, keepdims=keepdims))

    with np.errstate(all="ignore"):
        finite_v = np.where(np.isfinite(v), v, 0.0)
        fragile = red(np.any, np.isinf(e))
        if name in ("max", "min"):
            zeros = v == 0
            if np.any(red(np.any, zeros & np.signbit(v)) & red(np.any, zeros & ~np.signbit(v)) & (out == 0)):
                raise Tie(name)
            err = red(np.max, e)
            exact = red(np.all, x.exact)
        elif name == "prod":
            mag = np.abs(finite_v)
            err = red(np.prod, mag + e) - red(np.prod, mag) + n * eps * np.abs(out) + n * sub
            big_part, small_part = red(np.prod, np.maximum(mag, 1)), red(np.prod, np.minimum(mag, 1))
            certain_zero = red(np.any, (v == 0) & (e == 0))
            fragile |= (big_part > big) | ((small_part < np.finfo(out.dtype).tiny) & (big_part > 1) & ~certain_zero)
            fragile |= red(np.any, (np.abs(v) <= e) & (e > 0)) & red(np.any, np.isinf(v))
            exact = red(np.all, x.exact) & (n <= 1)
        else:  # sum, mean
            if out.dtype.kind == "f":  # the reference: NumPy's own float sum may chain n roundings
                with warnings.catch_warnings():  # (the mean of an empty slice is NaN, as NumPy's was)
                    warnings.simplefilter("ignore", RuntimeWarning)
                    out = np.asarray(red(np.mean if name == "mean" else np.sum, np.asarray(x.value, np.longdouble)), out.dtype)
            total = red(np.sum, np.abs(finite_v))
            err = red(np.sum, e) + SUM_BOUND * max(1.0, np.log2(max(n, 1))) * eps * total + n * sub
            fragile |= total > big
            if name == "mean":
                err = np.where(n > 0, err / max(n, 1) + eps * np.abs(out) + sub, 0.0)
            exact = red(np.all, x.exact) & (n <= 1)
        err = np.where(np.isfinite(out), err, 0.0)
    return Approx(out, np.where(fragile, np.inf, err), exact)


def _axes(ndim: int, axis: Any) -> tuple[int, ...]:
    if axis is None:
        return tuple(range(ndim))
    return tuple(a % ndim for a in (axis if isinstance(axis, tuple) else (axis,)))


def _matmul(a: Approx, b: Approx) -> Approx:
    out = np.asarray(np.matmul(a.value, b.value))
    A, B = np.asarray(a.value, f64), np.asarray(b.value, f64)
    k = A.shape[-1]
    eps, sub, big = _eps(out.dtype)
    with np.errstate(all="ignore"):
        mA, mB = np.where(np.isfinite(A), np.abs(A), 0.0), np.where(np.isfinite(B), np.abs(B), 0.0)
        err = a.err @ mB + mA @ b.err + a.err @ b.err + k * eps * (mA @ mB) + k * sub
        err = np.where(np.isnan(err), np.inf, err)
        ones_a, ones_b = np.ones(A.shape), np.ones(B.shape)
        uncertain = ((a.err > 0) @ ones_b + ones_a @ (b.err > 0)) > 0
        certain_nan = ((np.isnan(A) & (a.err == 0)) @ ones_b + ones_a @ (np.isnan(B) & (b.err == 0))) > 0
        fragile = (mA @ mB > big) | np.isinf(a.err @ ones_b + ones_a @ b.err)
        err = np.where(np.isfinite(out), err, np.where(uncertain & ~certain_nan, np.inf, 0.0))
    return Approx(out, np.where(fragile, np.inf, err), np.zeros(out.shape, bool))


def _view(step: Step, ins: list[Approx]) -> Approx:
    """Data movement: the same op moves errors and exactness along with the values."""
    run = OPS[step.op].run
    return Approx(np.asarray(run([a.value for a in ins], step.params)),
                  np.asarray(run([a.err for a in ins], step.params), f64),
                  np.asarray(run([a.exact for a in ins], step.params), bool))


def _astype(step: Step, ins: list[Approx]) -> Approx:
    out = np.asarray(OPS["astype"].run([ins[0].value], step.params))
    narrowing = out.dtype.itemsize < np.asarray(ins[0].value).dtype.itemsize
    return _finish(out, ins, ins[0].err, True, ROUNDED if narrowing else 0)


def _gram(x: Approx) -> Approx:
    """x @ x.T over the last two axes (x @ x for a vector), as fuzz_programs.gram."""
    nd = x.value.ndim
    swap = Step("transpose", (0,), (tuple(range(nd - 2)) + (nd - 1, nd - 2),))
    return _matmul(x, _view(swap, [x]) if nd >= 2 else x)


def _step(step: Step, ins: list[Approx]) -> Approx:
    if step.op in UNARY or step.op in BINARY or step.op in SCALAR:
        return _elementwise(step, ins)
    if step.op == "where":
        return _where(step, ins)
    if step.op == "reduce":
        return _reduce(step, ins)
    if step.op == "matmul":
        return _matmul(*ins)
    if step.op in ("gram", "gram1"):
        return _gram(ins[0])
    if step.op == "products":
        return _elementwise(Step(step.params[0], (0, 1)), [_gram(ins[0]), _gram(ins[1])])
    if step.op == "astype":
        return _astype(step, ins)
    return _view(step, ins)


def evaluate(program: Program, args: list[np.ndarray]) -> list[Approx]:
    """NumPy's result for each output of program on args, with error bounds and exactness; raises Tie."""
    values = [_argument(a) for a in args]
    with np.errstate(all="ignore"):
        for s in program.steps:
            ins = [values[i] for i in s.args]
            if s.op in SCALAR:
                c = _constant(s.params[0])
                ins = [c, ins[0]] if s.params[1] else [ins[0], c]
            values.append(_step(s, ins))
    return [values[i] for i in program.outputs]


def check_result(got: Any, expected: list[Approx], fast: bool = False) -> None:
    """Assert a kernel's result matches NumPy's within the oracle's bounds (see the module docstring)."""
    if len(expected) > 1:
        assert isinstance(got, tuple) and len(got) == len(expected), f"expected a {len(expected)}-tuple, got {got!r}"
    else:
        got = (got,)
    for k, (g, want) in enumerate(zip(got, expected, strict=True)):
        what = f"output {k}"
        w = want.value
        scalar = w.ndim == 0
        assert isinstance(g, np.generic if scalar else np.ndarray), f"{what}: got {type(g).__name__} for a {w.ndim}-d result"
        g = np.asarray(g)
        assert (g.dtype, g.shape) == (w.dtype, w.shape), f"{what}: {g.dtype}{list(g.shape)}, NumPy gives {w.dtype}{list(w.shape)}"
        bad = _mismatches(g, want, fast)
        if bad.any():
            idx = [tuple(int(i) for i in ix) for ix in np.argwhere(bad)[:6]]
            rows = "\n".join(f"  at {i}: got {g[i]!r}, NumPy {w[i]!r}, bound {TOLERANCE * want.err[i]:.3g}"
                             f"{' (exact)' if want.exact[i] and not fast else ''}" for i in idx)
            raise AssertionError(f"{what}: {int(bad.sum())} of {bad.size} element(s) differ from NumPy\n{rows}")


def _mismatches(g: np.ndarray, want: Approx, fast: bool) -> np.ndarray:
    """Elements of g that break the bound (bool mask)."""
    w, err = want.value, want.err
    with np.errstate(all="ignore"):
        close = np.abs(g.astype(f64) - w.astype(f64)) <= TOLERANCE * err
        both_finite = np.isfinite(g) & np.isfinite(w)
        if fast:
            return both_finite & np.isfinite(err) & ~close
        same_bits = (g == w) & (np.signbit(g) == np.signbit(w)) | (np.isnan(g) & np.isnan(w))
        same_class = (np.isnan(g) == np.isnan(w)) & (np.isposinf(g) == np.isposinf(w)) & (np.isneginf(g) == np.isneginf(w))
        ok_inexact = ~np.isfinite(err) | (same_class & (~both_finite | close))
    return np.where(want.exact, ~same_bits, ~ok_inexact)
