// RUN: %python -m egglog_tensor.opt --stage flatten %s | %FileCheck %s
// An elementwise op over contiguous 64x300 buffers becomes one loop over 19200 elements: each
// operand collapsed to 1-D, the generic 1-D (no remainder per row).
// CHECK-LABEL: func.func @kernel(
// CHECK-COUNT-3: memref.collapse_shape {{.*}} : memref<64x300xf32> into memref<19200xf32>
// CHECK:         linalg.generic {{.*}} iterator_types = ["parallel"]} ins(%{{.*}}, %{{.*}} : memref<19200xf32>, memref<19200xf32>) outs(%{{.*}} : memref<19200xf32>)
// CHECK-NOT:     memref<64x300xf32>)
// CHECK:         return
// Input: the IR after `bufferize` for a * b + a, (64,300) float32.
#map = affine_map<(d0, d1) -> (d0, d1)>
module {
  func.func @kernel(%arg0: memref<64x300xf32>, %arg1: memref<64x300xf32>, %arg2: memref<64x300xf32> {et.output}) attributes {llvm.emit_c_interface} {
    linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel"]} ins(%arg0, %arg1 : memref<64x300xf32>, memref<64x300xf32>) outs(%arg2 : memref<64x300xf32>) {
    ^bb0(%in: f32, %in_0: f32, %out: f32):
      %0 = arith.mulf %in, %in_0 : f32
      %1 = arith.addf %0, %in : f32
      linalg.yield %1 : f32
    }
    return
  }
}
