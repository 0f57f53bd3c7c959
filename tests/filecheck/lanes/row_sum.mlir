// RUN: %python -m egglog_tensor.opt --stage lanes %s | %FileCheck %s
// The row reduction tagged et.lanes becomes loops whose inner (reduction) loop carries LLVM's
// vectorize width (the host's lanes) and interleave count, for LLVM's loop vectorizer.
// CHECK:         #[[ANN:[a-z_0-9]+]] = #llvm.loop_annotation<vectorize = #{{.*}}, interleave = #{{.*}}>
// CHECK-LABEL: func.func @kernel(
// CHECK-NOT:     linalg.generic
// CHECK:         scf.for %{{.*}} = %{{.*}} to %c64
// CHECK-NEXT:      scf.for %{{.*}} = %{{.*}} to %c4096
// CHECK:             arith.addf {{.*}} fastmath<reassoc> : f32
// CHECK:           } {llvm.loop_annotation = #[[ANN]]}
// CHECK-NOT:     linalg.generic
// Input: the IR after `flatten` for a.sum(axis=1), (64,4096) float32.
#map = affine_map<(d0, d1) -> (d0, d1)>
#map1 = affine_map<(d0, d1) -> (d0)>
module {
  func.func @kernel(%arg0: memref<64x4096xf32>, %arg1: memref<64xf32> {et.output}) attributes {llvm.emit_c_interface} {
    %cst = arith.constant 0.000000e+00 : f32
    linalg.fill ins(%cst : f32) outs(%arg1 : memref<64xf32>)
    linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "reduction"]} ins(%arg0 : memref<64x4096xf32>) outs(%arg1 : memref<64xf32>) attrs =  {et.lanes = 64 : i64} {
    ^bb0(%in: f32, %out: f32):
      %0 = arith.addf %out, %in fastmath<reassoc> : f32
      linalg.yield %0 : f32
    }
    return
  }
}
