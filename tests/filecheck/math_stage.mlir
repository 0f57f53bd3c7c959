// PIPELINE: cpu STAGE: math
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
#map = affine_map<(d0) -> (d0)>
func.func @kernel(%a: memref<16xf32>, %out: memref<16xf32>) attributes {llvm.emit_c_interface} {
  %ta = bufferization.to_tensor %a restrict : memref<16xf32> to tensor<16xf32>
  %e = tensor.empty() : tensor<16xf32>
  %r = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel"]} ins(%ta : tensor<16xf32>) outs(%e : tensor<16xf32>) {
  ^bb0(%x: f32, %o: f32):
    %y = math.exp %x : f32
    %z = math.tanh %y : f32
    linalg.yield %z : f32
  } -> tensor<16xf32>
  bufferization.materialize_in_destination %r in restrict writable %out : (tensor<16xf32>, memref<16xf32>) -> ()
  return
}
func.func @fast(%a: memref<16xf32>, %out: memref<16xf32>) attributes {et.fastmath} {
  %ta = bufferization.to_tensor %a restrict : memref<16xf32> to tensor<16xf32>
  %e = tensor.empty() : tensor<16xf32>
  %r = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel"]} ins(%ta : tensor<16xf32>) outs(%e : tensor<16xf32>) {
  ^bb0(%x: f32, %o: f32):
    %z = math.tanh %x : f32
    linalg.yield %z : f32
  } -> tensor<16xf32>
  bufferization.materialize_in_destination %r in restrict writable %out : (tensor<16xf32>, memref<16xf32>) -> ()
  return
}
func.func @vectors(%v: vector<8xf32>, %w: vector<4xf64>) -> (vector<8xf32>, vector<4xf64>) {
  %e = math.exp %v : vector<8xf32>
  %f = math.exp %w : vector<4xf64>
  return %e, %f : vector<8xf32>, vector<4xf64>
}
