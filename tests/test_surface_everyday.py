"""Everyday NumPy functions decomposed at trace time into existing primitives, against NumPy on real
inputs with NaN, inf and signed zeros, in float16/float32/float64 and ints: isclose/allclose, fmax/fmin,
nanargmax/nanargmin, real/imag/conj, sinc. Several functions share one kernel to keep compiles few."""

from __future__ import annotations

import numpy as np
import pytest
from strategies import check, reference

import egglog_tensor as et


def _pair(dtype: str) -> tuple[np.ndarray, np.ndarray]:
    """a and a nearly equal b (ints: equal but for one), with NaN, inf, -inf, signed zeros and a far pair."""
    a = np.arange(-6, 14).reshape(4, 5).astype(dtype)
    b = a.copy()
    b[3, 4] += 7
    if a.dtype.kind == "f":
        b += np.asarray(1e-6, dtype) * a
        a[0, 1] = b[0, 1] = np.nan
        b[1, 2] = np.nan
        a[2, 0] = np.nan
        a[2, 3], b[2, 3], a[3, 0], b[3, 0] = np.inf, np.inf, -np.inf, np.inf
        a[1, 0], b[1, 0], a[1, 1], b[1, 1] = -0.0, 0.0, 0.0, -0.0
    return a, b


def _per_dtype(fn):
    """fn over several arrays (or pairs) at once: one compiled kernel for all the dtypes of a test."""
    return lambda *arrays: tuple(out for args in zip(*(iter(arrays),) * fn.__code__.co_argcount) for out in fn(*args))


def closeness(a, b):
    return (np.isclose(a, b), np.isclose(a, b, rtol=1e-3, atol=0.5, equal_nan=True), np.isclose(a, 2), np.isclose(3.0, a),
            np.fmax(a, b), np.fmin(a, b), np.fmax(a, 2), np.fmin(b, a[0]), np.maximum.reduce(np.fmax(a, b), axis=0))


CLOSENESS = _per_dtype(closeness)


def test_isclose_fmax_fmin_match_numpy() -> None:
    """Bit for bit but the sign of fmax(-0.0, 0.0) (NumPy's depends on the array's length), in float16..float64, int32 and uint8."""
    check(CLOSENESS, *(v for dtype in ("float16", "float32", "float64", "int32", "uint8") for v in _pair(dtype)), rtol=0, atol=0, signed_zeros=False)


def allclose(a, b):
    return np.allclose(a, b), np.allclose(a, a), np.allclose(a, a, equal_nan=True), np.allclose(a, b, rtol=0.5, atol=9, equal_nan=True)


def test_allclose_is_a_0d_bool() -> None:
    """NumPy returns a Python bool; the kernel a NumPy bool of the same value."""
    pairs = [v for dtype in ("float32", "float64", "int64") for v in _pair(dtype)]
    got, want = et.kernel(_per_dtype(allclose))(*pairs), [reference(allclose, *pairs[i:i + 2]) for i in (0, 2, 4)]
    assert all(type(g) is np.bool_ for g in got) and [bool(g) for g in got] == [w for ws in want for w in ws]
    assert not all(got)  # some are False: the test can fail


def nan_indices(a):
    return (np.nanargmax(a), np.nanargmin(a), np.nanargmax(a, axis=0), np.nanargmin(a, axis=1), np.nanargmax(a, axis=-1, keepdims=True),
            a.real, np.real(a), np.imag(a), a.imag, np.conj(a), np.conjugate(a), a.conj(), np.sinc(a))


def _with_inf_row(dtype: str) -> np.ndarray:
    """_pair's a with a row of equal values, and -inf in a row that has NaN (ints and bools: no NaN)."""
    if dtype == "bool":
        return _pair("int8")[0] > 2
    a = np.concatenate([_pair(dtype)[0], np.full((1, 5), 0.25 if dtype[0] == "f" else 1, dtype)])
    if dtype[0] == "f":
        a[2, 1] = -np.inf
    return a


def test_nanargmax_real_imag_conj_sinc_match_numpy() -> None:
    """float16 to float64, int16 and bool (np.sinc of bool is float16; conj of bool int8); sinc to float16's rounding."""
    check(_per_dtype(nan_indices), *(_with_inf_row(d) for d in ("float16", "float32", "float64", "int16", "bool")), rtol=2e-3, atol=0)


def test_sinc_float64_to_rounding() -> None:
    x = np.concatenate([np.linspace(-5, 5, 41), [0.0, -0.0, 1e-300, np.inf, -np.inf, np.nan, 1e8]])
    check(lambda x: (np.sinc(x), np.sinc(x.astype(np.float32))), x, rtol=1e-6)


def test_nanargmax_of_an_all_nan_slice_is_minus_one() -> None:
    """NumPy raises ValueError (the values decide it): the kernel gives -1, as jax.numpy."""
    a = np.array([[np.nan, np.nan, np.nan], [1.0, np.nan, 3.0], [-np.inf, np.nan, -np.inf]], np.float32)
    got = et.kernel(lambda a: (np.nanargmax(a, axis=1), np.nanargmin(a, axis=1), np.nanargmax(a[:, 1])))(a)
    np.testing.assert_array_equal(got[0], [-1, 2, 0])
    np.testing.assert_array_equal(got[1], [-1, 0, 0])
    assert got[2] == -1
    np.testing.assert_array_equal(np.nanargmax(a[1:], axis=1), got[0][1:])
    with pytest.raises(ValueError, match="All-NaN"):
        np.nanargmax(a, axis=1)
