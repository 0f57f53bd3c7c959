// RUN: %python -m egglog_tensor.opt --stage vector %s | %FileCheck %s
// n-D vector transfers become unrolled 1-D ones: the 5x12 register tile of this matmul is read,
// summed and written as 5 rows of vector<12xf32>; no 2-D transfer is left.
// CHECK-LABEL: func.func @kernel(
// CHECK:         scf.for {{.*}} iter_args({{.*}}) -> (vector<5x12xf32>) {
// CHECK-COUNT-5:   vector.transfer_read {{.*}} : memref<5x16xf32>, vector<1xf32>
// CHECK:           vector.transfer_read {{.*}} : memref<16x12xf32>, vector<12xf32>
// CHECK-COUNT-5:   vector.fma {{.*}} : vector<12xf32>
// CHECK:           scf.yield {{.*}} : vector<5x12xf32>
// CHECK-COUNT-5: vector.transfer_read {{.*}} : memref<5x12xf32>, vector<12xf32>
// CHECK:         arith.addf {{.*}} : vector<5x12xf32>
// CHECK-COUNT-5: vector.transfer_write {{.*}} : vector<12xf32>, memref<5x12xf32>
// CHECK-NOT:     vector.transfer_{{read|write}} {{.*}}vector<{{[0-9]+}}x{{[0-9]+}}xf32>
// CHECK:         return
// Input: the IR after `interleave` for (5,16) @ (16,12) float32.
module {
  func.func @kernel(%arg0: memref<5x16xf32>, %arg1: memref<16x12xf32>, %arg2: memref<5x12xf32> {et.output}) attributes {llvm.emit_c_interface} {
    %cst = arith.constant dense<0.000000e+00> : vector<5x12xf32>
    %0 = ub.poison : f32
    %c1 = arith.constant 1 : index
    %c16 = arith.constant 16 : index
    %c0 = arith.constant 0 : index
    %cst_0 = arith.constant 0.000000e+00 : f32
    %c5 = arith.constant 5 : index
    %c12 = arith.constant 12 : index
    scf.for %arg3 = %c0 to %c5 step %c1 {
      scf.for %arg4 = %c0 to %c12 step %c1 {
        memref.store %cst_0, %arg2[%arg3, %arg4] : memref<5x12xf32>
      }
    }
    %alloc = memref.alloc() : memref<16x12xf32>
    scf.for %arg3 = %c0 to %c16 step %c1 {
      scf.for %arg4 = %c0 to %c12 step %c1 {
        %4 = memref.load %arg1[%arg3, %arg4] : memref<16x12xf32>
        memref.store %4, %alloc[%arg3, %arg4] : memref<16x12xf32>
      }
    }
    %1 = scf.for %arg3 = %c0 to %c16 step %c1 iter_args(%arg4 = %cst) -> (vector<5x12xf32>) {
      %4 = vector.transfer_read %arg0[%c0, %arg3], %0 {in_bounds = [true, true]} : memref<5x16xf32>, vector<5x1xf32>
      %5 = vector.transfer_read %alloc[%arg3, %c0], %0 {in_bounds = [true]} : memref<16x12xf32>, vector<12xf32>
      %6 = vector.extract %4[0, 0] : f32 from vector<5x1xf32>
      %7 = vector.broadcast %6 : f32 to vector<12xf32>
      %8 = vector.extract %arg4[0] : vector<12xf32> from vector<5x12xf32>
      %9 = vector.fma %7, %5, %8 : vector<12xf32>
      %10 = vector.extract %4[1, 0] : f32 from vector<5x1xf32>
      %11 = vector.broadcast %10 : f32 to vector<12xf32>
      %12 = vector.extract %arg4[1] : vector<12xf32> from vector<5x12xf32>
      %13 = vector.fma %11, %5, %12 : vector<12xf32>
      %14 = vector.extract %4[2, 0] : f32 from vector<5x1xf32>
      %15 = vector.broadcast %14 : f32 to vector<12xf32>
      %16 = vector.extract %arg4[2] : vector<12xf32> from vector<5x12xf32>
      %17 = vector.fma %15, %5, %16 : vector<12xf32>
      %18 = vector.extract %4[3, 0] : f32 from vector<5x1xf32>
      %19 = vector.broadcast %18 : f32 to vector<12xf32>
      %20 = vector.extract %arg4[3] : vector<12xf32> from vector<5x12xf32>
      %21 = vector.fma %19, %5, %20 : vector<12xf32>
      %22 = vector.extract %4[4, 0] : f32 from vector<5x1xf32>
      %23 = vector.broadcast %22 : f32 to vector<12xf32>
      %24 = vector.extract %arg4[4] : vector<12xf32> from vector<5x12xf32>
      %25 = vector.fma %23, %5, %24 : vector<12xf32>
      %26:12 = vector.to_elements %9 : vector<12xf32>
      %27:12 = vector.to_elements %13 : vector<12xf32>
      %28:12 = vector.to_elements %17 : vector<12xf32>
      %29:12 = vector.to_elements %21 : vector<12xf32>
      %30:12 = vector.to_elements %25 : vector<12xf32>
      %31 = vector.from_elements %26#0, %26#1, %26#2, %26#3, %26#4, %26#5, %26#6, %26#7, %26#8, %26#9, %26#10, %26#11, %27#0, %27#1, %27#2, %27#3, %27#4, %27#5, %27#6, %27#7, %27#8, %27#9, %27#10, %27#11, %28#0, %28#1, %28#2, %28#3, %28#4, %28#5, %28#6, %28#7, %28#8, %28#9, %28#10, %28#11, %29#0, %29#1, %29#2, %29#3, %29#4, %29#5, %29#6, %29#7, %29#8, %29#9, %29#10, %29#11, %30#0, %30#1, %30#2, %30#3, %30#4, %30#5, %30#6, %30#7, %30#8, %30#9, %30#10, %30#11 : vector<5x12xf32>
      scf.yield %31 : vector<5x12xf32>
    }
    %2 = vector.transfer_read %arg2[%c0, %c0], %0 {in_bounds = [true, true]} : memref<5x12xf32>, vector<5x12xf32>
    %3 = arith.addf %2, %1 : vector<5x12xf32>
    vector.transfer_write %3, %arg2[%c0, %c0] {in_bounds = [true, true]} : vector<5x12xf32>, memref<5x12xf32>
    memref.dealloc %alloc : memref<16x12xf32>
    return
  }
}
