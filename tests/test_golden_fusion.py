"""Golden tests on fusion decisions: what the extracted term materializes is what the MLIR computes."""

from __future__ import annotations

import numpy as np

import egglog_tensor as et
from test_golden import filecheck

rng = np.random.default_rng(0)
F32 = np.float32


def naive_softmax(x):
    return np.exp(x - np.max(x, axis=1, keepdims=True)) / np.sum(np.exp(x - np.max(x, axis=1, keepdims=True)), axis=1, keepdims=True)


def test_naive_softmax_shares_the_max_and_the_exp(tmp_path) -> None:
    """The repeated max is one reduction and the repeated exp one loop nest, read by the sum and
    by the output pass (materialize_shared: inside the row-fused loop, a block in cache)."""
    x = rng.standard_normal((64, 32), F32)
    k = et.kernel(naive_softmax)
    comp = k.inspect(x)
    text = comp.stage("linalg")
    filecheck(text, """
CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%{{.*}} : tensor<64x32xf32>) outs(%{{.*}} : tensor<64xf32>)
CHECK: arith.maximumf
CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel"]} ins(%{{.*}}, %{{.*}} : tensor<64x32xf32>, tensor<64xf32>) outs(%{{.*}} : tensor<64x32xf32>)
CHECK: arith.subf
CHECK: math.exp
CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%[[E:[0-9]+]] : tensor<64x32xf32>) outs(%{{.*}} : tensor<64xf32>)
CHECK: arith.addf
CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel"]} ins(%[[E]], %{{.*}} : tensor<64x32xf32>, tensor<64xf32>) outs(%{{.*}} : tensor<64x32xf32>)
CHECK-NOT: math.exp
CHECK: arith.divf
CHECK-NOT: linalg.generic
""", tmp_path)
    assert text.count("arith.maximumf") == 1 and text.count("math.exp") == 1
    assert "materialize(" in comp.extracted_term  # materialize_shared extracts as the materialize it compiles to
    np.testing.assert_allclose(k(x), naive_softmax(x), rtol=1e-5, atol=1e-7)


def test_matmul_bias_relu_is_matmul_plus_one_epilogue(tmp_path) -> None:
    a, b, c = rng.standard_normal((32, 16), F32), rng.standard_normal((16, 24), F32), rng.standard_normal(24, F32)
    fn = lambda a, b, c: np.maximum(a @ b + c, 0.0)  # noqa: E731
    text = et.kernel(fn).inspect(a, b, c).stage("linalg")
    filecheck(text, """
CHECK: linalg.matmul
CHECK: linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<32x24xf32>, tensor<24xf32>)
CHECK-NEXT: ^bb0
CHECK-NEXT: arith.addf
CHECK: arith.maximumf
CHECK-NOT: linalg.generic
""", tmp_path)
    np.testing.assert_allclose(et.kernel(fn)(a, b, c), fn(a, b, c), rtol=1e-5, atol=1e-5)


def test_small_broadcast_operand_is_materialized_once(tmp_path) -> None:
    """exp(b) read under a broadcast: the cost model materializes it (n exps, not n*m)."""
    x, b = rng.standard_normal((256, 128), F32), rng.standard_normal(128, F32)
    fn = lambda x, b: x + np.exp(b) * 2.0  # noqa: E731
    comp = et.kernel(fn).inspect(x, b)
    assert "materialize(exp(" in comp.extracted_term
    filecheck(comp.stage("linalg"), """
CHECK: linalg.generic {{.*}} ins(%{{.*}} : tensor<128xf32>) outs(%{{.*}} : tensor<128xf32>)
CHECK: math.exp
CHECK: linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<256x128xf32>, tensor<128xf32>)
CHECK-NOT: math.exp
CHECK: linalg.yield
""", tmp_path)
    np.testing.assert_allclose(et.kernel(fn)(x, b), fn(x, b), rtol=1e-6, atol=2e-6)


def test_without_fusion_rules_everything_fuses() -> None:
    """rules=None: no materialize choices, so the broadcast operand is recomputed inline."""
    x, b = rng.standard_normal((8, 4), F32), rng.standard_normal(4, F32)
    fn = lambda x, b: x + np.exp(b)  # noqa: E731
    comp = et.kernel(fn, rules=None).inspect(x, b)
    assert "materialize" not in comp.extracted_term and comp.stage("linalg").count("linalg.generic") == 1
