// RUN: %python -m egglog_tensor.opt --target cpu-openmp --threads 4 --stage openmp %s | %FileCheck %s
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
// Input: the IR after `vector` (cpu-openmp, 4 threads; hand-written kernel).
#map = affine_map<(d0) -> (d0 * 128)>
module {
  func.func @kernel(%arg0: memref<512x300xf32>, %arg1: memref<512x300xf32>, %arg2: memref<512x300xf32>) attributes {llvm.emit_c_interface} {
    %c1 = arith.constant 1 : index
    %c38400 = arith.constant 38400 : index
    %c0 = arith.constant 0 : index
    %c4 = arith.constant 4 : index
    scf.parallel (%arg3) = (%c0) to (%c4) step (%c1) {
      %0 = affine.apply #map(%arg3)
      %subview = memref.subview %arg0[%0, 0] [128, 300] [1, 1] : memref<512x300xf32> to memref<128x300xf32, strided<[300, 1], offset: ?>>
      %subview_0 = memref.subview %arg1[%0, 0] [128, 300] [1, 1] : memref<512x300xf32> to memref<128x300xf32, strided<[300, 1], offset: ?>>
      %subview_1 = memref.subview %arg2[%0, 0] [128, 300] [1, 1] : memref<512x300xf32> to memref<128x300xf32, strided<[300, 1], offset: ?>>
      %collapse_shape = memref.collapse_shape %subview [[0, 1]] : memref<128x300xf32, strided<[300, 1], offset: ?>> into memref<38400xf32, strided<[1], offset: ?>>
      %collapse_shape_2 = memref.collapse_shape %subview_0 [[0, 1]] : memref<128x300xf32, strided<[300, 1], offset: ?>> into memref<38400xf32, strided<[1], offset: ?>>
      %collapse_shape_3 = memref.collapse_shape %subview_1 [[0, 1]] : memref<128x300xf32, strided<[300, 1], offset: ?>> into memref<38400xf32, strided<[1], offset: ?>>
      scf.for %arg4 = %c0 to %c38400 step %c1 {
        %1 = memref.load %collapse_shape[%arg4] : memref<38400xf32, strided<[1], offset: ?>>
        %2 = memref.load %collapse_shape_2[%arg4] : memref<38400xf32, strided<[1], offset: ?>>
        %3 = arith.mulf %1, %2 : f32
        %4 = arith.addf %3, %1 : f32
        memref.store %4, %collapse_shape_3[%arg4] : memref<38400xf32, strided<[1], offset: ?>>
      }
      scf.reduce 
    }
    return
  }
}
