"""Contractions against NumPy: N-D matmul with broadcast batch dims, np.dot N-D, tensordot, inner,
vdot, kron and einsum (every form: explicit/implicit output, diagonals, traces, `...`, transposes,
sums, 1 to N operands), the order of an einsum chain, one term for every spelling of a matmul, and
the errors of bad subscripts and shapes."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from strategies import LAYOUTS, arrays, sweep
from strategies import check as check_drawn

import egglog_tensor as et
from egglog_tensor.graph import topological

rng = np.random.default_rng(24)


def data(shape: tuple[int, ...], dtype: str) -> np.ndarray:
    """Random data of `dtype`: small ints (exact sums), bools, normal floats."""
    if dtype == "bool":
        return rng.random(shape) < 0.4
    if dtype.startswith("int"):
        return rng.integers(-5, 6, shape).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


def check(fn, shapes, dtype: str = "float32", rtol: float | None = None) -> None:
    """fn compiled and run on random data equals NumPy's: dtype and shape exactly, values to rtol (exact for ints and bools)."""
    args = [data(s, dtype) for s in shapes]
    got, want = et.kernel(fn)(*args), fn(*args)
    got, want = (got, want) if isinstance(want, tuple) else ((got,), (want,))
    for g, w in zip(got, want, strict=True):
        g = np.asarray(g)
        assert g.dtype == w.dtype and g.shape == w.shape, (g.dtype, w.dtype, g.shape, w.shape)
        if w.dtype.kind in "fc":
            tol = rtol or (2e-5 if w.dtype == np.float32 else 1e-12)
            np.testing.assert_allclose(g, w, rtol=tol, atol=tol * max(1.0, np.abs(w).max(initial=0.0)))
        else:
            np.testing.assert_array_equal(g, w)


# --- matmul with any batch dims ------------------------------------------------------------------
BROADCASTS = [
    ((2, 3, 4, 5), (2, 3, 5, 6)), ((2, 3, 4, 5), (5, 6)), ((4, 5), (2, 3, 5, 6)), ((5,), (2, 3, 5, 6)),
    ((2, 3, 4, 5), (5,)), ((2, 1, 4, 5), (3, 5, 6)), ((1, 3, 4, 5), (2, 1, 5, 6)), ((3, 4, 5), (1, 1, 5, 6)),
    ((2, 3, 4), (4,)), ((4,), (2, 4, 3)), ((0, 0, 1, 0), (0, 0, 0, 1)), ((2, 3, 4, 0), (0, 5)), ((2, 0, 4, 5), (5, 3)),
]


@pytest.mark.parametrize(("sa", "sb"), BROADCASTS, ids=lambda s: "x".join(map(str, s)))
def test_nd_matmul_broadcasts_batch_dims(sa, sb) -> None:
    check(lambda a, b: a @ b, [sa, sb])


@pytest.mark.parametrize("dtype", ["float64", "int32", "int64", "bool"])
def test_nd_matmul_dtypes(dtype) -> None:
    check(lambda a, b, v: (a @ b, np.matmul(b, v), v @ a), [(2, 3, 4, 5), (3, 5, 4), (4,)], dtype)


@st.composite
def matmul_operands(draw: st.DrawFn) -> tuple[np.ndarray, np.ndarray]:
    """Two operands of np.matmul: shapes by its gufunc signature (batch dims broadcasting, size 0 and
    1 included, vectors), one dtype, any layout, data with NaN and inf where it is a float."""
    shapes = draw(hnp.mutually_broadcastable_shapes(signature=np.matmul.signature, max_dims=3, max_side=4)).input_shapes
    dtype = draw(st.sampled_from(["float32", "float64", "int32"]))
    return tuple(draw(arrays(dtype, shape, layout=st.sampled_from(LAYOUTS))) for shape in shapes)


def _matmul(a, b):
    return a @ b


@pytest.mark.slow  # (a drawn sweep: minutes on a loaded 2-core machine; .ci/run runs it after the default run)
@settings(max_examples=15, deadline=None)
@given(matmul_operands())
def test_nd_matmul_over_drawn_shapes(operands) -> None:
    check_drawn(_matmul, *operands)


def test_nd_matmul_folds_into_the_batched_and_2d_matmuls() -> None:
    """4-D @ 4-D is one batched 3-D matmul over the flattened batch; 4-D @ 2-D one 2-D matmul of the rows."""
    a, b, w = data((2, 3, 4, 5), "float32"), data((2, 3, 5, 6), "float32"), data((5, 6), "float32")
    nodes = topological(et.kernel(lambda a, b, w: (a @ b, a @ w)).trace(a, b, w).outputs)
    shapes = sorted((n.inputs[0].shape, n.inputs[1].shape) for n in nodes if n.op == "matmul")
    assert shapes == [((6, 4, 5), (6, 5, 6)), ((24, 5), (5, 6))]


# --- dot, tensordot, inner, vdot, kron -----------------------------------------------------------
@pytest.mark.parametrize("dtype", ["float32", "float64", "int32"])
def test_tensordot_forms(dtype) -> None:
    def fn(a, b, c, v):
        return (np.tensordot(a, b), np.tensordot(a, c, ([0, 2], [2, 0])), np.tensordot(a, v, 0), np.tensordot(c, v, axes=(0, 0)),
                np.tensordot(a, b, axes=([-1], [1])), np.tensordot(v, v, 1), np.tensordot(a, a, 3))
    check(fn, [(3, 4, 5), (4, 5, 6), (5, 6, 3), (5,)], dtype)


@pytest.mark.parametrize("dtype", ["float32", "int64"])
def test_dot_inner_vdot_kron(dtype) -> None:
    def fn(a, m, b, v):
        return (np.dot(a, b), np.dot(m, b), np.dot(v, b), np.dot(a, v), np.inner(a, m), np.inner(v, v), np.inner(a, 2),
                np.vdot(a, a), np.vdot(m.T, m), np.kron(m, m), np.kron(v, m), np.outer(a, v))
    check(fn, [(2, 3, 5), (4, 5), (3, 5, 4), (5,)], dtype)


def test_python_scalars_are_strong_in_products() -> None:
    """np.dot / tensordot / kron convert a Python float to a float64 array, as NumPy does."""
    check(lambda a: (np.tensordot(a, 2.0, 0), np.kron(a, 2.0), np.inner(a, 2.0)), [(2, 3)], "float32")


# --- einsum ----------------------------------------------------------------------------------------
FORMS = [  # (subscripts, operand shapes)
    ("ij,jk->ik", [(3, 4), (4, 5)]), ("ij,jk", [(3, 4), (4, 5)]), ("ij,kj->ik", [(3, 4), (5, 4)]),
    ("ji,jk->ki", [(4, 3), (4, 5)]), ("ii->i", [(4, 4)]), ("ii", [(4, 4)]), ("ii->", [(4, 4)]), ("iij->ji", [(3, 3, 4)]),
    ("iii->i", [(3, 3, 3)]), ("ijji->ij", [(2, 3, 3, 2)]), ("ij->ji", [(3, 4)]), ("ijk->kij", [(2, 3, 4)]), ("ba", [(2, 3)]),
    ("aBA", [(2, 3, 4)]), ("ij->", [(3, 4)]), ("ijk->j", [(2, 3, 4)]), ("i,i", [(5,), (5,)]), ("i,i->i", [(5,), (5,)]),
    ("i,j->ij", [(3,), (4,)]), ("i,j", [(3,), (4,)]), ("ij,j->i", [(3, 4), (4,)]), ("i,ij->j", [(3,), (3, 4)]),
    ("ij,ij->i", [(3, 4), (3, 4)]), ("ij,ij->", [(3, 4), (3, 4)]), ("ij,ji->", [(3, 4), (4, 3)]),
    ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]), ("bij,bjk->kib", [(2, 3, 4), (2, 4, 5)]), ("ijk,jl->kli", [(2, 3, 4), (3, 5)]),
    ("...ij,...jk", [(2, 1, 3, 4), (5, 4, 2)]), ("...ij,...jk->...ik", [(2, 3, 4), (4, 5)]), ("i...->...", [(3, 2, 2)]),
    ("...,...", [(3,), (2, 3)]), ("...i,...i->...", [(2, 3, 4), (3, 4)]), ("ij...,jk...->ik...", [(2, 3, 4), (3, 5, 4)]),
    ("ij,jk->ik", [(3, 1), (4, 5)]), (",ij->ij", [(), (3, 4)]), ("ij,jk->ik", [(3, 0), (0, 5)]),
    ("ab,b,ac->", [(3, 4), (4,), (3, 5)]), ("ab,bc,ca->", [(3, 4), (4, 5), (5, 3)]),
    ("abc,cd,de->ae", [(2, 3, 4), (4, 5), (5, 6)]), ("ij,jk,kl,lm->im", [(3, 4), (4, 5), (5, 2), (2, 6)]),
    ("ij,ij,ij->ij", [(2, 3), (2, 3), (2, 3)]), ("ijk,ikl,ilm->jm", [(2, 3, 4), (2, 4, 5), (2, 5, 3)]),
    ("ii,ij,jk->ik", [(3, 3), (3, 4), (4, 2)]),
]


def einsums(forms: list[tuple[str, list[tuple[int, ...]]]]):
    """One kernel computing every form of `forms` (one compilation), each on its own arguments."""
    offsets = list(np.cumsum([0, *(len(shapes) for _, shapes in forms)]))

    def fn(*args):
        return tuple(np.einsum(spec, *args[lo:hi]) for (spec, _), lo, hi in zip(forms, offsets, offsets[1:]))

    return fn, [s for _, shapes in forms for s in shapes]


CHUNK = 8  # forms per kernel: one compilation each (a kernel of all of them takes minutes in LLVM)


@pytest.mark.parametrize("start", range(0, len(FORMS), CHUNK), ids=lambda i: f"forms{i}-{i + CHUNK - 1}")
@pytest.mark.parametrize("dtype", sweep(["float32", "int32", "bool", "float64", "int64"], ["float32", "int32"]))
def test_einsum_forms(dtype, start) -> None:
    fn, shapes = einsums(FORMS[start : start + CHUNK])
    check(fn, shapes, dtype)


def test_einsum_interleaved_form_and_optimize() -> None:
    def fn(a, b):
        return (np.einsum(a, [0, 1], b, [1, 2], [0, 2]), np.einsum(a, [Ellipsis, 1]), np.einsum(a, [1, 0]),
                np.einsum("ij,jk", a, b, optimize=True), np.einsum("ij,jk", a, b, optimize="optimal"),
                np.einsum("ij,jk", a, b, optimize=("greedy", 10**6)))
    check(fn, [(3, 4), (4, 5)])


def test_einsum_mixed_dtypes_promote() -> None:
    args = [data((3, 4), "int32"), data((4, 5), "float32"), data((5,), "int64")]
    fn = lambda a, b, c: (np.einsum("ij,jk->ik", a, b), np.einsum("ji,j->i", b.T, c), np.einsum("i,i", c, c))  # noqa: E731
    for got, want in zip(et.kernel(fn)(*args), fn(*args), strict=True):
        assert got.dtype == want.dtype
        np.testing.assert_allclose(got, want, rtol=1e-12)


def test_einsum_sums_stay_accurate_at_size() -> None:
    """A 2^22-element float32 einsum sum (and trace) against the float64 truth."""
    x = np.full(1 << 22, 0.1, np.float32)
    m = np.full((2048, 2048), 0.1, np.float32)
    got = et.kernel(lambda x, m: (np.einsum("i->", x), np.einsum("ij->", m), np.einsum("ii", m)))(x, m)
    for g, truth in zip(got, (x.astype(np.float64).sum(), m.astype(np.float64).sum(), np.trace(m.astype(np.float64))), strict=True):
        assert g.dtype == np.float32
        np.testing.assert_allclose(g, truth, rtol=1e-6)


# --- one term for every spelling ----------------------------------------------------------------
def test_spellings_of_a_matmul_are_one_term() -> None:
    """einsum("ij,jk->ik"), tensordot(a, b, 1), np.dot, the interleaved einsum and a @ b trace to the
    same Node; spellings through a transposed operand become it once the transposes cancel in the
    e-graph: the optimizer extracts and emits one matmul for all of them."""
    a, b = data((30, 40), "float32"), data((40, 50), "float32")

    def fn(a, b):
        return (a @ b, np.einsum("ij,jk->ik", a, b), np.tensordot(a, b, 1), np.dot(a, b), np.einsum(a, [0, 1], b, [1, 2]),
                np.einsum("ij,kj->ik", a, b.T), np.tensordot(a, b.T, ([1], [1])))

    traced = et.kernel(fn).trace(a, b)
    assert all(o is traced.outputs[0] for o in traced.outputs[:5])
    extracted = traced.optimize().outputs
    assert all(o is extracted[0] for o in extracted)
    transposed = et.kernel(lambda a, b: (a @ b.T, np.einsum("ij,kj->ik", a, b))).trace(a, b.T.copy()).outputs
    assert transposed[0] is transposed[1]


def test_einsum_batched_matmul_is_the_batched_term() -> None:
    a, b = data((2, 3, 4, 5), "float32"), data((2, 3, 5, 6), "float32")
    outputs = et.kernel(lambda a, b: (a @ b, np.einsum("...ij,...jk->...ik", a, b), np.einsum("abij,abjk->abik", a, b))).trace(a, b).outputs
    assert outputs[0] is outputs[1] is outputs[2]


# --- the order of a chain --------------------------------------------------------------------------
def chain_optimum(dims: list[int]) -> int:
    """The classic matrix-chain dynamic program: least multiply-adds for matrices dims[i] x dims[i+1]."""
    n = len(dims) - 1
    best = {(i, i): 0 for i in range(n)}
    for length in range(2, n + 1):
        for i in range(n - length + 1):
            j = i + length - 1
            best[i, j] = min(best[i, s] + best[s + 1, j] + dims[i] * dims[s + 1] * dims[j + 1] for s in range(i, j))
    return best[0, n - 1]


def multiply_adds(outputs) -> int:
    """The multiply-adds of every matmul of a program (m * n * k each)."""
    products = ("matmul", "matmul_tiled", "einsum_matmul")
    return sum(n.size * n.inputs[0].shape[-1] for n in topological(list(outputs)) if n.op in products)


@pytest.mark.parametrize("dims", [[10, 200, 3, 300, 4], [500, 2, 400, 3, 600], [4, 5, 300, 2, 400], [60, 60, 1, 60, 60]],
                         ids=lambda d: "x".join(map(str, d)))
def test_einsum_chain_comes_out_in_the_cheapest_order(dims) -> None:
    """A 4-matrix einsum chain with skewed shapes is contracted in the order of least work (the
    dynamic-programming optimum), far below left to right, and matches NumPy: the e-graph's choice."""
    args = [data((dims[i], dims[i + 1]), "float64") for i in range(4)]
    fn = lambda *m: np.einsum("ij,jk,kl,lm->im", *m)  # noqa: E731
    chosen = multiply_adds(et.kernel(fn).inspect(*args).outputs)
    left_to_right = sum(dims[0] * dims[i] * dims[i + 1] for i in range(1, 4))
    assert chosen == chain_optimum(dims) < left_to_right
    np.testing.assert_allclose(et.kernel(fn)(*args), fn(*args), rtol=1e-10, atol=1e-10 * np.abs(fn(*args)).max())


def cheapest_order(operands: list[set[str]], output: set[str], sizes: dict[str, int]) -> int:
    """Brute force over every sequence of pairwise products: the least total loop size."""
    if len(operands) == 1:
        return 0
    best = None
    for i in range(len(operands)):
        for j in range(i + 1, len(operands)):
            rest = [o for k, o in enumerate(operands) if k not in (i, j)]
            made = (operands[i] | operands[j]) & output.union(*rest)
            cost = math.prod(sizes[c] for c in operands[i] | operands[j]) + cheapest_order([*rest, made], output, sizes)
            best = cost if best is None else min(best, cost)
    return best


def test_einsum_order_over_general_contractions() -> None:
    """A 5-operand einsum with a vector and an outer index takes the product tree of least loop size
    (matmuls' m*n*k plus broadcast multiplies' size), found here by brute force."""
    spec, shapes = "ab,bc,cd,d,ae->e", [(8, 100), (100, 90), (90, 7), (7,), (8, 6)]
    args = [data(s, "float64") for s in shapes]
    fn = lambda *x: np.einsum(spec, *x)  # noqa: E731
    nodes = topological(et.kernel(fn).trace(*args).outputs)
    chosen = multiply_adds(nodes) + sum(n.size for n in nodes if n.op == "multiply")
    sizes = {c: n for sub, shape in zip(spec[:-3].split(","), shapes, strict=True) for c, n in zip(sub, shape, strict=True)}
    assert chosen == cheapest_order([set(sub) for sub in spec[:-3].split(",")], {"e"}, sizes)
    np.testing.assert_allclose(et.kernel(fn)(*args), fn(*args), rtol=1e-10)


# --- errors --------------------------------------------------------------------------------------
ERRORS = [
    ("ij,jk->ik", [(3, 4), (5, 5)], r"index 'j' has size 4 in operand 0 but 5 in operand 1"),
    ("ij,jk->ik", [(3, 4)], r"fewer operands \(1\) than the subscripts 'ij,jk->ik' specify \(2\)"),
    ("i", [(3,), (3,)], r"more operands \(2\)"),
    ("ij->k", [(3, 4)], r"output index 'k' appears in no operand"),
    ("ii->i", [(3, 4)], r"operand 0's axes for the repeated index 'i' differ in size \(3 != 4\)"),
    ("ij->ii", [(3, 3)], r"the output 'ii' holds an index more than once"),
    ("i$", [(3, 3)], r"invalid subscript '\$' in operand 0's subscripts 'i\$'"),
    ("ijk", [(3, 3)], r"operand 0 has 2 dimensions but its subscripts 'ijk' name 3"),
    ("i,ij", [(3,), (3,)], r"operand 1 has 1 dimensions but its subscripts 'ij' name 2"),
    ("i.j", [(3, 3)], r"operand 0's subscripts 'i\.j' have a '\.' outside one '\.\.\.'"),
    ("i...->i", [(3, 3)], r"the output 'i' has no '\.\.\.'"),
    ("...i,...i", [(2, 3), (4, 3)], r"a '\.\.\.' dimension has size 2 in operand 0 but 4 in operand 1"),
]


@pytest.mark.parametrize(("spec", "shapes", "message"), ERRORS, ids=[e[0] + "/" + e[2][:20] for e in ERRORS])
def test_einsum_errors_name_the_operand(spec, shapes, message) -> None:
    with pytest.raises(et.TracingError, match="np.einsum: " + message) as info:
        et.kernel(lambda *x: np.einsum(spec, *x))(*[np.ones(s, np.float32) for s in shapes])
    assert "test_surface_einsum.py" in str(info.value)  # the user's line


@pytest.mark.parametrize(("fn", "shapes", "message"), [
    (lambda a, b: a @ b, [(2, 3, 4, 5), (3, 3, 5, 6)], r"matmul: batch dimensions \(2, 3\) and \(3, 3\) do not broadcast"),
    (lambda a, b: a @ b, [(2, 3, 4, 5), (4, 6)], r"matmul: inner dimensions differ: \(2, 3, 4, 5\) @ \(4, 6\)"),
    (lambda a, b: np.tensordot(a, b), [(3, 4, 5), (5, 4, 6)], r"np.tensordot: shape mismatch for sum: axis 1 of operand 0 \(3, 4, 5\) has size 4, axis 0"),
    (lambda a, b: np.tensordot(a, b, ([0, 1], [0])), [(3, 4), (3, 4)], r"np.tensordot: shape-mismatch for sum: 2 axes of operand 0, 1 of operand 1"),
    (lambda a, b: np.tensordot(a, b, 3), [(3, 4), (3, 4)], r"np.tensordot: axes=3 for operands of 2 and 2 dimensions"),
    (lambda a, b: np.dot(a, b), [(3, 4), (2, 3, 5)], r"np.dot: shape mismatch for sum: axis 1 of operand 0 \(3, 4\) has size 4, axis 1"),
    (lambda a, b: np.inner(a, b), [(3, 4), (3,)], r"np.inner: shape mismatch for sum"),
    (lambda a, b: np.vdot(a, b), [(3, 4), (3,)], r"np.vdot: vectors have different lengths \(12 and 3 elements\)"),
])
def test_contraction_shape_errors(fn, shapes, message) -> None:
    with pytest.raises(et.TracingError, match=message):
        et.kernel(fn)(*[np.ones(s, np.float32) for s in shapes])


def test_einsum_dtype_is_unsupported() -> None:
    with pytest.raises(et.UnsupportedError, match=r"np.einsum: dtype= is not supported \(out= and optimize= are\)"):
        et.kernel(lambda a: np.einsum("ij", a, out=a, dtype=np.float64))(np.ones((2, 2), np.float32))


def test_einsum_of_many_operands_orders_greedily() -> None:
    """Past 10 operands the order is greedy (cheapest pair first): the ten vectors of an 11-operand
    einsum are multiplied together before the one matrix-vector product, and it matches NumPy."""
    spec = "ab" + ",b" * 10 + "->a"
    args = [data((40, 30), "float64"), *(data((30,), "float64") for _ in range(10))]
    fn = lambda *x: np.einsum(spec, *x)  # noqa: E731
    nodes = topological(et.kernel(fn).trace(*args).outputs)
    assert [n.inputs[1].shape for n in nodes if n.op == "matmul"] == [(30,)]
    np.testing.assert_allclose(et.kernel(fn)(*args), fn(*args), rtol=1e-10)


def test_syr2k_two_contractions_sharing_an_epilogue() -> None:
    """NPBench's syr2k (two matmuls summed in one epilogue under a where) on 50x35 float64; it once
    failed at the tile stage with "requires exactly one target handle"."""
    a, b, c = data((50, 35), "float64"), data((50, 35), "float64"), data((50, 50), "float64")
    lower = np.tril(np.ones((50, 50), bool))
    fn = lambda a, b, c, lower: np.where(lower, 1.5 * c + 1.2 * (a @ b.T + b @ a.T), c)  # noqa: E731
    np.testing.assert_allclose(et.kernel(fn)(a, b, c, lower), fn(a, b, c, lower), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("spec", ["i,j,kl->i", "ij,jk->ik", "ij->", "i,i->"])
def test_a_sum_over_an_empty_index_is_zeros_even_beside_nan_and_inf(spec: str) -> None:
    """NumPy sums no products: 0, where taking the other operands' sums first would give NaN * 0 (found by the fuzzer)."""
    shapes = {"i,j,kl->i": [(5,), (5,), (0, 1)], "ij,jk->ik": [(3, 0), (0, 4)], "ij->": [(0, 3)], "i,i->": [(0,), (0,)]}[spec]
    values = [np.full(s, v, np.float32) for s, v in zip(shapes, [np.nan, np.inf, 1.0], strict=False)]
    got = et.kernel(lambda *x: np.einsum(spec, *x))(*values)
    np.testing.assert_array_equal(got, np.einsum(spec, *values))
