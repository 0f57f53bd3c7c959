"""NumPy functions composed of elementwise ops (egglog_tensor/tracing/elementwise.py): round/around
with decimals, nan_to_num, float_power and diff, bit for bit NumPy's (dtypes, NaN, infinities,
signed zeros), one kernel per function holding every case."""

from __future__ import annotations

import numpy as np
import pytest
from strategies import check

import egglog_tensor as et

rng = np.random.default_rng(2511)
SPECIAL = np.array([np.nan, np.inf, -np.inf, -0.0, 0.0, 0.5, 1.5, 2.5, -2.5, 1e30, -1e-30, 123.456789])
I = rng.integers(-999, 999, (5, 7))


def exact(fn, *args):
    return check(fn, *args, rtol=0, atol=0)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_round_with_decimals(dtype) -> None:
    x = np.concatenate([SPECIAL, rng.standard_normal(52) * 1e3]).astype(dtype).reshape(8, 8)
    exact(lambda x: (np.round(x), np.round(x, 2), np.around(x, -2), x.round(1),
                     np.round(x, 12), np.round(x * 1e-3, 5)), x)


def test_round_of_integers() -> None:
    exact(lambda i: (np.round(i), np.round(i, 3), np.round(i, -1), np.around(i.astype(np.int32), -2)), I)


def test_nan_to_num() -> None:
    x = np.concatenate([SPECIAL, rng.standard_normal(4)])
    exact(lambda x: (np.nan_to_num(x), np.nan_to_num(x, nan=-1.0, posinf=9.0, neginf=-9.0),
                     np.nan_to_num(x.astype(np.float32)), np.nan_to_num(x.astype(np.float32), posinf=1e300)), x)
    exact(lambda i: (np.nan_to_num(i), np.nan_to_num(i > 0)), I)


def test_float_power_is_in_float64() -> None:
    x = np.abs(rng.standard_normal(20)).astype(np.float32) * 3
    out = exact(lambda x, i: (np.float_power(x, 2), np.float_power(x, 0.5), np.float_power(i, 3), np.float_power(2, x),
                              np.float_power(x, -1.5)), x, I[0, :5])
    assert all(o.dtype == np.float64 for o in out)
    exact(lambda x: np.float_power(x, 0.5), np.array([-np.inf, -0.0, 0.0, 4.0]))  # C pow's special values, not sqrt's


def test_diff() -> None:
    x = rng.standard_normal((4, 6)).astype(np.float32)
    exact(lambda x: (np.diff(x), np.diff(x, axis=0), np.diff(x, n=2), np.diff(x, n=0), np.diff(x, n=3, axis=0),
                     np.diff(x, prepend=0), np.diff(x, append=x[:, :1]), np.diff(x, axis=0, prepend=0.5, append=np.ones((1, 6)))), x)
    exact(lambda i: (np.diff(i), np.diff(i > 0), np.diff(i, axis=-2, n=2)), I)


def test_bad_arguments_name_the_problem() -> None:
    with pytest.raises(et.TracingError, match="at least one dimensional"):
        et.kernel(lambda x: np.diff(x.sum()))(np.ones(3))
    with pytest.raises(et.TracingError, match="non-negative"):
        et.kernel(lambda x: np.diff(x, n=-1))(np.ones(3))
    with pytest.raises(et.UnsupportedError, match="bool"):
        et.kernel(lambda x: np.round(x > 0))(np.ones(3))


@pytest.mark.parametrize("fn", [lambda a, b: a - b, lambda a, b: -a, lambda a, b: np.subtract(a, True)],
                         ids=["bool - bool", "-bool", "np.subtract(bool, True)"])
def test_ufuncs_numpy_has_no_loop_for_raise_numpys_type_error(fn) -> None:
    """NumPy raises TypeError for boolean subtract and negative: the kernel raises a TypeError too (an
    et.UFuncTypeError), with NumPy's message and the call's source line."""
    a = np.array([True, False, True])
    with pytest.raises(TypeError) as numpy_error:
        fn(a, a)
    with pytest.raises(et.UFuncTypeError) as ours:
        et.kernel(fn, target="cpu")(a, a)
    assert isinstance(ours.value, TypeError) and isinstance(ours.value, et.UnsupportedError)
    assert str(numpy_error.value) in str(ours.value) and "test_surface_elementwise.py" in str(ours.value)
