"""Issue 25 leftovers: NumPy's own code calling np.zeros inside a kernel, complex
dtypes refused, keyword-only parameters, and dict/list/tuple (pytree) arguments and results."""

from __future__ import annotations

import numpy as np
import pytest

import egglog_tensor as et
from egglog_tensor.errors import KernelArgumentError


# --- NumPy's internals calling creation functions -------------------------------------------------
def test_a_random_generator_made_inside_a_kernel_is_a_constant_and_np_zeros_is_still_traced() -> None:
    def f(x):
        rng = np.random.default_rng(0)
        c = rng.standard_normal((4, 4))
        b = np.zeros((4, 4))
        b[1:] = x[1:] * c[1:]
        return b

    x = np.linspace(-1.0, 1.0, 16).reshape(4, 4)
    k = et.kernel(f)
    np.testing.assert_array_equal(k(x), f(x))
    np.testing.assert_array_equal(k(2 * x), f(2 * x))  # b is traced: it depends on the new x


def test_np_zeros_bound_to_another_name_in_user_code_is_traced() -> None:
    def f(x):
        z = np.zeros
        b = z(x.shape)
        b[0] = x[0]
        return b

    x = np.arange(6.0).reshape(2, 3)
    np.testing.assert_array_equal(et.kernel(f)(x), f(x))


def test_a_helper_in_user_code_calling_np_zeros_is_traced() -> None:
    def buffer(n):
        return np.zeros((n, n), np.float32)

    def f(x):
        b = buffer(3)
        b[1] = x
        return b

    x = np.arange(3, dtype=np.float32)
    np.testing.assert_array_equal(et.kernel(f)(x), f(x))


# --- complex dtypes ----------------------------------------------------------------------------------
@pytest.mark.parametrize("value", [np.ones(3, np.complex128), np.ones(3, np.complex64), [1j, 2], 1j])
def test_complex_arguments_raise_naming_the_supported_dtypes(value) -> None:
    with pytest.raises(KernelArgumentError, match=r"complex.*supported.*float32.*float64.*int64"):
        et.kernel(lambda x: x * 2)(value)
