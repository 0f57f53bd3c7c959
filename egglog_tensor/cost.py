"""The shape-aware egglog cost model: estimated nanoseconds of the kernels a term compiles to.

A kernel is one loop nest. Its time is a roofline, max(flops / peak, bytes / bandwidth), plus a
fixed per-kernel overhead. Elementwise work not under `materialize` is fused into its consumer:
it adds flops (recomputed under a broadcast) but no memory traffic. Kernels close at
`materialize`, reductions, contractions and outputs. Costs flow bottom-up through extraction;
each child's cost also carries what the child statically is (shape and dtype, or a literal),
so every node is priced from its real shapes. All machine numbers come from the Target it prices
for (egglog_tensor/target.py: caches, threads, and the throughputs in its `Machine`).

Row fusion (`fuse_rows(x)`): each cost also carries the `Rows` below it — the closed kernels whose
outputs are row-aligned with the value (row reductions, materialized values of the same leading
extent, reached through same-rank elementwise ops). Computed block by block inside x's loop they
become one kernel: their flops add up, but memory is read once per distinct input buffer and
written once for x; their own intermediates stay in cache. `rows_slowdown` prices the loop's
block (`fuse_rows_tiled`: rows per block), as `tile_slowdown` does a matmul's tiles.

Elementwise, reduction and matmul flops of an 8-byte type count twice on a CPU (half the vector lanes).

Reductions whose innermost loop reduces also pay the time they wait on add latency beyond an ideal
loop, with the lanes the term chose (`x.sum_lanes(axes, L)`) or LLVM's own (`reduce_slowdown`),
standalone and in a row-fused loop alike: a parent's price must fall whenever a child's does, or
egglog's extractor finds no acyclic best term (it panics), so a reduction is priced the same way
wherever it runs.

On a GPU target (`target.device`) a kernel is one launch, priced as the same roofline with the
device's numbers (gpu/targets.py: its bandwidth, FLOP rate, a transcendental at a few dozen flops,
the launch overhead), reading each distinct buffer once; float64 work (and float32 math the device
computes in float64) at the device's float64 rate (1/2 of float32's on datacenter parts, 1/64 on an RTX 4090). The CPU's caches, threads and vector lanes
play no part, so neither do row blocks, add-latency chains or matmul cache tiles; `fuse_rows(x)` is
one launch, a block per row (lowering/gpu/rows.py), reading each distinct input once.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, replace
from typing import Any, NamedTuple

import numpy as np
from egglog import EGraph, get_callable_fn

from .graph import Node
from .ops import ELEMENTWISE, FACTORS, INDEX_REDUCTIONS, RECURRENCES, REDUCTIONS, SCANS, SORTS, TRANSCENDENTAL, VIEWS, infer, is_view
from .ir import OP_OF, literal
from .gpu.targets import FLOAT32_MATH
from .gpu.tiles import matmul_time
from .lowering.policy import block_rows, choose_tiles, padded_loops, padded_tiles, register_tile, simd_lanes
from .target import Machine, Target


_EPSILON = 1e-3  # every node costs something, so extraction never prefers a longer equivalent term


Input = tuple[Any, float]  # (identity of a buffer read from memory, its bytes)


class RowKernel(NamedTuple):
    """One closed kernel of a `Rows`: what identifies it (two uses of one kernel are one), the
    elements it combines per output element (a reduction's row length) and the part of its time
    that waits on add latency."""

    op: str
    attrs: Any
    shape: tuple[int, ...]
    dtype: Any
    below: Any  # the time closed below it, or its input's value when priced locally (kernels alike but for their inputs stay apart)
    flops: float
    row: int
    latency: float
    time: float = 0.0  # its own time


@dataclass(frozen=True)
class Rows:
    """Closed kernels below a value whose outputs are row-aligned with it (rows = its axis 0): their
    time as summed in the costs below (a shared kernel once per use), each distinct kernel with its
    flops, and the buffers they read from memory."""

    time: float
    kernels: frozenset[RowKernel]
    inputs: frozenset[Input]

    @property
    def flops(self) -> float:
        return math.fsum(k.flops for k in self.kernels)

    def __add__(self, other: Rows | None) -> Rows:
        if other is None:
            return self
        return Rows(self.time + other.time, self.kernels | other.kernels, self.inputs | other.inputs)


@functools.total_ordering
@dataclass(frozen=True, eq=False)
class Cost:
    """A subterm's price. `total` compares terms: closed kernels below (`done`) plus this value's
    own kernel if it were materialized now. A fused value (`buffer` False) carries its pending
    `flops` and the bytes its kernel would `read` (the buffers in `inputs`); `meta` is the static
    shape+dtype (a Node) or literal; `rows` the row-aligned kernels below it (module docstring)."""

    total: float
    meta: Any = None
    done: float = 0.0
    flops: float = 0.0
    reads: float = 0.0
    buffer: bool = True
    inputs: frozenset[Input] = frozenset()
    rows: Rows | None = None
    value: Any = None  # which value it is, when the DAG extractor prices (egglog_tensor/extract.py: its e-class)
    escaped: frozenset[RowKernel] = frozenset()  # row kernels below also read outside a row-aligned path (priced locally)

    def __lt__(self, other: Cost) -> bool:
        return self.total < other.total

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Cost) and self.total == other.total and _key(self.meta) == _key(other.meta)

    def __hash__(self) -> int:
        return hash((self.total, _key(self.meta)))


def _key(meta: Any) -> Any:
    """Value identity of a cost's meta (stand-in Nodes compare by shape and dtype)."""
    if isinstance(meta, Node):
        return ("tensor", meta.shape, meta.dtype)
    if isinstance(meta, tuple):
        return tuple(_key(m) for m in meta)
    return meta


def _bytes(node: Node) -> float:
    return float(node.size * np.dtype(node.dtype).itemsize)


class TensorCostModel:
    """egglog CostModel over the tensor language (see the module docstring for the model)."""

    def __init__(self, target: Target, local: bool = False) -> None:
        self.target = target
        self.machine: Machine = target.machine
        self.gpu = target.device is not None  # priced per launch, without the CPU's caches and lanes (module docstring)
        # local: children come priced alone (done 0: the DAG extractor adds each closed kernel once), so a
        # row-fused loop's saving on the kernels it absorbs may exceed what this node closes itself
        self.floor = -math.inf if local else 0.0

    # --- helpers ---------------------------------------------------------------------------
    def _dtype_weight(self, op: str, dtype: str) -> float:
        """One flop of `op` with result `dtype` in float32 flops. On a GPU: float64 work, and float32 math
        the device computes in float64 (all but FLOAT32_MATH), at the device's float64 rate; on a CPU, an
        8-byte type fills half the vector lanes of a 4-byte one."""
        if self.target.device is None:
            return max(1.0, np.dtype(dtype).itemsize / 4)
        wide = dtype == "float64" or (op in TRANSCENDENTAL and op not in FLOAT32_MATH)
        return self.target.device.flops_weight("float64" if wide else "float32")

    def _copy(self, meta: Node) -> float:
        """ns of copying `meta` into a row-major buffer: its bytes read and written, slower across rows on a CPU."""
        slowdown = 1.0 if self.gpu or _row_major(meta) else self.machine.transposed_copy_slowdown
        return self.machine.kernel(0.0, 2 * _bytes(meta) * slowdown)

    def closed(self, c: Cost) -> float:
        """ns of everything below `c` once `c` is in memory (its own kernel closed if fused)."""
        if c.buffer or not isinstance(c.meta, Node):
            return c.done
        return c.done + self.machine.kernel(c.flops, c.reads + _bytes(c.meta))

    def _fused(self, out: Node, done: float, flops: float, reads: float,
               inputs: frozenset[Input] = frozenset(), rows: Rows | None = None) -> Cost:
        total = done + self.machine.kernel(flops, reads + _bytes(out))
        return Cost(total + _EPSILON, out, done, flops, reads, False, inputs, rows)

    def _buffer(self, out: Node, done: float, rows: Rows | None = None) -> Cost:
        return Cost(done + _EPSILON, out, done + _EPSILON, rows=rows)

    def _closing(self, x: Cost, out: Node, flops: float, inputs: frozenset[Input], time: float, latency: float = 0.0) -> Rows | None:
        """The Rows of a kernel producing `out` from `x` (leading extent kept) that took `time`; its
        key ends with the elements it combines per output element (a reduction's row length) and
        the part of `time` a reduction waits on add latency."""
        if out.ndim == 0 or x.meta.ndim == 0 or out.shape[0] != x.meta.shape[0]:
            return None
        below = x.done if x.value is None else x.value
        kernel = RowKernel(out.op, out.attrs, out.shape, out.dtype, below, flops, x.meta.size // max(out.size, 1), latency, time)
        return Rows(time, frozenset({kernel}), inputs) + x.rows

    def _fuse_rows(self, x: Cost, out: Node, tiles: tuple[int, ...] | None = None) -> Cost:
        """`fuse_rows(x)`: x's kernel and the Rows below it as one loop over row blocks, with the
        `tiles` of `fuse_rows_tiled` (rows per block) or the lowering's default."""
        if x.buffer and x.rows is None:  # nothing to fuse: that buffer (a view of one is still a view)
            return replace(x, total=x.total + _EPSILON, done=x.done + _EPSILON)
        closed = self.closed(x)
        if x.rows is None or out.ndim < 1:
            return self._buffer(out, closed + _EPSILON)
        rows = x.rows
        flops, inputs = rows.flops, rows.inputs
        if not x.buffer:
            flops, inputs = flops + x.flops, inputs | x.inputs
        if self.gpu:  # one launch, a block per row: each input read once (a row staged in workgroup memory), out written
            fused = self.machine.kernel(flops, math.fsum(b for _, b in inputs) + _bytes(out))
            return self._buffer(out, max(closed - self._absorbed(x) - (closed - x.done) + fused, self.floor) + _EPSILON)
        reductions = [kernel for kernel in rows.kernels if kernel.op in REDUCTIONS]
        values = 1 + len(inputs) + len(rows.kernels) - len(reductions)
        itemsize = np.dtype(out.dtype).itemsize
        shape = (out.shape[0], max([math.prod(out.shape[1:]), *(k.row for k in reductions)]))  # rows, longest row read
        untiled = _EPSILON if tiles is None else 0.0  # chosen tiles are shown when they tie with the default
        block = tiles[0] if tiles else block_rows(shape[0], shape[1] * itemsize * values, self.target)
        passes = sum(1 for k in reductions if k.row >= REREAD_ROW)
        memory, balance, overhead = rows_slowdown(shape, block, itemsize, values, self.target, passes)
        m = self.machine
        # The reductions run on the block in cache: the time they wait on add latency (with their lanes)
        # is not hidden behind memory traffic.
        chains = math.fsum(k.latency for k in reductions)
        fused = balance * (max(flops / m.gflops, memory * (math.fsum(b for _, b in inputs) + _bytes(out)) / m.bandwidth_gbs) + chains)
        fused += m.kernel_overhead_ns + overhead
        own = closed - x.done  # x's own kernel, when x is still pending
        return self._buffer(out, max(closed - self._absorbed(x) - own + fused, self.floor) + untiled)

    def _absorbed(self, x: Cost) -> float:
        """ns of the row kernels below `x` that its row-fused loop absorbs: locally (the DAG extractor's)
        each kernel once, as the DAG counts it, but not one also read outside the loop (it still runs)."""
        assert x.rows is not None
        return x.rows.time if self.floor == 0.0 else math.fsum(k.time for k in x.rows.kernels - x.escaped)

    # --- the model ---------------------------------------------------------------------------
    def __call__(self, egraph: EGraph, expr: Any, children: list[Cost]) -> Cost:
        fn = get_callable_fn(expr)
        op = OP_OF.get(fn) if fn is not None else None
        if op is None:  # literals, dtypes, layouts, Vec containers, Program: outputs are materialized
            try:
                meta = literal(expr)
            except ValueError:
                meta = tuple(c.meta for c in children)
            return self.container(meta, children)
        return self.call(op, children)

    def container(self, meta: Any, children: list[Cost]) -> Cost:
        """The Cost of a literal or container (Vec, Program) of `children`: its tensors in memory."""
        total = math.fsum(self.closed(c) for c in children)
        return Cost(total, meta, done=total)

    def written(self, outputs: list[Cost]) -> float:
        """ns of a program whose outputs cost `outputs`: each in memory, and each no kernel writes (an
        argument, or a view of a buffer: `b.T`, `x[::2]`) copied into its output array, read and written."""
        copies = math.fsum(self._copy(c.meta) for c in outputs if c.buffer and _unwritten(c.meta))
        return self.container(None, outputs).total + copies

    def call(self, op: str, children: list[Cost]) -> Cost:
        """The Cost of `op` applied to `children` (tensor and attribute costs in the term's order)."""
        if op == "concat":
            parts, axis = children
            out = _meta(op, tuple(parts.meta), (axis.meta,))
            return self._buffer(out, parts.total + self.machine.kernel(0.0, 2 * _bytes(out)))
        tensors = [c for c in children if isinstance(c.meta, Node)]
        attrs = tuple(c.meta for c in children if not isinstance(c.meta, Node))
        out = _meta(op, tuple(c.meta for c in tensors), attrs)
        return self.price(op, tensors, out)

    def price(self, op: str, ins: list[Cost], out: Node) -> Cost:
        """The Cost of `op` producing `out` from children costs `ins` (priced locally: with the row
        kernels below that a reader outside a row-aligned path needs, so a row-fused loop cannot absorb them)."""
        cost = self._price(op, ins, out)
        if self.floor == 0.0:
            return cost
        carried = cost.rows.kernels if cost.rows is not None else frozenset()
        escaped = frozenset().union(*(c.escaped | (c.rows.kernels - carried if c.rows is not None else frozenset()) for c in ins))
        return replace(cost, escaped=escaped) if escaped else cost

    def _price(self, op: str, ins: list[Cost], out: Node) -> Cost:
        m = self.machine
        if op in ("arg", "array"):
            return self._buffer(out, 0.0)
        if op == "const":
            return Cost(_EPSILON, out, buffer=False)
        if op == "iota":  # an index computed per element of its reader: one op each, no memory read
            return self._fused(out, 0.0, float(out.size), 0.0)
        if op in ("fuse_rows", "fuse_rows_tiled"):
            return self._fuse_rows(ins[0], out, out.attr("tiles") if op == "fuse_rows_tiled" else None)
        if op == "materialize":
            (x,) = ins
            if not _row_major(x.meta):  # a layout-changing copy
                return self._buffer(out, self.closed(x) + self._copy(x.meta))
            if x.buffer:
                return Cost(x.total + _EPSILON, out, x.done + _EPSILON, rows=x.rows)
            time = self.closed(x) - x.done
            return self._buffer(out, x.done + time, self._closing(x, out, x.flops, x.inputs, time))
        view = is_view(op, ins[0].meta.shape, out.shape)
        if op in ELEMENTWISE or view:
            weight = _math_flops(op, out.dtype, m) if op in TRANSCENDENTAL else (1.0 if op in ELEMENTWISE else 0.0)
            weight *= self._dtype_weight(op, out.dtype)
            done, flops, reads = 0.0, weight * out.size, 0.0
            inputs: frozenset[Input] = frozenset()
            buffers: frozenset[Input] = frozenset()  # (on a GPU, each buffer read once by this kernel alone)
            rows: Rows | None = None
            for c in ins:
                done += c.done
                aligned = c.rows is not None and _row_aligned(op, c.meta, out)
                if aligned:
                    rows = c.rows + rows
                if c.buffer:
                    reads += _bytes(c.meta)
                    buffers |= {(_identity(c), _bytes(c.meta))}
                    if not aligned:  # an aligned buffer is computed inside a row-fused loop
                        inputs |= {(_identity(c), _bytes(c.meta))}
                else:  # fused: recomputed once per element of `out` that reads it
                    flops += c.flops * out.size / max(c.meta.size, 1)
                    reads += c.reads
                    inputs |= c.inputs
            if view and ins[0].buffer:  # a view of a buffer is still that buffer
                return Cost(done + _EPSILON, out, done + _EPSILON, rows=rows)
            if self.gpu:  # one kernel reads each buffer once, however often its body uses it
                reads = math.fsum(b for _, b in inputs | buffers)
            return self._fused(out, done, flops, reads, inputs, rows)
        if op in REDUCTIONS:
            (x,) = ins
            flops = x.meta.size * self._dtype_weight(op, out.dtype) * m.reduction_flops + (0.0 if x.buffer else x.flops)
            reads = _bytes(x.meta) if x.buffer else x.reads
            inputs = x.inputs if not x.buffer else frozenset() if x.rows else frozenset({(_identity(x), _bytes(x.meta))})
            latency = 0.0
            index = op in INDEX_REDUCTIONS  # argmax: one (value, index) pair at a time, never row-fused
            if not self.gpu and x.meta.ndim and x.meta.ndim - 1 in out.attr("axes"):  # the innermost loop reduces: priced by its lanes
                itemsize = np.dtype(out.dtype).itemsize
                lanes = 1 if index else out.attr("lanes")  # {op}_lanes, or LLVM's own
                latency = (reduce_slowdown(x.meta.shape[-1], lanes, itemsize, self.target) - 1.0) * x.meta.size / m.gflops
            time = m.kernel(flops, reads + _bytes(out)) + latency
            rows = self._closing(x, out, flops, inputs, time, latency) if 0 not in out.attr("axes") and not index else None
            chosen = _EPSILON if not index and out.attr("lanes") is not None else 0.0  # {op}_lanes: taken only when it saves time
            return self._buffer(out, x.done + time + chosen, rows)
        if op in SCANS or op in SORTS:  # reading x (its producers fused), writing the running values
            (x,) = ins  # or the sorted rows: log2(row) merge passes over them
            passes = math.ceil(math.log2(max(x.meta.shape[-1], 2))) if op in SORTS else 1
            flops = passes * x.meta.size + (0.0 if x.buffer else x.flops)
            reads = _bytes(x.meta) if x.buffer else x.reads
            return self._buffer(out, x.done + m.kernel(flops, reads + _bytes(out)))
        if op in FACTORS:  # loops over each matrix: LU 2/3 n^3, Cholesky 1/3 n^3, a solve 2 n^2 per right-hand side,
            n, k = ins[0].meta.shape[-2:]  # QR 4 m n^2 with Q, Jacobi some 8 sweeps of 4 n^3 (eigh) or 6 m n^2 (SVD)
            matrices = ins[0].meta.size // max(k * n, 1)
            per = {"lu": 2 / 3 * n**3, "cholesky": n**3 / 3, "qr": 4.0 * n * k * k, "eigh": 32.0 * n**3, "svd": 48.0 * n * k * k}
            flops = matrices * (per.get(op) or 2.0 * n * out.shape[-1] * n)
            moved = math.fsum(_bytes(x.meta) for x in ins) + _bytes(out)
            return self._buffer(out, math.fsum(self.closed(x) for x in ins) + m.kernel(flops, moved))
        if op in RECURRENCES:  # each element of x through each section: 2 (p + 1) products and 2 p + 1 sums; a spline
            x = ins[0]  # prefilter's pole two passes of 2 flops (and its boundary sums, some 8 flops per pole per row)
            if op == "recurrence":
                sections, _, taps = ins[1].meta.shape
                flops = x.meta.size * sections * (4.0 * taps - 1.0)
            else:
                flops = x.meta.size * (1.0 + 4.0 * (out.attr("order") // 2))
            moved = math.fsum(_bytes(v.meta) for v in ins) + _bytes(out)
            return self._buffer(out, math.fsum(self.closed(v) for v in ins) + m.kernel(flops, moved))
        if op in ("matmul", "matmul_tiled", "einsum_matmul"):  # einsum_matmul: its `@` sibling wins ties (_EPSILON)
            a, b = ins
            flops = 2.0 * out.size * a.meta.shape[-1] * self._dtype_weight(op, out.dtype)  # (float64: half float32's rate)
            moved = _bytes(a.meta) + _bytes(b.meta) + _bytes(out)
            slowdown = (1.0 if _row_major(a.meta) else m.gemm_strided_a_slowdown) * (
                1.0 if _row_major(b.meta) else m.gemm_strided_b_slowdown
            )
            if not self.gpu and a.meta.ndim == b.meta.ndim and a.meta.ndim in (2, 3):  # matmul, batch_matmul: cache tiles
                *batch, rows, inner = a.meta.shape
                loops = (rows, b.meta.shape[-1], inner)
                itemsize = np.dtype(out.dtype).itemsize
                tiles = out.attr("tiles") if op == "matmul_tiled" else ()
                if len(tiles) != 3 or min(tiles) < 1:  # (malformed tiles of a user's rule: the emitter rejects them)
                    tiles = choose_tiles("linalg.matmul", loops, itemsize, self.target).tiles
                slowdown *= tile_slowdown(loops, tiles, itemsize, self.target, math.prod(batch) if batch else None)
            order_free = _EPSILON if op == "einsum_matmul" else 0.0
            if self.gpu and a.meta.ndim == b.meta.ndim and a.meta.ndim in (2, 3):  # tiled through workgroup memory (gpu/tiles.py)
                *batch, rows, inner = a.meta.shape
                loops = (rows, b.meta.shape[-1], inner)
                time = matmul_time(self.target.device, loops, math.prod(batch), out.dtype, slowdown)
                return self._buffer(out, self.closed(a) + self.closed(b) + time + m.kernel_overhead_ns + order_free)
            rate = m.gemm_rate(a.meta.shape[-2] if a.meta.ndim > 1 else 1, b.meta.shape[-1] if b.meta.ndim > 1 else 1, a.meta.shape[-1])
            return self._buffer(out, self.closed(a) + self.closed(b) + m.kernel(flops, moved, rate / slowdown) + order_free)
        if op in ("gather", "scatter_add", "searchsorted"):  # reads x at indices computed in its loop: priced as a copy of its size
            x, idx = ins  # (searchsorted: log2 of x's size reads per element)
            steps = math.log2(max(x.meta.size, 2)) if op == "searchsorted" else 0.0
            return self._buffer(out, self.closed(x) + self.closed(idx) + m.kernel(steps * out.size, 2 * _bytes(out)))
        if op == "update_slice":  # the base copied (unless updated in place), the value written into it
            base, value = ins
            return self._buffer(out, self.closed(base) + self.closed(value) + m.kernel(0.0, 2 * _bytes(value.meta)))
        # general reshape: a copy of its materialized input
        (x,) = ins
        return self._buffer(out, self.closed(x) + m.kernel(0.0, 2 * _bytes(out)))


def tile_slowdown(loops: tuple[int, int, int], cache_tiles: tuple[int, ...], itemsize: int, target: Target,
                  batch: int | None = None) -> float:
    """Relative time of a 2-D matmul (m, n, k) with cache tiles (TM, TN, TK) vs a perfect tiling:
    the packed B micro-panel and the A micro-panel must fit L1, the A block a third of L2 and the A
    and C blocks together three quarters of it (the target's caches); a tile that does not divide its loop leaves a slower remainder (measured ~2x
    at 1024^3; a TK that does not divide k also leaves B unpacked); the C tile is reloaded once per
    TK step, each packed B micro-panel element (a load and a store) serves TM FMAs and the A block TN / nr
    micro-panels (measured at 2048^3: TN = 2 nr is ~1.6x slower than 4 nr); output blocks (over
    the `batch` products of a batch_matmul; None: a 2-D matmul) not a multiple of `threads` leave
    threads idle. A misaligned 2-D matmul is priced as lowering/tiling.py computes it: on padded
    loops (`padded_loops`, `padded_tiles`, with the register tile `choose_tiles` gives it)."""
    caches, threads = target, target.threads
    mr, nr = register_tile(itemsize, caches)
    vec = choose_tiles("linalg.matmul", loops, itemsize, caches).vec
    padded = padded_loops("linalg.matmul", loops, vec, target) if batch is None else None
    slow = 1.0
    if padded is not None:  # computed on operands padded to whole register tiles: more work, other tiles
        slow = math.prod(padded) / math.prod(loops)
        loops, cache_tiles = padded, padded_tiles(loops, padded, cache_tiles, vec)
    m, n, k = loops
    tm, tn, tk = (max(1, min(t, e)) for t, e in zip(cache_tiles, loops, strict=True))
    slow *= (1.0 + 16.0 / tk) * (1.0 + 2.0 / tm) * (1.0 + nr / tn)
    blocks = max(1, (batch or 1) * math.ceil(m / tm) * math.ceil(n / tn))
    slow *= math.ceil(blocks / threads) * threads / blocks  # the thread with the most blocks
    if (nr + mr) * tk * itemsize > caches.l1:
        slow *= 1.5
    if tm * tk * itemsize > caches.l2 // 3:
        slow *= 1.5
    if (tm * tk + tm * tn) * itemsize > caches.l2 * 3 // 4:  # the A block and the C block (packed when large)
        slow *= 1.5
    for extent, t in ((m, tm), (n, tn), (k, tk)):
        if extent % t:
            slow *= 1.5
    return slow


BLOCK_NS = 200.0  # per row block: a loop iteration starting every fused op's loops (and its block buffers)
REDUCE_CHAINS = 4  # independent vector adds in flight a core needs to hide an add's latency


REREAD_ROW = 64  # a reduction combining at least this many elements per result is a pass over the block's rows


def rows_slowdown(shape: tuple[int, ...], block: int, itemsize: int, values: int,
                  target: Target, passes: int = 1) -> tuple[float, float, float]:
    """(memory factor, balance, overhead ns) of a row-fused loop over `shape` in blocks of `block`
    rows, against an ideal loop (its reductions' lanes: reduce_slowdown). The block's rows of the
    `values` row-sized values in the loop must fit half of L2, or they are re-read from memory by each
    of the `passes` over them (the loop's long reductions; at least 1.5 times).
    Every block costs BLOCK_NS; with threads, the critical path is the thread with the most blocks
    (the last one may be partial). Caches and threads are `target`'s."""
    caches, threads = target, target.threads
    rows, n = max(1, shape[0]), max(1, math.prod(shape[1:]))
    block = max(1, min(block, rows))
    memory = max(1.5, passes) if block * n * itemsize * values > caches.l2 // 2 else 1.0
    blocks = math.ceil(rows / block)
    balance = math.ceil(blocks / threads) * block * threads / rows if threads > 1 else 1.0
    return memory, balance, blocks * BLOCK_NS / threads


def reduce_slowdown(n: int, lanes: int | None, itemsize: int, target: Target) -> float:
    """Time per element of a reduction loop of `n` elements accumulating `lanes` side by side, against
    an ideal one: lanes / VF vector accumulators, fewer than REDUCE_CHAINS wait on the add latency;
    elements past the last multiple of `lanes` go one at a time; the accumulators are combined at the
    end. None: LLVM's own choice, REDUCE_CHAINS vectors and a vectorized remainder, so only the last
    n % VF go one at a time (read off the assembly of np.sum(a * b) for float32 on AVX-512: four
    zmm sums, constant short loops unrolled whole; no width we pinned measured faster)."""
    n = max(1, n)
    vf = simd_lanes(itemsize, target)
    step, chains = (vf, REDUCE_CHAINS) if lanes is None else (max(1, lanes), max(1, lanes // vf))
    return ((n - n % step) / (vf * min(chains, REDUCE_CHAINS)) + n % step + chains) / max(n / (vf * REDUCE_CHAINS), 1.0)


def _math_flops(op: str, dtype: str, machine: Machine) -> float:
    """Flops of one transcendental `op` with result `dtype`: exp and float32 tanh are the math stage's inline
    arithmetic (lowering/stages/math.py), cheaper than libm's and libmvec's calls."""
    inline = op == "exp" or (op == "tanh" and dtype == "float32")
    return machine.inline_math_flops if inline else machine.transcendental_flops


_UNWRITTEN = VIEWS | {"arg", "reshape"}  # an output of one of these is no kernel's result: an argument, or a view of a buffer


def _unwritten(meta: Any) -> bool:
    """Whether an output `meta` is no kernel's result: an argument, or a view of a buffer."""
    return isinstance(meta, Node) and meta.op in _UNWRITTEN


def _meta(op: str, tensors: tuple[Node, ...], attrs: tuple) -> Node:
    """A stand-in Node: op, attributes, shape and dtype (no inputs) — what pricing needs to know."""
    shape, dtype = infer(op, tensors, attrs)
    return Node(op, (), attrs, shape, dtype)


def _identity(c: Cost) -> Any:
    """Which buffer a materialized child is: an argument by name, anything else by what it is."""
    if c.value is not None:
        return c.value
    if c.meta.op == "arg":
        return ("arg", c.meta.attr("name"))
    return ("buffer", c.meta.shape, c.meta.dtype, c.done)


def _row_aligned(op: str, child: Node, out: Node) -> bool:
    """Whether row i of `out` reads only row i of `child` (so both can be computed block by block)."""
    if not out.ndim or not child.ndim or child.shape[0] != out.shape[0]:
        return False
    if op == "reshape":  # a unit reshape that keeps the leading extent, (n,) -> (n, 1)
        return True
    if child.ndim != out.ndim:  # broadcasting aligns trailing axes: a lower-rank child is not row-aligned
        return False
    if op == "transpose":
        return out.attr("perm")[0] == 0
    if op == "slice":
        start, step, _ = out.attrs
        return start[0] == 0 and step[0] == 1
    return op != "diagonal"


def _row_major(meta: Node) -> bool:
    """Whether a value is read row-major: not a 2-D+ transposed view, not a non-C argument."""
    if meta.op == "transpose" and meta.ndim >= 2:
        return False
    return not (meta.op == "arg" and meta.attr("layout") != "C" and meta.ndim >= 2)


def node_time(op: str, inputs: tuple[Node, ...], out: Node, target: Target) -> float:
    """ns of `op` as one kernel reading materialized inputs on `target` (what the model charges it alone)."""
    model = TensorCostModel(target)
    ins = [model.price("arg", [], i) for i in inputs]
    return model.closed(model.price(op, ins, out))
