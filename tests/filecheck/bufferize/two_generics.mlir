// RUN: %python -m egglog_tensor.opt --stage bufferize %s | %FileCheck %s
// The intermediate tensor becomes one aligned allocation that is freed; the result is written in place into %out.
// CHECK-LABEL: func.func @kernel(
// CHECK-SAME:    %[[A:[^:]+]]: memref<4x8xf32>, %[[B:[^:]+]]: memref<4x8xf32, strided<[?, ?], offset: ?>>, %[[OUT:[^:]+]]: memref<4x8xf32>)
// CHECK:         %[[TMP:.*]] = memref.alloc() {alignment = 64 : i64} : memref<4x8xf32>
// CHECK:         linalg.generic {{.*}} ins(%[[A]], %[[B]] : {{.*}}) outs(%[[TMP]] : memref<4x8xf32>)
// CHECK:         linalg.generic {{.*}} ins(%[[TMP]], %[[A]] : {{.*}}) outs(%[[OUT]] : memref<4x8xf32>)
// CHECK:         memref.dealloc %[[TMP]] : memref<4x8xf32>
// CHECK-NOT:     memref.alloc
// CHECK-NOT:     bufferization.
// CHECK:         return
// Input: the IR after `tile` (hand-written linalg on tensors).
#map = affine_map<(d0, d1) -> (d0, d1)>
module {
  func.func @kernel(%arg0: memref<4x8xf32>, %arg1: memref<4x8xf32, strided<[?, ?], offset: ?>>, %arg2: memref<4x8xf32>) attributes {llvm.emit_c_interface} {
    %0 = bufferization.to_tensor %arg0 restrict : memref<4x8xf32> to tensor<4x8xf32>
    %1 = bufferization.to_tensor %arg1 restrict : memref<4x8xf32, strided<[?, ?], offset: ?>> to tensor<4x8xf32>
    %2 = tensor.empty() : tensor<4x8xf32>
    %3 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel"]} ins(%0, %1 : tensor<4x8xf32>, tensor<4x8xf32>) outs(%2 : tensor<4x8xf32>) {
    ^bb0(%in: f32, %in_0: f32, %out: f32):
      %6 = arith.addf %in, %in_0 : f32
      %7 = math.exp %6 : f32
      linalg.yield %7 : f32
    } -> tensor<4x8xf32>
    %4 = tensor.empty() : tensor<4x8xf32>
    %5 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel"]} ins(%3, %0 : tensor<4x8xf32>, tensor<4x8xf32>) outs(%4 : tensor<4x8xf32>) {
    ^bb0(%in: f32, %in_0: f32, %out: f32):
      %6 = arith.mulf %in, %in_0 : f32
      linalg.yield %6 : f32
    } -> tensor<4x8xf32>
    bufferization.materialize_in_destination %5 in restrict writable %arg2 : (tensor<4x8xf32>, memref<4x8xf32>) -> ()
    return
  }
}
