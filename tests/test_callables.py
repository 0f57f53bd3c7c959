"""Kernels of callables without `__name__` (issue 22): a functools.partial's bound keyword
arguments are constants of the traced program, not parameters; a callable object is traced through
its `__call__`. Errors name them (`partial(f)`)."""

from __future__ import annotations

import functools

import numpy as np
import pytest

import egglog_tensor as et

X = np.arange(6.0, dtype=np.float32).reshape(2, 3)


def scaled(x, s):
    return x * s


def affine(x, y, s=1.0, t=2):
    return x * s + y * t


class AddOne:
    def __call__(self, x):
        return x + 1


def test_partial_bound_keyword_is_a_constant() -> None:
    f = et.kernel(functools.partial(scaled, s=4.0))
    np.testing.assert_array_equal(f(X), X * 4.0)
    assert "4.0" in f.inspect(X).stage("traced") and f.inspect(X).name == "partial(scaled)"
    np.testing.assert_array_equal(et.kernel(functools.partial(scaled, 2.0))(X), X * 2.0)  # bound positionally
    g = et.kernel(functools.partial(affine, t=3))
    np.testing.assert_array_equal(g(X, X, 2.0), affine(X, X, 2.0, 3))


def test_callable_object() -> None:
    f = et.kernel(AddOne())
    np.testing.assert_array_equal(f(X), X + 1)
    assert "AddOne" in repr(f)


def test_partial_errors_name_it() -> None:
    with pytest.raises(et.KernelArgumentError, match=r"partial\(scaled\)\(\): got an unexpected keyword argument 's'"):
        et.kernel(functools.partial(scaled, s=4.0))(X, s=5.0)
    s = np.arange(3, dtype=np.float32)  # a bound array is a constant of the kernel (issue 25)
    np.testing.assert_array_equal(et.kernel(functools.partial(scaled, s=s))(X), X * s)
