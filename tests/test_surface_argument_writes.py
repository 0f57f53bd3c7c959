"""Writes into a kernel's arguments update the caller's arrays, as NumPy's do (issue 25): NPBench-style
kernels with time loops, `A[i] += ...`, mask stores, `+=` on a whole argument; what NumPy would refuse
or what depends on aliasing is a KernelArgumentError before anything runs."""

from __future__ import annotations

import numpy as np
import pytest

import egglog_tensor as et
from npstyle_kernels import jacobi_1d, jacobi_2d

RNG = np.random.default_rng(2025)


def same_as_numpy(fn, *args, kernel=None):
    """Run fn compiled and fn in NumPy, each on its own copies: the results and every argument afterwards
    are equal bit for bit (same dtypes)."""
    mine = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    theirs = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    got, want = (kernel or et.kernel(fn))(*mine), fn(*theirs)
    if want is None:
        assert got is None
    else:
        for g, w in zip(got if isinstance(got, tuple) else (got,), want if isinstance(want, tuple) else (want,), strict=True):
            assert np.asarray(g).dtype == np.asarray(w).dtype
            np.testing.assert_array_equal(g, w)
    for m, t in zip(mine, theirs, strict=True):
        if isinstance(t, np.ndarray):
            assert m.dtype == t.dtype
            np.testing.assert_array_equal(m, t)
    return mine


def heat_3d(TSTEPS, A, B):
    for _ in range(1, TSTEPS):
        B[1:-1, 1:-1, 1:-1] = (0.125 * (A[2:, 1:-1, 1:-1] - 2.0 * A[1:-1, 1:-1, 1:-1] + A[:-2, 1:-1, 1:-1])
                               + 0.125 * (A[1:-1, 2:, 1:-1] - 2.0 * A[1:-1, 1:-1, 1:-1] + A[1:-1, :-2, 1:-1])
                               + A[1:-1, 1:-1, 1:-1])
        A[1:-1, 1:-1, 1:-1] = 0.125 * (B[1:-1, 1:-1, 2:] - 2.0 * B[1:-1, 1:-1, 1:-1] + B[1:-1, 1:-1, :-2]) + B[1:-1, 1:-1, 1:-1]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("kernel, shape", [(jacobi_1d, (40,)), (jacobi_2d, (12, 14)), (heat_3d, (6, 7, 8))])
def test_stencils_with_a_time_loop_update_both_arguments(kernel, shape, dtype) -> None:
    A, B = RNG.random(shape).astype(dtype), RNG.random(shape).astype(dtype)
    same_as_numpy(kernel, 4, A, B)


def test_row_updates_in_a_loop() -> None:
    def gramschmidt_like(A, v):
        for i in range(1, A.shape[0]):
            A[i] += 0.5 * A[i - 1] * v
        A[0, :] -= v

    same_as_numpy(gramschmidt_like, RNG.random((6, 5)), RNG.random(5))


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32])
def test_whole_argument_augmented_assignment_and_ufunc_out(dtype) -> None:
    def f(A, B):
        A += B
        np.multiply(A, 2, out=A)
        A[...] -= 1

    same_as_numpy(f, (RNG.random((5, 6)) * 10).astype(dtype), (RNG.random((5, 6)) * 10).astype(dtype))


def test_mask_store_into_an_argument() -> None:
    def clip_negative(A):
        A[A < 0] = 0.0
        return A.sum()

    same_as_numpy(clip_negative, RNG.standard_normal((7, 3)))


def test_two_arguments_written_and_a_value_returned() -> None:
    def f(A, B, n):
        A[1:] = A[:-1] * n
        B[::2] += A[::2]
        return A.sum() + B.max(), A[0] * 2

    same_as_numpy(f, RNG.random(9), RNG.random(9), 3)


def test_later_reads_and_earlier_views_see_the_write() -> None:
    def f(A):
        row = A[1]
        A[1, ::2] = -1.0
        return row * 2, A[1].copy()

    same_as_numpy(f, RNG.random((3, 4)))


def test_strided_and_fortran_arguments_are_updated_in_place() -> None:
    def f(A):
        A[:, 0] = A[:, 1] + 1.0

    for A in (np.asfortranarray(RNG.random((4, 5))), RNG.random((8, 10))[::2, ::2]):
        want = A.copy(order="K")
        assert et.kernel(f)(A) is None
        f(want)
        np.testing.assert_array_equal(A, want)


def test_repeated_calls_take_the_fast_path_and_stay_exact() -> None:
    k = et.kernel(jacobi_1d)
    for _ in range(4):
        same_as_numpy(jacobi_1d, 3, RNG.random(30), RNG.random(30), kernel=k)
    assert len(k.compilations) == 1


def test_a_cache_hit_in_a_fresh_kernel_still_updates(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("EGGLOG_TENSOR_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("EGGLOG_TENSOR_CACHE", raising=False)

    def f(A):
        A[1:] += A[:-1]

    def g(A):
        return A[1:] + A[:-1]

    A = RNG.random(12)
    assert et.kernel(f).inspect(A).cache != "hit"
    k = et.kernel(f)
    assert k.inspect(A).cache == "hit"
    same_as_numpy(f, A, kernel=k)
    np.testing.assert_array_equal(et.kernel(g)(A), g(A))  # the same term, nothing written: not f's entry


def test_read_only_argument_is_refused_before_running() -> None:
    A = RNG.random(5)
    A.flags.writeable = False
    with pytest.raises(et.KernelArgumentError, match="argument 'A' is written into by the kernel, but the array is read-only"):
        et.kernel(jacobi_1d)(3, A, RNG.random(5))


def test_broadcast_view_is_refused() -> None:
    B = RNG.random(5)
    view = np.lib.stride_tricks.as_strided(RNG.random(1), (5,), (0,))
    with pytest.raises(et.KernelArgumentError, match="read-only or a broadcast view"):
        et.kernel(jacobi_1d)(3, view, B)


def test_overlapping_arguments_are_refused_and_left_unchanged() -> None:
    A = RNG.random(10)
    before = A.copy()
    with pytest.raises(et.KernelArgumentError, match="argument 'A' is written into by the kernel and shares memory with argument 'B'"):
        et.kernel(jacobi_1d)(3, A, A)
    with pytest.raises(et.KernelArgumentError, match="shares memory"):
        et.kernel(jacobi_1d)(3, A[:8], A[2:])
    np.testing.assert_array_equal(A, before)


def test_a_list_argument_written_into_is_refused() -> None:
    with pytest.raises(et.KernelArgumentError, match="argument 'A' is written into by the kernel, so it must be a NumPy array"):
        et.kernel(jacobi_1d)(3, [0.0] * 6, RNG.random(6))


def test_a_python_number_is_only_rebound() -> None:
    def f(n, A):
        n += 1
        A *= n
        return n

    same_as_numpy(f, 2, RNG.random(4))


def test_the_summary_names_the_written_arguments() -> None:
    summary = et.kernel(jacobi_1d).inspect(3, RNG.random(8), RNG.random(8)).summary()
    assert "writes into argument(s) A, B" in summary


def test_the_staged_path_updates_too() -> None:
    A, B = RNG.random(10), RNG.random(10)
    compiled = et.kernel(jacobi_1d).trace(3, A, B).optimize().lower().compile()
    want_a, want_b = A.copy(), B.copy()
    jacobi_1d(3, want_a, want_b)
    assert compiled(3, A, B) is None
    np.testing.assert_array_equal(A, want_a)
    np.testing.assert_array_equal(B, want_b)
