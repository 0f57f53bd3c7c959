// RUN: %python -m egglog_tensor.opt --target cpu-openmp --threads 4 --stage parallel %s | %FileCheck %s
// The row reduction is split into one chunk of rows per thread (4 here): an scf.forall whose body
// reduces a 16-row slice with the same linalg op (its et.lanes kept).
// CHECK-LABEL: func.func @kernel(
// CHECK:         scf.forall (%{{.*}}) in (4) shared_outs(
// CHECK:           tensor.extract_slice {{.*}} [16, 4096] [1, 1] : tensor<64x4096xf32> to tensor<16x4096xf32>
// CHECK:           linalg.generic {{.*}} ins(%{{.*}} : tensor<16x4096xf32>) outs(%{{.*}} : tensor<16xf32>) {{.*}}et.lanes = 64
// CHECK:           scf.forall.in_parallel {
// CHECK-NEXT:        tensor.parallel_insert_slice {{.*}} [16] [1] : tensor<16xf32> into tensor<64xf32>
// CHECK:         bufferization.materialize_in_destination
// Input: the IR after `rows` (cpu-openmp, 4 threads) for a.sum(axis=1), (64,4096) float32.
#map = affine_map<(d0, d1) -> (d0, d1)>
#map1 = affine_map<(d0, d1) -> (d0)>
module {
  func.func @kernel(%arg0: memref<64x4096xf32>, %arg1: memref<64xf32> {et.output}) attributes {llvm.emit_c_interface} {
    %0 = bufferization.to_tensor %arg0 restrict : memref<64x4096xf32> to tensor<64x4096xf32>
    %1 = tensor.empty() : tensor<64xf32>
    %cst = arith.constant 0.000000e+00 : f32
    %2 = linalg.fill ins(%cst : f32) outs(%1 : tensor<64xf32>) -> tensor<64xf32>
    %3 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "reduction"]} ins(%0 : tensor<64x4096xf32>) outs(%2 : tensor<64xf32>) attrs =  {et.lanes = 64 : i64} {
    ^bb0(%in: f32, %out: f32):
      %4 = arith.addf %out, %in fastmath<reassoc> : f32
      linalg.yield %4 : f32
    } -> tensor<64xf32>
    bufferization.materialize_in_destination %3 in restrict writable %arg1 : (tensor<64xf32>, memref<64xf32>) -> ()
    return
  }
}
