"""The gpu-reduce stage: a reduction over a long contiguous axis split across a block of threads.

A linalg reduction whose innermost loop is a reduction, whose body folds each element into the
accumulator with one combining op (sum, product, max, min, and/or/xor: `IDENTITIES`) and whose
rows are long (`reduction_plan`) is not tiled by gpu-tile; after bufferization it becomes one
block per output element (its parallel loops over the grid's x, y, z). Each thread folds a strided
partial (elements tid, tid + T, tid + 2T, ... of the row, in order, from the combiner's identity);
shuffles (`gpu.shuffle xor`, offsets W/2, ..., 1 for the Target's wave of W lanes) combine each
wave's partials, lane 0 of each wave writes its value to workgroup memory, and after one
`gpu.barrier` shuffles combine the T/W waves' values; thread 0 combines the block's value with the
output's initial value (its fill, folded in, or what an earlier kernel wrote). A long reduction to
one value is two launches: a grid of blocks each reducing a chunk of the outermost loop into a
partial, then one block reducing the partials (deterministic: no atomics). The workgroup buffer
is a `memref.alloc` in the workgroup address space here, a kernel's workgroup attribution after
outlining (`launch.workgroup_attributions`).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import ClassVar

from mlir import ir
from mlir.dialects import affine, arith, gpu, memref, scf

from ...target import Device
from ..payload import as_operation, in_forall, indexing_maps, linalg_ops, loop_extents, nested_ops
from ..stages.stage import Stage
from .tile import BLOCK_AXES, GRID_YZ, THREADS, WORKGROUP, loop_kinds, mark_launches

GRID_X = 2**31 - 1
FLOAT_IDENTITIES = {"arith.addf": -0.0, "arith.mulf": 1.0, "arith.maximumf": -math.inf, "arith.minimumf": math.inf,
                    "arith.maxnumf": -math.inf, "arith.minnumf": math.inf}
INT_IDENTITIES = {"arith.addi": lambda w: 0, "arith.muli": lambda w: 1, "arith.ori": lambda w: 0, "arith.xori": lambda w: 0,
                  "arith.andi": lambda w: -1, "arith.maxsi": lambda w: -(1 << (w - 1)), "arith.minsi": lambda w: (1 << (w - 1)) - 1,
                  "arith.maxui": lambda w: 0, "arith.minui": lambda w: -1}
IDENTITIES = {*FLOAT_IDENTITIES, *INT_IDENTITIES}
VIEWS = ("arith.constant", "memref.alloc", "memref.subview", "memref.expand_shape", "memref.collapse_shape", "memref.cast")  # (no work)
MAX_THREADS = 256
GENERALIZED = ("linalg.dot", "linalg.matvec")  # named ops gpu-tile generalizes for a block split (a sum of products along rows)
PER_THREAD = 8  # elements each thread of a full reduction's first launch folds, at least (fewer blocks beyond `units` x 4)


def combiner(op: ir.Operation) -> ir.Operation | None:
    """The op of a one-output linalg.generic's body that folds an element into the accumulator
    (`out + f(in)`), when it is one of `IDENTITIES` and the accumulator is used nowhere else."""
    if op.name != "linalg.generic" or len(op.opview.outputs) != 1:
        return None
    body = op.regions[0].blocks[0]
    if any(o.operation.name == "linalg.index" for o in body.operations):
        return None
    acc = body.arguments[len(body.arguments) - 1]
    uses = list(acc.uses)
    yielded = as_operation(list(body.operations)[-1].operands[0].owner)
    if len(uses) != 1 or yielded is None or uses[0].owner != yielded or yielded.name not in IDENTITIES:
        return None
    return yielded if sum(v == acc for v in yielded.operands) == 1 else None


@dataclass(frozen=True)
class BlockReduce:
    """How a reduction is split: `threads` per block (a power of two, whole waves of `wave` lanes), its
    parallel loops one output element per block; `blocks` > 1 for a reduction to one value in two launches."""

    threads: int
    wave: int
    parallel: tuple[int, ...]
    blocks: int = 1


def reduction_plan(op: ir.Operation, device: Device) -> BlockReduce | None:
    """The block split of a linalg op, or None where one thread per output element stays: rows
    shorter than a wave when there are enough of them (units x wave) to fill the device with one
    thread each (a block per short row would idle most of its threads), a reduction that is not the
    innermost loop (then threads over the parallel innermost loop read contiguously), a body without
    a recognized combining op, or more parallel loops than grid dimensions."""
    if op.name in GENERALIZED:
        kinds = loop_kinds(op)
    elif combiner(op) is None or not _writes_every_output(op):
        return None
    else:
        kinds = loop_kinds(op)
    if not kinds.endswith("r"):
        return None
    extents = loop_extents(op)
    parallel = tuple(i for i, kind in enumerate(kinds) if kind == "p")
    grid = [extents[i] for i in parallel]
    if len(grid) > 3 or any(n > GRID_YZ for n in grid[:-1]) or (grid and grid[-1] > GRID_X):
        return None
    row = extents[-1]
    if row < device.wave and math.prod(grid) >= device.units * device.wave:
        return None
    threads = block_threads(row, device)
    blocks = 1
    if not parallel and math.prod(extents) > threads * PER_THREAD:
        blocks = min(-(-math.prod(extents) // (threads * PER_THREAD)), device.units * 4, extents[0])  # (chunks of the outermost loop)
    return BlockReduce(threads, device.wave, parallel, blocks)


def block_threads(row: int, device: Device) -> int:
    """The threads of a block reducing a row of `row` elements: the row rounded up to a power of two, whole waves, at most 256."""
    return min(MAX_THREADS, max(device.wave, 1 << max(row - 1, 1).bit_length()))


def _writes_every_output(op: ir.Operation) -> bool:
    """Whether the output map is the parallel loops in order (each block writes its own element)."""
    maps = indexing_maps(op)
    kinds = loop_kinds(op)
    out = maps[-1] if maps else None
    return out is not None and [e.position if isinstance(e, ir.AffineDimExpr) else -1 for e in out.results] == \
        [i for i, kind in enumerate(kinds) if kind == "p"]


def identity(like: ir.Operation) -> ir.Value:
    """The combining op's identity as a constant of the accumulator's type."""
    name, element = like.name, like.results[0].type
    if name in FLOAT_IDENTITIES:
        return arith.constant(element, FLOAT_IDENTITIES[name])
    return arith.constant(element, ir.IntegerAttr.get(element, INT_IDENTITIES[name](ir.IntegerType(element).width)))


def combine(like: ir.Operation, a: ir.Value, b: ir.Value) -> ir.Value:
    """`like`'s op (with its attributes: fast-math flags) on a and b."""
    attributes = {name: like.attributes[name] for name in like.attributes}
    return ir.Operation.create(like.name, results=[a.type], operands=[a, b], attributes=attributes).results[0]


def index_constant(value: int) -> ir.Value:
    return arith.constant(ir.IndexType.get(), value)


def block_forall(extents: list[int], threads: int) -> scf.ForallOp:
    """A block-level forall over `extents` (innermost on the grid's x), marked with its block's threads."""
    axes = [BLOCK_AXES[len(extents) - 1 - k] for k in range(len(extents))]
    mapping = ir.ArrayAttr.get([ir.Attribute.parse(f"#gpu.block<{axis}>") for axis in axes])
    forall = scf.ForallOp([0] * len(extents), extents, [1] * len(extents), mapping=mapping)
    forall.operation.attributes[THREADS] = ir.IntegerAttr.get(ir.IntegerType.get_signless(64), threads)
    with ir.InsertionPoint(forall.body):
        scf.InParallelOp()
    return forall


def _fold(loops: list[tuple[ir.Value, ir.Value, ir.Value]], acc: ir.Value,
          element: Callable[[list[ir.Value], ir.Value], ir.Value], ivs: tuple[ir.Value, ...] = ()) -> ir.Value:
    """Nested scf.for over `loops` (lower, upper, step) carrying `acc`; `element(ivs, acc)` the new accumulator."""
    lower, upper, step = loops[0]
    loop = scf.ForOp(lower, upper, step, [acc])
    with ir.InsertionPoint(loop.body):
        inner = (*ivs, loop.induction_variable)
        folded = element(list(inner), loop.inner_iter_args[0]) if len(loops) == 1 else \
            _fold(loops[1:], loop.inner_iter_args[0], element, inner)
        scf.YieldOp([folded])
    return loop.results[0]


def block_reduce(threads: int, wave: int, like: ir.Operation, bounds: list[tuple[ir.Value, ir.Value]],
                 element: Callable[[list[ir.Value], ir.Value], ir.Value], store: Callable[[ir.Value], None]) -> ir.Value:
    """Each thread folds the elements of loops over `bounds` (lower, upper), the innermost's from
    lower + tid by `threads`, from the identity; shuffles combine the partials of each wave of
    `wave` lanes, lane 0 of each wave writes its value to workgroup memory, and after one barrier
    every wave combines those by shuffles again; then thread 0 `store`s the block's value. Returns
    the block's value, which every thread holds."""
    tid = gpu.ThreadIdOp(gpu.Dimension.x).result
    *outer, (lower, upper) = bounds
    loops = [(lo, hi, index_constant(1)) for lo, hi in outer] + [(arith.addi(lower, tid), upper, index_constant(threads))]
    return block_combine(threads, wave, like, _fold(loops, identity(like), element), store)


def block_combine(threads: int, wave: int, like: ir.Operation, partial: ir.Value, store: Callable[[ir.Value], None]) -> ir.Value:
    """Each thread's `partial` combined over the block (block_reduce's shuffles, workgroup slots and barrier);
    thread 0 `store`s the block's value, which every thread holds and which is returned."""
    element_type = like.results[0].type
    tid = gpu.ThreadIdOp(gpu.Dimension.x).result
    value = wave_reduce(like, partial, wave, wave)
    waves = threads // wave
    if waves > 1:
        shared = memref.AllocOp(ir.MemRefType.get([waves], element_type, memory_space=ir.Attribute.parse(WORKGROUP)), [], []).result
        lane = arith.remui(tid, index_constant(wave))
        first = scf.IfOp(arith.cmpi(arith.CmpIPredicate.eq, lane, index_constant(0)))
        with ir.InsertionPoint(first.then_block):
            memref.StoreOp(value, shared, [arith.divui(tid, index_constant(wave))])
            scf.YieldOp([])
        gpu.BarrierOp()
        mine = memref.LoadOp(shared, [arith.remui(tid, index_constant(waves))]).result  # (lane l holds wave l mod waves's value)
        value = wave_reduce(like, mine, waves, wave)
    branch = scf.IfOp(arith.cmpi(arith.CmpIPredicate.eq, tid, index_constant(0)))
    with ir.InsertionPoint(branch.then_block):
        store(value)
        scf.YieldOp([])
    return value


def wave_reduce(like: ir.Operation, value: ir.Value, lanes: int, wave: int) -> ir.Value:
    """`value` combined over each aligned group of `lanes` lanes (a power of two, at most `wave`) by a
    butterfly of `gpu.shuffle xor` (offsets lanes/2, ..., 1): every lane of a group ends with its value."""
    width = arith.constant(ir.IntegerType.get_signless(32), wave)
    offset = lanes // 2
    while offset:
        value = combine(like, value, shuffle_xor(value, offset, width))
        offset //= 2
    return value


def shuffle_xor(value: ir.Value, offset: int, width: ir.Value) -> ir.Value:
    """The value of lane (this lane ^ `offset`); types narrower than 32 bits through an i32 (NVVM
    shuffles only 32-bit values; 64-bit ones it splits in two)."""
    i32 = ir.IntegerType.get_signless(32)
    bits = value.type.width
    offset_value = arith.constant(i32, offset)
    if bits >= 32:
        return gpu.ShuffleOp(value, offset_value, width, gpu.ShuffleMode.XOR).results[0]
    integer = ir.IntegerType.get_signless(bits)
    raw = value if isinstance(value.type, ir.IntegerType) else arith.bitcast(integer, value)
    moved = gpu.ShuffleOp(arith.extui(i32, raw), offset_value, width, gpu.ShuffleMode.XOR).results[0]
    narrow = arith.trunci(integer, moved)
    return narrow if isinstance(value.type, ir.IntegerType) else arith.bitcast(value.type, narrow)


def folded_fill(op: ir.Operation, out: ir.Value) -> ir.Value | None:
    """The scalar of the linalg.fill of `out` before `op` (erased: the reduction writes every element
    of `out` starting from it), when nothing between them touches `out`'s buffer; None when `out`
    holds what an earlier kernel wrote."""
    fill = _fill_before(op, out)
    if fill is None:
        return None
    scalar = fill.operands[0]
    fill.erase()
    return scalar


def _fill_before(op: ir.Operation, out: ir.Value) -> ir.Operation | None:
    """The linalg.fill of `out` before `op` with nothing between them touching `out`'s buffer, if any."""
    before = [o.operation for o in op.block.operations]
    buffer = base_buffer(out)
    for cursor in reversed(before[:before.index(op)]):
        if cursor.name == "linalg.fill" and cursor.operands[1] == out:
            return cursor
        if cursor.name not in VIEWS and any(base_buffer(v) == buffer for inner in nested_ops(cursor) for v in inner.operands):
            return None
    return None


def base_buffer(value: ir.Value) -> ir.Value:
    """The buffer a memref value views (through subviews, reshapes and casts)."""
    owner = as_operation(value.owner)
    while owner is not None and owner.name in VIEWS[2:]:
        value = owner.operands[0]
        owner = as_operation(value.owner)
    return value


def apply_map(amap: ir.AffineMap, ivs: list[ir.Value]) -> list[ir.Value]:
    """The indices `amap` gives for loop ivs `ivs` (one affine.apply per result)."""
    return [affine.apply(ir.AffineMap.get(amap.n_dims, amap.n_symbols, [expr]), ivs) for expr in amap.results]


def clone_body(body: ir.Block, args: list[ir.Value]) -> list[ir.Value]:
    """A linalg body's ops cloned at the insertion point with its arguments `args` (the body stays): the yielded values."""
    values: list[tuple[ir.Value, ir.Value]] = list(zip(body.arguments, args, strict=True))
    operations = list(body.operations)
    for original in operations[:-1]:
        clone = original.operation.clone()
        for i, operand in enumerate(clone.operands):
            for old, new in values:
                if old == operand:
                    clone.operands[i] = new
                    break
        values += list(zip(original.operation.results, clone.results, strict=True))
    return [next((new for old, new in values if old == yielded), yielded) for yielded in operations[-1].operands]


def inline_body(op: ir.Operation, ivs: list[ir.Value], acc: ir.Value | None = None,
                load: Callable[[ir.Value, list[ir.Value]], ir.Value] | None = None) -> list[ir.Value]:
    """`op`'s body moved to the insertion point (once) at loop ivs `ivs`: each operand its body reads
    loaded through its indexing map (`load(buffer, indices)`, a memref.load by default), the
    accumulator `acc` for a reduction's output argument; returns the values it yields."""
    view = op.opview
    body = op.regions[0].blocks[0]
    operands = [*view.inputs, *view.outputs]
    for position, (arg, value, amap) in enumerate(zip(body.arguments, operands, indexing_maps(op), strict=True)):
        if acc is not None and position == len(operands) - 1:
            arg.replace_all_uses_with(acc)
        elif not isinstance(value.type, ir.MemRefType):
            arg.replace_all_uses_with(value)
        elif list(arg.uses):
            indices = apply_map(amap, ivs)
            arg.replace_all_uses_with(load(value, indices) if load else memref.LoadOp(value, indices).result)
    point = ir.InsertionPoint.current
    *moved, yielded = list(body.operations)
    for inner in moved:
        inner.operation.detach_from_parent()
        point.insert(inner.operation)
    return list(yielded.operands)


def split_reduction(op: ir.Operation, plan: BlockReduce) -> None:
    """Replace a bufferized linalg.generic reduction by the block-split launches of `plan` (see the module docstring)."""
    out = op.opview.outputs[0]
    like = combiner(op)
    extents = loop_extents(op)
    reduced = [i for i in range(len(extents)) if i not in plan.parallel]
    with ir.InsertionPoint(op), op.location:
        init = folded_fill(op, out)

        def finish(where: list[ir.Value]) -> Callable[[ir.Value], None]:
            """Thread 0's store of the block's value into the output element `where` (the parallel ivs: the output map)."""
            def store(value: ir.Value) -> None:
                start = init if init is not None else memref.LoadOp(out, where).result
                memref.StoreOp(combine(like, start, value), out, where)
            return store

        def element(parallel_ivs: list[ir.Value]) -> Callable[[list[ir.Value], ir.Value], ir.Value]:
            """The op's body moved into a thread's innermost loop (once): its inputs loaded at the loops' ivs, folded into `acc`."""
            def fold(reduction_ivs: list[ir.Value], acc: ir.Value) -> ir.Value:
                ivs = [None] * len(extents)
                for i, v in zip(plan.parallel, parallel_ivs, strict=True):
                    ivs[i] = v
                for i, v in zip(reduced, reduction_ivs, strict=True):
                    ivs[i] = v
                inline_body(op, ivs, acc)
                return like.results[0]
            return fold

        full = [(index_constant(0), index_constant(extents[i])) for i in reduced]
        if plan.blocks == 1:
            forall = block_forall([extents[i] for i in plan.parallel], plan.threads) if plan.parallel else block_forall([1], plan.threads)
            with ir.InsertionPoint(forall.body.operations[0]):
                ivs = list(forall.induction_variables) if plan.parallel else []
                block_reduce(plan.threads, plan.wave, like, full, element(ivs), finish(ivs))
        else:  # the outermost reduction loop cut into a chunk per block of the first launch
            element_type = like.results[0].type
            partials = memref.AllocOp(ir.MemRefType.get([plan.blocks], element_type), [], []).result
            chunk = -(-extents[0] // plan.blocks)
            first = block_forall([plan.blocks], plan.threads)
            with ir.InsertionPoint(first.body.operations[0]):
                block = first.induction_variables[0]
                lower = arith.muli(block, index_constant(chunk))
                upper = arith.minui(arith.addi(lower, index_constant(chunk)), index_constant(extents[0]))

                def partial(value: ir.Value) -> None:
                    memref.StoreOp(value, partials, [block])

                block_reduce(plan.threads, plan.wave, like, [(lower, upper), *full[1:]], element([]), partial)
            second = block_forall([1], plan.threads)
            with ir.InsertionPoint(second.body.operations[0]):
                block_reduce(plan.threads, plan.wave, like, [(index_constant(0), index_constant(plan.blocks))],
                              lambda ivs, acc: combine(like, acc, memref.LoadOp(partials, ivs).result), finish([]))
    op.erase()


@dataclass(frozen=True)
class GpuReduce(Stage):
    """Matmuls tiled through workgroup memory (matmul.py), reductions over long rows split across
    blocks (`reduction_plan`), ops without loops in a one-thread launch, then every block-level
    forall numbered for gpu-map."""

    device: Device
    name: ClassVar[str] = "gpu-reduce"

    def rewrite(self, module: ir.Module) -> None:
        from .matmul import matmul_plan, tile_matmul
        from .rows import fuse_row_groups

        fuse_row_groups(module, self.device)
        for op in linalg_ops(module):
            if op.name != "linalg.generic" or in_forall(op):
                continue
            if (tiled := matmul_plan(op, self.device)) is not None:
                tile_matmul(op, tiled)
            elif (plan := reduction_plan(op, self.device)) is not None:
                split_reduction(op, plan)
            elif scalar(op):  # one thread computes it (its outputs' fills too)
                with ir.InsertionPoint(op), op.location:
                    forall = block_forall([1], 1)
                fills = [f for out in op.opview.outputs if (f := _fill_before(op, out)) is not None]
                end = forall.body.operations[0]
                for moved in [*fills, op]:
                    moved.move_before(end)
        mark_launches(module)


def scalar(op: ir.Operation) -> bool:
    """Whether a linalg op has no parallel loop: a rank-0 elementwise op (e.g. on two full reductions'
    results), or, where reduction_plan does not split it across a block, a reduction to one value of
    another body (np.any, np.all, the last step of a flattened argmax): one thread's kernel."""
    return op.name == "linalg.generic" and "p" not in loop_kinds(op)

