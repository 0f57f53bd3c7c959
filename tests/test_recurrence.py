"""scipy.signal's recursive filters (tracing/iir.py on the recurrence op, lowering/recurrence.py) against SciPy: lfilter
(IIR bit for bit: the same arithmetic in the same order; the FIR path to rounding), lfilter_zi, filtfilt, sosfilt,
sosfilt_zi, sosfiltfilt; orders 1 to 8, float32 and float64, axes of 2-D and 3-D arrays, zi given or not, traced
coefficients, long signals, marginal and unstable filters, inf/NaN/huge samples, bad arguments, and the emitted loop."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.ndimage as nd
import scipy.signal as sig

import egglog_tensor as et
from egglog_tensor.errors import DataValueError, UnsupportedError
from test_golden import filecheck

rng = np.random.default_rng(36)


def _ba(order: int, dtype: str) -> tuple[np.ndarray, np.ndarray]:
    b, a = sig.butter(order, 0.15)
    return b.astype(dtype), a.astype(dtype)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("order", [1, 2, 4, 8])
def test_lfilter_matches_scipy_bit_for_bit(order: int, dtype: str) -> None:
    b, a = _ba(order, dtype)
    x = rng.standard_normal((3, 500)).astype(dtype)
    zi = rng.standard_normal((3, order)).astype(dtype)

    def f(x, zi):
        return sig.lfilter(b, a, x), sig.lfilter(b, a, x, zi=zi)

    y, (yz, zf) = et.kernel(f)(x, zi)
    ry, (ryz, rzf) = f(x, zi)
    assert y.dtype == ry.dtype == dtype and zf.dtype == rzf.dtype
    np.testing.assert_array_equal(y, ry)
    np.testing.assert_array_equal(yz, ryz)
    np.testing.assert_array_equal(zf, rzf)


@pytest.mark.parametrize(("shape", "axis"), [((400, 3), 0), ((2, 300, 3), 1), ((2, 3, 300), -1), ((4, 2, 200), 0)])
def test_lfilter_along_any_axis_with_broadcast_zi(shape: tuple[int, ...], axis: int) -> None:
    b, a = np.array([0.2, 0.3, -0.1]), np.array([2.0, -0.5, 0.3, 0.1])  # unnormalized: a[0] = 2, len(b) < len(a)
    x = rng.standard_normal(shape)
    zshape = [1] * len(shape)  # (1 broadcasts on the other axes, as SciPy's C code)
    zshape[axis] = 3
    zi = rng.standard_normal(zshape)

    def f(x, zi):
        return sig.lfilter(b, a, x, axis=axis), sig.lfilter(b, a, x, axis=axis, zi=zi)

    got, want = et.kernel(f)(x, zi), f(x, zi)
    np.testing.assert_array_equal(got[0], want[0])
    for g, w in zip(got[1], want[1], strict=True):
        assert g.shape == w.shape
        np.testing.assert_array_equal(g, w)


def test_traced_coefficients_and_longer_numerator() -> None:
    """b, a as arguments (the op reads them from buffers), len(b) > len(a), a[0] != 1."""
    b, a = rng.standard_normal(6), np.array([1.5, -0.9, 0.2])
    x = rng.standard_normal((2, 300))

    def f(b, a, x):
        return sig.lfilter(b, a, x), sig.lfilter_zi(b, a)

    y, zi = et.kernel(f)(b, a, x)
    np.testing.assert_array_equal(y, sig.lfilter(b, a, x))
    np.testing.assert_allclose(zi, sig.lfilter_zi(b, a), rtol=1e-13, atol=1e-15)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_fir_path_is_scipys_convolution(dtype: str) -> None:
    b, a = rng.standard_normal(5).astype(dtype), np.array([2.0], dtype)
    x = rng.standard_normal((3, 100)).astype(dtype)
    zi = rng.standard_normal((3, 4)).astype(dtype)

    def f(x, zi):
        return sig.lfilter(b, a, x), sig.lfilter(b, a, x, zi=zi)

    got, want = et.kernel(f)(x, zi), f(x, zi)
    rtol = 1e-5 if dtype == "float32" else 1e-13
    np.testing.assert_allclose(got[0], want[0], rtol=rtol, atol=rtol)
    for g, w in zip(got[1], want[1], strict=True):
        np.testing.assert_allclose(g, w, rtol=rtol, atol=rtol)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_long_signals(dtype: str) -> None:
    """10^6 samples made in the kernel (a constant and a broadcast argument): as SciPy's on the same samples."""
    b, a = _ba(4, dtype)
    sos = sig.butter(4, 0.15, output="sos").astype(dtype)
    n = 10**6
    level = np.array([0.75], dtype)

    def f(level):
        return sig.lfilter(b, a, np.full(n, 1.25, dtype=dtype)), sig.sosfilt(sos, np.broadcast_to(level, (n,)))

    y, s = et.kernel(f)(level)
    np.testing.assert_array_equal(y, sig.lfilter(b, a, np.full(n, 1.25, dtype=dtype)))
    np.testing.assert_array_equal(s, sig.sosfilt(sos, np.full(n, 0.75, dtype=dtype)))
    np.testing.assert_allclose(y[-1], 1.25, rtol=1e-5 if dtype == "float32" else 1e-12)  # the step response settles at DC gain 1


def test_marginal_unstable_and_edge_samples() -> None:
    """A pole on the unit circle (a running sum), one outside it (overflowing to inf), and inf, NaN, -0, huge samples:
    SciPy's values, NaN where SciPy's are."""
    x = np.array([0.0, -0.0, 1.0, -2.5, 1e308, 1e308, -1e308, 3.0, np.inf, 1.0, np.nan, 2.0] + [0.5] * 20)
    clean = rng.standard_normal(2000)
    filters = [([1.0], [1.0, -1.0]), ([1.0, 0.5], [1.0, -1.05]), ([0.3, 0.2], [1.0, 0.9, -0.2])]

    def f(x, clean):
        return [sig.lfilter(b, a, v) for b, a in filters for v in (x, clean)]

    for g, w in zip(et.kernel(f)(x, clean), f(x, clean), strict=True):
        np.testing.assert_array_equal(g, w)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("padtype", ["odd", "even", "constant", None])
def test_filtfilt(padtype: str | None, dtype: str) -> None:
    b, a = _ba(3, dtype)
    x = rng.standard_normal((40, 3)).astype(dtype)

    def f(x):
        return sig.filtfilt(b, a, x, axis=0, padtype=padtype), sig.filtfilt(b, a, x[:, 0], padlen=5)

    for g, w in zip(et.kernel(f)(x), f(x), strict=True):
        assert g.dtype == w.dtype
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-12)  # (zi: SciPy's lfilter_zi, the same numbers)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_sosfilt_with_zi_along_axis(dtype: str) -> None:
    sos = sig.ellip(7, 0.5, 60, [0.1, 0.3], btype="band", output="sos").astype(dtype)  # 7 sections
    x = rng.standard_normal((3, 250, 2)).astype(dtype)
    zi = rng.standard_normal((7, 3, 2, 2)).astype(dtype)

    def f(x, zi):
        return sig.sosfilt(sos, x, axis=1), sig.sosfilt(sos, x, axis=1, zi=zi)

    got, want = et.kernel(f)(x, zi), f(x, zi)
    np.testing.assert_array_equal(got[0], want[0])
    for g, w in zip(got[1], want[1], strict=True):
        assert g.shape == w.shape and g.dtype == w.dtype
        np.testing.assert_array_equal(g, w)


def test_traced_sos_sosfilt_zi_and_sosfiltfilt() -> None:
    sos = sig.cheby1(5, 1.0, 0.2, output="sos")
    x = rng.standard_normal((2, 120))

    def f(sos, x):
        return sig.sosfilt_zi(sos), sig.sosfiltfilt(sos, x), sig.sosfilt(sos, x, zi=sig.sosfilt_zi(sos)[:, None, :] * x[:, :1])

    got, want = et.kernel(f)(sos, x), f(sos, x)
    for g, w in zip(got[:2], want[:2], strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(got[2][0], want[2][0], rtol=1e-12, atol=1e-13)
    k = et.kernel(lambda x: sig.sosfiltfilt(sos, x, axis=-1, padtype="even"))
    np.testing.assert_allclose(k(x), sig.sosfiltfilt(sos, x, padtype="even"), rtol=1e-12, atol=1e-13)


def test_openmp_rows_in_parallel() -> None:
    """Blocks of 4 rows (and the 2 left over) shared among the threads; the spline prefilter's rows too."""
    b, a = _ba(6, "float64")
    x = rng.standard_normal((66, 300))

    def f(x):
        return sig.lfilter(b, a, x, axis=-1), nd.spline_filter(x, 3)

    k = et.kernel(f, target="cpu-openmp", threads=2)
    for g, w in zip(k(x), f(x), strict=True):
        np.testing.assert_array_equal(g, w)
    assert k.inspect(x).stage("linalg").count("scf.parallel") >= 3


def test_emitted_loop_keeps_the_states_in_iteration_arguments(tmp_path) -> None:
    """On one thread, an scf.for over blocks of 4 rows, each one scf.for over the samples carrying the 4 rows' states
    (the order-2 filter's two each); the step's direct form II transposed arithmetic (no fused multiply-add), each
    output stored; then the fifth row alone, its two states carried."""
    b, a = _ba(2, "float32")
    x = rng.standard_normal((5, 64)).astype(np.float32)
    text = et.kernel(lambda x: sig.lfilter(b, a, x), target="cpu").inspect(x).stage("linalg")
    filecheck(text, """
CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} {
CHECK: scf.for %{{.*}} iter_args(%[[Z0:[a-z0-9_]+]] = %{{[a-z0-9_]+}}, %[[Z1:[a-z0-9_]+]] = %{{.*}}) -> (f32, f32, f32, f32, f32, f32, f32, f32)
CHECK: %[[BX:.*]] = arith.mulf %{{.*}}, %[[X:.*]] : f32
CHECK: %[[Y:.*]] = arith.addf %[[Z0]], %[[BX]] : f32
CHECK: arith.addf %[[Z1]]
CHECK: arith.mulf %[[Y]]
CHECK: arith.subf
CHECK-NOT: math.fma
CHECK: memref.store %[[Y]]
CHECK-COUNT-3: memref.store
CHECK: scf.yield
CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} {
CHECK: scf.for %{{.*}} iter_args(%{{.*}}, %{{.*}}) -> (f32, f32)
""", tmp_path)


def test_bad_arguments_raise_clear_errors() -> None:
    x = rng.standard_normal((2, 50))
    with pytest.raises(DataValueError, match=r"a\[0\] == 0"):
        et.kernel(lambda x: sig.lfilter([1.0, 0.5], [0.0, 1.0], x))(x)
    with pytest.raises(DataValueError, match=r"a\[0\] == 0.*computed from argument"):
        et.kernel(lambda a, x: sig.lfilter([1.0, 0.5], a, x))(np.array([0.0, 1.0]), x)
    with pytest.raises(DataValueError, match=r"unexpected shape for zi: expected \(2, 2\), found \(2, 3\)"):
        et.kernel(lambda x, zi: sig.lfilter([1.0, 0.5, 0.1], [1.0, 0.2, 0.1], x, zi=zi))(x, np.zeros((2, 3)))
    with pytest.raises(DataValueError, match=r"zi must have shape \(1, 2, 2\)"):
        et.kernel(lambda x, zi: sig.sosfilt(sig.butter(2, 0.2, output="sos"), x, zi=zi))(x, np.zeros((1, 2, 3)))
    with pytest.raises(DataValueError, match=r"sos\[:, 3\] should be all ones"):
        et.kernel(lambda x: sig.sosfilt(np.array([[1.0, 0, 0, 2.0, 0, 0]]), x))(x)
    with pytest.raises(UnsupportedError, match="input type 'int64' not supported"):
        et.kernel(lambda x: sig.lfilter(np.array([1, 2]), np.array([1, 1]), x))(np.arange(10))
    with pytest.raises(UnsupportedError, match="method='gust'"):
        et.kernel(lambda x: sig.filtfilt([1.0, 0.5], [1.0, -0.5], x, method="gust"))(x)
    with pytest.raises(UnsupportedError, match="GPU target rocdl: the recurrence primitive .* compile for a CPU target"):
        et.kernel(lambda x: sig.lfilter([1.0, 0.5], [1.0, -0.5], x), target="rocdl:gfx942").inspect(x)
    with pytest.raises(ValueError, match="must be greater than padlen"):  # (SciPy's own _validate_pad, on the traced x)
        et.kernel(lambda x: sig.filtfilt([1.0, 0.5], [1.0, -0.5], x, padlen=60))(x)


SPLINE_MODES = ["mirror", "reflect", "grid-mirror", "nearest", "constant", "grid-constant", "wrap", "grid-wrap"]


@pytest.mark.parametrize("n", [2, 3, 9, 1500])
def test_spline_filter1d_matches_scipy_bit_for_bit(n: int) -> None:
    """Orders 2 to 5 (one pole and two), every boundary mode, rows short enough that the boundary sums run to the end
    of the row and long enough that z^i vanishes first."""
    x = rng.standard_normal((3, n))

    def f(x):
        return [nd.spline_filter1d(x, order, mode=mode) for order in (2, 3, 4, 5) for mode in SPLINE_MODES]

    for g, w in zip(et.kernel(f)(x), f(x), strict=True):
        assert g.dtype == w.dtype == np.float64
        np.testing.assert_array_equal(g, w)


def test_spline_filter_axes_dtypes_and_edges() -> None:
    """N-D spline_filter (each axis's pass rounded to the output dtype: float32 here), axis 0, orders 0 and 1 (a copy),
    a 10^6-sample row, inf and NaN samples, an output array written in place."""
    x = rng.standard_normal((20, 30, 4)).astype(np.float32)
    edges = np.array([0.0, -0.0, 1e300, -1e300, 2.0, np.inf, 1.0, np.nan] + [0.5] * 30)
    long = rng.standard_normal(10**6)

    def f(x, edges, long):
        out = np.zeros(x.shape, dtype=np.float64)
        nd.spline_filter(x, 4, output=out, mode="reflect")
        return (nd.spline_filter(x), nd.spline_filter(x, 5, output=np.float32, mode="nearest"), nd.spline_filter1d(x, 3, axis=0),
                nd.spline_filter1d(x, 1), nd.spline_filter1d(edges, 3), nd.spline_filter1d(long, 5), out)

    got, want = et.kernel(f)(x, edges, long), f(x, edges, long)
    for g, w in zip(got, want, strict=True):
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_array_equal(g, w)


def test_spline_filter_refuses_clearly() -> None:
    x = rng.standard_normal((4, 5))
    with pytest.raises(UnsupportedError, match="spline order 6 not supported"):
        et.kernel(lambda x: nd.spline_filter1d(x, 6))(x)
    with pytest.raises(UnsupportedError, match="mode 'bogus' is not supported"):
        et.kernel(lambda x: nd.spline_filter(x, 3, mode="bogus"))(x)


def test_scipys_own_filters_on_lfilter() -> None:
    """SciPy's Python code that calls lfilter and sosfilt (bound at import by its spline filters) runs on ours."""
    x = rng.standard_normal(60)

    def f(x):
        return sig.cspline1d(x), sig.qspline1d(x), sig.lfiltic([1.0, 0.5], [1.0, -0.5], x[:3])

    for g, w in zip(et.kernel(f)(x), f(x), strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-14, atol=1e-15)


IMAGE = rng.standard_normal((9, 11))
POINTS = np.stack([rng.uniform(-4, 13, (5, 6)), rng.uniform(-4, 15, (5, 6))])
POINTS[0, 0, 0] = np.nan  # (SciPy's constant border: cval)


def _interpolations_agree(f, *args) -> None:
    got, want = et.kernel(f)(*args), f(*args)
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize(("order", "mode"), [(3, "constant"), (3, "mirror"), (3, "grid-constant"), (2, "nearest")])
def test_map_coordinates_matches_scipy_bit_for_bit(order: int, mode: str) -> None:
    """Points inside, outside on every side and NaN; the prefilter, the coordinate's and the taps' boundary maps, the
    weights and the footprint's sum as ni_interpolation.c."""
    _interpolations_agree(lambda img, points: nd.map_coordinates(img, points, order=order, mode=mode, cval=0.5), IMAGE, POINTS)


@pytest.mark.slow  # (each case a compile of 16-36 gathers: ~5-13 s)
@pytest.mark.parametrize(("order", "mode"), [(order, mode) for order in (0, 1, 4, 5) for mode in ("reflect", "grid-wrap")]
                         + [(3, mode) for mode in ("reflect", "grid-mirror", "wrap", "grid-wrap", "nearest")])
def test_map_coordinates_every_order_and_mode(order: int, mode: str) -> None:
    _interpolations_agree(lambda img, points: nd.map_coordinates(img, points, order=order, mode=mode, cval=-2.0), IMAGE, POINTS)


def test_shift_and_zoom_match_scipy_bit_for_bit() -> None:
    """shift (SciPy's negated amounts), zoom to round(shape * zoom) with and without grid_mode; an integer image's
    output rounded half away from zero and clipped as SciPy's."""
    small = (rng.standard_normal((7, 8)) * 100).astype(np.int16)

    def f(img, small):
        return (nd.shift(img, (1.3, -2.6), mode="reflect"), nd.zoom(img, (1.7, 0.6), mode="mirror"),
                nd.zoom(img, 1.4, mode="grid-constant", grid_mode=True, cval=1.0), nd.shift(small, 0.5, mode="nearest"))

    for g, w in zip(et.kernel(f)(IMAGE, small), f(IMAGE, small), strict=True):
        assert g.shape == w.shape and g.dtype == w.dtype
        np.testing.assert_array_equal(g, w)


def test_affine_transform_matches_scipy_bit_for_bit() -> None:
    """A rotation with an offset, a homogeneous matrix with another output shape, a 1-D matrix (SciPy's zoom and shift)
    and a traced matrix."""
    rotation = np.array([[np.cos(0.3), -np.sin(0.3)], [np.sin(0.3), np.cos(0.3)]])
    homogeneous = np.array([[1.1, 0.2, -1.5], [-0.3, 0.9, 2.0], [0.0, 0.0, 1.0]])

    def f(img, m):
        return (nd.affine_transform(img, rotation, offset=(1.0, -2.0), mode="reflect"),
                nd.affine_transform(img, homogeneous, output_shape=(7, 13)),
                nd.affine_transform(img, [0.8, 1.3], offset=0.7, order=2, mode="mirror"), nd.affine_transform(img, m, order=1, mode="nearest"))

    for g, w in zip(et.kernel(f)(IMAGE, rotation), f(IMAGE, rotation), strict=True):
        assert g.shape == w.shape
        np.testing.assert_array_equal(g, w)
    with pytest.raises(DataValueError, match="homogeneous transformation matrix"):
        et.kernel(lambda img: nd.affine_transform(img, homogeneous * 2.0))(IMAGE)
