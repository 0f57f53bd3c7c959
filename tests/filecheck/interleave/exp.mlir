// RUN: %python -m egglog_tensor.opt --stage interleave %s | %FileCheck %s
// A long elementwise loop (inline exp: a chain of ~20 ops per store) asks LLVM to interleave
// several vectors: the loop gets an llvm.loop_annotation with an interleave count.
// CHECK:         #[[INT:[a-z_0-9]+]] = #llvm.loop_interleave<count = {{[248]}} : i32>
// CHECK:         #[[ANN:[a-z_0-9]+]] = #llvm.loop_annotation<interleave = #[[INT]]>
// CHECK-LABEL: func.func @kernel(
// CHECK:         scf.for
// CHECK-COUNT-8:   math.fma
// CHECK:           memref.store
// CHECK-NEXT:    } {llvm.loop_annotation = #[[ANN]]}
// Input: the IR after `loops` for np.exp(a), (1024,) float32.
module {
  func.func @kernel(%arg0: memref<1024xf32>, %arg1: memref<1024xf32> {et.output}) attributes {llvm.emit_c_interface} {
    %c1262485504_i32 = arith.constant 1262485504 : i32
    %cst = arith.constant 1.000000e+00 : f32
    %cst_0 = arith.constant 0.49999994 : f32
    %cst_1 = arith.constant 0.166665211 : f32
    %cst_2 = arith.constant 0.041668389 : f32
    %cst_3 = arith.constant 8.368710e-03 : f32
    %cst_4 = arith.constant 0.00138146128 : f32
    %cst_5 = arith.constant -1.42860677E-6 : f32
    %cst_6 = arith.constant -0.693145751 : f32
    %cst_7 = arith.constant 1.44269502 : f32
    %cst_8 = arith.constant 0x4B400000 : f32
    %cst_9 = arith.constant -1.040000e+02 : f32
    %cst_10 = arith.constant 8.900000e+01 : f32
    %c0 = arith.constant 0 : index
    %c1024 = arith.constant 1024 : index
    %c1 = arith.constant 1 : index
    scf.for %arg2 = %c0 to %c1024 step %c1 {
      %0 = memref.load %arg0[%arg2] : memref<1024xf32>
      %1 = arith.cmpf ult, %0, %cst_10 : f32
      %2 = arith.select %1, %0, %cst_10 : f32
      %3 = arith.cmpf ugt, %2, %cst_9 : f32
      %4 = arith.select %3, %2, %cst_9 : f32
      %5 = math.fma %4, %cst_7, %cst_8 : f32
      %6 = arith.subf %5, %cst_8 : f32
      %7 = math.fma %6, %cst_6, %4 : f32
      %8 = math.fma %6, %cst_5, %7 : f32
      %9 = math.fma %cst_4, %8, %cst_3 : f32
      %10 = math.fma %9, %8, %cst_2 : f32
      %11 = math.fma %10, %8, %cst_1 : f32
      %12 = math.fma %11, %8, %cst_0 : f32
      %13 = math.fma %12, %8, %cst : f32
      %14 = math.fma %13, %8, %cst : f32
      %15 = arith.bitcast %5 : f32 to i32
      %16 = arith.subi %15, %c1262485504_i32 : i32
      %17 = llvm.intr.ldexp(%14, %16) : (f32, i32) -> f32
      memref.store %17, %arg1[%arg2] : memref<1024xf32>
    }
    return
  }
}
