// RUN: %python -m egglog_tensor.opt --stage gpu-outline --target rocdl:gfx942 %s | %FileCheck %s
// The tiled product and its epilogue outlined (its input: gpu-map's): the product's workgroup buffers
// (A's 64x32 and B's 32x64 tiles) its kernel's workgroup attributions.
// CHECK-LABEL: func.func @kernel(
// CHECK:         %[[C:.*]] = memref.alloc() {{.*}} : memref<64x48xf32>
// CHECK:         gpu.launch_func @kernel_kernel::@kernel_kernel blocks in (%c1, %c1, %c1) threads in (%c256, %c1, %c1) args(%arg0 : memref<64x96xf32>, %arg1 : memref<96x48xf32>, %[[C]] : memref<64x48xf32>)
// CHECK:         gpu.launch_func @kernel_kernel_0::@kernel_kernel blocks in (%c1, %c64, %c1) threads in (%c64, %c1, %c1) args(%[[C]] : memref<64x48xf32>, %arg2 : memref<64x48xf32>)
// CHECK:       gpu.module @kernel_kernel {
// CHECK:         gpu.func @kernel_kernel(%arg0: memref<64x96xf32>, %arg1: memref<96x48xf32>, %arg2: memref<64x48xf32>) workgroup(%arg3 : memref<64x32xf32, #gpu.address_space<workgroup>>, %arg4 : memref<32x64xf32, #gpu.address_space<workgroup>>) kernel attributes {known_block_size = array<i32: 256, 1, 1>, known_grid_size = array<i32: 1, 1, 1>}
// CHECK:           gpu.barrier
// CHECK:           arith.mulf
// CHECK:           gpu.barrier
// CHECK:       gpu.module @kernel_kernel_0 {
// CHECK:           math.tanh

#map = affine_map<()[s0] -> (-s0 + 48, 1)>
#map1 = affine_map<()[s0] -> (0, s0)>
module {
  func.func @kernel(%arg0: memref<64x96xf32>, %arg1: memref<96x48xf32>, %arg2: memref<64x48xf32> {et.output}) attributes {llvm.emit_c_interface} {
    %c47 = arith.constant 47 : index
    %c1792 = arith.constant 1792 : index
    %c1536 = arith.constant 1536 : index
    %c1280 = arith.constant 1280 : index
    %c1024 = arith.constant 1024 : index
    %c768 = arith.constant 768 : index
    %c512 = arith.constant 512 : index
    %c95 = arith.constant 95 : index
    %c63 = arith.constant 63 : index
    %c96 = arith.constant 96 : index
    %c48 = arith.constant 48 : index
    %c32 = arith.constant 32 : index
    %c64 = arith.constant 64 : index
    %c16 = arith.constant 16 : index
    %c0 = arith.constant 0 : index
    %c256 = arith.constant 256 : index
    %c1 = arith.constant 1 : index
    %cst = arith.constant 1.000000e+00 : f32
    %cst_0 = arith.constant 0.000000e+00 : f32
    %alloc = memref.alloc() {alignment = 64 : i64} : memref<64x48xf32>
    gpu.launch blocks(%arg3, %arg4, %arg5) in (%arg9 = %c1, %arg10 = %c1, %arg11 = %c1) threads(%arg6, %arg7, %arg8) in (%arg12 = %c256, %arg13 = %c1, %arg14 = %c1) {
      %c16_1 = arith.constant 16 : index
      %c64_2 = arith.constant 64 : index
      %c32_3 = arith.constant 32 : index
      %c48_4 = arith.constant 48 : index
      %c63_5 = arith.constant 63 : index
      %c95_6 = arith.constant 95 : index
      %c256_7 = arith.constant 256 : index
      %c512_8 = arith.constant 512 : index
      %c768_9 = arith.constant 768 : index
      %c1024_10 = arith.constant 1024 : index
      %c1280_11 = arith.constant 1280 : index
      %c1536_12 = arith.constant 1536 : index
      %c1792_13 = arith.constant 1792 : index
      %c47_14 = arith.constant 47 : index
      %c96_15 = arith.constant 96 : index
      %c0_16 = arith.constant 0 : index
      %c1_17 = arith.constant 1 : index
      %cst_18 = arith.constant 0.000000e+00 : f32
      %block_id_x = gpu.block_id  x
      %block_id_y = gpu.block_id  y
      %thread_id_x = gpu.thread_id  x
      %0 = arith.remui %thread_id_x, %c16_1 : index
      %1 = arith.divui %thread_id_x, %c16_1 : index
      %2 = arith.muli %block_id_y, %c64_2 : index
      %3 = arith.muli %block_id_x, %c64_2 : index
      %4 = arith.addi %1, %c16_1 : index
      %5 = arith.addi %1, %c32_3 : index
      %6 = arith.addi %1, %c48_4 : index
      %7 = arith.addi %0, %c16_1 : index
      %8 = arith.addi %0, %c32_3 : index
      %9 = arith.addi %0, %c48_4 : index
      %10 = arith.addi %2, %1 : index
      %11 = arith.addi %2, %4 : index
      %12 = arith.addi %2, %5 : index
      %13 = arith.addi %2, %6 : index
      %14 = arith.addi %3, %0 : index
      %15 = arith.addi %3, %7 : index
      %16 = arith.addi %3, %8 : index
      %17 = arith.addi %3, %9 : index
      %alloc_19 = memref.alloc() : memref<64x32xf32, #gpu.address_space<workgroup>>
      %alloc_20 = memref.alloc() : memref<32x64xf32, #gpu.address_space<workgroup>>
      %18:16 = scf.for %arg15 = %c0_16 to %c96_15 step %c32_3 iter_args(%arg16 = %cst_18, %arg17 = %cst_18, %arg18 = %cst_18, %arg19 = %cst_18, %arg20 = %cst_18, %arg21 = %cst_18, %arg22 = %cst_18, %arg23 = %cst_18, %arg24 = %cst_18, %arg25 = %cst_18, %arg26 = %cst_18, %arg27 = %cst_18, %arg28 = %cst_18, %arg29 = %cst_18, %arg30 = %cst_18, %arg31 = %cst_18) -> (f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32) {
        %43 = arith.divui %thread_id_x, %c32_3 : index
        %44 = arith.remui %thread_id_x, %c32_3 : index
        %45 = arith.addi %2, %43 : index
        %46 = arith.minui %45, %c63_5 : index
        %47 = arith.addi %arg15, %44 : index
        %48 = arith.minui %47, %c95_6 : index
        %49 = memref.load %arg0[%46, %48] : memref<64x96xf32>
        memref.store %49, %alloc_19[%43, %44] : memref<64x32xf32, #gpu.address_space<workgroup>>
        %50 = arith.addi %thread_id_x, %c256_7 : index
        %51 = arith.divui %50, %c32_3 : index
        %52 = arith.remui %50, %c32_3 : index
        %53 = arith.addi %2, %51 : index
        %54 = arith.minui %53, %c63_5 : index
        %55 = arith.addi %arg15, %52 : index
        %56 = arith.minui %55, %c95_6 : index
        %57 = memref.load %arg0[%54, %56] : memref<64x96xf32>
        memref.store %57, %alloc_19[%51, %52] : memref<64x32xf32, #gpu.address_space<workgroup>>
        %58 = arith.addi %thread_id_x, %c512_8 : index
        %59 = arith.divui %58, %c32_3 : index
        %60 = arith.remui %58, %c32_3 : index
        %61 = arith.addi %2, %59 : index
        %62 = arith.minui %61, %c63_5 : index
        %63 = arith.addi %arg15, %60 : index
        %64 = arith.minui %63, %c95_6 : index
        %65 = memref.load %arg0[%62, %64] : memref<64x96xf32>
        memref.store %65, %alloc_19[%59, %60] : memref<64x32xf32, #gpu.address_space<workgroup>>
        %66 = arith.addi %thread_id_x, %c768_9 : index
        %67 = arith.divui %66, %c32_3 : index
        %68 = arith.remui %66, %c32_3 : index
        %69 = arith.addi %2, %67 : index
        %70 = arith.minui %69, %c63_5 : index
        %71 = arith.addi %arg15, %68 : index
        %72 = arith.minui %71, %c95_6 : index
        %73 = memref.load %arg0[%70, %72] : memref<64x96xf32>
        memref.store %73, %alloc_19[%67, %68] : memref<64x32xf32, #gpu.address_space<workgroup>>
        %74 = arith.addi %thread_id_x, %c1024_10 : index
        %75 = arith.divui %74, %c32_3 : index
        %76 = arith.remui %74, %c32_3 : index
        %77 = arith.addi %2, %75 : index
        %78 = arith.minui %77, %c63_5 : index
        %79 = arith.addi %arg15, %76 : index
        %80 = arith.minui %79, %c95_6 : index
        %81 = memref.load %arg0[%78, %80] : memref<64x96xf32>
        memref.store %81, %alloc_19[%75, %76] : memref<64x32xf32, #gpu.address_space<workgroup>>
        %82 = arith.addi %thread_id_x, %c1280_11 : index
        %83 = arith.divui %82, %c32_3 : index
        %84 = arith.remui %82, %c32_3 : index
        %85 = arith.addi %2, %83 : index
        %86 = arith.minui %85, %c63_5 : index
        %87 = arith.addi %arg15, %84 : index
        %88 = arith.minui %87, %c95_6 : index
        %89 = memref.load %arg0[%86, %88] : memref<64x96xf32>
        memref.store %89, %alloc_19[%83, %84] : memref<64x32xf32, #gpu.address_space<workgroup>>
        %90 = arith.addi %thread_id_x, %c1536_12 : index
        %91 = arith.divui %90, %c32_3 : index
        %92 = arith.remui %90, %c32_3 : index
        %93 = arith.addi %2, %91 : index
        %94 = arith.minui %93, %c63_5 : index
        %95 = arith.addi %arg15, %92 : index
        %96 = arith.minui %95, %c95_6 : index
        %97 = memref.load %arg0[%94, %96] : memref<64x96xf32>
        memref.store %97, %alloc_19[%91, %92] : memref<64x32xf32, #gpu.address_space<workgroup>>
        %98 = arith.addi %thread_id_x, %c1792_13 : index
        %99 = arith.divui %98, %c32_3 : index
        %100 = arith.remui %98, %c32_3 : index
        %101 = arith.addi %2, %99 : index
        %102 = arith.minui %101, %c63_5 : index
        %103 = arith.addi %arg15, %100 : index
        %104 = arith.minui %103, %c95_6 : index
        %105 = memref.load %arg0[%102, %104] : memref<64x96xf32>
        memref.store %105, %alloc_19[%99, %100] : memref<64x32xf32, #gpu.address_space<workgroup>>
        %106 = arith.divui %thread_id_x, %c64_2 : index
        %107 = arith.remui %thread_id_x, %c64_2 : index
        %108 = arith.addi %3, %107 : index
        %109 = arith.minui %108, %c47_14 : index
        %110 = arith.addi %arg15, %106 : index
        %111 = arith.minui %110, %c95_6 : index
        %112 = memref.load %arg1[%111, %109] : memref<96x48xf32>
        memref.store %112, %alloc_20[%106, %107] : memref<32x64xf32, #gpu.address_space<workgroup>>
        %113 = arith.divui %50, %c64_2 : index
        %114 = arith.remui %50, %c64_2 : index
        %115 = arith.addi %3, %114 : index
        %116 = arith.minui %115, %c47_14 : index
        %117 = arith.addi %arg15, %113 : index
        %118 = arith.minui %117, %c95_6 : index
        %119 = memref.load %arg1[%118, %116] : memref<96x48xf32>
        memref.store %119, %alloc_20[%113, %114] : memref<32x64xf32, #gpu.address_space<workgroup>>
        %120 = arith.divui %58, %c64_2 : index
        %121 = arith.remui %58, %c64_2 : index
        %122 = arith.addi %3, %121 : index
        %123 = arith.minui %122, %c47_14 : index
        %124 = arith.addi %arg15, %120 : index
        %125 = arith.minui %124, %c95_6 : index
        %126 = memref.load %arg1[%125, %123] : memref<96x48xf32>
        memref.store %126, %alloc_20[%120, %121] : memref<32x64xf32, #gpu.address_space<workgroup>>
        %127 = arith.divui %66, %c64_2 : index
        %128 = arith.remui %66, %c64_2 : index
        %129 = arith.addi %3, %128 : index
        %130 = arith.minui %129, %c47_14 : index
        %131 = arith.addi %arg15, %127 : index
        %132 = arith.minui %131, %c95_6 : index
        %133 = memref.load %arg1[%132, %130] : memref<96x48xf32>
        memref.store %133, %alloc_20[%127, %128] : memref<32x64xf32, #gpu.address_space<workgroup>>
        %134 = arith.divui %74, %c64_2 : index
        %135 = arith.remui %74, %c64_2 : index
        %136 = arith.addi %3, %135 : index
        %137 = arith.minui %136, %c47_14 : index
        %138 = arith.addi %arg15, %134 : index
        %139 = arith.minui %138, %c95_6 : index
        %140 = memref.load %arg1[%139, %137] : memref<96x48xf32>
        memref.store %140, %alloc_20[%134, %135] : memref<32x64xf32, #gpu.address_space<workgroup>>
        %141 = arith.divui %82, %c64_2 : index
        %142 = arith.remui %82, %c64_2 : index
        %143 = arith.addi %3, %142 : index
        %144 = arith.minui %143, %c47_14 : index
        %145 = arith.addi %arg15, %141 : index
        %146 = arith.minui %145, %c95_6 : index
        %147 = memref.load %arg1[%146, %144] : memref<96x48xf32>
        memref.store %147, %alloc_20[%141, %142] : memref<32x64xf32, #gpu.address_space<workgroup>>
        %148 = arith.divui %90, %c64_2 : index
        %149 = arith.remui %90, %c64_2 : index
        %150 = arith.addi %3, %149 : index
        %151 = arith.minui %150, %c47_14 : index
        %152 = arith.addi %arg15, %148 : index
        %153 = arith.minui %152, %c95_6 : index
        %154 = memref.load %arg1[%153, %151] : memref<96x48xf32>
        memref.store %154, %alloc_20[%148, %149] : memref<32x64xf32, #gpu.address_space<workgroup>>
        %155 = arith.divui %98, %c64_2 : index
        %156 = arith.remui %98, %c64_2 : index
        %157 = arith.addi %3, %156 : index
        %158 = arith.minui %157, %c47_14 : index
        %159 = arith.addi %arg15, %155 : index
        %160 = arith.minui %159, %c95_6 : index
        %161 = memref.load %arg1[%160, %158] : memref<96x48xf32>
        memref.store %161, %alloc_20[%155, %156] : memref<32x64xf32, #gpu.address_space<workgroup>>
        gpu.barrier
        %162 = arith.subi %c96_15, %arg15 : index
        %163 = arith.minui %162, %c32_3 : index
        %164:16 = scf.for %arg32 = %c0_16 to %163 step %c1_17 iter_args(%arg33 = %arg16, %arg34 = %arg17, %arg35 = %arg18, %arg36 = %arg19, %arg37 = %arg20, %arg38 = %arg21, %arg39 = %arg22, %arg40 = %arg23, %arg41 = %arg24, %arg42 = %arg25, %arg43 = %arg26, %arg44 = %arg27, %arg45 = %arg28, %arg46 = %arg29, %arg47 = %arg30, %arg48 = %arg31) -> (f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32) {
          %165 = memref.load %alloc_19[%1, %arg32] : memref<64x32xf32, #gpu.address_space<workgroup>>
          %166 = memref.load %alloc_19[%4, %arg32] : memref<64x32xf32, #gpu.address_space<workgroup>>
          %167 = memref.load %alloc_19[%5, %arg32] : memref<64x32xf32, #gpu.address_space<workgroup>>
          %168 = memref.load %alloc_19[%6, %arg32] : memref<64x32xf32, #gpu.address_space<workgroup>>
          %169 = memref.load %alloc_20[%arg32, %0] : memref<32x64xf32, #gpu.address_space<workgroup>>
          %170 = memref.load %alloc_20[%arg32, %7] : memref<32x64xf32, #gpu.address_space<workgroup>>
          %171 = memref.load %alloc_20[%arg32, %8] : memref<32x64xf32, #gpu.address_space<workgroup>>
          %172 = memref.load %alloc_20[%arg32, %9] : memref<32x64xf32, #gpu.address_space<workgroup>>
          %173 = arith.mulf %165, %169 : f32
          %174 = arith.addf %arg33, %173 : f32
          %175 = arith.mulf %165, %170 : f32
          %176 = arith.addf %arg34, %175 : f32
          %177 = arith.mulf %165, %171 : f32
          %178 = arith.addf %arg35, %177 : f32
          %179 = arith.mulf %165, %172 : f32
          %180 = arith.addf %arg36, %179 : f32
          %181 = arith.mulf %166, %169 : f32
          %182 = arith.addf %arg37, %181 : f32
          %183 = arith.mulf %166, %170 : f32
          %184 = arith.addf %arg38, %183 : f32
          %185 = arith.mulf %166, %171 : f32
          %186 = arith.addf %arg39, %185 : f32
          %187 = arith.mulf %166, %172 : f32
          %188 = arith.addf %arg40, %187 : f32
          %189 = arith.mulf %167, %169 : f32
          %190 = arith.addf %arg41, %189 : f32
          %191 = arith.mulf %167, %170 : f32
          %192 = arith.addf %arg42, %191 : f32
          %193 = arith.mulf %167, %171 : f32
          %194 = arith.addf %arg43, %193 : f32
          %195 = arith.mulf %167, %172 : f32
          %196 = arith.addf %arg44, %195 : f32
          %197 = arith.mulf %168, %169 : f32
          %198 = arith.addf %arg45, %197 : f32
          %199 = arith.mulf %168, %170 : f32
          %200 = arith.addf %arg46, %199 : f32
          %201 = arith.mulf %168, %171 : f32
          %202 = arith.addf %arg47, %201 : f32
          %203 = arith.mulf %168, %172 : f32
          %204 = arith.addf %arg48, %203 : f32
          scf.yield %174, %176, %178, %180, %182, %184, %186, %188, %190, %192, %194, %196, %198, %200, %202, %204 : f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32
        }
        gpu.barrier
        scf.yield %164#0, %164#1, %164#2, %164#3, %164#4, %164#5, %164#6, %164#7, %164#8, %164#9, %164#10, %164#11, %164#12, %164#13, %164#14, %164#15 : f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32
      }
      %19 = arith.cmpi ult, %10, %c64_2 : index
      %20 = arith.cmpi ult, %14, %c48_4 : index
      %21 = arith.andi %19, %20 : i1
      scf.if %21 {
        memref.store %18#0, %alloc[%10, %14] : memref<64x48xf32>
      }
      %22 = arith.cmpi ult, %15, %c48_4 : index
      %23 = arith.andi %19, %22 : i1
      scf.if %23 {
        memref.store %18#1, %alloc[%10, %15] : memref<64x48xf32>
      }
      %24 = arith.cmpi ult, %16, %c48_4 : index
      %25 = arith.andi %19, %24 : i1
      scf.if %25 {
        memref.store %18#2, %alloc[%10, %16] : memref<64x48xf32>
      }
      %26 = arith.cmpi ult, %17, %c48_4 : index
      %27 = arith.andi %19, %26 : i1
      scf.if %27 {
        memref.store %18#3, %alloc[%10, %17] : memref<64x48xf32>
      }
      %28 = arith.cmpi ult, %11, %c64_2 : index
      %29 = arith.andi %28, %20 : i1
      scf.if %29 {
        memref.store %18#4, %alloc[%11, %14] : memref<64x48xf32>
      }
      %30 = arith.andi %28, %22 : i1
      scf.if %30 {
        memref.store %18#5, %alloc[%11, %15] : memref<64x48xf32>
      }
      %31 = arith.andi %28, %24 : i1
      scf.if %31 {
        memref.store %18#6, %alloc[%11, %16] : memref<64x48xf32>
      }
      %32 = arith.andi %28, %26 : i1
      scf.if %32 {
        memref.store %18#7, %alloc[%11, %17] : memref<64x48xf32>
      }
      %33 = arith.cmpi ult, %12, %c64_2 : index
      %34 = arith.andi %33, %20 : i1
      scf.if %34 {
        memref.store %18#8, %alloc[%12, %14] : memref<64x48xf32>
      }
      %35 = arith.andi %33, %22 : i1
      scf.if %35 {
        memref.store %18#9, %alloc[%12, %15] : memref<64x48xf32>
      }
      %36 = arith.andi %33, %24 : i1
      scf.if %36 {
        memref.store %18#10, %alloc[%12, %16] : memref<64x48xf32>
      }
      %37 = arith.andi %33, %26 : i1
      scf.if %37 {
        memref.store %18#11, %alloc[%12, %17] : memref<64x48xf32>
      }
      %38 = arith.cmpi ult, %13, %c64_2 : index
      %39 = arith.andi %38, %20 : i1
      scf.if %39 {
        memref.store %18#12, %alloc[%13, %14] : memref<64x48xf32>
      }
      %40 = arith.andi %38, %22 : i1
      scf.if %40 {
        memref.store %18#13, %alloc[%13, %15] : memref<64x48xf32>
      }
      %41 = arith.andi %38, %24 : i1
      scf.if %41 {
        memref.store %18#14, %alloc[%13, %16] : memref<64x48xf32>
      }
      %42 = arith.andi %38, %26 : i1
      scf.if %42 {
        memref.store %18#15, %alloc[%13, %17] : memref<64x48xf32>
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
