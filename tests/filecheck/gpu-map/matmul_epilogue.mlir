// RUN: %python -m egglog_tensor.opt --stage gpu-map --target rocdl:gfx942 %s | %FileCheck %s
// tanh(a @ b + 1) with a 64x32, b 32x48 (its input: gpu-bufferize's): the product one thread per output
// element (a block of 64 threads over the 48 columns, the last 16 idle, one block per row), then the
// epilogue as a second launch of the same grid; the product's loop over k in each thread.
// CHECK-LABEL: func.func @kernel(
// CHECK:         %[[C:.*]] = memref.alloc() {{.*}} : memref<64x48xf32>
// CHECK:         gpu.launch blocks({{.*}}) in ({{.*}} = %c1, {{.*}} = %c64, {{.*}} = %c1) threads({{.*}}) in ({{.*}} = %c64, {{.*}} = %c1, {{.*}} = %c1)
// CHECK:           gpu.block_id  y
// CHECK:           gpu.thread_id  x
// CHECK:           scf.for {{.*}} to %c32
// CHECK:             arith.mulf
// CHECK:             arith.addf
// CHECK:         gpu.launch blocks({{.*}}) in ({{.*}} = %c1, {{.*}} = %c64, {{.*}} = %c1) threads({{.*}}) in ({{.*}} = %c64, {{.*}} = %c1, {{.*}} = %c1)
// CHECK:           math.tanh
// CHECK-NOT:     scf.forall

#map = affine_map<(d0) -> (-d0 + 48, 1)>
#map1 = affine_map<(d0) -> (0, d0)>
#map2 = affine_map<(d0, d1) -> (d0, d1)>
module {
  func.func @kernel(%arg0: memref<64x32xf32>, %arg1: memref<32x48xf32>, %arg2: memref<64x48xf32> {et.output}) attributes {llvm.emit_c_interface} {
    %cst = arith.constant 1.000000e+00 : f32
    %cst_0 = arith.constant 0.000000e+00 : f32
    %alloc = memref.alloc() {alignment = 64 : i64} : memref<64x48xf32>
    scf.forall (%arg3, %arg4) in (64, 1) {
      %subview = memref.subview %arg0[%arg3, 0] [1, 32] [1, 1] : memref<64x32xf32> to memref<1x32xf32, strided<[32, 1], offset: ?>>
      %subview_1 = memref.subview %alloc[%arg3, 0] [1, 48] [1, 1] : memref<64x48xf32> to memref<1x48xf32, strided<[48, 1], offset: ?>>
      %alloc_2 = memref.alloc() {alignment = 64 : i64} : memref<1x48xf32>
      linalg.fill ins(%cst_0 : f32) outs(%alloc_2 : memref<1x48xf32>)
      scf.forall (%arg5) in (64) {
        %0 = affine.min #map(%arg5)
        %1 = affine.max #map1(%0)
        %subview_3 = memref.subview %arg1[0, %arg5] [32, %1] [1, 1] : memref<32x48xf32> to memref<32x?xf32, strided<[48, 1], offset: ?>>
        %subview_4 = memref.subview %subview_1[0, %arg5] [1, %1] [1, 1] : memref<1x48xf32, strided<[48, 1], offset: ?>> to memref<1x?xf32, strided<[48, 1], offset: ?>>
        linalg.fill ins(%cst_0 : f32) outs(%subview_4 : memref<1x?xf32, strided<[48, 1], offset: ?>>)
        linalg.matmul {et.tiles = [64, 48, 32], et.vec = [6, 16, 1]} ins(%subview, %subview_3 : memref<1x32xf32, strided<[32, 1], offset: ?>>, memref<32x?xf32, strided<[48, 1], offset: ?>>) outs(%subview_4 : memref<1x?xf32, strided<[48, 1], offset: ?>>)
      } {mapping = [#gpu.thread<x>]}
    } {et.launch = 0 : i64, et.threads = 64 : i64, mapping = [#gpu.block<y>, #gpu.block<x>]}
    scf.forall (%arg3, %arg4) in (64, 1) {
      %subview = memref.subview %alloc[%arg3, 0] [1, 48] [1, 1] : memref<64x48xf32> to memref<1x48xf32, strided<[48, 1], offset: ?>>
      %subview_1 = memref.subview %arg2[%arg3, 0] [1, 48] [1, 1] : memref<64x48xf32> to memref<1x48xf32, strided<[48, 1], offset: ?>>
      scf.forall (%arg5) in (64) {
        %0 = affine.min #map(%arg5)
        %1 = affine.max #map1(%0)
        %subview_2 = memref.subview %subview[0, %arg5] [1, %1] [1, 1] : memref<1x48xf32, strided<[48, 1], offset: ?>> to memref<1x?xf32, strided<[48, 1], offset: ?>>
        %subview_3 = memref.subview %subview_1[0, %arg5] [1, %1] [1, 1] : memref<1x48xf32, strided<[48, 1], offset: ?>> to memref<1x?xf32, strided<[48, 1], offset: ?>>
        linalg.generic {indexing_maps = [#map2, #map2], iterator_types = ["parallel", "parallel"]} ins(%subview_2 : memref<1x?xf32, strided<[48, 1], offset: ?>>) outs(%subview_3 : memref<1x?xf32, strided<[48, 1], offset: ?>>) {
        ^bb0(%in: f32, %out: f32):
          %2 = arith.addf %in, %cst : f32
          %3 = math.tanh %2 : f32
          linalg.yield %3 : f32
        }
      } {mapping = [#gpu.thread<x>]}
    } {et.launch = 1 : i64, et.threads = 64 : i64, mapping = [#gpu.block<y>, #gpu.block<x>]}
    return
  }
}
