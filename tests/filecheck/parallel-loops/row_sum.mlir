// RUN: %python -m egglog_tensor.opt --target cpu-openmp --threads 4 --stage parallel-loops %s | %FileCheck %s
// The per-thread scf.forall becomes scf.parallel (later omp.wsloop); the linalg ops, inside and
// outside it, become sequential scf.for loops (LLVM vectorizes those).
// CHECK-LABEL: func.func @kernel(
// CHECK-NOT:     linalg.
// CHECK:         scf.for %{{.*}} = %{{.*}} to %c64 step %{{.*}} {
// CHECK-NEXT:      memref.store
// CHECK:         scf.parallel (%{{.*}}) = (%{{.*}}) to (%c4) step (%{{.*}}) {
// CHECK:           memref.subview
// CHECK:           scf.for
// CHECK-NEXT:        scf.for
// CHECK:               arith.addf
// CHECK:             } {llvm.loop_annotation = #{{.*}}}
// CHECK:           scf.reduce
// CHECK-NOT:     scf.forall
// CHECK-NOT:     linalg.
// Input: the IR after `math` (cpu-openmp, 4 threads) for a.sum(axis=1), (64,4096) float32.
#loop_interleave = #llvm.loop_interleave<count = 4 : i32>
#loop_vectorize = #llvm.loop_vectorize<disable = false, width = 16 : i32>
#map = affine_map<(d0) -> (d0 * 16)>
#loop_annotation = #llvm.loop_annotation<vectorize = #loop_vectorize, interleave = #loop_interleave>
module {
  func.func @kernel(%arg0: memref<64x4096xf32>, %arg1: memref<64xf32> {et.output}) attributes {llvm.emit_c_interface} {
    %c4096 = arith.constant 4096 : index
    %c1 = arith.constant 1 : index
    %c16 = arith.constant 16 : index
    %c0 = arith.constant 0 : index
    %cst = arith.constant 0.000000e+00 : f32
    linalg.fill ins(%cst : f32) outs(%arg1 : memref<64xf32>)
    scf.forall (%arg2) in (4) {
      %0 = affine.apply #map(%arg2)
      %subview = memref.subview %arg0[%0, 0] [16, 4096] [1, 1] : memref<64x4096xf32> to memref<16x4096xf32, strided<[4096, 1], offset: ?>>
      %subview_0 = memref.subview %arg1[%0] [16] [1] : memref<64xf32> to memref<16xf32, strided<[1], offset: ?>>
      scf.for %arg3 = %c0 to %c16 step %c1 {
        scf.for %arg4 = %c0 to %c4096 step %c1 {
          %1 = memref.load %subview[%arg3, %arg4] : memref<16x4096xf32, strided<[4096, 1], offset: ?>>
          %2 = memref.load %subview_0[%arg3] : memref<16xf32, strided<[1], offset: ?>>
          %3 = arith.addf %2, %1 fastmath<reassoc> : f32
          memref.store %3, %subview_0[%arg3] : memref<16xf32, strided<[1], offset: ?>>
        } {llvm.loop_annotation = #loop_annotation}
      }
    }
    return
  }
}
