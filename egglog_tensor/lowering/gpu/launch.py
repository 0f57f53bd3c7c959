"""The gpu-map and gpu-outline stages: each tiled op's foralls become a gpu.launch (blocks, then
threads, with the transform dialect's `map_forall_to_blocks` / `map_nested_forall_to_threads`), its
linalg body loops, and each launch's body an outlined kernel (`gpu.func` in a `gpu.module`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from mlir import ir
from mlir.dialects.transform import gpu

from ...errors import UnsupportedError
from .. import scripts
from ..payload import nested_ops
from ..stages.stage import Stage
from .device import kernels
from .tile import LAUNCH, THREADS, WORKGROUP, top_foralls


def marked(module: ir.Module) -> list[tuple[int, int]]:
    """(launch number, threads) of each forall the gpu-bufferize stage marked, in order."""
    return [(ir.IntegerAttr(op.attributes[LAUNCH]).value, ir.IntegerAttr(op.attributes[THREADS]).value)
            for op in top_foralls(module) if LAUNCH in op.attributes]


@dataclass(frozen=True)
class GpuMap(Stage):
    """Each marked forall nest as one gpu.launch: its block loop over the grid, its thread loop over the block."""

    name: ClassVar[str] = "gpu-map"
    scripted: ClassVar[bool] = True
    passes: ClassVar[tuple[str, ...]] = (
        "canonicalize", "cse", "canonicalize",
        "func.func(convert-linalg-to-loops,gpu-launch-sink-index-computations)",
    )

    def script(self, module: ir.Module) -> ir.Module | None:
        launches = marked(module)
        if not launches:
            return None

        def body(root: ir.Value) -> None:
            for number, threads in launches:
                forall = scripts.match(root, ("scf.forall",), {LAUNCH: number})
                launch = gpu.MapForallToBlocks(scripts.op_type("gpu.launch"), forall, generate_gpu_launch=True).result
                gpu.MapNestedForallToThreads(scripts.op_type("gpu.launch"), launch, block_dims=[threads, 1, 1],
                                             sync_after_distribute=False)

        return scripts.build(module.context, body)


@dataclass(frozen=True)
class GpuOutline(Stage):
    """Each gpu.launch's body outlined as a kernel: a gpu.func in its own gpu.module, launched by gpu.launch_func."""

    name: ClassVar[str] = "gpu-outline"
    passes: ClassVar[tuple[str, ...]] = ("gpu-kernel-outlining", "canonicalize", "cse")

    def rewrite(self, module: ir.Module) -> None:
        left = host_work(module)
        if left:
            raise UnsupportedError(f"GPU targets: {', '.join(left)} would run on the host, outside a kernel "
                                   "(an operation the GPU tiling does not map yet)")
        workgroup_attributions(module)


def workgroup_attributions(module: ir.Module) -> None:
    """Each kernel's memref.allocs in the workgroup address space (gpu-reduce's) as its workgroup
    attributions: shared memory both conversions lower to one LDS / shared global each."""
    for kernel in kernels(module):
        found = [op for op in nested_ops(kernel) if op.name == "memref.alloc" and WORKGROUP in str(op.results[0].type)]
        entry = kernel.regions[0].blocks[0]
        for alloc in found:
            alloc.results[0].replace_all_uses_with(entry.add_argument(alloc.results[0].type, alloc.location))
            alloc.erase()
        if found:
            kernel.attributes["workgroup_attributions"] = ir.IntegerAttr.get(ir.IntegerType.get_signless(64), len(found))


HOST_OPS = frozenset({"func.return", "arith.constant", "memref.alloc", "memref.dealloc", "memref.get_global", "gpu.launch_func",
                      "memref.expand_shape", "memref.collapse_shape", "memref.subview", "memref.cast"})  # (views: no work)


def host_work(module: ir.Module) -> list[str]:
    """The ops of the host functions that are neither launches nor buffers (sorted, unique)."""
    left: set[str] = set()
    for op in module.body.operations:
        if op.operation.name == "func.func" and op.regions[0].blocks:  # (not a declaration: libm's lgamma)
            left.update(inner.operation.name for inner in op.regions[0].blocks[0].operations)
    return sorted(left - HOST_OPS)
