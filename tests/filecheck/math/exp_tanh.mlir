// RUN: %python -m egglog_tensor.opt --stage math --cpu avx512 %s | %FileCheck %s --check-prefixes=CHECK,AVX512
// RUN: %python -m egglog_tensor.opt --stage math --cpu avx2 %s | %FileCheck %s --check-prefixes=CHECK,NO-AVX512
// exp (f32 here) becomes inline arithmetic: clamp, shifter FMA, Cody-Waite FMAs, the polynomial's
// FMA chain, then the scaling by 2^k: LLVM's ldexp (vscalefss) with AVX-512, else two exponent-bit
// scalings. float32 tanh is inline too: x + x^3 P(x^2) for small |x|, else 1 - 2 / (exp(2|x|) + 1)
// (|x| limited to 10, the same exp), picked by |x| < 0.7, with x's sign; et.fastmath's is rational.
// CHECK-LABEL: func.func @kernel(
// CHECK-NOT:     math.exp
// CHECK:         arith.cmpf ult
// CHECK:         arith.cmpf ugt
// CHECK:         math.fma
// CHECK-COUNT-8: math.fma
// AVX512:        llvm.intr.ldexp({{.*}}) : (f32, i32) -> f32
// NO-AVX512:     arith.shrsi
// NO-AVX512:     arith.shli
// NO-AVX512:     arith.mulf
// NO-AVX512:     arith.mulf
// CHECK:         math.absf
// CHECK-COUNT-6: math.fma
// CHECK:         arith.cmpf ult
// CHECK:         arith.addf
// CHECK-COUNT-9: math.fma
// AVX512:        llvm.intr.ldexp({{.*}}) : (f32, i32) -> f32
// NO-AVX512:     arith.mulf
// NO-AVX512:     arith.mulf
// CHECK:         arith.divf
// CHECK:         arith.cmpf olt
// CHECK:         math.copysign
// CHECK-NOT:     math.tanh
// CHECK-NOT:     math.exp
// CHECK-LABEL: func.func @fast(
// CHECK-NOT:     et.fastmath
// CHECK-NOT:     math.tanh
// CHECK:         arith.divf
// CHECK:         math.copysign
// Vector exp (as the tile stage's vectorized code would hold): splat constants, vector ops, f64 too;
// exponent-bit scalings on every host (MLIR's llvm.intr.ldexp takes no vector exponent).
// CHECK-LABEL: func.func @vectors(
// CHECK-NOT:     math.exp
// CHECK-DAG:     arith.constant dense<{{.*}}> : vector<8xf32>
// CHECK-DAG:     arith.constant dense<{{.*}}> : vector<4xi64>
// CHECK-DAG:     math.fma {{.*}} : vector<8xf32>
// CHECK-DAG:     math.fma {{.*}} : vector<4xf64>
// CHECK-DAG:     arith.shli {{.*}} : vector<4xi64>
// CHECK-DAG:     arith.shli {{.*}} : vector<8xi32>
// CHECK:         return
// Input: the IR after `lanes` (hand-written kernels).
#map = affine_map<(d0) -> (d0)>
module {
  func.func @kernel(%arg0: memref<16xf32>, %arg1: memref<16xf32>) attributes {llvm.emit_c_interface} {
    linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel"]} ins(%arg0 : memref<16xf32>) outs(%arg1 : memref<16xf32>) {
    ^bb0(%in: f32, %out: f32):
      %0 = math.exp %in : f32
      %1 = math.tanh %0 : f32
      linalg.yield %1 : f32
    }
    return
  }
  func.func @fast(%arg0: memref<16xf32>, %arg1: memref<16xf32>) attributes {et.fastmath} {
    linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel"]} ins(%arg0 : memref<16xf32>) outs(%arg1 : memref<16xf32>) {
    ^bb0(%in: f32, %out: f32):
      %0 = math.tanh %in : f32
      linalg.yield %0 : f32
    }
    return
  }
  func.func @vectors(%arg0: vector<8xf32>, %arg1: vector<4xf64>) -> (vector<8xf32>, vector<4xf64>) {
    %0 = math.exp %arg0 : vector<8xf32>
    %1 = math.exp %arg1 : vector<4xf64>
    return %0, %1 : vector<8xf32>, vector<4xf64>
  }
}
