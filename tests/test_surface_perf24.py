"""argmax/argmin and cumsum at the benchmark's size (4096 x 4096 float32, benchmarks/bench_reductions.py)
against NumPy: cheap np.full inputs with one planted max at the very end, ties everywhere, NaN late,
so the lanes, their combination and the threads' split keep NumPy's first-index and NaN-wins rules
at size; cumsum along rows, columns and flattened, bit for bit NumPy's where it adds in NumPy's order."""

from __future__ import annotations

import numpy as np
import pytest

import egglog_tensor as et

N = 4096
TARGETS = ["cpu", "cpu-openmp"]


def arg_reductions(a):
    return np.argmax(a, axis=1), np.argmin(a, axis=0), np.argmax(a), np.argmin(a), np.argmax(a, axis=0), np.argmin(a, axis=1)


def _cases() -> dict[str, np.ndarray]:
    """Ties everywhere; one max (and min) planted in the last element; NaN late in a few rows and columns."""
    ties = np.full((N, N), 0.25, np.float32)
    planted = ties.copy()
    planted[:, -1] = 1.0  # each row's max at its end, after 4095 ties
    planted[-1, -1], planted[-1, -2] = 2.0, -2.0  # the flat max the last element, the min the one before
    late_nan = planted.copy()
    late_nan[N - 2, N - 3] = late_nan[N - 2, N - 1] = np.nan
    late_nan[7, -1], late_nan[-1, 5] = np.nan, np.nan
    return {"ties": ties, "planted at the end": planted, "NaN late": late_nan}


@pytest.mark.parametrize("target", TARGETS)
def test_argmax_argmin_at_4096_squared(target: str) -> None:
    kernel = et.kernel(arg_reductions, target=target, threads=2)
    for name, x in _cases().items():
        for i, (g, w) in enumerate(zip(kernel(x), arg_reductions(x), strict=True)):
            assert g.dtype == np.int64
            np.testing.assert_array_equal(g, w, err_msg=f"{name}, output {i}")


def test_argmax_of_a_broadcast_view_ties_everywhere() -> None:
    """A 0-stride view of one value (every element ties): index 0 everywhere, as NumPy."""
    x = np.broadcast_to(np.float32(-np.inf), (N, N))
    got = et.kernel(lambda a: (np.argmax(a), np.argmax(a, axis=1), np.argmin(a, axis=0)), target="cpu-openmp")(x)
    for g, w in zip(got, (np.argmax(x), np.argmax(x, axis=1), np.argmin(x, axis=0)), strict=True):
        np.testing.assert_array_equal(g, w)


def scans(a):
    return np.cumsum(a, axis=0), np.cumsum(a, axis=1)


def test_cumsum_along_rows_and_columns_is_numpys_bit_for_bit_at_size() -> None:
    """Along either axis each running sum adds in NumPy's order, so float32 cumsums of 4096 x 4096 are
    NumPy's exactly, rounding error and all (0.1 is inexact; the running sums' error grows with i)."""
    x = np.full((N, N), 0.1, np.float32)
    x[::3, 1::5] = -1.7
    for g, w in zip(et.kernel(scans, target="cpu-openmp", threads=2)(x), scans(x), strict=True):
        np.testing.assert_array_equal(g, w)


def test_cumsum_flattened_at_size() -> None:
    """The 2^24-element flattened cumsum: one vector pass on one thread, two passes over blocks on two (each
    block's rescan a vector loop); each within NumPy's own distance from the exact float64 prefix sums."""
    x = np.full((N, N), 0.1, np.float32)
    want = np.cumsum(x)
    one = et.kernel(lambda a: np.cumsum(a), target="cpu")
    two = et.kernel(lambda a: np.cumsum(a), target="cpu-openmp", threads=2)
    assert "linalg.generic" not in one.inspect(x).stage("linalg")  # no block totals: one pass
    assert two.inspect(x).stage("linalg").count("linalg.generic") == 2  # block totals, their offsets; then the rescan
    exact = np.arange(1, x.size + 1, dtype=np.float64) * np.float64(np.float32(0.1))
    for got in (one(x), two(x)):
        assert np.abs(got - exact).max() <= np.abs(want - exact).max()


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_order_keys_tie_signed_zeros_and_rank_every_nan_first(dtype: str) -> None:
    """argmax/argmin compare floats as integer order keys: -0.0 ties 0.0 (the first wins), a NaN with
    its sign bit set wins like any NaN, subnormals and infinities keep their order; in lanes and not."""
    x = np.zeros((6, 1000), dtype)
    x[0, ::2] = -0.0  # max and min both 0: index 0 (a -0.0) wins
    x[1, 500:], x[1, 7] = -0.0, np.copysign(np.nan, -1)  # a negative NaN wins both
    x[2, 10], x[2, 11], x[2, 900] = np.finfo(dtype).smallest_subnormal, -np.finfo(dtype).smallest_subnormal, np.inf
    x[3, :], x[3, 999] = -np.inf, np.finfo(dtype).min  # the max the last element
    x[4, 3], x[4, 600], x[4, 601] = np.finfo(dtype).max, -np.inf, np.nan
    x[5, :] = np.copysign(np.nan, -1)  # all NaN: index 0

    def f(a):
        return np.argmax(a, axis=1), np.argmin(a, axis=1), np.argmax(a[:, :40], axis=1), np.argmin(a[:, :40], axis=1), np.argmax(a[2:4]), np.argmin(a[2:4])

    for target in TARGETS:
        for g, w in zip(et.kernel(f, target=target, threads=2)(x), f(x), strict=True):
            np.testing.assert_array_equal(g, w)
