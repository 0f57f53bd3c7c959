"""Everyday NumPy idioms found failing by a survey of ~240 of them (ML, statistics, image and stencil code, array
methods), against NumPy: copies that were views of their input (a wrong answer), index-array assignment and
np.add.at, and functions decomposed at trace time into existing primitives. Few kernels, small arrays."""

from __future__ import annotations

import numpy as np
import pytest
from strategies import check

import egglog_tensor as et


def gathered(x, i):
    """Gathers NumPy copies, written into; x read after: none of it may reach x (or the caller's array)."""
    a, b, c, d = x[[0, 1]], np.take(x, [1, 2], axis=0), np.delete(x, 0, axis=0), x[i]
    for y in (a, b, c, d):
        y[0, 0] = -7.0
    x2 = x.copy()
    k = x2[[1, 0]]
    x2[1] = 100.0  # after the gather: k keeps the values it read
    return x + 0, a, b, c, d, k, x2


def test_gathers_are_copies() -> None:
    """A wrong answer: x[[0, 1]] (and np.take, np.delete with constant indices) was a view of x, so writing into it
    changed x and the caller's array, and it followed later writes into x."""
    check(gathered, np.arange(12.0).reshape(3, 4), np.array([2, 0]), rtol=0, atol=0)


def copied(x):
    e, f, g, h = np.roll(x, 0), np.pad(x, 0), x.flatten(), np.tile(x, 1)
    for y in (e, f, h):
        y[0, 0] = -7.0
    g[0] = -7.0
    z = x.copy()
    k = (z.flatten(), np.roll(z, 1), np.tile(z, 2), np.repeat(z, 2), z.repeat(2, axis=1))
    z[0] = -1.0  # z stays writable after them
    return x + 0, e, f, g, h, z, *k


def test_copying_functions_give_writable_arrays() -> None:
    """np.roll, np.pad, x.flatten() and np.tile copy: their results may be written into, and so may the array they
    read (both were refused)."""
    check(copied, np.arange(12.0).reshape(3, 4), rtol=0, atol=0)


def assignments(x, l):
    y = x.copy()
    y[[0, 2]] = 7
    y[np.arange(4), l] -= 1  # CS231n's softmax gradient: dscores[range(N), y] -= 1
    y[range(4), l] *= 3
    y[:, [1, 3]] = x[:, [3, 1]]
    y[[0, 0, 1]] = np.array([[1], [2], [3]])  # repeated index: the last write wins
    y[[1, 1, 2], [2, 2, 3]] += 5
    y[l, ::2] = -2
    y[0, l] = 9
    y[-1, [-1, 0]] = 100
    z = y[1:]
    z[[0, 2]] = 4
    d = x[:4, :4].copy()
    d[np.diag_indices(4)] = -1
    w = x.copy()
    w[np.array([[0, 1], [2, 3]]), 0] = np.array([[1, 2], [3, 4]])
    return y, d, w


@pytest.mark.parametrize("dtype", ["float64", "int32"])
def test_index_array_assignment_matches_numpy(dtype: str) -> None:
    """Constant and traced indices, both mixed, repeated ones, negative ones, with slices, through a view, 2-D indices."""
    check(assignments, (np.arange(20).reshape(4, 5) * 3 % 7).astype(dtype), np.array([1, 0, 3, 3]), rtol=0, atol=0)


def test_index_array_assignment_checks_traced_indices() -> None:
    def f(x, l):
        y = x.copy()
        y[l] = 0.0
        return y

    with pytest.raises(et.IndexOutOfBoundsError, match="index out of bounds for axis 0 with size 3"):
        et.kernel(f)(np.ones(3), np.array([0, 3]))


def added_at(v, i, e):
    out = np.zeros(3)
    np.add.at(out, i, v)
    grad = np.zeros((4, 3), e.dtype)
    np.add.at(grad, i[:4] + 1, e)  # an embedding's gradient: rows of repeated ids accumulate
    counts = np.ones(3, np.int32)
    np.add.at(counts, i, 1)
    pairs = np.zeros((3, 3))
    np.add.at(pairs, (i[:3], i[3:]), v[:3])
    cols = e.copy()
    np.subtract.at(cols, (slice(None), i[:3]), 10)
    return out, grad, counts, pairs, cols


@pytest.mark.parametrize("dtype", ["float32", "int64"])
def test_add_at_matches_numpy(dtype: str) -> None:
    """Repeated indices accumulate; floats to rounding (each element's adds summed first, then added once)."""
    check(added_at, np.arange(6.0) * 1.5, np.array([0, 2, 1, 2, 0, 2]), np.arange(12).reshape(4, 3).astype(dtype))


def methods_and_shapes(x, v):
    s = x.copy()
    s.sort(axis=1)
    f = x.copy()
    f.fill(2)
    return (x.flatten("F"), x.ravel(order="F"), x.reshape(2, 10, order="F"), np.reshape(x, (5, 4), order="F"), x.clip(min=0),
            x.clip(max=1), s, f, x.repeat(2, axis=0), x * x.itemsize + x.nbytes, np.rot90(x), np.rot90(x, -1), np.rot90(x, 2),
            np.atleast_2d(v), np.atleast_3d(x).shape[2] + x, *np.atleast_1d(v.sum(), v), *np.hsplit(x[:, :4], 2), np.vsplit(x, [1])[1],
            *np.broadcast_arrays(x, v[:5]), np.r_[v, 0.5, v[:2]], np.c_[v, v * 2], np.c_[x.T, v[:5]], np.r_[v[:2], 1:4],
            np.diagflat(v[:3]), np.diagflat(v[:2], -1), *np.unravel_index(np.argmax(x), x.shape), *np.unravel_index(v.astype(np.int64), (2, 3)),
            *np.unravel_index(v.astype(np.int64), (3, 2), order="F"))


@pytest.mark.parametrize("dtype", ["float32", "int16"])
def test_methods_and_shapes_match_numpy(dtype: str) -> None:
    check(methods_and_shapes, ((np.arange(20).reshape(4, 5) * 7) % 9 - 3).astype(dtype), np.array([4, 0, 5, 1, 3, 2], dtype), rtol=0, atol=0)


def nan_statistics(x):
    return (np.nanvar(x), np.nanvar(x, axis=0), np.nanstd(x, axis=1, ddof=1), np.nanvar(x, axis=1, keepdims=True), np.nanstd(x, ddof=3, axis=0),
            np.nanvar(x, dtype=np.float64), *np.average(x, axis=0, weights=np.abs(x[::-1]) + 1, returned=True), *np.average(x, axis=1, returned=True))


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "int32"])
def test_nanvar_nanstd_average_returned_match_numpy(dtype: str) -> None:
    """NaN skipped, an all-NaN column (NaN), ddof past the count (NaN), dtype=float64 of float32 data."""
    x = ((np.arange(20).reshape(5, 4) * 7) % 11 - 4).astype(dtype)
    if dtype[0] == "f":
        x[1, 2] = x[3, 0] = np.nan
        x[:, 3] = np.nan
    if dtype != "float16":  # (float16's average sums weights of ~40 in float16: checked by the others)
        check(nan_statistics, x, rtol=2e-3 if dtype == "float16" else 1e-5 if dtype == "float32" else None)
    else:
        check(lambda x: nan_statistics(x)[:6], x, rtol=2e-3, atol=1e-3)


def predicates(a, b, t):
    """(array_equal and array_equiv give a Python bool in NumPy, a 0-d bool in a kernel: np.bool_ of either is one.)"""
    same = [np.bool_(s) for s in (np.array_equal(a, b), np.array_equal(a, a), np.array_equal(a, a, equal_nan=True), np.array_equal(a, a[:2]),
                                   np.array_equiv(a, a[0]), np.array_equiv(a[:1], a), np.array_equiv(a, a[:2]))]
    return (*same, np.isin(a, t), np.isin(a, [0, 2], invert=True), np.isin(a, t[:0]),
            np.isposinf(a), np.isneginf(a), np.fix(a * 0.75), np.angle(a), np.angle(a, deg=True), np.polyval([1.5, -2, 3], a), np.polyval(t, a),
            np.poly1d([1, 2])(a), np.vander(t[:3]), np.vander(t, 2, increasing=True), np.isrealobj(a) + a, np.iscomplexobj(a) + a)


@pytest.mark.parametrize("dtype", ["float16", "float64", "int32"])
def test_predicates_and_polynomials_match_numpy(dtype: str) -> None:
    """With NaN, +-inf and signed zeros (np.fix(-0.5) is -0.0, np.angle(-0.0) is pi); ints keep NumPy's dtypes."""
    a = (np.arange(12).reshape(3, 4) % 5 - 2).astype(dtype)
    if dtype[0] == "f":
        a[0, 1], a[1, 2], a[2, 0], a[2, 1] = np.nan, np.inf, -np.inf, -0.0
    check(predicates, a, a.copy(), np.array([2, -1, 3, 0], dtype), rtol=2e-3 if dtype == "float16" else None, atol=0)


def writes(x, m):
    a, b, c, d, e = x.copy(), x.copy(), x.copy(), x[:4, :3].copy(), x.copy()
    np.fill_diagonal(a, 1.5)
    np.fill_diagonal(d, [7, 8], wrap=True)
    np.putmask(b, m, -1)
    np.putmask(e, m, x[0] * 2)  # values repeated over the flat positions
    np.copyto(c, x[0] + 1, where=m)
    w = np.zeros((6, 3))
    np.fill_diagonal(w, 3, wrap=True)
    np.place(x, m, 0)  # into the argument: the caller's array changes
    return a, b, c, d, e, w


def test_fill_diagonal_putmask_copyto_place_match_numpy() -> None:
    x = np.arange(20.0).reshape(4, 5) - 6
    m = x % 3 == 0
    want = writes(x.copy(), m)
    got_x = x.copy()
    got = et.kernel(writes)(got_x, m)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_array_equal(g, w)
    np.testing.assert_array_equal(got_x, np.where(m, 0, x))


def test_refusals_name_the_value_shaped_calls() -> None:
    with pytest.raises(et.UnsupportedError, match="np.repeat with traced counts"):
        et.kernel(lambda v, c: np.repeat(v, c))(np.ones(3), np.array([1, 2, 0]))
    with pytest.raises(et.UnsupportedError, match="np.maximum.at is not supported"):
        et.kernel(lambda x, i: np.maximum.at(x, i, 1.0))(np.ones(3), np.array([0, 1]))


def selections(x, labels):
    y = x.copy()
    y[y < 0] *= -1
    z = x.copy()
    z[z > 5] = z[z > 5] * 2 + 1
    z[[True, False, True, False]] = 0  # a constant mask: its nonzero indices
    ok = ~np.isnan(x)
    return (y, z, x[x > 0].sum(), x[x > 0].mean(), np.sum(x[x < 3] ** 2), x[ok].max(), x[ok].min(), x[x > 100].sum(), x[ok].std(),
            x[ok].var(ddof=1), np.mean(x[x != 0]), (x[ok] > 5).any(), np.stack([x[labels == k].mean(axis=0) for k in range(3)]),
            x[labels == 1].max(axis=0), x[[True, False, False, True]], x[:, np.array([True, False, True, False, True])])


@pytest.mark.parametrize("dtype", ["float32", "int32"])
def test_mask_selections_stored_back_or_reduced_match_numpy(dtype: str) -> None:
    """NaN (ints: none) among the data, an empty selection's sum, k-means' centroid update (rows chosen by label)."""
    x = (np.arange(20).reshape(4, 5) - 7).astype(dtype)
    if dtype[0] == "f":
        x[1, 1] = np.nan
    check(selections, x, np.array([0, 1, 0, 2]), rtol=1e-6 if dtype == "float32" else None)


def test_max_of_an_empty_selection_raises_as_numpy() -> None:
    """max/min have no identity: an empty selection raises NumPy's ValueError after the call, a non-empty one is its max."""
    k = et.kernel(lambda x, t: x[x > t].max())
    assert k(np.arange(5.0), 2.5) == 4.0
    with pytest.raises(ValueError, match="zero-size array to reduction operation maximum") as raised:
        k(np.arange(5.0), 9.0)
    assert isinstance(raised.value, et.EmptyReductionError)
    with pytest.raises(ValueError, match="minimum"):
        et.kernel(lambda x: x[x > 9].min(axis=0))(np.ones((3, 2)))


def test_a_selection_whose_length_matters_is_refused() -> None:
    with pytest.raises(et.UnsupportedError, match=r"boolean-mask indexing \(x\[mask\]\) is not supported"):
        et.kernel(lambda x: x[x > 0])(np.ones(3))
    with pytest.raises(et.UnsupportedError, match="boolean-mask indexing"):
        et.kernel(lambda x: x[x > 0] + x)(np.ones(3))
    with pytest.raises(et.UnsupportedError, match="boolean-mask indexing"):
        et.kernel(lambda x: x[x > 0].shape[0] * x)(np.ones(3))


def lists_and_windows(im, v):
    return (np.dot(im, [0.299, 0.587, 0.114]), im @ [1, 2, 3], np.interp(v, [-1.0, 0.0, 1.0], [0.0, 1.0, 0.0]), v + [1, 2, 3, 4, 5, 6],
            np.maximum(v, (0, 1, 0, 1, 0, 1)), v[:3] @ [1.0, 2.0, 3.0], v[:2] * [v[5], 2.0],
            np.lib.stride_tricks.sliding_window_view(v, 3).mean(axis=-1), np.lib.stride_tricks.sliding_window_view(im, (2, 2), axis=(0, 1)).sum(axis=(-1, -2)),
            np.lib.stride_tricks.sliding_window_view(im, 2, axis=-1))


def test_list_operands_and_sliding_windows_match_numpy() -> None:
    """Lists and tuples are NumPy's asarray (traced items stacked); the windows' dims appended after the array's."""
    check(lists_and_windows, np.arange(24, dtype=np.float32).reshape(2, 4, 3) / 7, np.linspace(-1.5, 1.5, 6))


def pads_and_quantiles(x):
    return (np.pad(x, 1, mode="mean"), np.pad(x, ((1, 2), (0, 1)), mode="maximum"), np.pad(x, 2, mode="minimum", stat_length=2),
            np.pad(x, (1, 0), mode="median", stat_length=((3, 1), (2, 2))), np.pad(x, 1, mode="mean", stat_length=1),
            np.quantile(x, 0.5, method="nearest"), np.quantile(x, [0.1, 0.25, 0.5, 0.9], axis=0, method="lower"),
            np.percentile(x, 37.5, axis=1, method="higher"), np.quantile(x, [0.2, 0.75], axis=1, method="midpoint"),
            np.percentile(x, [0, 100], method="nearest", keepdims=True))


@pytest.mark.parametrize("dtype", ["float32", "int32"])
def test_pad_stat_modes_and_quantile_methods_match_numpy(dtype: str) -> None:
    """np.pad's mean of ints rounded half to even as NumPy's; the discrete quantile methods keep the data's dtype."""
    x = ((np.arange(20).reshape(4, 5) * 7) % 11 - 4).astype(dtype)
    if dtype[0] == "f":
        x = x / 3
    check(pads_and_quantiles, x, rtol=1e-6 if dtype == "float32" else None)


def orders_and_indices(v, w, i, j):
    return (np.lexsort((v, w)), np.lexsort((w, v)), np.lexsort((v.reshape(2, 3), w.reshape(2, 3)), axis=1), np.lexsort((w,)),
            np.ravel_multi_index((i, j), (4, 5)), np.ravel_multi_index((i, j + 3), (4, 5), mode="wrap"), np.ravel_multi_index((i, j), (4, 4), order="F"),
            np.ravel_multi_index((i, j * 2), (4, 5), mode=("raise", "clip")), np.histogram_bin_edges(v, 4, (-2, 2)), np.histogram_bin_edges(w, [0, 1, 3]),
            np.add.reduceat(v, [0, 2, 2, 4, 1]), np.maximum.reduceat(w, [1, 3]), np.add.reduceat(w.reshape(2, 3), [0, 2, 1], axis=1),
            np.multiply.reduceat(w.astype(np.int8), [0, 5]))


def test_lexsort_ravel_multi_index_bin_edges_reduceat_match_numpy() -> None:
    """lexsort with NaN and ties (stable argsorts from the least significant key), every ravel mode and order."""
    check(orders_and_indices, np.array([3.0, 1.0, np.nan, 1.0, 2.0, 3.0]), np.array([2, 1, 0, 2, 1, 1]), np.array([1, 3, 0, 2]),
          np.array([0, 3, 3, 1]), rtol=0, atol=0)
    with pytest.raises(et.IndexOutOfBoundsError, match="ravel_multi_index: invalid entry in coordinates array"):
        et.kernel(lambda i, j: np.ravel_multi_index((i, j), (4, 3)))(np.array([1, 3, 0, 2]), np.array([0, 3, 3, 1]))


def folds(x, b):
    return (np.logaddexp.reduce(x, axis=1), np.logaddexp.reduce(x, axis=0, keepdims=True), np.logaddexp.reduce(x, axis=None),
            np.logaddexp2.reduce(x[:, :1], axis=1), np.hypot.reduce(x, 1), np.bitwise_or.reduce(b, axis=0), np.bitwise_xor.reduce(b, axis=1),
            np.gcd.reduce(b, axis=1), np.lcm.reduce(b[:, :2], axis=1, initial=3), np.logaddexp.reduce(x[:0], axis=0), np.subtract.reduce(x, axis=1))


def test_other_ufuncs_reduce_as_numpys_loop() -> None:
    """A ufunc without a reduction of its own folds element by element in NumPy's order (bit for bit)."""
    x = np.array([[0.5, -1.0, 2.0, np.inf], [-np.inf, 3.0, 1e-3, 7.0], [np.nan, 0.0, 1.0, -2.0]])
    check(folds, x, np.array([[12, 18, 6, 4], [7, 14, 21, 0], [3, 9, 27, 81]], np.int32), rtol=0, atol=0)
    with pytest.raises(et.UnsupportedError, match="unrolled, at most 256 steps"):
        et.kernel(lambda x: np.logaddexp.reduce(x))(np.ones(300))


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64", "bool"])
def test_bitwise_count_matches_numpy(dtype: str) -> None:
    """np.bitwise_count: the 1 bits of |x| (uint8), over random values and each type's extremes."""
    if dtype == "bool":
        x = np.array([True, False, True])
    else:
        info = np.iinfo(dtype)
        x = np.random.default_rng(0).integers(info.min, info.max, 1000, dtype=dtype, endpoint=True)
        x[:3] = [info.min, info.max, 0]
    got, want = et.kernel(lambda x: np.bitwise_count(x))(x), np.bitwise_count(x)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)
    if dtype == "bool":
        with pytest.raises(et.UnsupportedError, match="bitwise_count' not supported for the input types"):
            et.kernel(lambda x: np.bitwise_count(x))(np.ones(3))
