// RUN: %python -m egglog_tensor.opt --target cpu-openmp --threads 2 --stage parallel %s | %FileCheck %s
// A long scan (np.cumsum(a * 2.0) of 2^17 float32, emitted in two passes over 8 blocks) shares the
// threads: the block totals are split over them (each thread sums 4 blocks, its producer fused);
// the running totals before each block are one short sequential scan (a reduction loop carrying
// the running value, yielding the value before each element); each thread then rescans its blocks
// from their offsets, 4 side by side, into its half of the result (no reassociation in the scan).
// CHECK-LABEL: func.func @kernel(
// CHECK:         scf.forall (%{{.*}}) in (2) shared_outs(%{{.*}}) -> (tensor<8xf32>) {
// CHECK:           linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%{{.*}} : tensor<4x16384xf32>) outs(%{{.*}} : tensor<4xf32>)
// CHECK:             arith.mulf
// CHECK:             arith.addf %{{.*}}, %{{.*}} fastmath<reassoc> : f32
// CHECK:         linalg.generic {{.*}} iterator_types = ["reduction"]} ins(%{{.*}} : tensor<8xf32>) outs(%{{.*}}, %{{.*}} : tensor<f32>, tensor<8xf32>)
// CHECK-NEXT:    ^bb0(%[[IN:.*]]: f32, %[[RUN:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:      %[[NEXT:.*]] = arith.addf %[[RUN]], %[[IN]] : f32
// CHECK-NEXT:      linalg.yield %[[NEXT]], %[[RUN]] : f32, f32
// CHECK:         scf.forall (%{{.*}}) in (2) shared_outs(%{{.*}}) -> (tensor<131072xf32>) {
// CHECK:           linalg.generic {{.*}} iterator_types = ["parallel", "reduction", "parallel"]} ins(%{{.*}} : tensor<1x4x16384xf32>) outs(%{{.*}}, %{{.*}} : tensor<1x4xf32>, tensor<65536xf32>)
// CHECK-NEXT:      ^bb0(%[[X:.*]]: f32, %[[SUM:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:        %[[Y:.*]] = arith.mulf %[[X]], %{{.*}} : f32
// CHECK-NEXT:        %[[S:.*]] = arith.addf %[[SUM]], %[[Y]] : f32
// CHECK-NEXT:        linalg.yield %[[S]], %[[S]] : f32, f32
// CHECK:           tensor.parallel_insert_slice %{{.*}} into %{{.*}}[%{{.*}}] [65536] [1] : tensor<65536xf32> into tensor<131072xf32>
// Input: the emitted linalg of np.cumsum(a * 2.0), a float32 (131072,), cpu-openmp with 2 threads.
#map = affine_map<(d0, d1) -> (d0, d1)>
#map1 = affine_map<(d0, d1) -> (d0)>
#map2 = affine_map<(d0) -> (d0)>
#map3 = affine_map<(d0) -> ()>
#map4 = affine_map<(d0, d1, d2) -> (d0, d2, d1)>
#map5 = affine_map<(d0, d1, d2) -> (d0, d2)>
#map6 = affine_map<(d0, d1, d2) -> ((d0 * 4 + d2) * 16384 + d1)>
module {
  func.func @kernel(%arg0: memref<131072xf32>, %arg1: memref<131072xf32> {et.output}) attributes {llvm.emit_c_interface} {
    %0 = bufferization.to_tensor %arg0 restrict : memref<131072xf32> to tensor<131072xf32>
    %expanded = tensor.expand_shape %0 [[0, 1]] output_shape [8, 16384] : tensor<131072xf32> into tensor<8x16384xf32>
    %1 = tensor.empty() : tensor<8xf32>
    %cst = arith.constant -0.000000e+00 : f32
    %2 = linalg.fill ins(%cst : f32) outs(%1 : tensor<8xf32>) -> tensor<8xf32>
    %3 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "reduction"]} ins(%expanded : tensor<8x16384xf32>) outs(%2 : tensor<8xf32>) {
    ^bb0(%in: f32, %out: f32):
      %cst_3 = arith.constant 2.000000e+00 : f32
      %10 = arith.mulf %in, %cst_3 : f32
      %11 = arith.addf %out, %10 fastmath<reassoc> : f32
      linalg.yield %11 : f32
    } -> tensor<8xf32>
    %4 = tensor.empty() : tensor<f32>
    %cst_0 = arith.constant -0.000000e+00 : f32
    %5 = linalg.fill ins(%cst_0 : f32) outs(%4 : tensor<f32>) -> tensor<f32>
    %6 = tensor.empty() : tensor<8xf32>
    %7:2 = linalg.generic {indexing_maps = [#map2, #map3, #map2], iterator_types = ["reduction"]} ins(%3 : tensor<8xf32>) outs(%5, %6 : tensor<f32>, tensor<8xf32>) {
    ^bb0(%in: f32, %out: f32, %out_3: f32):
      %10 = arith.addf %out, %in : f32
      linalg.yield %10, %out : f32, f32
    } -> (tensor<f32>, tensor<8xf32>)
    %8 = tensor.empty() : tensor<131072xf32>
    %expanded_1 = tensor.expand_shape %expanded [[0, 1], [2]] output_shape [2, 4, 16384] : tensor<8x16384xf32> into tensor<2x4x16384xf32>
    %expanded_2 = tensor.expand_shape %7#1 [[0, 1]] output_shape [2, 4] : tensor<8xf32> into tensor<2x4xf32>
    %9:2 = linalg.generic {indexing_maps = [#map4, #map5, #map6], iterator_types = ["parallel", "reduction", "parallel"]} ins(%expanded_1 : tensor<2x4x16384xf32>) outs(%expanded_2, %8 : tensor<2x4xf32>, tensor<131072xf32>) {
    ^bb0(%in: f32, %out: f32, %out_3: f32):
      %cst_4 = arith.constant 2.000000e+00 : f32
      %10 = arith.mulf %in, %cst_4 : f32
      %11 = arith.addf %out, %10 : f32
      linalg.yield %11, %11 : f32, f32
    } -> (tensor<2x4xf32>, tensor<131072xf32>)
    %collapsed = tensor.collapse_shape %9#0 [[0, 1]] : tensor<2x4xf32> into tensor<8xf32>
    bufferization.materialize_in_destination %9#1 in restrict writable %arg1 : (tensor<131072xf32>, memref<131072xf32>) -> ()
    return
  }
}
