"""Shape ops against NumPy: matmul/dot/outer in every rank combination (batched and broadcast),
transpose/swapaxes/.T, reshape (-1, views and copies), broadcast_to, expand_dims, squeeze,
concatenate/stack, diagonal/trace, basic indexing (slices with steps, negative steps, ints, None,
Ellipsis) and stencils, on computed values and on arguments in every layout."""

from __future__ import annotations

import functools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from strategies import ALL_DTYPES, FLOATS, NUMERIC, arrays, check, layouts, make_array, seeds, shapes, with_layout

# --- matmul family ------------------------------------------------------------------------------

MATMUL_SHAPES = {
    # kind: shapes of a and b from (batch, m, k, n)
    "mm": lambda b, m, k, n: ((m, k), (k, n)),
    "mv": lambda b, m, k, n: ((m, k), (k,)),
    "vm": lambda b, m, k, n: ((k,), (k, n)),
    "vv": lambda b, m, k, n: ((k,), (k,)),
    "bmm": lambda b, m, k, n: ((b, m, k), (b, k, n)),
    "2d@3d": lambda b, m, k, n: ((m, k), (b, k, n)),
    "3d@2d": lambda b, m, k, n: ((b, m, k), (k, n)),
    "1@3d": lambda b, m, k, n: ((1, m, k), (b, k, n)),
}


def _matmul(a, b):
    return a @ b


def _matmul_fn(a, b):
    return np.matmul(a, b)


def _matmul_relu(a, b):
    return np.maximum(a @ b * 2 + 1, 0)


def matmul_tolerance(a: np.ndarray, b: np.ndarray) -> dict:
    k = a.shape[-1]
    dtype = np.result_type(a, b)
    if dtype.kind != "f":
        return {}
    rtol = 1e-4 if dtype == np.float32 else 1e-11
    scale = float(np.abs(a).max(initial=0)) * float(np.abs(b).max(initial=0)) * max(k, 1)
    return {"rtol": rtol, "atol": rtol * scale, "signed_zeros": False}


@pytest.mark.parametrize("kind", sorted(MATMUL_SHAPES))
@settings(max_examples=3)
@given(data=st.data(), dtype=st.sampled_from(NUMERIC), b=st.integers(1, 3),
       m=st.integers(0, 5), k=st.integers(0, 6), n=st.integers(0, 5))
def test_matmul(kind: str, dtype: str, b: int, m: int, k: int, n: int, data: st.DataObject) -> None:
    sa, sb = MATMUL_SHAPES[kind](b, m, k, n)
    a = data.draw(arrays(dtype, sa, layout=layouts, lo=-3, hi=3))
    bb = data.draw(arrays(dtype, sb, layout=layouts, lo=-3, hi=3))
    fn = data.draw(st.sampled_from([_matmul, _matmul_fn, _matmul_relu]))
    check(fn, a, bb, **matmul_tolerance(a, bb))


def _transposed_operands(a, b):
    return a.T @ b, a @ b.T, a.T @ b.T.T, np.dot(a.T, a)


@pytest.mark.parametrize("dtype", NUMERIC)
@settings(max_examples=2)
@given(m=st.integers(1, 5), k=st.integers(1, 5), seed=seeds, layout=layouts)
def test_matmul_transposed_operands(dtype: str, m: int, k: int, seed: int, layout: str) -> None:
    a = with_layout(make_array(seed, dtype, (k, m), lo=-3, hi=3), layout)
    b = make_array(seed + 1, dtype, (k, m), lo=-3, hi=3)
    check(_transposed_operands, a, b, **matmul_tolerance(a, b))


def _dots(a, b, v, w):
    return np.dot(a, b), a.dot(v), np.dot(v, w), np.dot(w, b), np.outer(v, w), np.dot(a, 2.0), np.outer(a, v)


@pytest.mark.parametrize("dtype", NUMERIC)
def test_dot_and_outer(dtype: str) -> None:
    a, b = make_array(1, dtype, (3, 4), lo=-3, hi=3), make_array(2, dtype, (4, 5), lo=-3, hi=3)
    v, w = make_array(3, dtype, (4,), lo=-3, hi=3), make_array(4, dtype, (4,), lo=-3, hi=3)
    check(_dots, a, b, v, w, **matmul_tolerance(a, b))


@pytest.mark.parametrize(("da", "db"), [("int32", "float32"), ("float32", "float64"), ("int64", "int32"), ("bool", "float64")])
def test_matmul_mixed_dtypes(da: str, db: str) -> None:
    a, b = make_array(5, da, (3, 4), lo=-3, hi=3), make_array(6, db, (4, 2), lo=-3, hi=3)
    check(_matmul, a, b, **matmul_tolerance(a, b))


def _matmul_of_expressions(a, b, c):
    h = np.tanh(a @ b + c)
    return h @ b.T, (a * 2) @ (b - 1), (a @ b).sum(axis=0), (a[:, ::-1] @ b[::-1]).T


@pytest.mark.parametrize("dtype", FLOATS)
def test_matmul_of_expressions(dtype: str) -> None:
    a, b, c = make_array(7, dtype, (5, 4)), make_array(8, dtype, (4, 4)), make_array(9, dtype, (4,))
    check(_matmul_of_expressions, a, b, c, rtol=1e-4 if dtype == "float32" else 1e-10, atol=1e-3, signed_zeros=False)


# --- transpose, reshape, broadcast, expand/squeeze ---------------------------------------------------


@st.composite
def permutations(draw: st.DrawFn, ndim: int):
    return tuple(draw(st.permutations(range(ndim))))


@functools.cache
def _transposer(perm, style: str):
    if style == "function":
        return lambda a: np.transpose(a, perm)
    if style == "method":
        return lambda a: a.transpose(*perm) if perm else a.transpose()
    if style == "T":
        return lambda a: a.T
    return lambda a: (a.T * 2, np.transpose(a) + 1, a.transpose(perm) - 1 if perm else a)


@settings(max_examples=12)
@given(data=st.data(), dtype=st.sampled_from(ALL_DTYPES))
def test_transpose(data: st.DataObject, dtype: str) -> None:
    a = data.draw(arrays(dtype, shapes(max_dims=4, max_side=4), layout=layouts))
    perm = data.draw(permutations(a.ndim))
    check(_transposer(perm, data.draw(st.sampled_from(["function", "method", "T", "computed"]))), a)


@settings(max_examples=10)
@given(data=st.data())
def test_swapaxes(data: st.DataObject) -> None:
    a = data.draw(arrays("float32", shapes(min_dims=1, max_dims=4, max_side=4), layout=layouts))
    i = data.draw(st.integers(-a.ndim, a.ndim - 1))
    j = data.draw(st.integers(-a.ndim, a.ndim - 1))
    check(lambda a: (np.swapaxes(a, i, j), a.swapaxes(j, i) * 2), a)


@st.composite
def reshapes(draw: st.DrawFn, size: int):
    """A target shape of `size` elements, maybe with one -1."""
    dims = []
    rest = size
    for _ in range(draw(st.integers(0, 3))):
        divisors = [d for d in range(1, rest + 1) if rest % d == 0] if rest else [0, 1, 2]
        d = draw(st.sampled_from(divisors))
        dims.append(d)
        rest = rest // d if d else rest
    if size and rest != 1 or not dims:
        dims.append(rest if size else 0)
    elif size == 0 and 0 not in dims:
        dims.append(0)
    if size and draw(st.booleans()):
        dims[draw(st.integers(0, len(dims) - 1))] = -1
    return tuple(dims)


@settings(max_examples=12)
@given(data=st.data(), dtype=st.sampled_from(ALL_DTYPES))
def test_reshape(data: st.DataObject, dtype: str) -> None:
    a = data.draw(arrays(dtype, shapes(max_dims=3, max_side=4), layout=layouts))
    target = data.draw(reshapes(a.size))
    style = data.draw(st.sampled_from(["method", "function", "computed", "ravel"]))
    fn = {
        "method": lambda a: a.reshape(target),
        "function": lambda a: np.reshape(a, target),
        "computed": lambda a: (a * 1).reshape(*target) if target else (a * 1).reshape(target),
        "ravel": lambda a: (a.ravel(), np.ravel(a), a.flatten()),
    }[style]
    check(fn, a)


@settings(max_examples=15)
@given(data=st.data())
def test_broadcast_to(data: st.DataObject) -> None:
    target = data.draw(shapes(max_dims=4, max_side=4))
    keep = data.draw(st.integers(0, len(target)))
    src = tuple(d if data.draw(st.booleans()) else 1 for d in target[len(target) - keep:])
    a = data.draw(arrays(st.sampled_from(ALL_DTYPES), src, layout=layouts))
    check(lambda a: (np.broadcast_to(a, target), np.broadcast_to(a, target) * 1 if a.dtype != bool else a), a)


@settings(max_examples=15)
@given(data=st.data())
def test_expand_dims_and_squeeze(data: st.DataObject) -> None:
    a = data.draw(arrays(st.sampled_from(ALL_DTYPES), shapes(max_dims=3, max_side=3), layout=layouts))
    n = data.draw(st.integers(1, 2))
    out_ndim = a.ndim + n
    axis = data.draw(st.lists(st.integers(-out_ndim, out_ndim - 1), min_size=n, max_size=n,
                              unique_by=lambda x: x % out_ndim))
    axis = axis[0] if n == 1 and data.draw(st.booleans()) else tuple(axis)
    ones = tuple(i for i, d in enumerate(a.shape) if d == 1)
    squeeze_axis = data.draw(st.sampled_from([None] + [i - a.ndim for i in ones] + [ones] if ones else [None]))
    check(lambda a: (np.expand_dims(a, axis), np.squeeze(a, squeeze_axis), a.squeeze(), np.expand_dims(a, axis) + 0), a)


# --- concatenate, stack ------------------------------------------------------------------------------


@settings(max_examples=15)
@given(data=st.data(), dtype=st.sampled_from(ALL_DTYPES), n=st.integers(1, 3))
def test_concatenate(data: st.DataObject, dtype: str, n: int) -> None:
    base = list(data.draw(shapes(min_dims=1, max_dims=3, max_side=3)))
    axis = data.draw(st.integers(-len(base), len(base) - 1))
    parts = []
    for _ in range(n):
        shape = list(base)
        shape[axis] = data.draw(st.integers(0, 3))
        parts.append(data.draw(arrays(dtype, tuple(shape), layout=layouts)))
    check(lambda *ps: (np.concatenate(ps, axis=axis), np.concatenate([p * 1 for p in ps], axis), np.concatenate(ps, axis=None)), *parts)


@settings(max_examples=12)
@given(data=st.data(), dtype=st.sampled_from(ALL_DTYPES), n=st.integers(1, 3))
def test_stack(data: st.DataObject, dtype: str, n: int) -> None:
    shape = data.draw(shapes(max_dims=2, max_side=3))
    axis = data.draw(st.integers(-len(shape) - 1, len(shape)))
    parts = [data.draw(arrays(dtype, shape, layout=layouts)) for _ in range(n)]
    check(lambda *ps: np.stack(ps, axis=axis), *parts)


def _concat_mixed(a, b, c):
    return np.concatenate([a, b]), np.concatenate([a, c], axis=0), np.stack([a, b * 2, c], axis=1)


def test_concatenate_mixed_dtypes() -> None:
    a, b, c = make_array(1, "float32", (2, 3)), make_array(2, "int32", (2, 3)), make_array(3, "float64", (2, 3))
    check(_concat_mixed, a, b, c)


# --- diagonal, trace ---------------------------------------------------------------------------------


@settings(max_examples=15)
@given(data=st.data(), dtype=st.sampled_from(NUMERIC))
def test_diagonal_and_trace(data: st.DataObject, dtype: str) -> None:
    a = data.draw(arrays(dtype, shapes(min_dims=2, max_dims=3, max_side=5), layout=layouts, lo=-5, hi=5))
    a1, a2 = data.draw(st.lists(st.integers(-a.ndim, a.ndim - 1), min_size=2, max_size=2,
                                unique_by=lambda x: x % a.ndim))
    offset = data.draw(st.integers(-4, 4))
    check(lambda a: (np.diagonal(a, offset, a1, a2), a.diagonal(offset, a1, a2) * 2,
                     np.trace(a, offset, a1, a2), a.trace(offset, a1, a2)), a)


# --- indexing -------------------------------------------------------------------------------------


@settings(max_examples=14)
@given(data=st.data(), dtype=st.sampled_from(ALL_DTYPES))
def test_basic_indexing(data: st.DataObject, dtype: str) -> None:
    a = data.draw(arrays(dtype, shapes(max_dims=3, max_side=5), layout=layouts))
    key = data.draw(hnp.basic_indices(a.shape, allow_newaxis=True, allow_ellipsis=True))
    computed = data.draw(st.booleans())
    check((lambda a: (a * 1)[key]) if computed and dtype != "bool" else (lambda a: a[key]), a)


@settings(max_examples=10)
@given(data=st.data())
def test_chained_indexing(data: st.DataObject) -> None:
    a = data.draw(arrays("float64", shapes(min_dims=1, max_dims=3, max_side=6), layout=layouts))
    k1 = data.draw(hnp.basic_indices(a.shape, allow_newaxis=True, allow_ellipsis=True))
    k2 = data.draw(hnp.basic_indices(a[k1].shape, allow_newaxis=True, allow_ellipsis=True))
    check(lambda a: (a[k1][k2], a[k1][k2] + a[k1][k2]), a)


def _stencils_1d(a):
    return (a[1:-1] + a[:-2] + a[2:], a[:-1:2] - a[1::2], a[::-1] * a, a[-1] + a[0],
            a[5::-2], a[..., None] * a[None, :])


def _stencils_2d(u):
    lap = u[1:-1, 2:] + u[1:-1, :-2] + u[2:, 1:-1] + u[:-2, 1:-1] - 4 * u[1:-1, 1:-1]
    return lap, u[::-1, ::2].T, u[1, ::-1], u[:, 1], u[..., -1], u[None, 1:, None, :-1], np.abs(u[1:] - u[:-1]).max()


@pytest.mark.parametrize("dtype", FLOATS + ("int32",))
@settings(max_examples=2)
@given(n=st.integers(3, 9), m=st.integers(3, 7), seed=seeds, layout=layouts)
def test_stencils(dtype: str, n: int, m: int, seed: int, layout: str) -> None:
    check(_stencils_1d, with_layout(make_array(seed, dtype, (n,)), layout))
    check(_stencils_2d, with_layout(make_array(seed, dtype, (n, m)), layout))


def _views_of_computed(a, b):
    c = a * b + 1.0
    return c.T, c[::-1], c[1:, ::2], np.broadcast_to(c[:, :1], c.shape), c.reshape(-1), np.diagonal(c), c[None] + c.T[:, None]


@pytest.mark.parametrize("layout", ["C", "F", "strided", "negative"])
def test_views_of_computed_values(layout: str) -> None:
    a = with_layout(make_array(1, "float64", (4, 4)), layout)
    check(_views_of_computed, a, make_array(2, "float64", (4,)))
