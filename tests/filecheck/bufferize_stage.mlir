// PIPELINE: cpu STAGE: bufferize
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
#map = affine_map<(d0, d1) -> (d0, d1)>
func.func @kernel(%a: memref<4x8xf32>, %b: memref<4x8xf32, strided<[?, ?], offset: ?>>, %out: memref<4x8xf32>) attributes {llvm.emit_c_interface} {
  %ta = bufferization.to_tensor %a restrict : memref<4x8xf32> to tensor<4x8xf32>
  %tb = bufferization.to_tensor %b restrict : memref<4x8xf32, strided<[?, ?], offset: ?>> to tensor<4x8xf32>
  %e = tensor.empty() : tensor<4x8xf32>
  %t = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel"]} ins(%ta, %tb : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %s = arith.addf %x, %y : f32
    %m = math.exp %s : f32
    linalg.yield %m : f32
  } -> tensor<4x8xf32>
  %e2 = tensor.empty() : tensor<4x8xf32>
  %r = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel"]} ins(%t, %ta : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e2 : tensor<4x8xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %s = arith.mulf %x, %y : f32
    linalg.yield %s : f32
  } -> tensor<4x8xf32>
  bufferization.materialize_in_destination %r in restrict writable %out : (tensor<4x8xf32>, memref<4x8xf32>) -> ()
  return
}
