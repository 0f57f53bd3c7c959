"""Toolchain discovery and error reporting: failures name the stage and point at a saved input file."""

from __future__ import annotations

import ctypes
import re
from pathlib import Path

import pytest
from mlir import ir

from egglog_tensor.errors import CompileError, ToolchainError
from egglog_tensor.gpu.targets import gpu_target
from egglog_tensor.lowering import scripts
from egglog_tensor.lowering.gpu import codegen
from egglog_tensor.lowering.llvm import load_llvm_ir
from egglog_tensor.lowering.pipelines import Pipeline, lower_to_llvm_ir, pipeline_for, resolve_target, run_pipeline
from egglog_tensor.lowering.stages import Passes
from egglog_tensor.target import Target
from egglog_tensor.toolchain import (
    check_versions,
    load_openmp_runtime,
    mlir_llvm_version,
    openmp_library_path,
    require_same_llvm_major,
    run_tool,
    tool_path,
)

VALID = """
func.func @kernel(%a: memref<4xf32>, %out: memref<4xf32>) attributes {llvm.emit_c_interface} {
  %t = bufferization.to_tensor %a restrict : memref<4xf32> to tensor<4xf32>
  bufferization.materialize_in_destination %t in restrict writable %out : (tensor<4xf32>, memref<4xf32>) -> ()
  return
}
"""


def saved_path(message: str) -> Path:
    """The saved-input path an error message points at; it must exist."""
    match = re.search(r"saved to: (\S+)", message)
    assert match, message
    path = Path(match[1])
    assert path.is_file(), path
    return path


PRINTED = pytest.mark.parametrize("printed", [True, False], ids=["printed", "unprinted"])  # unprinted: as a compile runs it


@PRINTED
def test_failing_pass_names_stage_and_saves_input(printed: bool) -> None:
    text = VALID.replace(" restrict :", " :")  # One-Shot Bufferize rejects to_tensor without `restrict`
    with pytest.raises(CompileError) as info:
        run_pipeline(text, pipeline_for(resolve_target("cpu")), printed=printed)
    message = str(info.value)
    assert "pipeline 'cpu' failed at stage 'bufferize'" in message
    assert "one-shot-bufferize" in message and "without `restrict`" in message
    assert "bufferization.to_tensor %a :" in saved_path(message).read_text()


@PRINTED
def test_later_stage_failure_saves_that_stages_input(printed: bool) -> None:
    broken = Pipeline("broken", (Passes("first", ("canonicalize",)), Passes("second", ("no-such-pass",))))
    with pytest.raises(CompileError, match="stage 'second'") as info:
        run_pipeline(VALID, broken, printed=printed)
    assert "bufferization.materialize_in_destination" in saved_path(str(info.value)).read_text()


def test_unparsable_module() -> None:
    with pytest.raises(CompileError, match="stage 'parse'") as info:
        run_pipeline("func.func @f( {", pipeline_for(resolve_target("cpu")))
    assert saved_path(str(info.value)).read_text() == "func.func @f( {"


def test_i1_memref_refused_instead_of_aborting() -> None:
    text = VALID.replace("f32", "i1")
    with pytest.raises(CompileError, match="stage 'llvm'.*\n(.*\n)*.*use i8") as info:
        run_pipeline(text, pipeline_for(resolve_target("cpu")))
    saved_path(str(info.value))


# A one-row float32 matvec as the tile stage got it before issue 22's fix: one full step of its
# 64-wide partial sums and a partial one, which MLIR's vector patterns turn into a vector.mask
# around an op it cannot mask; an assertion (this LLVM build has them on) aborts the process.
ABORTING_MATVEC = """
func.func @kernel(%a: memref<1x100xf32>, %x: memref<100xf32>, %out: memref<1xf32>) attributes {llvm.emit_c_interface} {
  %0 = bufferization.to_tensor %a restrict : memref<1x100xf32> to tensor<1x100xf32>
  %1 = bufferization.to_tensor %x restrict : memref<100xf32> to tensor<100xf32>
  %2 = tensor.empty() : tensor<1xf32>
  %zero = arith.constant 0.000000e+00 : f32
  %3 = linalg.fill ins(%zero : f32) outs(%2 : tensor<1xf32>) -> tensor<1xf32>
  %4 = linalg.matvec {et.tiles = [1, 0], et.vec = [1, 64]} ins(%0, %1 : tensor<1x100xf32>, tensor<100xf32>) outs(%3 : tensor<1xf32>) -> tensor<1xf32>
  bufferization.materialize_in_destination %4 in restrict writable %out : (tensor<1xf32>, memref<1xf32>) -> ()
  return
}
"""


@pytest.mark.parametrize(("target", "printed"), [("cpu", True), ("cpu-openmp", True), ("cpu", False)])
def test_stage_abort_becomes_compile_error(target: str, printed: bool) -> None:
    """An assertion in a stage aborts only the forked process running the pipeline: a CompileError
    names the stage, says how it ended with the assertion's message, and saves the stage's input."""
    with pytest.raises(CompileError, match=f"pipeline '{target}' failed at stage 'tile'") as info:
        run_pipeline(ABORTING_MATVEC, pipeline_for(resolve_target(target)), printed=printed)
    message = str(info.value)
    assert "killed by SIGABRT" in message and "Assertion" in message and "MaskableOpInterface" in message
    assert "transform.structured.vectorize" in message  # the script
    assert "linalg.matvec {et.tiles = [1, 0], et.vec = [1, 64]}" in saved_path(message).read_text()
    assert run_pipeline(VALID, pipeline_for(resolve_target(target))).texts  # and the next compile runs as usual


def test_mlir_translate_failure() -> None:
    with pytest.raises(CompileError, match="mlir-translate failed at stage 'mlir-to-llvmir'") as info:
        lower_to_llvm_ir(run_pipeline(VALID, pipeline_for(resolve_target("cpu"))).texts[0][1])  # still func/memref, not LLVM dialect
    assert "--mlir-to-llvmir" in str(info.value)
    assert "memref" in saved_path(str(info.value)).read_text()


def test_run_tool_failure_names_tool_and_args() -> None:
    with pytest.raises(CompileError, match=r"mlir-opt failed at stage 'custom'(.*\n)*  args: --no-such-flag") as info:
        run_tool("mlir-opt", ["--no-such-flag"], "module {}", stage="custom")
    assert saved_path(str(info.value)).read_text() == "module {}"


def test_llvmlite_parse_failure() -> None:
    with pytest.raises(CompileError, match="parse/verify") as info:
        load_llvm_ir("define i32 @f() {\n  ret i64 0\n}\n", Target.host())
    assert "ret i64 0" in saved_path(str(info.value)).read_text()


def test_llvmlite_codegen_abort_is_a_compile_error() -> None:
    """LLVM's code generator aborts on an intrinsic it cannot select; that ends a forked child, not
    this process, and the code loads normally after it."""
    ir_text = "declare i32 @llvm.amdgcn.workitem.id.x()\ndefine i32 @f() {\n  %x = call i32 @llvm.amdgcn.workitem.id.x()\n  ret i32 %x\n}\n"
    with pytest.raises(CompileError, match=r"stage 'codegen'.*SIGABRT(.*\n)*  error: LLVM ERROR: Cannot select") as info:
        load_llvm_ir(ir_text, Target.host())
    assert "llvm.amdgcn.workitem.id.x" in saved_path(str(info.value)).read_text()
    module = load_llvm_ir("define i32 @g(i32 %a) {\n  %b = add i32 %a, 1\n  ret i32 %b\n}\n", Target.host())
    assert ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_int32)(module.address("g"))(41) == 42
    assert module.object_code.startswith(b"\x7fELF") and "g:" in module.asm


def test_device_codegen_abort_is_a_compile_error(tmp_path: Path) -> None:
    """The AMDGPU backend aborts on an intrinsic it cannot select: that ends the worker generating the
    device code, not this process; a CompileError names the chip and saves the IR, and the next runs."""
    target = gpu_target("rocdl:gfx942")
    bad = "declare void @llvm.x86.sse2.pause()\ndefine amdgpu_kernel void @k() {\n  call void @llvm.x86.sse2.pause()\n  ret void\n}\n"
    with pytest.raises(CompileError, match=r"llvmlite-gfx942 failed: .*SIGABRT(.*\n)*LLVM ERROR: Cannot select") as info:
        codegen.generate(bad, target, tmp_path)
    assert "llvm.x86.sse2.pause" in saved_path(str(info.value)).read_text()
    asm, obj = codegen.generate("define amdgpu_kernel void @k() {\n  ret void\n}\n", target, tmp_path)
    assert "s_endpgm" in asm and obj is not None and obj.startswith(b"\x7fELF")


def test_tools_are_found() -> None:
    for name in ("mlir-opt", "mlir-translate", "FileCheck", "ptxas", "zig"):
        assert tool_path(name).is_file()
    with pytest.raises(ToolchainError, match="unknown tool"):
        tool_path("gcc")


def test_versions_match_and_mismatch_is_reported() -> None:
    check_versions()
    assert mlir_llvm_version()[0] == 22
    reported = re.search(r"LLVM version (\d+)\.(\d+)\.(\d+)", run_tool("mlir-opt", ["--version"]))
    assert reported is not None and mlir_llvm_version() == tuple(map(int, reported.groups()))  # the distribution's number is the tool's
    with pytest.raises(ToolchainError, match="MLIR tools .* LLVM 22.1.8 but llvmlite is LLVM 21.1.0"):
        require_same_llvm_major((22, 1, 8), (21, 1, 0))


def test_openmp_runtime_loads_once() -> None:
    assert openmp_library_path().name == "libiomp5.so"
    first = load_openmp_runtime()
    assert load_openmp_runtime() is first
    assert first.__kmpc_fork_call


def test_failing_typed_script_names_stage_and_shows_script() -> None:
    """A typed transform script (lowering/scripts.py) that fails on the payload, applied in place by
    the interpreter, is a CompileError naming its stage, with the interpreter's message and the script."""

    class FlattenTheFunction(Passes):
        scripted = True

        def script(self, module: ir.Module) -> ir.Module:
            return scripts.build(module.context, lambda root: scripts.flatten_elementwise(scripts.match_ops(root, "func.func")))

    broken = Pipeline("broken", (FlattenTheFunction("flat", ("canonicalize",)),))
    with pytest.raises(CompileError, match="pipeline 'broken' failed at stage 'flat'") as info:
        run_pipeline(VALID, broken)
    message = str(info.value)
    assert "Failed to apply named transform sequence" in message
    assert "transform.structured.flatten_elementwise" in message  # the script
    assert "bufferization.materialize_in_destination" in saved_path(message).read_text()
