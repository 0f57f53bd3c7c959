// RUN: %python -m egglog_tensor.opt --stage streams %s | %FileCheck %s
// A store marked nontemporal (by the loops stage's guard) carries an LLVM access group instead,
// which LLVM's vectorizer keeps on the vector stores it makes; other stores are untouched.
// CHECK:         #[[GROUP:[a-z_0-9]+]] = #llvm.access_group<id = distinct[0]<>>
// CHECK-LABEL: llvm.func @kernel(
// CHECK-NOT:     nontemporal
// CHECK:         llvm.store %{{.*}}, %{{.*}} {access_groups = [#[[GROUP]]]} : f32, !llvm.ptr
// CHECK-NEXT:    llvm.store %{{.*}}, %{{.*}} : f32, !llvm.ptr
// CHECK-NOT:     nontemporal
// Input: hand-written LLVM dialect: one store marked nontemporal, one not.
module {
  llvm.func @kernel(%arg0: !llvm.ptr, %arg1: !llvm.ptr, %arg2: i64) {
    %0 = llvm.getelementptr inbounds|nuw %arg0[%arg2] : (!llvm.ptr, i64) -> !llvm.ptr, f32
    %1 = llvm.load %0 : !llvm.ptr -> f32
    %2 = llvm.getelementptr inbounds|nuw %arg1[%arg2] : (!llvm.ptr, i64) -> !llvm.ptr, f32
    llvm.store %1, %2 {nontemporal} : f32, !llvm.ptr
    llvm.store %1, %0 : f32, !llvm.ptr
    llvm.return
  }
}
