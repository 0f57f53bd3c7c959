"""Golden tests: FileCheck patterns on the MLIR that kernels emit and on their lowering stages."""

from __future__ import annotations

import subprocess

import numpy as np
import pytest

import egglog_tensor as et
from egglog_tensor.lowering.policy import register_tile
from egglog_tensor.target import Target
from egglog_tensor.toolchain import tool_path

rng = np.random.default_rng(0)
F32 = np.float32


def filecheck(text: str, checks: str, tmp_path) -> None:
    """Run FileCheck with `checks` (CHECK lines) against `text`; fail with its diagnostics."""
    check_file = tmp_path / "checks.txt"
    check_file.write_text(checks)
    result = subprocess.run(
        [str(tool_path("FileCheck")), str(check_file), "--dump-input=fail"],
        input=text, capture_output=True, text=True,
    )
    assert result.returncode == 0, result.stderr


def stage(fn, *args, target: str = "cpu", name: str = "linalg") -> str:
    return et.kernel(fn, target=target).inspect(*args).stage(name)


def test_elementwise_chain_is_one_generic(tmp_path) -> None:
    A, b = rng.standard_normal((64, 32), F32), rng.standard_normal(32, F32)
    text = stage(lambda A, b: np.exp(np.maximum(A + b, 0.0)) * 0.5 + A, A, b)
    filecheck(text, """
CHECK: #[[ID:map[0-9]*]] = affine_map<(d0, d1) -> (d0, d1)>
CHECK: #[[ROW:map[0-9]*]] = affine_map<(d0, d1) -> (d1)>
CHECK: func.func @kernel(%arg0: memref<64x32xf32>, %arg1: memref<32xf32>, %arg2: memref<64x32xf32> {et.output})
CHECK-SAME: llvm.emit_c_interface
CHECK: linalg.generic {indexing_maps = [#[[ID]], #[[ROW]], #[[ID]]], iterator_types = ["parallel", "parallel"]}
CHECK: arith.addf
CHECK: arith.maximumf
CHECK: math.exp
CHECK: arith.mulf
CHECK: arith.addf
CHECK: linalg.yield
CHECK-NOT: linalg.generic
CHECK: bufferization.materialize_in_destination
""", tmp_path)
    assert text.count("linalg.generic") == 1


def test_transpose_is_an_indexing_map(tmp_path) -> None:
    A, B = rng.standard_normal((16, 24), F32), rng.standard_normal((24, 16), F32)
    text = stage(lambda A, B: A.T + B, A, B)
    filecheck(text, """
CHECK: #[[T:map[0-9]*]] = affine_map<(d0, d1) -> (d1, d0)>
CHECK-NOT: linalg.transpose
CHECK: linalg.generic {indexing_maps = [#[[T]], #{{map[0-9]*}}, #{{map[0-9]*}}]
CHECK-SAME: ins(%{{.*}}, %{{.*}} : tensor<16x24xf32>, tensor<24x16xf32>)
""", tmp_path)
    assert text.count("linalg.generic") == 1


def test_transposed_matmul_operand_is_an_indexing_map(tmp_path) -> None:
    A, B = rng.standard_normal((24, 16), F32), rng.standard_normal((24, 8), F32)
    text = stage(lambda A, B: A.T @ B, A, B)
    filecheck(text, """
CHECK: #[[AT:map[0-9]*]] = affine_map<(d0, d1, d2) -> (d2, d0)>
CHECK: linalg.fill
CHECK: linalg.matmul indexing_maps = [#[[AT]], #{{map[0-9]*}}, #{{map[0-9]*}}] {et.tiles = [{{.*}}], et.vec = [{{.*}}]} ins(%{{.*}}, %{{.*}} : tensor<24x16xf32>, tensor<24x8xf32>)
CHECK-NOT: linalg.generic
""", tmp_path)


def test_reduction_fuses_its_producer(tmp_path) -> None:
    """np.sum(a*b) reads a and b once; as a blocked sum (lowering/blocking.py): blocks of rows of
    both operands (views: expand_shape), the rows past the last block added into its partial, then
    the partials summed."""
    a, b = rng.standard_normal((32, 64), F32), rng.standard_normal((32, 64), F32)
    text = stage(lambda a, b: np.sum(a * b), a, b)
    filecheck(text, """
CHECK-NOT: linalg.generic
CHECK: tensor.expand_shape {{.*}} : tensor<[[R:[0-9]+]]x64xf32> into tensor<[[B:[0-9]+]]x{{[0-9]+}}x64xf32>
CHECK: linalg.fill
CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "reduction", "reduction"]} ins(%{{.*}}, %{{.*}} : tensor<[[B]]x{{[0-9]+}}x64xf32>, tensor<[[B]]x{{[0-9]+}}x64xf32>) outs(%{{.*}} : tensor<[[B]]xf32>)
CHECK: %[[P:.*]] = arith.mulf
CHECK: arith.addf %{{.*}}, %[[P]]
CHECK: linalg.generic {{.*}} iterator_types = ["reduction", "reduction"]} ins({{.*}}) outs(%{{.*}} : tensor<f32>)
CHECK: arith.mulf
CHECK: tensor.insert_slice
CHECK: linalg.generic {{.*}} iterator_types = ["reduction"]} ins(%{{.*}} : tensor<[[B]]xf32>) outs(%{{.*}} : tensor<f32>)
CHECK-NOT: arith.mulf
CHECK-NOT: linalg.generic
""", tmp_path)


def test_stencil_reads_shifted_windows(tmp_path) -> None:
    a = rng.standard_normal(100, F32)
    text = stage(lambda a: a[1:-1] + a[:-2], a)
    filecheck(text, """
CHECK-DAG: affine_map<(d0) -> (d0 + 1)>
CHECK: tensor.extract_slice %{{.*}}[0] [98] [1] : tensor<100xf32> to tensor<98xf32>
CHECK: linalg.generic
CHECK: arith.addf
CHECK-NOT: linalg.generic
""", tmp_path)


# the 8x8 product's register tile: policy.register_tile cut to the matrix (8 rows with AVX-512, 6 with AVX2)
TILE = f"vector<{min(8, register_tile(4, Target.host())[0])}x8xf32>"


@pytest.mark.parametrize(
    ("target", "name", "checks"),
    [
        # the matmul was tiled and vectorized on tensors by the "tile" stage (lowering/tiling.py)
        ("cpu", "bufferize", "CHECK-NOT: tensor<\nCHECK: linalg.fill {{.*}} outs(%arg2 : memref<8x8xf32>)\n"
                             f"CHECK: scf.for {{{{.*}}}} -> ({TILE})\nCHECK: vector.fma {{{{.*}}}} : vector<8xf32>\n"
                             "CHECK: vector.transfer_write {{.*}}, %arg2"),
        ("cpu", "loops", f"CHECK: scf.for\nCHECK: scf.for\nCHECK: memref.store\nCHECK: scf.for {{{{.*}}}} -> ({TILE})\nCHECK: vector.fma"),
        # 8x8 is below lowering/parallel.py MIN_WORK: no parallel region (tests/test_parallel.py has large ones)
        ("cpu-openmp", "openmp", f"CHECK-NOT: omp.parallel\nCHECK: scf.for {{{{.*}}}} -> ({TILE})"),
        ("cpu", "llvm", "CHECK: llvm.func @kernel\nCHECK: llvm.func @_mlir_ciface_kernel"),
    ],
)
def test_lowering_stages(tmp_path, target: str, name: str, checks: str) -> None:
    A = rng.standard_normal((8, 8), F32)
    filecheck(stage(lambda A, B: A @ B, A, A, target=target, name=name), checks + "\n", tmp_path)
