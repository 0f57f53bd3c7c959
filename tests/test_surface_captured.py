"""NumPy arrays captured by a kernel (issue 25): globals, closures and module constants become
constants embedded in the kernel, frozen at its first trace (like JAX); the on-disk cache key covers
their contents."""

from __future__ import annotations

import numpy as np
import pytest

import egglog_tensor as et

RNG = np.random.default_rng(3)
X = RNG.standard_normal((3, 4))
W = RNG.standard_normal((3, 4))
W_INT = np.arange(4, dtype=np.int32)
MASK = np.array([True, False, True, False])


def uses_globals(x):
    y = x * W + W_INT  # float64 * float64 + int32: float64, as NumPy
    y[:, MASK] = -1.0  # a captured mask
    return y, W.T @ x[:, 0], np.where(MASK, x, W_INT)


def test_globals_match_numpy() -> None:
    got, want = et.kernel(uses_globals)(X), uses_globals(X)
    assert [g.dtype for g in got] == [w.dtype for w in want]
    np.testing.assert_array_equal(got[0], want[0])
    np.testing.assert_allclose(got[1], want[1], rtol=1e-15, atol=1e-15)  # a matvec: its own summation order
    np.testing.assert_array_equal(got[2], want[2])


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64, np.bool_])
def test_closure_of_each_dtype(dtype) -> None:
    c = (RNG.standard_normal((3, 4)) * 10).astype(dtype)

    def f(x):
        return x + c, np.maximum(x.astype(np.float32), c)

    x = RNG.standard_normal((3, 4)).astype(np.float32)
    for got, want in zip(et.kernel(f)(x), f(x), strict=True):
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)


def test_special_values_are_exact() -> None:
    c = np.array([np.nan, -0.0, np.inf, -np.inf, 5e-324, np.finfo(np.float64).max])
    got = et.kernel(lambda x: x + c)(np.zeros(6))
    np.testing.assert_array_equal(got, np.zeros(6) + c)
    assert np.signbit(et.kernel(lambda x: x * c)(np.ones(6))[1])


def test_a_captured_array_is_frozen_at_the_first_trace() -> None:
    """Documented (docs/calling.md): a kernel compiled once does not see later changes of a captured
    array (checking would cost a pass over it per call); a new kernel traces the new contents."""
    c = np.ones(4)

    def f(x):
        return x + c

    k = et.kernel(f)
    np.testing.assert_array_equal(k(np.zeros(4)), np.ones(4))
    c[:] = 5.0
    np.testing.assert_array_equal(k(np.zeros(4)), np.ones(4))  # frozen
    np.testing.assert_array_equal(et.kernel(f)(np.zeros(4)), np.full(4, 5.0))  # a new kernel sees it


def test_on_disk_cache_key_covers_contents(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("EGGLOG_TENSOR_CACHE", "1")
    monkeypatch.setenv("EGGLOG_TENSOR_CACHE_DIR", str(tmp_path))
    c = np.arange(4.0)

    def f(x):
        return x * c

    first = et.kernel(f)
    np.testing.assert_array_equal(first(np.ones(4)), c)
    assert first.compilations[0].cache == "miss-stored"
    again = et.kernel(f)
    np.testing.assert_array_equal(again(np.ones(4)), c)
    assert again.compilations[0].cache == "hit"
    c[0] = 7.0  # other contents: another key, not the stored kernel
    changed = et.kernel(f)
    np.testing.assert_array_equal(changed(np.ones(4)), c)
    assert changed.compilations[0].cache == "miss-stored"


def test_default_argument_array_is_an_argument() -> None:
    """A default is bound at each call (Python's semantics): it is passed, so changes are seen."""
    d = np.ones(4)

    def f(x, d=d):
        return x + d

    k = et.kernel(f)
    np.testing.assert_array_equal(k(np.zeros(4)), np.ones(4))
    d[:] = 2.0
    np.testing.assert_array_equal(k(np.zeros(4)), np.full(4, 2.0))


def test_captured_array_as_a_stored_value() -> None:
    c = np.arange(4.0)

    def f(x):
        b = np.copy(x)
        b[1:] = c[1:]
        b[b > 2] = c[:1]
        return b

    np.testing.assert_array_equal(et.kernel(f)(np.zeros(4)), f(np.zeros(4)))


def test_large_arrays_are_hidden_arguments_frozen_too() -> None:
    """Above 4 KiB a captured array is a hidden argument holding a copy made at the first trace."""
    big = RNG.standard_normal((64, 64))
    big32 = big.astype(np.float32)

    def f(x):
        return x @ big + big32, big  # float64 @ float64 + float32: float64; a captured array returned as is

    x = RNG.standard_normal((64, 64))
    k = et.kernel(f)
    got, want = k(x), f(x)
    np.testing.assert_allclose(got[0], want[0], rtol=1e-13, atol=1e-13)
    np.testing.assert_array_equal(got[1], big)
    assert k.inspect(x).arg_names == ("x", "captured#0", "captured#1")
    out = (np.empty((64, 64)), np.empty((64, 64)))
    assert k(x, out=out) is out
    np.testing.assert_array_equal(out[1], big)
    compiled = k.trace(x).optimize().lower().compile()  # the staged API passes them too
    np.testing.assert_array_equal(compiled(x)[1], big)
    expected = big.copy()
    big[:] = 0.0
    np.testing.assert_array_equal(k(x)[1], expected)  # frozen


def test_unsupported_dtype_is_refused() -> None:
    cplx = np.zeros(4, np.complex128)
    with pytest.raises(et.UnsupportedError, match="complex128"):
        et.kernel(lambda x: np.add(x, cplx))(np.zeros(4))
