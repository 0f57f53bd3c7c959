// RUN: %python -m egglog_tensor.opt --stage rows %s | %FileCheck %s
// The et.rows op (softmax's division, et.rows = 16 here) is tiled into blocks of 16 rows, one
// scf.forall over 4 blocks, and every producer of its rows (both row reductions and their fills,
// the exp) is fused into that loop: the block's intermediates are tensors of 16 rows.
// CHECK-LABEL: func.func @kernel(
// CHECK-NOT:     linalg.
// CHECK:         scf.forall (%{{.*}}) in (4) shared_outs(
// CHECK:           tensor.extract_slice {{.*}} [16, 1000] [1, 1] : tensor<64x1000xf32> to tensor<16x1000xf32>
// CHECK:           linalg.fill {{.*}} -> tensor<16xf32>
// CHECK:           linalg.generic {{.*}}["parallel", "reduction"]{{.*}} ins(%{{.*}} : tensor<16x1000xf32>) outs(%{{.*}} : tensor<16xf32>)
// CHECK:             arith.maximumf
// CHECK:             math.exp
// CHECK:           linalg.fill {{.*}} -> tensor<16xf32>
// CHECK:             arith.addf
// CHECK:           linalg.generic {{.*}} outs(%{{.*}} : tensor<16x1000xf32>) {{.*}}et.rows = array<i64: 16>
// CHECK:             arith.divf
// CHECK:           scf.forall.in_parallel {
// CHECK-NEXT:        tensor.parallel_insert_slice {{.*}} : tensor<16x1000xf32> into tensor<64x1000xf32>
// CHECK-NOT:     linalg.
// CHECK:         bufferization.materialize_in_destination
// Input: the emitter's linalg for a softmax of 64x1000 float32 (et.rows set to 16 by hand).
#map = affine_map<(d0, d1) -> (d0, d1)>
#map1 = affine_map<(d0, d1) -> (d0)>
module {
  func.func @kernel(%arg0: memref<64x1000xf32>, %arg1: memref<64x1000xf32> {et.output}) attributes {llvm.emit_c_interface} {
    %0 = bufferization.to_tensor %arg0 restrict : memref<64x1000xf32> to tensor<64x1000xf32>
    %1 = tensor.empty() : tensor<64xf32>
    %cst = arith.constant 0xFF800000 : f32
    %2 = linalg.fill ins(%cst : f32) outs(%1 : tensor<64xf32>) -> tensor<64xf32>
    %3 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "reduction"]} ins(%0 : tensor<64x1000xf32>) outs(%2 : tensor<64xf32>) {
    ^bb0(%in: f32, %out: f32):
      %11 = arith.maximumf %out, %in : f32
      linalg.yield %11 : f32
    } -> tensor<64xf32>
    %4 = tensor.empty() : tensor<64x1000xf32>
    %5 = linalg.generic {indexing_maps = [#map, #map1, #map], iterator_types = ["parallel", "parallel"]} ins(%0, %3 : tensor<64x1000xf32>, tensor<64xf32>) outs(%4 : tensor<64x1000xf32>) {
    ^bb0(%in: f32, %in_1: f32, %out: f32):
      %11 = arith.subf %in, %in_1 : f32
      %12 = math.exp %11 : f32
      linalg.yield %12 : f32
    } -> tensor<64x1000xf32>
    %6 = tensor.empty() : tensor<64xf32>
    %cst_0 = arith.constant 0.000000e+00 : f32
    %7 = linalg.fill ins(%cst_0 : f32) outs(%6 : tensor<64xf32>) -> tensor<64xf32>
    %8 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "reduction"]} ins(%5 : tensor<64x1000xf32>) outs(%7 : tensor<64xf32>) {
    ^bb0(%in: f32, %out: f32):
      %11 = arith.addf %out, %in fastmath<reassoc> : f32
      linalg.yield %11 : f32
    } -> tensor<64xf32>
    %9 = tensor.empty() : tensor<64x1000xf32>
    %10 = linalg.generic {indexing_maps = [#map, #map1, #map], iterator_types = ["parallel", "parallel"]} ins(%5, %8 : tensor<64x1000xf32>, tensor<64xf32>) outs(%9 : tensor<64x1000xf32>) attrs =  {et.rows = array<i64: 16>} {
    ^bb0(%in: f32, %in_1: f32, %out: f32):
      %11 = arith.divf %in, %in_1 : f32
      linalg.yield %11 : f32
    } -> tensor<64x1000xf32>
    bufferization.materialize_in_destination %10 in restrict writable %arg1 : (tensor<64x1000xf32>, memref<64x1000xf32>) -> ()
    return
  }
}
