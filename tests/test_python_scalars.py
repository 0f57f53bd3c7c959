"""Python numbers outside the array's dtype, as NumPy 2 treats them (NEP 50; issue 22): an int
outside an integer dtype raises OverflowError (a constant when traced, an argument when called),
except in comparisons, which are exact; a float (or int) beyond float32's range becomes +-inf,
with NumPy's RuntimeWarning, bit for bit NumPy's result."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from strategies import check

import egglog_tensor as et

I32 = np.array([1, -5, 2**31 - 1, -(2**31), 0], np.int32)
F32 = np.array([1.0, -2.0, 0.0, -0.0, np.inf, -np.inf, np.nan, 3e38, 1e-45], np.float32)


@pytest.mark.parametrize(
    ("fn", "x", "message"),
    [
        (lambda x: x + 2**40, I32, "Python integer 1099511627776 out of bounds for int32"),
        (lambda x: x * 2**31, I32, "Python integer 2147483648 out of bounds for int32"),
        (lambda x: x - 2**32, I32, "Python integer 4294967296 out of bounds for int32"),
        (lambda x: np.maximum(x, -(2**40)), I32, "Python integer -1099511627776 out of bounds for int32"),
        (lambda x: x // 2**40, I32, "out of bounds for int32"),
        (lambda x: x.astype(np.int64) + 2**63, I32, "out of bounds for int64"),
        (lambda x: (x > 0) + 2**70, I32, "out of bounds for int64"),
    ],
)
def test_int_constant_outside_the_dtype_raises_overflow_error(fn, x: np.ndarray, message: str) -> None:
    with pytest.raises(OverflowError):
        fn(x)  # NumPy's own behaviour
    with pytest.raises(et.OutOfBoundsError, match=message) as info:
        et.kernel(fn)(x)
    assert isinstance(info.value, OverflowError) and "test_python_scalars.py" in str(info.value)


def _compare_huge(x):
    return x < 2**40, x == 2**40, 2**40 > x, x >= -(2**40), x != -(2**70), x < 2**70, x.astype(np.int64) < 2**63, x <= 5


def test_int_comparisons_with_out_of_range_ints_are_exact() -> None:
    check(_compare_huge, I32)


def _clip_huge(x):
    return np.clip(x, -(2**40), 5), np.clip(x, -3, 2**40), np.clip(x, -(2**40), 2**40)


def test_clip_bounds_beyond_the_dtype_do_not_bind() -> None:
    check(_clip_huge, I32)
    with pytest.raises(et.OutOfBoundsError):  # a bound that binds every element: NumPy raises too
        et.kernel(lambda x: np.clip(x, 2**40, None))(I32)


def test_where_with_an_int_beyond_the_dtype_raises_where_numpy_wraps() -> None:
    """docs/accuracy.md, Known differences: NumPy's `where` wraps 2**40 to int32 silently; here it is the error `+` gives."""
    assert np.where(I32 > 0, I32, 2**40).dtype == np.int32  # NumPy's own behaviour
    with pytest.raises(et.OutOfBoundsError, match="Python integer 1099511627776 out of bounds for int32"):
        et.kernel(lambda x: np.where(x > 0, x, 2**40))(I32)


def _add(x, n):
    return x + n


def _less(x, n):
    return x < n, x == n


def test_int_argument_outside_the_dtype_raises_at_call() -> None:
    f = et.kernel(_add)
    assert f(I32, 2**31 - 1).tolist() == (I32 + (2**31 - 1)).tolist()
    for n in (2**31, -(2**31) - 1, 2**40):
        with pytest.raises(OverflowError):
            I32 + n  # noqa: B018  (NumPy's own behaviour)
        with pytest.raises(et.OutOfBoundsError, match=f"argument 'n': Python integer {n} out of bounds for int32"):
            f(I32, n)
    for n in (3, 2**40, -(2**40)):  # comparisons take any int64 argument exactly
        got, want = et.kernel(_less)(I32, n), _less(I32, n)
        assert all(np.array_equal(g, w) for g, w in zip(got, want, strict=True))


def test_int_argument_beyond_int64_is_a_clear_error() -> None:
    """A Python int argument is passed as int64: one beyond it is an OutOfBoundsError naming the
    argument, on the first call and on the fast path after it, never a raw OverflowError from NumPy."""
    f = et.kernel(_add)
    x = np.ones(3)
    assert f(x, -(2**63)).tolist() == (x - 2.0**63).tolist()
    for n in (2**63, -(2**63) - 1, 2**70):
        with pytest.raises(et.OutOfBoundsError, match=f"argument 'n': Python integer {n} out of bounds for int64"):
            f(x, n)
    assert f(x, 2**62).tolist() == (x + 2**62).tolist()


@pytest.mark.parametrize(
    "fn",
    [
        lambda x: x / 2.0**130,
        lambda x: x * 1e300,
        lambda x: x + 1e39,
        lambda x: x - 1e39,
        lambda x: x * 2**200,
        lambda x: np.maximum(x, -1e39),
        lambda x: x < 1e39,
    ],
)
def test_float_beyond_float32_range_is_inf_as_in_numpy(fn) -> None:
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        want = fn(F32)
    with pytest.warns(RuntimeWarning, match="overflow encountered in cast"):
        got = et.kernel(fn, cache=False)(F32)
    assert got.dtype == want.dtype and got.tobytes() == want.tobytes(), (got, want)
