"""Python arguments (issue 25; egglog_tensor/kernel.py, spec.py): numbers, lists and tuples used where
tracing needs their value (a shape, slice bound, loop count, axis, branch) are specialized on it, one
compilation per value, with a SpecializationWarning past SPECIALIZATION_LIMIT values; used only in
arithmetic they stay run-time arguments; a list or tuple where an array is expected is np.asarray's
array; ragged lists and complex numbers raise KernelArgumentError."""

from __future__ import annotations

import importlib
import re
import warnings

import numpy as np
import pytest
from strategies import check

import egglog_tensor as et

kernel_module = importlib.import_module("egglog_tensor.kernel")  # (the package's `kernel` attribute is the function; imported: it is lazy)

X = np.arange(24.0)


def exact(fn, *args):
    """fn compiled equals fn run by NumPy: dtypes, shapes and every bit."""
    return check(fn, *args, rtol=0, atol=0)


def reshaped(x, n):
    return x.reshape(n, -1).sum(axis=0)


def test_a_reshape_by_n_compiles_once_per_n() -> None:
    k = et.kernel(reshaped)
    for n in (4, 6, 4, 3, 6):
        np.testing.assert_array_equal(k(X, n), reshaped(X, n))
    assert sorted(c.static for c in k.compilations) == [(("n", 3),), (("n", 4),), (("n", 6),)]


def test_an_int_used_in_arithmetic_compiles_once_for_all_values() -> None:
    k = et.kernel(lambda x, n: x * n + n // 2)
    for n in (2, 3, 7, -5):
        np.testing.assert_array_equal(k(X, n), X * n + n // 2)
    assert len(k.compilations) == 1 and k.compilations[0].static == ()


def npbench_style(x, n, steps, axis, flip, shape, offsets):
    """Every place tracing needs a value: np.zeros(n), slice bounds, range(), axis=, a branch, a shape,
    a list read as numbers (offsets[0]); `n` also in arithmetic."""
    b = np.zeros(n) + x[:n] * n
    for i in range(steps):
        b[i + 1 : n] += b[i : n - 1]
    y = x.reshape(shape).sum(axis=axis)
    return (b[::-1] if flip else b), y, x[offsets[0] : offsets[1]] * 2


@pytest.mark.parametrize("args", [(5, 2, 0, True, (4, 6), [1, 4]), (8, 3, 1, False, [2, 3, 4], (0, 24)), (1, 0, -1, False, (24,), [3, 3])])
def test_every_kind_of_value_use_matches_numpy(args) -> None:
    exact(npbench_style, X, *args)


def test_specializations_of_bools_tuples_and_lists() -> None:
    k = et.kernel(npbench_style)
    for args in [(5, 2, 0, True, (4, 6), [1, 4]), (5, 2, 0, True, [4, 6], (1, 4)), (5, 2, 0, False, (4, 6), [1, 4])]:
        for got, want in zip(k(X, *args), npbench_style(X, *args), strict=True):
            np.testing.assert_array_equal(got, want)
    assert len(k.compilations) == 2  # a list and a tuple of the same numbers are one value
    assert {dict(c.static)["flip"] for c in k.compilations} == {True, False}


def test_many_values_warn_once(monkeypatch) -> None:
    monkeypatch.setattr(kernel_module, "SPECIALIZATION_LIMIT", 2)
    k = et.kernel(reshaped)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        for n in (1, 2, 3, 4, 3):
            k(X, n)
    (warning,) = seen
    assert warning.category is et.SpecializationWarning and warning.filename == __file__
    assert "argument 'n' has been specialized on 3 distinct values" in str(warning.message)
    assert "static_argnames=('n',)" in str(warning.message)


def test_static_argnames_says_it_is_intended(monkeypatch) -> None:
    monkeypatch.setattr(kernel_module, "SPECIALIZATION_LIMIT", 1)
    k = et.kernel(reshaped, static_argnames="n")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for n in (1, 2, 3):
            np.testing.assert_array_equal(k(X, n), reshaped(X, n))


def test_a_numpy_scalar_stays_a_runtime_value_its_use_as_a_shape_a_guard() -> None:
    """np.int64(n) is never specialized on as a Python number: used as a shape it is a guard (tests/test_guards.py)."""
    k = et.kernel(reshaped)
    for n in (4, 6, 4):
        np.testing.assert_array_equal(k(X, np.int64(n)), reshaped(X, n))
    assert [c.guards[0].value for c in k.compilations] == [4, 6]
    assert all(c.specs[1].weak is None for c in k.compilations)


def test_a_value_computed_from_array_data_is_a_guard() -> None:
    def f(x, n):
        return x.reshape(int(n * x[0] + 2), -1)

    k = et.kernel(f)
    np.testing.assert_array_equal(k(X, 3), f(X, 3))
    (guard,) = k.inspect(X, 3).guards
    assert guard.value == 2 and "test_surface_arguments.py" in guard.where


def test_staged_api_specializes_too() -> None:
    k = et.kernel(reshaped)
    compiled = k.trace(X, 4).optimize().lower().compile()
    np.testing.assert_array_equal(compiled(X, 4), reshaped(X, 4))
    with pytest.raises(et.KernelArgumentError, match=re.escape("compiled for (x: float64[24], n=4), called with (x: float64[24], n=6)")):
        compiled(X, 6)


@pytest.mark.parametrize(
    "value",
    [[1, 2, 3], [1.5, 2, -3], [True, False, True], [[1, 2], [3, 4]], (0.5, 1.5), [[True], [False]], [], [2**62, -1]],
    ids=["ints", "floats", "bools", "nested", "tuple", "nested-bools", "empty", "large"],
)
def test_a_list_where_an_array_is_expected_is_numpy_s_array(value) -> None:
    """int64 for ints, float64 for floats, bool for bools, N-D for nested lists, as np.asarray makes them."""
    k = et.kernel(lambda a, s: (np.asarray(a) * s, np.sum(a, axis=0), np.maximum(a, 0)))
    for got, want in zip(k(value, 3), (np.asarray(value) * 3, np.sum(value, axis=0), np.maximum(value, 0)), strict=True):
        assert got.dtype == want.dtype and np.shape(got) == np.shape(want)
        np.testing.assert_array_equal(got, want)


def test_lists_of_other_lengths_compile_their_own() -> None:
    k = et.kernel(lambda a: a * 2)
    for value in ([1, 2], [1, 2, 3], [4, 5]):
        np.testing.assert_array_equal(k(value), np.asarray(value) * 2)
    assert len(k.compilations) == 2


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ([[1.0], [2.0, 3.0]], "argument 'b': NumPy cannot make an array of this list: setting an array element with a sequence"),
        (2 + 1j, "argument 'b': dtype complex128 is not supported (supported: "),
        ([1j, 2], "argument 'b': dtype complex128 is not supported (supported: "),
        ((1.0, 2j), "argument 'b': dtype complex128 is not supported (supported: "),
        ([2**70], "argument 'b': dtype object is not supported"),
        (["a"], "argument 'b': dtype <U1 is not supported"),
    ],
)
def test_bad_python_arguments_raise_kernel_argument_error(value, message: str) -> None:
    with pytest.raises(et.KernelArgumentError, match=re.escape(message)):
        et.kernel(lambda a, b: a + b)(X, value)


def test_strings_dtypes_and_types_are_constants_one_compilation_each() -> None:
    """A str, dtype or type argument is never data: a constant, as None is (branches and astype read it)."""
    def f(x, mode="sum", dtype=np.float64):
        return x.astype(dtype).sum() if mode == "sum" else x.max()

    k = et.kernel(f)
    for args in [(), ("max",), ("sum", np.float32), ("sum", np.dtype("int16"))]:
        got, want = k(X, *args), f(X, *args)
        assert got == want and got.dtype == want.dtype, args
    assert len(k.compilations) == 4


@pytest.mark.parametrize("fn", [np.expm1, np.arctan2, np.add, np.isnan, np.sum, np.var, np.max, np.nanprod, np.cumsum, np.argmax],
                         ids=lambda f: f.__name__)
def test_numpy_functions_themselves_as_kernels(fn) -> None:
    """et.kernel(np.exp): a ufunc's operands are its parameters; a function binding NumPy's `_NoValue` defaults
    (np.sum's initial=, where=) passes them as not given."""
    args = (X,) * (fn.nin if isinstance(fn, np.ufunc) else 1)
    got, want = et.kernel(fn)(*args), fn(*args)
    np.testing.assert_allclose(got, want, rtol=1e-12)
    assert np.asarray(got).dtype == np.asarray(want).dtype
