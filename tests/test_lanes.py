"""Vector lanes of reductions as a term-level choice (`x.sum_lanes(axes, L)`, rulesets.tiling):
chosen by the cost model where they save time, kept at LLVM's own where they do not, pinned by a
user's rule, carried to LLVM's loop metadata, and correct for any lanes a rule puts in the term."""

from __future__ import annotations

import re

import numpy as np
import pytest
from egglog import Vec, i64, rewrite, ruleset
from hypothesis import given, settings
from hypothesis import strategies as st

import egglog_tensor as et
from egglog_tensor.cost import reduce_slowdown
from egglog_tensor.errors import CompileError
from egglog_tensor.ir import WITH_LANES, DType, Layout, Program, Tensor, from_term
from egglog_tensor.lowering.emit import emit
from egglog_tensor.lowering.stages.lanes import annotation
from egglog_tensor.lowering.policy import ACCUMULATORS
from egglog_tensor.lowering.policy import simd_lanes
from egglog_tensor.rulesets import algebra, fusion, layout
from egglog_tensor.spec import ArgSpec
from dataclasses import replace

from egglog_tensor.target import NAMED, Target
from strategies import make_array, seeds

HOST = Target.host()
VF = simd_lanes(4, HOST)
AVX512 = NAMED["avx512"]  # the CPU the cost model's lane choices are checked on, lowered without running (any host)
rng = np.random.default_rng(1)


def dot_all(a, b):
    return np.sum(a * b)


def pinned(lanes: int):
    """A user's schedule: the rulesets but tiling (which offers its own lanes), every reduction
    computed with these lanes (the plain form subsumed, so extraction cannot pick it)."""
    mine = ruleset(name=f"lanes_{lanes}")

    @mine.register
    def _(x: Tensor, axes: Vec[i64]) -> object:
        for op, with_lanes in WITH_LANES.items():
            yield rewrite(getattr(x, op)(axes), subsume=True).to(with_lanes(x, axes, i64(lanes)))

    return algebra + fusion + layout + mine


def metadata(lanes: int, vf: int = VF) -> tuple[str, str]:
    width, count = re.search(r"width = (\d+) : i32>, interleave = #llvm.loop_interleave<count = (\d+)", annotation(lanes, vf)).groups()
    return f'!{{!"llvm.loop.vectorize.width", i32 {width}}}', f'!{{!"llvm.loop.interleave.count", i32 {count}}}'


@pytest.mark.parametrize("target", ["cpu", "cpu-openmp"])
def test_lanes_are_chosen_where_they_save_time(target: str) -> None:
    """On an AVX-512 CPU (lowered, not run), rows of 100 (3 x 32 + 4): two vector accumulators,
    combined once, are priced faster than LLVM's own four; the choice reaches LLVM (on cpu-openmp,
    each thread's partial sum). (With AVX2's 8 lanes LLVM's own four vectors are 32 lanes already.)
    On the host, its own choice matches NumPy."""
    a, b = (rng.standard_normal((512, 100)).astype(np.float32) for _ in range(2))
    cpu = replace(AVX512, name=target, threads=2 if target == "cpu-openmp" else 1)
    vf = simd_lanes(4, cpu)
    low = et.kernel(dot_all, target=cpu).lower(a, b)
    found = re.search(r"\.sum_lanes\(Vec\(0, 1\), (\d+)\)", low.as_text("extracted"))
    assert found, low.as_text("extracted")
    lanes = int(found.group(1))
    assert reduce_slowdown(100, lanes, 4, cpu) == min(reduce_slowdown(100, c * vf, 4, cpu) for c in ACCUMULATORS) < reduce_slowdown(100, None, 4, cpu)
    assert f"et.lanes = {lanes} : i64" in low.as_text("linalg")
    assert "convert_to_loops" in low.as_text("lanes-script")
    assert all(m in low.as_text("llvm-ir") for m in metadata(lanes, vf))
    np.testing.assert_allclose(et.kernel(dot_all, target=target)(a, b), np.sum(a.astype(np.float64) * b), rtol=1e-5)


@pytest.mark.parametrize("fn", [dot_all, lambda a, b: np.sum(a * b, axis=0)], ids=["rows-of-1000", "column-sums"])
def test_lanes_stay_llvms_where_they_gain_nothing(fn) -> None:
    """On an AVX-512 CPU: rows of 1000: LLVM's own four vectors with a vectorized remainder beat any
    pinned width (a pinned 64 leaves 40 elements to a scalar loop). Column sums: the innermost loop
    is parallel (vectorized across columns), so lanes do not apply."""
    a, b = (rng.standard_normal((64, 1000)).astype(np.float32) for _ in range(2))
    low = et.kernel(fn, target=AVX512).lower(a, b)
    assert "_lanes(" not in low.as_text("extracted") and "et.lanes" not in low.as_text("linalg")


@pytest.mark.parametrize("target", ["cpu", "cpu-openmp"])
def test_a_rule_pins_lanes(target: str) -> None:
    """A user's rule puts lanes the cost model would not choose in the term; the optimizer report
    prices them above LLVM's own; they reach LLVM, and the result stays NumPy's."""
    a, b = (rng.standard_normal((64, 1000)).astype(np.float32) for _ in range(2))
    k = et.kernel(dot_all, target=target, rules=pinned(4 * VF))
    comp = k.inspect(a, b)
    assert f".sum_lanes(Vec(0, 1), {4 * VF})" in comp.extracted_term
    assert comp.report.cost_after > et.kernel(dot_all, target=target).inspect(a, b).report.cost_after
    assert all(m in comp.stage("llvm-ir") for m in metadata(4 * VF))
    np.testing.assert_allclose(k(a, b), np.sum(a.astype(np.float64) * b), rtol=1e-5)


REDUCERS = {
    "sum": lambda x: np.sum(x * 2, axis=-1),
    "max_all": lambda x: np.max(x),
    "min_rows3d": lambda x: np.min(x - 1, axis=(1, 2)),
    "prod_keep": lambda x: x / np.prod(x, axis=-1, keepdims=True),
    "sum_cols": lambda x: np.sum(x, axis=0),
}


@pytest.mark.slow  # (a sweep; test_lanes' tests of chosen lanes run by default)
@settings(max_examples=25, deadline=None)
@given(name=st.sampled_from(sorted(REDUCERS)), lanes=st.sampled_from([1, 3, 5, 16, 33, 64, 200]),
       n=st.integers(1, 40), m=st.integers(1, 150), dtype=st.sampled_from(["float32", "float64", "int32"]),
       target=st.sampled_from(["cpu", "cpu-openmp"]), seed=seeds)
def test_any_lanes_match_numpy(name: str, lanes: int, n: int, m: int, dtype: str, target: str, seed: int) -> None:
    """Whatever lanes a rule puts in the term (dividing nothing, not a vector width, longer than
    the row), every reduction kind, dtype and target gives NumPy's answer."""
    fn = REDUCERS[name]
    shape = (n, 3, m) if name == "min_rows3d" else (n, m)
    if name == "prod_keep":  # products of many factors: near 1, so they neither overflow nor vanish
        x = make_array(seed, dtype, shape, lo=0.9, hi=1.1, zeros=False) if dtype != "int32" else np.ones(shape, np.int32)
    else:
        x = make_array(seed, dtype, shape, lo=-5, hi=5)
    k = et.kernel(fn, rules=pinned(lanes), target=target)
    assert "_lanes(" in k.inspect(x).extracted_term
    rtol = {"float32": 2e-5, "float64": 1e-12, "int32": 0}[dtype]
    np.testing.assert_allclose(k(x), fn(x), rtol=rtol, atol=rtol)


def test_bad_lanes_are_a_compile_error() -> None:
    x = Tensor.arg("x", Vec[i64](i64(8), i64(8)), DType.float32, Layout.C)
    term = Program(Vec[Tensor](x.max_lanes(Vec[i64](i64(1)), i64(0))))
    with pytest.raises(CompileError, match=r"max_lanes: lanes must be >= 1, got 0"):
        emit(from_term(term), ["x"], [ArgSpec((8, 8), "float32", "C")], HOST)
