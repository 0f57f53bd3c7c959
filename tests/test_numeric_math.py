"""NumPy's elementwise math functions beyond exp/log/sin (log1p ... logaddexp2, rounding, float
classes, bitwise and shift ops) against NumPy: special values (NaN, +-inf, +-0, domain edges) in
the same places, ULP bounds against an extended-precision reference on dense sweeps, bit-exact
where the op is exact, NumPy's dtype promotion of integers, and clear errors for dtypes an op lacks."""

from __future__ import annotations

import os

import numpy as np
import pytest
from strategies import FLOATS, INTS, check

import egglog_tensor as et

# name: (domain of the dense sweep, max ULP against the reference: float32, float64; docs/accuracy.md),
# bounds that hold for glibc's AVX-512 and AVX2 libmvec variants (they are different code)
APPROXIMATE = {
    "log1p": ((-0.999, 1e6), 1, 4),
    "expm1": ((-40, 80), 1, 4),
    "log2": ((1e-30, 1e30), 2, 2),
    "log10": ((1e-30, 1e30), 3, 2),
    "exp2": ((-140, 127), 1, 2),
    "sinh": ((-88, 88), 2, 2),
    "cosh": ((-88, 88), 3, 2),
    "arcsinh": ((-1e6, 1e6), 2, 3),  # float64: 2.0005 with glibc's AVX2 variant
    "arccosh": ((1, 1e6), 2, 2),
    "arctanh": ((-1, 1), 2, 2),
    "arcsin": ((-1, 1), 4, 3),
    "arccos": ((-1, 1), 2, 2),
    "arctan": ((-1e4, 1e4), 2, 3),
    "tan": ((-1e4, 1e4), 4, 4),
    "cbrt": ((-1e6, 1e6), 3, 2),  # float32: 2.76 with glibc's AVX2 variant
    "deg2rad": ((-1e6, 1e6), 1, 1),
    "rad2deg": ((-1e6, 1e6), 2, 1),
}
SPECIAL = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.0, -2.0, 1.5, 2.5, -2.5, 1e-30, -1e-30, 1e-8, -1e-8,
           5e-324, 1e-310, 3.0, 100.0, -100.0, 700.0, -800.0, 1e10, -1e10, 1e300, -1e300, 1.0 + 2**-23, 1.0 - 2**-24]
def _special(dtype: str, *more: float) -> np.ndarray:
    """SPECIAL (and `more`) as `dtype`: in float32 the float64-only magnitudes are 0 or +-inf."""
    with np.errstate(over="ignore"):
        return np.array(SPECIAL + list(more)).astype(dtype)


SWEEP = int(os.environ.get("EGGLOG_TENSOR_ULP_SWEEP", 2**16))


def _all_of(names: list[str]):
    """One kernel applying np.<name> i to argument i."""
    fns = [getattr(np, name) for name in names]
    return lambda *xs: tuple(f(x) for f, x in zip(fns, xs, strict=True))


def _sweep(lo: float, hi: float, n: int, dtype: str) -> np.ndarray:
    """n points: half evenly spaced over [lo, hi], half log-spaced magnitudes of both signs within it."""
    rng = np.random.default_rng(0)
    magnitudes = np.geomspace(1e-12, max(abs(lo), abs(hi)), n - n // 2) * np.where(rng.random(n - n // 2) < 0.5, -1, 1)
    return np.concatenate([np.linspace(lo, hi, n // 2), np.clip(magnitudes, lo, hi)]).astype(dtype)


def max_ulp(got: np.ndarray, reference: np.ndarray, dtype: str) -> float:
    """Largest distance of `got` from the extended-precision `reference`, in ULPs of `dtype` at the
    reference (where both are finite)."""
    rounded = reference.astype(dtype)
    finite = np.isfinite(rounded) & np.isfinite(got)
    spacing = np.spacing(np.abs(rounded[finite])).astype(np.longdouble)
    distance = np.abs(got[finite].astype(np.longdouble) - reference[finite].astype(np.longdouble))
    return float(np.max(distance / spacing, initial=0.0))


@pytest.mark.parametrize("dtype", FLOATS)
def test_approximate_functions_special_values(dtype: str) -> None:
    """NaN, +-inf, signed zeros and domain errors in NumPy's places; other values close to NumPy's."""
    names = sorted(APPROXIMATE)
    x = _special(dtype)
    with np.errstate(all="ignore"):
        check(_all_of(names), *([x] * len(names)), rtol=1e-5 if dtype == "float32" else 1e-13)


@pytest.mark.parametrize("dtype", FLOATS)
def test_approximate_functions_ulp_bound(dtype: str) -> None:
    """Each function within its ULP bound of a reference computed in float64 (float32) or long double
    (float64), on a dense sweep of its domain (EGGLOG_TENSOR_ULP_SWEEP points; 1e6 for the docs)."""
    names = sorted(APPROXIMATE)
    xs = [_sweep(*APPROXIMATE[name][0], SWEEP, dtype) for name in names]
    wide = np.float64 if dtype == "float32" else np.longdouble
    with np.errstate(all="ignore"):
        got = et.kernel(_all_of(names))(*xs)
        errors = {name: max_ulp(g, getattr(np, name)(x.astype(wide)), dtype) for name, g, x in zip(names, got, xs, strict=True)}
    bounds = {name: APPROXIMATE[name][1 if dtype == "float32" else 2] for name in names}
    assert {n: e for n, e in errors.items() if e > bounds[n]} == {}, errors


EXACT_UNARY = ["floor", "ceil", "trunc", "rint", "fabs", "signbit", "isnan", "isinf", "isfinite", "negative"]


@pytest.mark.parametrize("dtype", FLOATS)
def test_exact_unary_functions_are_bit_exact(dtype: str) -> None:
    """Rounding (halves to even for rint), fabs, signbit (of -0.0 and -NaN too) and the float classes."""
    x = _special(dtype, -np.nan, 0.49999997, -1.5, 3.5, -4.5, 2**52 + 0.5, 1e20)
    check(_all_of(EXACT_UNARY), *([x] * len(EXACT_UNARY)), rtol=0, atol=0)


def _binary_floats(x, y):
    return np.copysign(x, y), np.fmod(x, y), np.heaviside(x, y), np.radians(x), np.degrees(y)


@pytest.mark.parametrize("dtype", FLOATS)
def test_exact_binary_functions_are_bit_exact(dtype: str) -> None:
    """copysign (onto NaN and zeros), fmod (C's: zero or infinite divisors, infinite dividends),
    heaviside (h0 at +-0, NaN for NaN), radians/degrees (NumPy's spellings of deg2rad/rad2deg)."""
    values = _special(dtype)
    x, y = np.meshgrid(values, values)
    with np.errstate(all="ignore"):
        check(_binary_floats, x, y, rtol=0, atol=0)


def _logaddexps(x, y):
    return np.logaddexp(x, y), np.logaddexp2(x, y)


@pytest.mark.parametrize("dtype", FLOATS)
def test_logaddexp(dtype: str) -> None:
    """NumPy's formula: equal operands (equal infinities too) give x + log 2, NaN gives NaN, -inf
    operands the other one; elsewhere within a few ULP of the larger operand's magnitude (the formula
    cancels when the result is near 0, in NumPy too)."""
    values = _special(dtype)
    x, y = np.meshgrid(values, values)
    with np.errstate(all="ignore"):
        got, want = et.kernel(_logaddexps)(x, y), _logaddexps(x, y)
    eps = np.finfo(dtype).eps
    for g, w in zip(got, want, strict=True):
        assert g.dtype == w.dtype
        assert np.array_equal(np.isnan(g), np.isnan(w)) and np.array_equal(g[np.isinf(w)], w[np.isinf(w)])
        finite = np.isfinite(w)
        scale = np.maximum(np.maximum(np.abs(x), np.abs(y)), 1)[finite]
        assert np.all(np.abs(g[finite] - w[finite]) <= 4 * eps * scale)


def _hypot(x, y):
    return np.hypot(x, y)


@pytest.mark.parametrize("dtype", FLOATS)
def test_hypot(dtype: str) -> None:
    """No overflow or underflow of the squares (magnitudes e^+-60 apart by up to e^5), within 1 ULP
    (float32) and 2 ULP (float64) of the reference; an infinite operand gives inf even with NaN."""
    rng = np.random.default_rng(1)
    x = (np.exp(rng.uniform(-60, 60, SWEEP)) * rng.choice([-1, 1], SWEEP)).astype(dtype)
    y = (x * np.exp(rng.uniform(-5, 5, SWEEP))).astype(dtype)
    wide = np.float64 if dtype == "float32" else np.longdouble
    assert max_ulp(et.kernel(_hypot)(x, y), np.hypot(x.astype(wide), y.astype(wide)), dtype) <= (1 if dtype == "float32" else 2)
    values = _special(dtype)
    a, b = np.meshgrid(values, values)
    with np.errstate(all="ignore"):
        check(_hypot, a, b, rtol=np.finfo(dtype).eps * 2)


def _int_functions(a, b):
    return (a & b, a | b, a ^ b, ~a, a << b, a >> b, np.fmod(a, b), np.floor(a), np.ceil(a), np.trunc(a),
            np.isnan(a), np.isinf(a), np.isfinite(a), np.bitwise_not(b))


@pytest.mark.parametrize("dtype", INTS)
def test_integer_functions(dtype: str) -> None:
    """Bitwise ops, shifts by counts of the bit width or more and negative ones (all bits out: 0 for
    <<, the sign for >>), fmod by 0 and MIN by -1 (0, no trap), integer rounding and classes."""
    info = np.iinfo(dtype)
    bits = info.bits
    a = np.array([0, 1, -1, 5, -5, 7, -8, info.min, info.max, 12345, -12345, 3, 3, -3, 9], dtype=dtype)
    b = np.array([0, 1, 2, 3, -1, bits - 1, bits, bits + 1, -1, 100, -100, 0, 2, -2, 4], dtype=dtype)
    with np.errstate(all="ignore"):
        check(_int_functions, a, b)


def test_bool_bitwise() -> None:
    a = np.array([True, True, False, False])
    b = np.array([True, False, True, False])
    check(lambda a, b: (a & b, a | b, a ^ b, ~a, np.floor(a), np.isnan(a)), a, b)


@pytest.mark.parametrize("dtype", INTS)
def test_integers_promote_to_float64_as_numpy(dtype: str) -> None:
    """Transcendental and float-only ufuncs of integers compute in float64, as NumPy resolves them."""
    i = np.array([0, 1, -1, 7, 1000, -3], dtype=dtype)
    check(lambda i: (np.log1p(i), np.cbrt(i), np.arctan(i), np.logaddexp(i, i), np.hypot(i, i), np.fabs(i), np.signbit(i), np.rint(i)), i)


def test_an_op_missing_a_dtype_names_op_dtype_and_line() -> None:
    """A dtype NumPy has a loop for but the op's record lacks is refused while tracing, by name."""

    def f(x):
        return np.reciprocal(x)  # MARK

    with pytest.raises(et.UnsupportedError, match=r"np.reciprocal on int32 is not supported") as info:
        et.kernel(f)(np.ones(3, np.int32))
    assert "test_numeric_math.py" in str(info.value) and "# MARK" in str(info.value)
    with pytest.raises(et.UnsupportedError, match=r"np.invert\(tracer float32\[3\]\)"):
        et.kernel(lambda x: ~x)(np.ones(3, np.float32))
