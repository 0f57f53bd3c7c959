"""Dtypes against NumPy: astype between every pair, promotion of mixed arrays, NEP 50 weak Python
scalars (`A * 2.0` stays float32), scalar kernel arguments (Python numbers, NumPy scalars, 0-d
arrays), 0-d results as NumPy scalars, and multiple outputs of different dtypes."""

from __future__ import annotations

import functools
import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import ALL_DTYPES, FLOATS, NUMERIC, arrays, check, compare, kernel_of, layouts, make_array, reference, shapes, sweep

# --- astype -------------------------------------------------------------------------------------


def _astype_all(a):
    outs = []
    for target in ALL_DTYPES:
        outs += [a.astype(target), np.astype(a, target)]
    return (*outs, (a * 1).astype(np.float32) if a.dtype != bool else np.logical_not(a).astype(np.int32))


@pytest.mark.parametrize("src", ALL_DTYPES)
@settings(max_examples=4)
@given(data=st.data())
def test_astype(src: str, data: st.DataObject) -> None:
    """src.astype(every dtype), method and function spellings, in one kernel."""
    # float -> int casts of NaN/inf/out-of-range values are undefined in C and NumPy: stay in range.
    a = data.draw(arrays(src, shapes(max_dims=2), layout=layouts, lo=-100, hi=100))
    check(_astype_all, a)


def _float_special_casts(a):
    return a.astype(np.float32), a.astype(np.float64), a.astype(bool), np.float32(1) * a.astype(np.float32)


@pytest.mark.parametrize("src", FLOATS)
def test_astype_special_values(src: str) -> None:
    """NaN, +-inf and -0.0 through float casts and to bool (NaN is True)."""
    check(_float_special_casts, make_array(9, src, (40,), special=True, lo=-1e6, hi=1e6))


def test_astype_exact_values() -> None:
    """Truncation toward zero, -0.0 and fractions to bool, large int64 to float32 rounding."""
    f = np.array([-2.7, -0.5, -0.0, 0.0, 0.4, 2.5, 1e9, -1e9], np.float64)
    i = np.array([-(2**62) - 1, -7, 0, 1, 2**31 + 5, 2**53 + 1], np.int64)
    check(lambda f, i: (f.astype(np.int32), f.astype(np.int64), f.astype(bool), f.astype(np.float32),
                        i.astype(np.int32), i.astype(np.float32), i.astype(np.float64), i.astype(bool)), f, i)


def splitmix64(x):
    z = x + np.uint64(0x9E3779B97F4A7C15)
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


def fnv1a64(b):
    h = np.full(b.shape[0], 0xCBF29CE484222325, np.uint64)
    for j in range(b.shape[1]):
        h = (h ^ b[:, j]) * np.uint64(0x100000001B3)
    return h


def test_64_bit_integer_constants_beyond_2_53() -> None:
    """Hashes and generators use 64-bit constants the term's f64 values would round (made of two 32-bit halves):
    splitmix64, FNV-1a, and int64 constants of every sign, bit for bit."""
    x = np.arange(1000, dtype=np.uint64) * np.uint64(2654435761)
    check(splitmix64, x)
    check(fnv1a64, np.random.default_rng(0).integers(0, 256, (100, 8)).astype(np.uint64))
    check(lambda i: (i * -7046029254386353131, i & 0x7FFFFFFFFFFFFFF0, i + (-(2**63)), i - 2**62 * 3 // 2, i * 0 + (2**53 + 1)),
          np.arange(-5, 5, dtype=np.int64))


# --- promotion of arrays --------------------------------------------------------------------------


@pytest.mark.parametrize(("da", "db"), list(itertools.combinations(ALL_DTYPES, 2)))
def test_mixed_array_promotion(da: str, db: str) -> None:
    a = make_array(1, da, (3, 4), lo=-5, hi=5)
    b = make_array(2, db, (4,), lo=1, hi=5)
    if "bool" in (da, db) and np.result_type(da, db) == np.bool_:
        check(lambda a, b: (a + b, a * b, a == b, np.maximum(a, b), np.where(a, b, a)), a, b)
    else:
        check(lambda a, b: (a + b, a - b, a * b, a / b, a < b, np.maximum(a, b), np.where(a > b, a, b),
                            np.concatenate([a, b[None]])), a, b)


# --- NEP 50: weak Python scalars inside the function -------------------------------------------------

WEAK = {
    "mul_float": lambda a: a * 2.0,
    "radd_float": lambda a: 0.5 + a,
    "add_int": lambda a: a + 3,
    "rsub_int": lambda a: 7 - a,
    "div_int": lambda a: a / 2,
    "floordiv_int": lambda a: a // 2,
    "pow_int": lambda a: a**2,
    "pow_float": lambda a: a**0.5,
    "rpow": lambda a: 2.0**a,
    "cmp_float": lambda a: a < 0.5,
    "maximum_float": lambda a: np.maximum(a, 1.5),
    "where_scalars": lambda a: np.where(a > 1, 2.5, -1),
    "clip": lambda a: np.clip(a, -1.5, 2),
    "bool_scalar": lambda a: a * True,
    "strong_f64": lambda a: a * np.float64(2.0),
    "strong_f32": lambda a: a + np.float32(0.25),
    "strong_i32": lambda a: a - np.int32(3),
    "strong_0d_array": lambda a: a * np.array(2.0),
    "chain": lambda a: (a * 2.0 + 1) / 3 - 0.5,
}


def _weak_cases(dtype: str) -> list[str]:
    # NumPy rejects bool - int; bool ** 2 is np.square(bool), int8 in NumPy (not a supported dtype)
    return [c for c in sorted(WEAK) if not (dtype == "bool" and c in ("rsub_int", "strong_i32", "pow_int"))]


@functools.cache
def _weak_kernel_fn(dtype: str):
    cases = _weak_cases(dtype)
    return lambda a: tuple(WEAK[c](a) for c in cases)


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_weak_scalars(dtype: str) -> None:
    """The result dtype is NumPy's under NEP 50 (float32 * 2.0 is float32, int32 + 3 is int32);
    every case of WEAK is one output of a single kernel."""
    a = make_array(3, dtype, (2, 5), lo=0, hi=4)
    try:
        check(_weak_kernel_fn(dtype), a)
    except AssertionError as e:
        raise AssertionError(f"outputs are the cases {_weak_cases(dtype)}: {e}") from None


# --- scalar arguments ---------------------------------------------------------------------------

SCALARS = {
    "py_float": 2.5,
    "py_int": 3,
    "py_negative_int": -2,
    "py_bool": True,
    "np_float32": np.float32(1.25),
    "np_float64": np.float64(-0.75),
    "np_int32": np.int32(4),
    "np_int64": np.int64(-3),
    "np_bool": np.bool_(False),
    "0d_float32": np.array(0.5, np.float32),
    "0d_int64": np.array(2, np.int64),
}


def _with_scalar(a, s):
    return a * s, s + a, np.maximum(a, s), a > s, np.where(a > 0, s, a)


def _with_scalar_all_dtypes(f32, f64, i32, i64, s):
    return tuple(r for a in (f32, f64, i32, i64) for r in _with_scalar(a, s))


@pytest.mark.parametrize("scalar", sweep(sorted(SCALARS), ["py_float", "py_int", "np_bool", "0d_float32"]))
def test_scalar_arguments(scalar: str) -> None:
    """A Python number argument is weak like a literal; NumPy scalars and 0-d arrays are not.
    One kernel applies the scalar to arrays of every numeric dtype (5 outputs per dtype)."""
    arrays_ = [make_array(4, dt, (3, 2), lo=-3, hi=3) for dt in NUMERIC]
    check(_with_scalar_all_dtypes, *arrays_, SCALARS[scalar])


def _only_scalars(x, y):
    return x * y + 1, x / y, x > y


@pytest.mark.parametrize(("x", "y"), [(np.float32(1.5), 2.0), (np.int32(7), 2), (np.float32(3), np.float64(2)), (np.bool_(True), 2)])
def test_scalar_only_kernels(x, y) -> None:
    """Kernels of scalars only: 0-d results come back as NumPy scalars of NumPy's dtype."""
    got = check(_only_scalars, x, y)
    assert all(isinstance(g, np.generic) for g in got)
    again = check(_only_scalars, x, y)  # the second call takes the fast dispatch path
    assert all(isinstance(g, np.generic) for g in again)


@pytest.mark.parametrize(("x", "y"), [(2.5, 4), (3, 4), (True, 2), (3, True), (-7, 2.0)])
def test_python_number_only_kernels(x, y) -> None:
    """With Python numbers only, a kernel computes like NumPy on default-dtype scalars (int64,
    float64, bool) and returns NumPy scalars (eager Python would give Python numbers)."""
    as_numpy = [np.bool_(v) if type(v) is bool else np.int64(v) if type(v) is int else np.float64(v) for v in (x, y)]
    got = kernel_of(_only_scalars)(x, y)
    for g, w in zip(got, reference(_only_scalars, *as_numpy), strict=True):
        compare(g, w, None, None, True, "result")


def test_python_scalar_argument_kinds_compile_separately() -> None:
    """The same kernel called with a float, an int and a NumPy float32 gives each NumPy's dtype."""
    a = make_array(5, "float32", (4,))
    for s in (2.0, 2, np.float32(2), np.float64(2), np.int64(2)):
        check(_with_scalar, a, s)
    a = make_array(5, "int32", (4,), lo=-5, hi=5)
    for s in (2.0, 2, np.int32(2), np.int64(2)):
        check(_with_scalar, a, s)


# --- 0-d results, constants, multiple outputs -------------------------------------------------------------


def _zero_d(a, b):
    return a.sum(), (a * b).max(), np.mean(a), a[0, 0], np.dot(a[0], b[:, 0]), np.float32(2) * a.min(), np.trace(a @ b)


@pytest.mark.parametrize("dtype", NUMERIC)
def test_zero_d_results(dtype: str) -> None:
    a, b = make_array(6, dtype, (3, 3), lo=-3, hi=3), make_array(7, dtype, (3, 3), lo=-3, hi=3)
    got = check(_zero_d, a, b, rtol=1e-5 if dtype == "float32" else None, atol=1e-4 if dtype == "float32" else None)
    assert all(isinstance(g, np.generic) for g in got)


def _mixed_outputs(a):
    return a, a > 0, (a * 2).astype(np.int32), a.sum(axis=0).astype(np.float64), np.pi * a, a.T


@pytest.mark.parametrize("dtype", FLOATS)
@settings(max_examples=6)
@given(data=st.data())
def test_multiple_outputs_of_different_dtypes(dtype: str, data: st.DataObject) -> None:
    a = data.draw(arrays(dtype, shapes(min_dims=2, max_dims=2), layout=layouts, lo=-5, hi=5))
    check(_mixed_outputs, a, rtol=1e-4 if dtype == "float32" else None, atol=1e-4 if dtype == "float32" else None)


def test_tuple_and_list_returns() -> None:
    a = make_array(8, "float64", (3,))
    check(lambda a: (a,), a)
    got = et_list(a)
    assert isinstance(got, list) and len(got) == 2  # (a list comes back as a list, as in JAX: docs/calling.md)


def et_list(a):
    from strategies import kernel_of

    fn = lambda a: [a + 1, a * 2]  # noqa: E731
    got = kernel_of(fn)(a)
    want = fn(a)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_array_equal(g, w)
    return got
