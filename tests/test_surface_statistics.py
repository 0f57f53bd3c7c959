"""Index reductions and statistics against NumPy (issue 24): argmax/argmin (the index-reduction
primitive: first index on ties, NaN first, int64, both targets, 2^20+ elements), any/all,
count_nonzero, ptp, var/std (accuracy at 2^22 float32 with a large mean), the nan-reductions,
average, np.linalg.norm and the logical ufuncs' reduce."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import ALL_DTYPES, FLOATS, arrays, check, covering, layouts, make_array, shapes, sweep, threaded, with_layout

import egglog_tensor as et
from egglog_tensor.errors import TracingError, UnsupportedError

TARGETS = ["cpu", "cpu-openmp"]


def _with_nan_and_ties(dtype: str, shape: tuple[int, ...]) -> np.ndarray:
    """Integral data (many ties) with NaN in a few places, whole NaN rows, and an all-equal column."""
    x = make_array(7, dtype, shape, lo=-3, hi=3, integral=True)
    if dtype in FLOATS:
        x[1, 2] = x[1, 5] = np.nan
        x[4, :] = np.nan
        x[:, 3] = np.inf
    x[:, 6] = x[0, 6]
    return x


def arg_reductions(a):
    return (np.argmax(a), np.argmin(a), np.argmax(a, axis=0), np.argmin(a, axis=1), a.argmax(axis=-1, keepdims=True),
            a.argmin(keepdims=True), a.T.argmax(0), a[::2, 1:].argmin(axis=0), np.argmax(a * 2 if a.dtype != bool else a, axis=1))


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_argmax_argmin_match_numpy(dtype: str, target: str) -> None:
    x = _with_nan_and_ties(dtype, (9, 11))
    got = et.kernel(arg_reductions, target=target)(x)
    for g, w in zip(got, arg_reductions(x), strict=True):
        assert g.dtype == np.int64 and g.shape == w.shape
        np.testing.assert_array_equal(g, w)


def _big_cases(n: int) -> dict[str, np.ndarray]:
    """2^20+ float32 inputs: all equal, ties of the max and min, NaN first/middle/last, only -inf."""
    ties = np.zeros(n, np.float32)
    ties[[17, 600_000, n - 1]] = 5.0
    ties[[3, 900_000]] = -5.0
    cases = {"all equal": np.full(n, 0.1, np.float32), "ties": ties, "-inf": np.full(n, -np.inf, np.float32),
             "random": np.random.default_rng(1).standard_normal(n, dtype=np.float32)}
    for at in (0, n // 2 + 1, n - 1):
        x = cases["random"].copy()
        x[at] = np.nan
        x[at + (1 if at < n - 1 else -5)] = np.nan
        cases[f"NaN at {at}"] = x
    return cases


@pytest.mark.parametrize("target", TARGETS)
def test_argmax_argmin_of_2_20_elements(target: str) -> None:
    """Flattened, and along both axes of the same data as 1024 x 1025 (rows and columns)."""
    n = 1024 * 1025

    def f(v):
        m = v.reshape(1024, 1025)
        return np.argmax(v), np.argmin(v), m.argmax(axis=1), m.argmin(axis=0), np.argmax(m)

    kernel = et.kernel(f, target=target)
    for name, x in _big_cases(n).items():
        for g, w in zip(kernel(x), f(x), strict=True):
            np.testing.assert_array_equal(g, w, err_msg=name)


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_argmax_argmin_in_lanes(dtype: str) -> None:
    """Rows long enough to be reduced in vector lanes (with a tail past the last row of lanes), many
    ties and NaN/inf: the first index wins across lanes; a Fortran-ordered copy takes the plain loop."""
    x = make_array(12, dtype, (5, 1001), lo=-3, hi=3, integral=True, special=dtype in FLOATS)
    if dtype in FLOATS:
        x[3, :] = np.nan
        x[4, 990:] = np.nan

    def f(a):
        steps = np.arange(a.shape[1]) * 37 % a.shape[1] * 10  # an iota in the fused input: the lanes renumber the loops
        finite = np.where(np.isnan(a), 0, a)
        return (np.argmax(a, axis=1), np.argmin(a, axis=-1), np.argmax(a), np.argmin(a[1:3]), np.argmax(a[:, :640], axis=1),
                np.argmax(finite - steps, axis=1), np.argmin(finite + steps))

    check(f, x)
    check(f, with_layout(x, "F"))


def test_row_argmax_is_a_vector_loop_split_over_threads_on_cpu_openmp() -> None:
    """A plain array's row argmax is lowering/argrows.py's loop over vectors with its bests as
    loop-carried vectors (no buffer of lanes), one row per iteration of a forall that cpu-openmp
    runs on its threads."""
    x = np.zeros((512, 1024), np.float32)
    x[:, 700], x[3, 5], x[9, 1000:] = 1.0, np.nan, 2.0
    kernel = et.kernel(lambda a: np.argmax(a, axis=1), target="cpu-openmp", threads=2)
    comp = kernel.inspect(x)
    assert re.search(r"scf.forall \(%\w+\) in \(512\) shared_outs\(.*\) -> \(tensor<512x1xi32>, tensor<512x1xi64>\)",
                     comp.stage("linalg"))
    assert re.search(r"scf.for .* iter_args\(.*\) -> \(vector<\d+xf32>", comp.stage("linalg"))
    assert "vector.transfer_read" in comp.stage("linalg") and "omp.wsloop" in comp.stage("openmp")
    np.testing.assert_array_equal(kernel(x), np.argmax(x, axis=1))


def fused_arg_reductions(a, w, b):
    """argmax/argmin along the last axis of fused elementwise operands: scaled by a row of weights,
    a softmax (row reductions inside), broadcast against a column, a transposed operand, a 3-D one."""
    e = np.exp(a - a.max(-1, keepdims=True))
    return (np.argmax(a * w, -1), np.argmin(a * w, axis=1), np.argmax(e / e.sum(-1, keepdims=True), -1),
            np.argmax(a - a[:, :1], -1), np.argmin(np.abs(a.T) + 1, -1),
            np.argmax(b * 2, -1), np.argmin(b + w, axis=2, keepdims=True))


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int64"])
def test_argmax_of_a_fused_operand_is_the_vector_loop(target: str, dtype: str) -> None:
    """A fused elementwise operand's row argmax/argmin runs argrows' vector loop over each row
    computed in the loop (no lanes' buffer): NumPy's first index on ties, NaN first (NaN in w makes
    whole columns NaN, -0.0 ties 0.0), rows with a tail past the last full vector step."""
    x = make_array(13, dtype, (70, 301), lo=-3, hi=3, integral=True)
    w = make_array(14, dtype, (301,), lo=1, hi=2, integral=True)
    b = make_array(15, dtype, (3, 5, 301), lo=-3, hi=3, integral=True)
    if dtype.startswith("float"):
        x[3, :], x[4, 100], x[5, 7], x[5, 290] = np.nan, np.nan, -0.0, 0.0
        x[6, :] = -0.0
        w[200] = np.nan
        b[1, 2, 250] = np.nan
    kernel = et.kernel(fused_arg_reductions, target=target, threads=2)
    loops = re.findall(r"scf.forall \(%\w+\) in \((\d+)\) shared_outs\(.*\) -> \(tensor<\d+x1xi\d+>, tensor<\d+x1xi64>\)",
                       kernel.inspect(x, w, b).stage("linalg"))
    # a forall over the rows of each but the transposed operand's (not read at unit stride: the plain generic)
    assert sorted(map(int, loops)) == [15, 15, 70, 70, 70, 70]
    for y, v in ((x, w), (x, np.where(np.isnan(w), 1, w).astype(dtype))):
        with np.errstate(invalid="ignore", over="ignore"):
            want = fused_arg_reductions(y, v, b)
        for got, expected in zip(kernel(y, v, b), want, strict=True):
            assert got.dtype == np.int64
            np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int64"])
def test_flattened_argmax_in_segments_picks_the_first_best(target: str, dtype: str) -> None:
    """A flattened argmax/argmin long enough to be cut into segments (three of unequal length on two
    threads): the best's first index wins across segments, lanes and the tails, NaN first."""
    x = make_array(3, dtype, (64, 1003), lo=-3, hi=3, integral=True)
    big = np.iinfo(dtype).max if dtype.startswith("int") else np.inf
    x[5, 7] = x[40, 2] = x[63, 1000] = big  # ties in the first and last segment, and in a tail
    x[20, 4] = x[50, 9] = -big
    if dtype.startswith("float"):
        x[30, 1] = x[60, 3] = np.nan
    kernel = et.kernel(lambda a: (np.argmax(a), np.argmin(a), np.argmax(a[1:]), np.argmin(a, axis=1)), target=target, threads=2)
    for y in (x, np.where(np.isnan(x), 0, x).astype(dtype)):
        for got, want in zip(kernel(y), (np.argmax(y), np.argmin(y), np.argmax(y[1:]), np.argmin(y, axis=1)), strict=True):
            assert got.dtype == np.int64
            np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("dtype", ["float32", "int16"])
def test_argmax_along_outer_axes_picks_the_first_best(dtype: str, threads: int) -> None:
    """argmax/argmin along a non-innermost axis (one generic meeting each output's elements in ascending
    order, a tie never winning, its index an int32 widened after; 4 rows a pass where 4 divide the axis),
    on one thread and split over two: many ties, NaN in some columns, whole columns equal."""
    x = make_array(5, dtype, (256, 8, 130), lo=-2, hi=2, integral=True)
    x[:, 2, 7] = x[0, 2, 7]
    if dtype == "float32":
        x[[9, 200], 1, 3] = np.nan
        x[100, 4, :] = np.nan
    target = "cpu" if threads == 1 else threaded(threads)

    def outer(a):
        return (np.argmax(a, axis=0), np.argmin(a, axis=0), np.argmax(a, axis=1), np.argmin(a[:, :, 1:], axis=1),
                np.argmax(a[1:], axis=0), np.argmin(a[:, 1:], axis=1))

    for got, want in zip(et.kernel(outer, target=target)(x), outer(x), strict=True):
        assert got.dtype == np.int64
        np.testing.assert_array_equal(got, want)


@settings(max_examples=15)
@given(x=arrays(st.sampled_from(ALL_DTYPES), shapes(min_dims=1, min_side=1), layout=layouts, special=True, lo=-2, hi=2),
       data=st.data())
def test_argmax_over_drawn_shapes_and_layouts(x: np.ndarray, data: st.DataObject) -> None:
    axis = data.draw(st.none() | st.integers(-x.ndim, x.ndim - 1))
    keepdims = data.draw(st.booleans())
    check(lambda a: (np.argmax(a, axis=axis, keepdims=keepdims), np.argmin(a, axis=axis, keepdims=keepdims)), x)


def test_argmax_edge_cases() -> None:
    """0-d arrays (axis 0 allowed), size-1 axes, empty kept axes; an empty reduced axis is an error."""
    check(lambda a: (np.argmax(a), np.argmin(a, axis=0), np.argmax(a, axis=-1, keepdims=True)), np.float32(3.0))
    check(lambda a: (np.argmax(a, axis=1), a.argmin(axis=-1, keepdims=True)), np.ones((0, 3), np.float64))
    check(lambda a: (np.argmax(a, axis=0), np.argmin(a)), np.ones((1, 3), np.int32))
    with pytest.raises(TracingError, match="argmax of an empty sequence"):
        et.kernel(lambda a: np.argmax(a))(np.ones((2, 0)))
    with pytest.raises(UnsupportedError, match="axis must be an int or None"):
        et.kernel(lambda a: np.argmax(a, axis=(0, 1)))(np.ones((2, 3)))
    o = np.zeros((), np.int64)  # out= writes into the argument, as NumPy's (tests/test_surface_updates.py)
    et.kernel(lambda a, o: np.argmax(a, out=o))(np.array([1.0, 3.0, 2.0]), o)
    assert o == 1


def truths(a):
    return (np.any(a), a.all(), np.any(a, axis=0), np.all(a > 0, axis=1, keepdims=True), np.count_nonzero(a),
            np.count_nonzero(a, axis=1), np.count_nonzero(a, axis=0, keepdims=True),
            np.logical_and.reduce(a), np.logical_or.reduce(a, axis=1, keepdims=True), np.logical_or.reduce(a, axis=None))


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_any_all_count_nonzero(dtype: str) -> None:
    x = _with_nan_and_ties(dtype, (9, 11))
    check(truths, x)
    check(truths, np.zeros((0, 3), dtype))  # empty: any False, all True, count 0


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int64"])
def test_ptp(dtype: str) -> None:
    check(lambda a: (np.ptp(a), np.ptp(a, axis=0), np.ptp(a, 1, keepdims=True)), make_array(3, dtype, (6, 7), special=True))


def variances(a):
    return (np.var(a), a.var(axis=0), np.var(a, axis=1, ddof=1, keepdims=True), np.std(a), a.std(axis=(0, 1), ddof=2),
            np.var(a, dtype=np.float64), np.std(a, axis=0, correction=1), np.var(a, ddof=1.5))


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_var_std(dtype: str) -> None:
    check(variances, make_array(4, dtype, (7, 9)))
    check(variances, with_layout(make_array(5, dtype, (7, 9)), "F"))


def _squared_deviations(a):
    d = a - a.mean(axis=0)
    return (d * d).sum(axis=0)


COLUMN_STATISTICS = {"var": lambda a: np.var(a, axis=0), "std": lambda a: np.std(a, axis=0, ddof=1, keepdims=True),
                     "deviations": _squared_deviations, "var_ddof2": lambda a: np.var(a, axis=0, ddof=2)}


def _with_l2(threads: int, l2: int) -> object:
    """cpu (1 thread) or cpu-openmp with an L2 of `l2` bytes: at 256 KB, 16 rows of float32 make strips of
    2048 columns, of float64 1024 (lowering/stages/strips.py); at 64 MB no input here is stripped."""
    from dataclasses import replace

    from egglog_tensor.lowering.pipelines import resolve_target

    return replace(resolve_target("cpu", None) if threads == 1 else threaded(threads), l2=l2)


@pytest.mark.parametrize(*covering(name=COLUMN_STATISTICS, data=["offset", "constant"], threads=[1, 2], dtype=["float32", "float64"]))
def test_var_along_axis_0_in_column_strips(dtype: str, threads: int, data: str, name: str) -> None:
    """Reductions of x's rows read by reductions of its rows (var, std, x - x.mean(0) squared and summed) run in
    column strips (the strips stage; 3000 columns: the last strip narrower) on 1e4 + small noise, where a one-pass
    formula loses every digit, and on np.full's constant: NumPy's results, and bit for bit those of the whole passes."""
    rng = np.random.default_rng(7)
    x = (1e4 + rng.standard_normal((16, 3000)) * 0.01).astype(dtype) if data == "offset" else np.full((16, 3000), 1e4 + 0.1, dtype)
    fn = COLUMN_STATISTICS[name]
    stripped = et.kernel(fn, target=_with_l2(threads, 256 * 1024))
    assert "strips-script" in stripped.inspect(x).stages
    whole = et.kernel(fn, target=_with_l2(threads, 64 * 1024**2))
    assert "strips-script" not in whole.inspect(x).stages
    got, want = stripped(x), fn(x)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, whole(x))
    np.testing.assert_allclose(got, want, rtol=1e-4 if dtype == "float32" else 1e-10, atol=1e-6 if data == "offset" else 1e-2)


@pytest.mark.parametrize("case", ["3d", "fortran", "with_std", "fused_operand", "with_max"])
def test_column_strips_of_other_programs(case: str) -> None:
    """The strips stage on a 3-D input (two outer axes reduced), a Fortran-ordered argument, var and std returned
    together, a fused elementwise operand with a tail strip, squared deviations beside a column max: NumPy's results."""
    rng = np.random.default_rng(3)
    fn, x = {
        "3d": (lambda a: np.var(a, axis=(0, 1)), rng.standard_normal((2, 3, 6000), dtype=np.float32) + 100),
        "fortran": (lambda a: np.std(a, axis=0), np.asfortranarray(rng.standard_normal((8, 5000), dtype=np.float32))),
        "with_std": (lambda a: (np.var(a, axis=0), np.std(a, axis=0)), rng.standard_normal((8, 5000), dtype=np.float32)),
        "fused_operand": (lambda a: np.var(a * 2 + 1, axis=0), rng.standard_normal((8, 5001), dtype=np.float32)),
        "with_max": (lambda a: ((a - a.mean(0)) ** 2).sum(0) + a.max(0), rng.standard_normal((8, 5000), dtype=np.float32)),
    }[case]
    kernel = et.kernel(fn, target=_with_l2(1, 64 * 1024))
    assert "strips-script" in kernel.inspect(x).stages
    got, want = kernel(x), fn(x)
    for g, w in zip(*((got, want) if isinstance(want, tuple) else ((got,), (want,))), strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5)


def _within_twice_numpys_error(got: np.ndarray, numpy: np.ndarray, exact: np.ndarray) -> None:
    """got's dtype and shape are NumPy's, and its relative error from `exact` at most twice NumPy's plus 4 eps
    (float64: 64 eps)."""
    assert got.dtype == numpy.dtype and got.shape == numpy.shape
    ours, theirs = (float(np.max(np.abs(r - exact) / exact)) for r in (got, numpy))
    assert ours <= 2 * theirs + (4 * float(np.finfo(np.float32).eps) if got.dtype == np.float32 else 64 * float(np.finfo(np.float64).eps)), (ours, theirs)


@pytest.mark.parametrize("target", sweep(["cpu", "cpu-openmp"], ["cpu"]))
def test_var_along_leading_axes_of_a_large_array_in_blocks_of_rows(target: str) -> None:
    """var/std over the leading axes of an array from 1 MiB whose rows (of 4-16 KB) make blocks of 64
    (tracing/statistics.py `_blocks`): each block's column moments strip by strip (the strips stage tiles the blocks and the columns: one
    scf.forall over both), the blocks combined as Chan et al. in float64. On 1e4 + small noise the error is within
    twice NumPy's plus 4 eps (float64: 64 eps); ddof, keepdims, 3-D, float64, int16, NaN, a constant broadcast view and
    a Fortran-ordered argument give NumPy's results; 100 rows (not blocks of 64) keep the two passes, and so do
    rows of 32 KB (the last value of f) and 2 KB (int16)."""
    rng = np.random.default_rng(11)
    x = np.float32(1e4) + rng.standard_normal((1024, 1024), dtype=np.float32) * np.float32(0.01)

    def f(a):
        return (np.var(a, axis=0), np.std(a, axis=0, ddof=1, keepdims=True), np.var(a.reshape(16, 64, 1024), axis=(0, 1)),
                np.var(a.astype(np.float64), axis=0), np.std(a.reshape(128, 8, 1024), axis=0, ddof=3))

    kernel = et.kernel(f, target=target)
    lowered = kernel.lower(x)
    assert "strips-script" in lowered.stages and "scf.forall" in lowered.as_text("strips")
    for g, numpy, exact in zip(kernel(x), f(x), f(x.astype(np.float64)), strict=True):
        _within_twice_numpys_error(g, numpy, exact)
    ints = rng.integers(-1000, 1000, (512, 1024)).astype(np.int16)
    with_nan = x.copy()
    with_nan[700, 9] = np.nan
    constant = np.broadcast_to(np.float32(1000.1), (1024, 512))
    fortran = np.asfortranarray(x)
    got = et.kernel(lambda i, n, c, fo: (np.var(i, axis=0), np.std(n, axis=0), np.var(c, axis=0), np.var(fo, axis=0)), target=target)(ints, with_nan, constant, fortran)
    np.testing.assert_allclose(got[0], np.var(ints, axis=0), rtol=1e-13)
    np.testing.assert_array_equal(np.isnan(got[1]), np.isnan(np.std(with_nan, axis=0)))
    for g, numpy, exact in ((got[1][10:], np.std(with_nan, axis=0)[10:], np.std(x.astype(np.float64), axis=0)[10:]),
                            (got[3], np.var(x, axis=0), np.var(x.astype(np.float64), axis=0))):
        _within_twice_numpys_error(g, numpy, exact)
    assert np.all((0 <= got[2]) & (got[2] <= (2 * float(np.finfo(np.float32).eps) * 20 * 1000.1) ** 2))
    odd = np.float32(1e4) + rng.standard_normal((100, 4096), dtype=np.float32) * np.float32(0.01)
    whole = et.kernel(lambda a: np.var(a, axis=0), target=target)
    assert "strips-script" not in whole.inspect(odd).stages
    np.testing.assert_allclose(whole(odd), np.var(odd, axis=0), rtol=1e-3)


@pytest.mark.parametrize("target", sweep(["cpu", "cpu-openmp"], ["cpu"]))
def test_var_of_a_large_array_runs_in_blocks_in_one_pass(target: str) -> None:
    """var/std of all of an array from 1 MiB (tracing/statistics.py ROWS_FROM): each row's mean and squared
    deviations in one loop over blocks of rows (the rows stage), the rows combined as Chan et al. in float64. On 1e4
    + small noise (where a one-pass formula loses every digit) the error is within twice NumPy's plus 4 eps (float64:
    64 eps); with ddof, keepdims, dtype=float64, 3-D and 1-D arrays, int16 data, NaN and a stride-0 constant view,
    NumPy's results. (Along leading axes: blocks of rows, checked here beside them and in the test above.)"""
    rng = np.random.default_rng(5)
    x = np.float32(1e4) + rng.standard_normal((512, 1024), dtype=np.float32) * np.float32(0.01)

    def f(a):
        return (np.var(a), np.std(a, ddof=1), np.var(a, keepdims=True), np.var(a, dtype=np.float64), np.var(a.reshape(8, 64, 1024)),
                np.var(a, axis=0), np.std(a.reshape(4, 128, 1024), axis=(0, 1), ddof=2, keepdims=True), np.var(a.astype(np.float64), axis=0),
                np.var(a.ravel()[:300000]))

    kernel = et.kernel(f, target=target)
    assert "rows-script" in kernel.inspect(x).stages
    for g, numpy, exact in zip(kernel(x), f(x), f(x.astype(np.float64)), strict=True):
        _within_twice_numpys_error(g, numpy, exact)
    ints = rng.integers(-1000, 1000, (300, 2048)).astype(np.int16)
    with_nan = x.copy()
    with_nan[7, 9] = np.nan
    constant = np.broadcast_to(np.float32(1000.1), (1024, 1024))
    got = et.kernel(lambda i, n, c: (np.var(i), np.std(n), np.var(c), np.var(i, axis=0), np.std(n, axis=0)), target=target)(ints, with_nan, constant)
    np.testing.assert_allclose(got[0], np.var(ints), rtol=1e-13)
    np.testing.assert_allclose(got[3], np.var(ints, axis=0), rtol=1e-13)
    np.testing.assert_array_equal(np.isnan(got[4]), np.isnan(np.std(with_nan, axis=0)))
    assert np.isnan(got[1]) and 0 <= got[2] <= (2 * float(np.finfo(np.float32).eps) * 20 * 1000.1) ** 2


def test_var_std_edge_cases() -> None:
    """ddof >= n gives inf/NaN (NumPy warns), an empty array NaN; bad keywords are refused."""
    check(lambda a: (np.var(a, ddof=3), np.std(a, axis=0, ddof=1)), np.ones((1, 3), np.float32))
    check(lambda a: (np.var(a), np.var(a, axis=0)), np.ones((0, 2), np.float64))
    with pytest.raises(TracingError, match="ddof and correction"):
        et.kernel(lambda a: np.var(a, ddof=1, correction=1))(np.ones(3))
    with pytest.raises(UnsupportedError, match="where"):
        et.kernel(lambda a: np.std(a, where=a > 0))(np.ones(3))


@pytest.mark.slow
@pytest.mark.parametrize("target", TARGETS)
def test_var_std_of_2_22_float32_with_a_large_mean(target: str) -> None:
    """1000 + small noise: the largest relative error of the variance, whole and along both axes,
    within twice NumPy's (plus 4 eps). Constant data (a stride-0 view of 1000.1, exact variance 0): within the
    square of the mean's error bound, (2 eps log2(n) 1000.1)^2 (docs/accuracy.md)."""
    n = 2**22
    noise = np.random.default_rng(2).standard_normal(n, dtype=np.float32) * np.float32(0.01)
    x = np.float32(1000) + noise

    def f(a):
        m = a.reshape(2048, 2048)
        return np.var(a), np.std(a), np.var(m, axis=1), np.std(m, axis=0, ddof=1)

    for g, numpy, exact in zip(et.kernel(f, target=target)(x), f(x), f(x.astype(np.float64)), strict=True):
        assert g.dtype == np.float32
        _within_twice_numpys_error(g, numpy, exact)
    constant = np.broadcast_to(np.float32(1000.1), (2048, 2048))
    bound = (2 * float(np.finfo(np.float32).eps) * math.log2(n) * 1000.1) ** 2
    variance, deviations = et.kernel(lambda a: (np.var(a), np.std(a, axis=0)), target=target)(constant)
    assert 0 <= variance <= bound and np.all(deviations <= math.sqrt(bound))


def nan_reductions(a):
    return (np.nansum(a), np.nansum(a, axis=0), np.nanprod(a, axis=1, keepdims=True), np.nanmax(a), np.nanmax(a, axis=1),
            np.nanmin(a, axis=0, keepdims=True), np.nanmin(a), np.nanmean(a), np.nanmean(a, axis=1), np.nanmean(a, axis=0, dtype=np.float64))


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_nan_reductions(dtype: str) -> None:
    """NaN skipped; an all-NaN row gives NaN for nanmax/nanmin/nanmean (NumPy also warns) and 0 for nansum."""
    x = make_array(6, dtype, (6, 7), lo=-2, hi=2, special=True)
    if dtype in FLOATS:
        x[2, :] = np.nan
    check(nan_reductions, x, rtol=1e-4 if dtype == "float32" else None, atol=1e-5 if dtype == "float32" else None)


def averages(a, w, w1):
    return (np.average(a), np.average(a, axis=0), np.average(a, weights=w), np.average(a, axis=1, weights=w1),
            np.average(a, axis=(0, 1), weights=w, keepdims=True), np.average(a.T, axis=0, weights=w1))


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "bool"])
def test_average(dtype: str) -> None:
    a = make_array(8, dtype, (5, 7))
    w, w1 = make_array(9, "float32", (5, 7), lo=0.5, hi=2), make_array(10, "float64", (7,), lo=0.5, hi=2)
    check(averages, a, w, w1)
    with pytest.raises(TracingError, match="axis must be specified"):
        et.kernel(lambda x, v: np.average(x, weights=v))(a, w1)
    with pytest.raises(TracingError, match="empty result"):
        et.kernel(lambda x: np.average(x, axis=0))(np.ones((0, 0)))
    check(lambda x, v: (*np.average(x, returned=True), *np.average(x, axis=1, weights=v, returned=True)), a, w1)


def norms(a):
    inf = np.inf
    return (np.linalg.norm(a), np.linalg.norm(a, axis=0), np.linalg.norm(a, 1, axis=1), np.linalg.norm(a, inf, axis=1),
            np.linalg.norm(a, -inf, axis=0), np.linalg.norm(a, 0, axis=1), np.linalg.norm(a, 3, axis=1, keepdims=True),
            np.linalg.norm(a, "fro"), np.linalg.norm(a, 1), np.linalg.norm(a, -1), np.linalg.norm(a, inf), np.linalg.norm(a, -inf),
            np.linalg.norm(a, axis=(1, 0), keepdims=True), np.linalg.norm(a[0]), np.linalg.norm(a[0], 2), np.linalg.norm(a[:, 0], -inf))


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
def test_norm(dtype: str) -> None:
    check(norms, make_array(11, dtype, (6, 5)), rtol=1e-5 if dtype == "float32" else 1e-12)
    check(lambda a: (np.linalg.norm(a, np.inf, axis=0), np.linalg.norm(a, axis=1)), np.ones((0, 3), dtype))
    with pytest.raises(TracingError, match="invalid norm order"):
        et.kernel(lambda a: np.linalg.norm(a, "fro", axis=0))(np.ones((3, 3)))


@pytest.mark.slow  # (a drawn sweep: minutes on a loaded 2-core machine; .ci/run runs it after the default run)
@settings(max_examples=12)
@given(x=arrays(st.sampled_from(FLOATS), shapes(min_dims=1, max_side=4), layout=layouts, special=True), data=st.data())
def test_statistics_over_drawn_shapes(x: np.ndarray, data: st.DataObject) -> None:
    """Size-0 and size-1 dims, NaN and +-inf, every layout; the reductions without an identity only
    where the reduced axes are not empty (NumPy raises there, as the kernel does)."""
    axis = data.draw(st.none() | st.integers(-x.ndim, x.ndim - 1))
    keepdims = data.draw(st.booleans())
    reduced = x.size if axis is None else x.shape[axis]

    def f(a):
        out = (np.any(a, axis=axis, keepdims=keepdims), np.all(a, axis=axis), np.count_nonzero(a, axis=axis),
               np.var(a, axis=axis, keepdims=keepdims), np.std(a, axis=axis, ddof=1), np.nansum(a, axis=axis),
               np.nanprod(a, axis=axis, keepdims=keepdims), np.nanmean(a, axis=axis))
        if axis is None or all(d for i, d in enumerate(x.shape) if i != axis % x.ndim):  # (an empty result: NumPy raises)
            out += (np.average(a, axis=axis),)
        if reduced:
            out += (np.ptp(a, axis=axis), np.nanmax(a, axis=axis, keepdims=keepdims), np.nanmin(a, axis=axis),
                    np.argmax(a, axis=axis), np.linalg.norm(a, np.inf, axis=-1 if axis is None else axis))
        return out

    # (signed zeros: nanmax/nanmin/ptp tie -0.0 and 0.0 as IEEE maximum does, not as NumPy: docs/accuracy.md)
    check(f, x, rtol=1e-4 if x.dtype == np.float32 else 1e-10, atol=1e-4 if x.dtype == np.float32 else 1e-10, signed_zeros=False)


def softmax_argmax(a):
    e = np.exp(a - a.max(axis=1, keepdims=True))
    p = e / e.sum(axis=1, keepdims=True)
    return np.argmax(p, axis=1), p


def centered_var(a):
    c = a - a.mean(0)
    return c.var(axis=0), np.std(c, axis=1, keepdims=True) + a


def mixed(a):
    return (a * np.argmax(a, axis=1, keepdims=True), np.argmin(np.abs(a), axis=0) + np.count_nonzero(a > 1, axis=0),
            np.nanmax(a, axis=1) - np.ptp(a, axis=1))


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("fn", [softmax_argmax, centered_var, mixed])
def test_fusion_with_neighbours(fn, target: str) -> None:
    """argmax of a row-fused softmax, var of a centered array, an argmax read by elementwise work."""
    x = np.random.default_rng(3).standard_normal((300, 700)).astype(np.float32)
    for got, want in zip(et.kernel(fn, target=target)(x), fn(x), strict=True):
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=2e-4, atol=1e-5)
