// RUN: %python -m egglog_tensor.opt --stage llvm %s | %FileCheck %s
// Only the LLVM dialect is left: the kernel, its C-interface wrapper, and math as LLVM intrinsics.
// CHECK-LABEL: llvm.func @kernel(
// CHECK:         llvm.intr.log
// CHECK:         llvm.intr.atan2
// CHECK:         llvm.return
// CHECK-LABEL: llvm.func @_mlir_ciface_kernel(%{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr)
// CHECK:         llvm.load %{{.*}} : !llvm.ptr -> !llvm.struct<(ptr, ptr, i64, array<1 x i64>, array<1 x i64>)>
// CHECK:         llvm.call @kernel(
// CHECK-NOT:   {{(func|scf|memref|arith|math|cf)\.}}
// Input: the IR after `vector` (hand-written kernel).
module {
  func.func @kernel(%arg0: memref<16xf64>, %arg1: memref<16xf64>) attributes {llvm.emit_c_interface} {
    %c0 = arith.constant 0 : index
    %c16 = arith.constant 16 : index
    %c1 = arith.constant 1 : index
    scf.for %arg2 = %c0 to %c16 step %c1 {
      %0 = memref.load %arg0[%arg2] : memref<16xf64>
      %1 = math.log %0 : f64
      %2 = math.atan2 %1, %0 : f64
      memref.store %2, %arg1[%arg2] : memref<16xf64>
    }
    return
  }
}
