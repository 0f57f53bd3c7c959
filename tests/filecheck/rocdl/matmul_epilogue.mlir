// RUN: %python -m egglog_tensor.opt --stage rocdl --target rocdl:gfx942 %s | %FileCheck %s
// tanh(a @ b + 1)'s two kernels (its input: noalias's) in the ROCDL and LLVM dialects: the product's A and
// B tiles as workgroup (addrspace 3) globals, its barriers, the k steps' 16 multiply-adds of the register tile; the
// epilogue's tanh inline (FMAs, its sign by copysign or sign-bit integer ops).
// CHECK:       gpu.module @kernel_kernel [#rocdl.target<chip = "gfx942">]
// CHECK:         llvm.mlir.global internal @__wg_kernel_kernel_0() {{.}}addr_space = 3 : i32{{.}} : !llvm.array<2048 x f32>
// CHECK:         llvm.mlir.global internal @__wg_kernel_kernel_1() {{.}}addr_space = 3 : i32{{.}} : !llvm.array<2048 x f32>
// CHECK:         llvm.func @kernel_kernel(%arg0: !llvm.ptr {llvm.noalias}, %arg1: !llvm.ptr {llvm.noalias}, %arg2: !llvm.ptr {llvm.noalias}) attributes {gpu.kernel, gpu.known_block_size = array<i32: 256, 1, 1>
// CHECK:           rocdl.barrier
// CHECK-COUNT-16:  llvm.fmul
// CHECK:           rocdl.barrier
// CHECK:       gpu.module @kernel_kernel_0 [#rocdl.target
// CHECK:         llvm.func @kernel_kernel(%arg0: !llvm.ptr {llvm.noalias}, %arg1: !llvm.ptr {llvm.noalias})
// CHECK:           llvm.intr.fma
// CHECK-NOT:   math.
// CHECK-NOT:   __ocml
// CHECK-NOT:   __nv_

#map = affine_map<()[s0] -> (-s0 + 48, 1)>
#map1 = affine_map<()[s0] -> (0, s0)>
module attributes {gpu.container_module} {
  func.func @kernel(%arg0: memref<64x96xf32>, %arg1: memref<96x48xf32>, %arg2: memref<64x48xf32> {et.output}) attributes {llvm.emit_c_interface} {
    %c64 = arith.constant 64 : index
    %c256 = arith.constant 256 : index
    %c1 = arith.constant 1 : index
    %alloc = memref.alloc() {alignment = 64 : i64} : memref<64x48xf32>
    gpu.launch_func  @kernel_kernel::@kernel_kernel blocks in (%c1, %c1, %c1) threads in (%c256, %c1, %c1)  args(%arg0 : memref<64x96xf32>, %arg1 : memref<96x48xf32>, %alloc : memref<64x48xf32>)
    gpu.launch_func  @kernel_kernel_0::@kernel_kernel blocks in (%c1, %c64, %c1) threads in (%c64, %c1, %c1)  args(%alloc : memref<64x48xf32>, %arg2 : memref<64x48xf32>)
    return
  }
  gpu.module @kernel_kernel {
    gpu.func @kernel_kernel(%arg0: memref<64x96xf32> {llvm.noalias}, %arg1: memref<96x48xf32> {llvm.noalias}, %arg2: memref<64x48xf32> {llvm.noalias}) workgroup(%arg3 : memref<64x32xf32, #gpu.address_space<workgroup>>, %arg4 : memref<32x64xf32, #gpu.address_space<workgroup>>) kernel attributes {known_block_size = array<i32: 256, 1, 1>, known_grid_size = array<i32: 1, 1, 1>} {
      %cst = arith.constant 0.000000e+00 : f32
      %c1 = arith.constant 1 : index
      %c0 = arith.constant 0 : index
      %c96 = arith.constant 96 : index
      %c47 = arith.constant 47 : index
      %c1792 = arith.constant 1792 : index
      %c1536 = arith.constant 1536 : index
      %c1280 = arith.constant 1280 : index
      %c1024 = arith.constant 1024 : index
      %c768 = arith.constant 768 : index
      %c512 = arith.constant 512 : index
      %c256 = arith.constant 256 : index
      %c95 = arith.constant 95 : index
      %c63 = arith.constant 63 : index
      %c48 = arith.constant 48 : index
      %c32 = arith.constant 32 : index
      %c64 = arith.constant 64 : index
      %c16 = arith.constant 16 : index
      %block_id_x = gpu.block_id  x
      %block_id_y = gpu.block_id  y
      %thread_id_x = gpu.thread_id  x
      %0 = arith.remui %thread_id_x, %c16 : index
      %1 = arith.divui %thread_id_x, %c16 : index
      %2 = arith.muli %block_id_y, %c64 : index
      %3 = arith.muli %block_id_x, %c64 : index
      %4 = arith.addi %1, %c16 : index
      %5 = arith.addi %1, %c32 : index
      %6 = arith.addi %1, %c48 : index
      %7 = arith.addi %0, %c16 : index
      %8 = arith.addi %0, %c32 : index
      %9 = arith.addi %0, %c48 : index
      %10 = arith.addi %2, %1 : index
      %11 = arith.addi %2, %4 : index
      %12 = arith.addi %2, %5 : index
      %13 = arith.addi %2, %6 : index
      %14 = arith.addi %3, %0 : index
      %15 = arith.addi %3, %7 : index
      %16 = arith.addi %3, %8 : index
      %17 = arith.addi %3, %9 : index
      %18:16 = scf.for %arg5 = %c0 to %c96 step %c32 iter_args(%arg6 = %cst, %arg7 = %cst, %arg8 = %cst, %arg9 = %cst, %arg10 = %cst, %arg11 = %cst, %arg12 = %cst, %arg13 = %cst, %arg14 = %cst, %arg15 = %cst, %arg16 = %cst, %arg17 = %cst, %arg18 = %cst, %arg19 = %cst, %arg20 = %cst, %arg21 = %cst) -> (f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32) {
        %43 = arith.divui %thread_id_x, %c32 : index
        %44 = arith.remui %thread_id_x, %c32 : index
        %45 = arith.addi %2, %43 : index
        %46 = arith.minui %45, %c63 : index
        %47 = arith.addi %arg5, %44 : index
        %48 = arith.minui %47, %c95 : index
        %49 = memref.load %arg0[%46, %48] : memref<64x96xf32>
        memref.store %49, %arg3[%43, %44] : memref<64x32xf32, #gpu.address_space<workgroup>>
        %50 = arith.addi %thread_id_x, %c256 : index
        %51 = arith.divui %50, %c32 : index
        %52 = arith.remui %50, %c32 : index
        %53 = arith.addi %2, %51 : index
        %54 = arith.minui %53, %c63 : index
        %55 = arith.addi %arg5, %52 : index
        %56 = arith.minui %55, %c95 : index
        %57 = memref.load %arg0[%54, %56] : memref<64x96xf32>
        memref.store %57, %arg3[%51, %52] : memref<64x32xf32, #gpu.address_space<workgroup>>
        %58 = arith.addi %thread_id_x, %c512 : index
        %59 = arith.divui %58, %c32 : index
        %60 = arith.remui %58, %c32 : index
        %61 = arith.addi %2, %59 : index
        %62 = arith.minui %61, %c63 : index
        %63 = arith.addi %arg5, %60 : index
        %64 = arith.minui %63, %c95 : index
        %65 = memref.load %arg0[%62, %64] : memref<64x96xf32>
        memref.store %65, %arg3[%59, %60] : memref<64x32xf32, #gpu.address_space<workgroup>>
        %66 = arith.addi %thread_id_x, %c768 : index
        %67 = arith.divui %66, %c32 : index
        %68 = arith.remui %66, %c32 : index
        %69 = arith.addi %2, %67 : index
        %70 = arith.minui %69, %c63 : index
        %71 = arith.addi %arg5, %68 : index
        %72 = arith.minui %71, %c95 : index
        %73 = memref.load %arg0[%70, %72] : memref<64x96xf32>
        memref.store %73, %arg3[%67, %68] : memref<64x32xf32, #gpu.address_space<workgroup>>
        %74 = arith.addi %thread_id_x, %c1024 : index
        %75 = arith.divui %74, %c32 : index
        %76 = arith.remui %74, %c32 : index
        %77 = arith.addi %2, %75 : index
        %78 = arith.minui %77, %c63 : index
        %79 = arith.addi %arg5, %76 : index
        %80 = arith.minui %79, %c95 : index
        %81 = memref.load %arg0[%78, %80] : memref<64x96xf32>
        memref.store %81, %arg3[%75, %76] : memref<64x32xf32, #gpu.address_space<workgroup>>
        %82 = arith.addi %thread_id_x, %c1280 : index
        %83 = arith.divui %82, %c32 : index
        %84 = arith.remui %82, %c32 : index
        %85 = arith.addi %2, %83 : index
        %86 = arith.minui %85, %c63 : index
        %87 = arith.addi %arg5, %84 : index
        %88 = arith.minui %87, %c95 : index
        %89 = memref.load %arg0[%86, %88] : memref<64x96xf32>
        memref.store %89, %arg3[%83, %84] : memref<64x32xf32, #gpu.address_space<workgroup>>
        %90 = arith.addi %thread_id_x, %c1536 : index
        %91 = arith.divui %90, %c32 : index
        %92 = arith.remui %90, %c32 : index
        %93 = arith.addi %2, %91 : index
        %94 = arith.minui %93, %c63 : index
        %95 = arith.addi %arg5, %92 : index
        %96 = arith.minui %95, %c95 : index
        %97 = memref.load %arg0[%94, %96] : memref<64x96xf32>
        memref.store %97, %arg3[%91, %92] : memref<64x32xf32, #gpu.address_space<workgroup>>
        %98 = arith.addi %thread_id_x, %c1792 : index
        %99 = arith.divui %98, %c32 : index
        %100 = arith.remui %98, %c32 : index
        %101 = arith.addi %2, %99 : index
        %102 = arith.minui %101, %c63 : index
        %103 = arith.addi %arg5, %100 : index
        %104 = arith.minui %103, %c95 : index
        %105 = memref.load %arg0[%102, %104] : memref<64x96xf32>
        memref.store %105, %arg3[%99, %100] : memref<64x32xf32, #gpu.address_space<workgroup>>
        %106 = arith.divui %thread_id_x, %c64 : index
        %107 = arith.remui %thread_id_x, %c64 : index
        %108 = arith.addi %3, %107 : index
        %109 = arith.minui %108, %c47 : index
        %110 = arith.addi %arg5, %106 : index
        %111 = arith.minui %110, %c95 : index
        %112 = memref.load %arg1[%111, %109] : memref<96x48xf32>
        memref.store %112, %arg4[%106, %107] : memref<32x64xf32, #gpu.address_space<workgroup>>
        %113 = arith.divui %50, %c64 : index
        %114 = arith.remui %50, %c64 : index
        %115 = arith.addi %3, %114 : index
        %116 = arith.minui %115, %c47 : index
        %117 = arith.addi %arg5, %113 : index
        %118 = arith.minui %117, %c95 : index
        %119 = memref.load %arg1[%118, %116] : memref<96x48xf32>
        memref.store %119, %arg4[%113, %114] : memref<32x64xf32, #gpu.address_space<workgroup>>
        %120 = arith.divui %58, %c64 : index
        %121 = arith.remui %58, %c64 : index
        %122 = arith.addi %3, %121 : index
        %123 = arith.minui %122, %c47 : index
        %124 = arith.addi %arg5, %120 : index
        %125 = arith.minui %124, %c95 : index
        %126 = memref.load %arg1[%125, %123] : memref<96x48xf32>
        memref.store %126, %arg4[%120, %121] : memref<32x64xf32, #gpu.address_space<workgroup>>
        %127 = arith.divui %66, %c64 : index
        %128 = arith.remui %66, %c64 : index
        %129 = arith.addi %3, %128 : index
        %130 = arith.minui %129, %c47 : index
        %131 = arith.addi %arg5, %127 : index
        %132 = arith.minui %131, %c95 : index
        %133 = memref.load %arg1[%132, %130] : memref<96x48xf32>
        memref.store %133, %arg4[%127, %128] : memref<32x64xf32, #gpu.address_space<workgroup>>
        %134 = arith.divui %74, %c64 : index
        %135 = arith.remui %74, %c64 : index
        %136 = arith.addi %3, %135 : index
        %137 = arith.minui %136, %c47 : index
        %138 = arith.addi %arg5, %134 : index
        %139 = arith.minui %138, %c95 : index
        %140 = memref.load %arg1[%139, %137] : memref<96x48xf32>
        memref.store %140, %arg4[%134, %135] : memref<32x64xf32, #gpu.address_space<workgroup>>
        %141 = arith.divui %82, %c64 : index
        %142 = arith.remui %82, %c64 : index
        %143 = arith.addi %3, %142 : index
        %144 = arith.minui %143, %c47 : index
        %145 = arith.addi %arg5, %141 : index
        %146 = arith.minui %145, %c95 : index
        %147 = memref.load %arg1[%146, %144] : memref<96x48xf32>
        memref.store %147, %arg4[%141, %142] : memref<32x64xf32, #gpu.address_space<workgroup>>
        %148 = arith.divui %90, %c64 : index
        %149 = arith.remui %90, %c64 : index
        %150 = arith.addi %3, %149 : index
        %151 = arith.minui %150, %c47 : index
        %152 = arith.addi %arg5, %148 : index
        %153 = arith.minui %152, %c95 : index
        %154 = memref.load %arg1[%153, %151] : memref<96x48xf32>
        memref.store %154, %arg4[%148, %149] : memref<32x64xf32, #gpu.address_space<workgroup>>
        %155 = arith.divui %98, %c64 : index
        %156 = arith.remui %98, %c64 : index
        %157 = arith.addi %3, %156 : index
        %158 = arith.minui %157, %c47 : index
        %159 = arith.addi %arg5, %155 : index
        %160 = arith.minui %159, %c95 : index
        %161 = memref.load %arg1[%160, %158] : memref<96x48xf32>
        memref.store %161, %arg4[%155, %156] : memref<32x64xf32, #gpu.address_space<workgroup>>
        gpu.barrier
        %162 = arith.subi %c96, %arg5 : index
        %163 = arith.minui %162, %c32 : index
        %164:16 = scf.for %arg22 = %c0 to %163 step %c1 iter_args(%arg23 = %arg6, %arg24 = %arg7, %arg25 = %arg8, %arg26 = %arg9, %arg27 = %arg10, %arg28 = %arg11, %arg29 = %arg12, %arg30 = %arg13, %arg31 = %arg14, %arg32 = %arg15, %arg33 = %arg16, %arg34 = %arg17, %arg35 = %arg18, %arg36 = %arg19, %arg37 = %arg20, %arg38 = %arg21) -> (f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32) {
          %165 = memref.load %arg3[%1, %arg22] : memref<64x32xf32, #gpu.address_space<workgroup>>
          %166 = memref.load %arg3[%4, %arg22] : memref<64x32xf32, #gpu.address_space<workgroup>>
          %167 = memref.load %arg3[%5, %arg22] : memref<64x32xf32, #gpu.address_space<workgroup>>
          %168 = memref.load %arg3[%6, %arg22] : memref<64x32xf32, #gpu.address_space<workgroup>>
          %169 = memref.load %arg4[%arg22, %0] : memref<32x64xf32, #gpu.address_space<workgroup>>
          %170 = memref.load %arg4[%arg22, %7] : memref<32x64xf32, #gpu.address_space<workgroup>>
          %171 = memref.load %arg4[%arg22, %8] : memref<32x64xf32, #gpu.address_space<workgroup>>
          %172 = memref.load %arg4[%arg22, %9] : memref<32x64xf32, #gpu.address_space<workgroup>>
          %173 = arith.mulf %165, %169 : f32
          %174 = arith.addf %arg23, %173 : f32
          %175 = arith.mulf %165, %170 : f32
          %176 = arith.addf %arg24, %175 : f32
          %177 = arith.mulf %165, %171 : f32
          %178 = arith.addf %arg25, %177 : f32
          %179 = arith.mulf %165, %172 : f32
          %180 = arith.addf %arg26, %179 : f32
          %181 = arith.mulf %166, %169 : f32
          %182 = arith.addf %arg27, %181 : f32
          %183 = arith.mulf %166, %170 : f32
          %184 = arith.addf %arg28, %183 : f32
          %185 = arith.mulf %166, %171 : f32
          %186 = arith.addf %arg29, %185 : f32
          %187 = arith.mulf %166, %172 : f32
          %188 = arith.addf %arg30, %187 : f32
          %189 = arith.mulf %167, %169 : f32
          %190 = arith.addf %arg31, %189 : f32
          %191 = arith.mulf %167, %170 : f32
          %192 = arith.addf %arg32, %191 : f32
          %193 = arith.mulf %167, %171 : f32
          %194 = arith.addf %arg33, %193 : f32
          %195 = arith.mulf %167, %172 : f32
          %196 = arith.addf %arg34, %195 : f32
          %197 = arith.mulf %168, %169 : f32
          %198 = arith.addf %arg35, %197 : f32
          %199 = arith.mulf %168, %170 : f32
          %200 = arith.addf %arg36, %199 : f32
          %201 = arith.mulf %168, %171 : f32
          %202 = arith.addf %arg37, %201 : f32
          %203 = arith.mulf %168, %172 : f32
          %204 = arith.addf %arg38, %203 : f32
          scf.yield %174, %176, %178, %180, %182, %184, %186, %188, %190, %192, %194, %196, %198, %200, %202, %204 : f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32
        }
        gpu.barrier
        scf.yield %164#0, %164#1, %164#2, %164#3, %164#4, %164#5, %164#6, %164#7, %164#8, %164#9, %164#10, %164#11, %164#12, %164#13, %164#14, %164#15 : f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32
      }
      %19 = arith.cmpi ult, %10, %c64 : index
      %20 = arith.cmpi ult, %14, %c48 : index
      %21 = arith.andi %19, %20 : i1
      scf.if %21 {
        memref.store %18#0, %arg2[%10, %14] : memref<64x48xf32>
      }
      %22 = arith.cmpi ult, %15, %c48 : index
      %23 = arith.andi %19, %22 : i1
      scf.if %23 {
        memref.store %18#1, %arg2[%10, %15] : memref<64x48xf32>
      }
      %24 = arith.cmpi ult, %16, %c48 : index
      %25 = arith.andi %19, %24 : i1
      scf.if %25 {
        memref.store %18#2, %arg2[%10, %16] : memref<64x48xf32>
      }
      %26 = arith.cmpi ult, %17, %c48 : index
      %27 = arith.andi %19, %26 : i1
      scf.if %27 {
        memref.store %18#3, %arg2[%10, %17] : memref<64x48xf32>
      }
      %28 = arith.cmpi ult, %11, %c64 : index
      %29 = arith.andi %28, %20 : i1
      scf.if %29 {
        memref.store %18#4, %arg2[%11, %14] : memref<64x48xf32>
      }
      %30 = arith.andi %28, %22 : i1
      scf.if %30 {
        memref.store %18#5, %arg2[%11, %15] : memref<64x48xf32>
      }
      %31 = arith.andi %28, %24 : i1
      scf.if %31 {
        memref.store %18#6, %arg2[%11, %16] : memref<64x48xf32>
      }
      %32 = arith.andi %28, %26 : i1
      scf.if %32 {
        memref.store %18#7, %arg2[%11, %17] : memref<64x48xf32>
      }
      %33 = arith.cmpi ult, %12, %c64 : index
      %34 = arith.andi %33, %20 : i1
      scf.if %34 {
        memref.store %18#8, %arg2[%12, %14] : memref<64x48xf32>
      }
      %35 = arith.andi %33, %22 : i1
      scf.if %35 {
        memref.store %18#9, %arg2[%12, %15] : memref<64x48xf32>
      }
      %36 = arith.andi %33, %24 : i1
      scf.if %36 {
        memref.store %18#10, %arg2[%12, %16] : memref<64x48xf32>
      }
      %37 = arith.andi %33, %26 : i1
      scf.if %37 {
        memref.store %18#11, %arg2[%12, %17] : memref<64x48xf32>
      }
      %38 = arith.cmpi ult, %13, %c64 : index
      %39 = arith.andi %38, %20 : i1
      scf.if %39 {
        memref.store %18#12, %arg2[%13, %14] : memref<64x48xf32>
      }
      %40 = arith.andi %38, %22 : i1
      scf.if %40 {
        memref.store %18#13, %arg2[%13, %15] : memref<64x48xf32>
      }
      %41 = arith.andi %38, %24 : i1
      scf.if %41 {
        memref.store %18#14, %arg2[%13, %16] : memref<64x48xf32>
      }
      %42 = arith.andi %38, %26 : i1
      scf.if %42 {
        memref.store %18#15, %arg2[%13, %17] : memref<64x48xf32>
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
