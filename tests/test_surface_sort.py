"""Sorts (egglog_tensor/tracing/sorting.py, the `sort`/`argsort` primitives, lowering/sorting.py):
np.sort and np.argsort against NumPy's kind="stable" (ties, NaN, +-inf, -0.0 beside 0.0 keep their
order) along every axis of several shapes and dtypes, a long row and many short rows; partition as a
full sort; median, quantile and percentile (static q, method="linear"; the others: test_surface_everyday2.py) against NumPy; clear errors."""

from __future__ import annotations

import numpy as np
import pytest
from strategies import check, make_array, sweep, with_layout

import egglog_tensor as et

SORTED_DTYPES = ("float32", "float64", "float16", "int8", "uint64", "bool")


def exact(fn, *args: np.ndarray, target: str | None = None) -> None:
    """The kernel of `fn` gives NumPy's results bit for bit (NaN payloads, signed zeros), dtypes and shapes."""
    got, want = et.kernel(fn, target=target)(*args), fn(*args)
    for i, (g, w) in enumerate(zip(got, want, strict=True)):
        assert (g.dtype, g.shape) == (w.dtype, w.shape), f"output {i}: {g.dtype} {g.shape}, NumPy gives {w.dtype} {w.shape}"
        assert g.tobytes() == w.tobytes(), f"output {i} differs:\n got  {g}\n want {w}"


def _sorts(a):
    """Sort and stable argsort along each axis and of the flattened array."""
    return (*(np.sort(a, axis=d, kind="stable") for d in range(a.ndim)), np.sort(a, axis=None, kind="stable"),
            *(np.argsort(a, axis=d, kind="stable") for d in range(a.ndim)), a.argsort(axis=None, kind="stable"))


@pytest.mark.parametrize("dtype", sweep(SORTED_DTYPES, ["float32", "float16", "uint64", "bool"]))
def test_sort_and_argsort_every_axis(dtype: str) -> None:
    """Ties (small integers), NaN, +-inf and both zeros in a 3-D array: every axis, bit for bit."""
    x = make_array(1, dtype, (3, 6, 5), lo=-3, hi=3, special=dtype.startswith("float"))
    if dtype.startswith("float"):
        x[1, :, 2] = -0.0  # a row of zeros of both signs: stable order kept
        x[1, ::2, 2] = 0.0
        x[2, 1] = np.nan
    exact(_sorts, x)


def test_layouts_and_fused_producers() -> None:
    """Fortran-ordered and strided arguments, and an expression sorted without a buffer of its own."""
    x = make_array(2, "float64", (7, 9), special=True)
    for layout in ("F", "strided", "negative"):
        exact(lambda a: (np.sort(a * 2.0 - 1.0, axis=0, kind="stable"), np.argsort(-a, kind="stable")), with_layout(x, layout))


def test_sizes_zero_and_one() -> None:
    exact(lambda a, b, c: (np.sort(a), np.argsort(a), np.sort(b, axis=0), np.argsort(b, axis=0), np.sort(c), np.argsort(c)),
          np.zeros((3, 0)), np.arange(4.0).reshape(1, 4), np.array([2.5]))


def test_long_row() -> None:
    """One row of 100,000 (17 merge passes, an odd last block), with NaN, +-inf and many ties."""
    x = make_array(3, "float64", (100_000,), lo=-50, hi=50, special=True, integral=True)
    exact(lambda a: (np.sort(a, kind="stable"), np.argsort(a, kind="stable")), x)
    i = make_array(4, "int32", (100_001,), lo=-1000, hi=1000)
    exact(lambda a: (np.sort(a, kind="stable"), np.argsort(a, kind="stable")), i)


@pytest.mark.parametrize("target", ["cpu", "cpu-openmp"])
def test_many_long_rows_radix(target: str) -> None:
    """8,192 rows of 300 (radix sorts: counts reused row after row; space per row on the stack overflowed it),
    float32 with NaN, +-inf, -0.0 and ties, and int8 (one pass), in rows and down the columns."""
    x = make_array(6, "float32", (8192, 300), lo=-50, hi=50, special=True, integral=True)
    exact(lambda a: (np.sort(a, kind="stable"), np.argsort(a, kind="stable")), x, target=target)
    i = make_array(7, "int8", (300, 8192), lo=-128, hi=127)
    exact(lambda a: (np.sort(a, kind="stable"), np.argsort(a, axis=0, kind="stable")), i, target=target)


@pytest.mark.parametrize("target", ["cpu-openmp"])
def test_many_short_rows(target: str) -> None:
    """20,000 rows of 3, shared among the threads: an OpenMP region per sort (on "cpu" none; a long row stays serial)."""
    x = make_array(5, "float32", (20_000, 3), lo=-2, hi=2, special=True, integral=True)
    exact(lambda a: (np.sort(a, kind="stable"), np.argsort(a, kind="stable"), np.sort(a, axis=0, kind="stable")), x, target=target)
    regions = et.kernel(lambda a: np.sort(a), target=target).inspect(x).facts.get("openmp")
    assert (regions.regions if regions else 0) == (1 if target == "cpu-openmp" else 0)


def test_partition_is_a_full_sort() -> None:
    """np.partition/argpartition give a valid partition for any kth (here: the sorted array)."""
    x = make_array(6, "float64", (4, 11), special=True)
    got = et.kernel(lambda a: (np.partition(a, 3), np.argpartition(a, (2, 5), axis=0)))(x)
    np.testing.assert_array_equal(got[0], np.sort(x, kind="stable"))
    np.testing.assert_array_equal(got[1], np.argsort(x, axis=0, kind="stable"))


@pytest.mark.parametrize("dtype", ["float64", "int64", "float16"])
def test_median(dtype: str) -> None:
    """Odd and even slices, axis None/int/tuple, keepdims; a slice with NaN gives NaN (int64: a float64
    mean, float16: a float32 mean, as NumPy)."""
    x = make_array(7, dtype, (4, 5, 6), lo=-5, hi=5, special=dtype.startswith("float"))
    check(lambda a: (np.median(a), np.median(a, axis=1), np.median(a, axis=2, keepdims=True), np.median(a, axis=(0, 2)),
                     np.median(a[:, :, 1:], axis=-1), np.median(a, axis=None, keepdims=True)), x, rtol=0, atol=0)


@pytest.mark.parametrize("dtype", ["float32", "int32"])
def test_quantile_and_percentile(dtype: str) -> None:
    """Static q (a Python float: weak, the array's float dtype; a list: float64), NumPy's lerp on
    either side of gamma 0.5, the ends, keepdims, NaN slices."""
    x = make_array(8, dtype, (5, 7), lo=-100, hi=100, special=dtype.startswith("float"))
    check(lambda a: (np.quantile(a, 0.3), np.quantile(a, [0.0, 0.25, 0.5, 0.9, 1.0], axis=1),
                     np.percentile(a, 75, axis=0, keepdims=True), np.percentile(a, [[10, 90.5]], axis=1),
                     np.quantile(a, 0.5, axis=(0, 1))), x, rtol=0, atol=0)


def test_errors_are_clear() -> None:
    x = np.arange(6.0)
    with pytest.raises(et.UnsupportedError, match="method='weibull' is not supported"):
        et.kernel(lambda a: np.quantile(a, 0.5, method="weibull"))(x)
    with pytest.raises(ValueError, match=r"q must be in the range \[0, 100\]"):
        et.kernel(lambda a: np.percentile(a, 101))(x)
    with pytest.raises(et.TracingError, match="axis -1 is out of bounds for an array of dimension 0"):
        et.kernel(lambda a: np.sort(a))(np.float64(2.0))
    with pytest.raises(et.UnsupportedError, match="`order`"):
        et.kernel(lambda a: np.sort(a, order="f"))(x)
    with pytest.raises(et.UnsupportedError, match=r"a must be 1-D, got shape \(2, 3\)"):
        et.kernel(lambda a: np.searchsorted(a, 1.0))(x.reshape(2, 3))
    with pytest.raises(et.UnsupportedError, match="GPU target rocdl: np.sort"):
        et.kernel(lambda a: np.sort(a), target="rocdl:gfx942").inspect(x)


def test_nan_forms() -> None:
    """nanmedian, nanquantile, nanpercentile: NaN ignored (counts differ per slice, an all-NaN slice gives NaN)."""
    x = make_array(9, "float64", (6, 7), lo=-100, hi=100, special=True)
    x[2] = np.nan
    x[4, 1:] = np.nan
    f = make_array(10, "float32", (5, 8), special=True)
    big = make_array(11, "float32", (25, 30), special=True)  # 600 elements and more: NumPy's other nanmedian path
    with np.errstate(invalid="ignore"):
        check(lambda a, b, c: (np.nanmedian(a, axis=1), np.nanmedian(b, axis=0, keepdims=True), np.nanquantile(a, [0.0, 0.3, 0.75, 1.0], axis=1),
                               np.nanpercentile(b, 40, axis=1), np.nanquantile(b, 0.5, axis=1), np.nanpercentile(b, [[20.0]], axis=0),
                               np.nanmedian(c, axis=0), np.nanmedian(c[:, 1:], axis=0), np.nanquantile(c, 0.25, axis=1)),
              x, f, big, rtol=0, atol=0)


@pytest.mark.parametrize("dtype", ["float32", "uint8"])
def test_searchsorted(dtype: str) -> None:
    """Both sides, ties, NaN/inf (NumPy's order), a `sorter`, a Python scalar (weakly typed), 0-d and 2-D v."""
    special = dtype == "float32"
    a = np.sort(make_array(12, dtype, (40,), lo=0, hi=20, special=special, integral=True))
    v = make_array(13, dtype, (6, 7), lo=-2, hi=22, special=special, integral=True)
    order = np.argsort(a[::-1], kind="stable")
    exact(lambda a, v, order: (np.searchsorted(a, v), np.searchsorted(a, v, side="right"), np.searchsorted(a[::-1], v, sorter=order),
                               np.searchsorted(a, v[0, 0]), np.searchsorted(a, 5), np.searchsorted(a[:1], v, "right")), a, v, order)


def test_searchsorted_long() -> None:
    """100,000 sorted values searched for 50,000 (17 halvings each)."""
    a = np.sort(make_array(14, "float64", (100_000,), special=True))
    v = make_array(15, "float64", (50_000,), lo=-11, hi=11, special=True)
    exact(lambda a, v: (np.searchsorted(a, v), np.searchsorted(a, v, "right")), a, v)


def test_interp() -> None:
    """np.interp bit for bit: inside, outside (left/right defaults and given), on xp's points (a repeated
    one too), NaN x, an infinite fp (NumPy's retry from the right end), one-point xp, float32 and scalar x."""
    rng = np.random.default_rng(16)
    xp = np.sort(rng.uniform(-5, 5, 30))
    xp[10] = xp[9]
    fp = rng.uniform(-1, 1, 30)
    fp[3] = np.inf
    x = rng.uniform(-7, 7, (4, 50))
    x[0, :6] = [np.nan, xp[0], xp[-1], xp[9], xp[12], xp[3]]
    exact(lambda x, xp, fp: (np.interp(x, xp, fp), np.interp(x, xp, fp, left=-9.0, right=9.0), np.interp(x, xp[:1], fp[:1]),
                             np.interp(x.astype(np.float32), xp, fp), np.interp(x[0], xp, fp)), x, xp, fp)


def test_bfloat16_sorts_in_numpys_order() -> None:
    """bfloat16 (ml_dtypes) in NumPy's order, NaN last, as its float32 values sort (ml_dtypes' own
    np.sort of bfloat16 leaves NaN where its comparisons stop)."""
    import ml_dtypes  # (a dev dependency)
    x = make_array(17, "float32", (3, 9), lo=-3, hi=3, special=True, integral=True).astype(ml_dtypes.bfloat16)
    got = et.kernel(lambda a: (np.sort(a, axis=1), np.argsort(a, axis=0)))(x)
    wide = x.astype(np.float32)
    assert got[0].dtype == x.dtype and got[0].tobytes() == np.sort(wide, axis=1, kind="stable").astype(x.dtype).tobytes()
    np.testing.assert_array_equal(got[1], np.argsort(wide, axis=0, kind="stable"))
