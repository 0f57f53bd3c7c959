"""The outlined GPU kernels run on this machine's CPU, to check what a GPU target computes without a GPU.

`emulate(comp, *arrays)` takes the module of a GPU compilation's `noalias` stage: the IR that goes
to the ROCDL/NVVM conversion (tiled, mapped to blocks and threads, outlined, its math inline). Each
kernel becomes a function taking its block and thread ids (gpu.block_id/thread_id replaced by its
arguments, block and grid sizes by the launch's constants), each gpu.launch_func a loop nest over
grid x block calling it; then the CPU's LLVM conversions and the JIT. It checks the tiling, fusion,
bufferization, the block/thread decomposition, partial blocks, the outlining and the device math;
not the ROCDL/NVVM conversion or the backends (ptxas and the HSACO checks do that), nor races:
threads run one after another, which kernels without barriers or shared memory (all of them so
far) allow.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from mlir import ir
from mlir.dialects import arith, func, scf

from ...forked import NATIVE
from ...target import Target
from ..llvm import load_llvm_ir
from ..pipelines import Pipeline, lower_to_llvm_ir, run_pipeline
from ..stages.llvm import PASSES
from ..stages.stage import Passes

_IDS = {"gpu.block_id": 0, "gpu.thread_id": 3}  # where each id's x, y, z sit among the six added arguments
_SIZES = {"gpu.grid_dim": "known_grid_size", "gpu.block_dim": "known_block_size"}
_AXIS = {"x": 0, "y": 1, "z": 2}


def _axis(op: ir.Operation) -> int:
    """The dimension (x 0, y 1, z 2) of a gpu id or size op (`#gpu<dim x>`)."""
    return _AXIS[str(op.attributes["dimension"]).rstrip(">")[-1]]


def _as_function(kernel: ir.Operation, name: str) -> None:
    """Replace a gpu.func kernel by a func.func `name` before its gpu.module, taking (block x, y, z, thread x, y, z) after its arguments."""
    index = ir.IndexType.get()
    entry = kernel.regions[0].blocks[0]
    ids = [entry.add_argument(index, ir.Location.unknown()) for _ in range(6)]
    found: list[ir.Operation] = []
    kernel.walk(lambda op: found.append(op) or ir.WalkResult.ADVANCE)
    for op in found:
        if op.name in _IDS:
            op.results[0].replace_all_uses_with(ids[_IDS[op.name] + _axis(op)])
        elif op.name in _SIZES:
            with ir.InsertionPoint(op):
                size = ir.DenseI32ArrayAttr(kernel.attributes[_SIZES[op.name]])[_axis(op)]
                op.results[0].replace_all_uses_with(arith.constant(index, size))
        elif op.name == "gpu.return":
            with ir.InsertionPoint(op):
                func.ReturnOp([])
        else:
            continue
        op.erase()
    module_op = kernel.parent
    with ir.InsertionPoint(module_op):
        function = func.FuncOp(name, ir.FunctionType.get([a.type for a in entry.arguments], []))
    entry.append_to(function.regions[0])


def _as_loops(launch: ir.Operation) -> None:
    """Replace a gpu.launch_func by loops over its grid and block calling its kernel's function."""
    view = launch.opview
    name = str(view.kernel).split("::")[0].lstrip("@")
    index = ir.IndexType.get()
    with ir.InsertionPoint(launch):
        zero, one = arith.constant(index, 0), arith.constant(index, 1)
    ids: list[ir.Value] = []
    point = ir.InsertionPoint(launch)
    for bound in (view.gridSizeZ, view.gridSizeY, view.gridSizeX, view.blockSizeZ, view.blockSizeY, view.blockSizeX):
        with point:
            loop = scf.ForOp(zero, bound, one)
        with ir.InsertionPoint(loop.body):
            scf.YieldOp([])
        point = ir.InsertionPoint.at_block_terminator(loop.body)
        ids.append(loop.induction_variable)
    bz, by, bx, tz, ty, tx = ids
    with point:
        func.CallOp([], ir.FlatSymbolRefAttr.get(name), [*view.kernelOperands, bx, by, bz, tx, ty, tz])
    launch.erase()


def host_module(text: str) -> str:
    """The `noalias` stage's module with its kernels as host functions and its launches as loops."""
    with NATIVE, ir.Context(), ir.Location.unknown():
        module = ir.Module.parse(text)
        gpu_modules = [op.operation for op in module.body.operations if op.operation.name == "gpu.module"]
        for gpu_module in gpu_modules:
            name = ir.StringAttr(gpu_module.attributes["sym_name"]).value
            for op in gpu_module.regions[0].blocks[0].operations:
                if op.operation.name == "gpu.func":
                    _as_function(op.operation, name)
        launches: list[ir.Operation] = []
        module.operation.walk(lambda op: (launches.append(op) if op.name == "gpu.launch_func" else None) or ir.WalkResult.ADVANCE)
        for launch in launches:
            _as_loops(launch)
        for gpu_module in gpu_modules:
            gpu_module.erase()
        if "gpu.container_module" in module.operation.attributes:  # (absent when nothing is launched: empty arrays)
            del module.operation.attributes["gpu.container_module"]
        return str(module)


EMULATION = Pipeline("gpu-emulation", (Passes("llvm", PASSES),))


def emulate(comp: Any, *arrays: np.ndarray) -> list[np.ndarray]:
    """Run a GPU compilation's (`et.kernel(f, target="rocdl:...").inspect(...)`) kernels on the CPU on
    `arrays` (its traced signature, C-contiguous): its outputs."""
    from ...compiler import _native

    host = host_module(comp.stage("noalias"))
    llvm_ir = lower_to_llvm_ir(run_pipeline(host, EMULATION, printed=False).final)
    module = load_llvm_ir(llvm_ir, Target.host())
    outs = [np.empty(o.shape, o.dtype) for o in comp.outputs]
    _native(module, comp.specs, comp.outputs, ())(*arrays, *outs)
    return outs
