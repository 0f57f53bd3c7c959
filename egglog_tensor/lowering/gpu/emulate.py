"""The outlined GPU kernels run on this machine's CPU, to check what a GPU target computes without a GPU.

`emulate(comp, *arrays)` takes the module of a GPU compilation's `noalias` stage: the IR that goes
to the ROCDL/NVVM conversion (tiled, mapped to blocks and threads, outlined, its math inline). Each
kernel becomes a function of its block ids (block and grid sizes the launch's constants) whose body
is split at its top-level `gpu.barrier`s into phases, each phase a loop over the block's threads
(the work-item loops of CPU OpenCL compilers): every thread finishes a phase before any starts the
next, as a barrier guarantees; a thread's values a later phase uses pass through one slot per
thread; workgroup memory is a buffer the launch allocates. Each gpu.launch_func is a loop nest over
the grid calling it; then the CPU's LLVM conversions and the JIT. It checks the tiling, fusion,
bufferization, the block/thread decomposition, partial blocks, block reductions through workgroup
memory, the outlining and the device math; not the ROCDL/NVVM conversion or the backends (ptxas and
the HSACO checks do that), nor races within a phase (threads run it one after another). A loop with
barriers in its body (a tiled matmul's k loop) stays one loop around its body's phases, its
loop-carried values through per-thread slots. A `gpu.shuffle` at a kernel's top level is a phase
boundary too (`_exchange`): each thread stores its value in a slot, and in the next phase reads its
source lane's, the lanes of a wave (the Target's size: consecutive linear thread ids) numbered from
0 and the width and out-of-range lanes as the dialect defines them. Barriers in branches or in loops
whose bounds differ per thread, shuffles elsewhere, and other subgroup operations are refused.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from collections.abc import Sequence
from typing import Any

import numpy as np
from mlir import ir
from mlir.dialects import arith, func, gpu, memref, scf

from ...cache import SYMBOL
from ...errors import UnsupportedError
from ...forked import NATIVE
from ...runtime import ArgType, NativeFunction
from ...target import Target
from ..llvm import load_llvm_ir
from ..payload import as_operation, nested_ops
from ..pipelines import Pipeline, lower_to_llvm_ir, run_pipeline
from ..stages.llvm import PASSES
from ..stages.stage import Passes
from .tile import WORKGROUP

_SIZES = {"gpu.grid_dim": "known_grid_size", "gpu.block_dim": "known_block_size"}
_AXIS = {"x": 0, "y": 1, "z": 2}
COLLECTIVES = ("gpu.barrier", "gpu.shuffle", "gpu.all_reduce", "gpu.subgroup_reduce")
_UNIFORM = ("arith.", "affine.apply", "affine.min", "affine.max", "memref.subview", "memref.expand_shape",
            "memref.collapse_shape", "memref.cast", "memref.reinterpret_cast")  # pure ops hoisted out of the thread loops
_SCALARS = (ir.IndexType, ir.IntegerType, ir.FloatType)


def _axis(op: ir.Operation) -> int:
    """The dimension (x 0, y 1, z 2) of a gpu id or size op (`#gpu<dim x>`)."""
    return _AXIS[str(op.attributes["dimension"]).rstrip(">")[-1]]


def _as_function(kernel: ir.Operation, name: str, wave: int) -> list[ir.Type]:
    """Replace a gpu.func kernel by a func.func `name` before its gpu.module, taking its arguments, then
    its workgroup buffers and the per-thread slots of its loops with barriers (`_demote`) and of its
    shuffles (`_exchange`), then (block x, y, z); its threads run inside (`_thread_loops`). Returns the
    buffers' types (the launch allocates them)."""
    index = ir.IndexType.get()
    entry = kernel.regions[0].blocks[0]
    block = list(ir.DenseI32ArrayAttr(kernel.attributes["known_block_size"]))
    for op in list(entry.operations):
        if _synchronizing(op.operation):
            _demote(op.operation, entry, block)
        elif op.operation.name == "gpu.shuffle":
            _exchange(op.operation, entry, block, wave)
    workgroup = [a.type for a in list(entry.arguments)[len(ir.FunctionType(ir.TypeAttr(kernel.attributes["function_type"]).value).inputs):]]
    ids = [entry.add_argument(index, ir.Location.unknown()) for _ in range(3)]
    for op in nested_ops(kernel):
        if op.name == "gpu.block_id":
            op.results[0].replace_all_uses_with(ids[_axis(op)])
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
    with ir.InsertionPoint(kernel.parent):
        function = func.FuncOp(name, ir.FunctionType.get([a.type for a in entry.arguments], []))
    entry.append_to(function.regions[0])
    _thread_loops(function.regions[0].blocks[0], block)
    return workgroup


@dataclass
class _Phase:
    """The ops between two top-level barriers, moved into a loop nest over the block's threads."""

    ops: list[ir.Operation]
    ivs: list[ir.Value] = field(default_factory=list)  # thread z, y, x
    linear: ir.Value | None = None  # the thread's slot: (z * block y + y) * block x + x
    end: ir.Operation | None = None  # the innermost loop's scf.yield


def _thread_loops(entry: ir.Block, block: list[int]) -> None:
    """The kernel body as phases split at its top-level gpu.barriers, each a loop nest over the block's
    threads (z, y, x); a loop with barriers in its body (its bounds the same for every thread) stays
    one loop, its body split the same way: a thread's values used in a later phase pass through a
    buffer of one slot per thread; pure ops that are the same for every thread run once before their
    level's phases. Collectives inside branches or other loops, subgroup ops, and memrefs that differ
    per thread crossing a barrier are refused."""
    uniform: list[ir.Operation] = []
    phases: list[_Phase] = []
    levels = _classify([o.operation for o in list(entry.operations)[:-1]], uniform, phases)
    _build(levels, list(entry.operations)[-1].operation, block)
    for op in [o for o in nested_ops(entry.owner) if o.name == "gpu.thread_id"]:
        for use in list(op.results[0].uses):
            use.owner.operands[use.operand_number] = phases[_phase_of(use.owner, phases)].ivs[2 - _axis(op)]
        for phase in phases:
            phase.ops = [other for other in phase.ops if other != op]
        op.erase()
    _carry(phases, block)


def _synchronizing(op: ir.Operation) -> bool:
    """Whether `op` is an scf.for with a gpu.barrier in its body (a tiled matmul's k loop)."""
    return op.name == "scf.for" and any(inner.name == "gpu.barrier" for inner in nested_ops(op))


def _classify(body: list[ir.Operation], uniform: list[ir.Operation], phases: list[_Phase]) -> list[_Phase | tuple]:
    """One level's ops as phases (appended to `phases` in program order) and (loop, its level) pairs
    for loops with barriers; barriers erased, uniform ops collected and left in place."""
    for op in body:
        nested = [inner.name for inner in nested_ops(op) if inner != op and inner.name in COLLECTIVES]
        if (nested and not _synchronizing(op)) or op.name in COLLECTIVES[1:]:
            raise UnsupportedError(f"GPU emulation: {(nested or [op.name])[0]} inside a loop or branch, or a subgroup "
                                   "operation, cannot be emulated (only gpu.barrier at a kernel's top level or in "
                                   "the body of a loop every thread runs alike, and gpu.shuffle at a kernel's top level)")
    levels: list[_Phase | tuple] = [_Phase([])]
    phases.append(levels[0])
    for op in body:
        if op.name == "gpu.barrier" or _synchronizing(op):
            if op.name == "scf.for":
                if not all(_uniform(v, uniform) for v in op.operands) or len(op.results):
                    raise UnsupportedError("GPU emulation: a loop with a gpu.barrier whose bounds differ per thread cannot be emulated")
                loop_body = op.regions[0].blocks[0]
                levels.append((op, _classify([o.operation for o in list(loop_body.operations)[:-1]], uniform, phases)))
            levels.append(_Phase([]))
            phases.append(levels[-1])
        elif op.name.startswith(_UNIFORM) and not len(op.regions) and all(_uniform(v, uniform) for v in op.operands):
            uniform.append(op)
        else:
            levels[-1].ops.append(op)
    for op in body:
        if op.name == "gpu.barrier":
            op.erase()
    return levels


def _build(levels: list[_Phase | tuple], terminator: ir.Operation, block: list[int]) -> None:
    """Each phase of a level a loop nest over the block's threads before `terminator`, its ops moved in;
    each loop with barriers moved there too, its own level built inside it."""
    index = ir.IndexType.get()
    with ir.Location.unknown():
        for level in levels:
            if isinstance(level, tuple):
                loop, inner = level
                loop.move_before(terminator)
                _build(inner, list(loop.regions[0].blocks[0].operations)[-1].operation, block)
                continue
            point = ir.InsertionPoint(terminator)
            for extent in reversed(block):
                with point:
                    thread_loop = scf.ForOp(arith.constant(index, 0), arith.constant(index, extent), arith.constant(index, 1))
                with ir.InsertionPoint(thread_loop.body):
                    level.end = scf.YieldOp([]).operation
                point = ir.InsertionPoint(level.end)
                level.ivs.append(thread_loop.induction_variable)
            tz, ty, tx = level.ivs
            with point:
                level.linear = arith.addi(arith.muli(arith.addi(arith.muli(tz, arith.constant(index, block[1])), ty),
                                                     arith.constant(index, block[0])), tx)
            for op in level.ops:
                op.move_before(level.end)


def _linear(block: list[int]) -> ir.Value:
    """The thread's linear id in its block, from gpu.thread_id (replaced by the phases' loop ivs later)."""
    index = ir.IndexType.get()
    x, y, z = (gpu.ThreadIdOp(dim).result for dim in (gpu.Dimension.x, gpu.Dimension.y, gpu.Dimension.z))
    return arith.addi(arith.muli(arith.addi(arith.muli(z, arith.constant(index, block[1])), y), arith.constant(index, block[0])), x)


def _demote(loop: ir.Operation, entry: ir.Block, block: list[int]) -> None:
    """A loop with barriers in its body rebuilt without loop-carried values: each goes through a
    per-thread slot buffer, a new argument of the kernel (the launch allocates it as it does
    workgroup memory), stored before the loop and at each iteration's end, loaded at each
    iteration's start and after the loop; loops with barriers in its body likewise."""
    view = loop.opview
    slots = [entry.add_argument(ir.MemRefType.get([math.prod(block)], r.type), ir.Location.unknown()) for r in loop.results]
    with ir.InsertionPoint(loop), ir.Location.unknown():
        linear = _linear(block)
        for slot, value in zip(slots, view.initArgs, strict=True):
            memref.StoreOp(value, slot, [linear])
        rebuilt = scf.ForOp(view.lowerBound, view.upperBound, view.step)
        with ir.InsertionPoint(rebuilt.body):
            end = scf.YieldOp([])
        with ir.InsertionPoint(end):
            linear = _linear(block)
            for slot, carried in zip(slots, view.inner_iter_args, strict=True):
                carried.replace_all_uses_with(memref.LoadOp(slot, [linear]).result)
        view.induction_variable.replace_all_uses_with(rebuilt.induction_variable)
        old_yield = list(view.body.operations)[-1].operation
        for op in list(view.body.operations)[:-1]:
            op.operation.move_before(end)
        with ir.InsertionPoint(end):
            linear = _linear(block)
            for slot, value in zip(slots, old_yield.operands, strict=True):
                memref.StoreOp(value, slot, [linear])
        with ir.InsertionPoint(loop):
            linear = _linear(block)
            for slot, result in zip(slots, loop.results, strict=True):
                result.replace_all_uses_with(memref.LoadOp(slot, [linear]).result)
    loop.erase()
    for op in list(rebuilt.body.operations):
        if _synchronizing(op.operation):
            _demote(op.operation, entry, block)


def _exchange(shuffle: ir.Operation, entry: ir.Block, block: list[int], wave: int) -> None:
    """A top-level gpu.shuffle as a store of each thread's value into a per-thread slot (a new kernel
    argument), a gpu.barrier, and a load of its source lane's slot. Lane k of a wave reads lane k ^ offset
    (xor), k + offset (down), k - offset (up) or offset (idx); valid when k and the source are both below
    the width (at most the wave), else the result is the thread's own value (the dialect leaves it
    unspecified; both backends give that) and valid is false."""
    i32, index = ir.IntegerType.get_signless(32), ir.IndexType.get()
    value, offset, width = shuffle.operands
    mode = str(shuffle.attributes["mode"]).rstrip(">").split()[-1]  # (#gpu<shuffle_mode xor>)
    known = as_operation(width.owner)
    if known is None or known.name != "arith.constant" or not 0 < ir.IntegerAttr(known.attributes["value"]).value <= wave:
        raise UnsupportedError(f"GPU emulation: a gpu.shuffle's width must be a constant from 1 to the wave size ({wave})")
    slot = entry.add_argument(ir.MemRefType.get([math.prod(block)], value.type), ir.Location.unknown())
    with ir.InsertionPoint(shuffle), ir.Location.unknown():
        memref.StoreOp(value, slot, [_linear(block)])
        gpu.BarrierOp()
        linear = _linear(block)
        lane = arith.index_cast(i32, arith.remui(linear, arith.constant(index, wave)))
        source = {"xor": lambda: arith.xori(lane, offset), "down": lambda: arith.addi(lane, offset),
                  "up": lambda: arith.subi(lane, offset), "idx": lambda: offset}[mode]()
        inside = arith.andi(arith.cmpi(arith.CmpIPredicate.ult, lane, width), arith.cmpi(arith.CmpIPredicate.ult, source, width))
        moved = arith.addi(linear, arith.index_cast(index, arith.subi(source, lane)))
        result = memref.LoadOp(slot, [arith.select(inside, moved, linear)]).result
    shuffle.results[0].replace_all_uses_with(result)
    shuffle.results[1].replace_all_uses_with(inside)
    shuffle.erase()


def _uniform(value: ir.Value, uniform: list[ir.Operation]) -> bool:
    """Whether `value` is the same for every thread: a block argument or a hoisted op's result."""
    owner = as_operation(value.owner)
    return owner is None or any(owner == op for op in uniform)


def _phase_of(op: ir.Operation, phases: list[_Phase]) -> int:
    """The phase an op is in (through its top-level ancestor in the phase)."""
    while True:
        for k, phase in enumerate(phases):
            if any(op == other for other in phase.ops):
                return k
        op = op.parent


def _carry(phases: list[_Phase], block: list[int]) -> None:
    """Values one phase computes and a later one uses: stored per thread after the phase's ops, loaded before the later phase's."""
    first_loop = phases[0].ivs[0].owner.owner
    for k, phase in enumerate(phases):
        for op in phase.ops:
            for value in op.results:
                uses = [(use.owner, use.operand_number, _phase_of(use.owner, phases)) for use in value.uses]
                later = sorted({phase_of for _, _, phase_of in uses} - {k})
                if not later:
                    continue
                if not isinstance(value.type, _SCALARS):
                    raise UnsupportedError(f"GPU emulation: a {value.type} value that differs per thread crosses a gpu.barrier; "
                                           "it cannot be emulated")
                flag = value.type == ir.IntegerType.get_signless(1)  # (an i1 slot is an i8: memrefs of i1 do not lower)
                with ir.Location.unknown():
                    with ir.InsertionPoint(first_loop):
                        slot_type = ir.IntegerType.get_signless(8) if flag else value.type
                        slots = memref.AllocaOp(ir.MemRefType.get([math.prod(block)], slot_type), [], []).result
                    with ir.InsertionPoint(phase.end):
                        widened = arith.extui(slot_type, value) if flag else value
                        memref.StoreOp(widened, slots, [phase.linear])
                    for j in later:
                        with ir.InsertionPoint(phases[j].ops[0]):
                            loaded = memref.LoadOp(slots, [phases[j].linear]).result
                            if flag:
                                loaded = arith.trunci(value.type, loaded)
                        for owner, number, phase_of in uses:
                            if phase_of == j:
                                owner.operands[number] = loaded


def _kernel_name(launch: ir.Operation) -> str:
    """The gpu.module a gpu.launch_func launches (its kernel's function here)."""
    return str(launch.opview.kernel).split("::")[0].lstrip("@")


def _as_loops(launch: ir.Operation, workgroup: list[ir.Type]) -> None:
    """Replace a gpu.launch_func by loops over its grid calling its kernel's function (which runs the
    block's threads), with its workgroup buffers allocated once (blocks run one after another)."""
    view = launch.opview
    name = _kernel_name(launch)
    index = ir.IndexType.get()
    with ir.InsertionPoint(launch):
        zero, one = arith.constant(index, 0), arith.constant(index, 1)
        buffers = [memref.AllocaOp(t, [], []).result for t in workgroup]
    ids: list[ir.Value] = []
    point = ir.InsertionPoint(launch)
    for bound in (view.gridSizeZ, view.gridSizeY, view.gridSizeX):
        with point:
            loop = scf.ForOp(zero, bound, one)
        with ir.InsertionPoint(loop.body):
            scf.YieldOp([])
        point = ir.InsertionPoint.at_block_terminator(loop.body)
        ids.append(loop.induction_variable)
    bz, by, bx = ids
    with point:
        func.CallOp([], ir.FlatSymbolRefAttr.get(name), [*view.kernelOperands, *buffers, bx, by, bz])
    launch.erase()


def host_module(text: str, wave: int) -> str:
    """The `noalias` stage's module with its kernels as host functions (shuffling among waves of `wave` lanes) and its launches as loops."""
    with NATIVE, ir.Context(), ir.Location.unknown():
        module = ir.Module.parse(text)
        gpu_modules = [op.operation for op in module.body.operations if op.operation.name == "gpu.module"]
        workgroups: dict[str, list[ir.Type]] = {}
        for gpu_module in gpu_modules:
            name = ir.StringAttr(gpu_module.attributes["sym_name"]).value
            for op in gpu_module.regions[0].blocks[0].operations:
                if op.operation.name == "gpu.func":
                    workgroups[name] = _as_function(op.operation, name, wave)
        for launch in [op for op in nested_ops(module.operation) if op.name == "gpu.launch_func"]:
            _as_loops(launch, workgroups[_kernel_name(launch)])
        for gpu_module in gpu_modules:
            gpu_module.erase()
        if "gpu.container_module" in module.operation.attributes:  # (absent when nothing is launched: empty arrays)
            del module.operation.attributes["gpu.container_module"]
        return str(module).replace(f", {WORKGROUP}", "")  # (workgroup buffers: host memory here)


EMULATION = Pipeline("gpu-emulation", (Passes("llvm", PASSES),))


def emulate(comp: Any, *arrays: np.ndarray) -> list[np.ndarray]:
    """Run a GPU compilation's (`et.kernel(f, target="rocdl:...").inspect(...)`) kernels on the CPU on
    `arrays` (its traced signature: C-contiguous where its specs say C, else any strides): its outputs."""
    outs = [np.empty(o.shape, o.dtype) for o in comp.outputs]
    run_emulated(comp.stage("noalias"), comp.options.target.device.wave, arrays, outs, [s.layout == "C" for s in comp.specs])
    return outs


def run_emulated(text: str, wave: int, arrays: Sequence[np.ndarray], outs: Sequence[np.ndarray],
                 contiguous: Sequence[bool] | None = None) -> None:
    """Run a `noalias`-stage module's kernels (launched by its @kernel, waves of `wave` lanes) on the CPU:
    `arrays` its inputs (C-contiguous, or as `contiguous` says: a Fortran-order argument is read through its
    strides), `outs` the outputs it writes."""
    host = host_module(text, wave)
    llvm_ir = lower_to_llvm_ir(run_pipeline(host, EMULATION, printed=False).final)
    module = load_llvm_ir(llvm_ir, Target.host())
    contiguous = [True] * len(arrays) if contiguous is None else contiguous
    types = [ArgType(a.dtype, a.shape, contiguous=c) for a, c in zip(arrays, contiguous, strict=True)] + \
        [ArgType(o.dtype, o.shape, contiguous=True, writable=True) for o in outs]
    NativeFunction(module.address(SYMBOL), types, owner=module)(*arrays, *outs)
