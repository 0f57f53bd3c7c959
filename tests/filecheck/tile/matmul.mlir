// RUN: %python -m egglog_tensor.opt --stage tile %s | %FileCheck %s
// The matmul tagged et.tiles/et.vec becomes a register tile on tensors: one scf.for over k carrying
// an 8x16 vector accumulator, each step 8 vector.fma (a broadcast A element times a B row); the k
// loop starts from zero and its sum is added to C after it (accumulate.restart). No linalg.matmul left.
// CHECK-LABEL: func.func @kernel(
// CHECK-NOT:     linalg.matmul
// CHECK:         %[[ACC:[0-9]+]] = scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%{{.*}} = %{{.*}}) -> (vector<8x16xf32>) {
// CHECK:           vector.transfer_read {{.*}} : tensor<8x16xf32>, vector<8x1xf32>
// CHECK:           vector.transfer_read {{.*}} : tensor<16x16xf32>, vector<16xf32>
// CHECK-COUNT-8:   vector.fma {{.*}} : vector<16xf32>
// CHECK:           scf.yield {{.*}} : vector<8x16xf32>
// CHECK:         %[[C:[0-9]+]] = vector.transfer_read {{.*}} : tensor<8x16xf32>, vector<8x16xf32>
// CHECK:         %[[SUM:[0-9]+]] = arith.addf %[[C]], %[[ACC]] : vector<8x16xf32>
// CHECK:         vector.transfer_write %[[SUM]]
// CHECK-NOT:     linalg.matmul
// Input: the IR after `rows` for (8,16) @ (16,16) float32.
module {
  func.func @kernel(%arg0: memref<8x16xf32>, %arg1: memref<16x16xf32>, %arg2: memref<8x16xf32> {et.output}) attributes {llvm.emit_c_interface} {
    %0 = bufferization.to_tensor %arg0 restrict : memref<8x16xf32> to tensor<8x16xf32>
    %1 = bufferization.to_tensor %arg1 restrict : memref<16x16xf32> to tensor<16x16xf32>
    %2 = tensor.empty() : tensor<8x16xf32>
    %cst = arith.constant 0.000000e+00 : f32
    %3 = linalg.fill ins(%cst : f32) outs(%2 : tensor<8x16xf32>) -> tensor<8x16xf32>
    %4 = linalg.matmul {et.tiles = [8, 16, 16], et.vec = [8, 16, 1]} ins(%0, %1 : tensor<8x16xf32>, tensor<16x16xf32>) outs(%3 : tensor<8x16xf32>) -> tensor<8x16xf32>
    bufferization.materialize_in_destination %4 in restrict writable %arg2 : (tensor<8x16xf32>, memref<8x16xf32>) -> ()
    return
  }
}
