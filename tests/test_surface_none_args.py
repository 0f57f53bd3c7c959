"""None arguments (a parameter's `=None` default, or None passed) are constants of the program, as in JAX:
code like scikit-learn's `gamma=None` ... `if gamma is None: gamma = 1.0 / X.shape[1]` compiles unchanged."""

from __future__ import annotations

import numpy as np
import pytest

import egglog_tensor as et


def scaled_gram(X: np.ndarray, gamma: float | None = None, coef0: float = 1.0) -> np.ndarray:
    """sklearn's sigmoid_kernel shape: gamma defaults to 1 / n_features when None."""
    if gamma is None:
        gamma = 1.0 / X.shape[1]
    return np.tanh(X @ X.T * gamma + coef0)


X = np.random.default_rng(0).standard_normal((6, 4))


def test_none_default_is_a_constant() -> None:
    """The default None takes the `is None` branch, and matches NumPy."""
    k = et.kernel(scaled_gram)
    np.testing.assert_allclose(k(X), scaled_gram(X), rtol=1e-13)
    np.testing.assert_allclose(k(X), scaled_gram(X), rtol=1e-13)  # (a second call: the same specialization)
    assert len(k.compilations) == 1


def test_none_passed_and_a_number_passed() -> None:
    """None passed positionally is the same constant; a number there stays a run-time argument (one more kernel for all values)."""
    k = et.kernel(scaled_gram)
    np.testing.assert_allclose(k(X, None), scaled_gram(X, None), rtol=1e-13)
    for gamma in (0.5, 2.0):
        np.testing.assert_allclose(k(X, gamma), scaled_gram(X, gamma), rtol=1e-13)
    np.testing.assert_allclose(k(X, None, 3.0), scaled_gram(X, None, 3.0), rtol=1e-13)
    assert len(k.compilations) == 2


def test_none_reaching_arithmetic_is_a_clear_error() -> None:
    """A None the code computes with is an UnsupportedError naming the line (NumPy: TypeError), not an argument error."""
    def f(x: np.ndarray, y: None = None) -> np.ndarray:
        return x + y

    with pytest.raises(et.UnsupportedError, match="NoneType.*\\n.*return x \\+ y"):
        et.kernel(f)(X)
