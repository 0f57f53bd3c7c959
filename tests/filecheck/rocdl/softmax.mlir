// RUN: %python -m egglog_tensor.opt --stage rocdl --target rocdl:gfx942 %s | %FileCheck %s
// Softmax's kernels (its input: noalias's) in the ROCDL and LLVM dialects for gfx942: each memref one noalias
// pointer (static, contiguous), the block ids and thread ids as the backend's intrinsics, the launch bounds from the
// known block size, exp as inline FMAs (no device math library).
// CHECK:       gpu.module @kernel_kernel [#rocdl.target<chip = "gfx942">]
// CHECK:         llvm.func @kernel_kernel(%arg0: !llvm.ptr {llvm.noalias}, %arg1: !llvm.ptr {llvm.noalias}) attributes {gpu.kernel, gpu.known_block_size = array<i32: 64, 1, 1>, gpu.known_grid_size = array<i32: 1, 1, 1>, rocdl.flat_work_group_size = "64,64", rocdl.kernel, rocdl.reqd_work_group_size = array<i32: 64, 1, 1>}
// CHECK:           rocdl.workitem.id.x
// CHECK:           llvm.intr.maximum
// CHECK:       gpu.module @kernel_kernel_0 [#rocdl.target<chip = "gfx942">]
// CHECK:         llvm.func @kernel_kernel(%arg0: !llvm.ptr {llvm.noalias}, %arg1: !llvm.ptr {llvm.noalias}, %arg2: !llvm.ptr {llvm.noalias}) attributes {gpu.kernel, gpu.known_block_size = array<i32: 256, 1, 1>, gpu.known_grid_size = array<i32: 2, 64, 1>, rocdl.flat_work_group_size = "256,256", rocdl.kernel, rocdl.reqd_work_group_size = array<i32: 256, 1, 1>}
// CHECK:           rocdl.workgroup.id.y
// CHECK:           llvm.intr.fma
// CHECK:       gpu.module @kernel_kernel_1 [#rocdl.target<chip = "gfx942">]
// CHECK:       gpu.module @kernel_kernel_2 [#rocdl.target<chip = "gfx942">]
// CHECK:           llvm.fdiv
// CHECK-NOT:   math.
// CHECK-NOT:   __ocml
// CHECK-NOT:   __nv_

#map = affine_map<()[s0] -> (s0 * 256)>
#map1 = affine_map<()[s0] -> (s0 * -256 + 300, 256)>
#map2 = affine_map<()[s0, s1] -> (s0 - s1 * (s0 ceildiv 256), s0 ceildiv 256)>
#map3 = affine_map<()[s0] -> (0, s0)>
#map4 = affine_map<()[s0, s1] -> (s1 * (s0 ceildiv 256))>
module attributes {gpu.container_module} {
  func.func @kernel(%arg0: memref<64x300xf32>, %arg1: memref<64x300xf32> {et.output}) attributes {llvm.emit_c_interface} {
    %c2 = arith.constant 2 : index
    %c256 = arith.constant 256 : index
    %c64 = arith.constant 64 : index
    %c1 = arith.constant 1 : index
    %alloc = memref.alloc() {alignment = 64 : i64} : memref<64xf32>
    gpu.launch_func  @kernel_kernel::@kernel_kernel blocks in (%c1, %c1, %c1) threads in (%c64, %c1, %c1)  args(%arg0 : memref<64x300xf32>, %alloc : memref<64xf32>)
    %alloc_0 = memref.alloc() {alignment = 64 : i64} : memref<64x300xf32>
    gpu.launch_func  @kernel_kernel_0::@kernel_kernel blocks in (%c2, %c64, %c1) threads in (%c256, %c1, %c1)  args(%arg0 : memref<64x300xf32>, %alloc : memref<64xf32>, %alloc_0 : memref<64x300xf32>)
    %alloc_1 = memref.alloc() {alignment = 64 : i64} : memref<64xf32>
    gpu.launch_func  @kernel_kernel_1::@kernel_kernel blocks in (%c1, %c1, %c1) threads in (%c64, %c1, %c1)  args(%alloc_0 : memref<64x300xf32>, %alloc_1 : memref<64xf32>)
    gpu.launch_func  @kernel_kernel_2::@kernel_kernel blocks in (%c2, %c64, %c1) threads in (%c256, %c1, %c1)  args(%alloc_0 : memref<64x300xf32>, %alloc_1 : memref<64xf32>, %arg1 : memref<64x300xf32>)
    return
  }
  gpu.module @kernel_kernel {
    gpu.func @kernel_kernel(%arg0: memref<64x300xf32> {llvm.noalias}, %arg1: memref<64xf32> {llvm.noalias}) kernel attributes {known_block_size = array<i32: 64, 1, 1>, known_grid_size = array<i32: 1, 1, 1>} {
      %c300 = arith.constant 300 : index
      %c1 = arith.constant 1 : index
      %c0 = arith.constant 0 : index
      %cst = arith.constant 0xFF800000 : f32
      %thread_id_x = gpu.thread_id  x
      %subview = memref.subview %arg0[%thread_id_x, 0] [1, 300] [1, 1] : memref<64x300xf32> to memref<1x300xf32, strided<[300, 1], offset: ?>>
      %subview_0 = memref.subview %arg1[%thread_id_x] [1] [1] : memref<64xf32> to memref<1xf32, strided<[1], offset: ?>>
      memref.store %cst, %subview_0[%c0] : memref<1xf32, strided<[1], offset: ?>>
      scf.for %arg2 = %c0 to %c300 step %c1 {
        %0 = memref.load %subview[%c0, %arg2] : memref<1x300xf32, strided<[300, 1], offset: ?>>
        %1 = memref.load %subview_0[%c0] : memref<1xf32, strided<[1], offset: ?>>
        %2 = arith.maximumf %1, %0 : f32
        memref.store %2, %subview_0[%c0] : memref<1xf32, strided<[1], offset: ?>>
      }
      gpu.return
    }
  }
  gpu.module @kernel_kernel_0 {
    gpu.func @kernel_kernel(%arg0: memref<64x300xf32> {llvm.noalias}, %arg1: memref<64xf32> {llvm.noalias}, %arg2: memref<64x300xf32> {llvm.noalias}) kernel attributes {known_block_size = array<i32: 256, 1, 1>, known_grid_size = array<i32: 2, 64, 1>} {
      %c1 = arith.constant 1 : index
      %c0 = arith.constant 0 : index
      %block_id_x = gpu.block_id  x
      %block_id_y = gpu.block_id  y
      %0 = affine.apply #map()[%block_id_x]
      %1 = affine.min #map1()[%block_id_x]
      %subview = memref.subview %arg0[%block_id_y, %0] [1, %1] [1, 1] : memref<64x300xf32> to memref<1x?xf32, strided<[300, 1], offset: ?>>
      %subview_0 = memref.subview %arg1[%block_id_y] [1] [1] : memref<64xf32> to memref<1xf32, strided<[1], offset: ?>>
      %subview_1 = memref.subview %arg2[%block_id_y, %0] [1, %1] [1, 1] : memref<64x300xf32> to memref<1x?xf32, strided<[300, 1], offset: ?>>
      %thread_id_x = gpu.thread_id  x
      %2 = affine.min #map2()[%1, %thread_id_x]
      %3 = affine.max #map3()[%2]
      %4 = affine.apply #map4()[%1, %thread_id_x]
      %subview_2 = memref.subview %subview[0, %4] [1, %3] [1, 1] : memref<1x?xf32, strided<[300, 1], offset: ?>> to memref<1x?xf32, strided<[300, 1], offset: ?>>
      %subview_3 = memref.subview %subview_1[0, %4] [1, %3] [1, 1] : memref<1x?xf32, strided<[300, 1], offset: ?>> to memref<1x?xf32, strided<[300, 1], offset: ?>>
      scf.for %arg3 = %c0 to %3 step %c1 {
        %5 = memref.load %subview_2[%c0, %arg3] : memref<1x?xf32, strided<[300, 1], offset: ?>>
        %6 = memref.load %subview_0[%c0] : memref<1xf32, strided<[1], offset: ?>>
        %7 = arith.subf %5, %6 : f32
        %cst = arith.constant 8.900000e+01 : f32
        %8 = arith.cmpf ult, %7, %cst : f32
        %9 = arith.select %8, %7, %cst : f32
        %cst_4 = arith.constant -1.040000e+02 : f32
        %10 = arith.cmpf ugt, %9, %cst_4 : f32
        %11 = arith.select %10, %9, %cst_4 : f32
        %cst_5 = arith.constant 0x4B400000 : f32
        %cst_6 = arith.constant 1.44269502 : f32
        %12 = math.fma %11, %cst_6, %cst_5 : f32
        %13 = arith.subf %12, %cst_5 : f32
        %cst_7 = arith.constant -0.693145751 : f32
        %14 = math.fma %13, %cst_7, %11 : f32
        %cst_8 = arith.constant -1.42860677E-6 : f32
        %15 = math.fma %13, %cst_8, %14 : f32
        %cst_9 = arith.constant 0.00138146128 : f32
        %cst_10 = arith.constant 8.368710e-03 : f32
        %16 = math.fma %cst_9, %15, %cst_10 : f32
        %cst_11 = arith.constant 0.041668389 : f32
        %17 = math.fma %16, %15, %cst_11 : f32
        %cst_12 = arith.constant 0.166665211 : f32
        %18 = math.fma %17, %15, %cst_12 : f32
        %cst_13 = arith.constant 0.49999994 : f32
        %19 = math.fma %18, %15, %cst_13 : f32
        %cst_14 = arith.constant 1.000000e+00 : f32
        %20 = math.fma %19, %15, %cst_14 : f32
        %cst_15 = arith.constant 1.000000e+00 : f32
        %21 = math.fma %20, %15, %cst_15 : f32
        %22 = arith.bitcast %12 : f32 to i32
        %23 = arith.bitcast %cst_5 : f32 to i32
        %24 = arith.subi %22, %23 : i32
        %c1_i32 = arith.constant 1 : i32
        %25 = arith.shrsi %24, %c1_i32 : i32
        %c23_i32 = arith.constant 23 : i32
        %26 = arith.shli %25, %c23_i32 : i32
        %c1065353216_i32 = arith.constant 1065353216 : i32
        %27 = arith.addi %26, %c1065353216_i32 : i32
        %28 = arith.bitcast %27 : i32 to f32
        %29 = arith.mulf %21, %28 : f32
        %30 = arith.subi %24, %25 : i32
        %c23_i32_16 = arith.constant 23 : i32
        %31 = arith.shli %30, %c23_i32_16 : i32
        %c1065353216_i32_17 = arith.constant 1065353216 : i32
        %32 = arith.addi %31, %c1065353216_i32_17 : i32
        %33 = arith.bitcast %32 : i32 to f32
        %34 = arith.mulf %29, %33 : f32
        memref.store %34, %subview_3[%c0, %arg3] : memref<1x?xf32, strided<[300, 1], offset: ?>>
      }
      gpu.return
    }
  }
  gpu.module @kernel_kernel_1 {
    gpu.func @kernel_kernel(%arg0: memref<64x300xf32> {llvm.noalias}, %arg1: memref<64xf32> {llvm.noalias}) kernel attributes {known_block_size = array<i32: 64, 1, 1>, known_grid_size = array<i32: 1, 1, 1>} {
      %c300 = arith.constant 300 : index
      %c1 = arith.constant 1 : index
      %c0 = arith.constant 0 : index
      %cst = arith.constant 0.000000e+00 : f32
      %thread_id_x = gpu.thread_id  x
      %subview = memref.subview %arg0[%thread_id_x, 0] [1, 300] [1, 1] : memref<64x300xf32> to memref<1x300xf32, strided<[300, 1], offset: ?>>
      %subview_0 = memref.subview %arg1[%thread_id_x] [1] [1] : memref<64xf32> to memref<1xf32, strided<[1], offset: ?>>
      memref.store %cst, %subview_0[%c0] : memref<1xf32, strided<[1], offset: ?>>
      scf.for %arg2 = %c0 to %c300 step %c1 {
        %0 = memref.load %subview[%c0, %arg2] : memref<1x300xf32, strided<[300, 1], offset: ?>>
        %1 = memref.load %subview_0[%c0] : memref<1xf32, strided<[1], offset: ?>>
        %2 = arith.addf %1, %0 fastmath<reassoc> : f32
        memref.store %2, %subview_0[%c0] : memref<1xf32, strided<[1], offset: ?>>
      }
      gpu.return
    }
  }
  gpu.module @kernel_kernel_2 {
    gpu.func @kernel_kernel(%arg0: memref<64x300xf32> {llvm.noalias}, %arg1: memref<64xf32> {llvm.noalias}, %arg2: memref<64x300xf32> {llvm.noalias}) kernel attributes {known_block_size = array<i32: 256, 1, 1>, known_grid_size = array<i32: 2, 64, 1>} {
      %c1 = arith.constant 1 : index
      %c0 = arith.constant 0 : index
      %block_id_x = gpu.block_id  x
      %block_id_y = gpu.block_id  y
      %0 = affine.apply #map()[%block_id_x]
      %1 = affine.min #map1()[%block_id_x]
      %subview = memref.subview %arg0[%block_id_y, %0] [1, %1] [1, 1] : memref<64x300xf32> to memref<1x?xf32, strided<[300, 1], offset: ?>>
      %subview_0 = memref.subview %arg1[%block_id_y] [1] [1] : memref<64xf32> to memref<1xf32, strided<[1], offset: ?>>
      %subview_1 = memref.subview %arg2[%block_id_y, %0] [1, %1] [1, 1] : memref<64x300xf32> to memref<1x?xf32, strided<[300, 1], offset: ?>>
      %thread_id_x = gpu.thread_id  x
      %2 = affine.min #map2()[%1, %thread_id_x]
      %3 = affine.max #map3()[%2]
      %4 = affine.apply #map4()[%1, %thread_id_x]
      %subview_2 = memref.subview %subview[0, %4] [1, %3] [1, 1] : memref<1x?xf32, strided<[300, 1], offset: ?>> to memref<1x?xf32, strided<[300, 1], offset: ?>>
      %subview_3 = memref.subview %subview_1[0, %4] [1, %3] [1, 1] : memref<1x?xf32, strided<[300, 1], offset: ?>> to memref<1x?xf32, strided<[300, 1], offset: ?>>
      scf.for %arg3 = %c0 to %3 step %c1 {
        %5 = memref.load %subview_2[%c0, %arg3] : memref<1x?xf32, strided<[300, 1], offset: ?>>
        %6 = memref.load %subview_0[%c0] : memref<1xf32, strided<[1], offset: ?>>
        %7 = arith.divf %5, %6 : f32
        memref.store %7, %subview_3[%c0, %arg3] : memref<1x?xf32, strided<[300, 1], offset: ?>>
      }
      gpu.return
    }
  }
}
