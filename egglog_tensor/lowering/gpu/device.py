"""The device stages: kernel arguments marked noalias, then the device code converted to the ROCDL
or NVVM dialect and LLVM (one pointer per memref argument: MLIR's bare-pointer convention).

Math on the device: the math stage has made exp (float32, float64) and float32 tanh arithmetic;
what remains of the math dialect must be one of `DEVICE_MATH` (LLVM intrinsics both backends
select), else the kernel would call ROCm's or CUDA's device math library, which these targets do
not link: UnsupportedError names the function.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from mlir import ir

from ...errors import UnsupportedError
from ...target import Target
from ..stages.stage import Stage

DEVICE_MATH = ("math.fma", "math.absf", "math.copysign")  # after the math stage; each becomes an LLVM intrinsic
_VIEWS = ("memref.subview", "memref.cast", "memref.expand_shape", "memref.collapse_shape", "memref.reinterpret_cast")


def kernels(module: ir.Module) -> list[ir.Operation]:
    """The gpu.func kernels of every gpu.module."""
    found: list[ir.Operation] = []

    def visit(op: ir.Operation) -> ir.WalkResult:
        if op.name == "gpu.func" and "gpu.kernel" in op.attributes:
            found.append(op)
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit)
    return found


def _check(kernel: ir.Operation) -> None:
    """UnsupportedError for what the device code cannot hold: math needing a device library, a
    memref argument without a static shape and identity layout (the bare-pointer convention's need)."""
    for arg in kernel.regions[0].blocks[0].arguments:
        text = str(arg.type)
        if text.startswith("memref") and ("?" in text or "strided" in text or "affine_map" in text):
            raise UnsupportedError(f"GPU targets take C-contiguous arrays of static shape only; kernel {_name(kernel)} has {text}")
    left: set[str] = set()

    def visit(op: ir.Operation) -> ir.WalkResult:
        if op.name.startswith("math.") and op.name not in DEVICE_MATH:
            left.add(op.name)
        return ir.WalkResult.ADVANCE

    kernel.walk(visit)
    if left:
        raise UnsupportedError(f"GPU targets: {', '.join(sorted(left))} would need the device's math library, which "
                               f"GPU targets do not link yet (supported: exp, float32 tanh, abs, fma, arithmetic)")


def _name(kernel: ir.Operation) -> str:
    return ir.StringAttr(kernel.attributes["sym_name"]).value


@dataclass(frozen=True)
class NoAlias(Stage):
    """Every kernel's memref arguments marked `llvm.noalias` (each is a distinct buffer of the
    compiled function: a kernel stores its result once, not after each step), after checking the
    device code holds nothing the targets cannot compile."""

    name: ClassVar[str] = "noalias"

    def rewrite(self, module: ir.Module) -> None:
        noalias = ir.DictAttr.get({"llvm.noalias": ir.UnitAttr.get()})
        for kernel in kernels(module):
            _check(kernel)
            args = kernel.regions[0].blocks[0].arguments
            kernel.attributes["arg_attrs"] = ir.ArrayAttr.get(
                [noalias if str(a.type).startswith("memref") else ir.DictAttr.get({}) for a in args])


@dataclass(frozen=True)
class Convert(Stage):
    """The device code in the ROCDL (AMD) or NVVM (NVIDIA) and LLVM dialects, for the Target's chip."""

    target: Target

    @property
    def name(self) -> str:  # type: ignore[override]
        return self.target.name

    @property
    def passes(self) -> tuple[str, ...]:  # type: ignore[override]
        chip = self.target.cpu
        convert = (f"convert-gpu-to-rocdl{{chipset={chip} runtime=HIP use-bare-ptr-memref-call-conv=true}}"
                   if self.target.name == "rocdl" else "convert-gpu-to-nvvm{use-bare-ptr-memref-call-conv=true}")
        attach = f"rocdl-attach-target{{chip={chip}}}" if self.target.name == "rocdl" else f"nvvm-attach-target{{chip={chip} O=3}}"
        return (attach, f"gpu.module(expand-strided-metadata,lower-affine,convert-scf-to-cf,convert-math-to-llvm,{convert})",
                "reconcile-unrealized-casts")
