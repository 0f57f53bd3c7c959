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


def test_a_generator_drawn_from_in_the_expression_that_makes_it_is_a_constant() -> None:
    """`np.random.default_rng(0).standard_normal(5)` in one expression: the Generator's Cython code calls np.empty
    while the user's line runs a call of another name; it is NumPy's own (a traced array crashed the process)."""
    def f(x):
        return x + np.random.default_rng(0).standard_normal(5), np.random.default_rng(1).uniform(size=(2, 5)) * x

    x = np.linspace(-1.0, 1.0, 5)
    got, want = et.kernel(f, cache=False)(x), f(x)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_array_equal(g, w)


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


# --- keyword-only parameters, defaults, **kwargs -----------------------------------------------------
def _euclidean(X, Y=None, *, squared=False, scale=1.0):
    """scikit-learn's euclidean_distances' shape of signature: keyword-only flags and a default."""
    Y = X if Y is None else Y
    d = (X * X).sum(axis=1)[:, None] - 2 * X @ Y.T + (Y * Y).sum(axis=1)[None, :]
    d = np.maximum(d, 0) * scale
    return d if squared else np.sqrt(d)


@pytest.mark.parametrize("kwargs", [{}, {"squared": True, "scale": np.float32(2.0)}])
def test_keyword_only_parameters_with_defaults_are_passed_by_keyword(kwargs) -> None:
    X = np.linspace(0, 1, 12, dtype=np.float32).reshape(4, 3)
    Y = np.linspace(-1, 2, 6, dtype=np.float32).reshape(2, 3)
    k = et.kernel(_euclidean)
    np.testing.assert_allclose(k(X, Y, **kwargs), _euclidean(X, Y, **kwargs), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(k(X, **kwargs), _euclidean(X, **kwargs), rtol=1e-5, atol=1e-5)


def test_a_keyword_only_array_argument_and_static_argnames() -> None:
    def f(x, *, w, n):
        return (x * w).reshape(n, -1).sum(axis=1)

    k = et.kernel(f, static_argnames="n")
    x, w = np.arange(6.0), np.arange(6.0)[::-1].copy()
    np.testing.assert_array_equal(k(x, w=w, n=2), f(x, w=w, n=2))
    np.testing.assert_array_equal(k(x, n=3, w=w), f(x, w=w, n=3))
    assert sorted(c.static for c in k.compilations) == [(("n", 2),), (("n", 3),)]


def test_var_keyword_arguments_are_passed_by_name() -> None:
    def f(x, **terms):
        return x + sum(v * i for i, (_, v) in enumerate(sorted(terms.items())))

    x, a, b = np.arange(3.0), np.ones(3), np.full(3, 2.0)
    k = et.kernel(f)
    np.testing.assert_array_equal(k(x, a=a, b=b), f(x, a=a, b=b))
    np.testing.assert_array_equal(k(x, b=a, a=b), f(x, b=a, a=b))
    np.testing.assert_array_equal(k(x), f(x))


def test_a_missing_keyword_only_argument_is_a_kernel_argument_error() -> None:
    with pytest.raises(KernelArgumentError, match="missing a required argument: 'w'"):
        et.kernel(lambda x, *, w: x * w)(np.ones(2))


# --- dict / list / tuple (pytree) arguments and results ------------------------------------------------
def _layer(params, x):
    return np.tanh(x @ params["w"] + params["b"])


def test_a_dict_of_weights_is_an_argument() -> None:
    rng = np.random.default_rng(1)
    params = {"w": rng.standard_normal((3, 4)), "b": rng.standard_normal(4)}
    x = rng.standard_normal((5, 3))
    k = et.kernel(_layer)
    np.testing.assert_allclose(k(params, x), _layer(params, x), rtol=1e-12, atol=1e-12)
    params32 = {k_: v.astype(np.float32) for k_, v in params.items()}
    out = k(params32, x.astype(np.float32))
    assert out.dtype == np.float32
    np.testing.assert_allclose(out, _layer(params32, x.astype(np.float32)), rtol=1e-5, atol=1e-6)


def test_nested_tuples_lists_and_scalar_leaves() -> None:
    def f(layers, x):
        for (w, b), scale in layers:
            x = np.maximum(x @ w + b, 0) * scale
        return x

    rng = np.random.default_rng(2)
    layers = [((rng.standard_normal((4, 4)), rng.standard_normal(4)), 0.5), ((rng.standard_normal((4, 2)), np.zeros(2)), 2.0)]
    x = rng.standard_normal((3, 4))
    np.testing.assert_allclose(et.kernel(f)(layers, x), f(layers, x), rtol=1e-12, atol=1e-12)


def test_results_come_back_in_their_structure() -> None:
    def f(p, x):
        y = x * p["a"]
        return {"y": y, "parts": [y.sum(axis=0), (x - 1, p["a"])]}

    p, x = {"a": np.arange(3.0)}, np.ones((2, 3))
    got, want = et.kernel(f)(p, x), f(p, x)
    assert set(got) == {"y", "parts"} and isinstance(got["parts"], list) and isinstance(got["parts"][1], tuple)
    np.testing.assert_array_equal(got["y"], want["y"])
    np.testing.assert_array_equal(got["parts"][0], want["parts"][0])
    np.testing.assert_array_equal(got["parts"][1][0], want["parts"][1][0])
    np.testing.assert_array_equal(got["parts"][1][1], want["parts"][1][1])


def test_the_structure_is_part_of_the_key() -> None:
    def f(p):
        return p["a"] - p["b"] if isinstance(p, dict) else p[0] * p[1]

    k = et.kernel(f)
    a, b = np.arange(3.0), np.full(3, 2.0)
    np.testing.assert_array_equal(k({"a": a, "b": b}), a - b)
    np.testing.assert_array_equal(k({"b": a, "a": b}), b - a)
    np.testing.assert_array_equal(k((a, b)), a * b)
    np.testing.assert_array_equal(k([a, b]), a * b)
    assert len(k.compilations) == 4


def test_a_leaf_written_into_updates_the_callers_array() -> None:
    def step(state, g):
        state["m"][:] = 0.9 * state["m"] + 0.1 * g
        state["x"] -= state["m"]

    m, x, g = np.zeros(4), np.ones(4), np.arange(4.0)
    et.kernel(step)({"m": m, "x": x}, g)
    np.testing.assert_array_equal(m, 0.1 * g)
    np.testing.assert_array_equal(x, 1 - 0.1 * g)


def test_a_tuple_of_numbers_is_still_one_array_argument() -> None:
    np.testing.assert_array_equal(et.kernel(lambda v: v * 2)((1.0, 2.0)), np.array([2.0, 4.0]))


def test_a_one_leaf_dict_never_takes_the_fast_path_of_another_structure() -> None:
    k = et.kernel(lambda p: p["a"] * 2 if "a" in p else p["b"] - 1)
    a = np.arange(3.0)
    for _ in range(2):
        np.testing.assert_array_equal(k({"a": a}), a * 2)
        np.testing.assert_array_equal(k({"b": a}), a - 1)
