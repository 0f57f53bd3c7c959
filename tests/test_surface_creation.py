"""Arrays made inside a kernel (issue 25; egglog_tensor/tracing/creation.py): np.zeros, ones, full,
empty and their _like forms, arange, linspace, eye, identity, tri, triu, tril and diag, with
NumPy's values bit for bit and its dtypes; sizes from x.shape; fused into their readers (the
`iota` op: linalg.index, no buffer); np.zeros & co. traced only in the tracing thread's user code."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy import zeros as numpy_zeros  # bound before any trace: NumPy's own function
from strategies import check

import egglog_tensor as et
from egglog_tensor.tracing.creation import CREATORS

rng = np.random.default_rng(25)
X = rng.standard_normal((4, 6))
X32 = X.astype(np.float32)
I = rng.integers(-9, 9, (3, 4, 5))
NDARRAY = np.ndarray  # NumPy's class (np.ndarray is a stand-in while a kernel is traced)


def exact(fn, *args):
    """fn compiled equals fn run by NumPy: dtypes, shapes and every bit (signed zeros too)."""
    return check(fn, *args, rtol=0, atol=0)


# --- filled arrays -------------------------------------------------------------------------------------
def _filled(x):
    n, m = x.shape
    return (np.zeros((n, m)), np.ones(m, dtype=np.int32), np.full((2, n), 7), np.full(m, 2.5, np.float32),
            np.full((n, m), True), np.zeros(()), np.ones((0, m)), np.full(3, 2.7, dtype=int),
            np.full(n, -1e300, dtype=np.float32), np.zeros([n, np.int64(2)], np.bool_))


def _like(x):
    return (np.zeros_like(x), np.ones_like(x, dtype=np.int64), np.full_like(x, 3.5), np.full_like(x, -2.9, dtype=np.int32),
            np.zeros_like(x, shape=(2, 3)), np.ones_like(x[0], shape=5), np.full_like(x, np.nan))


@pytest.mark.filterwarnings("ignore:overflow encountered in cast:RuntimeWarning", "ignore:invalid value encountered in cast:RuntimeWarning")
@pytest.mark.parametrize("x", [X, X32, I[0].astype(np.int32)], ids=["float64", "float32", "int32"])
def test_filled_arrays_and_like_forms(x: np.ndarray) -> None:
    """Default dtypes (float64; full: the fill value's), NumPy's unsafe cast of the fill value
    (2.7 -> 2, -1e300 -> -inf in float32, nan -> int), 0-d and size-0 shapes."""
    exact(_filled, x[:, :5])
    exact(_like, x)


def test_empty_is_zeros() -> None:
    """np.empty's contents are unspecified (NumPy's are whatever memory held): here they are zeros."""
    got = et.kernel(lambda x: (np.empty(x.shape), np.empty_like(x, dtype=np.int32), np.empty((2, 0))))(X32)
    for g, want in zip(got, (np.zeros(X32.shape), np.zeros(X32.shape, np.int32), np.zeros((2, 0))), strict=True):
        assert g.dtype == want.dtype and g.shape == want.shape and not g.any()


def _ndarray_buffers(a, n):
    b = np.ndarray(a.shape, a.dtype)  # NPBench's vadv: a buffer the loop fills
    b[:] = a * (2 if isinstance(X, np.ndarray) else 0)  # (X: a NumPy array, as ever while tracing)
    c = np.ndarray(shape=(n, n), dtype=np.float32)
    c[0, :] = 1
    c[1:, :] = a[1:n, :n]
    d = np.ndarray((a.shape[0],))
    for i in range(a.shape[0]):
        d[i] = a[i].sum()
    return b, c, d


def test_ndarray_constructor_is_a_local_buffer() -> None:
    """np.ndarray(shape, dtype) called in a kernel is a buffer as np.empty's, which the code fills; an
    ndarray is still an np.ndarray (isinstance) while tracing, and np.ndarray is NumPy's own after."""
    exact(_ndarray_buffers, X, 3)
    assert np.ndarray is NDARRAY and type(np.zeros(2)) is np.ndarray


def test_ndarray_over_other_memory_is_refused() -> None:
    with pytest.raises(et.UnsupportedError, match=r"np.ndarray\(shape, buffer=/offset=/strides=\).*use np.empty"):
        et.kernel(lambda x: np.ndarray((2,), np.float64, buffer=bytearray(16)) + x)(np.ones(2))


def test_compiled_kernels_run_while_another_thread_traces_ndarray() -> None:
    """While a thread is inside a trace (np.ndarray is the stand-in), another thread's calls of a compiled
    kernel and of NumPy work as outside (arrays are recognised as NumPy's: dispatch and argument checks)."""
    inside, leave = threading.Event(), threading.Event()

    def waits(x):
        b = np.ndarray(x.shape)
        inside.set()
        assert leave.wait(60)
        b[:] = x + 1
        return b

    ready = et.kernel(lambda x: x * 3)
    np.testing.assert_array_equal(ready(X), X * 3)
    with ThreadPoolExecutor(1) as pool:
        traced = pool.submit(et.kernel(waits), X)
        assert inside.wait(60)
        try:
            assert np.ndarray is not NDARRAY  # the stand-in is installed now
            buffer = np.empty_like(X)
            assert ready(X, out=buffer) is buffer
            np.testing.assert_array_equal(buffer, X * 3)
            np.testing.assert_array_equal(ready(X32), X32 * 3)
            assert type(np.ones(2)) is NDARRAY
        finally:
            leave.set()
        np.testing.assert_array_equal(traced.result(), X + 1)


def test_filled_arrays_compute_with_traced_values() -> None:
    """A traced fill value (cast and broadcast as np.full does), arithmetic on filled arrays, and
    in-place updates of a kernel's own zeros (it owns them: they are no view)."""

    def f(x, v):
        b = np.zeros_like(x)
        b += x * 2.0
        return np.full(x.shape, v[0]), np.full((3,) + v.shape, v, dtype=np.int32), b + np.ones(x.shape[1]), np.full_like(x, v[1])

    exact(f, X, np.array([1.5, -2.25, 3.0, 4.0, 5.0, 6.0]))


# --- arange ---------------------------------------------------------------------------------------------------
ARANGES = [
    (5,), (2, 10, 3), (10, 2, -3), (0, 0), (5, 1), (7, 8), (0.0, 1.0, 0.1), (1, 2, 0.1), (-1.5, 2.25, 0.3), (0.1, 1.3, 0.07),
    (-0.0, 1, 0.25), (3, -1.5, -0.45), (1e6, 1e6 + 3, 0.3), (2.5,), (0, 1, 1 / 3), (1e-320, 1e-319, 1e-321),
    (np.int32(3), np.int32(40), np.int32(7)), (np.float32(0), np.float32(1), np.float32(0.1)), (True, 4), (0, 2**40, 2**37),
]
ARANGES_DTYPED = [
    (0, 5, 1, np.float32), (0.1, 1.3, 0.07, np.float32), (16777210, 16777230, 1, np.float32), (-3, 1e8, 4.1e6, np.float32),
    (0.5, 5, 1, int), (0.5, 5, 0.75, np.int32), (3, 50, 7, np.int32), (0, 2, 1, bool), (1, 0, -1, bool), (2, 9, 2, np.float64),
    (-2**31, 2**31 - 1, 2**30, np.int32), (0, 5, 1, np.int64), (-2.714, 11.581, 2.859, np.float32),
]


def _aranges(x):
    keywords = np.arange(stop=4), np.arange(5, step=2), np.arange(start=2, stop=9, step=3, dtype=np.float32)
    return tuple(np.arange(*a) for a in ARANGES) + tuple(np.arange(*a[:3], dtype=a[3]) for a in ARANGES_DTYPED) + keywords


def test_arange_values_and_dtypes_bit_for_bit() -> None:
    """NumPy's length rule ceil((stop - start) / step), its default dtype (int64 unless a bound is
    a float or beyond int64), its first two values as stored, start + i*delta after, in the dtype."""
    exact(_aranges, X)


def test_arange_float32_at_indices_beyond_2_to_the_24() -> None:
    """(float)i rounds there, as in NumPy's fill loop; a slice of an arange computes only its elements."""
    exact(lambda x: (np.arange(2**24 + 100, dtype=np.float32)[-50:], np.arange(0.5, 3e7, 1.5, dtype=np.float32)[-20:],
                     np.arange(-7, 2**25, 3, dtype=np.float32)[::1000000]), X)


NUMBERS = st.one_of(st.integers(-60, 60), st.floats(-60, 60).map(lambda v: round(v, 3)),
                    st.floats(-1e3, 1e3, width=32).map(np.float32))
DTYPES = st.sampled_from([None, np.float64, np.float32, np.int64, np.int32])


@st.composite
def arange_args(draw) -> tuple:
    """(start, stop, step, dtype) of an arange of at most ~50 elements."""
    start, step = draw(NUMBERS), draw(NUMBERS.filter(lambda v: abs(v) >= 0.05))
    stop = start + step * draw(st.floats(-2, 50).map(lambda v: round(v, 2)))
    return start, stop, step, draw(DTYPES)


@given(st.lists(arange_args(), min_size=1, max_size=8))
def test_arange_drawn_bit_for_bit(args: list) -> None:
    exact(lambda x: tuple(np.arange(*a) for a in args), X)


@pytest.mark.slow  # (a drawn sweep: minutes on a loaded 2-core machine; .ci/run runs it after the default run)
@given(st.lists(st.tuples(NUMBERS, NUMBERS, st.integers(0, 40), st.booleans(), DTYPES), min_size=1, max_size=8))
def test_linspace_drawn_bit_for_bit(args: list) -> None:
    exact(lambda x: tuple(np.linspace(a, b, n, endpoint=e, dtype=d) for a, b, n, e, d in args), X)


def test_arange_sizes_from_shapes_and_fusion() -> None:
    def f(x):
        n, m = x.shape
        return x + np.arange(m), x * np.arange(n).reshape(n, 1), np.arange(0.5, m) - x[0], np.arange(x.size).reshape(x.shape)

    exact(f, X)
    exact(f, X32)


def test_arange_fuses_into_its_reader() -> None:
    """`x + np.arange(n)` is one linalg.generic whose body computes the index (linalg.index): no
    buffer, no extra pass over memory."""
    text = et.kernel(lambda x: x + np.arange(x.shape[1])).trace(X).optimize().lower().module_text
    assert text.count("linalg.generic") == 1 and "linalg.index" in text
    assert text.count("tensor.empty") == 1 and "linalg.fill" not in text  # the output's only
    eye = et.kernel(lambda x: x @ x.T * np.eye(x.shape[0]) + np.tri(x.shape[0], k=-1)).trace(X).optimize().lower().module_text
    assert eye.count("linalg.generic") == 1 and eye.count("linalg.index") >= 2


@pytest.mark.parametrize("target", ["cpu", "cpu-openmp"])
def test_index_values_in_matmul_epilogues_row_fused_loops_and_thread_chunks(target: str) -> None:
    """The index of an element stays right where the loops are tiled: a matmul's fused epilogue, a
    row-fused softmax (fuse_rows), an op split into one chunk per thread."""
    a, b, x = rng.standard_normal((256, 256)), rng.standard_normal((256, 192)), rng.standard_normal((512, 300))

    def epilogue(a, b):
        return np.maximum(a @ b + np.arange(b.shape[1]), 0.0) * np.eye(a.shape[0], b.shape[1], 3)

    def softmax(x):
        e = np.exp(x - x.max(axis=1, keepdims=True))
        return e / e.sum(axis=1, keepdims=True) * np.arange(x.shape[1]) + np.tril(x, 5) + np.linspace(0, 1, x.shape[1])

    for fn, args in ((epilogue, (a, b)), (softmax, (x,))):
        got = et.kernel(fn, target=target, threads=2 if target == "cpu-openmp" else None)(*args)
        np.testing.assert_allclose(got, fn(*args), rtol=1e-12, atol=1e-12)


def test_float_sums_of_index_values_match_numpy() -> None:
    """A float sum over an iota (blocked summation: the iota is read from a buffer there) and an int sum."""
    x = rng.standard_normal(100_003)

    def f(x):
        n = x.shape[0]
        return np.sum(x * np.arange(n)), np.arange(n, dtype=np.float64).sum(), np.arange(n).sum(), (np.arange(n) * 0.5).mean()

    got = check(f, x, rtol=1e-12, atol=0)
    assert got[1] == 100_003 * 100_002 / 2 and got[2] == 100_003 * 100_002 // 2


# --- linspace -------------------------------------------------------------------------------------------------
LINSPACES = [
    ((0, 1), {}), ((0, 1, 7), {"endpoint": False}), ((-3.3, 10.1, 11), {}), ((0, 1, 1), {}), ((0, 1, 0), {}),
    ((2.5, -1.0, 6), {}), ((1, 10, 10), {"dtype": int}), ((-1, 1, 9), {"dtype": np.int32}), ((0.0, 1e-310, 5), {}),
    ((np.float32(0), 1, 9), {}), ((0, 1, 13), {"dtype": np.float32}), ((0.1, 0.7, 4), {"endpoint": False, "dtype": np.float32}),
    ((1e8, 1e8 + 1, 50), {}), ((5, 5, 4), {}), ((0, 3, 4), {"dtype": bool}), ((0, 1, 3), {"axis": -1}),
]


def _linspaces(x):
    return tuple(np.linspace(*a, **kw) for a, kw in LINSPACES) + np.linspace(0, 1, 5, retstep=True)


def test_linspace_values_and_dtypes_bit_for_bit() -> None:
    """NumPy's formula: i * step + start (i / div * delta when step underflows to 0), stop itself last."""
    exact(_linspaces, X)


def test_linspace_sizes_from_shapes() -> None:
    exact(lambda x: x + np.linspace(-1.0, 1.0, x.shape[1]), X32)


# --- eye, identity, tri, triu, tril, diag ------------------------------------------------------------------
def _matrices(x):
    n, m = x.shape
    return (np.eye(n), np.eye(n, m, 1), np.eye(m, n, k=-2, dtype=np.int32), np.eye(3, k=7), np.eye(3, k=-9), np.identity(n),
            np.identity(3, dtype=bool), np.tri(n, m, 2, dtype=int), np.tri(n, k=-1), np.tri(2, 5, 10**12, np.float32), np.eye(0),
            x @ np.eye(m), np.eye(n) @ x @ np.eye(m, dtype=np.float32).T)


def test_eye_identity_tri() -> None:
    exact(_matrices, X)


def _triangles(x, b):
    return (np.triu(x), np.tril(x), np.triu(x, 1), np.tril(x, -2), np.triu(x, 10), np.tril(x, -10), np.triu(b), np.tril(b, 1),
            np.triu(x[0]), np.tril(x[0], -1))


@pytest.mark.parametrize("x", [X, X32, I], ids=["2-D float64", "2-D float32", "3-D int64"])
def test_triu_tril_on_matrices_batches_and_vectors(x: np.ndarray) -> None:
    exact(_triangles, x, x > 0)


@pytest.mark.slow  # (a drawn sweep: minutes on a loaded 2-core machine; .ci/run runs it after the default run)
@settings(max_examples=6)  # a compilation each
@given(st.lists(st.integers(0, 5), min_size=1, max_size=3), st.integers(-7, 7), st.integers(0, 5), st.sampled_from([np.float32, np.int64, np.bool_]))
def test_triangles_and_diagonals_drawn(shape: list, k: int, n: int, dtype) -> None:
    x = rng.standard_normal(shape).astype(dtype)

    def f(x):
        out = np.triu(x, k), np.tril(x, k), np.eye(n, x.shape[-1], k, dtype), np.tri(x.shape[-1], n, k, dtype)
        return out + ((np.diag(x, k),) if x.ndim <= 2 else ())

    exact(f, x)


def _diagonals(v, m):
    return np.diag(v), np.diag(v, 2), np.diag(v, -3), np.diag(m), np.diag(m, 1), np.diag(m, -2), np.diag(np.diag(m)), np.diag(v > 0, 1)


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int32])
def test_diag_both_ways(dtype) -> None:
    exact(_diagonals, rng.standard_normal(5).astype(dtype), X.astype(dtype))


# --- errors ---------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("fn", "error", "message"),
    [
        (lambda x, n: np.zeros(-3), et.TracingError, "negative dimensions are not allowed"),
        (lambda x, n: np.zeros(3, dtype=np.complex128), et.UnsupportedError, "dtype complex128 is not supported"),
        (lambda x, n: np.arange(0, 5, 0), et.TracingError, "step is zero"),
        (lambda x, n: np.arange(0, np.nan), et.TracingError, "cannot compute length"),
        (lambda x, n: np.arange(5, dtype=bool), et.TracingError, "no fill-function for data-type bool"),
        (lambda x, n: np.arange(step=2), et.TracingError, "requires stop to be specified"),
        (lambda x, n: np.linspace(x[0], 1.0, 3, axis=2), et.TracingError, "axis 2 is out of bounds"),
        (lambda x, n: np.linspace(0, 1, -2), et.TracingError, "must be non-negative"),
        (lambda x, n: np.diag(x.reshape(1, 2, 3)), et.TracingError, "input must be 1- or 2-d"),
        (lambda x, n: np.full(3, [1, 2, 3]), et.UnsupportedError, "list or NumPy array is not supported"),
        (lambda x, n: np.full((2, 2), x), et.TracingError, r"fill value of shape \(6,\) does not broadcast to \(2, 2\)"),
        (lambda x, n: np.full(3, 2**40, dtype=np.int32), et.TracingError, "out of bounds for int32"),
        (lambda x, n: np.eye(3.5), et.TracingError, "float 3.5 is not an integer size"),
    ],
)
def test_bad_creation_arguments_raise_clear_errors(fn, error, message: str) -> None:
    with pytest.raises(error, match=message) as info:
        et.kernel(fn)(np.ones(6), 3)
    assert "test_surface_creation.py" in str(info.value)


# --- interception: the numpy module while tracing ----------------------------------------------------------------
ORIGINALS = {name: getattr(np, name) for name in CREATORS}


def test_numpy_functions_are_numpy_s_own_outside_traces() -> None:
    exact(lambda x: x + np.zeros(x.shape), X)
    assert all(getattr(np, name) is fn for name, fn in ORIGINALS.items())
    assert type(np.zeros(3)) is np.ndarray


def test_like_reaches_the_tracer_from_a_function_bound_before_tracing() -> None:
    exact(lambda x: x + numpy_zeros(x.shape, like=x) + np.arange(x.shape[1], like=x), X)


def test_kernels_traced_in_threads_while_other_threads_use_numpy() -> None:
    """8 kernels first compiled at once in threads (each traces np.zeros/arange/eye), while other
    threads call the same NumPy functions and get plain ndarrays; afterwards NumPy is restored."""
    stop = threading.Event()
    seen: list[object] = []

    def plain_numpy() -> None:
        while not stop.is_set():
            seen.extend(type(a) for a in (np.zeros(3), np.arange(4), np.eye(2), np.full(2, 1.0), np.linspace(0, 1, 3)))

    def compile_and_run(n: int) -> np.ndarray:
        return et.kernel(lambda x: x * np.arange(x.shape[0]) + np.eye(x.shape[0])[0] + np.zeros(x.shape[0]) + n)(np.ones(n))

    workers = [threading.Thread(target=plain_numpy) for _ in range(2)]
    for w in workers:
        w.start()
    try:
        with ThreadPoolExecutor(8) as pool:
            results = list(pool.map(compile_and_run, range(2, 10)))
    finally:
        stop.set()
        for w in workers:
            w.join()
    for n, got in zip(range(2, 10), results, strict=True):
        np.testing.assert_array_equal(got, np.arange(n) + np.eye(n)[0] + n)
    assert seen and set(seen) == {np.ndarray}
    assert all(getattr(np, name) is fn for name, fn in ORIGINALS.items())
