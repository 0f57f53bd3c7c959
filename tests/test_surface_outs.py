"""`out=` of `ufunc.reduce`, `ufunc.accumulate`, `np.einsum`, `np.dot` and `np.matmul` (issue 25): the result stored into
out (a local buffer, a slice of one, an argument) as NumPy casts it (reduce, accumulate: unsafe; einsum: safe; dot: the
exact dtype into a C-contiguous out; matmul: same_kind), out returned; NumPy's errors otherwise."""

from __future__ import annotations

import numpy as np
import pytest

import egglog_tensor as et

X = np.arange(12.0).reshape(3, 4) - 5.5


def reduce_into_buffers(x):
    o = np.zeros(4)
    np.add.reduce(x, axis=0, out=o)
    i = np.add.reduce(x, axis=1, keepdims=True, out=np.zeros((3, 1), np.int64))  # unsafe: truncated
    m = np.zeros((2, 3), np.float32)
    np.maximum.reduce(x, axis=1, out=m[1])
    return o, i, m


def accumulate_into_buffers(x):
    o = np.empty_like(x)
    np.add.accumulate(x, axis=1, out=o)
    np.maximum.accumulate(x, out=x)  # in place, into the argument
    return o, x


def contractions_into_buffers(x):
    e = np.zeros((2, 3, 3))
    np.einsum("ij,kj->ik", x, x, out=e[1])
    d = np.zeros((3, 3))
    np.dot(x, x.T, d)
    m = np.zeros((4, 3), np.float32)
    r = np.matmul(x.T, x[:, :3], out=m)
    return e, d, m, r


@pytest.mark.parametrize("fn", [reduce_into_buffers, accumulate_into_buffers, contractions_into_buffers])
def test_out_of_reduce_accumulate_and_contractions_match_numpy(fn) -> None:
    """(Until this change reduce, accumulate, einsum and dot raised UnsupportedError for out=.)"""
    got_x, want_x = X.copy(), X.copy()
    for got, want in zip(et.kernel(fn)(got_x), fn(want_x), strict=True):
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(got_x, want_x)


def test_numpy_s_out_errors() -> None:
    with pytest.raises(et.TracingError, match="np.einsum: cannot cast the result from dtype.'float64'. to the out array's dtype.'float32'. according to the rule 'safe'"):
        et.kernel(lambda x: np.einsum("ij,kj->ik", x, x, out=np.zeros((3, 3), np.float32)))(X)
    with pytest.raises(et.TracingError, match="np.dot: output array is not acceptable .* its dtype is float32, the result's float64"):
        et.kernel(lambda x: np.dot(x, x.T, np.zeros((3, 3), np.float32)))(X)
    with pytest.raises(et.TracingError, match="np.dot: output array is not acceptable .* it is not C-contiguous"):
        et.kernel(lambda x: np.dot(x, x.T, np.zeros((3, 3)).T))(X)
    with pytest.raises(et.TracingError, match=r"np.add.reduce: the out array's shape \(1, 4\) is not the result's \(4,\)"):
        et.kernel(lambda x: np.add.reduce(x, axis=0, out=np.zeros((1, 4))))(X)
