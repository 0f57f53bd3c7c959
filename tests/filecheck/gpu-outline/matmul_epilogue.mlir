// RUN: %python -m egglog_tensor.opt --stage gpu-outline --target rocdl:gfx942 %s | %FileCheck %s
// The product and its epilogue outlined (its input: gpu-map's): two kernels through the intermediate buffer.
// CHECK-LABEL: func.func @kernel(
// CHECK:         %[[C:.*]] = memref.alloc() {{.*}} : memref<64x48xf32>
// CHECK:         gpu.launch_func @kernel_kernel::@kernel_kernel blocks in (%c1, %c64, %c1) threads in (%c64, %c1, %c1) args(%arg0 : memref<64x32xf32>, %[[C]] : memref<64x48xf32>, %arg1 : memref<32x48xf32>)
// CHECK:         gpu.launch_func @kernel_kernel_0::@kernel_kernel blocks in (%c1, %c64, %c1) threads in (%c64, %c1, %c1) args(%[[C]] : memref<64x48xf32>, %arg2 : memref<64x48xf32>)
// CHECK:       gpu.module @kernel_kernel {
// CHECK:         gpu.func @kernel_kernel(%arg0: memref<64x32xf32>, %arg1: memref<64x48xf32>, %arg2: memref<32x48xf32>) kernel attributes {known_block_size = array<i32: 64, 1, 1>, known_grid_size = array<i32: 1, 64, 1>}
// CHECK:           arith.mulf
// CHECK:       gpu.module @kernel_kernel_0 {
// CHECK:           math.tanh

#map = affine_map<()[s0] -> (-s0 + 48, 1)>
#map1 = affine_map<()[s0] -> (0, s0)>
module {
  func.func @kernel(%arg0: memref<64x32xf32>, %arg1: memref<32x48xf32>, %arg2: memref<64x48xf32> {et.output}) attributes {llvm.emit_c_interface} {
    %c32 = arith.constant 32 : index
    %c48 = arith.constant 48 : index
    %c0 = arith.constant 0 : index
    %c64 = arith.constant 64 : index
    %c1 = arith.constant 1 : index
    %cst = arith.constant 1.000000e+00 : f32
    %cst_0 = arith.constant 0.000000e+00 : f32
    %alloc = memref.alloc() {alignment = 64 : i64} : memref<64x48xf32>
    gpu.launch blocks(%arg3, %arg4, %arg5) in (%arg9 = %c1, %arg10 = %c64, %arg11 = %c1) threads(%arg6, %arg7, %arg8) in (%arg12 = %c64, %arg13 = %c1, %arg14 = %c1) {
      %cst_1 = arith.constant 0.000000e+00 : f32
      %c0_2 = arith.constant 0 : index
      %c48_3 = arith.constant 48 : index
      %c1_4 = arith.constant 1 : index
      %c32_5 = arith.constant 32 : index
      %block_id_y = gpu.block_id  y
      %subview = memref.subview %arg0[%block_id_y, 0] [1, 32] [1, 1] : memref<64x32xf32> to memref<1x32xf32, strided<[32, 1], offset: ?>>
      %subview_6 = memref.subview %alloc[%block_id_y, 0] [1, 48] [1, 1] : memref<64x48xf32> to memref<1x48xf32, strided<[48, 1], offset: ?>>
      %alloc_7 = memref.alloc() {alignment = 64 : i64} : memref<1x48xf32>
      scf.for %arg15 = %c0_2 to %c1_4 step %c1_4 {
        scf.for %arg16 = %c0_2 to %c48_3 step %c1_4 {
          memref.store %cst_1, %alloc_7[%arg15, %arg16] : memref<1x48xf32>
        }
      }
      %thread_id_x = gpu.thread_id  x
      %0 = affine.min #map()[%thread_id_x]
      %1 = affine.max #map1()[%0]
      %subview_8 = memref.subview %arg1[0, %thread_id_x] [32, %1] [1, 1] : memref<32x48xf32> to memref<32x?xf32, strided<[48, 1], offset: ?>>
      %subview_9 = memref.subview %subview_6[0, %thread_id_x] [1, %1] [1, 1] : memref<1x48xf32, strided<[48, 1], offset: ?>> to memref<1x?xf32, strided<[48, 1], offset: ?>>
      scf.for %arg15 = %c0_2 to %c1_4 step %c1_4 {
        scf.for %arg16 = %c0_2 to %1 step %c1_4 {
          memref.store %cst_1, %subview_9[%arg15, %arg16] : memref<1x?xf32, strided<[48, 1], offset: ?>>
        }
      }
      scf.for %arg15 = %c0_2 to %c1_4 step %c1_4 {
        scf.for %arg16 = %c0_2 to %1 step %c1_4 {
          scf.for %arg17 = %c0_2 to %c32_5 step %c1_4 {
            %2 = memref.load %subview[%arg15, %arg17] : memref<1x32xf32, strided<[32, 1], offset: ?>>
            %3 = memref.load %subview_8[%arg17, %arg16] : memref<32x?xf32, strided<[48, 1], offset: ?>>
            %4 = memref.load %subview_9[%arg15, %arg16] : memref<1x?xf32, strided<[48, 1], offset: ?>>
            %5 = arith.mulf %2, %3 : f32
            %6 = arith.addf %4, %5 : f32
            memref.store %6, %subview_9[%arg15, %arg16] : memref<1x?xf32, strided<[48, 1], offset: ?>>
          }
        }
      }
      gpu.terminator
    }
    gpu.launch blocks(%arg3, %arg4, %arg5) in (%arg9 = %c1, %arg10 = %c64, %arg11 = %c1) threads(%arg6, %arg7, %arg8) in (%arg12 = %c64, %arg13 = %c1, %arg14 = %c1) {
      %cst_1 = arith.constant 1.000000e+00 : f32
      %c0_2 = arith.constant 0 : index
      %c1_3 = arith.constant 1 : index
      %block_id_y = gpu.block_id  y
      %subview = memref.subview %alloc[%block_id_y, 0] [1, 48] [1, 1] : memref<64x48xf32> to memref<1x48xf32, strided<[48, 1], offset: ?>>
      %subview_4 = memref.subview %arg2[%block_id_y, 0] [1, 48] [1, 1] : memref<64x48xf32> to memref<1x48xf32, strided<[48, 1], offset: ?>>
      %thread_id_x = gpu.thread_id  x
      %0 = affine.min #map()[%thread_id_x]
      %1 = affine.max #map1()[%0]
      %subview_5 = memref.subview %subview[0, %thread_id_x] [1, %1] [1, 1] : memref<1x48xf32, strided<[48, 1], offset: ?>> to memref<1x?xf32, strided<[48, 1], offset: ?>>
      %subview_6 = memref.subview %subview_4[0, %thread_id_x] [1, %1] [1, 1] : memref<1x48xf32, strided<[48, 1], offset: ?>> to memref<1x?xf32, strided<[48, 1], offset: ?>>
      scf.for %arg15 = %c0_2 to %c1_3 step %c1_3 {
        scf.for %arg16 = %c0_2 to %1 step %c1_3 {
          %2 = memref.load %subview_5[%arg15, %arg16] : memref<1x?xf32, strided<[48, 1], offset: ?>>
          %3 = arith.addf %2, %cst_1 : f32
          %4 = math.tanh %3 : f32
          memref.store %4, %subview_6[%arg15, %arg16] : memref<1x?xf32, strided<[48, 1], offset: ?>>
        }
      }
      gpu.terminator
    }
    return
  }
}
