"""The small and unsigned integer dtypes (int8, int16, uint8..uint64) and float16 against NumPy:
elementwise ops with wraparound, comparisons, casts, reductions and their accumulator dtypes,
contractions, indices, NEP 50 promotion of every pair (Python scalars too) and the errors."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from strategies import kernel_of, reference, sweep

import egglog_tensor as et
from egglog_tensor import graph

SMALL_INTS = ("int8", "int16", "uint8", "uint16", "uint32", "uint64")
NEW_DTYPES = (*SMALL_INTS, "float16")
DTYPES = tuple(d for d in graph.DTYPES if d != "bfloat16")  # NumPy's own (bfloat16: tests/test_bfloat16.py)


def assert_same(got: object, expected: object) -> None:
    """Bit-identical results: the same dtype, shape and values (NaN where NumPy has NaN)."""
    got, expected = (g if isinstance(g, tuple) else (g,) for g in (got, expected))
    assert len(got) == len(expected)
    for i, (g, e) in enumerate(zip(got, expected, strict=True)):
        g, e = np.asarray(g), np.asarray(e)
        assert g.dtype == e.dtype, f"output {i}: dtype {g.dtype}, NumPy {e.dtype}"
        np.testing.assert_array_equal(g, e, err_msg=f"output {i} ({e.dtype})", strict=True)


def check(fn, *args) -> None:
    assert_same(kernel_of(fn)(*args), reference(fn, *args))


def int_data(dtype: str, shape: tuple[int, ...], seed: int = 0) -> np.ndarray:
    """Values over the dtype's whole range, its extremes and 0 and 1 included (wraparound cases)."""
    info = np.iinfo(dtype)
    rng = np.random.default_rng(seed)
    a = rng.integers(info.min, info.max, size=shape, dtype=dtype, endpoint=True)
    flat = a.reshape(-1)
    flat[: 4] = np.array([info.min, info.max, 0, 1], dtype=object).astype(dtype)[: flat.size]
    return a


def _int_ops(a, b, s):
    return (a + b, a - b, a * b, a // b, a % b, np.fmod(a, b), a / b, np.maximum(a, b), np.minimum(a, b),
            a == b, a != b, a < b, a <= b, a > b, a >= b, -a, np.abs(a), np.sign(a), ~a, a & b, a | b, a ^ b,
            a << s, a >> s, a ** (s % 4), np.square(a), a + 1, 2 * a, a - 1, a // 3, a.astype(np.float64) * 0.5)


@pytest.mark.parametrize("dtype", sweep(SMALL_INTS, ["int8", "uint16", "uint64"]))
def test_int_elementwise(dtype: str) -> None:
    """Every integer op over the whole range: wraparound on overflow, unsigned division, compare,
    max/min, shifts (logical for unsigned), abs/negative/sign of unsigned, division by zero (0)."""
    a = int_data(dtype, (7, 9), seed=1)
    b = int_data(dtype, (9,), seed=2)
    b[3] = 0
    bits = np.dtype(dtype).itemsize * 8
    s = np.array([0, 1, 3, bits - 1, bits, bits + 5, 2, 7, 1], dtype=dtype)  # counts past the width: 0 or the sign
    check(_int_ops, a, b, s)


def _casts(a):
    return tuple(a.astype(d) for d in DTYPES)


@pytest.mark.parametrize("dtype", NEW_DTYPES)
def test_casts_to_every_dtype(dtype: str) -> None:
    """astype from each new dtype to every supported one, values in every target's range."""
    a = np.array([0, 1, 2, 5, 17, 100, 127, 3, 64, 99], dtype=dtype)
    check(_casts, a)


@pytest.mark.parametrize("dtype", SMALL_INTS)
def test_casts_out_of_range_wrap(dtype: str) -> None:
    """Integer narrowing and signed/unsigned casts wrap as NumPy's (modulo 2**bits); to floats round."""
    check(lambda a: (a.astype(np.int8), a.astype(np.uint8), a.astype(np.int16), a.astype(np.uint16), a.astype(np.uint32),
                     a.astype(np.int32), a.astype(np.int64), a.astype(np.uint64), a.astype(np.float16),
                     a.astype(np.float32), a.astype(np.float64), a.astype(bool)), int_data(dtype, (50,), seed=3))


@pytest.mark.parametrize("src", ["float32", "float64"])
@pytest.mark.parametrize("size", [5, 300])
def test_floats_out_of_a_narrow_ints_range_wrap(src: str, size: int) -> None:
    """A float to an 8- or 16-bit int or to uint64 as NumPy's C cast: truncated into a wide int, its low
    bits kept (-1.0 -> uint8 255, 300.0 -> 44), in the scalar loop (5) and the vector one (300)
    alike: LLVM's fptoui into uint8 is poison for -1.0, which vector code made 0."""
    a = np.resize(np.array([-1.0, -2.5, 300.0, 70000.0, -129.0, -40000.5, 2.0**40, -(2.0**40), 0.5, 255.9], src), size)
    check(lambda a: tuple(np.floor(a).astype(t) for t in ("uint8", "int8", "uint16", "int16", "uint64", "int64")), a)


def _reductions(a):
    return (a.sum(), a.sum(axis=0), a.sum(axis=-1, keepdims=True), a.prod(axis=1), a.max(), a.min(axis=0),
            a.mean(), a.mean(axis=1), a.argmax(), np.argmin(a, axis=0), np.argmax(a, axis=1), a.sum(axis=()),
            a[:0].sum(axis=0), a[:0].max(axis=1))


@pytest.mark.parametrize("dtype", SMALL_INTS)
def test_int_reductions(dtype: str) -> None:
    """sum/prod accumulate in int64 (signed) or uint64 (unsigned) as NumPy's, max/min/argmax in the
    dtype (unsigned order), mean in float64 (its float64 sum in another order: 1e-15), empty axes."""
    a = int_data(dtype, (6, 5), seed=4)
    got, expected = kernel_of(_reductions)(a), reference(_reductions, a)
    assert_same(got[:6] + got[8:], expected[:6] + expected[8:])
    for g, e in zip(got[6:8], expected[6:8], strict=True):
        assert g.dtype == e.dtype
        np.testing.assert_allclose(g, e, rtol=1e-15)


@pytest.mark.parametrize("dtype", SMALL_INTS)
def test_int_sum_at_size(dtype: str) -> None:
    """A sum of 2^22 maximal elements: exact in the wide accumulator (wrapping past uint64/int64 as NumPy)."""
    a = np.broadcast_to(np.array(np.iinfo(dtype).max, dtype=dtype), (2048, 2048))
    check(lambda a: (a.sum(), a.sum(axis=0), a.max(axis=1)), a)


def _float16_ops(a, b):
    return (a + b, a - b, a * b, a / b, a // b, a % b, np.sqrt(np.abs(a)), -a, np.abs(a), np.square(a),
            np.maximum(a, b), np.minimum(a, b), a < b, a == b, np.isnan(a), np.isinf(a), np.signbit(a),
            np.floor(a), np.ceil(a), np.rint(a), np.sign(a), a * 2.5, a + 1, 3 - a, a ** 2, np.reciprocal(b),
            np.where(a > b, a, b), np.clip(a, -1, 1), a.astype(np.float32) + b, a + b.astype(np.float64))


def test_float16_elementwise_bit_identical() -> None:
    """float16 stored as such, each op computed in float32 and rounded to float16 (NumPy's half
    loops): bit-identical, with NaN, +-inf, -0.0, subnormals and overflow to inf."""
    rng = np.random.default_rng(5)
    a = (rng.standard_normal(4000) * 50).astype(np.float16)
    b = (rng.standard_normal(4000) * 3).astype(np.float16)
    a[:8] = [np.nan, np.inf, -np.inf, -0.0, 6e-8, 65504, -65504, 1e-5]
    b[:8] = [1, 2, -np.inf, 0.0, 3e-5, 65504, 2, 0]
    check(_float16_ops, a, b)


TRANSCENDENTAL = {"exp": np.exp, "log": np.log, "sin": np.sin, "cos": np.cos, "tanh": np.tanh, "expm1": np.expm1,
                  "log1p": np.log1p, "arctan": np.arctan, "exp2": np.exp2, "log2": np.log2, "log10": np.log10,
                  "sinh": np.sinh, "arcsin": np.arcsin, "tan": np.tan, "cbrt": np.cbrt}


def _transcendental(x):
    return tuple(f(x) for f in TRANSCENDENTAL.values())


def test_float16_math_over_every_value() -> None:
    """Math functions over every finite float16: within 1 float16 ULP of NumPy (docs/accuracy.md:
    they are computed in float32, where they may differ from NumPy's by an ULP, before rounding)."""
    x = np.arange(2**16, dtype=np.uint16).view(np.float16)
    x = x[np.isfinite(x)]
    got, expected = kernel_of(_transcendental)(x), reference(_transcendental, x)
    for name, g, e in zip(TRANSCENDENTAL, got, expected, strict=True):
        assert g.dtype == e.dtype == np.float16
        np.testing.assert_array_equal(np.isnan(g), np.isnan(e), err_msg=name)
        finite = ~np.isnan(e)
        ulps = np.abs(g[finite].view(np.int16).astype(np.int64) - e[finite].view(np.int16).astype(np.int64))
        assert ulps.max() <= 1, f"{name}: {ulps.max()} ULP"
        assert np.count_nonzero(ulps) <= 32, f"{name}: {np.count_nonzero(ulps)} values differ"


def _f16_reductions(a):
    return (a.sum(), a.sum(axis=1), a.max(), a.min(axis=0), a.mean(), a.mean(axis=1), a.prod(axis=1),
            (a.astype(np.float32) / 3).sum(axis=1, dtype=np.float16), a.argmax(axis=1))


def test_float16_reductions() -> None:
    """float16 sums, means and products along the contiguous axis accumulate in float32 and round
    once, as NumPy's: within 1 ULP (sum(dtype=float16) of float32 rounds each element first, as
    NumPy's cast); max/min/argmax exact."""
    rng = np.random.default_rng(6)
    a = (rng.uniform(0.5, 1.5, (16, 300))).astype(np.float16)
    got, expected = kernel_of(_f16_reductions)(a), reference(_f16_reductions, a)
    for g, e in zip(got, expected, strict=True):
        assert g.dtype == e.dtype
        np.testing.assert_array_max_ulp(g, e, maxulp=1)  # float32 partial sums in another order than NumPy's pairwise
    assert_same(got[2:4] + got[8:], expected[2:4] + expected[8:])


def test_float16_sum_at_size() -> None:
    """2^22 float16 0.01s: the float32 accumulator keeps the sum (NumPy's too: 41950, where a float16
    running sum stalls); along a non-contiguous axis too (where NumPy rounds each step: docs/accuracy.md)."""
    a = np.full((2048, 2048), 0.01, np.float16)
    total, columns = kernel_of(lambda a: (a.sum(), a.sum(axis=0)))(a)
    assert total.dtype == columns.dtype == np.float16
    np.testing.assert_array_max_ulp(total, a.sum(), maxulp=1)
    exact = np.float16(2048 * np.float64(np.float16(0.01)))
    np.testing.assert_array_max_ulp(columns, np.full(2048, exact), maxulp=1)


@pytest.mark.parametrize("dtype", [*SMALL_INTS, "float16"])
def test_contractions(dtype: str) -> None:
    """matmul, dot and einsum: integers wrap in the dtype as NumPy's; float16 accumulates in float32
    and rounds once, as np.matmul (np.einsum's default path rounds each step: compared with optimize=True)."""
    rng = np.random.default_rng(7)
    if dtype == "float16":
        a, b = (rng.standard_normal(s).astype(dtype) for s in ((12, 150), (150, 9)))
    else:
        a, b = int_data(dtype, (12, 150), seed=8), int_data(dtype, (150, 9), seed=9)
    fn = lambda a, b: (a @ b, np.dot(a[0], b[:, 1]), np.einsum("ij,jk->ik", a, b, optimize=True))  # noqa: E731
    got, expected = kernel_of(fn)(a, b), reference(fn, a, b)
    if dtype == "float16":
        for g, e in zip(got, expected, strict=True):
            assert g.dtype == e.dtype
            np.testing.assert_array_max_ulp(g, e, maxulp=1)
    else:
        assert_same(got, expected)


@pytest.mark.parametrize("dtype", SMALL_INTS)
def test_indices_of_every_int_dtype(dtype: str) -> None:
    """take, fancy indexing and take_along_axis with index arrays of each integer dtype; argmax stays int64."""
    x = np.arange(60.0).reshape(6, 10)
    idx = np.array([3, 0, 5, 1, 1], dtype=dtype)
    check(lambda x, i: (np.take(x, i, axis=0), x[i], x[:, i], x[i, i], np.argmax(x[i], axis=1)), x, idx)


def test_index_values_as_numpy_reads_them() -> None:
    """Negative int8 indices count from the end; uint64 2**64-1 is -1 to NumPy too (it casts to intp);
    a uint8 255 past the axis raises IndexError as NumPy's."""
    x = np.arange(10.0)
    take = lambda x, i: (x[i], np.take(x, i))  # noqa: E731
    check(take, x, np.array([-1, 3, -10], np.int8))
    check(take, x, np.array([2**64 - 1, 0], np.uint64))
    with pytest.raises(IndexError):
        x[np.array([255], np.uint8)]  # noqa: B018  (NumPy itself)
    with pytest.raises(et.IndexOutOfBoundsError, match="out of bounds for axis 0 with size 10"):
        kernel_of(take)(x, np.array([255, 1], np.uint8))


# --- promotion: every pair, and Python scalars ------------------------------------------------


def _promotions(a, *others):
    return (*(a + o for o in others), a + 1, a * 2.5, a * True, a < 3, a / 2)


@pytest.mark.parametrize("dtype", DTYPES)
def test_promotion_table(dtype: str) -> None:
    """a + b of every pair of supported dtypes is np.result_type's dtype, with NumPy's values; Python
    scalars stay weak (NEP 50)."""
    a = np.array([1, 2, 3, 0], dtype=dtype)
    others = [np.array([1, 0, 2, 1], dtype=d) for d in DTYPES]
    got = kernel_of(_promotions)(a, *others)
    for g, d in zip(got, DTYPES):
        assert g.dtype == np.result_type(dtype, d), (dtype, d, g.dtype)
    assert_same(got, reference(_promotions, a, *others))


@pytest.mark.parametrize(("dtype", "value"), [("uint8", 300), ("uint8", -1), ("int8", 128), ("int16", -40000),
                                              ("uint16", 2**16), ("uint32", -5), ("uint64", -1)])
def test_python_int_out_of_bounds(dtype: str, value: int) -> None:
    """`uint8_array + 300` and `uint32_array + (-5)` raise OverflowError, as NumPy 2's."""
    a = np.zeros(3, dtype)
    with pytest.raises(OverflowError):
        a + value  # noqa: B018  (NumPy itself)
    with pytest.raises(et.OutOfBoundsError, match=f"Python integer {value} out of bounds for {dtype}"):
        kernel_of(lambda a: a + value)(a)


def test_python_int_argument_bounds() -> None:
    """A Python-int argument meeting a uint8 array is checked at each call against uint8's range."""
    k = kernel_of(lambda a, n: a + n)
    a = np.array([250, 3, 0], np.uint8)
    assert_same(k(a, 10), a + 10)
    with pytest.raises(OverflowError, match="out of bounds for uint8"):
        k(a, 256)
    with pytest.raises(OverflowError, match="out of bounds for uint8"):
        k(a, -1)


def test_unsigned_compared_with_negative_python_int() -> None:
    """`uint8_array < -1` compares exactly (False everywhere), as NumPy's; uint64 + int64 is float64."""
    check(lambda a, b: (a < -1, a >= -300, a + b, a == 2**40), np.arange(5, dtype=np.uint8), np.arange(5))
    check(lambda a, b: (a + b, np.maximum(a, b)), np.array([2**63, 5], np.uint64), np.array([-1, 7], np.int64))


@pytest.mark.parametrize("dtype", NEW_DTYPES)
def test_round_and_clip(dtype: str) -> None:
    """np.round (decimals < 0 wraps for unsigned as NumPy's: 255 -> 260 -> 4) and np.clip, whose Python-int
    bounds beyond the dtype cannot bind (NumPy ignores them)."""
    a = np.array([0, 7, 15, 126, 127, 5, 25, 35], dtype=dtype)
    if dtype != "float16":  # (a 32/64-bit maximum rounds past the dtype: casting that back is undefined in C, NumPy too)
        a[:2] = np.array([np.iinfo(dtype).max if a.itemsize < 4 else 1, np.iinfo(dtype).min], dtype=object).astype(dtype)
        check(lambda a: (np.round(a), np.round(a, -1), np.round(a, 2), np.clip(a, -5, 300), np.clip(a, 3, 100)), a)
    else:
        check(lambda a: (np.round(a), np.round(a / 3, 1), np.round(a, -1), np.clip(a, -5, 300), np.clip(a, 3, 100)), a)


def _stores(a):
    b = a.copy()
    b[0] = 200
    b[1:3] = 2.7
    b[3] += 100
    return b


def test_item_assignment_into_new_dtypes() -> None:
    """Stores cast as NumPy's (unsafe for arrays and floats, 2.7 -> 2); a Python int outside the
    dtype raises OverflowError as NumPy's `uint8_array[0] = 300`."""
    for dtype in ("uint8", "int16", "float16"):
        check(_stores, np.arange(6, dtype=dtype))
    with pytest.raises(OverflowError):
        np.zeros(2, np.uint8)[0] = 300
    with pytest.raises(et.OutOfBoundsError, match="300 out of bounds for uint8"):
        kernel_of(lambda a: _set(a, 300))(np.zeros(2, np.uint8))


def _set(a, value):
    b = a.copy()
    b[0] = value
    return b


def test_bool_loops_resolving_to_int8() -> None:
    """NumPy runs bool << bool, bool >> bool, bool // bool and ~(bool + int8) in int8 loops: the same dtypes and values."""
    check(lambda a, b: (a << b, a >> b, a // b, a % b, ~(a + b.astype(np.int8))), np.array([True, False, True]), np.array([True, True, False]))


def test_unsupported_dtype_is_refused() -> None:
    """float128 and complex arguments raise KernelArgumentError naming the supported dtypes."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for bad in (np.zeros(3, np.complex64), np.zeros(3, np.longdouble)):
            with pytest.raises(et.KernelArgumentError, match="uint8"):
                kernel_of(lambda a: a + 1)(bad)


def _cached(a, h):
    return a // 3 + 100, np.maximum(a, 7), (h * 2.5).sum(), a.sum(), h.astype(np.uint16)


def test_new_dtypes_through_the_disk_cache() -> None:
    """A uint8/float16 kernel is stored and loaded back (a fresh Kernel hits) with the same results, and
    a uint8 argument does not hit an int8 entry (the dtype is in the key)."""
    a, h = np.array([1, 200, 255, 0], np.uint8), np.array([1.5, -2, 3, 0.25], np.float16)
    cold, warm = et.kernel(_cached), et.kernel(_cached)
    assert_same(cold(a, h), reference(_cached, a, h))
    assert cold.inspect(a, h).cache == "miss-stored"
    assert_same(warm(a, h), reference(_cached, a, h))
    assert warm.inspect(a, h).cache == "hit"
    signed = a.astype(np.int8)
    assert_same(warm(signed, h), reference(_cached, signed, h))
    assert warm.inspect(signed, h).cache == "miss-stored"
