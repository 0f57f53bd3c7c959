"""Emission: extracted Node DAG -> MLIR module (linalg on tensors, memrefs at the boundary).

The extracted term decides fusion: elementwise ops, constants and views (transpose, broadcast,
slices, diagonals, unit reshapes) fuse into their consumer's `linalg.generic` (views become
indexing maps, never copies) unless the term wraps them in `materialize`. A group input is a
materialized value: an argument, a `materialize`d value, a contraction or a reduction. A reduction
inlines its elementwise producer (`sum(a*b)` reads a and b once). Arguments come in as memrefs
(identity, column-major or dynamic strided layout) and outputs are written in place
(destination-passing style), so one-shot bufferization needs no result copies.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence

import numpy as np
from mlir import ir
from mlir.dialects import affine, arith, bufferization, func, linalg, memref, scf, tensor

from egglog_tensor.errors import CompileError, UnsupportedError
from egglog_tensor.forked import NATIVE
from egglog_tensor import ops
from egglog_tensor.graph import Node, depth, is_float, topological
from egglog_tensor.ops import ELEMENTWISE, FACTORS, INDEX_REDUCTIONS, RECURRENCES, REDUCTIONS, SCANS, SORTS
from egglog_tensor.sourcelines import Line, Where, naming
from egglog_tensor.spec import ArgSpec
from egglog_tensor.target import Target

from . import argrows, blocking, factor, orthogonal, payload, policy, recurrence, scalar, scans, sorting, tiling
from .generics import Plan, compose, dim_groups, fill, is_dim, reads_indices, split_inputs, tail_inputs, uses, without
from .annotations import FASTMATH, LANES, OUTPUT, PLAIN_STORES
from .gpu.reduce import MAX_THREADS
from .stages import rows

_DYNAMIC = ir.ShapedType.get_dynamic_stride_or_offset
DEEP = 64  # programs deeper than this emit their kernels inputs first (Emitter.kernels_first)
SHIFTED_FUSE_MAX = 8  # a value of more elementwise ops than this, read at two indices in one loop, is computed once (Emitter._scalar)


def _cut(value: ir.Value) -> ir.Value:
    """`value` written into a buffer of its own and read back as a tensor that aliases nothing before it:
    one-shot bufferization's analysis of a chain of in-place updates grows as the square of its length
    (an unrolled stencil's `B[1:-1, 1:-1] = ...`: 128 steps 17 s), so a long chain is cut in links."""
    kind = ir.RankedTensorType(value.type)
    buffer = memref.alloc(ir.MemRefType.get(kind.shape, kind.element_type), [], [])
    bufferization.materialize_in_destination(None, value, buffer, restrict=True, writable=True)
    return bufferization.to_tensor(kind, buffer, restrict=True, writable=True)


def memref_type(spec: ArgSpec) -> ir.MemRefType:
    """Boundary type of an argument: identity layout for C order, else a strided layout."""
    elem = scalar.storage_type(spec.dtype)
    shape = list(spec.shape)
    if spec.layout == "C" or not shape:
        return ir.MemRefType.get(shape, elem)
    if spec.layout == "F":
        strides, acc = [], 1
        for d in shape:
            strides.append(acc)
            acc *= max(d, 1)
        layout = ir.StridedLayoutAttr.get(0, strides)
    else:
        layout = ir.StridedLayoutAttr.get(_DYNAMIC(), [_DYNAMIC()] * len(shape))
    return ir.MemRefType.get(shape, elem, layout)


def _tensor_type(node: Node) -> ir.RankedTensorType:
    return ir.RankedTensorType.get(list(node.shape), scalar.storage_type(node.dtype))


def view_index(node: Node, idx: list[ir.AffineExpr]) -> list[ir.AffineExpr]:
    """Index into a view's source, given the index into the view (the view as an affine map)."""
    src = node.inputs[0]
    if node.op == "transpose":
        out: list[ir.AffineExpr] = [None] * src.ndim  # type: ignore[list-item]
        for i, p in enumerate(node.attr("perm")):
            out[p] = idx[i]
        return out
    if node.op == "broadcast_to":
        return broadcast_index(src.shape, node.shape, idx)
    if node.op == "slice":
        start, step, _size = node.attrs
        return [ir.AffineConstantExpr.get(s) + i * st for i, s, st in zip(idx, start, step, strict=True)]
    if node.op == "diagonal":
        offset, a1, a2 = node.attrs
        rest = iter(idx[:-1])
        k = idx[-1]
        out = []
        for d in range(src.ndim):
            if d == a1:
                out.append(k + max(-offset, 0))
            elif d == a2:
                out.append(k + max(offset, 0))
            else:
                out.append(next(rest))
        return out
    if node.op == "reshape":  # only unit-dim reshapes are views
        kept = iter(i for i, d in zip(idx, node.shape, strict=True) if d != 1)
        zero = ir.AffineConstantExpr.get(0)
        return [zero if d == 1 else next(kept) for d in src.shape]
    raise AssertionError(node.op)


def broadcast_index(src: Sequence[int], dst: Sequence[int], idx: list[ir.AffineExpr]) -> list[ir.AffineExpr]:
    """Index into a NumPy-broadcast operand of shape `src` inside a domain of shape `dst`."""
    lead = len(dst) - len(src)
    zero = ir.AffineConstantExpr.get(0)
    return [zero if s == 1 and dst[lead + j] != 1 else idx[lead + j] for j, s in enumerate(src)]


def reverses(node: Node) -> bool:
    """Whether `node` is a slice with a negative step (a[::-1], np.flip)."""
    return node.op == "slice" and any(s < 0 for s in node.attr("step"))


def is_view(node: Node) -> bool:
    return ops.is_view(node.op, node.inputs[0].shape if node.inputs else node.shape, node.shape)


class Emitter:
    """Builds one func.func for a kernel inside the current MLIR context, for `target`."""

    def __init__(self, target: Target, locations: Mapping[int, Where] | None = None, outputs: Sequence[Node] = ()) -> None:
        self.target = target
        self.locations = locations or {}
        self.outputs = {id(n) for n in outputs}
        self.values: dict[int, ir.Value] = {}
        self.arg_tensors: dict[str, ir.Value] = {}
        self.arg_memrefs: dict[str, ir.Value] = {}
        self.strided: list[ir.Value] = []  # tensors of arguments not in C order
        self.updates = 0  # update_slices in place since the last cut (_update_slice)

    # --- materialized values ---------------------------------------------------------------
    def kernels_first(self, outputs: list[Node]) -> None:
        """In a program deeper than DEEP nodes, emit every value that is a kernel of its own, inputs
        first: emitting a kernel then never recurses through the kernels below it (an unrolled loop's
        chain of hundreds). Shallower programs are emitted from their outputs (the IR's order as before)."""
        if depth(outputs) <= DEEP:
            return
        for node in topological(outputs):
            if node.op not in ELEMENTWISE and node.op not in ("const", "iota", "arg") and (not is_view(node) or reverses(node)):
                self.materialize(node)

    def materialize(self, node: Node) -> ir.Value:
        """The tensor value of `node`, emitted once."""
        value = self.values.get(id(node))
        if value is None:
            with self._location(node), naming(self.locations[id(node)].lines if id(node) in self.locations else ()):
                value = self._materialize(node)
            self.values[id(node)] = value
        return value

    def _location(self, node: Node) -> ir.Location:
        """The MLIR location of the ops made for `node`: its source lines (fused when several), named
        "rewritten" when the optimizer made it, "rewritten by rules a, b" naming the rules that may have
        (egglog_tensor/provenance.py); the enclosing one if unknown. (A name around the lines, not a
        fused part: the LLVM line tables take the lines through it.)"""
        where = self.locations.get(id(node))
        if where is None or not where.lines:
            return ir.Location.current
        lines = [ir.Location.file(f, n, 0) for f, n in sorted(where.lines)]
        loc = lines[0] if len(lines) == 1 else ir.Location.fused(lines)
        rules = f" by rules {', '.join(where.rules)}" if where.rules else ""
        return ir.Location.name(f"rewritten{rules}", childLoc=loc) if where.rewritten else loc

    def _materialize(self, node: Node) -> ir.Value:
        if node.op == "arg":
            return self.arg_tensors[node.attr("name")]
        if node.op == "materialize":  # a fresh row-major buffer: for a transposed view, a layout change
            (x,) = node.inputs
            if x.op == "arg" and x.attr("layout") == "F" and x.ndim == 2:
                return self._row_major_copy(x)
            return self._group(x) if is_view(x) else self.materialize(x)
        if node.op in ("fuse_rows", "fuse_rows_tiled"):  # the "rows" stage builds its loop over row blocks (lowering/stages/rows.py)
            value = self.output(node.inputs[0])
            tiles = node.attr("tiles") if node.op == "fuse_rows_tiled" else None
            if tiles is not None and (len(tiles) != 1 or tiles[0] < 1):
                raise CompileError(f"fuse_rows_tiled: tiles must be Vec(rows per block >= 1), got {tiles}")
            if node.ndim >= 1 and node.size and isinstance(value.owner, linalg.GenericOp):
                rows.tag(value.owner, tiles)
            return value
        if node.size == 0:
            return self._empty(node)
        if node.op == "array":  # a captured NumPy array: a dense constant of the module
            return arith.constant(_tensor_type(node), constant_attr(node))
        if node.op in ("matmul", "matmul_tiled", "einsum_matmul"):  # matmul_tiled: the optimizer chose its cache tiles
            if node.inputs[0].shape[-1] == 0:  # empty contraction: zeros (tiling a size-0 loop asserts in MLIR)
                return self._filled(node, 0)
            return self._matmul(node, node.attr("tiles") if node.op == "matmul_tiled" else None)
        if node.op in REDUCTIONS:
            return self._reduction(node)
        if node.op in SCANS:
            return scans.scan(self, node)
        if node.op in SORTS or node.op == "searchsorted":
            return self._sort(node)
        if node.op in FACTORS:
            return self._factor(node)
        if node.op in RECURRENCES:
            return self._recurrence(node)
        if node.op == "concat":
            return self._concat(node)
        if node.op == "update_slice":
            return self._update_slice(node)
        if node.op == "reshape" and not is_view(node):
            return self._reshape(node)
        if node.op == "gather":
            return self._gather(node)
        if node.op == "scatter_add":
            return self._scatter_add(node)
        if reverses(node):  # the reversed copy: a generic of its own, which the parallel stage leaves sequential
            plan = Plan(node.shape)
            tree = self._scalar(node.inputs[0], view_index(node, [ir.AffineDimExpr.get(i) for i in range(node.ndim)]), plan)
            return self._generic(plan, tree, self._empty(node), ir.AffineMap.get_identity(node.ndim),
                                 ["parallel"] * node.ndim, None, node.dtype)
        return self._group(node)

    def _empty(self, node: Node) -> ir.Value:
        return tensor.empty(list(node.shape), scalar.storage_type(node.dtype))

    def _filled(self, node: Node, value: float) -> ir.Value:
        return fill(node.shape, node.dtype, value)

    def output(self, node: Node) -> ir.Value:
        """The value written to an output buffer. An argument returned as is gets an explicit copy:
        bufferizing it would copy a strided memref with memref.copy, a runtime-library call."""
        if node.op != "arg":
            return self.materialize(node)
        with self._location(node):
            return self._group(node)

    # --- fused elementwise groups ------------------------------------------------------------
    def _scalar(self, node: Node, idx: list[ir.AffineExpr], plan: Plan, indices: bool = True) -> tuple:
        """The body expression computing `node` at `idx` (fused unless the term materializes it; an
        iota from the loop indices, or with `indices` False read from its own buffer). Walked with an
        explicit stack, operands left to right (the order the body's inputs are added in): any depth.
        A node read at the same index by several paths is one shared subtree (a DAG), and a value of
        more than SHIFTED_FUSE_MAX ops read at a second index (a slice's shift), or already in a buffer
        (`_concat`'s parts: np.roll's), is read from its kernel's buffer: fused, a loop of such steps
        would compute each earlier step at every offset it reaches (steps^2 ops, 3^steps paths)."""
        done: list[tuple] = []
        made: dict[tuple, tuple] = {}  # (node, index) -> its subtree
        first: dict[int, tuple] = {}  # node -> the index it was fused at
        stack: list[tuple[Node, list[ir.AffineExpr], bool]] = [(node, idx, False)]
        while stack:
            node, idx, ready = stack.pop()
            key = (id(node), tuple(str(e) for e in idx))
            if ready:  # its operands are the last len(inputs) trees done
                children = tuple(done[len(done) - len(node.inputs):])
                del done[len(done) - len(node.inputs):]
                made[key] = (node.op, node.inputs[0].dtype, node.dtype, children)
                done.append(made[key])
            elif key in made:
                done.append(made[key])
            elif is_view(node) and not reverses(node):
                stack.append((node.inputs[0], view_index(node, idx), False))
            elif node.op in ELEMENTWISE and (id(node) in self.values or first.setdefault(id(node), key[1]) != key[1]) \
                    and _fused_ops(node) > SHIFTED_FUSE_MAX:
                done.append(self._scalar_leaf(node, idx, plan, indices))
            elif node.op in ELEMENTWISE:
                stack.append((node, idx, True))
                stack.extend((i, broadcast_index(i.shape, node.shape, idx), False) for i in reversed(node.inputs))
            else:
                done.append(self._scalar_leaf(node, idx, plan, indices))
        return done[0]

    def _scalar_leaf(self, node: Node, idx: list[ir.AffineExpr], plan: Plan, indices: bool) -> tuple:
        """A body expression's leaf: a constant, an iota's index, or a read of a materialized value."""
        if node.op == "const":
            return ("c", node.attr("value"), node.dtype)
        if node.op == "iota" and indices:
            return ("iota", ir.AffineMap.get(len(plan.domain), 0, [idx[node.attr("axis")]]), node.dtype)
        # a reversed view is read from its own copy: linalg's tiling asserts on a negative map coefficient
        return plan.input(self.materialize(node), idx, node.dtype)

    def _generic(self, plan: Plan, tree: tuple, init: ir.Value, out_map: ir.AffineMap,
                 iterators: list[str], combine: str | None, out_dtype: str) -> ir.Value:
        """Create the linalg.generic for `plan` and fill its body from `tree`."""

        if combine in ("max", "min") and out_dtype == "bool":
            # any/all as maxui/minui of the stored 0/1 bytes: one arith op on the accumulator (an i1 op between an i8
            # load and store is neither split among threads, stages/parallel.py, nor vectorized by LLVM)
            def on_bytes(value: ir.Value, args: list[ir.Value]) -> list[ir.Value]:
                return [scalar.combine(combine, "uint8", scalar.store(value, "bool"), args[-1])]

            return self._generic_with(plan, tree, [init], [out_map], iterators, ["uint8"], on_bytes)[0]

        def body(value: ir.Value, args: list[ir.Value]) -> list[ir.Value]:
            return [value if combine is None else scalar.combine(combine, out_dtype, value, args[-1])]

        return self._generic_with(plan, tree, [init], [out_map], iterators, [out_dtype], body)[0]

    def _generic_with(self, plan: Plan, tree: tuple, inits: list[ir.Value], out_maps: list[ir.AffineMap],
                      iterators: list[str], out_dtypes: list[str],
                      body: Callable[[ir.Value, list[ir.Value]], list[ir.Value]]) -> list[ir.Value]:
        """The linalg.generic over `plan` writing `inits`: it yields body(tree's value, the block's arguments)."""
        maps = [m for _, m, _ in plan.inputs] + out_maps
        op = linalg.GenericOp(
            result_tensors=[init.type for init in inits],
            inputs=[v for v, _, _ in plan.inputs],
            outputs=inits,
            indexing_maps=ir.ArrayAttr.get([ir.AffineMapAttr.get(m) for m in maps]),
            iterator_types=ir.ArrayAttr.get([ir.Attribute.parse(f"#linalg.iterator_type<{it}>") for it in iterators]),
        )
        dtypes = [dt for _, _, dt in plan.inputs] + out_dtypes
        block = op.regions[0].blocks.append(*(scalar.storage_type(dt) for dt in dtypes))
        with ir.InsertionPoint(block):
            args = [scalar.load(a, dt) for a, dt in zip(block.arguments, dtypes, strict=True)]
            values = body(_emit_tree(tree, args, {}), args)
            linalg.YieldOp([scalar.store(v, dt) for v, dt in zip(values, out_dtypes, strict=True)])
        return list(op.results)

    def _group(self, node: Node) -> ir.Value:
        rank = node.ndim
        dims = [ir.AffineDimExpr.get(i) for i in range(rank)]
        plan = Plan(node.shape)
        tree = self._scalar(node, dims, plan)
        return self._generic(plan, tree, self._empty(node), ir.AffineMap.get_identity(rank),
                             ["parallel"] * rank, None, node.dtype)

    def _row_major_copy(self, x: Node) -> ir.Value:
        """A Fortran-ordered matrix argument copied into a row-major buffer: its memory read as the
        C-ordered transpose (memref.transpose, no copy), then transposed by linalg.transpose.
        (A same-shape copy of the argument's tensor would fold away as an identity.)"""
        k, n = x.shape
        view_type = ir.MemRefType.get([n, k], scalar.storage_type(x.dtype), ir.StridedLayoutAttr.get(0, [max(k, 1), 1]))
        view = memref.transpose(view_type, self.arg_memrefs[x.attr("name")],
                                ir.AffineMapAttr.get(ir.AffineMap.get_permutation([1, 0])))
        src = bufferization.to_tensor(ir.RankedTensorType.get([n, k], scalar.storage_type(x.dtype)), view, restrict=True)
        return linalg.transpose(src, outs=[self._empty(x)], permutation=[1, 0])

    def _reduction(self, node: Node) -> ir.Value:
        (x,) = node.inputs
        axes = node.attr("axes")
        dims = [ir.AffineDimExpr.get(i) for i in range(x.ndim)]
        if any(x.shape[a] == 0 for a in axes):  # nothing to read (slicing a size-0 operand does not verify)
            return self._filled(node, scalar.reduction_identity(node.op, node.dtype, True))
        plan = Plan(x.shape)
        tree = self._scalar(x, dims, plan)
        if not all(plan.spans(a) for a in axes):
            # Linalg infers each loop's bounds from an operand indexed by that bare loop index;
            # a reduced dim read only at an offset or broadcast (a[1:], a[::-1]) has none, so
            # reduce a materialized x instead.
            plan, tree = self._plain_input(self.materialize(x), x.dtype)
        if node.op in INDEX_REDUCTIONS:
            return self._index_reduction(node, plan, tree)
        lanes_attr = node.attr("lanes")  # {op}_lanes: the optimizer chose them
        if lanes_attr is not None and lanes_attr < 1:
            raise CompileError(f"{node.op}_lanes: lanes must be >= 1, got {lanes_attr}")
        # (a GPU block reduction of a row adds at most CHAIN terms per thread: unblocked)
        gpu_row = self.target.device is not None and tuple(axes) == (len(x.shape) - 1,) and x.shape[-1] <= blocking.CHAIN * MAX_THREADS
        if node.op == "sum" and is_float(node.dtype) and not gpu_row:
            vf = policy.simd_lanes(payload.element_bytes(scalar.element_type(node.dtype)), self.target)
            steps = blocking.plan(x.shape, tuple(axes), self._unit_stride(plan), vf, lanes_attr)
            if steps != [blocking.Step(tuple(sorted(axes)), None, lanes_attr)]:
                plan, tree = self._index_free(x, plan, tree)
                blocked = self._blocked_sum(node, x, plan, tree, steps)
                if blocked is not None:
                    return blocked
        init = self._filled(node, scalar.reduction_identity(node.op, node.dtype, False))
        return self._reduce(plan, tree, tuple(axes), init, node.op, node.dtype, lanes_attr)

    def _index_reduction(self, node: Node, plan: Plan, tree: tuple) -> ir.Value:
        """argmax/argmin: generics carrying the best value and its row-major index within the reduced
        axes (scalar.pick: NumPy's first index on ties, NaN first, in any order); the index is the
        result. A long unit-stride innermost reduced loop is split into `lanes` side by side, whose
        loop LLVM vectorizes, then the lanes are reduced and the tail past the last full row of lanes.
        With every axis reduced (a flattened argmax), the outermost one stays a parallel loop of the
        lanes' generic (the threads' split: one best per row and lane), reduced with the lanes."""
        dtype, axes, domain = node.inputs[0].dtype, tuple(node.attr("axes")), plan.domain
        pick = "max" if node.op == "argmax" else "min"
        kept = without(domain, axes)
        key = scalar.KEYS.get(dtype, dtype)  # the partial results hold order keys, not values
        inits = [fill(kept, key, scalar.reduction_identity(pick, key, False)), fill(kept, "int64", 0)]
        if self.target.device is not None:
            return self._device_index_reduction(pick, dtype, plan, tree, axes, inits)
        inner, n = len(domain) - 1, domain[-1]
        lanes = blocking.ACCUMULATORS * policy.simd_lanes(payload.element_bytes(scalar.element_type(dtype)), self.target)
        long = inner in axes and n >= 2 * lanes and self._unit_stride(plan)
        if long:
            plan, tree = self._index_free(node.inputs[0], plan, tree)
        split = split_inputs(plan, tree, inner, lanes, n // lanes) if long else None
        if long and split is not None:
            rows = self._vector_index_reduction(node, plan, tree)
            if rows is not None:
                return rows
        if split is None:
            return self._narrow_pick(pick, dtype, plan, tree, axes, kept, key)
        count = n // lanes
        # 1. (count, lanes): each lane's best over the reduced axes (but a flattened one's outermost) and its count loop
        held = axes[:1] if not kept and len(axes) > 1 else ()
        part = without(domain, axes[len(held):]) + (lanes,)
        rows = Plan(domain[:inner] + (count, lanes), split)
        lane_inits = [fill(part, key, scalar.reduction_identity(pick, key, False)), fill(part, "int64", 0)]
        partial = self._pick(pick, dtype, rows, tree, axes, lane_inits, lambda a: _lane_index(a, inner, lanes), domain,
                             axes[len(held):], ascending=True)
        # 2. the lanes' bests (and a flattened one's rows'), each with its own index
        across = Plan(part)
        value = across.input(partial[0], [ir.AffineDimExpr.get(i) for i in range(len(part))], key)
        index = across.input(partial[1], [ir.AffineDimExpr.get(i) for i in range(len(part))], "int64")
        best = self._pick(pick, key, across, value, tuple(range(len(part) - 1 - len(held), len(part))), inits, index, across.domain)
        tail = n - count * lanes
        if not tail:
            return best[1]
        # 3. the elements past the last full row of lanes
        rest = Plan(domain[:inner] + (tail,), tail_inputs(plan, inner, count * lanes, tail))
        return self._pick(pick, dtype, rest, tree, axes, best, lambda a: _loop_index(a, count * lanes if a == inner else 0), domain)[1]

    def _narrow_pick(self, pick: str, dtype: str, plan: Plan, tree: tuple, axes: tuple[int, ...], kept: tuple[int, ...],
                     key: str) -> ir.Value:
        """argmax/argmin in one generic meeting each output's elements in ascending index order (a tie never
        wins), its running index an int32 when the reduced axes fit (a vector of bests and indices twice as
        wide), widened to int64 after."""
        narrow = "int32" if math.prod(plan.domain[a] for a in axes) < 2**31 else "int64"
        inits = [fill(kept, key, scalar.reduction_identity(pick, key, False)), fill(kept, narrow, 0)]
        index = _loop_index if narrow == "int64" else (lambda a: scalar.cast(_loop_index(a), "int64", narrow))
        best = self._rows_at_a_time(pick, dtype, plan, tree, axes, inits, index, narrow)
        if best is None:
            best = self._pick(pick, dtype, plan, tree, axes, inits, index, plan.domain, ascending=True, index_dtype=narrow)[1]
        if narrow == "int64":
            return best
        wide, value = self._plain_input(best, narrow)
        rank = len(kept)
        return self._generic_with(wide, value, [tensor.empty(list(kept), scalar.storage_type("int64"))],
                                  [ir.AffineMap.get_identity(rank)], ["parallel"] * rank, ["int64"],
                                  lambda v, _: [scalar.cast(v, narrow, "int64")])[0]

    def _rows_at_a_time(self, pick: str, dtype: str, plan: Plan, tree: tuple, axes: tuple[int, ...], inits: list[ir.Value],
                        index: Callable[[int], ir.Value], narrow: str) -> ir.Value | None:
        """An outer axis's argmax/argmin meeting policy.OUTER_ROWS of its rows per pass over the kept loops
        (loops: row blocks, the kept loops, the rows of a block, unrolled), so that the bests and indices are
        loaded and stored once per block rather than once per row; None unless one non-innermost axis is
        reduced whose length the block divides, read by its bare index."""
        blocks = _rows_innermost(plan, tree, axes)
        if blocks is None:
            return None
        a, rank = axes[0], len(plan.domain)

        def at(_: int) -> ir.Value:
            return arith.addi(arith.muli(index(a), scalar.constant(policy.OUTER_ROWS, narrow)), index(rank))

        return self._pick(pick, dtype, blocks, tree, axes, inits, at, blocks.domain, (a, rank), ascending=True, index_dtype=narrow)[1]

    def _device_index_reduction(self, pick: str, dtype: str, plan: Plan, tree: tuple, axes: tuple[int, ...],
                                inits: list[ir.Value]) -> ir.Value:
        """A GPU target's argmax/argmin: one generic (a thread per output element); a flattened one of
        rank > 1 in two, its outermost loop kept parallel (a thread per row's best and its flat index),
        then those rows' bests picked among (one thread: gpu/reduce.py's `scalar`). A 1-D array read as
        it is goes as rows of its largest divisor up to its square root (one thread for a prime length)."""
        domain = plan.domain
        if len(domain) == 1 and tree == ("in", 0) and plan.inputs[0][1] == ir.AffineMap.get_identity(1):
            n = domain[0]
            columns = n // max((d for d in range(1, int(n**0.5) + 1) if n % d == 0), default=1)
            if 1 < columns < n:
                value = plan.inputs[0][0]
                rows = tensor.expand_shape(ir.RankedTensorType.get([n // columns, columns], value.type.element_type), value,
                                           dim_groups([[0, 1]]), [], [n // columns, columns])
                plan, tree = self._plain_input(rows, dtype)
                domain, axes = plan.domain, (0, 1)
        if without(domain, axes) or len(axes) < 2:
            return self._pick(pick, dtype, plan, tree, axes, inits, _loop_index, domain)[1]
        key = scalar.KEYS.get(dtype, dtype)
        rows = (domain[axes[0]],)
        row_inits = [fill(rows, key, scalar.reduction_identity(pick, key, False)), fill(rows, "int64", 0)]
        partial = self._pick(pick, dtype, plan, tree, axes, row_inits, _loop_index, domain, axes[1:], ascending=True)
        across = Plan(rows)
        dims = [ir.AffineDimExpr.get(0)]
        return self._pick(pick, key, across, across.input(partial[0], dims, key), (0,), inits,
                          across.input(partial[1], dims, "int64"), across.domain)[1]

    def _vector_index_reduction(self, node: Node, plan: Plan, tree: tuple) -> ir.Value | None:
        """argmax/argmin along the last axis, or over all of a C-ordered value read as it is, as
        lowering/argrows.py's vector loops (bests in registers); a flattened one's segments (a few
        per thread) then picked among. A fused operand (`np.argmax(x * w, -1)`) is computed row by
        row inside the loop, into a buffer in cache. None where those do not apply: a strided
        operand or a view read as it is, a fused one flattened or read at offsets of the row loops,
        other axes or dtypes, short rows."""
        x, pick = node.inputs[0], "max" if node.op == "argmax" else "min"
        rank, axes = x.ndim, tuple(sorted(node.attr("axes")))
        if not argrows.supports(x.dtype):
            return None
        flat = axes == tuple(range(rank))
        n = x.size if flat else x.shape[-1]
        lanes = policy.simd_lanes(payload.element_bytes(scalar.element_type(x.dtype)), self.target)
        if n < 2 * lanes * argrows.UNROLL or not (flat or axes == (rank - 1,)):
            return None
        if tree != ("in", 0) or len(plan.inputs) != 1:  # a fused operand: each row computed in the loop
            row_of = None if flat else self._computed_rows(plan, tree, x)
            if row_of is None:
                return None
            _, indices = argrows.arg_rows((x.size // n, n), row_of, pick, x.dtype, 1, lanes)
            return _by_row(indices, x.shape, axes, n)
        value, amap, _ = plan.inputs[0]
        if amap != ir.AffineMap.get_identity(rank) or any(value == s for s in self.strided):
            return None
        segments = max(1, min(4 * self.target.threads, n // policy.ARG_SEGMENT)) if flat else 1
        groups = [list(range(rank))] if flat else [list(range(rank - 1)), [rank - 1]]
        if rank > 1:
            value = tensor.collapse_shape(ir.RankedTensorType.get([n] if flat else [x.size // n, n], value.type.element_type),
                                          value, dim_groups(groups))
        if flat or rank == 1:
            value = tensor.expand_shape(ir.RankedTensorType.get([1, n], value.type.element_type), value, dim_groups([[0, 1]]), [], [1, n])
        keys, indices = argrows.arg_rows((x.size // n, n), argrows.plain_rows(value), pick, x.dtype, segments, lanes)
        if segments > 1:  # the segments' bests, each with its index (ties: the smaller)
            key = scalar.KEYS.get(x.dtype, x.dtype)
            across = Plan((1, segments))
            dims = [ir.AffineDimExpr.get(0), ir.AffineDimExpr.get(1)]
            inits = [fill((), key, scalar.reduction_identity(pick, key, False)), fill((), "int64", 0)]
            return self._pick(pick, key, across, across.input(keys, dims, key), (0, 1), inits,
                              across.input(indices, dims, "int64"), across.domain)[1]
        return _by_row(indices, x.shape, axes, n)

    def _computed_rows(self, plan: Plan, tree: tuple, x: Node) -> argrows.Row | None:
        """The rows of the fused value `tree` over `plan` (x's shape, reduced along its last axis),
        each computed by a generic over that row's slices of the inputs; None when an input reads a
        row loop other than by its bare index (a strided or shifted view), so its slice is not a row's."""
        rank, lead = x.ndim, x.ndim - 1
        reads: list[list[int | None]] = []  # per input, per dim: the row loop it is indexed by (None: all of it)
        for _, amap, _ in plan.inputs:
            dims: list[int | None] = []
            for expr in amap.results:
                used = [i for i in range(lead) if uses(expr, i)]
                if used and not (len(used) == 1 and is_dim(expr, used[0])):
                    return None
                dims.append(used[0] if used else None)
            reads.append(dims)

        def row_of(row: ir.Value) -> tuple[ir.Value, ir.Value]:
            at: list[ir.Value] = []  # the row's index along each leading dim, innermost last
            for extent in reversed(x.shape[:lead]):
                at.insert(0, arith.remui(row, arith.constant(ir.IndexType.get(), extent)))
                row = arith.divui(row, arith.constant(ir.IndexType.get(), extent))
            dynamic = ir.ShapedType.get_dynamic_stride_or_offset()
            inputs = []
            for (value, amap, dtype), dims in zip(plan.inputs, reads, strict=True):
                shape = list(ir.RankedTensorType(value.type).shape)
                sizes = [n if d is None else 1 for d, n in zip(dims, shape, strict=True)]
                offsets = [at[d] for d in dims if d is not None]
                sliced = tensor.extract_slice(ir.RankedTensorType.get(sizes, ir.RankedTensorType(value.type).element_type), value,
                                              offsets, [], [], [0 if d is None else dynamic for d in dims], sizes, [1] * len(sizes))
                inputs.append((sliced, amap, dtype))
            domain = (1,) * lead + (x.shape[-1],)
            empty = tensor.empty(list(domain), scalar.storage_type(x.dtype))
            computed = self._generic(Plan(domain, inputs), tree, empty, ir.AffineMap.get_identity(rank), ["parallel"] * rank, None, x.dtype)
            if rank > 2:
                computed = tensor.collapse_shape(ir.RankedTensorType.get([1, x.shape[-1]], empty.type.element_type), computed,
                                                 dim_groups([list(range(lead)), [lead]]))
            return computed, arith.constant(ir.IndexType.get(), 0)

        return row_of

    def _pick(self, pick: str, dtype: str, plan: Plan, tree: tuple, axes: tuple[int, ...], inits: list[ir.Value],
              index: Callable[[int], ir.Value] | tuple, extents: tuple[int, ...], reduced: tuple[int, ...] | None = None,
              ascending: bool = False, index_dtype: str = "int64") -> list[ir.Value]:
        """The generic reducing `axes` of plan's domain into (best order key, its index of `index_dtype`) `inits`: an
        element of `dtype` (a key when `dtype` is an integer) is compared by its scalar.order_key; its
        index is an input of the plan, or the row-major index of the positions index(axis) along
        `axes` in an array of shape `extents`; the loops of `reduced` (default: `axes`) are reduced, and
        `ascending` when each best meets its elements in ascending index order (a tie then never wins)."""
        rank = len(plan.domain)
        reduced = axes if reduced is None else reduced
        dims = [ir.AffineDimExpr.get(i) for i in range(rank)]
        out_map = ir.AffineMap.get(rank, 0, [d for i, d in enumerate(dims) if i not in reduced])
        iterators = ["reduction" if i in reduced else "parallel" for i in range(rank)]

        def body(value: ir.Value, args: list[ir.Value]) -> list[ir.Value]:
            if callable(index):
                at = scalar.constant(0, index_dtype)
                for a in axes:  # Horner: at * extent + position, over the reduced axes in order
                    at = arith.addi(arith.muli(at, scalar.constant(extents[a], index_dtype)), index(a))
            else:
                at = args[index[1]]
            return list(scalar.pick(pick, key, scalar.order_key(pick, dtype, value), at, *args[-2:], ascending))

        key = scalar.KEYS.get(dtype, dtype)
        return self._generic_with(plan, tree, inits, [out_map, out_map], iterators, [key, index_dtype], body)

    def _plain_input(self, value: ir.Value, dtype: str) -> tuple[Plan, tuple]:
        """A plan reading one tensor at the identity index, and its body."""
        shape = tuple(ir.RankedTensorType(value.type).shape)
        plan = Plan(shape)
        return plan, plan.input(value, [ir.AffineDimExpr.get(i) for i in range(len(shape))], dtype)

    def _index_free(self, x: Node, plan: Plan, tree: tuple) -> tuple[Plan, tuple]:
        """x's plan and body for a path that splits a loop into blocks or lanes (split_inputs, which declines a
        body computing a value from the loop indices: the split renumbers them): `plan` and `tree` as they are,
        or, where the body computes an iota from the loop indices, read from the iota's own buffer instead."""
        if not reads_indices(tree):
            return plan, tree
        plan = Plan(x.shape)
        return plan, self._scalar(x, [ir.AffineDimExpr.get(i) for i in range(x.ndim)], plan, indices=False)

    def _unit_stride(self, plan: Plan) -> bool:
        """Whether every operand reads the innermost loop at unit stride (or not at all), so that
        LLVM vectorizes it: only the last index uses it, bare, into a tensor in C order."""
        inner = len(plan.domain) - 1
        for value, amap, _ in plan.inputs:
            results = list(amap.results)
            if any(uses(e, inner) for e in results[:-1]):
                return False
            if results and uses(results[-1], inner) and (
                    not is_dim(results[-1], inner) or any(value == s for s in self.strided)):
                return False
        return True

    def _blocked_sum(self, node: Node, x: Node, plan: Plan, tree: tuple, steps: list[blocking.Step]) -> ir.Value | None:
        """A float sum as the generics of `steps` (lowering/blocking.py), each summing the partials
        of the one before; None when an operand reads a blocked loop other than by its bare index."""
        shape, reduced = x.shape, tuple(sorted(node.attr("axes")))
        value = None
        for k, step in enumerate(steps):
            if k:
                plan, tree = self._plain_input(value, node.dtype)
            value = self._sum_step(plan, tree, shape, step, node.dtype)
            if value is None:
                return None
            shape, reduced = step.result(shape, reduced)
        return value

    def _sum_step(self, plan: Plan, tree: tuple, shape: tuple[int, ...], step: blocking.Step, dtype: str) -> ir.Value | None:
        """One step of a blocked sum: the whole axes summed and the blocked axis summed block by
        block (the last block also takes the tail past the last full block)."""
        start, lanes_attr = scalar.reduction_identity("sum", dtype, False), step.lanes
        if step.block is None:
            return self._reduce(plan, tree, step.axes, fill(without(shape, step.axes), dtype, start), "sum", dtype, lanes_attr)
        axis, size = step.block
        count, tail = divmod(shape[axis], size)
        split = split_inputs(plan, tree, axis, size, count)
        if split is None:
            return None
        domain = shape[:axis] + (count, size) + shape[axis + 1:]
        summed = tuple(a if a < axis else a + 1 for a in step.axes) + (axis + 1,)
        value = self._reduce(Plan(domain, split), tree, summed, fill(without(domain, summed), dtype, start), "sum", dtype, lanes_attr)
        if not tail:
            return value
        # The tail past the last full block is added into the last block's partials, in place.
        kept = without(shape, step.axes)
        at = sum(1 for a in range(axis) if a not in step.axes)  # the blocked axis among the partials' dims
        offsets = [count - 1 if d == at else 0 for d in range(len(kept))]
        sizes = [1 if d == at else n for d, n in enumerate(kept)]
        last_type = ir.RankedTensorType.get([n for d, n in enumerate(kept) if d != at], scalar.storage_type(dtype))
        last = tensor.extract_slice(last_type, value, [], [], [], offsets, sizes, [1] * len(kept))
        tail_plan = Plan(shape[:axis] + (tail,) + shape[axis + 1:], tail_inputs(plan, axis, count * size, tail))
        last = self._reduce(tail_plan, tree, tuple(sorted(step.axes + (axis,))), last, "sum", dtype, lanes_attr)
        return tensor.insert_slice(last, value, [], [], [], offsets, sizes, [1] * len(kept))

    def _reduce(self, plan: Plan, tree: tuple, axes: tuple[int, ...], init: ir.Value, op: str, dtype: str,
                lanes_attr: int | None) -> ir.Value:
        """The generic reducing `axes` of plan's domain into init with `op` (tagged with its lanes, if any); on a
        CPU, one reduced outer axis met a block of rows per pass (_rows_innermost), the rows in order."""
        blocks = _rows_innermost(plan, tree, axes) if lanes_attr is None and self.target.device is None else None
        if blocks is not None:
            plan, axes = blocks, (axes[0], len(plan.domain))
        rank = len(plan.domain)
        dims = [ir.AffineDimExpr.get(i) for i in range(rank)]
        out_map = ir.AffineMap.get(rank, 0, [d for i, d in enumerate(dims) if i not in axes])
        iterators = ["reduction" if i in axes else "parallel" for i in range(rank)]
        value = self._generic(plan, tree, init, out_map, iterators, op, dtype)
        _tag_lanes(value, lanes_attr)
        return value

    # --- contractions and data movement -------------------------------------------------------
    def _operand(self, node: Node) -> tuple[ir.Value, bool]:
        """A matmul operand as (tensor, transposed): a 2-D transpose is folded into the indexing map."""
        if node.op == "transpose" and node.ndim == 2 and id(node) not in self.values:
            return self.materialize(node.inputs[0]), True
        return self.materialize(node), False

    def _matmul(self, node: Node, cache_tiles: tuple[int, ...] | None = None) -> ir.Value:
        if cache_tiles is not None and (
            len(cache_tiles) != 3 or any(not isinstance(t, int) or t < 1 for t in cache_tiles) or node.ndim not in (2, 3)
        ):
            raise CompileError(f"matmul_tiled: tiles must be Vec(TM, TN, TK), each >= 1, on a 2-D or batched "
                               f"matmul; got {cache_tiles} for a {node.ndim}-D product")
        value = self._contraction(node)
        tiling.tag(value.owner, self.target, cache_tiles=cache_tiles)  # et.tiles / et.vec: the "tile" stage tiles and vectorizes it
        return value

    def _contraction(self, node: Node) -> ir.Value:
        a, b = node.inputs
        init = self._filled(node, 0)
        if a.ndim == 2 and b.ndim == 2:
            (ta, at), (tb, bt) = self._operand(a), self._operand(b)
            if not (at or bt):
                return linalg.matmul(ta, tb, outs=[init])
            m, n, k = (ir.AffineDimExpr.get(i) for i in range(3))
            maps = [[k, m] if at else [m, k], [n, k] if bt else [k, n], [m, n]]
            attrs = [ir.AffineMap.get(3, 0, e) for e in maps]
            return linalg.matmul(ta, tb, outs=[init], indexing_maps=attrs)
        ta, tb = self.materialize(a), self.materialize(b)
        if a.ndim == 3:
            return linalg.batch_matmul(ta, tb, outs=[init])
        if a.ndim == 2:
            return linalg.matvec(ta, tb, outs=[init])
        if b.ndim == 2:
            return linalg.vecmat(ta, tb, outs=[init])
        return linalg.dot(ta, tb, outs=[init])

    def _concat(self, node: Node) -> ir.Value:
        """Each part is computed (fused, views as maps) by a generic into a fresh tensor that is
        inserted into the result: empty-tensor elimination makes the generic write its slice of
        the result in place (inserting an argument as is would copy it through a runtime call)."""
        axis = node.attr("axis")
        # Filled, not empty: empty-tensor elimination of a tensor.empty with several slice users
        # rewires only one of them, and the other parts are then copied through a runtime call.
        result = self._filled(node, 0)
        offset = 0
        for part in node.inputs:
            base = part
            while is_view(base) and not reverses(base):
                base = base.inputs[0]
            if base.op in ELEMENTWISE and _fused_ops(base) > SHIFTED_FUSE_MAX:  # read by the others too (np.roll's parts)
                self.materialize(base)
            if part.size:
                offsets, sizes, strides = [offset if d == axis else 0 for d in range(node.ndim)], list(part.shape), [1] * node.ndim
                result = tensor.insert_slice(self._group(part), result, [], [], [], offsets, sizes, strides)
            offset += part.shape[axis]
        return result

    def _gather(self, node: Node) -> ir.Value:
        """A generic over the result computing each index (fused) and reading x there with
        tensor.extract (the tracer made every index valid); x's other dims follow the loop."""
        x, idx = node.inputs
        axis, k = node.attr("axis"), idx.ndim - x.ndim + 1
        source = self.materialize(x)
        plan = Plan(node.shape)
        tree = self._scalar(idx, [ir.AffineDimExpr.get(i) for i in range(node.ndim)], plan)
        init = self._empty(node)
        maps = [m for _, m, _ in plan.inputs] + [ir.AffineMap.get_identity(node.ndim)]
        op = linalg.GenericOp(
            result_tensors=[init.type], inputs=[v for v, _, _ in plan.inputs], outputs=[init],
            indexing_maps=ir.ArrayAttr.get([ir.AffineMapAttr.get(m) for m in maps]),
            iterator_types=ir.ArrayAttr.get([ir.Attribute.parse("#linalg.iterator_type<parallel>")] * node.ndim),
        )
        dtypes = [dt for _, _, dt in plan.inputs] + [node.dtype]
        block = op.regions[0].blocks.append(*(scalar.storage_type(dt) for dt in dtypes))
        with ir.InsertionPoint(block):
            args = [scalar.load(a, dt) for a, dt in zip(block.arguments, dtypes, strict=True)]
            at = arith.index_cast(ir.IndexType.get(), _emit_tree(tree, args, {}))
            zero = arith.constant(ir.IndexType.get(), 0)
            coords = [at if d == axis else zero if n == 1 else linalg.IndexOp(d if d < axis else d + k - 1).result
                      for d, n in enumerate(x.shape)]
            linalg.YieldOp([tensor.extract(source, coords)])
        return op.result

    def _scatter_add(self, node: Node) -> ir.Value:
        """A serial scf.for over the elements computing each index and weight (fused, iotas read from
        their own buffers) and adding the weight into its bin: read-modify-write of the bins, in order
        (NumPy's bincount order, so float sums round as NumPy's); the tracer made every index valid."""
        idx, weights = node.inputs
        bins = self._filled(node, 0)
        if not idx.size:
            return bins
        plan = Plan(idx.shape)
        at = [ir.AffineDimExpr.get(0)]
        trees = [self._scalar(x, at, plan, indices=False) for x in (idx, weights)]
        index = ir.IndexType.get()
        lower, upper, one = (arith.constant(index, n) for n in (0, idx.size, 1))
        loop = scf.ForOp(lower, upper, one, [bins])
        with ir.InsertionPoint(loop.body):
            i, acc = loop.induction_variable, loop.inner_iter_args[0]
            args = [scalar.load(tensor.extract(v, [affine.AffineApplyOp(ir.AffineMap.get(1, 0, [e]), [i]).result for e in m.results]), dt)
                    for v, m, dt in plan.inputs]
            memo: dict[tuple, ir.Value] = {}
            k, w = (_emit_tree(t, args, memo) for t in trees)
            k = arith.index_cast(index, k)
            total = scalar.apply("add", node.dtype, node.dtype, [scalar.load(tensor.extract(acc, [k]), node.dtype), w])
            scf.YieldOp([tensor.insert(scalar.store(total, node.dtype), acc, [k])])
        return loop.results[0]

    def _shares_a_buffer(self, node: Node) -> bool:
        """Whether node is, or views (through reshapes and view ops), an argument, a constant or an output: a buffer an
        in-place insert into it must not write."""
        while not (node.op in ("arg", "array") or id(node) in self.outputs):
            if not (node.op == "reshape" or node.op in ops.VIEWS):
                return False
            node = node.inputs[0]
        return True

    def _update_slice(self, node: Node) -> ir.Value:
        """The value (fused, views as maps) inserted into the base's strided box. An argument base is
        copied first (bufferization must not write into the caller's array), and so is a base that is
        also an output: eliminate-empty-tensors would compute it in its output buffer, and the insert,
        in place, would then write that output too; likewise a base that views one (a reshape of an output)."""
        base, value = node.inputs
        into = self._copy(base) if self._shares_a_buffer(base) else self.materialize(base)
        if not value.size:
            return into
        start, step, size = (list(node.attr(n)) for n in ("start", "step", "size"))
        updated = tensor.insert_slice(self._group(value), into, [], [], [], start, size, step)
        self.updates += 1
        if self.updates < policy.UPDATE_CHAIN or self.target.device is not None:
            return updated
        self.updates = 0
        return _cut(updated)

    def _copy(self, node: Node) -> ir.Value:
        """A new tensor of node's elements for an insert to write in place: an output's value by linalg.copy
        (canonicalization, run by the tile stage, erases an identity linalg.generic, and the insert then
        writes the output's buffer), anything else by its group (views read as maps)."""
        if id(node) in self.outputs and node.op not in ("arg", "array"):
            return linalg.copy(self.materialize(node), outs=[self._empty(node)])
        return self._group(node)

    def _reshape(self, node: Node) -> ir.Value:
        return _unflatten(self._flat(node.inputs[0]), node)

    def _flat(self, src: Node) -> ir.Value:
        """src's elements in row-major order, as a 1-D tensor."""
        # A non-C argument cannot be collapsed in place: copy it to C order with a generic first.
        value = self._group(src) if src.op == "arg" and src.attr("layout") != "C" else self.materialize(src)
        flat = ir.RankedTensorType.get([src.size], scalar.storage_type(src.dtype))
        return value if src.ndim == 1 else tensor.collapse_shape(flat, value, _reassociation(src.ndim))

    def _cpu_only(self, what: str) -> None:
        """UnsupportedError naming `what` (loops on buffers, lowering/sorting.py and factor.py) on a GPU target."""
        device = self.target.device
        if device is not None:
            raise UnsupportedError(f"GPU target {device.backend}: {what} is not supported yet on {device.chip}; compile for a CPU target")

    def _sort(self, node: Node) -> ir.Value:
        """sort/argsort of the last axis (merge-sort loops on buffers), searchsorted (a binary search per
        element): lowering/sorting.py, CPU only."""
        self._cpu_only(f"np.{node.op} (and median, quantile, percentile, partition, which sort)")
        x = node.inputs[0]
        n = x.shape[-1]
        if node.op == "searchsorted":
            v = node.inputs[1]
            parallel = self.target.name == "cpu-openmp" and v.size > 1
            found = sorting.search_sorted(self.materialize(x), n, self._flat(v), v.size, x.dtype, bool(node.attr("right")), parallel)
            return _unflatten(found, node)
        rows = x.size // n
        parallel = self.target.name == "cpu-openmp" and rows > 1
        return _unflatten(sorting.sort_rows(self._flat(x), rows, n, x.dtype, node.op == "argsort", parallel), node)

    def _factor(self, node: Node) -> ir.Value:
        """lu, lu_solve, cholesky, qr, eigh, svd of each matrix of the last two axes: loops on buffers
        (lowering/factor.py, lowering/orthogonal.py), CPU only."""
        self._cpu_only(f"the {node.op} primitive of np.linalg.solve, inv, det, slogdet, cholesky, qr, eigh, svd and those built on them")
        a = node.inputs[0]
        n = a.shape[-2]
        count = a.size // (n * a.shape[-1])
        parallel = self.target.name == "cpu-openmp" and count > 1
        if node.op in ("qr", "eigh", "svd"):
            sizes = (n,) if node.op == "eigh" else (n, a.shape[-1], *node.attrs)  # qr: its Q columns
            return _unflatten(getattr(orthogonal, node.op)(self._flat(a), count, *sizes, a.dtype, parallel), node)
        if node.op == "lu_solve":
            b = node.inputs[1]
            return _unflatten(factor.lu_solve(self._flat(a), self._flat(b), count, n, b.shape[-1], a.dtype, parallel), node)
        build = factor.lu if node.op == "lu" else factor.cholesky
        return _unflatten(build(self._flat(a), count, n, a.dtype, parallel), node)

    def _recurrence(self, node: Node) -> ir.Value:
        """A linear recurrence along an axis (scipy.signal's lfilter, sosfilt and the filters built on them; scipy.ndimage's
        spline prefilter): loops on buffers (lowering/recurrence.py), CPU only."""
        self._cpu_only(f"the {node.op} primitive of scipy.signal's lfilter, sosfilt, filtfilt, sosfiltfilt and scipy.ndimage's spline_filter")
        x, axis = node.inputs[0], node.attr("axis")
        shape = (math.prod(x.shape[:axis]), x.shape[axis], math.prod(x.shape[axis + 1:]))
        parallel = self.target.name == "cpu-openmp" and shape[0] * shape[2] > 1
        if node.op == "spline_filter":
            return _unflatten(recurrence.spline_rows(self._flat(x), shape, node.attr("order"), node.attr("mode"), parallel), node)
        _, coefficients, state = node.inputs
        sections, _, taps = coefficients.shape
        flat = recurrence.filter_rows(self._flat(x), self._flat(coefficients), self._flat(state), shape, sections, taps - 1,
                                      node.attr("form"), node.attr("columns") > 0, x.dtype, parallel)
        return _unflatten(flat, node)


def _unflatten(flat: ir.Value, node: Node) -> ir.Value:
    """A 1-D tensor of node's elements (row-major) in node's shape."""
    return flat if node.ndim == 1 else tensor.expand_shape(_tensor_type(node), flat, _reassociation(node.ndim), [], list(node.shape))


def constant_attr(node: Node) -> ir.DenseElementsAttr:
    """The elements of an `array` node (bool stored as 0/1 bytes, as NumPy's)."""
    data = np.frombuffer(bytes.fromhex(node.attr("data")), dtype=node.dtype).reshape(node.shape)
    return ir.DenseElementsAttr.get(data.astype(np.int8) if node.dtype == "bool" else data, type=_tensor_type(node))


def _tag_lanes(value: ir.Value, lanes_attr: int | None) -> None:
    """Hand the lanes the optimizer chose to the "lanes" stage (lowering/stages/lanes.py)."""
    if lanes_attr is not None:
        value.owner.attributes[LANES] = ir.IntegerAttr.get(ir.IntegerType.get_signless(64), lanes_attr)


def _loop_index(dim: int, offset: int = 0) -> ir.Value:
    """Loop `dim`'s index in a linalg body as an i64, plus `offset`."""
    at = arith.index_cast(scalar.element_type("int64"), linalg.IndexOp(dim).result)
    return arith.addi(at, scalar.constant(offset, "int64")) if offset else at


def _lane_index(dim: int, inner: int, lanes: int) -> ir.Value:
    """The position along loop `dim` of a domain whose loop `inner` is split into (blocks, lanes)."""
    if dim != inner:
        return _loop_index(dim)
    return arith.addi(arith.muli(_loop_index(inner), scalar.constant(lanes, "int64")), _loop_index(inner + 1))


def _rows_innermost(plan: Plan, tree: tuple, axes: tuple[int, ...]) -> Plan | None:
    """plan with its one reduced outer axis split into blocks of policy.OUTER_ROWS rows, the rows of a block
    its new innermost loop (loops: .., blocks, .., rows), so a reduction into the kept loops meets a block's
    rows in one pass, in order; None unless one non-innermost axis is reduced whose length the block
    divides, read by its bare index (and not computed from the loop indices: split_inputs)."""
    rank, rows = len(plan.domain), policy.OUTER_ROWS
    if len(axes) != 1 or axes[0] == rank - 1 or plan.domain[axes[0]] % rows:
        return None
    a, count = axes[0], plan.domain[axes[0]] // rows
    split = split_inputs(plan, tree, a, rows, count)
    if split is None:
        return None
    e = [ir.AffineDimExpr.get(i) for i in range(rank + 1)]
    order = ir.AffineMap.get(rank + 1, 0, e[:a] + [e[a], e[rank]] + e[a + 1:rank])  # (.., block, .., row) -> split domain
    return Plan(plan.domain[:a] + (count,) + plan.domain[a + 1:] + (rows,), [(v, compose(m, order), dt) for v, m, dt in split])


def _reassociation(rank: int) -> ir.ArrayAttr:
    """All `rank` dims as one (a collapse to 1-D, or an expand from it)."""
    return dim_groups([list(range(rank))] if rank else [])


def _by_row(indices: ir.Value, shape: tuple[int, ...], axes: tuple[int, ...], n: int) -> ir.Value:
    """argrows' (rows, 1) indices as the reduction's result, of shape `shape` without `axes`."""
    kept, size = without(shape, axes), math.prod(shape)
    if not kept:
        return tensor.collapse_shape(ir.RankedTensorType.get([], indices.type.element_type), indices, dim_groups([]))
    by_row = tensor.collapse_shape(ir.RankedTensorType.get([size // n], indices.type.element_type), indices, dim_groups([[0, 1]]))
    if len(kept) == 1:
        return by_row
    return tensor.expand_shape(ir.RankedTensorType.get(list(kept), indices.type.element_type), by_row,
                               dim_groups([list(range(len(kept)))]), [], list(kept))


def _fused_ops(node: Node) -> int:
    """How many elementwise ops computing `node` a loop would fuse (through views), counted up to SHIFTED_FUSE_MAX + 1."""
    stack, seen = [node], set()
    while stack and len(seen) <= SHIFTED_FUSE_MAX:
        n = stack.pop()
        if id(n) in seen or not (n.op in ELEMENTWISE or (is_view(n) and not reverses(n))):
            continue
        seen.add(id(n))
        stack.extend(n.inputs)
    return len(seen)


def _index_value(amap: ir.AffineMap, dtype: str) -> ir.Value:
    """The index `amap` gives (of the loop indices, linalg.index) as a scalar of `dtype`."""
    loops = [linalg.IndexOp(d).result for d in range(amap.n_dims)]
    index = affine.AffineApplyOp(amap, loops).result
    return scalar.cast(arith.index_cast(scalar.element_type("int64"), index), "int64", dtype)


def _emit_tree(tree: tuple, args: list[ir.Value], memo: dict[object, ir.Value]) -> ir.Value:
    """Emit the scalar ops of a body expression tree once per subtree (operands first, with an explicit
    stack: any depth). Leaves are one value per equal leaf; ops one per subtree object (`_scalar` shares
    a node's subtree at an index): hashing whole subtrees would walk a shared one once per path."""
    def key(sub: tuple) -> object:
        return sub if sub[0] in ("in", "c", "iota") else id(sub)

    stack = [(tree, False)]
    while stack:
        sub, ready = stack.pop()
        if key(sub) in memo:
            continue
        kind = sub[0]
        if kind == "in":
            memo[sub] = args[sub[1]]
        elif kind == "c":
            memo[sub] = scalar.constant(sub[1], sub[2])
        elif kind == "iota":
            memo[sub] = _index_value(sub[1], sub[2])
        elif ready:
            op, in_dtype, out_dtype, children = sub
            memo[id(sub)] = scalar.apply(op, in_dtype, out_dtype, [memo[key(c)] for c in children])
        else:
            stack.append((sub, True))
            stack.extend((c, False) for c in reversed(sub[3]))
    return memo[key(tree)]


def emit(outputs: list[Node], names: Sequence[str], specs: Sequence[ArgSpec], target: Target, fn_name: str = "kernel",
         streaming: bool = True, fastmath: frozenset[str] = frozenset(), locations: Mapping[int, Where] | None = None,
         located: list[tuple[str, list[tuple[str, str]]]] | None = None, source: Line | None = None) -> str:
    """MLIR text of a module with one C-interface function `fn_name(args..., outs...)`, its contractions
    tagged with `target`'s tiles; streaming=False marks it so that lowering/stages/loops.py keeps plain
    stores; `fastmath` (LLVM's flags) go on its float arithmetic, and "afn" marks it so that
    lowering/stages/math.py also approximates tanh. With `locations`
    (provenance.located) the ops carry the user's source lines: `located` receives the module printed
    with them (the text the pipeline runs on, so diagnostics name those lines) and (name, location) of
    each op of the function's body but its boilerplate."""
    with NATIVE, ir.Context() as context, _function_location(source, context):  # (no fork meanwhile: egglog_tensor/forked.py)
        module = ir.Module.create()
        arg_types = [memref_type(s) for s in specs]
        out_types = [ir.MemRefType.get(list(o.shape), scalar.storage_type(o.dtype)) for o in outputs]
        with ir.InsertionPoint(module.body):
            fn = func.FuncOp(fn_name, (arg_types + out_types, []))
            fn.attributes["llvm.emit_c_interface"] = ir.UnitAttr.get()
            tags = [ir.DictAttr.get({})] * len(arg_types) + [ir.DictAttr.get({OUTPUT: ir.UnitAttr.get()})] * len(out_types)
            fn.attributes["arg_attrs"] = ir.ArrayAttr.get(tags)  # outputs marked: lowering/stages/loops.py streams large ones
            if not streaming:
                fn.attributes[PLAIN_STORES] = ir.UnitAttr.get()
            if "afn" in fastmath:
                fn.attributes[FASTMATH] = ir.UnitAttr.get()
            entry = fn.add_entry_block()
            with ir.InsertionPoint(entry):
                emitter = Emitter(target, locations, outputs)
                for name, spec, arg in zip(names, specs, entry.arguments, strict=False):
                    ttype = ir.RankedTensorType.get(list(spec.shape), scalar.storage_type(spec.dtype))
                    emitter.arg_tensors[name] = bufferization.to_tensor(ttype, arg, restrict=True)
                    if spec.layout != "C" and len(spec.shape) > 0:
                        emitter.strided.append(emitter.arg_tensors[name])
                    emitter.arg_memrefs[name] = arg
                outs = list(entry.arguments)[len(specs):]
                emitter.kernels_first(outputs)
                for node, out in zip(outputs, outs, strict=True):
                    value = emitter.output(node)
                    bufferization.materialize_in_destination(None, value, out, restrict=True, writable=True)
                func.ReturnOp([])
        scalar.allow_fast_math(module.operation, frozenset(fastmath))
        module.operation.verify()
        if located is not None:
            ops = [(op.name, str(op.location)) for op in entry.operations if op.name not in _BOILERPLATE]
            located.append((module.operation.get_asm(enable_debug_info=True), ops))
        return str(module)


def _function_location(source: Line | None, context: ir.Context) -> ir.Location:
    """The location of the function and of ops no value of the program made: the line defining the
    user's function (the debug-info stage's DISubprogram), else unknown."""
    return ir.Location.file(*source, 0, context=context) if source else ir.Location.unknown(context=context)


_BOILERPLATE = ("arith.constant", "func.return", "bufferization.to_tensor", "bufferization.materialize_in_destination")
