// RUN: %python -m egglog_tensor.opt --stage loop-metadata %s | %FileCheck %s
// The loop annotation convert-scf-to-cf forwarded to the back edge (llvm.loop_annotation, a
// discardable attribute) becomes llvm.br's loop_annotation, which mlir-translate emits as !llvm.loop.
// CHECK:         #[[ANN:[a-z_0-9]+]] = #llvm.loop_annotation<interleave = #{{.*}}>
// CHECK-LABEL: llvm.func @kernel(
// CHECK-NOT:     llvm.loop_annotation
// CHECK:         llvm.br ^bb1(%{{.*}} : i64) {loop_annotation = #[[ANN]]}
// CHECK-NOT:     llvm.loop_annotation
// Input: hand-trimmed IR after `streams`: a loop whose back edge carries the forwarded annotation.
#loop_interleave = #llvm.loop_interleave<count = 8 : i32>
#loop_annotation = #llvm.loop_annotation<interleave = #loop_interleave>
module {
  llvm.func @kernel(%arg0: !llvm.ptr, %arg1: !llvm.ptr) {
    %0 = llvm.mlir.constant(0 : index) : i64
    %1 = llvm.mlir.constant(1024 : index) : i64
    %2 = llvm.mlir.constant(1 : index) : i64
    llvm.br ^bb1(%0 : i64)
  ^bb1(%3: i64):  // 2 preds: ^bb0, ^bb2
    %4 = llvm.icmp "slt" %3, %1 : i64
    llvm.cond_br %4, ^bb2, ^bb3
  ^bb2:  // pred: ^bb1
    %5 = llvm.getelementptr inbounds|nuw %arg0[%3] : (!llvm.ptr, i64) -> !llvm.ptr, f32
    %6 = llvm.load %5 : !llvm.ptr -> f32
    %7 = llvm.fmul %6, %6 : f32
    %8 = llvm.getelementptr inbounds|nuw %arg1[%3] : (!llvm.ptr, i64) -> !llvm.ptr, f32
    llvm.store %7, %8 : f32, !llvm.ptr
    %9 = llvm.add %3, %2 : i64
    llvm.br ^bb1(%9 : i64) {llvm.loop_annotation = #loop_annotation}
  ^bb3:  // pred: ^bb1
    llvm.return
  }
}
