// RUN: %python -m egglog_tensor.opt --stage gpu-reduce --target rocdl:gfx942 %s | %FileCheck %s
// softmax_rows.mlir with the max's output not filled (an argument holding what an earlier kernel
// wrote): thread 0 combines the block's max with it and writes it, so no thread holds the row's max
// and the sum of exp reads it from memory after a gpu.barrier; the sum's value (filled) is held, so
// the division follows without one.
// CHECK-LABEL: func.func @kernel(
// CHECK:         scf.forall
// CHECK:           scf.if
// CHECK:             %[[OLD:.*]] = memref.load %arg2[
// CHECK:             arith.maximumf %[[OLD]]
// CHECK:             memref.store {{.*}}, %arg2[
// CHECK-NEXT:      }
// CHECK-NEXT:      gpu.barrier
// CHECK:           memref.load %arg2[
// CHECK:           math.exp
// CHECK:           gpu.barrier
// CHECK:           scf.if
// CHECK:             memref.store {{.*}}, %alloc[
// CHECK-NEXT:      }
// CHECK-NEXT:      %[[SUM:.*]] = arith.addf %cst, {{.*}} : f32
// CHECK-NOT:       gpu.barrier
// CHECK:           arith.divf {{.*}}, %[[SUM]] : f32
// CHECK:         } {et.launch = 0 : i64

#map = affine_map<(d0, d1) -> (d0, d1)>
#map1 = affine_map<(d0, d1) -> (d0)>
module {
  func.func @kernel(%arg0: memref<64x300xf32>, %arg1: memref<64x300xf32> {et.output}, %alloc: memref<64xf32>) attributes {llvm.emit_c_interface} {
    %cst = arith.constant 0.000000e+00 : f32
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

