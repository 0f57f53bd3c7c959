// PIPELINE: cpu-openmp STAGE: openmp
// The parallel dimensions of a matmul become one collapsed omp.wsloop; the reduction stays a sequential scf.for.
// CHECK-LABEL: func.func @kernel(
// CHECK:       omp.parallel {
// CHECK-NEXT:    omp.wsloop {
// CHECK-NEXT:      omp.loop_nest (%{{.*}}, %{{.*}}) : index = {{.*}} collapse(2) {
// CHECK:             scf.for
// CHECK:               arith.mulf
// CHECK:               arith.addf
// CHECK:           omp.yield
// CHECK:       omp.terminator
// CHECK-NOT:   linalg.
func.func @kernel(%a: memref<8x16xf32>, %b: memref<16x4xf32>, %out: memref<8x4xf32>) attributes {llvm.emit_c_interface} {
  %ta = bufferization.to_tensor %a restrict : memref<8x16xf32> to tensor<8x16xf32>
  %tb = bufferization.to_tensor %b restrict : memref<16x4xf32> to tensor<16x4xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x4xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<8x4xf32>) -> tensor<8x4xf32>
  %r = linalg.matmul ins(%ta, %tb : tensor<8x16xf32>, tensor<16x4xf32>) outs(%init : tensor<8x4xf32>) -> tensor<8x4xf32>
  bufferization.materialize_in_destination %r in restrict writable %out : (tensor<8x4xf32>, memref<8x4xf32>) -> ()
  return
}
