// RUN: %python -m egglog_tensor.opt --stage loops %s | %FileCheck %s
// Linalg ops on buffers become scf.for loops of scalar loads, arithmetic and stores.
// CHECK-LABEL: func.func @kernel(
// CHECK-NOT:     linalg.
// CHECK:         scf.for %[[I:[a-z0-9_]+]] = %{{.*}} to %c19200 step %{{.*}} {
// CHECK-NEXT:      memref.load %{{.*}}[%[[I]]] : memref<19200xf32>
// CHECK-NEXT:      memref.load %{{.*}}[%[[I]]] : memref<19200xf32>
// CHECK-NEXT:      arith.mulf
// CHECK-NEXT:      arith.addf
// CHECK-NEXT:      memref.store %{{.*}}, %{{.*}}[%[[I]]] : memref<19200xf32>
// CHECK-NEXT:    }
// CHECK-NOT:     linalg.
// Input: the IR after `math` for a * b + a, (64,300) float32.
#map = affine_map<(d0) -> (d0)>
module {
  func.func @kernel(%arg0: memref<64x300xf32>, %arg1: memref<64x300xf32>, %arg2: memref<64x300xf32> {et.output}) attributes {llvm.emit_c_interface} {
    %collapse_shape = memref.collapse_shape %arg0 [[0, 1]] : memref<64x300xf32> into memref<19200xf32>
    %collapse_shape_0 = memref.collapse_shape %arg1 [[0, 1]] : memref<64x300xf32> into memref<19200xf32>
    %collapse_shape_1 = memref.collapse_shape %arg2 [[0, 1]] : memref<64x300xf32> into memref<19200xf32>
    linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel"]} ins(%collapse_shape, %collapse_shape_0 : memref<19200xf32>, memref<19200xf32>) outs(%collapse_shape_1 : memref<19200xf32>) {
    ^bb0(%in: f32, %in_2: f32, %out: f32):
      %0 = arith.mulf %in, %in_2 : f32
      %1 = arith.addf %0, %in : f32
      linalg.yield %1 : f32
    }
    return
  }
}
