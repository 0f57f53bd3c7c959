"""Fused row kernels: softmax's and layernorm's reductions and normalization as one launch, a block per row.

A run of linalg ops over the same rows (their leading parallel loops, extents `rows`) and row length
n (their next loop), at least one of them a reduction over the row that gpu-reduce would split
across a block (`reduction_plan`), the others elementwise over (rows, n) or over the rows alone,
each reading what an earlier one wrote only at its own row, is a row group (`row_groups`, found on
tensors by gpu-tile, which marks its ops `et.row_group` and leaves them untiled). gpu-reduce makes
each group one block-level forall over the rows (`fuse_row_groups`): in one block of T threads
(`block_threads` of n) the ops run in order, a `gpu.barrier` between two: a reduction as
gpu-reduce's block reduction (thread 0 writes the row's value), an elementwise op over the row by
thread t at columns t, t + T, ..., one over the rows alone by thread 0. An input that two or more
ops read along the whole row is staged: the first reader stores each element it loads into
workgroup memory (one row, when it fits `STAGE_BYTES`), later readers load it from there, so the
row is read from global memory once; a longer row is read by each op. A row of 32-bit elements that is
at most REGISTER_ELEMENTS columns a thread, read only at each thread's own columns, is kept in
registers instead: each op runs a thread's columns one after another (`_columns`), its first reader
loading each once. A reduction's value (from its
fill) is one every thread holds after the block reduction: later ops use it from registers, not
reloaded from the output thread 0 wrote. The barrier between two ops is kept only where the later
one touches memory another thread touched in an earlier op, one of them writing (`_crosses`): a
value over the rows alone, a reduction's output read from memory, a row read at other columns.
"""

from __future__ import annotations

from collections.abc import Callable

from mlir import ir
from mlir.dialects import arith, gpu, memref, scf

from ...target import Device
from ..payload import indexing_maps, linalg_ops, loop_extents
from .reduce import (apply_map, base_buffer, block_combine, block_forall, block_reduce, block_threads, clone_body, combine, combiner, folded_fill,
                     identity, index_constant, inline_body, reduction_plan)
from .tile import WORKGROUP, loop_kinds

ROW_GROUP = "et.row_group"  # on each linalg op of a row group (gpu-tile), its group's number
REGISTER_ELEMENTS = 8  # a staged row's columns a thread may keep in registers instead (n <= 8 threads)
# Rows kept in registers are of 32-bit elements at most: float64 ones stay staged (a float64 layernorm of one row of
# 1000 kept in registers made ptxas spill 8 bytes at 40 registers on sm_90; 33 rows did not: unexplained).
REGISTER_BITS = 32
STAGE_BYTES = 40 * 1024  # workgroup memory for staged rows per block (with a reduction's slot per wave: under NVIDIA's 48 KiB of static shared memory)


def _shape(op: ir.Operation) -> tuple[tuple[int, ...], int, str] | None:
    """(rows, n, role) of a linalg.generic that may join a row group, role "reduce" (its last loop
    reduces the row with a block split), "row" (elementwise over rows and n) or "scalar" (elementwise
    over the rows: the leading parallel loops of its group; n is then unknown, -1)."""
    if op.name != "linalg.generic":
        return None
    kinds, extents = loop_kinds(op), loop_extents(op)
    if kinds.endswith("r"):
        if kinds.count("r") != 1 or not extents:
            return None
        return tuple(extents[:-1]), extents[-1], "reduce"
    if not kinds:
        return None
    return tuple(extents[:-1]), extents[-1], "row"


def _row_aligned(op: ir.Operation, produced: set[ir.Value], rows: tuple[int, ...]) -> bool:
    """Whether `op` reads each value an earlier op of its group produced only at its own row (the
    map's first results the row loops in order, or 0 for a row loop of extent 1)."""
    for value, amap in zip(op.operands, indexing_maps(op), strict=True):
        if value in produced and not (len(amap.results) >= len(rows) and all(
                isinstance(e, ir.AffineDimExpr) and e.position == i or
                isinstance(e, ir.AffineConstantExpr) and e.value == 0 and rows[i] == 1 for i, e in enumerate(amap.results[:len(rows)]))):
            return False
    return True


def row_groups(ops: list[ir.Operation], device: Device) -> list[list[ir.Operation]]:
    """The row groups among linalg ops on tensors, in order (see the module docstring); fills are in no group."""
    groups: list[list[ir.Operation]] = []
    group: list[tuple[ir.Operation, str]] = []
    key: tuple[tuple[int, ...], int] | None = None
    produced: set[ir.Value] = set()

    def blocked(op: ir.Operation, shape: tuple[tuple[int, ...], int, str]) -> bool:
        """Whether `op` is a reduction gpu-reduce splits one block per row."""
        plan = reduction_plan(op, device) if shape[2] == "reduce" else None
        return plan is not None and plan.blocks == 1 and plan.parallel == tuple(range(len(shape[0])))

    for op in ops:
        if op.name == "linalg.fill":
            continue
        shape = _shape(op)
        if key is not None and shape is not None and _row_aligned(op, produced, key[0]):
            if shape[:2] == key and (shape[2] == "row" or blocked(op, shape)):
                role = shape[2]
            elif shape[2] == "row" and (*shape[0], shape[1]) == key[0]:
                role = "scalar"  # over the rows alone (thread 0 of each block)
            else:
                role = ""
            if role:
                group.append((op, role))
                produced.update([*op.results, *op.opview.outputs])
                continue
        _close(group, groups)
        group, key, produced = [], None, set()
        if shape is not None and blocked(op, shape):
            group, key = [(op, "reduce")], shape[:2]
            produced.update([*op.results, *op.opview.outputs])
    _close(group, groups)
    return groups


def _close(group: list[tuple[ir.Operation, str]], groups: list[list[ir.Operation]]) -> None:
    """Append `group`'s ops to `groups` when two or more remain without its trailing ops over the rows alone (each its own kernel)."""
    while group and group[-1][1] == "scalar":
        group.pop()
    if len(group) > 1:
        groups.append([op for op, _ in group])


def mark_row_groups(module: ir.Module, device: Device) -> set[ir.Operation]:
    """Mark the ops of each row group of `module` (on tensors) with its number; return them."""
    i64 = ir.IntegerType.get_signless(64)
    marked: set[ir.Operation] = set()
    for number, group in enumerate(row_groups(linalg_ops(module), device)):
        for op in group:
            op.attributes[ROW_GROUP] = ir.IntegerAttr.get(i64, number)
            marked.add(op)
    return marked


def fuse_row_groups(module: ir.Module, device: Device) -> None:
    """Each marked row group (bufferized) as one block-level forall over its rows (module docstring)."""
    groups: dict[int, list[ir.Operation]] = {}
    for op in linalg_ops(module):
        if ROW_GROUP in op.attributes:
            groups.setdefault(ir.IntegerAttr(op.attributes[ROW_GROUP]).value, []).append(op)
    for group in groups.values():
        _fuse(group, device)


def _staged(group: list[ir.Operation], n: int) -> dict[ir.Value, ir.Value | None]:
    """The buffers two or more ops of `group` read along whole rows (map: every loop in order), within
    `STAGE_BYTES` together: each mapped to None until its workgroup row buffer is made."""
    readers: dict[ir.Value, int] = {}
    for op in group:
        loops = len(loop_extents(op))
        for value, amap in zip(op.opview.inputs, indexing_maps(op), strict=False):
            whole = _identity_map(amap, loops)
            element = value.type.element_type if isinstance(value.type, ir.MemRefType) else None
            if whole and isinstance(element, (ir.FloatType, ir.IntegerType)) and _shape(op)[1] == n:
                readers[value] = readers.get(value, 0) + 1
    staged: dict[ir.Value, ir.Value | None] = {}
    budget = STAGE_BYTES
    for value, count in readers.items():
        size = n * -(-ir.MemRefType(value.type).element_type.width // 8)
        if count > 1 and size <= budget:
            staged[value] = None
            budget -= size
    return staged


def _fuse(group: list[ir.Operation], device: Device) -> None:
    last = group[-1]  # (the forall goes where the last op was: every buffer the group uses is defined by then)
    rows, n, _ = _shape(group[0])
    threads = block_threads(n, device)
    staged = _staged(group, n)
    per = -(-n // threads)  # columns a thread takes
    narrow = all(ir.MemRefType(value.type).element_type.width <= REGISTER_BITS for value in staged)
    registers = bool(staged) and narrow and per <= REGISTER_ELEMENTS and _read_in_place(group, staged, len(rows))
    kept: dict[ir.Value, list[ir.Value | None]] = {value: [None] * per for value in staged} if registers else {}
    if registers:
        staged = {}
    with ir.InsertionPoint(last), last.location:
        inits = {op: folded_fill(op, op.opview.outputs[0]) for op in group if combiner(op) is not None}
        forall = block_forall(list(rows), threads) if rows else block_forall([1], threads)
        with ir.InsertionPoint(forall.body.operations[0]):
            ivs = list(forall.induction_variables) if rows else []
            element_types = {value: ir.MemRefType(value.type).element_type for value in staged}
            for value, element in element_types.items():
                staged[value] = memref.AllocOp(ir.MemRefType.get([n], element, memory_space=ir.Attribute.parse(WORKGROUP)), [], []).result
            filled: set[ir.Value] = set()  # staged rows an earlier op stored
            storing: set[ir.Value] = set()  # staged rows the current op stores as it loads them
            held: dict[ir.Value, ir.Value] = {}  # a reduction's output buffer: the row's value every thread holds

            def load(value: ir.Value, indices: list[ir.Value], column: int | None = None) -> ir.Value:
                """A reduction's value from registers; a row kept in registers: the thread's `column`-th element
                (loaded by its first reader); a staged row's element from workgroup memory (stored there by its
                first reader), else from `value`."""
                if base_buffer(value) in held:
                    return held[base_buffer(value)]
                if value in kept and column is not None:
                    if kept[value][column] is None:
                        kept[value][column] = memref.LoadOp(value, indices).result
                    return kept[value][column]
                if value not in staged or len(indices) != len(rows) + 1:
                    return memref.LoadOp(value, indices).result
                if value in filled:
                    return memref.LoadOp(staged[value], [indices[-1]]).result
                loaded = memref.LoadOp(value, indices).result
                memref.StoreOp(loaded, staged[value], [indices[-1]])
                storing.add(value)
                return loaded

            touched: list[tuple[ir.Value, bool, bool]] = []  # (buffer, written, by the thread of its column) of the ops so far
            for op in group:
                accesses = _accesses(op, len(rows), staged, filled, held)
                if touched and _crosses(accesses, touched):
                    gpu.BarrierOp()
                    touched = []
                touched += accesses
                value = _row_op(op, ivs, n, threads, device.wave, inits.get(op), load, per if registers else 0)
                for out in op.opview.outputs:  # (a buffer written again no longer holds the reduced value)
                    held.pop(base_buffer(out), None)
                if value is not None:
                    held[base_buffer(op.opview.outputs[0])] = value
                filled.update(storing)
    for op in group:
        op.erase()


def _read_in_place(group: list[ir.Operation], staged: dict[ir.Value, ir.Value | None], rows: int) -> bool:
    """Whether every read of a staged row is at the reading thread's own column (the identity map of an
    op over the rows and n), so each thread can keep its columns in registers."""
    for op in group:
        loops = len(loop_extents(op))
        for value, amap in zip(op.opview.inputs, indexing_maps(op), strict=False):
            if value in staged and not (loops == rows + 1 and _identity_map(amap, loops)):
                return False
    return True


def _identity_map(amap: ir.AffineMap, loops: int) -> bool:
    """Whether `amap` is the identity over `loops` loops."""
    return len(amap.results) == loops and all(isinstance(e, ir.AffineDimExpr) and e.position == i for i, e in enumerate(amap.results))


def _accesses(op: ir.Operation, rows: int, staged: dict[ir.Value, ir.Value | None], filled: set[ir.Value],
              held: dict[ir.Value, ir.Value]) -> list[tuple[ir.Value, bool, bool]]:
    """The memory `op` touches in its row group: (buffer, written, whether only the thread of each
    column touches its element: an elementwise op over the row, or a reduction's read, through the
    identity map); a staged row (its workgroup buffer, keyed by the value: written by its first
    reader); none for a reduction's value held in registers."""
    loops = len(loop_extents(op))
    over_row = loops == rows + 1
    reduces = combiner(op) is not None
    out = []
    maps = indexing_maps(op)
    for position, (value, amap) in enumerate(zip(op.operands, maps, strict=True)):
        written = position >= len(op.opview.inputs)
        own = over_row and not (written and reduces) and _identity_map(amap, loops)
        if written or base_buffer(value) not in held:
            out.append((base_buffer(value), written, own))
        if not written and value in staged:
            out.append((staged[value], value not in filled, own))
    return out


def _crosses(accesses: list[tuple[ir.Value, bool, bool]], touched: list[tuple[ir.Value, bool, bool]]) -> bool:
    """Whether an op's `accesses` need a barrier after the `touched` memory of earlier ops: the same
    buffer, one of the two writing, not both by the thread of each column."""
    return any(buffer == other and (written or wrote) and not (own and theirs)
               for buffer, written, own in accesses for other, wrote, theirs in touched)


def _row_op(op: ir.Operation, ivs: list[ir.Value], n: int, threads: int, wave: int, init: ir.Value | None,
            load: Callable[..., ir.Value], unrolled: int = 0) -> ir.Value | None:
    """One op of a row group inside its block, at row `ivs`: a block reduction, a loop over the row's columns by the block's
    threads, or thread 0's; with `unrolled` columns a thread (a row kept in registers), its columns one after another
    (`_columns`). Returns a reduction's value from its fill `init`, which every thread holds (else None)."""
    outputs = list(op.opview.outputs)
    like = combiner(op)
    if like is not None:
        out = outputs[0]

        def store(value: ir.Value) -> None:
            start = init if init is not None else memref.LoadOp(out, ivs).result
            memref.StoreOp(combine(like, start, value), out, ivs)

        if unrolled:
            _, partial = _columns(op, ivs, n, threads, unrolled, load, identity(like))
            value = block_combine(threads, wave, like, partial, store)
        else:
            def fold(columns: list[ir.Value], acc: ir.Value) -> ir.Value:
                inline_body(op, ivs + columns, acc, load)
                return like.results[0]

            value = block_reduce(threads, wave, like, [(index_constant(0), index_constant(n))], fold, store)
        return combine(like, init, value) if init is not None else None
    maps = indexing_maps(op)[len(op.opview.inputs):]
    if unrolled and len(loop_extents(op)) > len(ivs):
        for column, inside, values in _columns(op, ivs, n, threads, unrolled, load)[0]:
            point = ir.InsertionPoint.current
            if inside is not None:
                branch = scf.IfOp(inside)
                point = ir.InsertionPoint(branch.then_block)
            with point:
                for value, out, amap in zip(values, outputs, maps, strict=True):
                    memref.StoreOp(value, out, apply_map(amap, [*ivs, column]))
                if inside is not None:
                    scf.YieldOp([])
        return None
    tid = gpu.ThreadIdOp(gpu.Dimension.x).result
    if len(loop_extents(op)) == len(ivs):  # over the rows alone
        branch = scf.IfOp(arith.cmpi(arith.CmpIPredicate.eq, tid, index_constant(0)))
        point, at = ir.InsertionPoint(branch.then_block), ivs
    else:
        loop = scf.ForOp(tid, index_constant(n), index_constant(threads))
        point, at = ir.InsertionPoint(loop.body), [*ivs, loop.induction_variable]
    with point:
        values = inline_body(op, at, load=load)
        for value, out, amap in zip(values, outputs, maps, strict=True):
            memref.StoreOp(value, out, apply_map(amap, at))
        scf.YieldOp([])
    return None


def _columns(op: ir.Operation, ivs: list[ir.Value], n: int, threads: int, count: int, load: Callable[..., ir.Value],
             acc: ir.Value | None = None) -> tuple[list[tuple[ir.Value, ir.Value | None, list[ir.Value]]], ir.Value | None]:
    """A thread's columns tid + k threads (k < `count`), one after another: for each (the column, whether it is in
    the row: None where every thread's is, the op's body values there, its inputs loaded through `load` (the k-th of
    a row kept in registers) at the column clamped into the row); and a reduction's accumulator folded from `acc`
    over the columns in the row."""
    out = []
    tid = gpu.ThreadIdOp(gpu.Dimension.x).result
    body = op.regions[0].blocks[0]
    operands = [*op.opview.inputs, *op.opview.outputs]
    maps = indexing_maps(op)
    for k in range(count):
        column = arith.addi(tid, index_constant(k * threads))
        inside = None if (k + 1) * threads <= n else arith.cmpi(arith.CmpIPredicate.ult, column, index_constant(n))
        at = [*ivs, column if inside is None else arith.minui(column, index_constant(n - 1))]
        args = []
        for position, (arg, value, amap) in enumerate(zip(body.arguments, operands, maps, strict=True)):
            if acc is not None and position == len(operands) - 1:  # a reduction's accumulator
                args.append(acc)
            elif not isinstance(value.type, ir.MemRefType):
                args.append(value)
            elif list(arg.uses):
                args.append(load(value, apply_map(amap, at), k))
            else:
                args.append(arg)  # (unused: the clones do not refer to it)
        values = clone_body(body, args)
        if acc is not None:
            acc = values[0] if inside is None else arith.select(inside, values[0], acc)
        out.append((column, inside, values))
    return out, acc
