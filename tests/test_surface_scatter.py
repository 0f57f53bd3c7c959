"""Scatter-add reductions and integer gcd/lcm against NumPy (issues 24 and 25): np.bincount with a
static minlength, np.histogram with static bins and range or bin edges (tracing/scatter.py, the
scatter_add op), their run-time checks and clear errors, and np.gcd / np.lcm."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import check, covering, kernel_of, make_array

import egglog_tensor as et

EXACT = {"rtol": 0.0, "atol": 0.0}
SIZES = st.sampled_from([0, 1, 2, 7, 33, 100])

# --- bincount -------------------------------------------------------------------------------------



def _bincount(bins: int, weighted: bool):
    """A kernel function counting into `bins` bins (a closure: default arguments would be kernel arguments)."""
    if weighted:
        return lambda x, w: np.bincount(x, weights=w, minlength=bins)
    return lambda x: np.bincount(x, minlength=bins)


BINCOUNT = {m: _bincount(m, False) for m in (1, 2, 5)}
WEIGHTED = {m: _bincount(m, True) for m in (2, 5)}


@pytest.mark.parametrize("dtype", ["int32", "int64", "bool"])
def test_bincount_counts_of_each_dtype(dtype: str) -> None:
    check(BINCOUNT[2], make_array(1, dtype, (33,), lo=0, hi=1))


@pytest.mark.slow
@settings(max_examples=12, deadline=None)
@given(SIZES, st.sampled_from(["int32", "int64", "bool"]), st.sampled_from([1, 2, 5]), st.integers(0, 2**16))
def test_bincount_counts(n: int, dtype: str, bins: int, seed: int) -> None:
    bins = max(bins, 2) if dtype == "bool" else bins
    x = make_array(seed, dtype, (n,), lo=0, hi=bins - 1)
    check(BINCOUNT[bins], x)


@pytest.mark.parametrize("wdtype", ["float32", "float64", "int32", "bool"])
def test_bincount_weights_of_each_dtype(wdtype: str) -> None:
    check(WEIGHTED[5], make_array(2, "int32", (33,), lo=0, hi=4), make_array(3, wdtype, (33,), special=True), **EXACT)


@pytest.mark.slow
@settings(max_examples=12, deadline=None)
@given(SIZES, st.sampled_from(["int32", "int64", "bool"]), st.sampled_from(["float32", "float64", "int32", "bool"]),
       st.sampled_from([2, 5]), st.integers(0, 2**16))
def test_bincount_weights(n: int, dtype: str, wdtype: str, bins: int, seed: int) -> None:
    x = make_array(seed, dtype, (n,), lo=0, hi=bins - 1)
    w = make_array(seed + 1, wdtype, (n,), special=True)
    check(WEIGHTED[bins], x, w, **EXACT)  # float64 sums in NumPy's order: the same bits


def test_bincount_of_computed_indices_and_weights_fuses() -> None:
    fn = lambda x: np.bincount((x * 3) % 5, weights=x * 0.5, minlength=5)  # noqa: E731
    x = np.arange(-50, 50)
    check(fn, x, **EXACT)
    linalg = kernel_of(fn).inspect(x).stage("linalg")
    # index and weight computed in the loop: the only generics are the two run-time checks' reductions
    assert "scf.for" in linalg and linalg.count("linalg.generic") == 2


def test_bincount_large_input() -> None:
    fn = lambda x, w: np.bincount(x % 7, weights=w, minlength=7)  # noqa: E731
    x, w = np.arange(1_000_000), np.full(1_000_000, 0.1)
    check(fn, x, w, **EXACT)


def test_bincount_out_of_range_values_raise_at_run_time() -> None:
    k = kernel_of(BINCOUNT[5])
    with pytest.raises(et.IndexOutOfBoundsError, match=r"x has a value >= minlength=5, the kernel's number of bins; pass a larger minlength \(computed from argument\(s\) x\)"):
        k(np.array([0, 4, 5, 1]))
    with pytest.raises(IndexError, match="must have no negative elements"):
        k(np.array([0, -1, 3]))
    np.testing.assert_array_equal(k(np.array([0, 4, 4, 1])), [1, 1, 0, 0, 2])  # the kernel still works


@pytest.mark.parametrize(
    ("fn", "error", "pattern"),
    [
        (lambda x: np.bincount(x), et.UnsupportedError, "needs a static minlength=.*depends on the data; pass minlength=N"),
        (lambda x: np.bincount(x, minlength=-1), et.TracingError, "'minlength' must not be negative"),
        (lambda x: np.bincount(x * 1.5, minlength=3), et.TracingError, "cannot cast x from float64 to int64"),
        (lambda x: np.bincount(x.reshape(2, 2), minlength=3), et.TracingError, "x must be 1-D"),
        (lambda x: np.bincount(x, weights=x[:2], minlength=3), et.TracingError, "don't have the same length"),
        (lambda x: np.bincount(x, minlength=x[0]), et.UnsupportedError, "minlength must be a static Python int"),
    ],
)
def test_bincount_errors(fn, error: type, pattern: str) -> None:
    with pytest.raises(error, match=pattern):
        et.kernel(fn)(np.arange(4))


# --- histogram ------------------------------------------------------------------------------------

HISTOGRAMS = {
    "10 bins of an int range": lambda x: np.histogram(x, bins=10, range=(-2, 2)),
    "7 bins, float range": lambda x: np.histogram(x, bins=7, range=(-1.5, 2.25)),
    "1 bin": lambda x: np.histogram(x, bins=1, range=(0.0, 1.0)),
    "empty range widened": lambda x: np.histogram(x, bins=4, range=(1.0, 1.0)),
    "NumPy scalar range": lambda x: np.histogram(x, bins=9, range=(np.float32(-1), np.float64(1.1))),
    "awkward edges": lambda x: np.histogram(x, bins=13, range=(-0.3, 0.7)),
    "edges": lambda x: np.histogram(x, bins=[-3, -1, 0, 0.5, 2, 2]),
    "float32 edges": lambda x: np.histogram(x, bins=np.array([-1, 0, 0.1, 5], np.float32)),
    "weights": lambda x, w: np.histogram(x, bins=5, range=(-2.0, 2.0), weights=w),
    "edges argument": lambda x, e: np.histogram(x, bins=e),
}


@pytest.mark.parametrize("case", sorted(HISTOGRAMS))
def test_histogram_case(case: str) -> None:
    """Each case once (float32 data with NaN and +-inf); the property test below draws sizes and dtypes."""
    test_histogram.hypothesis.inner_test(33, "float32", case, 11)


@pytest.mark.slow
@settings(max_examples=20, deadline=None)
@given(SIZES, st.sampled_from(["float32", "float64"]), st.sampled_from(sorted(HISTOGRAMS)), st.integers(0, 2**16))
def test_histogram(n: int, dtype: str, case: str, seed: int) -> None:
    x = make_array(seed, dtype, (n,), lo=-3, hi=3, special=True)
    fn = HISTOGRAMS[case]
    if case == "weights":
        check(fn, x, make_array(seed + 1, dtype, (n,)), **EXACT)
    elif case == "edges argument":
        check(fn, x, np.sort(make_array(seed + 2, dtype, (6,), lo=-3, hi=3)), **EXACT)
    else:
        check(fn, x, **EXACT)


MANY_EDGES = np.concatenate([np.linspace(-3, 0, 50), [0.0, 0.0], np.linspace(0.1, 2.5, 77), [2.5]])  # 130 edges: searched


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_histogram_many_edges_are_searched(dtype: type) -> None:
    x = make_array(9, np.dtype(dtype).name, (2000,), lo=-4, hi=4, special=True)
    x[: MANY_EDGES.size] = MANY_EDGES
    check(lambda x: np.histogram(x, bins=MANY_EDGES), x, **EXACT)
    check(lambda x, e: np.histogram(x, bins=e)[0], x, MANY_EDGES[::2])


@pytest.mark.parametrize("case", ["awkward edges", "7 bins, float range"])
def test_histogram_values_on_the_edges(case: str) -> None:
    """Each edge, and the float next to it on both sides: NumPy's index computation, corrected by the edges."""
    fn = HISTOGRAMS[case]
    for dtype in (np.float32, np.float64):
        edges = fn(np.zeros(1, dtype))[1].astype(dtype)
        x = np.concatenate([edges, np.nextafter(edges, dtype(-np.inf)), np.nextafter(edges, dtype(np.inf))])
        check(fn, x, **EXACT)


def test_histogram_of_2d_integer_data() -> None:
    check(HISTOGRAMS["10 bins of an int range"], np.arange(-6, 6).reshape(3, 4))
    check(HISTOGRAMS["edges"], np.arange(-6, 6, dtype=np.int32).reshape(4, 3))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_histogram_density(dtype: type) -> None:
    x = make_array(3, np.dtype(dtype).name, (500,), lo=-3, hi=3, special=True)
    check(lambda x: np.histogram(x, bins=8, range=(-2, 2), density=True), x, rtol=1e-15, atol=0.0)
    check(lambda x, e: np.histogram(x, bins=e, density=True), x, np.array([-2.0, -1.0, 0.5, 3.0]), rtol=1e-15, atol=0.0)


def test_histogram_weights_with_edges() -> None:
    """NumPy sums weights over edges as differences of a sorted cumulative sum: equal up to rounding."""
    x, w = make_array(5, "float64", (300,), lo=-3, hi=3), make_array(6, "float64", (300,))
    check(lambda x, w: np.histogram(x, bins=[-2, 0, 1, 2.5], weights=w), x, w, rtol=1e-12, atol=1e-12)


def test_histogram_large_weighted_input_sums_by_numpy_blocks() -> None:
    """Past 65536 elements NumPy adds the float sums of each block: the same bits here."""
    check(HISTOGRAMS["weights"], np.full(200_000, 0.3), np.full(200_000, 0.1), **EXACT)


def test_histogram_large_float32_input() -> None:
    x = make_array(7, "float32", (150_000,), lo=-3, hi=3)
    check(HISTOGRAMS["weights"], x, make_array(8, "float32", (150_000,)), **EXACT)


def test_histogram_non_monotonic_edges_argument_raises_at_run_time() -> None:
    k = kernel_of(HISTOGRAMS["edges argument"])
    x = np.linspace(-1, 1, 9)
    with pytest.raises(et.IndexOutOfBoundsError, match="`bins` must increase monotonically"):
        k(x, np.array([0.0, 1.0, 0.5]))
    np.testing.assert_array_equal(k(x, np.array([-1.0, 0.0, 1.0]))[0], [4, 5])


@pytest.mark.parametrize(
    ("fn", "error", "pattern"),
    [
        (lambda x: np.histogram(x, bins="auto", range=(0, 1)), et.UnsupportedError, "would depend on the data"),
        (lambda x: np.histogram(x, bins=3, range=(x[0], 1.0)), et.UnsupportedError, "range must be static"),
        (lambda x: np.histogram(x, bins=[0, 2, 1]), et.TracingError, "must increase monotonically"),
        (lambda x: np.histogram(x, bins=[0, np.nan, 1]), et.TracingError, "must not be NaN"),
        (lambda x: np.histogram(x, bins=3, range=(1, 0)), et.TracingError, "max must be larger than min"),
        (lambda x: np.histogram(x, bins=3, range=(0, np.inf)), et.TracingError, "is not finite"),
        (lambda x: np.histogram(x, bins=0, range=(0, 1)), et.TracingError, "must be positive"),
        (lambda x: np.histogram(x, bins=[1.0]), et.TracingError, "at least 2 edges"),
        (lambda x: np.histogram(x, bins=3, range=(0, 1), weights=x[:2]), et.TracingError, "same shape as a"),
        (lambda x: np.histogram(x, bins=x.reshape(2, 2)), et.TracingError, "must be 1d"),
    ],
)
def test_histogram_errors(fn, error: type, pattern: str) -> None:
    with pytest.raises(error, match=pattern):
        et.kernel(fn)(np.arange(4.0))


# --- gcd, lcm -------------------------------------------------------------------------------------

GCD_LCM = lambda a, b: (np.gcd(a, b), np.lcm(a, b))  # noqa: E731


@pytest.mark.parametrize("dtype", [np.int32, np.int64])
def test_gcd_lcm_of_every_pair_of_awkward_values(dtype: type) -> None:
    """Zeros, signs, the most negative value (its magnitude wraps, as NumPy's) and lcm's wraparound."""
    info = np.iinfo(dtype)
    values = np.array([0, 1, -1, 2, -4, 6, 12, -18, 7, 97 * 89, 2**15, -(2**15) + 1, info.min, info.max, info.max - 1], dtype)
    check(GCD_LCM, np.repeat(values, len(values)), np.tile(values, len(values)))


@settings(max_examples=4, deadline=None)
@given(SIZES, st.sampled_from(["int32", "int64"]), st.integers(0, 2**16))
def test_gcd_lcm_random(n: int, dtype: str, seed: int) -> None:
    check(GCD_LCM, make_array(seed, dtype, (n, 2), lo=-10**6, hi=10**6), make_array(seed + 1, dtype, (2,), lo=-1000, hi=1000))


def test_gcd_lcm_with_python_ints_and_mixed_dtypes() -> None:
    check(lambda a: (np.gcd(a, 12), np.lcm(18, a)), np.arange(-5, 6, dtype=np.int32))
    check(lambda a, b: GCD_LCM(a, b), np.arange(-5, 6, dtype=np.int32), np.arange(11, dtype=np.int64))


def test_gcd_of_floats_is_a_clear_error() -> None:
    with pytest.raises(et.UnsupportedError, match="np.gcd"):
        et.kernel(lambda a: np.gcd(a, a))(np.ones(3))


DATA_RANGE = [np.random.default_rng(1).standard_normal(1000).astype(np.float32), np.random.default_rng(2).standard_normal((30, 7)),
              np.full(10, 3.0, np.float32), np.random.default_rng(3).integers(-5, 9, 100).astype(np.int32),
              np.full(4, 7, np.int64), np.array([1.0]), np.array([0, 2**62, -2**62], np.int64),
              np.array([1e-30, 2e-30], np.float32), np.random.default_rng(4).integers(0, 200, 50).astype(np.uint8),
              np.random.default_rng(5).standard_normal(50).astype(np.float16), np.zeros(0)]


@pytest.mark.parametrize(*covering(index=range(len(DATA_RANGE)), bins=[1, 10, 33]))
def test_histogram_of_the_data_range_matches_numpy(bins: int, index: int) -> None:
    """np.histogram(x, bins) without a range: equal bins of the data's min and max (one value: widened by 0.5
    each way; empty data: [0, 1]), bit for bit NumPy's counts, weighted sums and edges in its dtypes."""
    x = DATA_RANGE[index]
    w = np.linspace(0, 1, x.size).reshape(x.shape)
    for fn, args in ((lambda x: np.histogram(x, bins), (x,)), (lambda x, w: np.histogram(x, bins, weights=w), (x, w)),
                     (lambda x: np.histogram_bin_edges(x, bins), (x,))):
        got, want = et.kernel(fn)(*args), fn(*args)
        for g, v in zip(got if isinstance(want, tuple) else [got], want if isinstance(want, tuple) else [want], strict=True):
            assert g.dtype == v.dtype
            np.testing.assert_array_equal(g, v)


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_histogram_of_a_data_range_not_finite_raises_as_numpy(bad: float) -> None:
    x = np.array([1.0, bad, 2.0])
    with pytest.raises(ValueError, match="not finite"):
        np.histogram(x)
    with pytest.raises(et.DataValueError, match="autodetected range of the data is not finite"):
        et.kernel(lambda x: np.histogram(x, 4))(x)
    with pytest.raises(et.DataValueError, match="autodetected range of dim 1 of the sample is not finite"):
        et.kernel(lambda x: np.histogram2d(np.ones(3), x, 4))(x)
