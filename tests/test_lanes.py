"""Vector lanes of reductions as a term-level choice (`x.sum_lanes(axes, L)`, rulesets.tiling):
chosen by the cost model where they save time, carried to LLVM's loop metadata, and correct for
any lanes a rule puts in the term."""

from __future__ import annotations

import re
from dataclasses import replace

import numpy as np
import pytest
from egglog import Vec, i64
from hypothesis import given, settings
from hypothesis import strategies as st

import egglog_tensor as et
from egglog_tensor import compiler
from egglog_tensor.cost import Cost, TensorCostModel, default_lanes, reduce_slowdown
from egglog_tensor.errors import CompileError
from egglog_tensor.graph import REDUCTIONS, Node
from egglog_tensor.ir import DType, Layout, Program, Tensor, from_term
from egglog_tensor.lowering.emit import emit
from egglog_tensor.lowering.lanes import annotation
from egglog_tensor.lowering.tiling import simd_lanes
from egglog_tensor.spec import ArgSpec
from strategies import make_array, seeds

VF = simd_lanes(4)
rng = np.random.default_rng(1)


def dot_all(a, b):
    return np.sum(a * b)


@pytest.mark.parametrize("target", ["cpu", "cpu-openmp"])
def test_lanes_are_chosen_where_the_default_leaves_a_remainder(target: str) -> None:
    """Rows of 1000: LLVM's own 4 x VF lanes leave 1000 % 64 elements to a scalar loop; the cost
    model picks the candidate that leaves the fewest, and it reaches LLVM (also on the threads'
    partial reductions of cpu-openmp)."""
    a, b = (rng.standard_normal((64, 1000)).astype(np.float32) for _ in range(2))
    k = et.kernel(dot_all, target=target)
    comp = k.inspect(a, b)
    found = re.search(r"\.sum_lanes\(Vec\(0, 1\), (\d+)\)", comp.extracted_term)
    assert found, comp.extracted_term
    lanes = int(found.group(1))
    candidates = [c * VF for c in (1, 2, 4, 8)]
    assert reduce_slowdown(1000, lanes, 4) == min(reduce_slowdown(1000, c, 4) for c in candidates)
    assert reduce_slowdown(1000, lanes, 4) < reduce_slowdown(1000, default_lanes(4), 4)
    assert f"et.lanes = {lanes} : i64" in comp.stage("linalg")
    assert "convert_to_loops" in comp.stage("lanes-script")
    width, count = re.search(r"width = (\d+) : i32>, interleave = #llvm.loop_interleave<count = (\d+)", annotation(lanes, VF)).groups()
    ir_text = comp.stage("llvm-ir")
    assert f'!{{!"llvm.loop.vectorize.width", i32 {width}}}' in ir_text
    assert f'!{{!"llvm.loop.interleave.count", i32 {count}}}' in ir_text
    expected = np.sum(a.astype(np.float64) * b)
    np.testing.assert_allclose(k(a, b), expected, rtol=1e-5)


@pytest.mark.parametrize("fn", [dot_all, lambda a, b: np.sum(a * b, axis=0)], ids=["rows-of-256", "column-sums"])
def test_lanes_stay_llvms_where_they_gain_nothing(fn) -> None:
    """Rows a multiple of 4 x VF long: the default is already ideal. Column sums: the innermost loop
    is parallel (vectorized across columns), so lanes do not apply."""
    a, b = (rng.standard_normal((64, 256)).astype(np.float32) for _ in range(2))
    comp = et.kernel(fn, target="cpu").inspect(a, b)
    assert "_lanes(" not in comp.extracted_term and "et.lanes" not in comp.stage("linalg")


class _Pinned(TensorCostModel):
    """A cost model under which a reduction without chosen lanes costs a second more: the lanes a
    user's rule offers are taken whatever they cost."""

    def price(self, op: str, ins: list[Cost], out: Node) -> Cost:
        cost = super().price(op, ins, out)
        if op in REDUCTIONS and len(out.attrs) == 1:
            return replace(cost, total=cost.total + 1e9, done=cost.done + 1e9)
        return cost


def pinned(lanes: int):
    from egglog import rewrite, ruleset

    from egglog_tensor.ir import WITH_LANES
    from egglog_tensor.rulesets import algebra, fusion, layout

    mine = ruleset(name=f"lanes_{lanes}")

    @mine.register
    def _(x: Tensor, axes: Vec[i64]) -> object:
        for op, with_lanes in WITH_LANES.items():
            yield rewrite(getattr(x, op)(axes)).to(with_lanes(x, axes, i64(lanes)))

    return algebra + fusion + layout + mine


REDUCERS = {
    "sum": lambda x: np.sum(x * 2, axis=-1),
    "max_all": lambda x: np.max(x),
    "min_rows3d": lambda x: np.min(x - 1, axis=(1, 2)),
    "prod_keep": lambda x: x / np.prod(x, axis=-1, keepdims=True),
    "sum_cols": lambda x: np.sum(x, axis=0),
}


@settings(max_examples=25, deadline=None)
@given(name=st.sampled_from(sorted(REDUCERS)), lanes=st.sampled_from([1, 3, 5, 16, 33, 64, 200]),
       n=st.integers(1, 40), m=st.integers(1, 150), dtype=st.sampled_from(["float32", "float64", "int32"]),
       target=st.sampled_from(["cpu", "cpu-openmp"]), seed=seeds)
def test_any_lanes_match_numpy(name: str, lanes: int, n: int, m: int, dtype: str, target: str, seed: int) -> None:
    """Whatever lanes a rule puts in the term (dividing nothing, not a vector width, longer than
    the row), every reduction kind, dtype and target gives NumPy's answer."""
    fn = REDUCERS[name]
    shape = (n, 3, m) if name == "min_rows3d" else (n, m)
    lo, hi = (0.5, 1.5) if name == "prod_keep" else (-5, 5)
    x = make_array(seed, dtype, shape, lo=lo, hi=hi, zeros=name != "prod_keep")
    if name == "prod_keep" and dtype == "int32":
        x = np.ones(shape, np.int32)
    k = et.kernel(fn, rules=pinned(lanes), target=target, cache=False)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(compiler, "TensorCostModel", _Pinned)
        comp = k.inspect(x)
    if name != "sum_cols":
        assert "_lanes(" in comp.extracted_term, comp.extracted_term
    rtol = {"float32": 2e-5, "float64": 1e-12, "int32": 0}[dtype]
    np.testing.assert_allclose(k(x), fn(x), rtol=rtol, atol=rtol)


def test_bad_lanes_are_a_compile_error() -> None:
    x = Tensor.arg("x", Vec[i64](i64(8), i64(8)), DType.float32, Layout.C)
    term = Program(Vec[Tensor](x.max_lanes(Vec[i64](i64(1)), i64(0))))
    with pytest.raises(CompileError, match=r"max_lanes: lanes must be >= 1, got 0"):
        emit(from_term(term), ["x"], [ArgSpec((8, 8), "float32", "C")])
