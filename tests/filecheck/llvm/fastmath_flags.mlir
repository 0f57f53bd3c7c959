// RUN: %python -m egglog_tensor.opt --stage llvm %s | %FileCheck %s
// A kernel compiled with fastmath={"nsz", "contract"} (tests/test_fastmath_flags.py): its float
// arithmetic carries exactly those flags (a reduction step reassoc too) and they reach the LLVM
// dialect, where LLVM may contract the multiply and add into an FMA; compares carry none.
// CHECK-LABEL: llvm.func @kernel(
// CHECK:         llvm.fmul %{{.*}}, %{{.*}} {fastmathFlags = #llvm.fastmath<nsz, contract>} : f32
// CHECK:         llvm.fadd %{{.*}}, %{{.*}} {fastmathFlags = #llvm.fastmath<nsz, contract, reassoc>} : f32
// CHECK:         llvm.fcmp "uno" %{{.*}}, %{{.*}} : f32
// CHECK-NOT:     fastmath
// CHECK:         llvm.return
// Input: the IR after `vector` (hand-written kernel): acc += a[i] * b[i], then isnan(acc).
module {
  func.func @kernel(%arg0: memref<16xf32>, %arg1: memref<16xf32>, %arg2: memref<f32>, %arg3: memref<i8>) attributes {llvm.emit_c_interface} {
    %c0 = arith.constant 0 : index
    %c16 = arith.constant 16 : index
    %c1 = arith.constant 1 : index
    %zero = arith.constant 0.000000e+00 : f32
    %sum = scf.for %i = %c0 to %c16 step %c1 iter_args(%acc = %zero) -> (f32) {
      %a = memref.load %arg0[%i] : memref<16xf32>
      %b = memref.load %arg1[%i] : memref<16xf32>
      %p = arith.mulf %a, %b fastmath<nsz,contract> : f32
      %s = arith.addf %acc, %p fastmath<reassoc,nsz,contract> : f32
      scf.yield %s : f32
    }
    memref.store %sum, %arg2[] : memref<f32>
    %nan = arith.cmpf uno, %sum, %sum : f32
    %byte = arith.extui %nan : i1 to i8
    memref.store %byte, %arg3[] : memref<i8>
    return
  }
}
