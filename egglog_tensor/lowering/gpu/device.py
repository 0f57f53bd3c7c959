"""The device stages: kernel arguments marked noalias, then the device code converted to the ROCDL
or NVVM dialect and LLVM (one pointer per memref argument, MLIR's bare-pointer convention, where
every kernel argument has a static shape and identity layout; else memref descriptors).

Math on the device: the math stage has made the math functions arithmetic (devmath.py); what
remains of the math dialect must be one of `DEVICE_MATH` (LLVM intrinsics both backends select:
devmath.native_calls puts them back where a conversion calls the device library), else the kernel
would call ROCm's or CUDA's device math library, which these targets do not link: UnsupportedError
names the function and the target (a float `%`/fmod, arith.remf, too: it would call fmod).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from mlir import ir, passmanager
from mlir.dialects import llvm

from ...errors import UnsupportedError
from ...target import Target
from ..stages.stage import Stage
from .devmath import NATIVE_MATH, native_calls

# What may remain of the math dialect after the math stage: each becomes an LLVM intrinsic the backend selects.
DEVICE_MATH = NATIVE_MATH


def kernels(module: ir.Module) -> list[ir.Operation]:
    """The gpu.func kernels of every gpu.module."""
    found: list[ir.Operation] = []

    def visit(op: ir.Operation) -> ir.WalkResult:
        if op.name == "gpu.func" and "gpu.kernel" in op.attributes:
            found.append(op)
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit)
    return found


def _check_math(kernel: ir.Operation, backend: str) -> None:
    """UnsupportedError for math the device code cannot compute without the device's math library."""
    left: set[str] = set()

    def visit(op: ir.Operation) -> ir.WalkResult:
        if op.name.startswith("math.") and op.name not in DEVICE_MATH:
            left.add(op.name)
        elif op.name == "arith.remf":
            left.add("fmod or a float % (arith.remf)")
        elif op.name == "func.call":  # libm's functions MLIR's math dialect lacks (scalar.libm_call)
            left.add(f"libm's {ir.FlatSymbolRefAttr(op.attributes['callee']).value}")
        return ir.WalkResult.ADVANCE

    kernel.walk(visit)
    if left:
        raise UnsupportedError(f"GPU target {backend}: {', '.join(sorted(left))} would need the device's math library, which "
                               "GPU targets do not link (supported math: docs/gpu.md, 'Math functions')")


def bare(module: ir.Module) -> bool:
    """Whether every kernel memref argument has a static shape and identity layout: then each is passed
    as one pointer (MLIR's bare-pointer convention), else every one as a memref descriptor."""
    for kernel in kernels(module):
        for arg in kernel.regions[0].blocks[0].arguments:
            text = str(arg.type)
            if text.startswith("memref") and ("?" in text or "strided" in text or "affine_map" in text):
                return False
    return True


@dataclass(frozen=True)
class NoAlias(Stage):
    """Every kernel's memref arguments marked `llvm.noalias` when they are bare pointers (each is a
    distinct buffer of the compiled function: a kernel stores its result once, not after each step),
    after checking the device code holds no math the target cannot compile."""

    target: Target
    name: ClassVar[str] = "noalias"

    def rewrite(self, module: ir.Module) -> None:
        noalias = ir.DictAttr.get({"llvm.noalias": ir.UnitAttr.get()})
        marked = bare(module)  # (MLIR keeps noalias only on bare pointers)
        for kernel in kernels(module):
            _check_math(kernel, self.target.name)
            if not marked:
                continue
            args = list(kernel.regions[0].blocks[0].arguments)[:len(kernel.opview.function_type.value.inputs)]  # (not workgroup buffers)
            kernel.attributes["arg_attrs"] = ir.ArrayAttr.get(
                [noalias if str(a.type).startswith("memref") else ir.DictAttr.get({}) for a in args])


@dataclass(frozen=True)
class Convention:
    """How the kernels take their memref arguments: one pointer each (`bare`), else a memref
    descriptor each, expanded (allocated and aligned pointers, offset, sizes, strides)."""

    bare: bool


@dataclass(frozen=True)
class Convert(Stage):
    """The device code in the ROCDL (AMD) or NVVM (NVIDIA) and LLVM dialects, for the Target's chip;
    memref arguments as bare pointers where every kernel's allow it."""

    target: Target

    @property
    def name(self) -> str:  # type: ignore[override]
        return self.target.name

    @property
    def passes(self) -> tuple[str, ...]:  # type: ignore[override]
        chip = self.target.cpu
        attach = f"rocdl-attach-target{{chip={chip}}}" if self.target.name == "rocdl" else f"nvvm-attach-target{{chip={chip} O=3}}"
        return attach, "gpu.module(expand-strided-metadata,lower-affine,convert-scf-to-cf)"

    def conversion(self, bare_pointers: bool) -> str:
        """The pass pipeline converting the gpu.modules to the backend's dialect and LLVM."""
        option = f"use-bare-ptr-memref-call-conv={str(bare_pointers).lower()}"
        convert = (f"convert-gpu-to-rocdl{{chipset={self.target.cpu} runtime=HIP {option}}}" if self.target.name == "rocdl"
                   else f"convert-gpu-to-nvvm{{{option}}}")
        return f"builtin.module(gpu.module({convert}),reconcile-unrealized-casts)"

    def rewrite(self, module: ir.Module) -> Convention:
        convention = Convention(bare(module))
        passmanager.PassManager.parse(self.conversion(convention.bare)).run(module.operation)
        native_calls(module)
        return convention
