"""Row fusion: `fuse_rows` in the term (chosen by the cost model), one loop over row blocks in MLIR
(lowering/rows.py), and the same results as NumPy for any shape, layout, dtype and target."""

from __future__ import annotations

import numpy as np
import pytest
from egglog import EGraph, Vec, i64
from hypothesis import given, settings
from hypothesis import strategies as st

import egglog_tensor as et
from egglog_tensor.cost import TensorCostModel
from egglog_tensor.ir import DType, Layout, Program, Tensor, exp, fuse_rows
from strategies import check, make_array, seeds, with_layout
from test_golden import filecheck
from test_golden_fusion import naive_softmax as softmax


def layernorm(x, g):
    d = x - np.mean(x, axis=1, keepdims=True)
    return d / np.sqrt(np.mean(d * d, axis=1, keepdims=True) + 1e-5) * g


def normalize_rows(x):
    return x / np.sum(np.abs(x), axis=-1, keepdims=True)


def column_softmax(x):
    return np.exp(x - np.max(x, axis=0)) / np.sum(np.exp(x - np.max(x, axis=0)), axis=0)


F32 = np.float32
rng = np.random.default_rng(0)


def test_softmax_is_one_loop_over_row_blocks(tmp_path) -> None:
    """The extracted term row-fuses the output; after the "rows" stage every linalg op (the max,
    the sum of exp, the output pass) sits inside one scf.forall over blocks of rows."""
    x = rng.standard_normal((256, 64), F32)
    comp = et.kernel(softmax, target="cpu").inspect(x)
    assert "fuse_rows(" in comp.extracted_term
    assert "tile_using_forall" in comp.stage("rows-script")
    filecheck(comp.stage("rows"), """
CHECK-NOT: linalg.
CHECK: scf.forall
CHECK: tensor.extract_slice %{{.*}} : tensor<256x64xf32> to tensor<[[R:[0-9]+]]x64xf32>
CHECK: linalg.fill
CHECK: linalg.generic {{.*}} ins(%{{.*}} : tensor<[[R]]x64xf32>) outs(%{{.*}} : tensor<[[R]]xf32>)
CHECK: arith.maximumf
CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<[[R]]xf32>)
CHECK: math.exp
CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<[[R]]x64xf32>) attrs = {et.rows}
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
    assert "fuse_rows(" in comp.extracted_term
    rows = comp.stage("rows")
    assert rows.count("scf.forall (") == 1 and rows.index("scf.forall (") < rows.index("linalg.")
    np.testing.assert_allclose(k(x, g), layernorm(x, g), rtol=1e-5, atol=1e-5)


def test_not_chosen_without_row_reductions() -> None:
    """Column reductions broadcast along rows and plain elementwise chains have no rows to fuse."""
    x = rng.standard_normal((64, 32), F32)
    assert "fuse_rows" not in et.kernel(column_softmax).inspect(x).extracted_term
    assert "fuse_rows" not in et.kernel(lambda x: np.exp(x) * 2.0 + x).inspect(x).extracted_term


def _cost(program: Program) -> float:
    egraph = EGraph()
    egraph.register(program)
    _, cost = egraph.extract(program, include_cost=True, cost_model=TensorCostModel())
    return cost.total


def test_cost_of_row_fusion() -> None:
    """fuse_rows(softmax) at 4096x1024 costs about one pass over memory less per row reduction;
    around a value with no row-aligned kernels below it, it saves nothing."""
    n, m = 4096, 1024
    x = Tensor.arg("x", Vec[i64](i64(n), i64(m)), DType.float32, Layout.C)
    e = exp(x - x.max(Vec[i64](i64(1))).reshape(Vec[i64](i64(n), i64(1))))
    out = e / e.sum(Vec[i64](i64(1))).reshape(Vec[i64](i64(n), i64(1)))
    plain, fused = _cost(Program(Vec[Tensor](out))), _cost(Program(Vec[Tensor](fuse_rows(out))))
    one_pass = n * m * 4 / TensorCostModel().machine.bandwidth_gbs
    assert plain - fused > 1.5 * one_pass
    col = exp(x - x.max(Vec[i64](i64(0))))
    assert _cost(Program(Vec[Tensor](fuse_rows(col)))) >= _cost(Program(Vec[Tensor](col)))


@settings(max_examples=30)
@given(fn=st.sampled_from([softmax, layernorm, normalize_rows]), n=st.integers(1, 150), m=st.integers(1, 9),
       dtype=st.sampled_from(["float32", "float64"]), layout=st.sampled_from(["C", "F", "strided"]), seed=seeds)
def test_row_fused_kernels_match_numpy(fn, n: int, m: int, dtype: str, layout: str, seed: int) -> None:
    """Any row count (prime counts leave a remainder block), any layout, both float types."""
    x = with_layout(make_array(seed, dtype, (n, m), lo=-5, hi=5), layout)
    args = (x, make_array(seed + 1, dtype, (m,))) if fn is layernorm else (x,)
    rtol, atol = (2e-5, 2e-6) if dtype == "float32" else (1e-12, 1e-13)
    check(fn, *args, rtol=rtol, atol=atol, signed_zeros=False)
