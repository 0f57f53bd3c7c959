// RUN: %python -m egglog_tensor.opt --stage strips --cpu avx2 %s | %FileCheck %s
// np.var(x, axis=0) of 64x2500 float32 (640 KB, more than half avx2's 512 KB L2): the column means
// and the squared deviations from them both reduce x's rows, so the consumer-most op (the division
// by n) is tiled along the columns into strips of 1024 (one 4 KB page of each of the 64 rows: 256 KB,
// half the L2), the last strip 452 wide, and both reductions and their fills are fused into that
// loop: each strip of x is read from memory once, the second reduction finds it in cache.
// CHECK-LABEL: func.func @kernel(
// CHECK-NOT:     linalg.
// CHECK:         scf.forall (%{{.*}}) in (3) shared_outs(
// CHECK:           affine.min
// CHECK:           tensor.extract_slice %{{.*}}[0, %{{.*}}] [64, %{{.*}}] [1, 1] : tensor<64x2500xf32> to tensor<64x?xf32>
// CHECK:           linalg.fill {{.*}} -> tensor<?xf32>
// CHECK:           linalg.generic {{.*}}["reduction", "parallel", "reduction"]{{.*}} ins(%{{.*}} : tensor<16x4x?xf32>) outs(%{{.*}} : tensor<?xf32>)
// CHECK-NOT:         arith.subf
// CHECK:           linalg.fill {{.*}} -> tensor<?xf32>
// CHECK:           linalg.generic {{.*}}["reduction", "parallel", "reduction"]{{.*}} ins(%{{.*}}, %{{.*}} : tensor<16x4x?xf32>, tensor<?xf32>) outs(%{{.*}} : tensor<?xf32>)
// CHECK:             arith.subf
// CHECK:             arith.mulf
// CHECK:           linalg.generic {{.*}}["parallel"]
// CHECK:           scf.forall.in_parallel {
// CHECK-NEXT:        tensor.parallel_insert_slice {{.*}} : tensor<?xf32> into tensor<2500xf32>
// CHECK-NOT:     linalg.
// CHECK:         bufferization.materialize_in_destination
// Input: the emitter's linalg for np.var(x, axis=0), x 64x2500 float32.
#map = affine_map<(d0, d1, d2) -> (d0, d2, d1)>
#map1 = affine_map<(d0, d1, d2) -> (d1)>
#map2 = affine_map<(d0) -> (d0)>
module {
  func.func @kernel(%arg0: memref<64x2500xf32>, %arg1: memref<2500xf32> {et.output}) attributes {llvm.emit_c_interface} {
    %0 = bufferization.to_tensor %arg0 restrict : memref<64x2500xf32> to tensor<64x2500xf32>
    %1 = tensor.empty() : tensor<2500xf32>
    %cst = arith.constant 0.000000e+00 : f32
    %2 = linalg.fill ins(%cst : f32) outs(%1 : tensor<2500xf32>) -> tensor<2500xf32>
    %expanded = tensor.expand_shape %0 [[0, 1], [2]] output_shape [16, 4, 2500] : tensor<64x2500xf32> into tensor<16x4x2500xf32>
    %3 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["reduction", "parallel", "reduction"]} ins(%expanded : tensor<16x4x2500xf32>) outs(%2 : tensor<2500xf32>) {
    ^bb0(%in: f32, %out: f32):
      %9 = arith.addf %out, %in fastmath<reassoc> : f32
      linalg.yield %9 : f32
    } -> tensor<2500xf32>
    %4 = tensor.empty() : tensor<2500xf32>
    %cst_0 = arith.constant 0.000000e+00 : f32
    %5 = linalg.fill ins(%cst_0 : f32) outs(%4 : tensor<2500xf32>) -> tensor<2500xf32>
    %expanded_1 = tensor.expand_shape %0 [[0, 1], [2]] output_shape [16, 4, 2500] : tensor<64x2500xf32> into tensor<16x4x2500xf32>
    %6 = linalg.generic {indexing_maps = [#map, #map1, #map1], iterator_types = ["reduction", "parallel", "reduction"]} ins(%expanded_1, %3 : tensor<16x4x2500xf32>, tensor<2500xf32>) outs(%5 : tensor<2500xf32>) {
    ^bb0(%in: f32, %in_2: f32, %out: f32):
      %9 = arith.extf %in_2 : f32 to f64
      %c64_i64 = arith.constant 64 : i64
      %10 = arith.sitofp %c64_i64 : i64 to f64
      %11 = arith.divf %9, %10 : f64
      %12 = arith.truncf %11 : f64 to f32
      %13 = arith.subf %in, %12 : f32
      %14 = arith.mulf %13, %13 : f32
      %15 = arith.addf %out, %14 fastmath<reassoc> : f32
      linalg.yield %15 : f32
    } -> tensor<2500xf32>
    %7 = tensor.empty() : tensor<2500xf32>
    %8 = linalg.generic {indexing_maps = [#map2, #map2], iterator_types = ["parallel"]} ins(%6 : tensor<2500xf32>) outs(%7 : tensor<2500xf32>) {
    ^bb0(%in: f32, %out: f32):
      %9 = arith.extf %in : f32 to f64
      %c64_i64 = arith.constant 64 : i64
      %10 = arith.sitofp %c64_i64 : i64 to f64
      %11 = arith.divf %9, %10 : f64
      %12 = arith.truncf %11 : f64 to f32
      linalg.yield %12 : f32
    } -> tensor<2500xf32>
    bufferization.materialize_in_destination %8 in restrict writable %arg1 : (tensor<2500xf32>, memref<2500xf32>) -> ()
    return
  }
}

