"""Row fusion: `fuse_rows` in the term (chosen by the cost model), one loop over row blocks in MLIR
(lowering/stages/rows.py), and the same results as NumPy for any shape, layout, dtype and target."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
import re

from egglog import EGraph, Vec, i64, rewrite, ruleset
from hypothesis import given, settings
from hypothesis import strategies as st

import egglog_tensor as et
from egglog_tensor.cost import TensorCostModel, reduce_slowdown, rows_slowdown
from egglog_tensor.errors import CompileError
from egglog_tensor.ir import DType, Layout, Program, Tensor, exp, from_term, fuse_rows, fuse_rows_tiled
from egglog_tensor.lowering.emit import emit
from egglog_tensor.target import NAMED, Target
from egglog_tensor.spec import ArgSpec
from egglog_tensor.rulesets import algebra, fusion, layout
from strategies import check, make_array, seeds, with_layout
from test_golden import filecheck
from test_golden_fusion import naive_softmax as softmax

HOST = Target.host()
AVX512 = NAMED["avx512"]  # the cost model's functions priced for one machine, whatever the host
TWO = replace(AVX512, name="cpu-openmp", threads=2)


def layernorm(x, g):
    d = x - np.mean(x, axis=1, keepdims=True)
    return d / np.sqrt(np.mean(d * d, axis=1, keepdims=True) + 1e-5) * g


def normalize_rows(x):
    return x / np.sum(np.abs(x), axis=-1, keepdims=True)


def spread(x):
    """Two row reductions of one input, a rank-1 output: one loop over row blocks reads x once."""
    return np.max(np.abs(x), axis=-1) - np.min(x, axis=1)


def column_softmax(x):
    return np.exp(x - np.max(x, axis=0)) / np.sum(np.exp(x - np.max(x, axis=0)), axis=0)


F32 = np.float32
rng = np.random.default_rng(0)


def test_softmax_is_one_loop_over_row_blocks(tmp_path) -> None:
    """The extracted term row-fuses the output and materializes the shared exp once for both its
    readers; after the "rows" stage every linalg op (the max, the exp into a block buffer, its sum,
    the output pass) sits inside one scf.forall over blocks of rows, and exp is computed once."""
    x = rng.standard_normal((256, 64), F32)
    comp = et.kernel(softmax, target="cpu").inspect(x)
    assert "fuse_rows_tiled(" in comp.extracted_term and "materialize(exp(" in comp.extracted_term.replace("\n", "").replace(" ", "")
    assert "tile_using_forall" in comp.stage("rows-script")
    assert comp.stage("rows").count("math.exp") == 1
    filecheck(comp.stage("rows"), """
CHECK-NOT: linalg.
CHECK: scf.forall
CHECK: tensor.extract_slice %{{.*}} : tensor<256x64xf32> to tensor<[[R:[0-9]+]]x64xf32>
CHECK: linalg.fill
CHECK: linalg.generic {{.*}} ins(%{{.*}} : tensor<[[R]]x64xf32>) outs(%{{.*}} : tensor<[[R]]xf32>)
CHECK: arith.maximumf
CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<[[R]]x64xf32>)
CHECK: math.exp
CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<[[R]]xf32>)
CHECK: arith.addf
CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<[[R]]x64xf32>) attrs = {et.rows = array<i64: [[R]]>}
CHECK: arith.divf
CHECK: tensor.parallel_insert_slice
CHECK-NOT: linalg.
CHECK: return
""", tmp_path)
    np.testing.assert_allclose(et.kernel(softmax, target="cpu")(x), softmax(x), rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("target", ["cpu", "cpu-openmp"])
def test_layernorm_row_fused_on_both_targets(target: str) -> None:
    x, g = rng.standard_normal((512, 96), F32), rng.standard_normal(96, F32)
    k = et.kernel(layernorm, target=target)
    comp = k.inspect(x, g)
    assert "fuse_rows_tiled(" in comp.extracted_term
    rows = comp.stage("rows")
    assert rows.count("scf.forall (") == 1 and rows.index("scf.forall (") < rows.index("linalg.")
    assert "materialize_shared" not in comp.extracted_term  # x - mean: cheaper recomputed than stored
    np.testing.assert_allclose(k(x, g), layernorm(x, g), rtol=1e-5, atol=1e-5)


def test_not_chosen_without_row_reductions() -> None:
    """Column reductions broadcast along rows and plain elementwise chains have no rows to fuse."""
    x = rng.standard_normal((64, 32), F32)
    assert "fuse_rows" not in et.kernel(column_softmax).inspect(x).extracted_term
    assert "materialize_shared" not in et.kernel(column_softmax).inspect(x).extracted_term
    assert "fuse_rows" not in et.kernel(lambda x: np.exp(x) * 2.0 + x).inspect(x).extracted_term


def _cost(program: Program) -> float:
    egraph = EGraph()
    egraph.register(program)
    _, cost = egraph.extract(program, include_cost=True, cost_model=TensorCostModel(HOST))
    return cost.total


def test_cost_of_row_fusion() -> None:
    """Row-fused softmax at 4096x1024 (blocks of 64 rows) costs
    about one pass over memory less per row reduction; around a value with no row-aligned kernels
    below it, row fusion saves nothing."""
    n, m = 4096, 1024
    x = Tensor.arg("x", Vec[i64](i64(n), i64(m)), DType.float32, Layout.C)
    e = exp(x - x.max(Vec[i64](i64(1))).reshape(Vec[i64](i64(n), i64(1))))
    out = e / e.sum(Vec[i64](i64(1))).reshape(Vec[i64](i64(n), i64(1)))
    tiles = Vec[i64](i64(64))
    plain, fused = _cost(Program(Vec[Tensor](out))), _cost(Program(Vec[Tensor](fuse_rows_tiled(out, tiles))))
    one_pass = n * m * 4 / TensorCostModel(HOST).machine.bandwidth_gbs
    assert plain - fused > 1.5 * one_pass
    col = exp(x - x.max(Vec[i64](i64(0))))
    assert _cost(Program(Vec[Tensor](fuse_rows(col)))) >= _cost(Program(Vec[Tensor](col)))


@settings(max_examples=30)
@given(fn=st.sampled_from([softmax, layernorm, normalize_rows]), n=st.integers(1, 150), m=st.integers(1, 9),
       dtype=st.sampled_from(["float32", "float64"]), layout=st.sampled_from(["C", "F", "strided"]), seed=seeds)
@pytest.mark.slow  # (a drawn sweep: minutes on a loaded 2-core machine; .ci/run runs it after the default run)
def test_row_fused_kernels_match_numpy(fn, n: int, m: int, dtype: str, layout: str, seed: int) -> None:
    """Any row count (prime counts leave a remainder block), any layout, both float types."""
    x = with_layout(make_array(seed, dtype, (n, m), lo=-5, hi=5), layout)
    args = (x, make_array(seed + 1, dtype, (m,))) if fn is layernorm else (x,)
    rtol, atol = (2e-5, 2e-6) if dtype == "float32" else (1e-12, 1e-13)
    check(fn, *args, rtol=rtol, atol=atol, signed_zeros=False)


def row_tiles(rows: int):
    """A user-written schedule: the default rulesets, but row loops only with these tiles (the
    untiled form subsumed: extraction cannot pick it)."""
    mine = ruleset(name=f"rows_{rows}")

    @mine.register
    def _(a: Tensor) -> object:
        yield rewrite(fuse_rows(a), subsume=True).to(fuse_rows_tiled(a, Vec[i64](i64(rows))))

    return algebra + fusion + layout + mine


def test_row_tiles_and_lanes_are_chosen_in_the_term_and_reach_llvm() -> None:
    """On an AVX-512 CPU (lowered, not run: any host) the cost model picks the rows per block from
    rulesets.tiling's candidates: they show as et.rows in the MLIR and tile the row loop. Rows of 100
    (3 x 32 + 4) are priced faster with two vector accumulators than LLVM's own four, so the row max
    and the row sum choose their lanes (`max_lanes`, `sum_lanes`): they keep them inside the row loop
    and end as LLVM loop metadata. On the host, its own choice matches NumPy."""
    x = rng.standard_normal((512, 100), F32)
    low = et.kernel(softmax, target=AVX512).lower(x)
    term = low.as_text("extracted")
    block = int(re.search(r"fuse_rows_tiled\(.*Vec\((\d+)\)\)\)", term, re.S).group(1))
    assert block in (2, 4, 8, 16, 32, 64)
    assert block * 100 * 4 * 2 <= AVX512.l2 // 2  # the block's rows of x and of the output fit L2
    assert f"et.rows = array<i64: {block}>" in low.as_text("linalg")
    assert f"tile_sizes [{block}, 0]" in low.as_text("rows-script")
    lanes = {int(v) for v in re.findall(r"\.(?:max|sum)_lanes\(Vec\(1\), (\d+)\)", term)}
    vf = AVX512.simd // 4
    best = min((k * vf for k in (1, 2, 4, 8)), key=lambda n: reduce_slowdown(100, n, 4, AVX512))
    assert reduce_slowdown(100, best, 4, AVX512) < reduce_slowdown(100, None, 4, AVX512)
    assert len(re.findall(r"\.(?:max|sum)_lanes\(", term)) == 2 and lanes == {best}, term
    assert low.as_text("rows").count("et.lanes") == 2  # the fused clones keep their lanes
    assert low.as_text("lanes-script").count("convert_to_loops") == 2
    ir_text = low.as_text("llvm-ir")
    assert f'!{{!"llvm.loop.vectorize.width", i32 {vf}}}' in ir_text
    assert all(f'!{{!"llvm.loop.interleave.count", i32 {min(16, n // vf)}}}' in ir_text for n in lanes)
    np.testing.assert_allclose(et.kernel(softmax, target="cpu")(x), softmax(x), rtol=1e-5, atol=1e-7)


def test_reduce_slowdown_prices_latency_chains_and_remainders() -> None:
    vf = AVX512.simd // 4
    one, four = reduce_slowdown(1024, vf, 4, AVX512), reduce_slowdown(1024, 4 * vf, 4, AVX512)
    assert one > 2 * four and four < 1.5  # per reduced element: one chain waits on latency
    assert reduce_slowdown(1000, 4 * vf, 4, AVX512) > reduce_slowdown(1000, 2 * vf, 4, AVX512)  # 1000 % 64 elements one at a time
    assert reduce_slowdown(4 * vf, 2 * vf, 4, AVX512) < reduce_slowdown(4 * vf, 4 * vf, 4, AVX512)  # a short row: combining 4 sums
    lanes = [k * vf for k in (1, 2, 4, 8)]
    assert reduce_slowdown(1000, None, 4, AVX512) < min(reduce_slowdown(1000, n, 4, AVX512) for n in lanes)  # LLVM's vectorized remainder
    assert reduce_slowdown(100, 2 * vf, 4, AVX512) < reduce_slowdown(100, None, 4, AVX512)  # 100 = 3 x 32 + 4: two vectors, combined once


def test_rows_slowdown_prices_cache_fit_and_balance() -> None:
    shape = (4096, 1024)
    rows_fit = AVX512.l2 // 2 // (1024 * 4 * 2)
    assert rows_slowdown(shape, rows_fit, 4, 2, AVX512)[0] == 1.0
    assert rows_slowdown(shape, 2 * rows_fit, 4, 2, AVX512)[0] > 1.0
    assert rows_slowdown((96, 64), 64, 4, 2, TWO)[1] > 1.0  # two blocks, one of them partial
    assert rows_slowdown((128, 64), 64, 4, 2, TWO)[1] == 1.0
    assert rows_slowdown(shape, 2, 4, 2, AVX512)[2] > rows_slowdown(shape, 64, 4, 2, AVX512)[2]  # per-block overhead
    # a block past half the L2 is read from memory by each pass over it (np.var of all of x: three)
    assert rows_slowdown(shape, 2 * rows_fit, 4, 2, AVX512, passes=3)[0] == 3.0
    assert rows_slowdown(shape, rows_fit, 4, 2, AVX512, passes=3)[0] == 1.0


@pytest.mark.slow  # (a sweep; test_rows' tests of each tile choice run by default)
@settings(max_examples=20, deadline=None)
@given(fn=st.sampled_from([softmax, layernorm, normalize_rows, spread]), n=st.integers(1, 70), m=st.integers(1, 150),
       tiles=st.sampled_from([(1,), (3,), (7,), (64,), (200,), None]),
       dtype=st.sampled_from(["float32", "float64"]), target=st.sampled_from(["cpu", "cpu-openmp"]), seed=seeds)
def test_any_row_tiles_match_numpy(fn, n: int, m: int, tiles, dtype: str, target: str, seed: int) -> None:
    """Whatever tiles a (user's) rule puts in the term, including blocks that divide nothing or
    exceed the rows; None: untiled fuse_rows (the lowering's block). (Lanes: tests/test_lanes.py.)"""
    x = make_array(seed, dtype, (n, m), lo=-5, hi=5)
    args = (x, make_array(seed + 1, dtype, (m,))) if fn is layernorm else (x,)
    rules = algebra + fusion + layout if tiles is None else row_tiles(*tiles)
    rtol, atol = (2e-5, 2e-6) if dtype == "float32" else (1e-12, 1e-13)
    np.testing.assert_allclose(et.kernel(fn, rules=rules, target=target)(*args), fn(*args), rtol=rtol, atol=atol)


def test_bad_row_tiles_are_a_compile_error() -> None:
    """Tiles a user's rule wrote wrong are refused when emitted (the cost model would not pick them)."""
    x = Tensor.arg("x", Vec[i64](i64(8), i64(8)), DType.float32, Layout.C)
    term = Program(Vec[Tensor](fuse_rows_tiled(exp(x), Vec[i64](i64(0)))))
    with pytest.raises(CompileError, match=r"fuse_rows_tiled: tiles must be Vec\(rows per block >= 1\), got \(0,\)"):
        emit(from_term(term), ["x"], [ArgSpec((8, 8), "float32", "C")], HOST)


@pytest.mark.parametrize("target", ["cpu", "cpu-openmp"])
def test_rank1_output_of_two_row_reductions_is_one_loop(target: str) -> None:
    x = rng.standard_normal((2048, 512), F32)
    k = et.kernel(spread, target=target)
    comp = k.inspect(x)
    assert "fuse_rows_tiled(" in comp.extracted_term
    rows = comp.stage("rows")
    assert rows.count("scf.forall (") == 1 and rows.index("scf.forall (") < rows.index("linalg.")
    np.testing.assert_allclose(k(x), spread(x), rtol=1e-6)
