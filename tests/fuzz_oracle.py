"""The fuzzer's oracle: NumPy's result for a Program, with what an implementation may differ by.

`evaluate` runs the program with NumPy and carries, per element, two more facts:

- `exact`: computed by IEEE-754 operations that are correctly rounded and specified bit for bit
  (+ - * / sqrt, conversions, comparisons, max/min, where, views, NumPy's floor_divide/remainder,
  sums and products of at most one element), from arguments. Any conforming compiler must give
  the same bits: NaN, inf and the sign of zero included.
- `err`: a first-order running bound on the distance of NumPy's value from the program evaluated
  exactly on NumPy's own inputs: half an ULP per rounding, 8 ULP per math function (libmvec and
  NumPy are each within 4 ULP; 16 for scipy.special's, SPECIAL_ULPS), SUM_BOUND*log2(n)*eps*sum|x| per sum over n terms (the
  blocked summation's bound, lowering/blocking.py; the reference sum itself is taken in long double,
  so NumPy's own linear sums along strided axes do not loosen it), n*eps*|result| per product and
  k*eps*sum|a*b| per contraction over k terms, propagated through each op's derivative. `inf` marks a fragile element: a division by, a log
  of, a pole of (gammaln, psi) or a comparison between values within their error of the critical point, an overflow that
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
import fuzz_programs
import scipy.special as sp
from fuzz_programs import BINARY, COMPARE_FNS, OPS, PREDICATES, SCALAR, SPECIAL, SPECIAL2, UNARY, Program, Step, einsum_terms

TOLERANCE = 4.0
SUM_BOUND = 2.0  # float sums: |error| <= SUM_BOUND * eps * log2(n) * sum|x| (docs/accuracy.md, "Known differences")
MATH_ULPS = 8.0  # libmvec's 4 ULP plus NumPy's own SIMD math's 4 ULP
# scipy.special's ops and compositions beyond erf: the worst cases against SciPy that tests/test_surface_special*.py
# measure (psi erfinv ndtri 8, exp1 2, expi 3, i0e i1e 1 in float64; float32 is float64 rounded once), doubled
SPECIAL_ULPS = 2 * MATH_ULPS
# ops whose error is in ULPs of max(|result|, scale), not of |result|: log|Gamma| cancels near its zeros (1, 2 and
# one between each two poles below -2: SciPy's Cephes is 801 ULP of the result off there; 2.6 ULP of max(|result|, 1) measured)
CANCELS = {"gammaln": 1.0}
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
    info = fuzz_programs.finfo(dtype)
    return float(info.eps), float(info.smallest_subnormal), float(info.max)


def _finish(out: Any, ins: list[Approx], prop: Any, exact_op: bool, ulps: Any, scale: float = 0.0) -> Approx:
    """An elementwise result: propagated error `prop` plus this op's rounding (`ulps`, maybe per element, of
    max(|out|, scale)), fragility and exactness."""
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
        e = e + (ulps * eps * np.maximum(mag, scale) + sub if np.any(ulps) else 0.0)
        e = np.where(np.abs(mag) + TOLERANCE * e > big, np.inf, e)  # could overflow in a rounding
        e = np.where(np.isfinite(out), e, np.where((finite_in & uncertain) | near_zero, np.inf, 0.0))
    e = np.where(fragile_in, np.inf, e)
    exact = np.logical_and.reduce([np.broadcast_to(a.exact, shape) for a in ins]) & exact_op
    return Approx(out, e, exact)


def _unary_bound(op: str, x: np.ndarray, e: np.ndarray, out: np.ndarray) -> tuple[Any, bool, float]:
    """(propagated error, exact op?, rounding in ULP) of a unary op at x with error e."""
    ax, r = np.abs(x), np.abs(np.asarray(out, f64))

    def ends(slope: Callable[[np.ndarray], Any]) -> Any:
        """The larger of |f'| (`slope`) at x - e and x + e."""
        return np.maximum(slope(x - e), slope(x + e))

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
        # scipy.special's (SciPy and libm each within 4 ULP; erfc's tail: SciPy's is up to 9 ULP off, hence 4 x 8)
        "erf": lambda: (e * (2 / np.sqrt(np.pi)), False, MATH_ULPS),
        "erfc": lambda: (e * (2 / np.sqrt(np.pi)), False, 4 * MATH_ULPS),
        "ndtr": lambda: (e / np.sqrt(2 * np.pi), False, 4 * MATH_ULPS),
        "expit": lambda: (e / 4, False, MATH_ULPS),
        "log_expit": lambda: (e, False, MATH_ULPS),
        # e times the largest |f'| over [x - e, x + e]: at an end, f' being monotone or convex there (inf past a pole)
        "gammaln": lambda: (np.where(_pole_between(x - e, x + e), np.inf, e * ends(lambda t: np.abs(sp.psi(t)))), False, SPECIAL_ULPS),
        "psi": lambda: (np.where(_pole_between(x - e, x + e), np.inf, e * ends(_trigamma_bound)), False, SPECIAL_ULPS),
        "erfinv": lambda: (e * ends(lambda t: np.sqrt(np.pi) / 2 * np.exp(sp.erfinv(t) ** 2)), False, SPECIAL_ULPS),
        "ndtri": lambda: (e * ends(lambda t: np.sqrt(2 * np.pi) * np.exp(sp.ndtri(t) ** 2 / 2)), False, SPECIAL_ULPS),
        "i0e": lambda: (e, False, SPECIAL_ULPS),  # |i0e'| = i0e - |i1e| <= 1
        "i1e": lambda: (e, False, SPECIAL_ULPS),  # |i1e'| <= 1/2
        "exp1": lambda: (np.where(x > e, e * np.exp(e - x) / (x - e), np.inf), False, SPECIAL_ULPS),  # e^-x / x, decreasing
        "expi": lambda: (np.where(ax > e, e * ends(lambda t: np.exp(t - np.log(np.abs(t)))), np.inf), False, SPECIAL_ULPS),
    }
    return table[op]()


def _trigamma_bound(t: np.ndarray) -> np.ndarray:
    """An upper bound of psi'(t): 1/t + 1/t^2 for t > 0; below, pi^2 / sin^2(pi t) (the reflection psi'(t) +
    psi'(1 - t) = pi^2 / sin^2(pi t), psi'(1 - t) > 0; t less its nearest integer, exactly). (SciPy's polygamma(1, t)
    of a large negative t is a sum of as many terms: the oracle would hang.)"""
    return np.where(t > 0, 1 / t + 1 / t**2, (np.pi / np.sin(np.pi * (t - np.round(t)))) ** 2)


def _pole_between(lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """Whether [lo, hi] holds a pole of Gamma (0 or a negative integer)."""
    return np.floor(np.minimum(hi, 0)) >= lo


def _binary_bound(op: str, a: np.ndarray, ea: np.ndarray, b: np.ndarray, eb: np.ndarray, out: np.ndarray) -> tuple[Any, bool, float]:
    """(propagated error, exact op?, rounding in ULP) of a binary op."""
    aa, ab, r = np.abs(a), np.abs(b), np.abs(np.asarray(out, f64))
    jump = np.where(ea + eb == 0, 0.0, np.inf)  # discontinuous: only exact operands give a bound

    def gamma_tail() -> tuple[Any, bool, Any]:
        """gammainc of |a|, |x|: dP/dx is the gamma density, largest at its mode a - 1 clipped to x's interval
        (dP/da has no closed form: only an exact a gives a bound); rounded within SPECIAL_ULPS in units of the
        exponent a log x - x - lgamma(a), which exp turns into a relative error (libm's lgamma is not Cephes')."""
        t = np.clip(aa - 1, np.maximum(ab - eb, 0), ab + eb)
        density = np.exp(np.where(aa == 1, 0.0, (aa - 1) * np.log(t)) - t - sp.gammaln(aa))
        terms = np.abs(aa * np.log(ab)) + ab + np.abs(sp.gammaln(aa))
        return np.where(ea == 0, eb * density, np.inf), False, SPECIAL_ULPS * (1 + np.where(np.isfinite(terms), terms, 0.0))

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
        "gammainc": gamma_tail,
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
        if step.op in UNARY or step.op in SPECIAL:
            prop, exact, ulps = _unary_bound(step.op, v[0], e[0], out)
        else:
            _check_tie(op, np.broadcast_to(ins[0].value, shape), np.broadcast_to(ins[1].value, shape))
            prop, exact, ulps = _binary_bound(op, v[0], e[0], v[1], e[1], out)
    done = _finish(out, ins, prop, exact, ulps, CANCELS.get(op, 0.0))
    if op == "gammaln":  # SciPy's (Cephes) lgam is inf where 1/x overflows (float64 denormals), libm's the finite -log|x|
        return Approx(out, np.where(np.isinf(out) & (v[0] != 0) & (np.abs(v[0]) < 1 / np.finfo(f64).max), np.inf, done.err), done.exact)
    if op in ("erfc", "ndtr"):  # SciPy's (Cephes) erfc is 0 where the true value is subnormal, where libm's is not
        return Approx(out, np.where(out == 0, np.inf, done.err), done.exact)
    if op == "copysign":  # a NaN's sign bit from an inexact op is the machine's (IEEE-754 leaves it open)
        return Approx(out, np.where(np.isnan(v[1]) & ~np.broadcast_to(ins[1].exact, shape), np.inf, done.err), done.exact)
    return done


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
            err, more_fragile = _product_bound(v, e, out, n, lambda a: red(np.prod, a), lambda a: red(np.any, a))
            fragile |= more_fragile
            exact = red(np.all, x.exact) & (n <= 1)
        else:  # sum, mean
            if out.dtype.name in fuzz_programs.FLOATS + fuzz_programs.NARROW:  # the reference: NumPy's own float sum may chain n roundings
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


def _product_bound(v: np.ndarray, e: np.ndarray, out: np.ndarray, n: Any, prod: Callable[[np.ndarray], np.ndarray],
                   any_: Callable[[np.ndarray], np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Error bound and fragility of products of n factors v +- e (`prod`/`any_` reduce or accumulate them):
    the factors' errors multiplied out plus n eps |out| and n underflows; fragile where it may overflow,
    underflow to a zero that a larger factor would have scaled back, or multiply inf by a possible 0."""
    eps, sub, big = _eps(out.dtype)
    mag = np.abs(np.where(np.isfinite(v), v, 0.0))
    err = prod(mag + e) - prod(mag) + n * eps * np.abs(out) + n * sub
    big_part, small_part = prod(np.maximum(mag, 1)), prod(np.minimum(mag, 1))
    certain_zero = any_((v == 0) & (e == 0))
    fragile = (big_part > big) | ((small_part < fuzz_programs.finfo(out.dtype).tiny) & (big_part > 1) & ~certain_zero)
    fragile |= any_((np.abs(v) <= e) & (e > 0)) & any_(np.isinf(v))
    return err, fragile


def _axes(ndim: int, axis: Any) -> tuple[int, ...]:
    if axis is None:
        return tuple(range(ndim))
    return tuple(a % ndim for a in (axis if isinstance(axis, tuple) else (axis,)))


def _contract(fn: Callable[..., Any], ins: list[Approx], k: int, factored: bool = False) -> Approx:
    """fn (matmul, einsum) of the operands: a sum over k terms, each a product of len(ins) factors;
    `factored`: a factor may be taken out of the sum (an einsum index summed in one operand only).

    Error: the telescoped propagation sum_i fn(|x_1|+e_1, ..., e_i, |x_i+1|, ...) (exact for a
    multilinear fn), plus (k + len(ins)) eps per term for the products' and the sum's roundings,
    plus an underflow of sub per product amplified by the later factors. Fragile: an overflow
    that depends on the order of the factors or of the sum, or a fragile operand."""
    out = _narrow_reference(fn, [a.value for a in ins])
    eps, sub, big = _eps(out.dtype)
    n = len(ins)
    with np.errstate(all="ignore"):
        vals = [np.asarray(a.value, f64) for a in ins]
        mags = [np.where(np.isfinite(v), np.abs(v), 0.0) for v in vals]
        ones = [np.ones(v.shape) for v in vals]

        def each(i: int, a: np.ndarray, before: list[np.ndarray], after: list[np.ndarray]) -> np.ndarray:
            return np.asarray(fn(*before[:i], a, *after[i + 1:]), f64)

        def involved(masks: list[np.ndarray]) -> np.ndarray:
            return sum(each(i, masks[i].astype(f64), ones, ones) for i in range(n)) > 0

        widened, floors = [m + a.err for m, a in zip(mags, ins)], [np.maximum(m, 1) for m in mags]
        total = each(0, mags[0], mags, mags)
        err = sum(each(i, ins[i].err, widened, mags) for i in range(n))
        err = err + (k + n) * eps * total + n * sub * each(0, floors[0], floors, floors)
        err = np.where(np.isnan(err), np.inf, err)
        uncertain = involved([a.err > 0 for a in ins])
        certain_nan = involved([np.isnan(v) & (a.err == 0) for v, a in zip(vals, ins)])
        fragile = (total > big) | involved([np.isinf(a.err) for a in ins])
        for i in range(n if n > 2 else 0):  # a partial product of all factors but one
            fragile |= each(i, ones[i], mags, mags) > big
        if n > 2 or factored:  # a factor taken out of the sum (the order einsum leaves open) makes inf * 0's NaN an inf, and back
            fragile |= ~np.isfinite(out) & involved([np.isinf(v) for v in vals])
        err = np.where(np.isfinite(out), err, np.where(uncertain & ~certain_nan, np.inf, 0.0))
    return Approx(out, np.where(fragile, np.inf, err), np.zeros(out.shape, bool))


def _narrow_reference(fn: Callable[..., Any], values: list[Any]) -> np.ndarray:
    """fn's NumPy result, but for float16 the float64 result rounded once: NumPy's float16 einsum,
    var and strided sums round at each step, far from the float32 accumulation both NumPy's
    matmul and the compiler use (docs/accuracy.md, float16)."""
    out = np.asarray(fn(*values))
    if out.dtype.name not in fuzz_programs.NARROW:
        return out
    return np.asarray(fn(*[np.asarray(v, f64) for v in values])).astype(out.dtype)


def _matmul(a: Approx, b: Approx) -> Approx:
    return _contract(np.matmul, [a, b], np.shape(a.value)[-1])


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


def _swapped(x: Approx) -> Approx:
    """x with its last two axes swapped (a view)."""
    nd = np.ndim(x.value)
    return _view(Step("transpose", (0,), (tuple(range(nd - 2)) + (nd - 1, nd - 2),)), [x])


def _gram(x: Approx) -> Approx:
    """x @ x.T over the last two axes (x @ x for a vector), as fuzz_programs.gram."""
    return _matmul(x, _swapped(x) if np.ndim(x.value) >= 2 else x)


def _step(step: Step, ins: list[Approx]) -> Approx:
    if step.op in UNARY or step.op in BINARY or step.op in SCALAR or step.op in SPECIAL or step.op in SPECIAL2:
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
    if step.op in ORACLES:
        return ORACLES[step.op](step, ins)
    return _view(step, ins)


def evaluate(program: Program, args: list[np.ndarray], fast: bool = False) -> list[Approx]:
    """NumPy's result for each output of program on args, with error bounds and exactness; raises Tie.
    `fast`: under fast math (LLVM's nnan) a NaN a step makes (the std of an empty slice) leaves what
    reads it undefined: it is neither exact nor bounded, so nothing computed from it is held to NumPy."""
    values = [_argument(a) for a in args]
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN slices, means of empty slices
        for s in program.steps:
            ins = [values[i] for i in s.args]
            if s.op in SCALAR:
                c = _constant(s.params[0])
                ins = [c, ins[0]] if s.params[1] else [ins[0], c]
            value = _step(s, ins)
            if fast:
                nan = np.isnan(np.asarray(value.value, f64))
                value = Approx(value.value, np.where(nan, np.inf, value.err + _fast_slack(s, value)), value.exact & ~nan)
            values.append(value)
    return [values[i] for i in program.outputs]


def _fast_slack(step: Step, value: Approx) -> Any:
    """The error fast math may add to a step the oracle otherwise holds exact: round's unscaling division by
    10**decimals taken as a multiplication by its reciprocal (arcp), one ULP of the result."""
    if step.op != "round" or step.params[0] == 0:
        return 0.0
    eps, sub, _ = _eps(np.asarray(value.value).dtype)
    return eps * np.abs(np.asarray(value.value, f64)) + sub


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


# --- the newer surface (fuzz_programs.NEWER) ---------------------------------------------------


def _einsum(step: Step, ins: list[Approx]) -> Approx:
    """A view (one operand, nothing summed) moves exactness along; anything else is a contraction."""
    spec = step.params[0]
    k = einsum_terms(spec, [np.shape(a.value) for a in ins])
    if len(ins) == 1 and k == 1:
        return _view(step, ins)
    terms = spec.split("->")[0].split(",")
    kept = set(spec.split("->")[1]) if "->" in spec else {c for c in "".join(terms) if "".join(terms).count(c) == 1}
    alone = any(c not in kept and sum(c in t for t in terms) == 1 for c in "".join(terms) if c.isalpha())
    return _contract(lambda *xs: np.einsum(spec, *xs), ins, k, factored=len(ins) > 1 and alone)


def _statistic(step: Step, ins: list[Approx]) -> Approx:
    """The STATISTICS reductions, results cast back to the argument's dtype: indices and truth values
    exact on exact data (truth values also where no element's error reaches zero), ptp one rounded
    subtraction, nansum/nanmax the sum/max of the data with NaN left out, var/std `_spread`."""
    name, axis, keepdims = step.params[:3]
    x = ins[0]
    out = _narrow_reference(lambda a: OPS["statistic"].run([a], step.params).astype(np.asarray(x.value).dtype), [x.value])
    v, e = np.asarray(x.value, f64), x.err

    def red(fn: Callable[..., Any], a: np.ndarray) -> np.ndarray:
        return np.asarray(fn(a, axis=axis, keepdims=keepdims))

    fragile_in = red(np.any, np.isinf(e))
    if name in ("nansum", "nanmax"):  # a NaN that may not be one is fragile
        cleared = Approx(np.where(np.isnan(v), 0.0 if name == "nansum" else -np.inf, v).astype(out.dtype),
                         np.where(np.isnan(v) & (e > 0), np.inf, e), x.exact)
        inner = _reduce(Step("reduce", (0,), ("sum" if name == "nansum" else "max", axis, keepdims)), [cleared])
        all_nan = red(np.all, np.isnan(v)) & (name == "nanmax")
        exact = np.where(all_nan, red(np.all, x.exact), inner.exact)
        return Approx(out, np.where(all_nan, np.where(fragile_in, np.inf, 0.0), inner.err), exact)
    if name in ("argmax", "argmin", "any", "all"):
        doubtful = red(np.any, (np.abs(v) <= e) & (e > 0)) if name in ("any", "all") else ~red(np.all, x.exact)
        return Approx(out, np.where(doubtful | fragile_in, np.inf, 0.0), ~doubtful)
    if name == "ptp":  # max - min
        ends = [_reduce(Step("reduce", (0,), (end, axis, keepdims)), [x]) for end in ("max", "min")]
        return _elementwise(Step("subtract", (0, 1)), ends)
    return _spread(step, x, out)


def _spread(step: Step, x: Approx, out: np.ndarray) -> Approx:
    """var = mean(|x - mean|^2) and std = sqrt(var): with E the largest error, d the deviations and
    dmu the mean's rounding, |dvar| <= 2 mean|d| (2E + dmu) + (2E + dmu)^2 + (SUM_BOUND log2 n + 4) eps var,
    both scaled by n / (n - ddof); std propagates that through sqrt (at most sqrt(err)) plus an ULP."""
    name, axis, keepdims = step.params[:3]
    ddof = step.params[3] if len(step.params) > 3 else 0
    v = np.asarray(x.value, f64)
    eps, sub, big = _eps(out.dtype)
    n = int(np.prod([v.shape[a] for a in _axes(v.ndim, axis)]))
    grow = SUM_BOUND * max(1.0, np.log2(max(n, 1))) * eps

    def red(fn: Callable[..., Any], a: np.ndarray, keep: bool = keepdims) -> np.ndarray:
        return np.asarray(fn(a, axis=axis, keepdims=keep))

    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # the mean of an empty slice
        finite = np.where(np.isfinite(v), v, 0.0)
        mu = red(np.mean, finite, True)
        dev = np.abs(finite - mu)
        var = red(np.mean, dev**2)
        dmu = grow * red(np.mean, np.abs(finite)) + eps * np.abs(red(np.mean, finite)) + sub
        spread = 2 * red(np.max, x.err, keepdims) if n else 0.0
        spread = spread + dmu
        err = 2 * red(np.mean, dev) * spread + spread**2 + (grow + 4 * eps) * var + n * sub
        unbiased = n / max(n - ddof, 1)  # n <= ddof: NumPy's inf or NaN, whose class the check below decides
        var, err = var * unbiased, err * unbiased
        if name == "std":
            low = np.sqrt(np.maximum(var - err, 0))
            err = np.where(var >= err, err / (np.sqrt(var) + low), np.sqrt(err)) + eps * np.sqrt(var) + sub
        fragile = red(np.any, np.isinf(x.err)) | (red(np.sum, dev**2) + TOLERANCE * err > big)
        uncertain = red(np.any, x.err > 0)
        err = np.where(n > 0, err, 0.0)
        err = np.where(np.isfinite(out), err, np.where(uncertain, np.inf, 0.0))
    return Approx(out, np.where(fragile, np.inf, err), np.zeros(np.shape(out), bool))


def _scan(step: Step, ins: list[Approx]) -> Approx:
    """cumsum: element j a sum of its j + 1 prefix terms, each within (j + 1) eps sum|x| (any order);
    cumprod (of x/8): a product of j + 1 factors, bound as prod's."""
    x, (name, axis) = ins[0], step.params
    out = np.asarray(OPS["scan"].run([x.value], step.params))
    eps, sub, big = _eps(out.dtype)
    v = np.asarray(x.value, f64)
    e, exact_in, ax = np.broadcast_to(x.err, v.shape), np.broadcast_to(x.exact, v.shape), axis
    if axis is None:  # the flattened array
        v, e, exact_in, ax = v.ravel(), e.ravel(), exact_in.ravel(), 0
    count = np.cumsum(np.ones(v.shape), axis=ax)
    if name == "cumprod":
        return _cumprod(v, e, exact_in, out, count, ax)
    with np.errstate(all="ignore"):
        total = np.cumsum(np.where(np.isfinite(v), np.abs(v), 0.0), axis=ax)
        err = np.cumsum(e, axis=ax) + count * (eps * total + sub)
        fragile = (total > big) | (np.cumsum(np.isinf(e), axis=ax) > 0)
        err = np.where(np.isfinite(out), err, np.where(np.cumsum(e > 0, axis=ax) > 0, np.inf, 0.0))
    return Approx(out, np.where(fragile, np.inf, err), (count == 1) & exact_in)


def _cumprod(v: np.ndarray, e: np.ndarray, exact_in: np.ndarray, out: np.ndarray, count: np.ndarray, ax: int) -> Approx:
    """cumprod of x * 0.125 along ax: the scaling exact but for subnormal results (half a subnormal
    step each), then each prefix bound as a product of count factors."""
    sub = _eps(out.dtype)[1]
    tiny = float(fuzz_programs.finfo(out.dtype).tiny)
    scaled_exactly = ~np.isfinite(v) | (v == 0) | (np.abs(v) * 0.125 >= tiny)
    v, e = v * 0.125, e * 0.125 + np.where(scaled_exactly, 0.0, sub)
    with np.errstate(all="ignore"):
        err, fragile = _product_bound(v, e, out, count, lambda a: np.cumprod(a, axis=ax),
                                      lambda a: np.logical_or.accumulate(a, axis=ax))
        fragile |= np.logical_or.accumulate(np.isinf(e), axis=ax)
        err = np.where(np.isfinite(out), err, np.where(np.logical_or.accumulate(e > 0, axis=ax), np.inf, 0.0))
    exact = (count == 1) & exact_in & scaled_exactly
    return Approx(out, np.where(fragile, np.inf, err), exact)


def _predicate(step: Step, ins: list[Approx]) -> Approx:
    """isnan/isinf/isfinite: wherever the oracle bounds an element, its class is NumPy's (exact)."""
    out = np.asarray(OPS[step.op].run([ins[0].value], ()))
    known = np.isfinite(ins[0].err)
    return Approx(out, np.where(known, 0.0, np.inf), known)


def _round(step: Step, ins: list[Approx]) -> Approx:
    """NumPy's scale, rint, unscale: IEEE operations, fragile where x's error interval holds a step."""
    x, d = ins[0], step.params[0]
    v, e = np.asarray(x.value, f64), x.err
    out = np.asarray(OPS["round"].run([x.value], step.params))
    stable = np.round(v - e, d) == np.round(v + e, d)
    return _finish(out, ins, np.where(stable | (e == 0), 0.0, np.inf), True, 0)


def _made(step: Step, ins: list[Approx]) -> Approx:
    """x combined with an array made in the kernel: an exact argument to the binary op."""
    made_array = fuzz_programs.made(ins[0].value, step.params[:-1])
    return _elementwise(Step(step.params[-1], (0, 1)), [ins[0], _argument(made_array)])


def _indexed(step: Step, ins: list[Approx]) -> Approx:
    """An array made from array indices: np.arange's and np.eye's values exact; np.linspace(-1, 1)'s within 2 ULP of 1
    (NumPy's computed in float64 and rounded once, the kernel's in its dtype)."""
    out = fuzz_programs.indexed(step.params)
    exact = step.params[0] != "linspace"
    return Approx(out, np.full(out.shape, 0.0 if exact else 2 * _eps(out.dtype)[0]), np.full(out.shape, exact))


def _sort(step: Step, ins: list[Approx]) -> Approx:
    """np.sort: each sorted element within the largest error along its axis of the data (sorting moves a value no
    further), NaN last; exact where the whole axis is, but a zero's sign (-0.0 and 0.0 tie: which comes first is
    the sort's order)."""
    x, axis = ins[0], step.params[0]
    out = np.asarray(OPS["sort"].run([x.value], step.params))
    v = np.asarray(x.value)
    e, exact_in = np.broadcast_to(x.err, v.shape), np.broadcast_to(x.exact, v.shape)
    if axis is None:
        e, exact_in, axis = e.ravel(), exact_in.ravel(), 0
    if not out.size:
        return Approx(out, np.zeros(out.shape), np.ones(out.shape, bool))
    worst = np.broadcast_to(np.max(e, axis=axis, keepdims=True), out.shape)
    exact = np.broadcast_to(np.all(exact_in, axis=axis, keepdims=True), out.shape) & (out != 0)
    return Approx(out, worst, exact)


def _setitem(step: Step, ins: list[Approx]) -> Approx:
    """B = x.copy(); B[key] = y: y cast to x's dtype (a rounding when narrowing), then moved like a view;
    B[key] op= y: B[key] op y (in the promoted dtype) takes y's place."""
    x, y = ins
    key = step.params[0]
    if len(step.params) > 1:
        y = _elementwise(Step(fuzz_programs.AUGMENTED[step.params[1]][0], (0, 1)), [_view(Step("getitem", (0,), (key,)), [x]), y])
    y = _astype(Step("astype", (0,), (np.asarray(x.value).dtype.name,)), [y])
    return _view(Step("setitem", step.args, (key,)), [x, y])


def _syr2k(step: Step, ins: list[Approx]) -> Approx:
    """fuzz_programs.syr2k composed from the oracle's own steps: two contractions, add, scale, mask."""
    a, b, c = ins
    alpha, beta = step.params
    ab = _elementwise(Step("add", (0, 1)), [_matmul(a, _swapped(b)), _matmul(b, _swapped(a))])
    scaled = [_elementwise(Step("multiply_scalar", (0,)), [_constant(k), x]) for k, x in ((alpha, ab), (beta, c))]
    blend = _elementwise(Step("add", (0, 1)), [scaled[1], scaled[0]])
    lower = np.tri(np.shape(a.value)[-2], dtype=bool)
    out = np.asarray(OPS["syr2k"].run([x.value for x in ins], step.params))
    pick = [np.broadcast_to(np.where(lower, p(blend), p(c)), out.shape) for p in (lambda t: t.err, lambda t: t.exact)]
    return Approx(out, pick[0], pick[1])


def _nan_to_num(x: Any) -> Any:
    """NumPy's nan_to_num; of bfloat16 (which NumPy with ml_dtypes returns unchanged: not np.inexact) NaN and
    +-inf replaced as for the other float dtypes, the kernel's documented behaviour (docs/numpy-surface.md)."""
    x = np.asarray(x)
    if x.dtype.name != "bfloat16":
        return OPS["nan_to_num"].run([x], ())
    import ml_dtypes

    big, wide = float(ml_dtypes.finfo(x.dtype).max), x.astype(np.float32)
    return np.where(np.isnan(wide), 0.0, np.clip(wide, -big, big)).astype(x.dtype)


ORACLES: dict[str, Callable[[Step, list[Approx]], Approx]] = {
    "einsum": _einsum,
    "matmul_t": lambda step, ins: _matmul(ins[0], _swapped(ins[1])),
    "statistic": _statistic,
    "scan": _scan,
    **{name: _predicate for name in PREDICATES},
    "nan_to_num": lambda step, ins: _finish(_nan_to_num(ins[0].value), ins, ins[0].err, True, 0),
    "round": _round,
    "made": _made,
    "indexed": _indexed,
    "sort": _sort,
    "setitem": _setitem,
    "syr2k": _syr2k,
}  # every other NEWER op moves data: `_view`
