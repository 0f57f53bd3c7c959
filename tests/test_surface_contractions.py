"""General two-operand contractions not in chain form ("abc,cd->abd", "ijk,jkl->il", tensordot over
several axes, batch labels anywhere) against np.einsum / np.tensordot over drawn label layouts and
sizes (0 included), and that each is traced as transposes and reshapes around one (batched) matmul,
NumPy's BLAS path, so it runs at GEMM speed (benchmarks/bench_einsum.py times them)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import make_array, with_layout

import egglog_tensor as et
from egglog_tensor.graph import topological

GROUPS = ("batch", "free_a", "summed", "free_b")


@st.composite
def contractions(draw: st.DrawFn) -> tuple[str, tuple[int, ...], tuple[int, ...]]:
    """An einsum spec of two operands with batch, free and summed labels (at least one summed) in
    any order, and the operands' shapes."""
    counts = {g: draw(st.integers(1 if g == "summed" else 0, 2)) for g in GROUPS}
    letters = iter("abcdefgh")
    labels = {g: [next(letters) for _ in range(n)] for g, n in counts.items()}
    size = {l: draw(st.integers(0 if l in labels["free_a"] else 1, 4)) for g in GROUPS for l in labels[g]}
    a = draw(st.permutations(labels["batch"] + labels["free_a"] + labels["summed"]))
    b = draw(st.permutations(labels["batch"] + labels["summed"] + labels["free_b"]))
    out = draw(st.permutations(labels["batch"] + labels["free_a"] + labels["free_b"]))
    spec = f"{''.join(a)},{''.join(b)}->{''.join(out)}"
    return spec, tuple(size[l] for l in a), tuple(size[l] for l in b)


def _matmuls(fn, *args) -> list:
    """The matmul nodes of fn's trace (the contractions' one product each)."""
    return [n for n in topological(et.kernel(fn).trace(*args).outputs) if n.op == "matmul"]


@pytest.mark.slow  # 6 compilations of 3 contractions each
@settings(max_examples=6, deadline=None)
@given(cases=st.lists(contractions(), min_size=3, max_size=3), dtype=st.sampled_from(["float32", "float64"]),
       layout=st.sampled_from(["C", "F", "negative"]), seed=st.integers(0, 2**32 - 1))
def test_drawn_contractions_match_numpy_einsum(cases, dtype: str, layout: str, seed: int) -> None:
    args = [with_layout(make_array(seed + i, dtype, shape), layout) for i, (_, *shapes) in enumerate(cases) for shape in shapes]

    def fn(*xs):
        return tuple(np.einsum(spec, xs[2 * i], xs[2 * i + 1]) for i, (spec, *_) in enumerate(cases))

    got = et.kernel(fn)(*args)
    rtol = 2e-6 if dtype == "float32" else 1e-14
    for g, w, (spec, *_) in zip(got, fn(*args), cases, strict=True):
        assert g.dtype == w.dtype and g.shape == w.shape, spec
        np.testing.assert_allclose(g, w, rtol=rtol, atol=rtol * 40, err_msg=spec)


FORMS = [("abc,cd->abd", (6, 5, 4), (4, 7)), ("ijk,jkl->il", (3, 4, 5), (4, 5, 6)), ("abc,bd->acd", (5, 6, 3), (6, 4)),
         ("bij,bjk->bki", (2, 3, 4), (2, 4, 5)), ("abcd,dbe->ace", (2, 3, 4, 5), (5, 3, 6))]


@pytest.mark.parametrize("dtype", ["float32", "int64"])
def test_general_forms_and_multi_axis_tensordot(dtype: str) -> None:
    shapes = [s for _, a, b in FORMS for s in (a, b)] + [(3, 4, 5, 2), (5, 3, 2, 6)]
    args = [make_array(i, dtype, s) for i, s in enumerate(shapes)]

    def fn(*xs):
        forms = tuple(np.einsum(spec, xs[2 * i], xs[2 * i + 1]) for i, (spec, *_) in enumerate(FORMS))
        return (*forms, np.tensordot(xs[-2], xs[-1], axes=([0, 2, 3], [1, 0, 2])), np.tensordot(xs[-2], xs[-1], ([-2], [0])))

    got, want = et.kernel(fn)(*args), fn(*args)
    for g, w in zip(got, want, strict=True):
        assert g.dtype == w.dtype and g.shape == w.shape
        if dtype == "int64":
            np.testing.assert_array_equal(g, w)
        else:
            np.testing.assert_allclose(g, w, rtol=2e-6, atol=1e-5)


@pytest.mark.parametrize(("spec", "sa", "sb", "product"), [
    ("abc,cd->abd", (6, 5, 4), (4, 7), ((30, 4), (4, 7))),
    ("ijk,jkl->il", (3, 4, 5), (4, 5, 6), ((3, 20), (20, 6))),
    ("bij,bjk->bki", (2, 3, 4), (2, 4, 5), ((2, 3, 4), (2, 4, 5))),
    ("abcd,dbe->ace", (2, 3, 4, 5), (5, 3, 6), ((8, 15), (15, 6))),
])
def test_a_general_contraction_is_one_matmul(spec: str, sa, sb, product) -> None:
    a, b = np.ones(sa, np.float32), np.ones(sb, np.float32)
    assert [(m.inputs[0].shape, m.inputs[1].shape) for m in _matmuls(lambda x, y: np.einsum(spec, x, y), a, b)] == [product]


def test_multi_axis_tensordot_is_one_matmul() -> None:
    a, b = np.ones((3, 4, 5, 2), np.float32), np.ones((5, 3, 2, 6), np.float32)
    found = _matmuls(lambda x, y: np.tensordot(x, y, axes=([0, 2, 3], [1, 0, 2])), a, b)
    assert [(m.inputs[0].shape, m.inputs[1].shape) for m in found] == [((4, 30), (30, 6))]


def test_contractions_at_size_float32() -> None:
    """Sums over 4096 = 64 * 64 terms of 0.1 (two summed labels): within 1e-6 of the float64 result."""
    a, b = np.full((8, 64, 64), 0.1, np.float32), np.full((64, 64, 8), 0.1, np.float32)
    got = et.kernel(lambda x, y: np.einsum("ijk,jkl->il", x, y))(a, b)
    np.testing.assert_allclose(got, np.einsum("ijk,jkl->il", a.astype(np.float64), b.astype(np.float64)), rtol=1e-6)
