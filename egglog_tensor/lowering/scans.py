"""Scans (cumsum, cumprod, cummax, cummin) as linalg: a generic whose scanned loop is a reduction carrying the
running value in a second output (_scan_generic), rows scanned SCAN_ROWS at a time side by side
(_interleaved_scan), a long axis in blocks the threads share (_blocked_scan), a plain row in lowering/scanrows.py's
vector loop (_vector_blocks). Emitter.materialize hands a scan node to `scan`; these read the emitter's fused
bodies (Emitter._scalar) and build its generics (Emitter._generic_with, _reduce).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from mlir import ir
from mlir.dialects import tensor

from egglog_tensor.graph import Node, is_float

from . import argrows, payload, policy, scalar, scanrows
from .generics import Plan, compose, dim_groups, fill, reshaped, split_inputs, tail_inputs, without

if TYPE_CHECKING:
    from .emit import Emitter

_OPS = {"cumsum": "sum", "cumprod": "prod", "cummax": "max", "cummin": "min"}


def scan(em: Emitter, node: Node) -> ir.Value:
    """cumsum/cumprod/cummax/cummin along `axis`, its producers fused; a long axis the other loops cannot give
    the threads work over is scanned in two passes over blocks (_blocked_scan), or on one thread in one
    vector pass (_vector_blocks) where the operand is plain."""
    (x,) = node.inputs
    axis, op = node.attr("axis"), _OPS[node.op]
    plan = Plan(x.shape)
    tree = em._scalar(x, [ir.AffineDimExpr.get(i) for i in range(x.ndim)], plan)
    n, threads = x.shape[axis], em.target.threads
    step = policy.SCAN_ROWS * max(threads, 2)  # blocks rescanned side by side (_interleaved_scan), more than SCAN_ROWS
    if x.size // n < step and n >= policy.SCAN_SPLIT:
        if (threads == 1 or em.target.name != "cpu-openmp") and axis == x.ndim - 1:  # one thread: one vector pass
            single = _vector_blocks(em, plan, tree, op, node.dtype, n)
            if single is not None:
                return single
        count = next((c for c in range(step, 64 * threads, step) if n % c == 0), 8 * threads)
        plan, tree = em._index_free(x, plan, tree)
        blocked = _blocked_scan(em, plan, tree, axis, op, node.dtype, count)
        if blocked is not None:
            return blocked
    start = fill(without(x.shape, (axis,)), node.dtype, _scan_start(op, node.dtype))
    return _scan_generic(em, plan, tree, axis, op, node.dtype, start)[1]


def _blocked_scan(em: Emitter, plan: Plan, tree: tuple, axis: int, op: str, dtype: str, count: int) -> ir.Value | None:
    """The scan of `axis` split into `count` blocks (and a tail): 1. each block's total (a
    reduction the threads share), 2. the running totals before each block (a short scan), 3. each
    block scanned from its offset (the threads share the blocks), 4. the tail from the last
    block's end. None when an operand reads the axis other than by its bare index."""
    shape = plan.domain
    size, tail = divmod(shape[axis], count)
    split = split_inputs(plan, tree, axis, size, count)
    if split is None:
        return None
    domain = shape[:axis] + (count, size) + shape[axis + 1:]
    blocks = Plan(domain, split)
    kept = without(domain, (axis + 1,))
    totals = em._reduce(blocks, tree, (axis + 1,), fill(kept, dtype, _scan_start(op, dtype)), op, dtype, None)
    before, totals_tree = em._plain_input(totals, dtype)
    start = fill(without(kept, (axis,)), dtype, _scan_start(op, dtype))
    offsets = _scan_generic(em, before, totals_tree, axis, op, dtype, start, exclusive=True)[1]
    # the blocks and the tail write the result in place, at (block * size + index in block) and past them
    rank = len(shape)
    e = [ir.AffineDimExpr.get(i) for i in range(rank + 1)]
    at = ir.AffineMap.get(rank + 1, 0, e[:axis] + [e[axis] * size + e[axis + 1]] + e[axis + 2:])
    if not tail and axis == rank - 1 and (vectored := _vector_blocks(em, plan, tree, op, dtype, size, offsets)) is not None:
        return vectored
    into = tensor.empty(list(shape), scalar.storage_type(dtype))
    ends, scanned = _scan_generic(em, blocks, tree, axis + 1, op, dtype, offsets, into=(into, at))
    if not tail:
        return scanned
    last_type = ir.RankedTensorType.get(list(without(kept, (axis,))), scalar.storage_type(dtype))
    last = tensor.extract_slice(last_type, ends, [], [], [], [count - 1 if d == axis else 0 for d in range(rank)],
                                [1 if d == axis else n for d, n in enumerate(kept)], [1] * rank)
    d = e[:rank]
    past = ir.AffineMap.get(rank, 0, d[:axis] + [d[axis] + count * size] + d[axis + 1:])
    rest = Plan(shape[:axis] + (tail,) + shape[axis + 1:], tail_inputs(plan, axis, count * size, tail))
    return _scan_generic(em, rest, tree, axis, op, dtype, last, into=(scanned, past))[1]


def _vector_blocks(em: Emitter, plan: Plan, tree: tuple, op: str, dtype: str, size: int, offsets: ir.Value | None = None) -> ir.Value | None:
    """The last axis of a plain C-ordered operand scanned in blocks of `size` (a row of the operand reshaped to
    (blocks, size)) by lowering/scanrows.py's vector loop, each from its offset (step 3 of _blocked_scan) or
    from the start, its stores streamed where the output is large. None for a fused, strided or offset
    operand, other dtypes."""
    if tree != ("in", 0) or len(plan.inputs) != 1 or not scanrows.supports(dtype) or em.target.device is not None:
        return None
    value, amap, read = plan.inputs[0]
    if read != dtype or amap != ir.AffineMap.get_identity(len(plan.domain)) or any(value == s for s in em.strided):
        return None
    rows = (math.prod(plan.domain) // size, size)
    lanes = policy.simd_lanes(payload.element_bytes(scalar.element_type(dtype)), em.target)
    starts = None if offsets is None else reshaped(offsets, rows[:1])
    return scanrows.scan_rows(plan.domain, size, argrows.plain_rows(reshaped(value, rows)), op, dtype, _scan_start(op, dtype),
                              lanes, starts=starts)


def _scan_generic(em: Emitter, plan: Plan, tree: tuple, axis: int, op: str, dtype: str, start: ir.Value,
                  exclusive: bool = False, into: tuple[ir.Value, ir.AffineMap] | None = None) -> list[ir.Value]:
    """The generic scanning loop `axis` of plan's domain with `op` from `start` (the values
    without that axis): a reduction loop whose running value is an output (returned first) and
    whose every step writes the result (the running value before the element when `exclusive`),
    a new tensor of the domain's shape or `into` a tensor at an index map."""
    rank, rows = len(plan.domain), policy.SCAN_ROWS
    result, at = into or (tensor.empty(list(plan.domain), scalar.storage_type(dtype)), ir.AffineMap.get_identity(rank))
    if axis == rank - 1 and rank > 1 and plan.domain[-2] % rows == 0 and plan.domain[-2] > rows and not exclusive:
        interleaved = _interleaved_scan(em, plan, tree, op, dtype, start, result, at)
        if interleaved is not None:
            return interleaved
    dims = [ir.AffineDimExpr.get(i) for i in range(rank)]
    running = ir.AffineMap.get(rank, 0, [d for i, d in enumerate(dims) if i != axis])
    iterators = ["reduction" if i == axis else "parallel" for i in range(rank)]
    name = scalar.STEPS[op]

    def body(value: ir.Value, args: list[ir.Value]) -> list[ir.Value]:
        step = scalar.apply(name, dtype, dtype, [args[-2], value])
        return [step, args[-2] if exclusive else step]

    return em._generic_with(plan, tree, [start, result], [running, at], iterators, [dtype, dtype], body)


def _interleaved_scan(em: Emitter, plan: Plan, tree: tuple, op: str, dtype: str, start: ir.Value, result: ir.Value,
                      at: ir.AffineMap) -> list[ir.Value] | None:
    """A scan of the innermost loop with SCAN_ROWS rows at a time side by side (loops: row blocks,
    the scanned loop, the rows of a block), so that each step adds into SCAN_ROWS independent running
    values rather than waiting on one; None when an operand reads the rows other than by their index."""
    rank, rows = len(plan.domain), policy.SCAN_ROWS
    p, count = rank - 2, plan.domain[-2] // rows
    split = split_inputs(plan, tree, p, rows, count)
    if split is None:
        return None
    e = [ir.AffineDimExpr.get(i) for i in range(rank + 1)]
    order = ir.AffineMap.get(rank + 1, 0, e[:p] + [e[p], e[p + 2], e[p + 1]])  # (blocks, scanned, rows) -> split domain
    whole = ir.AffineMap.get(rank + 1, 0, e[:p] + [e[p] * rows + e[p + 2], e[p + 1]])  # -> the unsplit domain
    inputs = [(value, compose(amap, order), dt) for value, amap, dt in split]
    domain = plan.domain[:p] + (count, plan.domain[-1], rows)
    kept = plan.domain[:p] + (count, rows)
    groups = dim_groups([[d] for d in range(p)] + [[p, p + 1]])
    starts = tensor.expand_shape(ir.RankedTensorType.get(list(kept), scalar.storage_type(dtype)), start, groups, [], list(kept))
    running = ir.AffineMap.get(rank + 1, 0, e[:p] + [e[p], e[p + 2]])
    iterators = ["parallel"] * p + ["parallel", "reduction", "parallel"]
    name = scalar.STEPS[op]

    def body(value: ir.Value, args: list[ir.Value]) -> list[ir.Value]:
        step = scalar.apply(name, dtype, dtype, [args[-2], value])
        return [step, step]

    ends, scanned = em._generic_with(Plan(domain, inputs), tree, [starts, result], [running, compose(at, whole)],
                                       iterators, [dtype, dtype], body)
    return [tensor.collapse_shape(start.type, ends, groups), scanned]


def _scan_start(op: str, dtype: str) -> float:
    """A scan's running value before the first element: adding (multiplying) it gives the element
    exactly, as NumPy's first output is its first element (-0.0 stays -0.0; max/min: their identity)."""
    if op == "sum":
        return -0.0 if is_float(dtype) else 0
    return scalar.reduction_identity(op, dtype, False)
