"""Static arguments (issue 25): `et.kernel(f, static_argnames=..., static_argnums=...)` makes an
argument a compile-time constant, one specialization per value; without it a Python int argument
stays a runtime scalar, and using it as a shape says how to make it static."""

from __future__ import annotations

import re

import numpy as np
import pytest

import egglog_tensor as et

X = np.arange(24.0)


def blocks(x, n, steps, mode):
    """n used in reshape, steps in range() and a slice, mode a string choosing code."""
    y = x.reshape(n, -1)
    for _ in range(steps):
        y = y[1:] * 2.0 + y[:-1]
    return y.sum(axis=0) if mode == "sum" else y.max(axis=0)


@pytest.mark.parametrize("n, steps, mode", [(4, 2, "sum"), (6, 1, "max"), (3, 0, "sum"), (2, 1, "max")])
def test_static_values_match_numpy(n, steps, mode) -> None:
    k = et.kernel(blocks, static_argnames=("n", "mode"), static_argnums=2)
    np.testing.assert_array_equal(k(X, n, steps, mode), blocks(X, n, steps, mode))
    np.testing.assert_array_equal(k(X, n=n, steps=steps, mode=mode), blocks(X, n, steps, mode))


def test_one_specialization_per_value() -> None:
    k = et.kernel(blocks, static_argnames=("n", "steps", "mode"))
    for n in (4, 6, 4):
        k(X, n, 1, "sum")
    k(X, 4, 1, "max")
    assert len(k.compilations) == 3
    assert sorted(c.static for c in k.compilations) == [
        (("n", 4), ("steps", 1), ("mode", "max")), (("n", 4), ("steps", 1), ("mode", "sum")), (("n", 6), ("steps", 1), ("mode", "sum"))]


def test_static_tuple_and_bool(monkeypatch) -> None:
    def f(x, shape, flip):
        y = x.reshape(shape)
        return y[::-1] if flip else y

    k = et.kernel(f, static_argnums=(1, 2))
    np.testing.assert_array_equal(k(X, (2, 3, 4), True), f(X, (2, 3, 4), True))
    np.testing.assert_array_equal(k(X, (4, 6), False), f(X, (4, 6), False))


def test_on_disk_cache_key_covers_static_values(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("EGGLOG_TENSOR_CACHE", "1")
    monkeypatch.setenv("EGGLOG_TENSOR_CACHE_DIR", str(tmp_path))

    def f(x, n):
        return x.reshape(n, -1).sum(axis=1)

    first = et.kernel(f, static_argnames="n")
    np.testing.assert_array_equal(first(X, 4), f(X, 4))
    fresh = et.kernel(f, static_argnames="n")  # a new kernel: the disk cache serves n=4 only
    np.testing.assert_array_equal(fresh(X, 4), f(X, 4))
    np.testing.assert_array_equal(fresh(X, 3), f(X, 3))
    caches = {c.static: c.cache for c in fresh.compilations}
    assert caches == {(("n", 4),): "hit", (("n", 3),): "miss-stored"}


def test_runtime_numpy_int_used_as_a_shape_is_guarded_and_suggests_static() -> None:
    """A NumPy int argument used as a shape is taken for the call (a guard, docs/calling.md#guards): each value its
    own specialization, right for each; past the limit the warning names static_argnames."""
    def f(x, n):
        return x.reshape(n, -1)

    k = et.kernel(f)  # (a Python int is specialized automatically: tests/test_surface_arguments.py)
    y = np.arange(48.0)
    sizes = (1, 2, 3, 4, 6, 8, 12, 16)
    for n in sizes:
        np.testing.assert_array_equal(k(y, np.int64(n)), y.reshape(n, -1))
    assert len(k.compilations) == len(sizes)
    np.testing.assert_array_equal(k(y, np.int64(4)), y.reshape(4, -1))  # an earlier specialization, taken again
    assert len(k.compilations) == len(sizes)
    with pytest.warns(et.SpecializationWarning, match=re.escape("et.kernel(f, static_argnames=('n',))")):
        np.testing.assert_array_equal(k(y, np.int64(24)), y.reshape(24, -1))


def test_runtime_int_stays_a_runtime_scalar() -> None:
    k = et.kernel(lambda x, n: x * n)
    for n in (2, 3, 7):
        np.testing.assert_array_equal(k(X, n), X * n)
    assert len(k.compilations) == 1


def test_compiled_stage_checks_static_values() -> None:
    compiled = et.kernel(blocks, static_argnames=("n", "steps", "mode")).trace(X, 4, 1, "sum").optimize().lower().compile()
    np.testing.assert_array_equal(compiled(X, 4, 1, "sum"), blocks(X, 4, 1, "sum"))
    with pytest.raises(et.KernelArgumentError, match=re.escape("compiled for (x: float64[24], n=4, steps=1, mode='sum'), called with")):
        compiled(X, 6, 1, "sum")


def test_bad_static_options_and_values() -> None:
    with pytest.raises(TypeError, match="static_argnames 'm' is not a parameter of blocks"):
        et.kernel(blocks, static_argnames="m")
    with pytest.raises(TypeError, match="static_argnums 7 is out of range"):
        et.kernel(blocks, static_argnums=7)
    with pytest.raises(et.KernelArgumentError, match="static argument 'n' must be hashable"):
        et.kernel(blocks, static_argnames="n")(X, [4], 1, "sum")


def test_npbench_style_size_and_step_arguments() -> None:
    """NPBench's loop kernels take their sizes and time steps as Python ints."""

    def jacobi_1d(tsteps, a, b):
        a, b = a.copy(), b.copy()
        for _ in range(1, tsteps):
            b[1:-1] = 0.33333 * (a[:-2] + a[1:-1] + a[2:])
            a[1:-1] = 0.33333 * (b[:-2] + b[1:-1] + b[2:])
        return a, b

    a, b = np.linspace(0.0, 1.0, 32), np.linspace(1.0, 2.0, 32)
    k = et.kernel(jacobi_1d, static_argnums=0)
    for got, want in zip(k(6, a, b), jacobi_1d(6, a, b), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-15)
