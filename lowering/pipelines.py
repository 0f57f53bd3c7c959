"""Named MLIR pass pipelines (linalg on tensors -> LLVM dialect), run stage by stage so every stage's IR is kept."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from mlir import ir, passmanager

from ..errors import CompileError
from ..toolchain import run_tool, save_failure_input
from . import mathapprox


@dataclass(frozen=True)
class Stage:
    """One named step of a pipeline: pass-pipeline elements run inside `builtin.module(...)`."""

    name: str
    passes: tuple[str, ...]
    rewrite: Callable[[ir.Module], None] | None = None  # applied in place after the passes

    @property
    def pipeline_text(self) -> str:
        """The textual pass pipeline handed to PassManager.parse."""
        return f"builtin.module({','.join(self.passes)})"


@dataclass(frozen=True)
class Pipeline:
    """An ordered tuple of stages with a name users pick it by."""

    name: str
    stages: tuple[Stage, ...]
    needs_openmp: bool = False


# Input: linalg on tensors, memref function arguments read with `bufferization.to_tensor ... restrict`
# and written with `bufferization.materialize_in_destination ... restrict writable`.
BUFFERIZE = Stage(
    "bufferize",
    (
        "eliminate-empty-tensors",
        "empty-tensor-to-alloc-tensor",
        "one-shot-bufferize{bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map}",
        "canonicalize",
        "buffer-deallocation-pipeline",
        "canonicalize",
    ),
)

# Math ops with an LLVM intrinsic become intrinsics (LLVM may vectorize them); the rest (atan2, ...) call libm.
TO_LLVM = Stage(
    "llvm",
    (
        "lower-affine",
        "convert-scf-to-cf",
        "convert-math-to-llvm",
        "convert-math-to-libm",
        "expand-strided-metadata",
        "lower-affine",
        "finalize-memref-to-llvm",
        "arith-expand",
        "convert-arith-to-llvm",
        "convert-index-to-llvm",
        "convert-ub-to-llvm",
        "convert-func-to-llvm",
        "convert-cf-to-llvm",
        "reconcile-unrealized-casts",
    ),
)

# Scalar exp/log/tanh/sin/cos become libm calls that LLVM vectorizes with glibc's libmvec (mathapprox.py).
VECMATH = Stage("vecmath", (), rewrite=mathapprox.vectorize_math)

CPU = Pipeline(
    "cpu",
    (
        BUFFERIZE,
        Stage("loops", ("func.func(convert-linalg-to-loops)", "canonicalize", "cse")),
        TO_LLVM,
        VECMATH,
    ),
)

CPU_OPENMP = Pipeline(
    "cpu-openmp",
    (
        BUFFERIZE,
        Stage("parallel-loops", ("func.func(convert-linalg-to-parallel-loops)", "canonicalize", "cse")),
        Stage("openmp", ("convert-scf-to-openmp",)),
        Stage("llvm", ("convert-openmp-to-llvm", *TO_LLVM.passes)),
        VECMATH,
    ),
    needs_openmp=True,
)

PIPELINES: dict[str, Pipeline] = {p.name: p for p in (CPU, CPU_OPENMP)}

# MLIR 22's memref-to-LLVM lowering asserts (aborting the process: the build has assertions on) on
# sub-byte element types, so i1 memrefs are refused before that pass runs; store booleans as i8.
_I1_MEMREF = re.compile(r"memref<(?:[0-9?]+x)*i1[,>]")


def _fail(pipeline: Pipeline, stage: Stage, ir_text: str, diagnostics: str) -> CompileError:
    """Build the CompileError for a failed stage, saving the stage's input IR to a file."""
    saved = save_failure_input(ir_text, f"{pipeline.name}-{stage.name}")
    return CompileError(
        f"MLIR pipeline {pipeline.name!r} failed at stage {stage.name!r}\n"
        f"  passes: {stage.pipeline_text}\n"
        f"  input IR saved to: {saved}\n"
        f"  diagnostics:\n{diagnostics}"
    )


_OP_NAME = re.compile(r"^\s*(?:%[^=]+=\s*)?\"?([a-z_][a-z0-9_]*)\.([a-z_][a-z0-9_.]*)", re.MULTILINE)


def _unlowered_ops(ir_text: str) -> list[str]:
    """Ops mlir-translate cannot take (not llvm, builtin or omp) left in a lowered module (sorted, unique)."""
    return sorted({f"{d}.{o}" for d, o in _OP_NAME.findall(ir_text) if d not in ("llvm", "builtin", "omp")})


def run_pipeline(module_text: str, pipeline: Pipeline, *, context: ir.Context | None = None) -> list[tuple[str, str]]:
    """Run each stage of pipeline on module_text and return [(stage name, IR after that stage)]."""
    context = context if context is not None else ir.Context()
    results: list[tuple[str, str]] = []
    with context:
        try:
            module = ir.Module.parse(module_text)
        except ir.MLIRError as exc:
            raise _fail(pipeline, Stage("parse", ()), module_text, str(exc)) from None
        current = module_text
        for stage in pipeline.stages:
            if _I1_MEMREF.search(current) and any(p.startswith("finalize-memref-to-llvm") for p in stage.passes):
                raise _fail(pipeline, stage, current, "memrefs of i1 cannot be lowered to LLVM; use i8 (0/1) in memory")
            try:
                manager = passmanager.PassManager.parse(stage.pipeline_text)
                manager.run(module.operation)
                if stage.rewrite is not None:
                    stage.rewrite(module)
            except (ir.MLIRError, ValueError) as exc:  # ValueError: the pass pipeline text does not parse
                raise _fail(pipeline, stage, current, str(exc)) from None
            current = str(module)
            results.append((stage.name, current))
        left = _unlowered_ops(current)
        if left:  # conversions are partial: a missing pass leaves ops that mlir-translate cannot take
            last = pipeline.stages[-1]
            raise _fail(pipeline, last, current, f"ops left after the last stage, not in the LLVM dialect: {', '.join(left)}")
    return results


def lower_to_llvm_ir(llvm_dialect_text: str) -> str:
    """Translate LLVM-dialect MLIR to LLVM IR text with mlir-translate (the bindings lack this)."""
    return run_tool("mlir-translate", ["--mlir-to-llvmir"], llvm_dialect_text, stage="mlir-to-llvmir")
