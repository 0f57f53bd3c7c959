"""Shape functions and gathers against NumPy (issue 25): flip/flipud/fliplr, roll, pad, tile, repeat,
moveaxis/rollaxis, split/array_split, the stacks (tracing/rearrange.py); np.take,
take_along_axis and integer-array indexing with constant and traced indices, the run-time index
check, and the clear errors of boolean-mask reads (tracing/indexing.py)."""

from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import check, kernel_of, make_array, sweep, with_layout

import egglog_tensor as et

# --- rearranging ----------------------------------------------------------------------------------

REARRANGE = {
    "flip all": lambda x: np.flip(x),
    "flip axis 1, fused": lambda x: np.flip(x, 1) * 2 + x,
    "flip axes tuple": lambda x: np.flip(x, (0, -1)),
    "flipud": lambda x: np.flipud(x) - 1,
    "fliplr": lambda x: np.fliplr(x),
    "roll flat": lambda x: np.roll(x, 7),
    "roll negative axis": lambda x: np.roll(x, -1, axis=-1),
    "roll tuple": lambda x: np.roll(x, (1, 2, -3), axis=(0, 1, 1)),
    "roll whole turns": lambda x: np.roll(x, 8, axis=0) + np.roll(x, 0),
    "pad constant": lambda x: np.pad(x, 2),
    "pad constant per axis": lambda x: np.pad(x, ((1, 2), (3, 0)), constant_values=((-1, 2), (3, 4))),
    "pad constant pair": lambda x: np.pad(x, (0, 2), constant_values=(-2.5, 7)),
    "pad edge": lambda x: np.pad(x, 3, mode="edge"),
    "pad reflect beyond size": lambda x: np.pad(x, ((5, 1), (11, 2)), mode="reflect"),
    "pad symmetric beyond size": lambda x: np.pad(x, 7, mode="symmetric"),
    "pad wrap beyond size": lambda x: np.pad(x, (2, 9), mode="wrap"),
    "tile int": lambda x: np.tile(x, 3),
    "tile more dims": lambda x: np.tile(x, (2, 1, 2)),
    "tile zero": lambda x: np.tile(x, (0, 2)),
    "repeat flat": lambda x: np.repeat(x, 3),
    "repeat axis": lambda x: np.repeat(x, 2, axis=-1),
    "repeat per element": lambda x: np.repeat(x, [1, 0, 2, 3], axis=0),
    "repeat one-element list": lambda x: np.repeat(x, [2], axis=1),
    "moveaxis": lambda x: np.moveaxis(x, 0, -1),
    "moveaxis tuple": lambda x: np.moveaxis(x[None], (0, 1), (2, 0)),
    "rollaxis": lambda x: (np.rollaxis(x[None], 2), np.rollaxis(x[None], 0, 3), np.rollaxis(x, -1, 0)),
    "split sections": lambda x: tuple(np.split(x, 3, axis=1)),
    "split indices": lambda x: tuple(np.split(x, [1, 3, 10])),
    "array_split uneven": lambda x: tuple(np.array_split(x, 4, axis=1)),
    "array_split more than size": lambda x: tuple(np.array_split(x, 6, axis=0)),
    "hstack": lambda x: np.hstack([x, x[:, :2]]),
    "hstack 1-d": lambda x: (np.hstack((x[0], x[1], 2.5)), np.column_stack([x[0], x[1]])),
    "vstack": lambda x: np.vstack([x, x[0], x[1:3]]),
    "dstack": lambda x: np.dstack([x, x * 2]),
    "dstack 1-d": lambda x: np.dstack([x[0], x[1]]),
    "column_stack": lambda x: np.column_stack([x[:, 0], x, x[:, 1]]),
    "diag": lambda x: np.diag(x) + np.diag(x, 1).sum() + np.diag(x, -2).sum(),
    "diag beyond": lambda x: np.diag(x, 9),
}


@pytest.mark.parametrize("dtype", ["float32", *(pytest.param(d, marks=pytest.mark.slow) for d in ("float64", "int64"))])  # (a sweep)
@pytest.mark.parametrize("name", list(REARRANGE))
def test_rearrange_matches_numpy(name: str, dtype: str) -> None:
    check(REARRANGE[name], make_array(1, dtype, (4, 6)))


@pytest.mark.parametrize("layout", ["F", "strided", "negative"])
@pytest.mark.parametrize("name", ["flip axis 1, fused", "roll tuple", "pad reflect beyond size", "tile more dims", "repeat per element"])
def test_rearrange_of_arguments_in_every_layout(name: str, layout: str) -> None:
    check(REARRANGE[name], with_layout(make_array(2, "float64", (4, 6)), layout))


@settings(max_examples=12, deadline=None, derandomize=True)
@given(st.tuples(st.integers(0, 4), st.integers(1, 5)), st.integers(-7, 7), st.integers(0, 6),
       st.sampled_from(["constant", "edge", "reflect", "symmetric", "wrap"]))
@pytest.mark.slow  # (a drawn sweep: minutes on a loaded 2-core machine; .ci/run runs it after the default run)
def test_roll_flip_pad_drawn(shape: tuple[int, int], shift: int, width: int, mode: str) -> None:
    x = make_array(3, "float32", shape)
    if shape[0] == 0 and mode not in ("constant",):
        shape, x = (1, shape[1]), make_array(3, "float32", (1, shape[1]))
    check(lambda a: (np.roll(a, shift, axis=1), np.flip(np.pad(a, width, mode=mode), 0)), x)


def test_stacks_promote_dtypes_as_numpy() -> None:
    i, f = make_array(4, "int32", (3, 2)), make_array(5, "float32", (3, 2))
    check(lambda a, b: (np.hstack([a, b]), np.vstack([b, a]), np.dstack([a, a]), np.column_stack([a, b])), i, f)


def test_pad_constant_is_cast_like_numpy() -> None:
    """np.pad stores the constant into the array's dtype: 1.7 pads an int array with 1; NaN pads floats."""
    check(lambda a: np.pad(a, 2, constant_values=1.7), make_array(6, "int64", (3, 3)))
    check(lambda a: np.pad(a, ((1, 0), (0, 2)), constant_values=np.nan), make_array(6, "float32", (3, 3)))
    with pytest.raises(et.TracingError, match="cannot be stored in int64"):
        et.kernel(lambda a: np.pad(a, 1, constant_values=np.nan))(make_array(6, "int64", (3, 3)))


def test_views_fuse_into_one_loop() -> None:
    """moveaxis, slices and a constant take with a regular pattern are index maps: one linalg.generic."""
    k = et.kernel(lambda x: np.moveaxis(x, 0, 1)[:, :2] * 2.0 + np.take(x, [0, 2], axis=1))
    x = make_array(7, "float64", (4, 4))
    np.testing.assert_array_equal(k(x), np.moveaxis(x, 0, 1)[:, :2] * 2.0 + np.take(x, [0, 2], axis=1))
    assert k.compilations[0].stage("linalg").count("linalg.generic") == 1


@pytest.mark.parametrize(
    ("fn", "error", "pattern"),
    [
        (lambda x: np.flipud(x.sum()), et.TracingError, "Input must be >= 1-d."),
        (lambda x: np.fliplr(x[0]), et.TracingError, "Input must be >= 2-d."),
        (lambda x: np.flip(x, 2), et.TracingError, "axis 2 is out of bounds"),
        (lambda x: np.split(x, 5, axis=1), et.TracingError, "array split does not result in an equal division"),
        (lambda x: np.pad(x, 2, mode="empty"), et.UnsupportedError, "np.pad mode 'empty' is not supported"),
        (lambda x: np.pad(x, 2, mode="reflect", end_values=1), et.TracingError, "unsupported keyword arguments for mode 'reflect'"),
        (lambda x: np.pad(x, -1), et.TracingError, "negative"),
        (lambda x: np.pad(x, 1.5), et.TracingError, "`pad_width` must be integers"),
        (lambda x: np.pad(x[:0], 1, mode="edge"), et.TracingError, "can't extend empty axis"),
        (lambda x: np.repeat(x, [1, 2], axis=0), et.TracingError, "could not be broadcast"),
        (lambda x: np.moveaxis(x, (0, 1), 0), et.TracingError, "same number of elements"),
        (lambda x: np.hstack(x), et.TracingError, "needs a sequence of arrays"),
    ],
)
def test_rearrange_errors(fn, error: type, pattern: str) -> None:
    with pytest.raises(error, match=re.escape(pattern)):
        et.kernel(fn)(np.ones((4, 6)))


# --- gathers --------------------------------------------------------------------------------------

TABLE = make_array(8, "float32", (8, 5))
IDS = np.array([3, 0, -1, 7, 3, -8], dtype=np.int64)
PERMUTATION = np.random.default_rng(0).permutation(300)  # a constant index array too big to embed

TRACED = {
    "take axis 0": lambda e, i: np.take(e, i, axis=0),
    "take flat": lambda e, i: np.take(e, i) + 1,
    "take axis -1, 2-D indices": lambda e, i: np.take(e, i[:4].reshape(2, 2) % 5, axis=-1),
    "take wrap": lambda e, i: np.take(e, i * 3, axis=1, mode="wrap"),
    "take clip": lambda e, i: np.take(e, i * 20, axis=0, mode="clip"),
    "method-free A[idx]": lambda e, i: e[i] * 2,
    "A[:, idx]": lambda e, i: e[:, i % 5],
    "A[i, j]": lambda e, i: e[i, i % 5],
    "A[idx, slice]": lambda e, i: e[i, 1:4],
    "A[None, ..., idx]": lambda e, i: e[None, ..., i[:3] % 5],
    "outer indices": lambda e, i: e[i[:, None], i[None, :3] % 5],
    "0-d index": lambda e, i: e[i[2]],
    "int and array": lambda e, i: e[2, i % 5] + e[i, 4],
    "index of a computed table": lambda e, i: np.exp(e)[i].sum(axis=1),
    "computed indices": lambda e, i: e[(i * 3 + 1) % 8],
    "argmax result": lambda e, i: (e[np.argmax(e, axis=0)], np.take(e[0], np.argmax(e, axis=1))),
    "take_along_axis of argmax": lambda e, i: np.take_along_axis(e, np.argmax(e, axis=1, keepdims=True), axis=1),
    "take_along_axis": lambda e, i: np.take_along_axis(e, np.broadcast_to(i[:5] % 5, (8, 5)), axis=1),
    "take_along_axis broadcast": lambda e, i: np.take_along_axis(e, (i[:, None] % 8)[:3], axis=0),
}


@pytest.mark.parametrize("index_dtype", sweep(["int64", "int32"], ["int64"]))
@pytest.mark.parametrize("name", list(TRACED))
def test_traced_indices_match_numpy(name: str, index_dtype: str) -> None:
    check(TRACED[name], TABLE, IDS.astype(index_dtype))


@pytest.mark.parametrize("dtype", ["float64", "int32", "bool"])
def test_gather_of_every_dtype(dtype: str) -> None:
    check(lambda e, i: (e[i], np.take(e, i, axis=1)), make_array(9, dtype, (5, 5)), np.array([4, -5, 2]))


def test_advanced_indices_separated_by_a_slice_go_first() -> None:
    """NumPy: index arrays separated by a slice put their broadcast dims first."""
    x = make_array(10, "float64", (3, 4, 5))
    i, j = np.array([[0, 2], [1, 1]]), np.array([3, 0])
    check(lambda a, p, q: (a[p, :, q], a[p, q], a[:, p, q], a[1, :, q]), x, i, j)


CONSTANT = {
    "list": lambda e: e[[1, 2, 3]],
    "list pattern": lambda e: e[[0, 2, 4, 6, 7, 7, 7]],
    "negative list": lambda e: e[[-1, -8, 3]],
    "ndarray 2-D": lambda e: np.take(e, np.array([[0, 2], [4, 6]]), axis=0),
    "pairs": lambda e: e[[1, 5, 2], [0, 4, -1]],
    "column list": lambda e: e[:, [4, 0]] + e[:, np.array([1, 1])],
    "take wrap": lambda e: np.take(e, [9, -11], axis=0, mode="wrap"),
    "take clip": lambda e: np.take(e, [[9], [-11]], mode="clip"),
    "along axis": lambda e: np.take_along_axis(e, np.array([[4, 0, 1]]), axis=1),
    "empty": lambda e: e[np.zeros(0, np.int64)],
    "range": lambda e: e[range(3)] + e[range(7, 4, -1)],  # picoGPT's positions: wpe[range(len(inputs))]
    "range with slice": lambda e: e[range(1, 8, 3), 2:] + e[:, range(2)].sum(),
}


@pytest.mark.parametrize("name", list(CONSTANT))
def test_constant_indices_match_numpy(name: str) -> None:
    check(CONSTANT[name], TABLE)


def test_embedding_lookup_at_size() -> None:
    """A 50000 x 64 float32 table read at 4096 token ids, as a transformer's first step does."""
    table = make_array(11, "float32", (50000, 64))
    ids = np.random.default_rng(0).integers(-50000, 50000, 4096)
    check(lambda t, i: t[i] * np.float32(8.0), table, ids)


@pytest.mark.parametrize("bad", [8, -9, 100])
def test_out_of_range_traced_index_raises_after_the_call(bad: int) -> None:
    k = kernel_of(TRACED["A[idx, slice]"])
    ids = IDS.copy()
    ids[3] = bad
    with pytest.raises(et.IndexOutOfBoundsError, match=r"index out of bounds for axis 0 with size 8 \(indices computed from argument\(s\) i\)"):
        k(TABLE, ids)
    with pytest.raises(IndexError):  # an IndexError, as NumPy raises
        k(TABLE, ids, out=np.empty((6, 3), np.float32))
    out = np.empty((6, 3), np.float32)
    assert k(TABLE, IDS, out=out) is out  # the kernel still works on valid indices
    np.testing.assert_array_equal(out, TABLE[IDS, 1:4])


def test_out_of_range_check_of_a_multi_output_kernel() -> None:
    k = et.kernel(lambda e, i, j: (e[i], np.take(e, j, axis=1)))
    np.testing.assert_array_equal(k(TABLE, IDS, IDS % 5)[1], np.take(TABLE, IDS % 5, axis=1))
    with pytest.raises(et.IndexOutOfBoundsError, match=r"axis 1 with size 5 \(indices computed from argument\(s\) j\)"):
        k(TABLE, IDS, IDS)


@pytest.mark.parametrize(
    ("fn", "error", "pattern"),
    [
        (lambda e, i: e[[8]], et.IndexOutOfBoundsError, "index 8 is out of bounds for axis 0 with size 8"),
        (lambda e, i: np.take(e, [-6], axis=1), et.IndexOutOfBoundsError, "index -6 is out of bounds for axis 1 with size 5"),
        (lambda e, i: e[:0][i], et.IndexOutOfBoundsError, "cannot do a non-empty take from an empty axis"),
        (lambda e, i: e[i.astype(np.float64)], et.TracingError, "arrays used as indices must be of integer (or boolean) type"),
        (lambda e, i: e[i[:2], i[:3]], et.TracingError, "shape mismatch"),
        (lambda e, i: e[e > 0], et.UnsupportedError, "boolean-mask indexing (x[mask]) is not supported: its result shape depends on the mask's values"),
        (lambda e, i: e[:, i[:5] > 0], et.UnsupportedError, "np.where(mask, x, fill)"),
        (lambda e, i: e[:, i > 0], et.TracingError, "boolean index did not match indexed array along axis 1"),
        (lambda e, i: np.where(e > 0), et.UnsupportedError, "its result shape depends on cond's values"),
        (lambda e, i: np.argwhere(e > 1), et.UnsupportedError, "np.argwhere is not supported: its result shape depends on the values"),
        (lambda e, i: np.nonzero(e), et.UnsupportedError, "np.nonzero is not supported: its result shape depends on the values"),
        (lambda e, i: np.unique(i), et.UnsupportedError, "np.unique is not supported: its result shape depends on the values"),
        (lambda e, i: np.extract(e > 0, e), et.UnsupportedError, "np.extract is not supported"),
        (lambda e, i: np.take(e, i, mode="bogus"), et.TracingError, "clipmode not understood"),
        (lambda e, i: e[PERMUTATION % 8], et.UnsupportedError, "pass them as a kernel argument"),
    ],
)
def test_gather_errors(fn, error: type, pattern: str) -> None:
    with pytest.raises(error, match=re.escape(pattern)):
        et.kernel(fn)(TABLE, IDS)


_ENTRIES = st.sampled_from(["all", "step", "int", "row", "column", "const", "none"])


@settings(max_examples=15, deadline=None, derandomize=True)
@given(st.lists(_ENTRIES, min_size=1, max_size=4).filter(lambda k: sum(e != "none" for e in k) <= 3 and
                                                         any(e in ("row", "column", "const") for e in k)))
@pytest.mark.slow  # (a drawn sweep: minutes on a loaded 2-core machine; .ci/run runs it after the default run)
def test_advanced_index_shapes_drawn(entries: list[str]) -> None:
    """Keys mixing slices, ints, None, traced index arrays of shapes (2,) and (3, 1) and a constant list (with traced ones too)."""
    x = make_array(12, "float64", (3, 4, 5))
    row, column = np.array([2, -1]), np.array([[0], [-2], [1]])

    def fn(a, r, c):
        key = {"all": slice(None), "step": slice(None, None, -2), "int": -1, "row": r, "column": c, "const": [1, 0], "none": None}
        return a[tuple(key[e] for e in entries)]

    check(fn, x, row, column)


def test_index_check_survives_the_cache() -> None:
    """A kernel loaded from the on-disk cache still checks its traced indices (conftest: a fresh cache dir)."""
    def lookup(e, i):
        return e[i] + 1

    cold, warm = et.kernel(lookup), et.kernel(lookup)
    np.testing.assert_array_equal(cold(TABLE, IDS), TABLE[IDS] + 1)
    np.testing.assert_array_equal(warm(TABLE, IDS), TABLE[IDS] + 1)
    assert warm.inspect(TABLE, IDS).cache == "hit"
    with pytest.raises(et.IndexOutOfBoundsError, match="argument\\(s\\) i"):
        warm(TABLE, IDS + 8)


BIG = {
    "flip then add": lambda x: np.flip(x, 0) + x[::-1, ::-1],
    "reversed rows in a row-fused softmax": lambda x: np.exp(x[:, ::-1] - x.max(axis=1, keepdims=True)).sum(axis=1),
    "reflect pad": lambda x: np.pad(x, 2, mode="reflect"),
    "reversed matmul epilogue": lambda x: x[:512, :512] @ x[:512, :512] + np.flip(x[:512, :512], 1),
}


@pytest.mark.parametrize("name", list(BIG))
def test_reversed_views_at_size(name: str) -> None:
    """Large enough to be split over threads, row-fused and tiled: linalg's tiling asserts on a
    reversed (negative-coefficient) map, so reversed views are read from a copy the stages leave alone."""
    check(BIG[name], make_array(13, "float32", (1024, 1024)), rtol=1e-4, atol=1e-3)
