"""Einsum's contraction order chosen in the e-graph (issue 24): a matrix chain of 3+ operands is traced
as `einsum_matmul` products that reassociate without fast math, and the extracted order is the
dynamic program's optimum (tracing/einsum.py's optimal_tree, the oracle here); `A @ B @ C` written
by the user keeps its order. Also: einsum, tensordot and `@` spell one term, and the batched matvec
as a streamed multiply-sum."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from test_golden import filecheck, stage

import egglog_tensor as et
from egglog_tensor.graph import Node
from egglog_tensor.tracing.einsum import optimal_tree

rng = np.random.default_rng(0)
PRODUCTS = ("matmul", "matmul_tiled", "einsum_matmul")
LETTERS = "abcdefgh"

# matrix chains: the dimensions d0..dn (operand i is d_i x d_{i+1}) and the DP's best tree, each at
# least 1.5x cheaper than the next tree (on near ties the cost model, which prices memory traffic and
# tiling too, may take the other: 10x200x10x300x5 comes out (01)(23), 1.4% more multiply-adds)
CHAINS = {
    "balanced": ((10, 1000, 10, 1000, 10), ((0, 1), (2, 3))),  # neither left-to-right nor right-to-left
    "right": ((200, 300, 300, 300, 20), (0, (1, (2, 3)))),
    "left": ((20, 200, 100, 200, 100), (((0, 1), 2), 3)),
    "inner-first": ((200, 300, 300, 20, 300), ((0, (1, 2)), 3)),
    "inner-last": ((300, 20, 300, 300, 200), (0, ((1, 2), 3))),
    "three": ((200, 100, 200, 20), (0, (1, 2))),
    "five": ((20, 200, 100, 5, 100, 200), ((0, (1, 2)), (3, 4))),
}


def chain_spec(n: int) -> str:
    """The einsum subscripts of an n-matrix chain: ab,bc,...->a<last>."""
    return ",".join(LETTERS[i : i + 2] for i in range(n)) + f"->a{LETTERS[n]}"


def chain_cost(tree: Any, dims: tuple[int, ...]) -> tuple[int, int, int]:
    """(multiply-adds, first operand, last operand) of a contraction tree over a matrix chain."""
    if isinstance(tree, int):
        return 0, tree, tree
    (cl, lo, mid), (cr, mid2, hi) = chain_cost(tree[0], dims), chain_cost(tree[1], dims)
    assert mid2 == mid + 1, tree
    return cl + cr + dims[lo] * dims[mid + 1] * dims[hi + 1], lo, hi


def extracted_tree(node: Node) -> Any:
    """The products of an extracted chain as a tree of operand numbers (arguments x0, x1, ...)."""
    if node.op == "arg":
        return int(node.attrs[0].removeprefix("x"))
    assert node.op in PRODUCTS, node.op
    return extracted_tree(node.inputs[0]), extracted_tree(node.inputs[1])


def chain_kernel(n: int, **options: Any) -> et.Kernel:
    spec = chain_spec(n)
    return et.kernel(lambda *x: np.einsum(spec, *x), **options)


def dp_tree(dims: tuple[int, ...]) -> Any:
    """The dynamic program's best tree for the chain of these dimensions."""
    n = len(dims) - 1
    sizes = {LETTERS[i]: d for i, d in enumerate(dims)}
    return optimal_tree([{LETTERS[i], LETTERS[i + 1]} for i in range(n)], {"a", LETTERS[n]}, sizes)


@pytest.mark.parametrize("name", CHAINS)
def test_chain_comes_out_in_the_dp_order(name: str) -> None:
    dims, expected = CHAINS[name]
    n = len(dims) - 1
    assert dp_tree(dims) == expected  # the oracle agrees with the case's label
    ops = [rng.standard_normal((dims[i], dims[i + 1])) for i in range(n)]
    kernel = chain_kernel(n)
    comp = kernel.inspect(*ops)
    assert comp.report.stop_reason == "saturated", str(comp.report)  # nothing was cut
    (root,) = comp.outputs
    assert extracted_tree(root) == expected
    want = np.einsum(chain_spec(n), *ops, optimize=True)  # (unoptimized: one loop over every index)
    np.testing.assert_allclose(kernel(*ops), want, rtol=1e-12, atol=1e-12 * np.abs(want).max())


def test_a_user_written_chain_keeps_its_order_without_fastmath() -> None:
    """`(A @ B) @ x` as written, though `A @ (B @ x)` is cheaper: reordering changes rounding."""
    a, b, x = (rng.standard_normal(s) for s in ((300, 300), (300, 300), (300,)))
    (root,) = et.kernel(lambda a, b, x: a @ b @ x).inspect(a, b, x).outputs
    assert root.inputs[0].op in PRODUCTS and root.inputs[1].op == "arg"
    (fast,) = et.kernel(lambda a, b, x: a @ b @ x, fastmath=True).inspect(a, b, x).outputs
    assert fast.inputs[0].op == "arg" and fast.inputs[1].op in PRODUCTS


@pytest.mark.parametrize(("spec", "shapes"), [
    ("i,ij,jk->k", [(100,), (100, 300), (300, 20)]),
    ("ij,jk,k->i", [(30, 40), (40, 50), (50,)]),
    ("i,ij,j->", [(30,), (30, 40), (40,)]),
    ("bij,bjk,bkl->bil", [(4, 100, 5), (4, 5, 100), (4, 100, 3)]),
    ("ij,jk,kl->il", [(3, 1), (4, 5), (5, 2)]),  # j broadcasts
])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32])
def test_chain_forms_match_numpy(spec: str, shapes: list[tuple[int, ...]], dtype: type) -> None:
    ops = [rng.integers(-3, 4, s).astype(dtype) for s in shapes]
    got, want = et.kernel(lambda *x: np.einsum(spec, *x))(*ops), np.einsum(spec, *ops)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)  # small integers: every order is exact


def test_empty_chain_matches_numpy() -> None:
    ops = [np.ones((3, 0)), np.ones((0, 4)), np.ones((4, 2))]
    got = et.kernel(lambda *x: np.einsum("ij,jk,kl->il", *x))(*ops)
    np.testing.assert_array_equal(got, np.einsum("ij,jk,kl->il", *ops))


def test_einsum_tensordot_and_matmul_are_one_term() -> None:
    """The three spellings of a matmul extract to one term, so they emit the same MLIR."""
    a, b = rng.standard_normal((64, 48), np.float32), rng.standard_normal((48, 32), np.float32)
    spellings = [lambda a, b: np.einsum("ij,jk->ik", a, b), lambda a, b: np.tensordot(a, b, 1), lambda a, b: a @ b]
    comps = [et.kernel(f).inspect(a, b) for f in spellings]
    assert len({c.extracted_term for c in comps}) == 1
    assert len({c.stage("linalg") for c in comps}) == 1


def test_epilogue_and_transpose_laws_apply_to_an_einsum_chain() -> None:
    """An einsum chain's products are plain matmuls to the other rules: (ABC)^T + relu fuses as for `@`."""
    a, b, c = (rng.standard_normal(s, np.float32) for s in ((20, 30), (30, 40), (40, 10)))
    fn = lambda a, b, c: np.maximum(np.einsum("ij,jk,kl->li", a, b, c), 0)  # noqa: E731
    np.testing.assert_allclose(et.kernel(fn)(a, b, c), fn(a, b, c), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64, np.bool_])
@pytest.mark.parametrize("spec", ["bij,bj->bi", "bj,bjk->bk", "ibj,bj->bi"])
def test_batched_matvec_matches_numpy(spec: str, dtype: type) -> None:
    a_shape = {"bij,bj->bi": (6, 50, 70), "bj,bjk->bk": (6, 50), "ibj,bj->bi": (50, 6, 70)}[spec]
    b_shape = {"bij,bj->bi": (6, 70), "bj,bjk->bk": (6, 50, 70), "ibj,bj->bi": (6, 70)}[spec]
    a, b = (rng.integers(-3, 4, s).astype(dtype) for s in (a_shape, b_shape))
    got, want = et.kernel(lambda a, b: np.einsum(spec, a, b))(a, b), np.einsum(spec, a, b)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


def test_batched_matvec_is_accurate_at_size() -> None:
    """A 4096-long float32 batched matvec (constant inputs, exact answer 4096 * 0.1 * 3)."""
    a, x = np.full((4, 8, 4096), 0.1, np.float32), np.full((4, 4096), 3.0, np.float32)
    got = et.kernel(lambda a, x: np.einsum("bij,bj->bi", a, x))(a, x)
    np.testing.assert_allclose(got, np.einsum("bij,bj->bi", a.astype(np.float64), x.astype(np.float64)), rtol=2e-6)


def test_general_contraction_emits_one_matmul(tmp_path) -> None:
    """FileCheck on "ijk,jkl->il": the summed (j, k) collapse into one K of 20, one linalg.matmul."""
    a, b = rng.standard_normal((6, 4, 5), np.float32), rng.standard_normal((4, 5, 7), np.float32)
    filecheck(stage(lambda a, b: np.einsum("ijk,jkl->il", a, b), a, b), """
CHECK: func.func @kernel(%arg0: memref<6x4x5xf32>, %arg1: memref<4x5x7xf32>, %arg2: memref<6x7xf32> {et.output})
CHECK: %[[A:.*]] = tensor.collapse_shape %{{.*}} {{\\[\\[}}0, 1, 2]] : tensor<6x4x5xf32> into tensor<120xf32>
CHECK: %[[A2:.*]] = tensor.expand_shape %[[A]] {{\\[\\[}}0, 1]] output_shape [6, 20]
CHECK: %[[B:.*]] = tensor.collapse_shape %{{.*}} {{\\[\\[}}0, 1, 2]] : tensor<4x5x7xf32> into tensor<140xf32>
CHECK: %[[B2:.*]] = tensor.expand_shape %[[B]] {{\\[\\[}}0, 1]] output_shape [20, 7]
CHECK: linalg.matmul {{.*}}ins(%[[A2]], %[[B2]] : tensor<6x20xf32>, tensor<20x7xf32>) outs(%{{.*}} : tensor<6x7xf32>)
CHECK-NOT: linalg.generic
""", tmp_path)


def test_batch_in_an_unusual_position_emits_a_batch_matmul(tmp_path) -> None:
    """FileCheck on "ibj,jbk->bik": the batch b in the middle of both operands becomes the leading
    dim by a transpose generic each ((d0, d1, d2) -> (d1, d0, d2)), then one linalg.batch_matmul
    (its reduction is the named op's k)."""
    a, b = rng.standard_normal((6, 3, 4), np.float32), rng.standard_normal((4, 3, 5), np.float32)
    fn = lambda a, b: np.einsum("ibj,jbk->bik", a, b)  # noqa: E731
    filecheck(stage(fn, a, b), """
CHECK-DAG: #[[SWAP:map[0-9]*]] = affine_map<(d0, d1, d2) -> (d1, d0, d2)>
CHECK-DAG: #[[ID:map[0-9]*]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
CHECK: %[[A:.*]] = linalg.generic {indexing_maps = [#[[SWAP]], #[[ID]]], iterator_types = ["parallel", "parallel", "parallel"]} ins(%{{.*}} : tensor<6x3x4xf32>) outs(%{{.*}} : tensor<3x6x4xf32>)
CHECK: %[[B:.*]] = linalg.generic {indexing_maps = [#[[SWAP]], #[[ID]]], iterator_types = ["parallel", "parallel", "parallel"]} ins(%{{.*}} : tensor<4x3x5xf32>) outs(%{{.*}} : tensor<3x4x5xf32>)
CHECK: linalg.batch_matmul {{.*}}ins(%[[A]], %[[B]] : tensor<3x6x4xf32>, tensor<3x4x5xf32>) outs(%{{.*}} : tensor<3x6x5xf32>)
""", tmp_path)
    np.testing.assert_allclose(et.kernel(fn)(a, b), fn(a, b), rtol=1e-5, atol=1e-5)


def test_batched_matvec_streams_as_a_reduction(tmp_path) -> None:
    """FileCheck on "bij,bj->bi": one generic, j the innermost reduction iterator (no batch_matmul)."""
    a, x = rng.standard_normal((4, 8, 16), np.float32), rng.standard_normal((4, 16), np.float32)
    filecheck(stage(lambda a, x: np.einsum("bij,bj->bi", a, x), a, x), """
CHECK-DAG: #[[A:map[0-9]*]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
CHECK-DAG: #[[X:map[0-9]*]] = affine_map<(d0, d1, d2) -> (d0, d2)>
CHECK-DAG: #[[OUT:map[0-9]*]] = affine_map<(d0, d1, d2) -> (d0, d1)>
CHECK-NOT: linalg.batch_matmul
CHECK: linalg.generic {indexing_maps = [#[[A]], #[[X]], #[[OUT]]], iterator_types = ["parallel", "parallel", "reduction"]}
CHECK: arith.mulf
CHECK: arith.addf
CHECK-NOT: linalg.batch_matmul
""", tmp_path)
