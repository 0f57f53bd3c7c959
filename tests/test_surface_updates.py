"""In-place updates inside a kernel (issue 25): slice, index and mask stores, `+=` through views, and
NumPy's aliasing (views see writes into their base; writes into arguments: tests/test_surface_argument_writes.py)."""

from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import egglog_tensor as et
from strategies import arrays, dtypes, layouts, shapes
from strategies import check as check_drawn

RNG = np.random.default_rng(25)
A = RNG.standard_normal((7, 9))
A32 = A.astype(np.float32)
I = RNG.integers(-50, 50, (7, 9))


def check(fn, *args) -> None:
    """fn compiled gives exactly NumPy's result (and dtype), and leaves its arguments unchanged."""
    before = [np.copy(a) for a in args]
    got, want = et.kernel(fn)(*args), fn(*[np.copy(a) if isinstance(a, np.ndarray) else a for a in args])
    for g, w in zip(got if isinstance(got, tuple) else (got,), want if isinstance(want, tuple) else (want,), strict=True):
        assert g.dtype == w.dtype
        np.testing.assert_array_equal(g, w)
    for a, b in zip(args, before, strict=True):
        np.testing.assert_array_equal(a, b)


def stencil(a):
    b = a.copy()
    b[1:-1, 1:-1] = 0.25 * (a[:-2, 1:-1] + a[2:, 1:-1] + a[1:-1, :-2] + a[1:-1, 2:])
    return b


def columns_rows_and_steps(a):
    b = a * 1.0
    b[:, 0] = 0
    b[-1] = a[0]
    b[::2, ::3] = -1
    b[5:1:-2, 1] = 7.5
    b[...] += 1
    return b


def scalar_index_updates(a):
    b = np.copy(a)
    b[2, 3] += 10
    b[0, 0] = b[1, 1] * 2
    b[4] -= a[4].sum()
    b[1] *= 3
    return b


def broadcast_values(a):
    b = a + 0.0
    b[1:3] = a[0]  # a row broadcast to two rows
    b[:, 2:4] = a[:, :1]  # a column broadcast
    b[5] = b[5:6] * 0.5  # a (1, 9) value into a row: its leading unit dim dropped
    return b


@pytest.mark.parametrize("fn", [stencil, columns_rows_and_steps, scalar_index_updates, broadcast_values])
@pytest.mark.parametrize("a", [A, A32], ids=["float64", "float32"])
def test_slice_stores_match_numpy(fn, a) -> None:
    check(fn, a)


def test_jacobi_time_loop() -> None:
    """NPBench-style jacobi_2d: two buffers updated in place in a Python loop."""

    def jacobi(a):
        a, b = a.copy(), a.copy()
        for _ in range(4):
            b[1:-1, 1:-1] = 0.2 * (a[1:-1, 1:-1] + a[1:-1, :-2] + a[1:-1, 2:] + a[2:, 1:-1] + a[:-2, 1:-1])
            a[1:-1, 1:-1] = 0.2 * (b[1:-1, 1:-1] + b[1:-1, :-2] + b[1:-1, 2:] + b[2:, 1:-1] + b[:-2, 1:-1])
        return a

    m = RNG.standard_normal((16, 16))
    np.testing.assert_allclose(et.kernel(jacobi)(m), jacobi(m.copy()), rtol=1e-14, atol=1e-14)


def test_integer_and_bool_stores_cast_as_numpy() -> None:
    def f(i, a):
        b = i.copy()
        b[0] = 2.9  # a float into int64: truncated, as NumPy assigns
        b[1, :] = a[1, :]  # a float array into int64: cast
        b[2] += 3
        c = i > 0
        c[0] = 5  # a nonzero int into bool: True
        c[1] = 0.0
        return b, c

    check(f, I, A)


def test_python_int_out_of_range_is_refused_as_numpy() -> None:
    def f(i):
        b = i.astype(np.int32)
        b[0] = 2**40
        return b

    with pytest.raises(OverflowError):
        f(I)
    with pytest.raises(et.OutOfBoundsError, match="out of bounds for int32"):
        et.kernel(f)(I)


def test_mask_stores() -> None:
    def f(a, m):
        b = a.copy()
        b[b < 0] = 0  # ReLU in place
        b[m] = -1.0
        c = a.copy()
        c[a[:, 0] > 0] = a[0]  # mask of the leading dim, a row broadcast to every selected row
        c[np.isnan(c)] = 1
        return b, c

    m = RNG.random((7, 9)) < 0.3
    check(f, A, m)
    check(f, A32, m)


def test_mask_store_needing_a_runtime_count_is_refused() -> None:
    def f(a):
        b = a.copy()
        b[a > 0] = a[0:1, :3].ravel()
        return b

    with pytest.raises(et.UnsupportedError, match=re.escape("use np.where(mask, values, x)")):
        et.kernel(f)(A)


def test_mask_of_the_wrong_shape_is_refused() -> None:
    def f(a):
        b = a.copy()
        b[a[:3] > 0] = 0
        return b

    with pytest.raises(et.TracingError, match="boolean index did not match indexed array along axis 0"):
        et.kernel(f)(A)


def test_value_that_does_not_broadcast_is_refused() -> None:
    def f(a):
        b = a.copy()
        b[0] = a[:, 0]
        return b

    with pytest.raises(et.TracingError, match=re.escape("could not broadcast input array from shape (7,) into shape (9,)")):
        et.kernel(f)(A)


def test_views_see_writes_into_their_base() -> None:
    """NumPy's aliasing, both ways: a view taken before a write reads the written values, a write
    through a view (or a view of a view) changes the base."""

    def f(a):
        b = a.copy()
        row, col, t = b[2], b[:, 1], b.T
        b[2, :] = 5.0  # the row view and the transpose see it
        inner = b[1:-1]
        inner[0] = -3.0  # b[1] changes
        inner2 = inner[::2, 1:]
        inner2 += 100.0  # b[1::2, 1:] up to b[-2] changes
        return row + 0, col + 0, t * 1.0, b

    check(f, A)


def test_int_index_read_is_a_copy() -> None:
    """`b[i, j]` is a NumPy scalar, a copy: later writes into b do not change it."""

    def f(a):
        b = a.copy()
        s = b[1, 2]
        b[1, 2] = 0.0
        v = b[1, 2, ...]  # a 0-d view: it follows b
        b[1, 2] = 9.0
        return s * 1.0, v * 1.0, b

    check(f, A)


def test_in_place_ufunc_same_kind_cast() -> None:
    def ok(a):
        b = a.astype(np.float32)
        b += a  # float64 into float32: same kind
        np.multiply(b, 2, out=b)
        return b

    check(ok, A)

    def bad(i):
        b = i.copy()
        b += 1.5
        return b

    with pytest.raises(et.TracingError, match="Cannot cast ufunc output from float64 to int64 with casting rule 'same_kind'"):
        et.kernel(bad)(I)


@pytest.mark.parametrize("write", [
    lambda a: a.__setitem__(0, 1.0),
    lambda a: a[1:].__setitem__((0, 0), 1.0),
    lambda a: a[:, ::2].__iadd__(1.0),
])  # fmt: skip
def test_writing_into_an_argument_updates_the_caller_s_array(write) -> None:
    def f(a):
        write(a)
        return a * 1.0

    got, want = A.copy(), A.copy()
    np.testing.assert_array_equal(et.kernel(f)(got), f(want))
    np.testing.assert_array_equal(got, want)


def test_mask_store_with_other_indices_is_refused() -> None:
    """A traced mask beside an index array: its nonzero() count is dynamic (constant masks beside index arrays, and
    traced ones beside slices and ints, work: tests/test_surface_everyday3.py)."""
    def f(a):
        b = a.copy()
        b[a[:, 0] > 0, [1, 2]] = 1.0
        return b

    with pytest.raises(et.UnsupportedError, match=re.escape("a traced boolean mask beside index arrays or another mask")):
        et.kernel(f)(A)


def test_slice_store_is_in_place() -> None:
    """The stencil's update writes into the output buffer: no temporary (checked after bufferization)."""
    bufferized = et.kernel(stencil).inspect(A).stage("bufferize")
    assert "memref.alloc" not in bufferized
    assert "memref.copy" not in bufferized


def test_empty_slice_store_is_a_no_op() -> None:
    def f(a):
        b = a.copy()
        b[3:3] = 1.0
        b[:, 9:] += a[:, :0]
        return b

    check(f, A)


def test_values_read_before_a_write_keep_their_value() -> None:
    """A result computed from B before B is written is not a view: it keeps B's old values; a
    Python number argument's `n += 2` rebinds n (Python numbers are immutable)."""

    def f(a, n):
        b = a * 1.0
        c = b + 0
        b[0] = 1
        n += 2
        b[1] += n
        return b, c

    check(f, A, 3)


def test_a_copy_of_an_output_written_leaves_the_output_alone() -> None:
    """Fuzz seed 3105: `v6 = v5.copy(); v6[::2, 0] = ...` returning v6 and v5, in a kernel with a matmul (whose
    tile stage canonicalizes: an identity linalg.generic copy folds away) wrote v6's values into v5 too."""
    x = np.array([[-0.0, -5.0, -9.0, -10.0, 6.0], [8.0, 2.0, 4.0, -3.0, 8.5]], np.float32)  # (exact products and sums)

    def f(x0):
        v5 = x0[np.array([1, 0, 0, 0])]
        v6 = v5.copy()
        v6[::2, 0] = np.max(x0, axis=1)
        v7 = v6.copy()
        v7[1] = 3
        return v7, v6, v5, x0 @ x0.T

    check(f, x)


@st.composite
def boxes(draw: st.DrawFn, shape: tuple[int, ...]) -> tuple[slice, ...]:
    """A basic index of `shape`: per dim a slice with any start, stop and (nonzero) step."""
    bound = st.none() | st.integers(-7, 7)
    return tuple(slice(draw(bound), draw(bound), draw(st.none() | st.integers(-3, 3).filter(bool))) for _ in shape)


@pytest.mark.slow
@settings(max_examples=20, deadline=None)
@given(st.data(), shapes(min_dims=1, max_dims=3, max_side=6), dtypes(), layouts)
def test_drawn_slice_and_mask_stores_match_numpy(data, shape, dtype, layout) -> None:
    a = data.draw(arrays(dtype, shape, layout=layout))
    v = data.draw(arrays(dtype, shape))
    m = data.draw(arrays("bool", shape))
    key = data.draw(boxes(shape))
    scalar = data.draw(st.sampled_from([0, 1, -2, 2.5, True, np.nan]))

    def f(a, v, m):
        b = a.copy()
        b[key] = v[key]
        b[key] += v[key]
        b[m] = scalar if b.dtype.kind == "f" or not isinstance(scalar, float) else 3
        return b

    check_drawn(f, a, v, m)


def reductions_into_out(x):
    y = x.copy()
    np.cumsum(y, axis=1, out=y)  # into its own input, as NumPy's
    m = np.zeros(3, np.int64)
    np.sum(x, axis=1, out=m)  # cast unsafe into out, as NumPy's reductions
    o = np.empty(4)
    x.max(axis=0, out=o)
    s = np.zeros(())
    r = np.mean(x, out=s)
    k = np.zeros(3, np.int32)
    np.argmax(x, axis=1, out=k)
    q = np.zeros((2, 4))
    np.quantile(x, [0.25, 0.75], axis=0, out=q)
    return y, m, o, s, r, k, q, np.round(x, 1, out=np.empty_like(x))


def test_out_of_reductions_and_scans_matches_numpy() -> None:
    """out= of reductions and scans (found by the surface28 sweep: it raised UnsupportedError): the result stored into
    out (cast as NumPy's, unsafe) and out returned; out of another shape refused."""
    x = np.array([[1.5, -2.0, 3.25, 0.5], [4.0, 4.0, -1.0, 2.5], [0.0, -3.5, 7.0, 1.0]])
    check(reductions_into_out, x)

    def wrong(x):
        o = np.zeros(2)
        np.sum(x, axis=1, out=o)
        return o

    with pytest.raises(et.TracingError, match=r"np.sum: the out array's shape \(2,\) is not the result's \(3,\)"):
        et.kernel(wrong)(x)
