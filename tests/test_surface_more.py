"""More of the everyday NumPy surface (issues 24/25): ufunc.accumulate (the cummax/cummin scans),
put_along_axis, convolve/correlate, nextafter/spacing, ediff1d/unwrap, against NumPy on real data:
bit for bit where NumPy's algorithm is ours, else within NumPy's accuracy class."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from strategies import check

import egglog_tensor as et
from egglog_tensor.errors import IndexOutOfBoundsError, TracingError, UnsupportedError

RNG = np.random.default_rng(24)
_HELD = np.zeros((2, 2))  # a NumPy array the kernel neither receives nor makes
ACCUMULATING = (np.add, np.multiply, np.maximum, np.minimum, np.logical_and, np.logical_or)


def _with_specials(shape: tuple[int, ...], dtype: str) -> np.ndarray:
    x = RNG.standard_normal(shape).astype(dtype)
    if x.size > 8:
        x.flat[[1, 5, 8]] = [np.nan, np.inf, -np.inf]
        x.flat[3] = x.flat[2]  # a tie
    return x


@pytest.mark.parametrize("dtype", ["float32", "int8", "bool"])
def test_ufunc_accumulate_every_ufunc_and_axis(dtype: str) -> None:
    """Each accumulating ufunc along axes 0, 1 and -1: NumPy's dtypes (add/multiply widen small ints
    and bool, logical ones give bool), NaN propagating through maximum/minimum, bit for bit."""
    x = _with_specials((5, 7), "float32") if dtype == "float32" else RNG.integers(-3, 4, (5, 7)).astype(dtype)
    check(lambda a: tuple(u.accumulate(a, axis=ax) for u in ACCUMULATING for ax in (0, 1, -1)), x, rtol=0, atol=0)


def test_accumulate_dtype_default_axis_and_layouts() -> None:
    """`dtype=` casts first, axis defaults to 0, a 1-D array takes axis=None; a Fortran-ordered and a
    reversed view; an empty axis; the NumPy name `np.maximum.accumulate` on a fused producer."""
    x = _with_specials((6, 4), "float64")
    i = RNG.integers(-100, 100, (6, 4)).astype(np.int32)
    check(lambda a, b, f, v: (np.maximum.accumulate(a), np.minimum.accumulate(a * 2.0 - 1.0, axis=1),
                              np.add.accumulate(b, dtype=np.float32), np.multiply.accumulate(b, axis=1, dtype=np.int8),
                              np.maximum.accumulate(f, axis=1), np.minimum.accumulate(v), np.add.accumulate(v, axis=None)),
          x, i, np.asfortranarray(x), x[::-1, 0], rtol=0, atol=0)
    check(lambda a: (np.maximum.accumulate(a, axis=0), np.logical_or.accumulate(a, axis=1)), np.zeros((0, 3)))


def test_accumulate_long_axis_on_cpu_openmp() -> None:
    """A long 1-D maximum/minimum scan is split into blocks across threads (two passes): still NumPy's."""
    x = RNG.standard_normal(1 << 17).astype(np.float32)
    x[70000] = np.nan
    got = et.kernel(lambda a: (np.maximum.accumulate(a), np.minimum.accumulate(a[:65536])), target="cpu-openmp")(x)
    np.testing.assert_array_equal(got[0], np.maximum.accumulate(x))
    np.testing.assert_array_equal(got[1], np.minimum.accumulate(x[:65536]))


def test_accumulate_errors() -> None:
    with pytest.raises(UnsupportedError, match="np.subtract.accumulate is not supported"):
        et.kernel(lambda a: np.subtract.accumulate(a))(np.ones(3))
    with pytest.raises(TracingError, match="multiple axes"):
        et.kernel(lambda a: np.add.accumulate(a, axis=None))(np.ones((2, 3)))
    with pytest.raises(UnsupportedError, match="its result is bool"):
        et.kernel(lambda a: np.logical_and.accumulate(a, dtype=np.float64))(np.ones(3))
    with pytest.raises(TracingError, match="out of bounds"):
        et.kernel(lambda a: np.maximum.accumulate(a, axis=2))(np.ones((2, 3)))


def _put(a: np.ndarray, i: np.ndarray, v: object, axis: int | None) -> np.ndarray:
    b = a.copy()
    np.put_along_axis(b, i, v, axis=axis)
    return b


def test_put_along_axis() -> None:
    """Traced and constant indices (negative, repeated: the last write wins, as NumPy's loop), values
    broadcast and cast, axis 0/1/None, an argument written in place, the argmax idiom."""
    a = RNG.standard_normal((4, 6))
    idx = np.array([[0, 5, -1], [2, 2, 1], [3, 0, 3], [1, 1, 1]])
    v = RNG.standard_normal((4, 3))
    flat = np.array([0, 23, -2, 0])
    check(lambda a, i, v: (_put(a, i, v, 1), _put(a, idx, v, 1), _put(a, idx, 7, 1), _put(a, i[:2, :1] % 4 + np.zeros((1, 6), np.int64), v[:1, :1], 0),
                           _put(a, flat, np.arange(4.0), None), _put(a.astype(np.int32), i, v, -1)),
          a, idx, v, rtol=0, atol=0)
    take = lambda a: _put(a, np.argmax(a, axis=1, keepdims=True), 0.0, 1)  # noqa: E731
    check(take, a, rtol=0, atol=0)

    def into_argument(a: np.ndarray, i: np.ndarray) -> None:
        np.put_along_axis(a, i, -1.0, axis=0)

    mine, want = a.copy(), a.copy()
    rows = np.array([[3, 0, 1, 1, 2, 0]])
    et.kernel(into_argument)(mine, rows)
    into_argument(want, rows)
    np.testing.assert_array_equal(mine, want)


def test_put_and_take_along_axis_edge_cases() -> None:
    """Empty index arrays leave arr as it is; out-of-range indices raise IndexError (constant: while
    tracing, traced: at run time); take_along_axis with negative and axis=None indices, and constant
    ones differing along the other axis (a gather)."""
    a = RNG.standard_normal((3, 4))
    check(lambda a: (_put(a, np.zeros((3, 0), np.int64), 1.0, 1), np.take_along_axis(a, np.array([[-1], [0], [-4]]), 1),
                     np.take_along_axis(a, np.array([11, 0, -12]), None), np.take_along_axis(a, np.array([[3, -1], [0, 0], [2, 1]]), 1)), a, rtol=0, atol=0)
    with pytest.raises(IndexOutOfBoundsError):
        et.kernel(lambda a: _put(a, np.array([[4], [0], [0]]), 1.0, 1))(a)
    with pytest.raises(IndexOutOfBoundsError):
        et.kernel(lambda a, i: _put(a, i, 1.0, 1))(a, np.array([[0], [-5], [0]]))
    with pytest.raises(TracingError, match="same number of dimensions"):
        et.kernel(lambda a: _put(a, np.array([0]), 1.0, 1))(a)

    def local_buffer(v: np.ndarray) -> np.ndarray:
        z = np.zeros((2, 3))
        np.put_along_axis(z, np.array([[2], [0]]), v, axis=1)
        return z

    check(local_buffer, np.array([[1.5], [-2.0]]), rtol=0, atol=0)
    with pytest.raises(UnsupportedError, match="did not receive or make"):
        et.kernel(lambda i: np.put_along_axis(_HELD, i, 1.0, axis=1))(np.zeros((2, 1), np.int64))


@pytest.mark.parametrize(("n", "m"), [(9, 4), (4, 9), (5, 5), (1, 3), (6, 1)])
def test_convolve_correlate(n: int, m: int) -> None:
    """Every mode, either operand longer (NumPy swaps them; correlate's 'same' centres by which is
    longer): ints exactly, floats within NumPy's accuracy class (sums of products, any order)."""
    a, v = RNG.standard_normal(n), RNG.standard_normal(m)
    modes = ("full", "same", "valid")
    fn = lambda a, v: tuple(f(a, v, mode) for f in (np.convolve, np.correlate) for mode in modes)  # noqa: E731
    check(fn, a, v, rtol=1e-13, atol=1e-15)
    check(fn, RNG.integers(-50, 50, n).astype(np.int32), RNG.integers(-50, 50, m).astype(np.int8), rtol=0, atol=0)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize(("n", "m"), [(7, 3), (3, 7), (4, 4), (1, 2)])
def test_convolve_correlate_non_finite_values_reach_only_what_they_overlap(dtype: str, n: int, m: int) -> None:
    """NumPy sums only the overlapping products: a NaN or inf (in either operand, shorter or longer) makes NaN or
    inf only of the outputs it overlaps; the padding's 0 * inf made NaN of every output (a wrong answer found by
    the fifth survey: np.polymul of [nan, inf, 1, -0])."""
    a, v = RNG.standard_normal(n).astype(dtype), RNG.standard_normal(m).astype(dtype)
    a[0], v[-1] = np.inf, np.nan
    b = RNG.standard_normal(n).astype(dtype)
    b[-1] = -np.inf
    modes = ("full", "same", "valid")
    check(lambda a, v, b: tuple(f(x, y, mode) for f in (np.convolve, np.correlate) for mode in modes
                                for x, y in ((a, v), (b, v), (b, np.abs(b)))), a, v, b, rtol=2e-6, atol=1e-6)


def test_convolve_dtypes_defaults_and_errors() -> None:
    a, v = RNG.standard_normal(50).astype(np.float32), RNG.standard_normal(7).astype(np.float32)
    check(lambda a, v: (np.convolve(a, v), np.correlate(a, v), np.convolve(a > 0, v > 0), np.convolve(a, [1, 2]),
                        np.convolve(np.ones((1,), np.int8) * 100, np.ones(2, np.int8) * 3)), a, v, rtol=2e-6, atol=1e-6)
    with pytest.raises(ValueError, match="cannot be empty"):
        et.kernel(lambda a: np.convolve(a, a[:0]))(a)
    with pytest.raises(ValueError, match="mode must be one of"):
        et.kernel(lambda a: np.correlate(a, a, "middle"))(a)
    with pytest.raises(ValueError, match="1-D only"):
        et.kernel(lambda a: np.convolve(a.reshape(5, 10), a))(a)


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_nextafter_spacing_bit_for_bit(dtype: str) -> None:
    """Zeros of both signs, +-inf, NaN, max, subnormals, powers of two, random magnitudes; toward
    every kind of y; spacing (float16: NumPy's half loop's sign for negatives)."""
    info = np.finfo(dtype)
    special = [0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, info.max, -info.max, info.smallest_subnormal,
               -info.smallest_subnormal, info.smallest_normal, -info.smallest_normal, 0.5, 3.0, -7.25]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # (float16: large magnitudes cast to inf; NumPy's overflow at max)
        x = np.concatenate([special, RNG.standard_normal(100) * 10.0 ** RNG.integers(-8, 8, 100)]).astype(dtype)
        y = RNG.permutation(np.resize(np.array(special + [2.0, -2.0], dtype), x.size))
        check(lambda x, y: (np.nextafter(x, y), np.nextafter(x, 0.0), np.nextafter(y, x), np.spacing(x)), x, y, rtol=0, atol=0)


def test_ediff1d_unwrap() -> None:
    """ediff1d with both ends
    cast; unwrap along an axis with the default and an int period (ints exact)."""
    m = RNG.standard_normal((3, 5))
    check(lambda m, f: (np.ediff1d(m), np.ediff1d(f, to_end=np.array([1.5, 2.5]), to_begin=-1), np.ediff1d(m[:1, :1])),
          m, m.astype(np.float32), rtol=0, atol=0)
    with pytest.raises(TracingError, match="same_kind"):
        et.kernel(lambda i: np.ediff1d(i, to_begin=1.5))(np.arange(3))
    phase = np.cumsum(RNG.uniform(-3.5, 3.5, (3, 20)), axis=1)
    wrapped = np.angle(np.exp(1j * phase))
    ints = RNG.integers(-9, 9, (4, 6))
    check(lambda p, q, i: (np.unwrap(p), np.unwrap(q, axis=0), np.unwrap(p, discont=4.0), np.unwrap(i, period=4),
                           np.unwrap(i), np.unwrap(p.astype(np.float32))),
          wrapped, wrapped.T.copy(), ints, rtol=0, atol=0)


def test_logical_ufuncs_of_python_numbers_and_bool_arrays() -> None:
    """NumPy's logical ufuncs take a Python number beside a bool array as its truth value in their bool loop
    (`np.logical_and(1, b)`, SciPy's default argument check): the kernel too, where arithmetic stays int64."""
    b = np.array([True, False, True])

    def f(b):
        return np.logical_and(1, b), np.logical_or(b, 0), np.logical_xor(b, 2.5), np.logical_and(0.0, b), b + 1

    for got, want in zip(et.kernel(f)(b), f(b), strict=True):
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)
