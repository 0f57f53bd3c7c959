"""Writes through views inside a kernel, as NumPy's memory sharing makes them (issue 25): through transposes, through
reshapes and ravels that NumPy makes views (of a C- or F-contiguous array, decided by NumPy's own reshape on the
strides), not through the reshapes NumPy copies; views that NumPy makes read-only, or a reshape of an array whose
layout the trace does not know, refused with a clear error."""

from __future__ import annotations

import numpy as np
import pytest

import egglog_tensor as et

A = np.arange(24, dtype=np.float64).reshape(4, 6) * 1.5


def reshape_then_write(b):
    b = b.copy()
    y = b.reshape(-1)
    y[3] = 1.0
    return b, y


def ravel_written(b):
    b = b.copy()
    b.ravel()[5] = -2.0
    return b


def transpose_row_written(b):
    b = b.copy()
    b.T[0] = 7.0
    return b


def transposed_columns_added(b):
    b = b.copy()
    y = b.T
    y[:, 1] += 1.0
    return b


def reshaped_rows_doubled(b):
    b = b.copy()
    b.reshape(2, 12)[1] *= 2.0
    return b


def ravel_sees_later_writes(b):
    b = b.copy()
    y = b.ravel()
    b[0, 0] = 100.0
    b += 1.0
    return y


def strided_slice_of_a_reshape(b):
    b = b.copy()
    b.reshape(-1)[::3] = 0.0
    b.reshape(4, 3, 2)[:, 1, :] = 1.0
    return b


def transposed_slice_of_a_slice(b):
    b = b.copy()
    b[:, ::2].T[0] = 1.0
    np.transpose(b)[1:3, ::2] = -3.0
    return b


def reshape_of_a_transpose_copies(b):
    b = b.copy()
    y = b.T.reshape(-1)  # NumPy copies: b does not change
    y[0] = 1.0
    return b, y


def local_buffer_through_a_reshape(b):
    y = np.zeros(24)
    y.reshape(4, 6)[1] = b[2]
    return y


def fortran_buffer_reshape_copies(b):
    y = np.zeros((4, 6), order="F")
    z = y.reshape(-1)  # a copy: y is F-ordered
    z[1] = 5.0
    return y, z


def ascontiguousarray_of_a_transpose_copies(b):
    y = np.ascontiguousarray(b.T)
    y[0] = 0.0
    return b.sum(), y


def elementwise_result_through_its_ravel(b):
    y = np.exp(b) * 2.0  # laid out as b: C (a view) or F (a copy)
    y.reshape(-1)[0] = 0.0
    z = b @ b.T  # matmul's result is C
    z.ravel()[1] = 5.0
    return y, z


def argument_through_its_transpose(b):
    b.T[0] = 7.0
    np.transpose(b)[1:3] += 1.0
    return b.sum()


def argument_through_its_ravel(b):
    b.reshape(-1)[3] = -1.0  # a view of a C-ordered argument, a copy of an F-ordered one
    y = b[::2].reshape(2, 3, 2)  # a view of a C-ordered argument
    y[0, 0, 0] = 100.0
    return b.sum()


@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize("fn", [reshape_then_write, ravel_written, transpose_row_written, transposed_columns_added,
                                reshaped_rows_doubled, ravel_sees_later_writes, strided_slice_of_a_reshape,
                                transposed_slice_of_a_slice, reshape_of_a_transpose_copies, local_buffer_through_a_reshape,
                                fortran_buffer_reshape_copies, ascontiguousarray_of_a_transpose_copies, elementwise_result_through_its_ravel,
                                argument_through_its_transpose, argument_through_its_ravel],
                         ids=lambda f: getattr(f, "__name__", f))
def test_writes_through_views_match_numpy(fn, order) -> None:
    """The results and the argument afterwards are NumPy's (until this change each raised UnsupportedError)."""
    got_arg, want_arg = np.array(A, order=order), np.array(A, order=order)
    got, want = et.kernel(fn)(got_arg), fn(want_arg)
    for g, w in zip(got if isinstance(got, tuple) else (got,), want if isinstance(want, tuple) else (want,), strict=True):
        np.testing.assert_array_equal(g, w)
    np.testing.assert_array_equal(got_arg, want_arg)


def test_an_output_and_an_updated_copy_of_its_reshape() -> None:
    """A wrong answer until this change: the update of a reshaped copy of an output was made in place, in the output's
    buffer, so the output returned changed too."""
    def f(b):
        y = b * 2
        z = y.reshape(3, 8).copy()
        z[0, 1] = 5.0
        return y, z

    got, want = et.kernel(f)(A), f(A)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_array_equal(g, w)


def test_read_only_views_and_unknown_layouts_are_refused() -> None:
    def broadcast(b):
        np.broadcast_to(b[0], (3, 6))[0] = 1.0
        return b

    def diagonal(b):
        c = b.copy()
        np.diagonal(c)[0] = 1.0
        return c

    def computed(b):
        y = b[:, :4] + b[:, :4].T
        y.reshape(-1)[0] = 0.0  # NumPy lays y out by its operands' strides: a view or a copy
        return y

    with pytest.raises(et.UnsupportedError, match="made by broadcast_to is not supported .NumPy's are read-only"):
        et.kernel(broadcast)(A.copy())
    with pytest.raises(et.UnsupportedError, match="made by diagonal"):
        et.kernel(diagonal)(A)
    with pytest.raises(et.UnsupportedError, match="it was reshaped"):
        et.kernel(computed)(A)
    with pytest.raises(et.UnsupportedError, match="it was reshaped"):
        et.kernel(argument_through_its_ravel)(A.copy()[:, ::2])  # a strided argument: NumPy decides by its strides
