// RUN: %python -m egglog_tensor.opt --stage gpu-map --target rocdl:gfx942 %s | %FileCheck %s
// tanh(a @ b + 1) with a 64x96, b 96x48 (its input: gpu-reduce's, canonicalized): the tiled product one launch
// of one block of 256 threads, its k loop with the workgroup-memory copies and barriers; then the epilogue.
// CHECK-LABEL: func.func @kernel(
// CHECK:         %[[C:.*]] = memref.alloc() {{.*}} : memref<64x48xf32>
// CHECK:         gpu.launch blocks({{.*}}) in ({{.*}} = %c1{{.*}}, {{.*}} = %c1{{.*}}, {{.*}} = %c1{{.*}}) threads({{.*}}) in ({{.*}} = %c256{{.*}}, {{.*}} = %c1{{.*}}, {{.*}} = %c1{{.*}})
// CHECK:           gpu.thread_id  x
// CHECK:           memref.alloc() : memref<64x32xf32, #gpu.address_space<workgroup>>
// CHECK:           memref.alloc() : memref<32x64xf32, #gpu.address_space<workgroup>>
// CHECK:           scf.for {{.*}} iter_args(
// CHECK:             gpu.barrier
// CHECK:             scf.for
// CHECK:               arith.mulf
// CHECK:               arith.addf
// CHECK:             gpu.barrier
// CHECK:         gpu.launch blocks({{.*}}) in ({{.*}} = %c1{{.*}}, {{.*}} = %c64{{.*}}, {{.*}} = %c1{{.*}}) threads({{.*}}) in ({{.*}} = %c64{{.*}}, {{.*}} = %c1{{.*}}, {{.*}} = %c1{{.*}})
// CHECK:           math.tanh
// CHECK-NOT:     scf.forall

#map = affine_map<(d0) -> (-d0 + 48, 1)>
#map1 = affine_map<(d0) -> (0, d0)>
#map2 = affine_map<(d0, d1) -> (d0, d1)>
module {
  func.func @kernel(%arg0: memref<64x96xf32>, %arg1: memref<96x48xf32>, %arg2: memref<64x48xf32> {et.output}) attributes {llvm.emit_c_interface} {
    %c1 = arith.constant 1 : index
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
    %c96 = arith.constant 96 : index
    %c48 = arith.constant 48 : index
    %c32 = arith.constant 32 : index
    %c0 = arith.constant 0 : index
    %c64 = arith.constant 64 : index
    %c16 = arith.constant 16 : index
    %cst = arith.constant 1.000000e+00 : f32
    %cst_0 = arith.constant 0.000000e+00 : f32
    %alloc = memref.alloc() {alignment = 64 : i64} : memref<64x48xf32>
    scf.forall (%arg3, %arg4) in (1, 1) {
      %thread_id_x = gpu.thread_id  x
      %0 = arith.remui %thread_id_x, %c16 : index
      %1 = arith.divui %thread_id_x, %c16 : index
      %2 = arith.addi %1, %c16 : index
      %3 = arith.addi %1, %c32 : index
      %4 = arith.addi %1, %c48 : index
      %5 = arith.addi %0, %c16 : index
      %6 = arith.addi %0, %c32 : index
      %7 = arith.addi %0, %c48 : index
      %alloc_1 = memref.alloc() : memref<64x32xf32, #gpu.address_space<workgroup>>
      %alloc_2 = memref.alloc() : memref<32x64xf32, #gpu.address_space<workgroup>>
      %8:16 = scf.for %arg5 = %c0 to %c96 step %c32 iter_args(%arg6 = %cst_0, %arg7 = %cst_0, %arg8 = %cst_0, %arg9 = %cst_0, %arg10 = %cst_0, %arg11 = %cst_0, %arg12 = %cst_0, %arg13 = %cst_0, %arg14 = %cst_0, %arg15 = %cst_0, %arg16 = %cst_0, %arg17 = %cst_0, %arg18 = %cst_0, %arg19 = %cst_0, %arg20 = %cst_0, %arg21 = %cst_0) -> (f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32) {
        %33 = arith.divui %thread_id_x, %c32 : index
        %34 = arith.remui %thread_id_x, %c32 : index
        %35 = arith.minui %33, %c63 : index
        %36 = arith.addi %arg5, %34 : index
        %37 = arith.minui %36, %c95 : index
        %38 = memref.load %arg0[%35, %37] : memref<64x96xf32>
        memref.store %38, %alloc_1[%33, %34] : memref<64x32xf32, #gpu.address_space<workgroup>>
        %39 = arith.addi %thread_id_x, %c256 : index
        %40 = arith.divui %39, %c32 : index
        %41 = arith.remui %39, %c32 : index
        %42 = arith.minui %40, %c63 : index
        %43 = arith.addi %arg5, %41 : index
        %44 = arith.minui %43, %c95 : index
        %45 = memref.load %arg0[%42, %44] : memref<64x96xf32>
        memref.store %45, %alloc_1[%40, %41] : memref<64x32xf32, #gpu.address_space<workgroup>>
        %46 = arith.addi %thread_id_x, %c512 : index
        %47 = arith.divui %46, %c32 : index
        %48 = arith.remui %46, %c32 : index
        %49 = arith.minui %47, %c63 : index
        %50 = arith.addi %arg5, %48 : index
        %51 = arith.minui %50, %c95 : index
        %52 = memref.load %arg0[%49, %51] : memref<64x96xf32>
        memref.store %52, %alloc_1[%47, %48] : memref<64x32xf32, #gpu.address_space<workgroup>>
        %53 = arith.addi %thread_id_x, %c768 : index
        %54 = arith.divui %53, %c32 : index
        %55 = arith.remui %53, %c32 : index
        %56 = arith.minui %54, %c63 : index
        %57 = arith.addi %arg5, %55 : index
        %58 = arith.minui %57, %c95 : index
        %59 = memref.load %arg0[%56, %58] : memref<64x96xf32>
        memref.store %59, %alloc_1[%54, %55] : memref<64x32xf32, #gpu.address_space<workgroup>>
        %60 = arith.addi %thread_id_x, %c1024 : index
        %61 = arith.divui %60, %c32 : index
        %62 = arith.remui %60, %c32 : index
        %63 = arith.minui %61, %c63 : index
        %64 = arith.addi %arg5, %62 : index
        %65 = arith.minui %64, %c95 : index
        %66 = memref.load %arg0[%63, %65] : memref<64x96xf32>
        memref.store %66, %alloc_1[%61, %62] : memref<64x32xf32, #gpu.address_space<workgroup>>
        %67 = arith.addi %thread_id_x, %c1280 : index
        %68 = arith.divui %67, %c32 : index
        %69 = arith.remui %67, %c32 : index
        %70 = arith.minui %68, %c63 : index
        %71 = arith.addi %arg5, %69 : index
        %72 = arith.minui %71, %c95 : index
        %73 = memref.load %arg0[%70, %72] : memref<64x96xf32>
        memref.store %73, %alloc_1[%68, %69] : memref<64x32xf32, #gpu.address_space<workgroup>>
        %74 = arith.addi %thread_id_x, %c1536 : index
        %75 = arith.divui %74, %c32 : index
        %76 = arith.remui %74, %c32 : index
        %77 = arith.minui %75, %c63 : index
        %78 = arith.addi %arg5, %76 : index
        %79 = arith.minui %78, %c95 : index
        %80 = memref.load %arg0[%77, %79] : memref<64x96xf32>
        memref.store %80, %alloc_1[%75, %76] : memref<64x32xf32, #gpu.address_space<workgroup>>
        %81 = arith.addi %thread_id_x, %c1792 : index
        %82 = arith.divui %81, %c32 : index
        %83 = arith.remui %81, %c32 : index
        %84 = arith.minui %82, %c63 : index
        %85 = arith.addi %arg5, %83 : index
        %86 = arith.minui %85, %c95 : index
        %87 = memref.load %arg0[%84, %86] : memref<64x96xf32>
        memref.store %87, %alloc_1[%82, %83] : memref<64x32xf32, #gpu.address_space<workgroup>>
        %88 = arith.divui %thread_id_x, %c64 : index
        %89 = arith.remui %thread_id_x, %c64 : index
        %90 = arith.minui %89, %c47 : index
        %91 = arith.addi %arg5, %88 : index
        %92 = arith.minui %91, %c95 : index
        %93 = memref.load %arg1[%92, %90] : memref<96x48xf32>
        memref.store %93, %alloc_2[%88, %89] : memref<32x64xf32, #gpu.address_space<workgroup>>
        %94 = arith.divui %39, %c64 : index
        %95 = arith.remui %39, %c64 : index
        %96 = arith.minui %95, %c47 : index
        %97 = arith.addi %arg5, %94 : index
        %98 = arith.minui %97, %c95 : index
        %99 = memref.load %arg1[%98, %96] : memref<96x48xf32>
        memref.store %99, %alloc_2[%94, %95] : memref<32x64xf32, #gpu.address_space<workgroup>>
        %100 = arith.divui %46, %c64 : index
        %101 = arith.remui %46, %c64 : index
        %102 = arith.minui %101, %c47 : index
        %103 = arith.addi %arg5, %100 : index
        %104 = arith.minui %103, %c95 : index
        %105 = memref.load %arg1[%104, %102] : memref<96x48xf32>
        memref.store %105, %alloc_2[%100, %101] : memref<32x64xf32, #gpu.address_space<workgroup>>
        %106 = arith.divui %53, %c64 : index
        %107 = arith.remui %53, %c64 : index
        %108 = arith.minui %107, %c47 : index
        %109 = arith.addi %arg5, %106 : index
        %110 = arith.minui %109, %c95 : index
        %111 = memref.load %arg1[%110, %108] : memref<96x48xf32>
        memref.store %111, %alloc_2[%106, %107] : memref<32x64xf32, #gpu.address_space<workgroup>>
        %112 = arith.divui %60, %c64 : index
        %113 = arith.remui %60, %c64 : index
        %114 = arith.minui %113, %c47 : index
        %115 = arith.addi %arg5, %112 : index
        %116 = arith.minui %115, %c95 : index
        %117 = memref.load %arg1[%116, %114] : memref<96x48xf32>
        memref.store %117, %alloc_2[%112, %113] : memref<32x64xf32, #gpu.address_space<workgroup>>
        %118 = arith.divui %67, %c64 : index
        %119 = arith.remui %67, %c64 : index
        %120 = arith.minui %119, %c47 : index
        %121 = arith.addi %arg5, %118 : index
        %122 = arith.minui %121, %c95 : index
        %123 = memref.load %arg1[%122, %120] : memref<96x48xf32>
        memref.store %123, %alloc_2[%118, %119] : memref<32x64xf32, #gpu.address_space<workgroup>>
        %124 = arith.divui %74, %c64 : index
        %125 = arith.remui %74, %c64 : index
        %126 = arith.minui %125, %c47 : index
        %127 = arith.addi %arg5, %124 : index
        %128 = arith.minui %127, %c95 : index
        %129 = memref.load %arg1[%128, %126] : memref<96x48xf32>
        memref.store %129, %alloc_2[%124, %125] : memref<32x64xf32, #gpu.address_space<workgroup>>
        %130 = arith.divui %81, %c64 : index
        %131 = arith.remui %81, %c64 : index
        %132 = arith.minui %131, %c47 : index
        %133 = arith.addi %arg5, %130 : index
        %134 = arith.minui %133, %c95 : index
        %135 = memref.load %arg1[%134, %132] : memref<96x48xf32>
        memref.store %135, %alloc_2[%130, %131] : memref<32x64xf32, #gpu.address_space<workgroup>>
        gpu.barrier
        %136 = arith.subi %c96, %arg5 : index
        %137 = arith.minui %136, %c32 : index
        %138:16 = scf.for %arg22 = %c0 to %137 step %c1 iter_args(%arg23 = %arg6, %arg24 = %arg7, %arg25 = %arg8, %arg26 = %arg9, %arg27 = %arg10, %arg28 = %arg11, %arg29 = %arg12, %arg30 = %arg13, %arg31 = %arg14, %arg32 = %arg15, %arg33 = %arg16, %arg34 = %arg17, %arg35 = %arg18, %arg36 = %arg19, %arg37 = %arg20, %arg38 = %arg21) -> (f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32) {
          %139 = memref.load %alloc_1[%1, %arg22] : memref<64x32xf32, #gpu.address_space<workgroup>>
          %140 = memref.load %alloc_1[%2, %arg22] : memref<64x32xf32, #gpu.address_space<workgroup>>
          %141 = memref.load %alloc_1[%3, %arg22] : memref<64x32xf32, #gpu.address_space<workgroup>>
          %142 = memref.load %alloc_1[%4, %arg22] : memref<64x32xf32, #gpu.address_space<workgroup>>
          %143 = memref.load %alloc_2[%arg22, %0] : memref<32x64xf32, #gpu.address_space<workgroup>>
          %144 = memref.load %alloc_2[%arg22, %5] : memref<32x64xf32, #gpu.address_space<workgroup>>
          %145 = memref.load %alloc_2[%arg22, %6] : memref<32x64xf32, #gpu.address_space<workgroup>>
          %146 = memref.load %alloc_2[%arg22, %7] : memref<32x64xf32, #gpu.address_space<workgroup>>
          %147 = arith.mulf %139, %143 : f32
          %148 = arith.addf %arg23, %147 : f32
          %149 = arith.mulf %139, %144 : f32
          %150 = arith.addf %arg24, %149 : f32
          %151 = arith.mulf %139, %145 : f32
          %152 = arith.addf %arg25, %151 : f32
          %153 = arith.mulf %139, %146 : f32
          %154 = arith.addf %arg26, %153 : f32
          %155 = arith.mulf %140, %143 : f32
          %156 = arith.addf %arg27, %155 : f32
          %157 = arith.mulf %140, %144 : f32
          %158 = arith.addf %arg28, %157 : f32
          %159 = arith.mulf %140, %145 : f32
          %160 = arith.addf %arg29, %159 : f32
          %161 = arith.mulf %140, %146 : f32
          %162 = arith.addf %arg30, %161 : f32
          %163 = arith.mulf %141, %143 : f32
          %164 = arith.addf %arg31, %163 : f32
          %165 = arith.mulf %141, %144 : f32
          %166 = arith.addf %arg32, %165 : f32
          %167 = arith.mulf %141, %145 : f32
          %168 = arith.addf %arg33, %167 : f32
          %169 = arith.mulf %141, %146 : f32
          %170 = arith.addf %arg34, %169 : f32
          %171 = arith.mulf %142, %143 : f32
          %172 = arith.addf %arg35, %171 : f32
          %173 = arith.mulf %142, %144 : f32
          %174 = arith.addf %arg36, %173 : f32
          %175 = arith.mulf %142, %145 : f32
          %176 = arith.addf %arg37, %175 : f32
          %177 = arith.mulf %142, %146 : f32
          %178 = arith.addf %arg38, %177 : f32
          scf.yield %148, %150, %152, %154, %156, %158, %160, %162, %164, %166, %168, %170, %172, %174, %176, %178 : f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32
        }
        gpu.barrier
        scf.yield %138#0, %138#1, %138#2, %138#3, %138#4, %138#5, %138#6, %138#7, %138#8, %138#9, %138#10, %138#11, %138#12, %138#13, %138#14, %138#15 : f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32
      }
      %9 = arith.cmpi ult, %1, %c64 : index
      %10 = arith.cmpi ult, %0, %c48 : index
      %11 = arith.andi %9, %10 : i1
      scf.if %11 {
        memref.store %8#0, %alloc[%1, %0] : memref<64x48xf32>
      }
      %12 = arith.cmpi ult, %5, %c48 : index
      %13 = arith.andi %9, %12 : i1
      scf.if %13 {
        memref.store %8#1, %alloc[%1, %5] : memref<64x48xf32>
      }
      %14 = arith.cmpi ult, %6, %c48 : index
      %15 = arith.andi %9, %14 : i1
      scf.if %15 {
        memref.store %8#2, %alloc[%1, %6] : memref<64x48xf32>
      }
      %16 = arith.cmpi ult, %7, %c48 : index
      %17 = arith.andi %9, %16 : i1
      scf.if %17 {
        memref.store %8#3, %alloc[%1, %7] : memref<64x48xf32>
      }
      %18 = arith.cmpi ult, %2, %c64 : index
      %19 = arith.andi %18, %10 : i1
      scf.if %19 {
        memref.store %8#4, %alloc[%2, %0] : memref<64x48xf32>
      }
      %20 = arith.andi %18, %12 : i1
      scf.if %20 {
        memref.store %8#5, %alloc[%2, %5] : memref<64x48xf32>
      }
      %21 = arith.andi %18, %14 : i1
      scf.if %21 {
        memref.store %8#6, %alloc[%2, %6] : memref<64x48xf32>
      }
      %22 = arith.andi %18, %16 : i1
      scf.if %22 {
        memref.store %8#7, %alloc[%2, %7] : memref<64x48xf32>
      }
      %23 = arith.cmpi ult, %3, %c64 : index
      %24 = arith.andi %23, %10 : i1
      scf.if %24 {
        memref.store %8#8, %alloc[%3, %0] : memref<64x48xf32>
      }
      %25 = arith.andi %23, %12 : i1
      scf.if %25 {
        memref.store %8#9, %alloc[%3, %5] : memref<64x48xf32>
      }
      %26 = arith.andi %23, %14 : i1
      scf.if %26 {
        memref.store %8#10, %alloc[%3, %6] : memref<64x48xf32>
      }
      %27 = arith.andi %23, %16 : i1
      scf.if %27 {
        memref.store %8#11, %alloc[%3, %7] : memref<64x48xf32>
      }
      %28 = arith.cmpi ult, %4, %c64 : index
      %29 = arith.andi %28, %10 : i1
      scf.if %29 {
        memref.store %8#12, %alloc[%4, %0] : memref<64x48xf32>
      }
      %30 = arith.andi %28, %12 : i1
      scf.if %30 {
        memref.store %8#13, %alloc[%4, %5] : memref<64x48xf32>
      }
      %31 = arith.andi %28, %14 : i1
      scf.if %31 {
        memref.store %8#14, %alloc[%4, %6] : memref<64x48xf32>
      }
      %32 = arith.andi %28, %16 : i1
      scf.if %32 {
        memref.store %8#15, %alloc[%4, %7] : memref<64x48xf32>
      }
    } {et.launch = 0 : i64, et.threads = 256 : i64, mapping = [#gpu.block<y>, #gpu.block<x>]}
    scf.forall (%arg3, %arg4) in (64, 1) {
      %subview = memref.subview %alloc[%arg3, 0] [1, 48] [1, 1] : memref<64x48xf32> to memref<1x48xf32, strided<[48, 1], offset: ?>>
      %subview_1 = memref.subview %arg2[%arg3, 0] [1, 48] [1, 1] : memref<64x48xf32> to memref<1x48xf32, strided<[48, 1], offset: ?>>
      scf.forall (%arg5) in (64) {
        %0 = affine.min #map(%arg5)
        %1 = affine.max #map1(%0)
        %subview_2 = memref.subview %subview[0, %arg5] [1, %1] [1, 1] : memref<1x48xf32, strided<[48, 1], offset: ?>> to memref<1x?xf32, strided<[48, 1], offset: ?>>
        %subview_3 = memref.subview %subview_1[0, %arg5] [1, %1] [1, 1] : memref<1x48xf32, strided<[48, 1], offset: ?>> to memref<1x?xf32, strided<[48, 1], offset: ?>>
        linalg.generic {indexing_maps = [#map2, #map2], iterator_types = ["parallel", "parallel"]} ins(%subview_2 : memref<1x?xf32, strided<[48, 1], offset: ?>>) outs(%subview_3 : memref<1x?xf32, strided<[48, 1], offset: ?>>) {
        ^bb0(%in: f32, %out: f32):
          %2 = arith.addf %in, %cst : f32
          %3 = math.tanh %2 : f32
          linalg.yield %3 : f32
        }
      } {mapping = [#gpu.thread<x>]}
    } {et.launch = 1 : i64, et.threads = 64 : i64, mapping = [#gpu.block<y>, #gpu.block<x>]}
    return
  }
}

