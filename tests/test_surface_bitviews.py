"""`x.view(dtype)` of another dtype (issue 25): the bytes reinterpreted as NumPy does, bit for bit. Of the same
itemsize a view that fuses and that writes go through; of another, the last axis's length changes by the ratio, with
NumPy's errors where it refuses (0-d, a last axis that is not contiguous, a length in bytes that does not divide)."""

from __future__ import annotations

import numpy as np
import pytest

import egglog_tensor as et

SPECIALS = np.array([[1.5, -2.0, np.nan, 0.0], [-0.0, np.inf, -np.inf, 1e-40], [3.25, -1e30, 7.0, 2.0**-149]], np.float32)


def same_bits(got, want) -> None:
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(np.ascontiguousarray(got).view(np.uint8), np.ascontiguousarray(want).view(np.uint8))


@pytest.mark.parametrize("fn", [
    lambda a: a.view(np.int32),
    lambda a: a.view(np.uint32) >> 23,  # the biased exponents
    lambda a: (a.view(np.int32) & 0x7FFFFFFF).view(np.float32),  # |a| by its bits
    lambda a: a.view(np.float16),  # two halves per element
    lambda a: a.view(np.uint8),
    lambda a: a.view(np.uint8).view(np.float32),
    lambda a: a.view(np.uint8)[:, 4:12].view(np.float64),
    lambda a: a.astype(np.float64).view(np.int64),
    lambda a: a.astype(np.float64).view(np.float32),
    lambda a: a[:, :2].view(np.int64),
    lambda a: (a > 0).view(np.uint8),
    lambda a: a.astype(np.float16).view(np.int16),
    lambda a: np.int8(-3) * (a > 0).view(np.int8),
    lambda a: (a * 2).view(np.uint16),  # laid out as a: C, or F (NumPy's error)
], ids=["f32-i32", "exponents", "abs-by-bits", "f32-f16", "f32-u8", "u8-f32", "u8-slice-f64", "f64-i64", "f64-f32",
        "f32-slice-i64", "bool-u8", "f16-i16", "bool-i8", "product-u16"])  # fmt: skip
@pytest.mark.parametrize("order", ["C", "F"])
def test_views_as_other_dtypes_match_numpy_bit_for_bit(fn, order) -> None:
    """(Until this change each raised UnsupportedError.) An F-ordered argument: the same itemsize only, NumPy's error else."""
    x = np.array(SPECIALS, order=order)
    try:
        want = fn(x.copy(order="K"))
    except ValueError as error:
        with pytest.raises(et.TracingError, match=str(error)[:40]):
            et.kernel(fn)(x)
        return
    same_bits(et.kernel(fn)(x), want)


def test_a_same_itemsize_view_is_written_through_and_sees_writes() -> None:
    def f(a):
        b = a.copy()
        bits = b.view(np.int32)
        bits[0] &= 0x7FFFFFFF  # b's first row made positive
        b[1, 0] = 5.0
        return b, bits[1]

    for got, want in zip(et.kernel(f)(SPECIALS), f(SPECIALS), strict=True):
        same_bits(got, want)


def test_a_same_itemsize_view_fuses() -> None:
    """One elementwise generic: the bitcast sits in the loop body."""
    linalg = et.kernel(lambda a: (a.view(np.int32) >> 1) + 1).inspect(SPECIALS).stage("linalg")
    assert linalg.count("linalg.generic") == 1 and "arith.bitcast" in linalg


def test_numpy_s_errors_and_the_refused_writes() -> None:
    def written(a):
        b = a.copy()
        c = b.view(np.uint8)
        c[0] = 1
        return b

    with pytest.raises(et.TracingError, match="Changing the dtype of a 0d array is only supported if the itemsize is unchanged"):
        et.kernel(lambda a: a.sum().view(np.uint8))(SPECIALS)
    with pytest.raises(et.TracingError, match="the last axis must be contiguous"):
        et.kernel(lambda a: a.T.view(np.uint8))(SPECIALS)
    with pytest.raises(et.TracingError, match="its size must be a divisor of the total size in bytes of the last axis"):
        et.kernel(lambda a: a[:, :3].view(np.float64))(SPECIALS)
    with pytest.raises(et.UnsupportedError, match=r"viewed as another itemsize \(a float32 array's view\(uint8\)\)"):
        et.kernel(written)(SPECIALS)
    with pytest.raises(et.UnsupportedError, match=r"whose memory order NumPy decides by its inputs'"):
        et.kernel(lambda a: (a[:, :2] + a[:, 2:]).view(np.uint8))(SPECIALS)
    with pytest.raises(et.UnsupportedError, match=r"ndarray.view\(complex64\) is not supported"):
        et.kernel(lambda a: a.view(np.complex64))(SPECIALS)
