// PIPELINE: cpu STAGE: llvm
// Only the LLVM dialect is left: the kernel, its C-interface wrapper, and math as LLVM intrinsics.
// CHECK-LABEL: llvm.func @kernel(
// CHECK:         llvm.intr.log
// CHECK:         llvm.intr.atan2
// CHECK:         llvm.return
// CHECK-LABEL: llvm.func @_mlir_ciface_kernel(%{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr)
// CHECK:         llvm.load %{{.*}} : !llvm.ptr -> !llvm.struct<(ptr, ptr, i64, array<1 x i64>, array<1 x i64>)>
// CHECK:         llvm.call @kernel(
// CHECK-NOT:   {{(func|scf|memref|arith|math|cf)\.}}
#map = affine_map<(d0) -> (d0)>
func.func @kernel(%a: memref<16xf64>, %out: memref<16xf64>) attributes {llvm.emit_c_interface} {
  %ta = bufferization.to_tensor %a restrict : memref<16xf64> to tensor<16xf64>
  %e = tensor.empty() : tensor<16xf64>
  %r = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel"]} ins(%ta : tensor<16xf64>) outs(%e : tensor<16xf64>) {
  ^bb0(%x: f64, %o: f64):
    %y = math.log %x : f64
    %z = math.atan2 %y, %x : f64
    linalg.yield %z : f64
  } -> tensor<16xf64>
  bufferization.materialize_in_destination %r in restrict writable %out : (tensor<16xf64>, memref<16xf64>) -> ()
  return
}
