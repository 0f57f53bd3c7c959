"""Memory orders and ufunc keywords that library code passes (scikit-learn's squared_norm ravels in order 'K';
its PolynomialFeatures multiplies into out= with casting='no'): ravel/flatten/reshape in 'A' and 'K' order read
the elements as NumPy does for every layout the trace knows (C, F, transposed, reversed and stepped views), and a
ufunc's `dtype=` and `casting=` resolve and check as NumPy's."""

from __future__ import annotations

import numpy as np
import pytest

import egglog_tensor as et

A = np.arange(24.0).reshape(2, 3, 4)
F = np.asfortranarray(A)
VIEWS = {  # name: (view of the argument, argument)
    "C": (lambda a: a, A), "F": (lambda a: a, F), "transposed": (lambda a: a.transpose(2, 0, 1), A),
    "reversed and stepped": (lambda a: a[:, ::-1, ::2], A), "T reversed": (lambda a: a.T[::-1], A),
    "F permuted": (lambda a: a.transpose(1, 2, 0)[::-1, :, ::-1], F), "stepped": (lambda a: a[::2], A),
}


@pytest.mark.parametrize("order", ["C", "F", "A", "K"])
@pytest.mark.parametrize("view", sorted(VIEWS))
def test_ravel_and_flatten_read_in_numpys_order(view: str, order: str) -> None:
    make, arg = VIEWS[view]

    def f(a):
        v = make(a)
        return np.ravel(v, order=order), v.flatten(order)

    for got, want in zip(et.kernel(f)(arg), f(arg), strict=True):
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("order", ["A", "K"])
@pytest.mark.parametrize("arg", [A, F], ids=["C", "F"])
def test_a_result_of_a_contiguous_operand_ravels_in_its_order(arg: np.ndarray, order: str) -> None:
    f = lambda a: (a * 2 + 1).ravel(order)  # noqa: E731  (NumPy lays the result out as its operand)
    np.testing.assert_array_equal(et.kernel(f)(arg), f(arg))


def test_reshape_in_order_a_and_k_refused_as_numpy() -> None:
    f = lambda a: a.T.reshape(2, 6, order="A")  # noqa: E731  (a.T of a C array is F-contiguous: read in F order)
    np.testing.assert_array_equal(et.kernel(f)(A[0]), f(A[0]))
    with pytest.raises(et.TracingError, match="order 'K' is not permitted for reshaping"):
        et.kernel(lambda a: a.reshape(6, 4, order="K"))(A)


def test_order_k_of_an_unknown_layout_is_refused_clearly() -> None:
    with pytest.raises(et.UnsupportedError, match="order='K': the memory layout of this array is not known"):
        et.kernel(lambda a: np.ravel(a, "K"))(A[:, :, ::2])  # (a strided argument: layout not specialized on)


I = np.arange(6).reshape(2, 3)
B = np.arange(6.0).reshape(2, 3)
S = np.arange(6, dtype=np.float32).reshape(2, 3)


def polynomial_features(x):  # scikit-learn's: products written into slices of a buffer, casting='no'
    out = np.empty((x.shape[0], 3))
    out[:, :2] = x[:, :2]
    np.multiply(x[:, 0:1], x[:, 1:2], out=out[:, 2:3], casting="no")
    return out


@pytest.mark.parametrize("fn", [
    lambda s, b, i: np.add(s, b, dtype=np.float32),
    lambda s, b, i: np.multiply(s, 2, dtype=np.float64),
    lambda s, b, i: np.add(i, i, dtype=np.float32),
    lambda s, b, i: np.sqrt(i, dtype=np.float32),
    lambda s, b, i: np.add(s, s, casting="no"),
    lambda s, b, i: np.subtract(b, i, casting="same_kind", dtype=np.float64),
    lambda s, b, i: polynomial_features(b),
], ids=["add f32", "mul f64", "int add f32", "sqrt f32", "no", "same_kind", "out casting no"])
def test_ufunc_dtype_and_casting_match_numpy(fn) -> None:
    got, want = et.kernel(fn)(S, B, I), fn(S, B, I)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize(("fn", "message"), [
    (lambda s, b, i: np.add(s, b, casting="no"), r"Cannot cast ufunc 'add' input 0 from dtype\('float32'\) to dtype\('float64'\) with casting rule 'no'"),
    (lambda s, b, i: np.add(s, b, dtype=np.float32, casting="safe"), "input 1 from dtype.'float64'. to dtype.'float32'. with casting rule 'safe'"),
    (lambda s, b, i: np.divide(s, b, dtype=np.int64), "No loop matching the specified signature"),
    (lambda s, b, i: np.add(s, b, casting="sometimes"), "casting must be one of"),
])
def test_ufunc_casting_errors_are_numpys(fn, message: str) -> None:
    with pytest.raises((TypeError, ValueError), match=message):
        fn(S, B, I)  # (NumPy agrees that it fails)
    with pytest.raises((et.UFuncTypeError, et.TracingError), match=message):
        et.kernel(fn)(S, B, I)
