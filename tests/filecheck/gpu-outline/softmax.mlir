// RUN: %python -m egglog_tensor.opt --stage gpu-outline --target rocdl:gfx942 %s | %FileCheck %s
// The four launches of softmax outlined (its input: gpu-map's): the host function keeps the buffers and
// gpu.launch_func ops with their grid, block and operands; each kernel a gpu.func in its own gpu.module,
// with its known block and grid sizes (what the HSACO's reqd_workgroup_size and PTX's .maxntid come from).
// CHECK-LABEL: func.func @kernel(
// CHECK:         gpu.launch_func @kernel_kernel::@kernel_kernel blocks in (%c1, %c1, %c1) threads in (%c64, %c1, %c1) args(%arg0 : memref<64x300xf32>, %[[MAX:.*]] : memref<64xf32>)
// CHECK:         gpu.launch_func @kernel_kernel_0::@kernel_kernel blocks in (%c2, %c64, %c1) threads in (%c256, %c1, %c1) args(%arg0 : memref<64x300xf32>, %[[MAX]] : memref<64xf32>, %[[E:.*]] : memref<64x300xf32>)
// CHECK:         gpu.launch_func @kernel_kernel_1::@kernel_kernel {{.*}} args(%[[E]] : memref<64x300xf32>, %[[SUM:.*]] : memref<64xf32>)
// CHECK:         gpu.launch_func @kernel_kernel_2::@kernel_kernel {{.*}} args(%[[E]] : memref<64x300xf32>, %[[SUM]] : memref<64xf32>, %arg1 : memref<64x300xf32>)
// CHECK-NOT:     gpu.launch blocks
// CHECK:       gpu.module @kernel_kernel {
// CHECK:         gpu.func @kernel_kernel(%arg0: memref<64x300xf32>, %arg1: memref<64xf32>) kernel attributes {known_block_size = array<i32: 64, 1, 1>, known_grid_size = array<i32: 1, 1, 1>}
// CHECK:       gpu.module @kernel_kernel_0 {
// CHECK:         gpu.func @kernel_kernel({{.*}}) kernel attributes {known_block_size = array<i32: 256, 1, 1>, known_grid_size = array<i32: 2, 64, 1>}
// CHECK:           math.exp
// CHECK:       gpu.module @kernel_kernel_1 {
// CHECK:       gpu.module @kernel_kernel_2 {
// CHECK:           arith.divf

#map = affine_map<()[s0] -> (s0 * 256)>
#map1 = affine_map<()[s0] -> (s0 * -256 + 300, 256)>
#map2 = affine_map<()[s0, s1] -> (s0 - s1 * (s0 ceildiv 256), s0 ceildiv 256)>
#map3 = affine_map<()[s0] -> (0, s0)>
#map4 = affine_map<()[s0, s1] -> (s1 * (s0 ceildiv 256))>
module {
  func.func @kernel(%arg0: memref<64x300xf32>, %arg1: memref<64x300xf32> {et.output}) attributes {llvm.emit_c_interface} {
    %c300 = arith.constant 300 : index
    %c0 = arith.constant 0 : index
    %c2 = arith.constant 2 : index
    %c256 = arith.constant 256 : index
    %c64 = arith.constant 64 : index
    %c1 = arith.constant 1 : index
    %cst = arith.constant 0.000000e+00 : f32
    %cst_0 = arith.constant 0xFF800000 : f32
    %alloc = memref.alloc() {alignment = 64 : i64} : memref<64xf32>
    gpu.launch blocks(%arg2, %arg3, %arg4) in (%arg8 = %c1, %arg9 = %c1, %arg10 = %c1) threads(%arg5, %arg6, %arg7) in (%arg11 = %c64, %arg12 = %c1, %arg13 = %c1) {
      %cst_3 = arith.constant 0xFF800000 : f32
      %c0_4 = arith.constant 0 : index
      %c1_5 = arith.constant 1 : index
      %c300_6 = arith.constant 300 : index
      %thread_id_x = gpu.thread_id  x
      %subview = memref.subview %arg0[%thread_id_x, 0] [1, 300] [1, 1] : memref<64x300xf32> to memref<1x300xf32, strided<[300, 1], offset: ?>>
      %subview_7 = memref.subview %alloc[%thread_id_x] [1] [1] : memref<64xf32> to memref<1xf32, strided<[1], offset: ?>>
      scf.for %arg14 = %c0_4 to %c1_5 step %c1_5 {
        memref.store %cst_3, %subview_7[%arg14] : memref<1xf32, strided<[1], offset: ?>>
      }
      scf.for %arg14 = %c0_4 to %c1_5 step %c1_5 {
        scf.for %arg15 = %c0_4 to %c300_6 step %c1_5 {
          %0 = memref.load %subview[%arg14, %arg15] : memref<1x300xf32, strided<[300, 1], offset: ?>>
          %1 = memref.load %subview_7[%arg14] : memref<1xf32, strided<[1], offset: ?>>
          %2 = arith.maximumf %1, %0 : f32
          memref.store %2, %subview_7[%arg14] : memref<1xf32, strided<[1], offset: ?>>
        }
      }
      gpu.terminator
    }
    %alloc_1 = memref.alloc() {alignment = 64 : i64} : memref<64x300xf32>
    gpu.launch blocks(%arg2, %arg3, %arg4) in (%arg8 = %c2, %arg9 = %c64, %arg10 = %c1) threads(%arg5, %arg6, %arg7) in (%arg11 = %c256, %arg12 = %c1, %arg13 = %c1) {
      %c0_3 = arith.constant 0 : index
      %c1_4 = arith.constant 1 : index
      %block_id_x = gpu.block_id  x
      %block_id_y = gpu.block_id  y
      %0 = affine.apply #map()[%block_id_x]
      %1 = affine.min #map1()[%block_id_x]
      %subview = memref.subview %arg0[%block_id_y, %0] [1, %1] [1, 1] : memref<64x300xf32> to memref<1x?xf32, strided<[300, 1], offset: ?>>
      %subview_5 = memref.subview %alloc[%block_id_y] [1] [1] : memref<64xf32> to memref<1xf32, strided<[1], offset: ?>>
      %subview_6 = memref.subview %alloc_1[%block_id_y, %0] [1, %1] [1, 1] : memref<64x300xf32> to memref<1x?xf32, strided<[300, 1], offset: ?>>
      %thread_id_x = gpu.thread_id  x
      %2 = affine.min #map2()[%1, %thread_id_x]
      %3 = affine.max #map3()[%2]
      %4 = affine.apply #map4()[%1, %thread_id_x]
      %subview_7 = memref.subview %subview[0, %4] [1, %3] [1, 1] : memref<1x?xf32, strided<[300, 1], offset: ?>> to memref<1x?xf32, strided<[300, 1], offset: ?>>
      %subview_8 = memref.subview %subview_6[0, %4] [1, %3] [1, 1] : memref<1x?xf32, strided<[300, 1], offset: ?>> to memref<1x?xf32, strided<[300, 1], offset: ?>>
      scf.for %arg14 = %c0_3 to %c1_4 step %c1_4 {
        scf.for %arg15 = %c0_3 to %3 step %c1_4 {
          %5 = memref.load %subview_7[%arg14, %arg15] : memref<1x?xf32, strided<[300, 1], offset: ?>>
          %6 = memref.load %subview_5[%arg14] : memref<1xf32, strided<[1], offset: ?>>
          %7 = arith.subf %5, %6 : f32
          %8 = math.exp %7 : f32
          memref.store %8, %subview_8[%arg14, %arg15] : memref<1x?xf32, strided<[300, 1], offset: ?>>
        }
      }
      gpu.terminator
    }
    %alloc_2 = memref.alloc() {alignment = 64 : i64} : memref<64xf32>
    gpu.launch blocks(%arg2, %arg3, %arg4) in (%arg8 = %c1, %arg9 = %c1, %arg10 = %c1) threads(%arg5, %arg6, %arg7) in (%arg11 = %c64, %arg12 = %c1, %arg13 = %c1) {
      %cst_3 = arith.constant 0.000000e+00 : f32
      %c0_4 = arith.constant 0 : index
      %c1_5 = arith.constant 1 : index
      %c300_6 = arith.constant 300 : index
      %thread_id_x = gpu.thread_id  x
      %subview = memref.subview %alloc_1[%thread_id_x, 0] [1, 300] [1, 1] : memref<64x300xf32> to memref<1x300xf32, strided<[300, 1], offset: ?>>
      %subview_7 = memref.subview %alloc_2[%thread_id_x] [1] [1] : memref<64xf32> to memref<1xf32, strided<[1], offset: ?>>
      scf.for %arg14 = %c0_4 to %c1_5 step %c1_5 {
        memref.store %cst_3, %subview_7[%arg14] : memref<1xf32, strided<[1], offset: ?>>
      }
      scf.for %arg14 = %c0_4 to %c1_5 step %c1_5 {
        scf.for %arg15 = %c0_4 to %c300_6 step %c1_5 {
          %0 = memref.load %subview[%arg14, %arg15] : memref<1x300xf32, strided<[300, 1], offset: ?>>
          %1 = memref.load %subview_7[%arg14] : memref<1xf32, strided<[1], offset: ?>>
          %2 = arith.addf %1, %0 fastmath<reassoc> : f32
          memref.store %2, %subview_7[%arg14] : memref<1xf32, strided<[1], offset: ?>>
        }
      }
      gpu.terminator
    }
    gpu.launch blocks(%arg2, %arg3, %arg4) in (%arg8 = %c2, %arg9 = %c64, %arg10 = %c1) threads(%arg5, %arg6, %arg7) in (%arg11 = %c256, %arg12 = %c1, %arg13 = %c1) {
      %c0_3 = arith.constant 0 : index
      %c1_4 = arith.constant 1 : index
      %block_id_x = gpu.block_id  x
      %block_id_y = gpu.block_id  y
      %0 = affine.apply #map()[%block_id_x]
      %1 = affine.min #map1()[%block_id_x]
      %subview = memref.subview %alloc_1[%block_id_y, %0] [1, %1] [1, 1] : memref<64x300xf32> to memref<1x?xf32, strided<[300, 1], offset: ?>>
      %subview_5 = memref.subview %alloc_2[%block_id_y] [1] [1] : memref<64xf32> to memref<1xf32, strided<[1], offset: ?>>
      %subview_6 = memref.subview %arg1[%block_id_y, %0] [1, %1] [1, 1] : memref<64x300xf32> to memref<1x?xf32, strided<[300, 1], offset: ?>>
      %thread_id_x = gpu.thread_id  x
      %2 = affine.min #map2()[%1, %thread_id_x]
      %3 = affine.max #map3()[%2]
      %4 = affine.apply #map4()[%1, %thread_id_x]
      %subview_7 = memref.subview %subview[0, %4] [1, %3] [1, 1] : memref<1x?xf32, strided<[300, 1], offset: ?>> to memref<1x?xf32, strided<[300, 1], offset: ?>>
      %subview_8 = memref.subview %subview_6[0, %4] [1, %3] [1, 1] : memref<1x?xf32, strided<[300, 1], offset: ?>> to memref<1x?xf32, strided<[300, 1], offset: ?>>
      scf.for %arg14 = %c0_3 to %c1_4 step %c1_4 {
        scf.for %arg15 = %c0_3 to %3 step %c1_4 {
          %5 = memref.load %subview_7[%arg14, %arg15] : memref<1x?xf32, strided<[300, 1], offset: ?>>
          %6 = memref.load %subview_5[%arg14] : memref<1xf32, strided<[1], offset: ?>>
          %7 = arith.divf %5, %6 : f32
          memref.store %7, %subview_8[%arg14, %arg15] : memref<1x?xf32, strided<[300, 1], offset: ?>>
        }
      }
      gpu.terminator
    }
    return
  }
}
