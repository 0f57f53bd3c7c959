// RUN: %python -m egglog_tensor.opt --stage gpu-map --target rocdl:gfx942 %s | %FileCheck %s
// Softmax of 64 rows of 300 (its input: gpu-bufferize's): four launches, one per op. The row max and the row
// sum: one block of 64 threads, one thread per row adding its 300 elements in order; the elementwise steps:
// blocks of 256 threads along the row (2 per row, the second partial) x one block per row (y). No forall is left.
// CHECK-LABEL: func.func @kernel(
// CHECK:         %[[MAX:.*]] = memref.alloc() {{.*}} : memref<64xf32>
// CHECK:         gpu.launch blocks({{.*}}) in ({{.*}} = %c1, {{.*}} = %c1, {{.*}} = %c1) threads({{.*}}) in ({{.*}} = %c64, {{.*}} = %c1, {{.*}} = %c1)
// CHECK:           gpu.thread_id  x
// CHECK:           arith.maximumf
// CHECK:           gpu.terminator
// CHECK:         gpu.launch blocks({{.*}}) in ({{.*}} = %c2, {{.*}} = %c64, {{.*}} = %c1) threads({{.*}}) in ({{.*}} = %c256, {{.*}} = %c1, {{.*}} = %c1)
// CHECK:           gpu.block_id  x
// CHECK:           gpu.block_id  y
// CHECK:           gpu.thread_id  x
// CHECK:           math.exp
// CHECK:         gpu.launch blocks({{.*}}) in ({{.*}} = %c1, {{.*}} = %c1, {{.*}} = %c1) threads({{.*}}) in ({{.*}} = %c64, {{.*}} = %c1, {{.*}} = %c1)
// CHECK:           arith.addf {{.*}} fastmath<reassoc> : f32
// CHECK:         gpu.launch blocks({{.*}}) in ({{.*}} = %c2, {{.*}} = %c64, {{.*}} = %c1) threads({{.*}}) in ({{.*}} = %c256, {{.*}} = %c1, {{.*}} = %c1)
// CHECK:           arith.divf
// CHECK-NOT:     scf.forall
// CHECK-NOT:     linalg.

#map = affine_map<(d0, d1) -> (d0, d1)>
#map1 = affine_map<(d0, d1) -> (d0)>
#map2 = affine_map<(d0) -> (d0 * 256)>
#map3 = affine_map<(d0) -> (d0 * -256 + 300, 256)>
#map4 = affine_map<(d0)[s0] -> (-(d0 * (s0 ceildiv 256)) + s0, s0 ceildiv 256)>
#map5 = affine_map<(d0) -> (0, d0)>
#map6 = affine_map<(d0)[s0] -> (d0 * (s0 ceildiv 256))>
module {
  func.func @kernel(%arg0: memref<64x300xf32>, %arg1: memref<64x300xf32> {et.output}) attributes {llvm.emit_c_interface} {
    %cst = arith.constant 0.000000e+00 : f32
    %cst_0 = arith.constant 0xFF800000 : f32
    %alloc = memref.alloc() {alignment = 64 : i64} : memref<64xf32>
    scf.forall (%arg2) in (1) {
      scf.forall (%arg3) in (64) {
        %subview = memref.subview %arg0[%arg3, 0] [1, 300] [1, 1] : memref<64x300xf32> to memref<1x300xf32, strided<[300, 1], offset: ?>>
        %subview_3 = memref.subview %alloc[%arg3] [1] [1] : memref<64xf32> to memref<1xf32, strided<[1], offset: ?>>
        linalg.fill ins(%cst_0 : f32) outs(%subview_3 : memref<1xf32, strided<[1], offset: ?>>)
        linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "reduction"]} ins(%subview : memref<1x300xf32, strided<[300, 1], offset: ?>>) outs(%subview_3 : memref<1xf32, strided<[1], offset: ?>>) {
        ^bb0(%in: f32, %out: f32):
          %0 = arith.maximumf %out, %in : f32
          linalg.yield %0 : f32
        }
      } {mapping = [#gpu.thread<x>]}
    } {et.launch = 0 : i64, et.threads = 64 : i64, mapping = [#gpu.block<x>]}
    %alloc_1 = memref.alloc() {alignment = 64 : i64} : memref<64x300xf32>
    scf.forall (%arg2, %arg3) in (64, 2) {
      %0 = affine.apply #map2(%arg3)
      %1 = affine.min #map3(%arg3)
      %subview = memref.subview %arg0[%arg2, %0] [1, %1] [1, 1] : memref<64x300xf32> to memref<1x?xf32, strided<[300, 1], offset: ?>>
      %subview_3 = memref.subview %alloc[%arg2] [1] [1] : memref<64xf32> to memref<1xf32, strided<[1], offset: ?>>
      %subview_4 = memref.subview %alloc_1[%arg2, %0] [1, %1] [1, 1] : memref<64x300xf32> to memref<1x?xf32, strided<[300, 1], offset: ?>>
      scf.forall (%arg4) in (256) {
        %2 = affine.min #map4(%arg4)[%1]
        %3 = affine.max #map5(%2)
        %4 = affine.apply #map6(%arg4)[%1]
        %subview_5 = memref.subview %subview[0, %4] [1, %3] [1, 1] : memref<1x?xf32, strided<[300, 1], offset: ?>> to memref<1x?xf32, strided<[300, 1], offset: ?>>
        %subview_6 = memref.subview %subview_4[0, %4] [1, %3] [1, 1] : memref<1x?xf32, strided<[300, 1], offset: ?>> to memref<1x?xf32, strided<[300, 1], offset: ?>>
        linalg.generic {indexing_maps = [#map, #map1, #map], iterator_types = ["parallel", "parallel"]} ins(%subview_5, %subview_3 : memref<1x?xf32, strided<[300, 1], offset: ?>>, memref<1xf32, strided<[1], offset: ?>>) outs(%subview_6 : memref<1x?xf32, strided<[300, 1], offset: ?>>) {
        ^bb0(%in: f32, %in_7: f32, %out: f32):
          %5 = arith.subf %in, %in_7 : f32
          %6 = math.exp %5 : f32
          linalg.yield %6 : f32
        }
      } {mapping = [#gpu.thread<x>]}
    } {et.launch = 1 : i64, et.threads = 256 : i64, mapping = [#gpu.block<y>, #gpu.block<x>]}
    %alloc_2 = memref.alloc() {alignment = 64 : i64} : memref<64xf32>
    scf.forall (%arg2) in (1) {
      scf.forall (%arg3) in (64) {
        %subview = memref.subview %alloc_1[%arg3, 0] [1, 300] [1, 1] : memref<64x300xf32> to memref<1x300xf32, strided<[300, 1], offset: ?>>
        %subview_3 = memref.subview %alloc_2[%arg3] [1] [1] : memref<64xf32> to memref<1xf32, strided<[1], offset: ?>>
        linalg.fill ins(%cst : f32) outs(%subview_3 : memref<1xf32, strided<[1], offset: ?>>)
        linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "reduction"]} ins(%subview : memref<1x300xf32, strided<[300, 1], offset: ?>>) outs(%subview_3 : memref<1xf32, strided<[1], offset: ?>>) {
        ^bb0(%in: f32, %out: f32):
          %0 = arith.addf %out, %in fastmath<reassoc> : f32
          linalg.yield %0 : f32
        }
      } {mapping = [#gpu.thread<x>]}
    } {et.launch = 2 : i64, et.threads = 64 : i64, mapping = [#gpu.block<x>]}
    scf.forall (%arg2, %arg3) in (64, 2) {
      %0 = affine.apply #map2(%arg3)
      %1 = affine.min #map3(%arg3)
      %subview = memref.subview %alloc_1[%arg2, %0] [1, %1] [1, 1] : memref<64x300xf32> to memref<1x?xf32, strided<[300, 1], offset: ?>>
      %subview_3 = memref.subview %alloc_2[%arg2] [1] [1] : memref<64xf32> to memref<1xf32, strided<[1], offset: ?>>
      %subview_4 = memref.subview %arg1[%arg2, %0] [1, %1] [1, 1] : memref<64x300xf32> to memref<1x?xf32, strided<[300, 1], offset: ?>>
      scf.forall (%arg4) in (256) {
        %2 = affine.min #map4(%arg4)[%1]
        %3 = affine.max #map5(%2)
        %4 = affine.apply #map6(%arg4)[%1]
        %subview_5 = memref.subview %subview[0, %4] [1, %3] [1, 1] : memref<1x?xf32, strided<[300, 1], offset: ?>> to memref<1x?xf32, strided<[300, 1], offset: ?>>
        %subview_6 = memref.subview %subview_4[0, %4] [1, %3] [1, 1] : memref<1x?xf32, strided<[300, 1], offset: ?>> to memref<1x?xf32, strided<[300, 1], offset: ?>>
        linalg.generic {indexing_maps = [#map, #map1, #map], iterator_types = ["parallel", "parallel"]} ins(%subview_5, %subview_3 : memref<1x?xf32, strided<[300, 1], offset: ?>>, memref<1xf32, strided<[1], offset: ?>>) outs(%subview_6 : memref<1x?xf32, strided<[300, 1], offset: ?>>) attrs =  {et.rows = array<i64: 64>} {
        ^bb0(%in: f32, %in_7: f32, %out: f32):
          %5 = arith.divf %in, %in_7 : f32
          linalg.yield %5 : f32
        }
      } {mapping = [#gpu.thread<x>]}
    } {et.launch = 3 : i64, et.threads = 256 : i64, mapping = [#gpu.block<y>, #gpu.block<x>]}
    return
  }
}
