// RUN: %python -m egglog_tensor.opt --stage gpu-reduce --target rocdl:gfx942 %s | %FileCheck %s
// tanh(a @ b + 1) with a 64x96, b 96x48 (its input: gpu-bufferize's): the product, left whole by gpu-tile,
// tiled through workgroup memory (lowering/gpu/matmul.py): a block of 256 threads per 64x64 tile of C (one
// here), the k loop by 32 (three steps) copying A's 64x32 and B's 32x64 tiles into workgroup memory (8
// elements each a thread), a barrier, each thread's 4x4 register tile (4 + 4 workgroup loads, 16 FMAs a k),
// a barrier; then the register tile stored where it falls inside C. The fill is folded into the accumulators.
// CHECK-LABEL: func.func @kernel(
// CHECK-NOT:     linalg.fill
// CHECK:         %[[C:.*]] = memref.alloc() {{.*}} : memref<64x48xf32>
// CHECK:         scf.forall ({{.*}}) in (1, 1) {
// CHECK:           gpu.thread_id  x
// CHECK:           %[[A:.*]] = memref.alloc() : memref<64x32xf32, #gpu.address_space<workgroup>>
// CHECK:           %[[B:.*]] = memref.alloc() : memref<32x64xf32, #gpu.address_space<workgroup>>
// CHECK:           %[[ACC:.*]]:16 = scf.for {{.*}} to %c96 step %c32{{.*}} iter_args({{.*}}) -> (f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32) {
// CHECK-COUNT-8:     memref.store {{.*}}, %[[A]][
// CHECK-COUNT-8:     memref.store {{.*}}, %[[B]][
// CHECK:             gpu.barrier
// CHECK:             %[[STEP:.*]]:16 = scf.for {{.*}} iter_args(
// CHECK-COUNT-4:       memref.load %[[A]][
// CHECK-COUNT-4:       memref.load %[[B]][
// CHECK-COUNT-16:      arith.addf
// CHECK:               scf.yield {{.*}} : f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32
// CHECK:             gpu.barrier
// CHECK:             scf.yield %[[STEP]]#0,
// CHECK-COUNT-16:    memref.store %[[ACC]]#{{[0-9]+}}, %[[C]][
// CHECK:         } {et.launch = 0 : i64, et.threads = 256 : i64, mapping = [#gpu.block<y>, #gpu.block<x>]}
// CHECK:         scf.forall
// CHECK:           math.tanh

#map = affine_map<(d0, d1, d2) -> (d0, d2)>
#map1 = affine_map<(d0, d1, d2) -> (d2, d1)>
#map2 = affine_map<(d0, d1, d2) -> (d0, d1)>
#map3 = affine_map<(d0) -> (-d0 + 48, 1)>
#map4 = affine_map<(d0) -> (0, d0)>
#map5 = affine_map<(d0, d1) -> (d0, d1)>
module {
  func.func @kernel(%arg0: memref<64x96xf32>, %arg1: memref<96x48xf32>, %arg2: memref<64x48xf32> {et.output}) attributes {llvm.emit_c_interface} {
    %cst = arith.constant 1.000000e+00 : f32
    %cst_0 = arith.constant 0.000000e+00 : f32
    %alloc = memref.alloc() {alignment = 64 : i64} : memref<64x48xf32>
    linalg.fill ins(%cst_0 : f32) outs(%alloc : memref<64x48xf32>)
    linalg.generic {indexing_maps = [#map, #map1, #map2], iterator_types = ["parallel", "parallel", "reduction"]} ins(%arg0, %arg1 : memref<64x96xf32>, memref<96x48xf32>) outs(%alloc : memref<64x48xf32>) {
    ^bb0(%in: f32, %in_1: f32, %out: f32):
      %0 = arith.mulf %in, %in_1 : f32
      %1 = arith.addf %out, %0 : f32
      linalg.yield %1 : f32
    }
    scf.forall (%arg3, %arg4) in (64, 1) {
      %subview = memref.subview %alloc[%arg3, 0] [1, 48] [1, 1] : memref<64x48xf32> to memref<1x48xf32, strided<[48, 1], offset: ?>>
      %subview_1 = memref.subview %arg2[%arg3, 0] [1, 48] [1, 1] : memref<64x48xf32> to memref<1x48xf32, strided<[48, 1], offset: ?>>
      scf.forall (%arg5) in (64) {
        %0 = affine.min #map3(%arg5)
        %1 = affine.max #map4(%0)
        %subview_2 = memref.subview %subview[0, %arg5] [1, %1] [1, 1] : memref<1x48xf32, strided<[48, 1], offset: ?>> to memref<1x?xf32, strided<[48, 1], offset: ?>>
        %subview_3 = memref.subview %subview_1[0, %arg5] [1, %1] [1, 1] : memref<1x48xf32, strided<[48, 1], offset: ?>> to memref<1x?xf32, strided<[48, 1], offset: ?>>
        linalg.generic {indexing_maps = [#map5, #map5], iterator_types = ["parallel", "parallel"]} ins(%subview_2 : memref<1x?xf32, strided<[48, 1], offset: ?>>) outs(%subview_3 : memref<1x?xf32, strided<[48, 1], offset: ?>>) {
        ^bb0(%in: f32, %out: f32):
          %2 = arith.addf %in, %cst : f32
          %3 = math.tanh %2 : f32
          linalg.yield %3 : f32
        }
      } {mapping = [#gpu.thread<x>]}
    } {mapping = [#gpu.block<y>, #gpu.block<x>]}
    return
  }
}
