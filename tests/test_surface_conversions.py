"""Conversions on traced arrays (issue 25; egglog_tensor/tracing/conversions.py): np.asarray, asanyarray,
array (copy, dtype=, copy=, ndmin=), ascontiguousarray, asfortranarray, astype(copy=), np.copy, .copy()
and the scalar types as functions (np.float32(x)...), against NumPy bit for bit, with its dtypes."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import arrays, check, dtypes, layouts

import egglog_tensor as et

rng = np.random.default_rng(19)
X = rng.standard_normal((3, 4)) * 50
NUMPY_FLOAT32 = np.float32  # bound before tracing: NumPy's own type


def exact(fn, *args):
    """fn compiled equals fn run by NumPy: dtypes, shapes and every bit."""
    return check(fn, *args, rtol=0, atol=0)


def _conversions(x):
    return (np.asarray(x), np.asanyarray(x), np.array(x), np.array(x, dtype=np.float32), np.array(x, copy=None, ndmin=3),
            np.asarray(x, dtype=np.int64), np.ascontiguousarray(x.T), np.asfortranarray(x), np.ascontiguousarray(x.max()),
            np.asfortranarray(x[0, 0], dtype=np.float64), x.astype(np.int32, copy=False), x.astype(x.dtype, copy=False),
            np.copy(x), x.copy(), np.astype(x, np.float32), x.astype(np.float64, "C", "safe"), x.astype(bool, casting="unsafe"))


@pytest.mark.filterwarnings("ignore:invalid value encountered in cast:RuntimeWarning")
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64, np.bool_])
def test_conversions_match_numpy(dtype) -> None:
    """Identity or a copy, converted to dtype= as NumPy converts; 0-d made 1-d by ascontiguousarray."""
    exact(_conversions, X.astype(dtype))


@settings(max_examples=8, deadline=None)  # a compilation each
@given(arrays(dtypes(), layout=layouts, special=True), st.sampled_from(["float32", "float64", "bool"]))
def test_drawn_arrays_convert_as_numpy_converts(x, target) -> None:
    """Any shape (0-d, size 0), dtype and layout, NaN and +-inf: the values NumPy's conversions give."""
    exact(lambda x: (np.asarray(x), np.array(x, dtype=target), np.ascontiguousarray(x), np.asfortranarray(x, dtype=target),
                     getattr(np, target)(x), np.array([x, x], ndmin=2)), x)


def _scalar_types(x):
    """(np.float32 & co. looked up while tracing: a name bound before, `from numpy import float32`, is NumPy's own)"""
    return sum(((np.float32(v), np.float64(v), np.int64(v), np.int32(v), np.bool_(v), np.double(v), np.bool(v))
                for v in (x, x[1, 2], x.min())), ())


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64])
def test_scalar_types_as_functions_match_numpy(dtype) -> None:
    """np.float32(x) of a traced array is x converted (any shape, as NumPy's call converts an array); floats
    to ints truncate toward zero."""
    exact(_scalar_types, X.astype(dtype))


@pytest.mark.parametrize("s", [2.75, -3, True])
def test_scalar_types_of_a_traced_python_number(s) -> None:
    """A Python-number argument (a run-time scalar) converted by a scalar type: a strong dtype after it (NEP 50)."""
    exact(lambda x, s: (x * np.float64(s), x * np.float32(s), np.int32(s) + x.astype(np.int32), np.bool_(s)),
          X.astype(np.float32), s)


def test_lists_of_traced_values_are_stacked_with_numpy_s_dtype() -> None:
    """np.array([a, b]) of traced scalars is a stack; Python numbers in the list count as int64/float64,
    as NumPy makes arrays of lists (float32 and 2 give float64)."""
    y = X[0].astype(np.float32)
    exact(lambda y: (np.array([y.min(), y.max(), 2]), np.array([[y, y * 2], [y, 1.5 + y]]), np.asarray((y[0], y[1])),
                     np.array([y[0], y[1]], dtype=np.float64), np.array([[1, 2], [3, y[0]]])), y)


def test_conversions_of_numbers_and_lists_in_a_kernel_are_numpy_s() -> None:
    """With no traced array inside, np.asarray & co. are NumPy's: a constant of the kernel."""
    exact(lambda y: (y + np.asarray([1, 2, 3, 4]), y * np.array(2.5, dtype=np.float32), y + np.ascontiguousarray(1)), X[0])


def test_a_copy_is_the_kernel_s_own_array() -> None:
    """np.array (copy=True) may be written into; np.asarray is the argument itself: writing into it changes
    the caller's array, as NumPy does."""

    def f(x):
        b = np.array(x)
        b[0] = 7.0
        return b

    exact(f, X)
    got, want = X.copy(), X.copy()
    want[0] = 1.0
    assert et.kernel(lambda x: np.asarray(x).__setitem__(0, 1.0))(got) is None
    np.testing.assert_array_equal(got, want)


def test_scalar_types_and_functions_are_numpy_s_again_after_tracing() -> None:
    originals = [np.float32, np.bool_, np.double, np.asarray, np.array]
    seen = et.kernel(lambda x: (x * isinstance(np.float32(1), np.float32), x * (x.dtype == np.float64),
                                x * (np.float64 == np.dtype("float64")), x * issubclass(np.float64, np.floating)))(X)
    for got in seen:
        np.testing.assert_array_equal(got, X)
    assert [np.float32, np.bool_, np.double, np.asarray, np.array] == originals
    assert all(a is b for a, b in zip([np.float32, np.bool_, np.double, np.asarray, np.array], originals, strict=True))
    assert type(np.float32(1)) is np.dtype("float32").type


@pytest.mark.parametrize(
    ("fn", "error", "message"),
    [
        (lambda x: np.asarray(x, dtype=np.float32, copy=False), et.TracingError, r"np.asarray\(copy=False\): unable to avoid a copy"),
        (lambda x: np.array([x[0], x[1]], copy=False), et.TracingError, r"unable to avoid a copy"),
        (lambda x: np.array([x, x[:2]]), et.TracingError, "inhomogeneous shape"),
        (lambda x: np.asarray(x, dtype=np.complex64), et.UnsupportedError, "dtype complex64 is not supported"),
        (lambda x: x.astype(np.float32, casting="safe"), et.TracingError, "Cannot cast array data from dtype.'float64'. to dtype.'float32'. according to the rule 'safe'"),
        (lambda x: NUMPY_FLOAT32(x), et.TracingError, "bound before tracing"),
        (lambda x: np.array([x, x], ndmax=1), et.UnsupportedError, "ndmax"),
        (lambda x: np.float32(x, 1), et.TracingError, r"np.float32\(\) takes one argument"),
    ],
)
def test_bad_conversions_raise_clear_errors(fn, error, message: str) -> None:
    with pytest.raises(error, match=message) as info:
        et.kernel(fn)(X[0])
    assert "test_surface_conversions.py" in str(info.value)


# --- what array-API wrappers ask of an array (SciPy's and scikit-learn's validation code) ------------------------
def _array_api_style(x, n):
    xp = x.__array_namespace__()
    y = xp.asarray(x)
    d = np.result_type(y, 1.0)  # a Python float stays weak: float32 data keeps float32
    w = np.array(y, copy=np._CopyMode.IF_NEEDED, dtype=d) * 2
    if np.may_share_memory(w, y):  # sklearn's check_array: copy when they may share memory
        w = np.array(w, copy=np._CopyMode.ALWAYS)
    assert x.device == "cpu" and np.result_type(x, np.float64, n) == np.float64
    return xp.cumulative_sum(w, axis=0) + np.zeros((), np.result_type(y.dtype, np.int8)), np.array(w, copy=np._CopyMode.NEVER)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_array_api_idioms_of_library_code(dtype) -> None:
    """`x.__array_namespace__()` (NumPy's namespace), `x.device`, np.result_type of traced values (weak Python
    numbers, NEP 50), np.may_share_memory, and NumPy's np._CopyMode spelling of copy=, as NumPy runs them."""
    exact(_array_api_style, X.astype(dtype), 3)


def test_may_share_memory_answers() -> None:
    """Two traced arrays may share memory (so a library copies: free here); a traced and a NumPy array never do."""
    got = et.kernel(lambda x: np.float64(np.may_share_memory(x, x[1:]) + 2 * np.may_share_memory(x, X)) + x[0, 0] * 0)(X)
    assert got == 1.0


def test_result_type_without_a_common_dtype_is_an_unsupported_error() -> None:
    with pytest.raises(et.UnsupportedError, match=r"np.result_type\(tracer datetime64|np.result_type\(tracer float64"):
        et.kernel(lambda x: x + np.zeros((), np.result_type(x, np.dtype("datetime64[s]"))))(X)


def test_unsupported_ndarray_attributes_are_attribute_errors() -> None:
    """`x.flags` on a traced array: a clear UnsupportedError that is also an AttributeError, so library code's
    getattr(x, "flags", None) (scikit-learn's check_array) and hasattr take their defaults."""
    def probe(x):
        flags = getattr(x, "flags", None)
        return x * (1 if flags is None and not hasattr(x, "strides") else 0)

    np.testing.assert_array_equal(et.kernel(probe)(X), X)
    with pytest.raises(et.UnsupportedError, match=r"ndarray.flags is not supported in a kernel") as info:
        et.kernel(lambda x: x.flags.writeable and x)(X)
    assert isinstance(info.value, AttributeError)


def test_asarray_chkfinite_raises_numpys_error_for_data_with_nan_at_each_call() -> None:
    """SciPy's check_finite: a guard on np.isfinite(a).all(), so each call checks its own data."""
    def f(x):
        a = np.asarray_chkfinite(x)
        return np.sqrt((a * a).sum())

    k = et.kernel(f)
    x = np.arange(5.0)
    np.testing.assert_allclose(k(x), f(x), rtol=1e-15)
    with pytest.raises(ValueError, match="array must not contain infs or NaNs"):
        k(np.array([1.0, np.nan, 2.0, 3.0, 4.0]))
    np.testing.assert_allclose(k(x + 1), f(x + 1), rtol=1e-15)


def test_functions_of_one_array_given_a_list_of_traced_arrays_stack_it() -> None:
    """`np.mean([a, b], axis=0)`, `np.transpose([q1, q2])` (scikit-learn's robust_scale), `np.polyval([c0, c1], x)`:
    NumPy dispatches on the list, not the arrays in it; while tracing the list is stacked first (tracing/sequences.py),
    numbers in it too, and the function is NumPy's again once the trace ends."""
    a = np.arange(6.0).reshape(2, 3)
    b = a[::-1] * 2

    def f(a, b):
        return (np.mean([a, b], axis=0), np.max((a, b), axis=0), np.transpose([a.sum(0), b.sum(0)]),
                np.median([a, b, a + b], axis=0), np.polyval([a.sum(), 2.0, b.max()], a), np.linalg.norm([a.sum(), b.sum()]),
                np.percentile([a[0], b[0]], 50, axis=0), np.mean([a, 1.0 + 0 * a], axis=0), np.shape([a, b]))

    mean = np.mean
    for got, want in zip(et.kernel(f)(a, b), f(a, b), strict=True):
        assert np.shape(got) == np.shape(want)
        np.testing.assert_allclose(got, want, rtol=1e-15)
    assert np.mean is mean and np.mean([1.0, 2.0]) == 1.5
