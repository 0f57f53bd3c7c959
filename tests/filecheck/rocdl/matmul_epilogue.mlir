// RUN: %python -m egglog_tensor.opt --stage rocdl --target rocdl:gfx942 %s | %FileCheck %s
// tanh(a @ b + 1)'s two kernels (its input: noalias's) in the ROCDL and LLVM dialects: the product's k loop
// as branches, the epilogue's tanh inline (FMAs, its sign by copysign or sign-bit integer ops).
// CHECK:       gpu.module @kernel_kernel [#rocdl.target<chip = "gfx942">]
// CHECK:         llvm.func @kernel_kernel(%arg0: !llvm.ptr {llvm.noalias}, %arg1: !llvm.ptr {llvm.noalias}, %arg2: !llvm.ptr {llvm.noalias}) attributes {gpu.kernel, gpu.known_block_size = array<i32: 64, 1, 1>, gpu.known_grid_size = array<i32: 1, 64, 1>, rocdl.flat_work_group_size = "64,64", rocdl.kernel, rocdl.reqd_work_group_size = array<i32: 64, 1, 1>}
// CHECK:           rocdl.workgroup.id.y
// CHECK:           rocdl.workitem.id.x
// CHECK:           llvm.fmul
// CHECK:           llvm.fadd
// CHECK:       gpu.module @kernel_kernel_0 [#rocdl.target<chip = "gfx942">]
// CHECK:         llvm.func @kernel_kernel(%arg0: !llvm.ptr {llvm.noalias}, %arg1: !llvm.ptr {llvm.noalias})
// CHECK:           llvm.intr.fma
// CHECK-NOT:   math.
// CHECK-NOT:   __ocml
// CHECK-NOT:   __nv_

#map = affine_map<()[s0] -> (-s0 + 48, 1)>
#map1 = affine_map<()[s0] -> (0, s0)>
module attributes {gpu.container_module} {
  func.func @kernel(%arg0: memref<64x32xf32>, %arg1: memref<32x48xf32>, %arg2: memref<64x48xf32> {et.output}) attributes {llvm.emit_c_interface} {
    %c64 = arith.constant 64 : index
    %c1 = arith.constant 1 : index
    %alloc = memref.alloc() {alignment = 64 : i64} : memref<64x48xf32>
    gpu.launch_func  @kernel_kernel::@kernel_kernel blocks in (%c1, %c64, %c1) threads in (%c64, %c1, %c1)  args(%arg0 : memref<64x32xf32>, %alloc : memref<64x48xf32>, %arg1 : memref<32x48xf32>)
    gpu.launch_func  @kernel_kernel_0::@kernel_kernel blocks in (%c1, %c64, %c1) threads in (%c64, %c1, %c1)  args(%alloc : memref<64x48xf32>, %arg2 : memref<64x48xf32>)
    return
  }
  gpu.module @kernel_kernel {
    gpu.func @kernel_kernel(%arg0: memref<64x32xf32> {llvm.noalias}, %arg1: memref<64x48xf32> {llvm.noalias}, %arg2: memref<32x48xf32> {llvm.noalias}) kernel attributes {known_block_size = array<i32: 64, 1, 1>, known_grid_size = array<i32: 1, 64, 1>} {
      %c32 = arith.constant 32 : index
      %c1 = arith.constant 1 : index
      %c0 = arith.constant 0 : index
      %cst = arith.constant 0.000000e+00 : f32
      %block_id_y = gpu.block_id  y
      %subview = memref.subview %arg0[%block_id_y, 0] [1, 32] [1, 1] : memref<64x32xf32> to memref<1x32xf32, strided<[32, 1], offset: ?>>
      %subview_0 = memref.subview %arg1[%block_id_y, 0] [1, 48] [1, 1] : memref<64x48xf32> to memref<1x48xf32, strided<[48, 1], offset: ?>>
      %thread_id_x = gpu.thread_id  x
      %0 = affine.min #map()[%thread_id_x]
      %1 = affine.max #map1()[%0]
      %subview_1 = memref.subview %arg2[0, %thread_id_x] [32, %1] [1, 1] : memref<32x48xf32> to memref<32x?xf32, strided<[48, 1], offset: ?>>
      %subview_2 = memref.subview %subview_0[0, %thread_id_x] [1, %1] [1, 1] : memref<1x48xf32, strided<[48, 1], offset: ?>> to memref<1x?xf32, strided<[48, 1], offset: ?>>
      scf.for %arg3 = %c0 to %1 step %c1 {
        memref.store %cst, %subview_2[%c0, %arg3] : memref<1x?xf32, strided<[48, 1], offset: ?>>
      }
      scf.for %arg3 = %c0 to %1 step %c1 {
        scf.for %arg4 = %c0 to %c32 step %c1 {
          %2 = memref.load %subview[%c0, %arg4] : memref<1x32xf32, strided<[32, 1], offset: ?>>
          %3 = memref.load %subview_1[%arg4, %arg3] : memref<32x?xf32, strided<[48, 1], offset: ?>>
          %4 = memref.load %subview_2[%c0, %arg3] : memref<1x?xf32, strided<[48, 1], offset: ?>>
          %5 = arith.mulf %2, %3 : f32
          %6 = arith.addf %4, %5 : f32
          memref.store %6, %subview_2[%c0, %arg3] : memref<1x?xf32, strided<[48, 1], offset: ?>>
        }
      }
      gpu.return
    }
  }
  gpu.module @kernel_kernel_0 {
    gpu.func @kernel_kernel(%arg0: memref<64x48xf32> {llvm.noalias}, %arg1: memref<64x48xf32> {llvm.noalias}) kernel attributes {known_block_size = array<i32: 64, 1, 1>, known_grid_size = array<i32: 1, 64, 1>} {
      %c1 = arith.constant 1 : index
      %c0 = arith.constant 0 : index
      %cst = arith.constant 1.000000e+00 : f32
      %block_id_y = gpu.block_id  y
      %subview = memref.subview %arg0[%block_id_y, 0] [1, 48] [1, 1] : memref<64x48xf32> to memref<1x48xf32, strided<[48, 1], offset: ?>>
      %subview_0 = memref.subview %arg1[%block_id_y, 0] [1, 48] [1, 1] : memref<64x48xf32> to memref<1x48xf32, strided<[48, 1], offset: ?>>
      %thread_id_x = gpu.thread_id  x
      %0 = affine.min #map()[%thread_id_x]
      %1 = affine.max #map1()[%0]
      %subview_1 = memref.subview %subview[0, %thread_id_x] [1, %1] [1, 1] : memref<1x48xf32, strided<[48, 1], offset: ?>> to memref<1x?xf32, strided<[48, 1], offset: ?>>
      %subview_2 = memref.subview %subview_0[0, %thread_id_x] [1, %1] [1, 1] : memref<1x48xf32, strided<[48, 1], offset: ?>> to memref<1x?xf32, strided<[48, 1], offset: ?>>
      scf.for %arg2 = %c0 to %1 step %c1 {
        %2 = memref.load %subview_1[%c0, %arg2] : memref<1x?xf32, strided<[48, 1], offset: ?>>
        %3 = arith.addf %2, %cst : f32
        %4 = math.absf %3 : f32
        %5 = arith.mulf %4, %4 : f32
        %6 = arith.mulf %4, %5 : f32
        %cst_3 = arith.constant 0.00190180296 : f32
        %cst_4 = arith.constant -0.00789218768 : f32
        %7 = math.fma %cst_3, %5, %cst_4 : f32
        %cst_5 = arith.constant 0.0215758421 : f32
        %8 = math.fma %7, %5, %cst_5 : f32
        %cst_6 = arith.constant -0.0539221242 : f32
        %9 = math.fma %8, %5, %cst_6 : f32
        %cst_7 = arith.constant 0.133329958 : f32
        %10 = math.fma %9, %5, %cst_7 : f32
        %cst_8 = arith.constant -0.333333254 : f32
        %11 = math.fma %10, %5, %cst_8 : f32
        %12 = math.fma %6, %11, %4 : f32
        %cst_9 = arith.constant 1.000000e+01 : f32
        %13 = arith.cmpf ult, %4, %cst_9 : f32
        %14 = arith.select %13, %4, %cst_9 : f32
        %15 = arith.addf %14, %14 : f32
        %cst_10 = arith.constant 0x4B400000 : f32
        %cst_11 = arith.constant 1.44269502 : f32
        %16 = math.fma %15, %cst_11, %cst_10 : f32
        %17 = arith.subf %16, %cst_10 : f32
        %cst_12 = arith.constant -0.693145751 : f32
        %18 = math.fma %17, %cst_12, %15 : f32
        %cst_13 = arith.constant -1.42860677E-6 : f32
        %19 = math.fma %17, %cst_13, %18 : f32
        %cst_14 = arith.constant 0.00138146128 : f32
        %cst_15 = arith.constant 8.368710e-03 : f32
        %20 = math.fma %cst_14, %19, %cst_15 : f32
        %cst_16 = arith.constant 0.041668389 : f32
        %21 = math.fma %20, %19, %cst_16 : f32
        %cst_17 = arith.constant 0.166665211 : f32
        %22 = math.fma %21, %19, %cst_17 : f32
        %cst_18 = arith.constant 0.49999994 : f32
        %23 = math.fma %22, %19, %cst_18 : f32
        %cst_19 = arith.constant 1.000000e+00 : f32
        %24 = math.fma %23, %19, %cst_19 : f32
        %cst_20 = arith.constant 1.000000e+00 : f32
        %25 = math.fma %24, %19, %cst_20 : f32
        %26 = arith.bitcast %16 : f32 to i32
        %27 = arith.bitcast %cst_10 : f32 to i32
        %28 = arith.subi %26, %27 : i32
        %c1_i32 = arith.constant 1 : i32
        %29 = arith.shrsi %28, %c1_i32 : i32
        %c23_i32 = arith.constant 23 : i32
        %30 = arith.shli %29, %c23_i32 : i32
        %c1065353216_i32 = arith.constant 1065353216 : i32
        %31 = arith.addi %30, %c1065353216_i32 : i32
        %32 = arith.bitcast %31 : i32 to f32
        %33 = arith.mulf %25, %32 : f32
        %34 = arith.subi %28, %29 : i32
        %c23_i32_21 = arith.constant 23 : i32
        %35 = arith.shli %34, %c23_i32_21 : i32
        %c1065353216_i32_22 = arith.constant 1065353216 : i32
        %36 = arith.addi %35, %c1065353216_i32_22 : i32
        %37 = arith.bitcast %36 : i32 to f32
        %38 = arith.mulf %33, %37 : f32
        %cst_23 = arith.constant 1.000000e+00 : f32
        %cst_24 = arith.constant 2.000000e+00 : f32
        %39 = arith.addf %38, %cst_23 : f32
        %40 = arith.divf %cst_24, %39 : f32
        %41 = arith.subf %cst_23, %40 : f32
        %cst_25 = arith.constant 0.699999988 : f32
        %42 = arith.cmpf olt, %4, %cst_25 : f32
        %43 = arith.select %42, %12, %41 : f32
        %44 = math.copysign %43, %3 : f32
        memref.store %44, %subview_2[%c0, %arg2] : memref<1x?xf32, strided<[48, 1], offset: ?>>
      }
      gpu.return
    }
  }
}
