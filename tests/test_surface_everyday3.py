"""Everyday NumPy idioms found failing by a third survey (/tmp scratch list of ~80: signal processing, geometry,
index tricks, dtype corners): traced masks beside other indices, histogram2d, np.pad's remaining modes, and what
the survey found. Few kernels, small arrays."""

from __future__ import annotations

import numpy as np
import pytest
from strategies import check, sweep

import egglog_tensor as et


def mask_with_indices(x, m, c):
    y = x.copy()
    y[m, 1:] = -1
    y[:, c] = 0
    y[m, 0] += 1
    y[0, c] *= 3
    y[m, ..., 2:] = x[m, ..., 1:4] * 2  # (the selections' value: x's, where m is)
    z = x.copy()
    z[:, c] = x[:, :1] + 10  # a value broadcast along the count
    z[m, 1:] = np.arange(4)
    z[~m, 1:] = np.where(x[~m, 1:] > 0, 1, -1)  # np.where of a selection: a selection
    z[..., [True, False, True, False, True]] += 1  # a constant mask: its nonzero indices (a value per True element)
    z[[False, True, True, False]] = np.array([[7], [8]])
    return (y, z, np.clip(x[:, c], 0, 3).sum(), x[1:, c].sum(), x[:, c].max(), x[m, 1:].mean(axis=0), x[m, 0].sum(), (x[m, 1:] ** 2).sum(),
            x[..., c].min(axis=1), x[m, :3].std())


@pytest.mark.parametrize("dtype", ["float64", "int32"])
def test_masks_beside_other_indices_match_numpy(dtype: str) -> None:
    """A traced mask with slices, ints and an Ellipsis beside it: stored into (=, +=, a selection, np.where of one) and
    reduced; constant masks stored through (one value per True element, as NumPy)."""
    x = ((np.arange(20).reshape(4, 5) * 7) % 11 - 3).astype(dtype)
    check(mask_with_indices, x, np.array([True, False, True, True]), np.array([False, True, True, False, True]))


def test_mask_beside_ints_apart_is_refused() -> None:
    """x[0, :, m]: NumPy puts the count first (the int and the mask apart): a clear UnsupportedError."""
    def f(x, m):
        y = x.copy()
        y[0, :, m] = 1.0
        return y

    with pytest.raises(et.UnsupportedError, match=r"or an int apart from it \(x\[m, None\] = v, x\[0, :, m\] = v\)"):
        et.kernel(f)(np.ones((2, 3, 4)), np.array([True, False, True, False]))


def constant_masks_beside_arrays(x):
    y = x.copy()
    y[np.array([True, False, True, True]), [1, 2, 3]] = -1  # the mask's nonzero indices broadcast with the array's
    y[[0, 2], np.array([True, False, True, False, False])] = [[7], [8]]
    y[[False, True, False, False], [[0], [4]]] += 10
    np.add.at(y, (np.array([True, False, True, True]), 1), 5)
    z = x.copy()
    z[:, [0, 2, 3], ..., 1] = x[:3, :4, 0]  # advanced entries apart (an empty `...` between): the index dims first
    return (y, z, x[[0, 2], np.array([True, False, True, False, False])], x[np.array([True, False, True, True]), :2, [1]],
            x[None, np.array([True, False, True, True]), ..., 1], x[:, [0, 2], ..., [1, 2]], x[[[1], [3]], [True, False, True, True, False]])


@pytest.mark.parametrize("dtype", ["float32", "int64"])
def test_constant_masks_beside_index_arrays_match_numpy(dtype: str) -> None:
    """A constant mask beside index arrays, read and written (x[m, [1, 2]] = v, x[[0, 2], m]): its nonzero() index
    arrays, as NumPy reads it; advanced entries apart in the key as written (an empty `...` too) put the indices' dims first."""
    x = ((np.arange(60).reshape(4, 5, 3) * 7) % 11 - 3).astype(dtype)
    check(constant_masks_beside_arrays, x)


@pytest.mark.parametrize("key", [[True, False, True], (slice(None), np.array([True, False, True, False, True, False]))])
def test_constant_mask_of_the_wrong_length_is_refused(key) -> None:
    """A constant mask must match the dims it indexes, read or written (until 2026-11-28 a short one was read as its
    nonzero indices: a wrong answer where NumPy raises IndexError)."""
    def read(x):
        return x[key]

    def write(x):
        y = x.copy()
        y[key] = 0
        return y

    for f in (read, write):
        with pytest.raises(et.TracingError, match="boolean index did not match indexed array along axis"):
            et.kernel(f)(np.ones((4, 5)))


def test_traced_mask_beside_index_arrays_is_refused() -> None:
    """x[m, [1, 2]] with a traced m: dynamic-shaped (the mask's nonzero() count), refused naming it, read or written."""
    def read(x, m):
        return x[m, [1, 2]]

    def write(x, m):
        y = x.copy()
        y[m, [1, 2]] = 0.0
        return y

    for f in (read, write):
        with pytest.raises(et.UnsupportedError, match=r"a traced boolean mask beside index arrays .* whose length depends on the mask's values"):
            et.kernel(f)(np.ones((4, 5)), np.array([True, False, True, False]))


def histograms2d(a, b, w, ex, ey):
    return (*np.histogram2d(a, b, bins=3, range=[[0, 1], [0, 1]]), *np.histogram2d(a, b, bins=[2, 4], range=[[0, 1], [0.2, 0.8]], weights=w),
            *np.histogram2d(a, b, bins=[ex, ey], density=True), *np.histogram2d(a, b, bins=ex),
            np.histogramdd(np.stack([a, b, w], 1), bins=(2, 3, 2), range=[(0, 1)] * 3)[0], *np.histogram2d(a, b, bins=[[0, 0.5, 1], [0, 1]]),
            np.histogram2d(a, b, bins=2, range=[[0.5, 0.5], [0, 1]])[0], np.histogramdd(a, bins=3, range=[(0, 1)])[0],
            np.bincount((np.nan_to_num(a) * 4).astype(np.int64), w, 5), np.bincount(a > 0.5, minlength=2))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_histogram2d_and_histogramdd_match_numpy(dtype: str) -> None:
    """Static bins (a count with a static range, a range of one value) or edges (constants, arguments: one for both
    dims or a pair), weights, density; on the last edge (the last bin), outside, NaN (dropped)."""
    r = np.random.default_rng(0)
    a, b, w = r.random(30).astype(dtype), r.random(30).astype(dtype), r.random(30).astype(dtype)
    a[3], b[4], a[5], b[6] = 1.0, 0.0, np.nan, 1.5
    check(histograms2d, a, b, w, np.array([0, 0.2, 0.5, 1.0]), np.array([0.0, 0.3, 0.6, 0.9, 1.0]))


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32"])
def test_histogram2d_and_histogramdd_of_the_data_range_match_numpy(dtype: str) -> None:
    """A bin count without a range: each dim's min and max (one value: widened by 0.5 each way), edges in NumPy's dtype."""
    r = np.random.default_rng(1)
    x, y = (r.standard_normal(300) * 5).astype(dtype), (r.standard_normal(300) * 3).astype(dtype)
    for fn in (lambda x, y: np.histogram2d(x, y, bins=5), lambda x, y: np.histogram2d(x, y, bins=(3, 4), density=True),
               lambda x, y: np.histogramdd(np.stack([x, y], 1), bins=4), lambda x, y: np.histogram2d(x, np.full_like(y, 2), bins=3)):
        got, want = et.kernel(fn)(x, y), fn(x, y)
        for g, v in zip([got[0], *got[1]] if len(got) == 2 else got, [want[0], *want[1]] if len(want) == 2 else want, strict=True):
            assert g.dtype == v.dtype
            np.testing.assert_allclose(g, v, rtol=1e-12)


def test_histogram2d_edges_argument_checked_at_run_time() -> None:
    with pytest.raises(et.IndexOutOfBoundsError, match="monotonically increasing"):  # (as np.histogram's run-time check)
        et.kernel(lambda a, b, e: np.histogram2d(a, b, bins=[e, e])[0])(np.ones(3), np.ones(3), np.array([0.0, 2.0, 1.0]))


def pads(x):
    return (np.pad(x, 2, mode="linear_ramp"), np.pad(x, ((1, 3), (2, 0)), mode="linear_ramp", end_values=((5, -2), (1.5, 0))),
            np.pad(x, (0, 4), mode="linear_ramp", end_values=7), np.pad(x, 2, mode="reflect", reflect_type="odd"),
            np.pad(x, ((7, 9), (1, 5)), mode="reflect", reflect_type="odd"), np.pad(x, 3, mode="symmetric", reflect_type="odd"),
            np.pad(x, ((8, 10), (4, 9)), mode="symmetric", reflect_type="odd"), np.pad(x, 2, mode="mean", stat_length=((1, 2), (2, 1))),
            np.pad(x[:1], 2, mode="reflect", reflect_type="odd"))


@pytest.mark.parametrize("dtype", sweep(["float16", "float32", "int64", "uint8"], ["float16", "uint8"]))
def test_pad_linear_ramp_and_odd_reflections_match_numpy(dtype: str) -> None:
    """Bit for bit: linear_ramp's linspace per side (ints floored), odd reflections wider than the array (NumPy's
    chunks about the moving edge), a length-1 axis (NumPy extends its edge)."""
    check(pads, ((np.arange(12).reshape(3, 4) * 7) % 11 + 1).astype(dtype), rtol=0, atol=0)


def test_integer_to_a_negative_integer_power_raises_as_numpy() -> None:
    """A wrong answer: `int_array ** -2` (np.power, a traced exponent array too) gave numbers; NumPy raises ValueError."""
    with pytest.raises(ValueError, match="Integers to negative integer powers are not allowed") as raised:
        et.kernel(lambda a: a ** -1)(np.array([2, 3]))
    assert isinstance(raised.value, et.DataValueError)
    k = et.kernel(lambda a, b: (np.power(a, b), a[:0] ** -2, a ** 2.0 + 2 ** a))
    got = k(np.array([2, 3], np.int32), np.array([1, 2], np.int32))
    assert [g.tolist() for g in got] == [[2, 9], [], [8.0, 17.0]]
    with pytest.raises(ValueError, match=r"Integers to negative integer powers are not allowed. \(exponents computed from argument\(s\) b\)"):
        k(np.array([2, 3], np.int32), np.array([1, -2], np.int32))


def linspaces(x, a):
    return (np.linspace(x.min(), x.max(), 5), np.linspace(0, x[2], 4, endpoint=False), np.linspace(x[:2], 3.0, 3), np.linspace(a, a * 2, 4, axis=1),
            np.linspace(a[0], a[1], 6, dtype=np.int64), *np.linspace(x[0], x[0], 3, retstep=True), np.linspace(a, 5, 1), np.linspace(a, 5, 0),
            np.linspace(a, a + 1, 3, axis=-1), np.linspace(2, [3, 4], 3))


@pytest.mark.parametrize("dtype", ["float16", "float32", "int32"])
def test_linspace_of_traced_and_array_bounds_bit_for_bit(dtype: str) -> None:
    """np.linspace(x.min(), x.max(), n), array bounds along `axis`, a zero step (NumPy's other formula), int dtype."""
    check(linspaces, np.array([0.5, -1.25, 3.0, 2.0]).astype(dtype), np.array([1.5, 2.0, -3.0]).astype(dtype), rtol=0, atol=0)


def piecewises(x, i):
    return (np.piecewise(x, [x < 0, x >= 0], [lambda t: -t, lambda t: t ** 2]), np.piecewise(x, [x < 0], [0.0, 1.0]),
            np.piecewise(x, [x < -1, (x >= -1) & (x < 1)], [lambda t: t - t.mean(), np.sin, 7]),
            np.piecewise(i, [i < 0, i > 2], [lambda t: t * 2.7, 1.5, lambda t: t + 1]), np.piecewise(x, x > 0, [lambda t, k: t * k, 0], 3),
            np.piecewise(x, [x > 10], [lambda t: t.max()]))


def test_piecewise_matches_numpy() -> None:
    """Functions see the selection (t.mean() is of the selected elements), constants, the 'otherwise' piece, int x (results
    cast to it), extra args, and an empty piece whose max NumPy never computes (no error)."""
    check(piecewises, np.array([-2.0, -0.5, 0.0, 0.5, 1.5, 3.0]), np.array([-3, -1, 0, 2, 3, 5]))


def gradients(y, x, u, m):
    return (np.gradient(y, x), np.gradient(y, edge_order=2), np.gradient(y, x, edge_order=2), np.gradient(y, u), np.gradient(y, u, edge_order=2),
            np.gradient(y, [0, 1, 3, 4, 7, 8]), np.gradient(y, [0, 2, 4, 6, 8, 10]), np.gradient(y, 0.5, edge_order=2), *np.gradient(m, 0.1, x[:5]),
            np.gradient(m, x[:5], axis=1, edge_order=2), np.gradient(y, np.float64(0.3)))


@pytest.mark.parametrize("dtype", ["float32", "int32"])
def test_gradient_coordinates_and_edge_order_2_bit_for_bit(dtype: str) -> None:
    """Coordinates (constants and arguments; equal steps take NumPy's uniform formulas, for an argument when the kernel
    runs: u), edge_order=2, a spacing per axis, a NumPy float64 spacing (float64 arithmetic, cast back)."""
    y = np.array([1.0, 2.5, 2.0, 4.5, 7.0, 6.0]).astype(dtype)
    m = (np.arange(20).reshape(4, 5) ** 1.5).astype(dtype)
    check(gradients, y, np.array([0.0, 0.5, 1.5, 2.0, 3.5, 4.0]), np.array([0.0, 0.5, 1.0, 1.5, 2.0, 2.5]), m, rtol=0, atol=0)


def periodic_and_paths(x, xp, fp, a, b):
    path, _ = np.einsum_path("ij,kj,kl->il", a, b, b, optimize="greedy")
    return (np.interp(x, [0.0, 1.0, 2.0], [0.0, 1.0, 0.0], period=3.0), np.interp(x, xp, fp, period=2.5), np.interp(x * 10, xp, fp, period=-4),
            np.interp(x.astype(np.float32), [350, 10, 90], [1, 2, 3], period=360), np.einsum("ij,kj,kl->il", a, b, b, optimize=path))


def test_interp_period_and_einsum_path_match_numpy() -> None:
    """np.interp(period=): x and xp modulo it, xp sorted and wrapped (bit for bit); np.einsum_path: NumPy's, from the shapes."""
    r = np.random.default_rng(2)
    check(periodic_and_paths, np.array([-2.0, -0.5, 0.0, 0.7, 1.5, 3.2, 7.9]), np.array([-1.0, 0.0, 0.5, 2.0]), np.array([1.0, 3.0, -1.0, 0.0]),
          r.random((3, 4)), r.random((5, 4)))


def applied(x, x3):
    return (np.apply_along_axis(np.sum, 1, x), np.apply_along_axis(lambda v: v[::-1] * 2, 0, x), np.apply_along_axis(np.diff, -1, x3),
            np.apply_along_axis(lambda v, k: np.outer(v[:2], v[:3]) * k, 1, x3, 3), np.apply_along_axis(lambda v: (v > 0).sum(), 1, x))


def test_apply_along_axis_matches_numpy() -> None:
    """func1d traced per line: scalar, 1-D and 2-D results laid out where the axis was, extra args."""
    check(applied, np.arange(12.0).reshape(3, 4) - 5, np.arange(24.0).reshape(2, 3, 4))


def test_numpy_functions_that_convert_their_arguments_are_named() -> None:
    """as_strided calls np.asarray in NumPy's Python code: the error names it and the supported spelling (np.vectorize,
    once refused so, compiles: tests/test_surface_everyday4.py)."""
    with pytest.raises(et.ConcreteValueError, match="as_strided converts it: np.lib.stride_tricks.sliding_window_view is supported"):
        et.kernel(lambda x: np.lib.stride_tricks.as_strided(x, (2, 2), (8, 8)))(np.ones(3))


def crosses(a, b, i):
    return (np.cross(a[:, :2], b[:, :2]), np.cross(a[:, :2], b), np.cross(a, b[:, :2]), np.cross(a[0, :2], b[1, :2]), np.cross(i[:2], i[1:3]),
            np.cross(a.T[:2], b.T, axisa=0, axisb=0, axisc=0), np.cross(i[:2].astype(np.uint8), i[1:4].astype(np.uint8)))


@pytest.mark.filterwarnings("ignore:Arrays of 2-dimensional vectors are deprecated:DeprecationWarning")
def test_cross_of_2_vectors_matches_numpy() -> None:
    """2 x 2 (the z component), 2 x 3 and 3 x 2 (a zero third component, NumPy's products), axis args, ints, uint8 wrapping."""
    r = np.random.default_rng(0)
    check(crosses, r.standard_normal((5, 3)), r.standard_normal((5, 3)), np.array([3, -2, 7, 1]), rtol=0, atol=0)
    with pytest.warns(DeprecationWarning, match="Arrays of 2-dimensional vectors are deprecated"):
        et.kernel(lambda a: np.cross(a, a))(np.ones((3, 2)))


def flat_view_take_and_indices_from(x, y):
    z = x.copy()
    z.flat[[0, 5]] = -1
    z.flat[7:] = [1, 2]  # repeated over the positions, as NumPy's flat assignment
    z.flat[2] += 100
    v = z.view()  # a view: writes go through
    v[-1] = 9
    o = np.zeros_like(x)
    np.divide(x, y, out=o, where=y != 0)  # out keeps its elements where `where` is False
    p = np.full_like(x, -1)
    np.add(x, 1, out=p, where=x > 3)
    return (x.flat[5], x.flat[::3], x.flat[[1, -1]], z, x.view(x.dtype) * 2, x.take([0, -1]), x.take([[0, 2]], axis=1), o, p,
            x[np.tril_indices_from(x[:, :3])], x[np.triu_indices_from(x, 1)], x[:3, :3][np.diag_indices_from(x[:3, :3])])


@pytest.mark.parametrize("layout", ["C", "F"])
def test_flat_view_take_method_and_ufunc_where_match_numpy(layout: str) -> None:
    """Found by the surface28 sweep (each raised UnsupportedError): x.flat read and written, x.view() in its own dtype,
    x.take, np.tril/triu/diag_indices_from, a ufunc's out= with where=."""
    x = np.asarray(np.arange(12.0).reshape(3, 4) - 4, order=layout)
    check(flat_view_take_and_indices_from, x, x % 3)


def test_histogram2d_of_empty_data_without_a_range_is_numpys() -> None:
    """No range and no data: NumPy's bins over [0, 1] (the tracing raised a TypeError on the missing range)."""
    e = np.zeros(0)
    got, want = et.kernel(lambda x, y: np.histogram2d(x, y, bins=3))(e, e), np.histogram2d(e, e, bins=3)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_array_equal(g, w)
