"""Scans (egglog_tensor/tracing/scans.py, the `cumsum`/`cumprod` primitives): cumsum, cumprod, their
nan- forms and cumulative_sum/cumulative_prod against NumPy over drawn shapes (sizes 0 and 1),
dtypes, layouts, axes and NaN/inf data; fused producers; the two-pass scan of a long axis (cpu and
cpu-openmp), exact for integers and no less accurate than NumPy's sequential scan at size."""

from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import ALL_DTYPES, FLOATS, arrays, check, layouts, shapes

import egglog_tensor as et
from egglog_tensor.errors import TracingError


@settings(max_examples=15, deadline=None)
@given(x=arrays(st.sampled_from(ALL_DTYPES), shapes(min_dims=1), layout=layouts, special=True, lo=-2, hi=2), data=st.data())
def test_cumsum_cumprod_over_drawn_shapes(x: np.ndarray, data: st.DataObject) -> None:
    axis = data.draw(st.none() | st.integers(-x.ndim, x.ndim - 1))
    check(lambda a: (np.cumsum(a, axis=axis), np.cumprod(a, axis=axis), a.cumsum(axis), a.cumprod(axis=axis)), x)


@settings(max_examples=10, deadline=None)
@given(x=arrays(st.sampled_from(FLOATS), shapes(min_dims=1, max_dims=2), special=True), data=st.data())
def test_nan_scans_over_drawn_shapes(x: np.ndarray, data: st.DataObject) -> None:
    axis = data.draw(st.none() | st.integers(-x.ndim, x.ndim - 1))
    check(lambda a: (np.nancumsum(a, axis=axis), np.nancumprod(a, axis=axis)), x)


def test_dtypes_are_numpys() -> None:
    """bool and int32 widen to int64, floats keep theirs, `dtype=` casts the input first (bool: or/and)."""
    x = np.array([[1.5, -2.5, 0.0], [np.inf, -np.inf, np.nan]], np.float32)
    out = check(lambda a: (np.cumsum(a, axis=1), np.cumsum(a, dtype=np.float64), np.cumprod(a, axis=0, dtype=np.int32)),
                x[:1])
    assert [o.dtype for o in out] == [np.float32, np.float64, np.int32]
    out = check(lambda b, i: (np.cumsum(b), np.cumprod(i, axis=1), np.cumsum(b, dtype=bool), np.cumprod(b, axis=1, dtype=bool),
                              np.cumsum(i, dtype=np.float32)),
                np.array([[True, False, True], [False, True, True]]), np.array([[3, -4, 5], [7, 0, 2]], np.int32))
    assert [o.dtype for o in out] == [np.int64, np.int64, np.bool_, np.bool_, np.float32]
    check(lambda a: (np.cumsum(a, axis=1), np.cumprod(a, axis=1), np.nancumsum(a), np.nancumprod(a, axis=1)), x)


def test_edge_cases() -> None:
    """0-d arrays scan as one element, size-0 and size-1 axes, -0.0 stays -0.0, ints wrap like NumPy's."""
    check(lambda a: (np.cumsum(a), np.cumprod(a, axis=0), np.cumsum(a, axis=-1)), np.float64(-0.0))
    check(lambda a: (np.cumsum(a, axis=0), np.cumprod(a, axis=1), np.cumsum(a)), np.ones((0, 3), np.float32))
    check(lambda a: (np.cumsum(a, axis=0), np.cumprod(a, axis=-1), np.cumsum(a)), np.array([[-0.0, 2.0, -0.0]]))
    check(lambda i: (np.cumsum(i), np.cumprod(i)), np.array([2**62, 2**62, 3], np.int64))


def test_rows_scanned_side_by_side() -> None:
    """An innermost-axis scan of a multiple of 4 rows runs 4 rows at a time: the same values, any layout."""
    x = np.random.default_rng(3).standard_normal((2, 12, 33))
    x[1, 5, 3], x[0, 7, 10] = np.nan, np.inf
    check(lambda a: (np.cumsum(a, axis=-1), np.cumprod(a * 0.5 + 1.0, axis=2), np.cumsum(a.astype(np.float32), axis=-1)), x)
    check(lambda a: np.cumsum(a, axis=1), np.asfortranarray(x[0]))
    check(lambda i: np.cumsum(i, axis=1), np.arange(16 * 9, dtype=np.int32).reshape(16, 9)[::-1])


@pytest.mark.skipif(not hasattr(np, "cumulative_sum"), reason="NumPy < 2.1 has no cumulative_sum")
def test_cumulative_sum_and_prod() -> None:
    x = np.arange(1, 13, dtype=np.float64).reshape(3, 4) / 3
    check(lambda a: (np.cumulative_sum(a, axis=1), np.cumulative_prod(a, axis=0, include_initial=True),
                     np.cumulative_sum(a[0], include_initial=True), np.cumulative_sum(a > 1, axis=-1, include_initial=True),
                     np.cumulative_prod(a, axis=1, dtype=np.float32)), x)
    check(lambda a: (np.cumulative_sum(a, axis=0, include_initial=True), np.cumulative_prod(a, axis=1)), np.ones((0, 2)))
    with pytest.raises(TracingError, match="needs `axis`"):
        et.kernel(lambda a: np.cumulative_sum(a))(x)


def test_producers_fuse_into_the_scan() -> None:
    """np.cumsum(x * 2 + y, axis=1) is one generic reading x and y (no temporary for x * 2 + y)."""
    x = np.random.default_rng(0).standard_normal((6, 9))
    fn = lambda a, b: np.cumsum(a * 2.0 + np.exp(b), axis=1) - 1.0
    check(fn, x, x[::-1])
    linalg = et.kernel(fn).inspect(x, x).stage("linalg")
    assert linalg.count("linalg.generic") == 2  # the scan (its producers inlined), its consumer
    assert re.search(r"ins\(%\w+, %\w+ : tensor<6x9xf64>, tensor<6x9xf64>\) outs\(%\w+, %\w+ : tensor<6xf64>, tensor<6x9xf64>\)", linalg)


def test_bad_arguments_name_the_problem() -> None:
    with pytest.raises(TracingError, match="axis 2 is out of bounds"):
        et.kernel(lambda a: np.cumsum(a, axis=2))(np.ones((2, 3)))
    with pytest.raises(TracingError, match="axis 1 is out of bounds"):
        et.kernel(lambda a: np.cumsum(a, axis=1))(np.float64(1.0))
    a = np.ones(3)  # out= writes into the argument, as NumPy's (tests/test_surface_updates.py)
    et.kernel(lambda a: np.cumsum(a, out=a))(a)
    np.testing.assert_array_equal(a, [1.0, 2.0, 3.0])


def test_long_axis_is_scanned_in_two_passes() -> None:
    """A long axis with too few other loops to scan side by side is split into blocks (the block
    totals, their running totals, each block rescanned from its offset), the tail scanned after:
    the blocks shared by the threads of cpu-openmp; a plain operand's blocks rescanned a vector at a
    time (lowering/scanrows.py), and on one thread the whole axis in one such pass."""
    kernel = et.kernel(lambda a: (np.cumsum(a, axis=0), np.cumprod(a * 0 + 1, axis=0)), target="cpu-openmp", threads=2)
    x = np.arange(3 * 2**16 + 5, dtype=np.int64) % 1000 - 300  # not a multiple of any block count: a tail
    total, ones = kernel(x)
    np.testing.assert_array_equal(total, np.cumsum(x))
    np.testing.assert_array_equal(ones, np.ones_like(x))
    parallel = kernel.inspect(x).stage("parallel")
    assert parallel.count("scf.forall") >= 4  # each scan's block totals and rescan split over the threads
    single = et.kernel(lambda a: np.cumsum(a), target="cpu")
    np.testing.assert_array_equal(single(x), np.cumsum(x))
    linalg = single.inspect(x).stage("linalg")
    assert "linalg.generic" not in linalg and linalg.count("vector.shuffle") >= 3  # one pass: log2(lanes) prefix steps, the total
    blocks = et.kernel(lambda a: np.cumsum(a), target="cpu-openmp", threads=2)
    w = x[:3 * 2**16]  # a whole number of blocks: their rescan is the vector loop
    np.testing.assert_array_equal(blocks(w), np.cumsum(w))
    linalg = blocks.inspect(w).stage("linalg")
    assert linalg.count("linalg.generic") == 2 and linalg.count("scf.forall (") == 1  # the totals, the offsets; the rescan
    y = np.broadcast_to(np.float64(0.5), (2, 2**17)).T  # a strided view: the scan reads it as it is
    check(lambda a: np.cumsum(a, axis=0), y)
    z = np.arange(2**17, dtype=np.float64).reshape(1, 2**17, 1) % 7  # one long axis among unit ones
    check(lambda a: (np.cumsum(a, axis=1), np.cumsum(a.reshape(2**17, 1), axis=0)), z)


@pytest.mark.slow
@pytest.mark.parametrize("target", ["cpu", "cpu-openmp"])
def test_float32_accuracy_at_size_is_numpys_or_better(target: str) -> None:
    """cumsum of 1e7 float32 values 0.1: NumPy adds in order (error growing with n); the two-pass
    scan's block offsets are sums of block totals, so its error is no larger than NumPy's."""
    x = np.full(10**7, 0.1, np.float32)
    got = et.kernel(lambda a: np.cumsum(a), target=target, threads=2)(x)
    exact = np.arange(1, x.size + 1, dtype=np.float64) * np.float64(np.float32(0.1))
    ours, numpys = np.abs(got - exact).max(), np.abs(np.cumsum(x) - exact).max()
    assert ours <= numpys, (ours, numpys)
    ints = np.ones(10**7, np.int32)
    np.testing.assert_array_equal(et.kernel(lambda a: np.cumsum(a), target=target, threads=2)(ints), np.arange(1, ints.size + 1))


@pytest.mark.parametrize("target", ["cpu", "cpu-openmp"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_vector_pass_keeps_signed_zeros_nan_and_inf(target: str, dtype) -> None:
    """The vector loop's shifted-in lanes hold -0.0 (x + -0.0 is x): leading -0.0 stay -0.0; a NaN, an inf and
    inf - inf carry on as in NumPy's running sum; the finite part as accurate as NumPy's."""
    x = np.full(2**18 + 3, 0.1, dtype)
    x[:5], x[1001], x[70001], x[200003] = -0.0, np.inf, -np.inf, np.nan
    got = et.kernel(lambda a: (np.cumsum(a), np.maximum.accumulate(a)), target=target, threads=2)(x)
    with np.errstate(invalid="ignore"):  # (inf - inf)
        want = np.cumsum(x), np.maximum.accumulate(x)
    assert np.signbit(got[0][:5]).all() and np.isinf(got[0][1001:70001]).all() and np.isnan(got[0][70001:]).all()
    exact = np.cumsum(x[:1001].astype(np.longdouble))
    assert np.abs(got[0][:1001] - exact).max() <= np.abs(want[0][:1001] - exact).max()
    np.testing.assert_array_equal(got[1], want[1])
