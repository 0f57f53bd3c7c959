"""Reductions against NumPy: sum/prod/max/min/mean per dtype (NumPy's accumulator dtypes), axis
None/int/negative/tuple/empty tuple, keepdims, size-0 and size-1 dims, every input layout, the
method/function/ufunc.reduce spellings, dtype=, fused producers (sum(a*b)) and consumers
(a - a.mean(axis, keepdims=True), softmax), reductions of views, trace, 0-d results."""

from __future__ import annotations

import functools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import ALL_DTYPES, FLOATS, NUMERIC, arrays, check, layouts, make_array, shapes, sweep, with_layout

# float32 sums: NumPy sums pairwise, the kernel in order: allow ~1e-4 of the summed magnitudes.
RTOL = {"float32": 1e-4, "float64": 1e-11}


def tolerance(x: np.ndarray, op: str) -> dict:
    """rtol/atol for reducing x with op (atol scaled by the sum of magnitudes for sums)."""
    name = np.result_type(x, np.float64).name if x.dtype.kind != "f" else x.dtype.name
    if name not in RTOL:
        return {}
    rtol = RTOL[name]
    if op in ("sum", "mean"):
        mags = np.abs(x[np.isfinite(x)]) if x.size else np.zeros(0)
        return {"rtol": rtol, "atol": rtol * (float(mags.sum()) + 1.0) / (x.size if op == "mean" and x.size else 1)}
    if op == "prod":
        return {"rtol": rtol * max(1, x.size), "atol": 0}
    return {}


@st.composite
def axes(draw: st.DrawFn, ndim: int):
    """None, an int (maybe negative), or a tuple of distinct axes in any order (maybe empty)."""
    kind = draw(st.sampled_from(["none", "int", "tuple"] if ndim else ["none", "empty"]))
    if kind == "none":
        return None
    if kind == "empty":
        return ()
    if kind == "int":
        return draw(st.integers(-ndim, ndim - 1))
    chosen = draw(st.lists(st.integers(0, ndim - 1), unique=True, max_size=ndim))
    return tuple(a - ndim if draw(st.booleans()) else a for a in chosen)


@functools.cache
def reducer(op: str, axis, keepdims: bool, style: str):
    if style == "function":
        f = {"sum": np.sum, "prod": np.prod, "max": np.max, "min": np.min, "mean": np.mean}[op]
        return lambda a: f(a, axis=axis, keepdims=keepdims)
    return lambda a: getattr(a, op)(axis=axis, keepdims=keepdims)


DATA = {"sum": {"special": True}, "mean": {"special": True}, "max": {"special": True}, "min": {"special": True},
        "prod": {"lo": -2, "hi": 2}}


@pytest.mark.parametrize("dtype", sweep(ALL_DTYPES, ["float32", "int64", "bool"]))
@pytest.mark.parametrize("op", ["sum", "prod", "max", "min", "mean"])
@settings(max_examples=2)
@given(data=st.data())
def test_reduction(op: str, dtype: str, data: st.DataObject) -> None:
    shape = data.draw(shapes(max_dims=3, min_side=1 if op in ("max", "min") else 0))
    axis = data.draw(axes(len(shape)))
    keepdims = data.draw(st.booleans())
    style = data.draw(st.sampled_from(["function", "method"]))
    a = data.draw(arrays(dtype, shape, layout=layouts, **DATA[op]))
    # which of +-0.0 a max/min reduction returns depends on NumPy's (SIMD) order
    check(reducer(op, axis, keepdims, style), a, signed_zeros=op not in ("max", "min"), **tolerance(a, op))


@pytest.mark.parametrize("op", ["max", "min"])
@settings(max_examples=4)
@given(data=st.data())
def test_max_min_over_empty_axis_can_use_other_axes(op: str, data: st.DataObject) -> None:
    """max/min of a size-0 array along a non-empty axis is fine (the result is empty)."""
    n = data.draw(st.integers(1, 4))
    a = make_array(0, "float32", (0, n))
    check(reducer(op, 1, data.draw(st.booleans()), "function"), a)


def _ufunc_reduces(a):
    return np.add.reduce(a), np.multiply.reduce(a), np.maximum.reduce(a), np.minimum.reduce(a)


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_ufunc_reduce(dtype: str) -> None:
    a = make_array(4, dtype, (5, 3), lo=-3, hi=3)
    check(_ufunc_reduces, a, rtol=1e-5)


def _ufunc_reduce_arguments(a):
    return (np.add.reduce(a, axis=1), np.add.reduce(a, 1), np.maximum.reduce(a, axis=-1, keepdims=True),
            np.minimum.reduce(a, axis=None), np.multiply.reduce(a, axis=(0, 2)), np.add.reduce(a, 2, None, None, True),
            np.add.reduce(a, axis=(-1, 0), dtype=np.float64), np.maximum.reduce(a, axis=()))


@pytest.mark.parametrize("dtype", ["float32", "int32"])
def test_ufunc_reduce_arguments(dtype: str) -> None:
    """axis (positional, keyword, negative, tuple, None, ()), keepdims and dtype, as np.sum takes them (issue 22)."""
    check(_ufunc_reduce_arguments, make_array(6, dtype, (3, 4, 5), lo=-2, hi=2), rtol=1e-5)


def _amax_amin(a):
    return np.amax(a, axis=0), np.amin(a, axis=-1, keepdims=True), np.max(a), np.min(a)


def test_amax_amin_and_scalar_results() -> None:
    """np.max(a) with no axis is 0-d: a NumPy scalar, like NumPy's."""
    got = check(_amax_amin, make_array(5, "float64", (4, 6), special=True))
    assert isinstance(got[2], np.float64) and isinstance(got[3], np.float64)


def _with_dtype(a):
    return (a.sum(dtype=np.float64), np.sum(a, axis=0, dtype="float32"), a.prod(axis=-1, dtype=np.int64),
            np.mean(a, axis=1, dtype=np.float64), a.mean(), np.sum(a, axis=()))


@pytest.mark.parametrize("dtype", NUMERIC + ("bool",))
def test_dtype_argument(dtype: str) -> None:
    a = make_array(6, dtype, (4, 5), lo=-3, hi=3)
    check(_with_dtype, a, **tolerance(a, "sum"))


# --- fused producers and consumers, views -------------------------------------------------------


def _dot_like(a, b):
    return np.sum(a * b), (a * b).sum(axis=0), np.max(np.abs(a - b), axis=1)


def _normalize(a):
    centered = a - a.mean(axis=-1, keepdims=True)
    return centered / np.sqrt((centered**2).mean(axis=-1, keepdims=True) + 1e-5)


def _softmax(a):
    e = np.exp(a - a.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def _logsumexp(a):
    m = np.max(a, axis=0)
    return m + np.log(np.sum(np.exp(a - m), axis=0))


def _view_reductions(a):
    return a.T.sum(axis=0), a[::-1, 1:].max(axis=1), a[:, ::2].min(), np.sum(a[None, :, :, None], axis=(0, 2)), a[1].prod()


def _chained(a):
    return a.sum(axis=0).max(), a.sum(axis=1, keepdims=True) * a.min(axis=0, keepdims=True), np.mean(a.sum(axis=0))


def _trace(a):
    return np.trace(a), a.trace(offset=1), np.trace(a, offset=-1), np.sum(np.diagonal(a) * 2.0)


FUSED = [_dot_like, _normalize, _softmax, _logsumexp, _view_reductions, _chained, _trace]


@pytest.mark.parametrize("dtype", sweep(FLOATS, ["float32"]))
@pytest.mark.parametrize("fn", FUSED, ids=lambda f: f.__name__.strip("_"))
@settings(max_examples=2)
@given(data=st.data())
def test_fused(fn, dtype: str, data: st.DataObject) -> None:
    shape = data.draw(shapes(min_dims=2, max_dims=2, min_side=2, max_side=7))
    a = data.draw(arrays(dtype, shape, layout=layouts, lo=-3, hi=3))
    args = (a, data.draw(arrays(dtype, shape, layout=layouts, lo=-3, hi=3))) if fn is _dot_like else (a,)
    rtol = 1e-4 if dtype == "float32" else 1e-10
    check(fn, *args, rtol=rtol, atol=rtol * 10 * a.size, signed_zeros=False)  # max/min of +-0.0: order-dependent in NumPy


@pytest.mark.parametrize("dtype", ["int32", "int64", "bool"])
def test_trace_and_int_accumulators(dtype: str) -> None:
    a = make_array(7, dtype, (4, 4), lo=-50, hi=50)
    check(lambda a: (np.trace(a), a.sum(axis=1), a.prod(axis=0), a.mean(axis=0)), a)


@pytest.mark.parametrize("layout", ["C", "F", "strided", "negative"])
def test_large_float32_sum(layout: str) -> None:
    """A sum over 10^5 float32 values: NumPy's pairwise sum vs the kernel's order agree to 1e-4."""
    a = with_layout(make_array(8, "float32", (300, 400), lo=0, hi=1), layout)
    check(lambda a: (a.sum(), a.sum(axis=0), a.mean(axis=1)), a, rtol=1e-4)


@pytest.mark.parametrize("dtype", ["int32", "float32"])
def test_outer_axis_reductions_meet_rows_in_blocks(dtype: str) -> None:
    """Reductions of one outer axis that 4 divides meet 4 of its rows per pass over the kept loops
    (emit._rows_innermost); one that 4 does not divide, or read at an offset, keeps one row a pass."""
    a = make_array(9, dtype, (36, 7, 20), lo=-3, hi=3, integral=True)
    check(lambda a: (a.sum(axis=0), a.max(axis=1), np.prod(a[:8], axis=0), a.min(axis=0), a[1:].sum(axis=0),
                     a.mean(axis=0), np.var(a, axis=0)), a, signed_zeros=False)  # (max of -0.0 and 0.0: either)
