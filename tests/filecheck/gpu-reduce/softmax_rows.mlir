// RUN: %python -m egglog_tensor.opt --stage gpu-reduce --target rocdl:gfx942 %s | %FileCheck %s
// Softmax's row group (gpu-tile marked its three ops et.row_group = 0 and left them whole) as one
// fused row kernel: one block-level forall over the 64 rows, 256 threads. A row of 300 is at most 2
// columns a thread (tid, tid + 256; the second inside the row where tid < 44, its load clamped to
// column 299): the max loads each of them once and the sum of exp and the division use the same
// registers (no workgroup row, no barrier between the ops). Thread 0 writes each reduction's value
// (its fill folded); every thread combines the value it holds with the fill and uses it, not
// reloading it. A reduction's threads combine within each wave of 64 by shuffles, then the 4 waves'
// values through workgroup memory.
// CHECK-LABEL: func.func @kernel(
// CHECK:         scf.forall (%[[ROW:.*]]) in (64) {
// CHECK-NOT:       memref<300xf32, #gpu.address_space<workgroup>>
// CHECK:           %[[X0:.*]] = memref.load %arg0[
// CHECK:           arith.maximumf
// CHECK:           %[[IN:.*]] = arith.cmpi ult, %{{.*}}, %c300
// CHECK:           arith.minui %{{.*}}, %c299
// CHECK:           %[[X1:.*]] = memref.load %arg0[
// CHECK:           arith.select %[[IN]]
// CHECK-COUNT-6:   gpu.shuffle xor {{.*}}, %c64_i32 : f32
// CHECK:           memref.alloc() : memref<4xf32, #gpu.address_space<workgroup>>
// CHECK:           gpu.barrier
// CHECK-COUNT-2:   gpu.shuffle xor
// CHECK:           %[[MAX:.*]] = arith.maximumf
// CHECK:           scf.if
// CHECK:             memref.store {{.*}}, %alloc[%[[ROW]]] : memref<64xf32>
// CHECK-NEXT:      }
// CHECK-NEXT:      %[[HELD:.*]] = arith.maximumf %cst_0, %[[MAX]] : f32
// CHECK-NOT:       gpu.barrier
// CHECK-NOT:       memref.load %arg0
// CHECK:           arith.subf %[[X0]], %[[HELD]] : f32
// CHECK:           math.exp
// CHECK:           arith.subf %[[X1]], %[[HELD]] : f32
// CHECK:           gpu.barrier
// CHECK:           scf.if
// CHECK:             memref.store {{.*}}, %alloc_1[%[[ROW]]] : memref<64xf32>
// CHECK-NEXT:      }
// CHECK-NEXT:      %[[SUM:.*]] = arith.addf %cst, {{.*}} : f32
// CHECK-NOT:       gpu.barrier
// CHECK-NOT:       memref.load
// CHECK:           arith.subf %[[X0]], %[[HELD]] : f32
// CHECK:           arith.divf {{.*}}, %[[SUM]] : f32
// CHECK:           arith.subf %[[X1]], %[[HELD]] : f32
// CHECK:           arith.divf {{.*}}, %[[SUM]] : f32
// CHECK:           memref.store {{.*}}, %arg1[
// CHECK:           scf.if
// CHECK:             memref.store {{.*}}, %arg1[
// CHECK:         } {et.launch = 0 : i64, et.threads = 256 : i64, mapping = [#gpu.block<x>]}
// CHECK-NOT:     scf.forall
// CHECK-NOT:     linalg.generic
#map = affine_map<(d0, d1) -> (d0, d1)>
#map1 = affine_map<(d0, d1) -> (d0)>
module {
  func.func @kernel(%arg0: memref<64x300xf32>, %arg1: memref<64x300xf32> {et.output}) attributes {llvm.emit_c_interface} {
    %cst = arith.constant 0.000000e+00 : f32
    %cst_0 = arith.constant 0xFF800000 : f32
    %alloc = memref.alloc() {alignment = 64 : i64} : memref<64xf32>
    linalg.fill ins(%cst_0 : f32) outs(%alloc : memref<64xf32>)
    linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "reduction"]} ins(%arg0 : memref<64x300xf32>) outs(%alloc : memref<64xf32>) attrs =  {et.row_group = 0 : i64} {
    ^bb0(%in: f32, %out: f32):
      %0 = arith.maximumf %out, %in : f32
      linalg.yield %0 : f32
    }
    %alloc_1 = memref.alloc() {alignment = 64 : i64} : memref<64xf32>
    linalg.fill ins(%cst : f32) outs(%alloc_1 : memref<64xf32>)
    linalg.generic {indexing_maps = [#map, #map1, #map1], iterator_types = ["parallel", "reduction"]} ins(%arg0, %alloc : memref<64x300xf32>, memref<64xf32>) outs(%alloc_1 : memref<64xf32>) attrs =  {et.row_group = 0 : i64} {
    ^bb0(%in: f32, %in_2: f32, %out: f32):
      %0 = arith.subf %in, %in_2 : f32
      %1 = math.exp %0 : f32
      %2 = arith.addf %out, %1 fastmath<reassoc> : f32
      linalg.yield %2 : f32
    }
    linalg.generic {indexing_maps = [#map, #map1, #map1, #map], iterator_types = ["parallel", "parallel"]} ins(%arg0, %alloc, %alloc_1 : memref<64x300xf32>, memref<64xf32>, memref<64xf32>) outs(%arg1 : memref<64x300xf32>) attrs =  {et.row_group = 0 : i64, et.rows} {
    ^bb0(%in: f32, %in_2: f32, %in_3: f32, %out: f32):
      %0 = arith.subf %in, %in_2 : f32
      %1 = math.exp %0 : f32
      %2 = arith.divf %1, %in_3 : f32
      linalg.yield %2 : f32
    }
    return
  }
}

