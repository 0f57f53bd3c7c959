// PIPELINE: cpu-openmp STAGE: openmp
// The "parallel" stage splits the generic into one chunk of rows per thread: only that loop is an
// omp.wsloop (no collapse); the chunk, a block of whole rows, is contiguous, so the "flatten" stage
// made it one sequential scf.for over its elements, which LLVM vectorizes.
// CHECK-LABEL: func.func @kernel(
// CHECK:       omp.parallel num_threads(
// CHECK-NEXT:    omp.wsloop {
// CHECK-NEXT:      omp.loop_nest (%{{[^,]*}}) : index = {{.*}} {
// CHECK-NOT:         collapse
// CHECK:             memref.subview
// CHECK:             memref.collapse_shape {{.*}} into memref<{{[0-9]+}}xf32, strided<[1], offset: ?>>
// CHECK:             scf.for
// CHECK-NOT:           scf.for
// CHECK:               arith.mulf
// CHECK:               arith.addf
// CHECK:           omp.yield
// CHECK:       omp.terminator
// CHECK-NOT:   linalg.
#map = affine_map<(d0, d1) -> (d0, d1)>
func.func @kernel(%a: memref<512x300xf32>, %b: memref<512x300xf32>, %out: memref<512x300xf32>) attributes {llvm.emit_c_interface} {
  %ta = bufferization.to_tensor %a restrict : memref<512x300xf32> to tensor<512x300xf32>
  %tb = bufferization.to_tensor %b restrict : memref<512x300xf32> to tensor<512x300xf32>
  %e = tensor.empty() : tensor<512x300xf32>
  %r = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel"]} ins(%ta, %tb : tensor<512x300xf32>, tensor<512x300xf32>) outs(%e : tensor<512x300xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %m = arith.mulf %x, %y : f32
    %s = arith.addf %m, %x : f32
    linalg.yield %s : f32
  } -> tensor<512x300xf32>
  bufferization.materialize_in_destination %r in restrict writable %out : (tensor<512x300xf32>, memref<512x300xf32>) -> ()
  return
}
