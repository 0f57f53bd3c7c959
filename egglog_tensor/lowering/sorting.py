"""Sorts (tracing/sorting.py): each row of the last axis sorted by a stable bottom-up merge sort.

A sort needs random access within a row, which no linalg.generic gives, so it is emitted as scf
loops on buffers: the input is copied into a row-major buffer, then ceil(log2 n) merge passes
(unrolled here, widths 1, 2, 4, ...) go back and forth between it and a second buffer, one row at a
time; argsort carries the positions in two int64 buffers beside the keys. A merge takes the right run's
element only when it sorts strictly before the left one's, so ties keep their order (stable).
NumPy's order: NaN after everything, -0.0 and 0.0 equal.

Rows of at least RADIX_MIN elements of a float32/float64 or integer dtype are sorted instead by an
LSD radix sort (one pass per byte of the key, each a 256-bucket count, its prefix sum and an in-order
scatter: stable): the key is an unsigned integer in NumPy's order (scalar.order_key for floats, NaN
last, -0.0 equal to 0.0; signed integers with their sign bit flipped); the values (sort) or positions
(argsort) move with their keys. 4 passes for 32-bit keys where a merge sort of 10^6 makes 20.
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import arith, bufferization, memref, scf, tensor

from egglog_tensor.graph import is_float

from . import scalar
from .loops import alloc, close, each, index


def sort_rows(flat: ir.Value, rows: int, n: int, dtype: str, indices: bool, parallel: bool) -> ir.Value:
    """`flat` (a 1-D tensor of `rows` rows of `n`, row-major) with each row sorted ascending, or
    with `indices` the int64 positions in its row that sort it (argsort): a 1-D tensor. With
    `parallel` the rows are an scf.parallel loop (the openmp stage shares them among the threads)."""
    if n >= RADIX_MIN and dtype in _RADIX_KEYS:
        return _radix_rows(flat, rows, n, dtype, indices, parallel)
    keys = [alloc(rows * n, dtype), alloc(rows * n, dtype)]
    bufferization.materialize_in_destination(None, flat, keys[0], restrict=True, writable=True)
    carried = [keys] + ([[alloc(rows * n, "int64"), alloc(rows * n, "int64")]] if indices else [])
    widths = [1 << p for p in range((n - 1).bit_length())]
    body = each(rows, parallel)
    with ir.InsertionPoint(body):
        base = arith.muli(body.arguments[0], index(n))
        if indices:
            _positions(carried[1][0], base, n)
        for p, width in enumerate(widths):
            _merge_pass([pair[p % 2] for pair in carried], [pair[1 - p % 2] for pair in carried], base, n, width, dtype)
        close(parallel)
    result = carried[-1][len(widths) % 2]
    return bufferization.to_tensor(ir.RankedTensorType.get([rows * n], result.type.element_type), result, restrict=True)


RADIX_MIN = 256  # rows at least this long: radix passes (bytes of the key) instead of log2(n) merge passes
PARALLEL_CHUNKS = 64  # cpu-openmp: the rows in this many chunks (at most), each with its own counts
_RADIX_KEYS = {"float32": "uint32", "float64": "uint64", **{f"{k}int{b}": f"uint{b}" for k in ("", "u") for b in (8, 16, 32, 64)}}


def _radix_rows(flat: ir.Value, rows: int, n: int, dtype: str, indices: bool, parallel: bool) -> ir.Value:
    """sort_rows by an LSD radix sort of each row's unsigned keys (_radix_key), a byte per pass. The rows go
    in PARALLEL_CHUNKS contiguous chunks on cpu-openmp (an scf.parallel the openmp stage shares among the
    threads), each chunk with its own 256 counts, reused row after row (a buffer, not the stack)."""
    key_dtype = _RADIX_KEYS[dtype]
    carried = "int64" if indices else dtype
    values = alloc(rows * n, dtype)
    bufferization.materialize_in_destination(None, flat, values, restrict=True, writable=True)
    keys = [alloc(rows * n, key_dtype), alloc(rows * n, key_dtype)]
    moved = [alloc(rows * n, carried), alloc(rows * n, carried)] if indices else [values, alloc(rows * n, carried)]
    passes = scalar._bits(key_dtype) // 8
    key_type = scalar.element_type(key_dtype)
    chunks = min(rows, PARALLEL_CHUNKS) if parallel else 1
    counts = memref.alloc(ir.MemRefType.get([chunks * 256], ir.IndexType.get()), [], [])
    chunk = each(chunks, chunks > 1)
    with ir.InsertionPoint(chunk):
        c = chunk.arguments[0]
        first, end = (arith.divui(arith.muli(i, index(rows)), index(chunks)) for i in (c, arith.addi(c, index(1))))
        row = scf.ForOp(first, end, index(1))
        with ir.InsertionPoint(row.body):
            base = arith.muli(row.induction_variable, index(n))
            element = scf.ForOp(index(0), index(n), index(1))
            with ir.InsertionPoint(element.body):
                at = arith.addi(base, element.induction_variable)
                memref.store(_radix_key(memref.load(values, [at]), dtype), keys[0], [at])
                if indices:
                    memref.store(arith.index_cast(ir.IntegerType.get_signless(64), element.induction_variable), moved[0], [at])
                scf.YieldOp([])
            mine = arith.muli(c, index(256))
            for p in range(passes):
                _radix_pass(keys[p % 2], moved[p % 2], keys[1 - p % 2], moved[1 - p % 2], (counts, mine), base, n, 8 * p, key_type)
            scf.YieldOp([])
        close(chunks > 1)
    result = moved[passes % 2]
    return bufferization.to_tensor(ir.RankedTensorType.get([rows * n], result.type.element_type), result, restrict=True)


def _radix_key(value: ir.Value, dtype: str) -> ir.Value:
    """A stored element as the unsigned integer whose order is NumPy's sort order: the signed order key with
    its sign bit flipped (floats: scalar.order_key, NaN the largest; signed integers: themselves)."""
    if dtype.startswith("u"):
        return value
    key, key_dtype = (scalar.order_key("max", dtype, value), scalar.KEYS[dtype]) if is_float(dtype) else (value, dtype)
    return arith.xori(key, scalar.constant(-(1 << (scalar._bits(dtype) - 1)), key_dtype))


def _radix_pass(keys: ir.Value, moved: ir.Value, keys_to: ir.Value, moved_to: ir.Value, counts: tuple[ir.Value, ir.Value],
                base: ir.Value, n: int, shift: int, key_type: ir.Type) -> None:
    """One stable counting pass of the byte at `shift` of the row at `base`: keys and what moves with them,
    scattered in order to where that byte's count puts them. `counts`: a buffer and where its 256 start."""
    zero = index(0)
    counts, start = counts

    def digit(at: ir.Value) -> ir.Value:
        byte = arith.andi(arith.shrui(memref.load(keys, [at]), arith.constant(key_type, shift)), arith.constant(key_type, 255))
        return arith.addi(start, arith.index_castui(ir.IndexType.get(), byte))

    clear = scf.ForOp(start, arith.addi(start, index(256)), index(1))
    with ir.InsertionPoint(clear.body):
        memref.store(zero, counts, [clear.induction_variable])
        scf.YieldOp([])
    count = scf.ForOp(zero, index(n), index(1))
    with ir.InsertionPoint(count.body):
        d = digit(arith.addi(base, count.induction_variable))
        memref.store(arith.addi(memref.load(counts, [d]), index(1)), counts, [d])
        scf.YieldOp([])
    starts = scf.ForOp(start, arith.addi(start, index(256)), index(1), [zero])
    with ir.InsertionPoint(starts.body):
        b, total = starts.induction_variable, starts.inner_iter_args[0]
        size = memref.load(counts, [b])
        memref.store(total, counts, [b])
        scf.YieldOp([arith.addi(total, size)])
    scatter = scf.ForOp(zero, index(n), index(1))
    with ir.InsertionPoint(scatter.body):
        at = arith.addi(base, scatter.induction_variable)
        d = digit(at)
        slot = memref.load(counts, [d])
        memref.store(arith.addi(slot, index(1)), counts, [d])
        to = arith.addi(base, slot)
        memref.store(memref.load(keys, [at]), keys_to, [to])
        memref.store(memref.load(moved, [at]), moved_to, [to])
        scf.YieldOp([])


def search_sorted(a: ir.Value, n: int, v: ir.Value, m: int, dtype: str, right: bool, parallel: bool) -> ir.Value:
    """The position of each of the `m` elements of the 1-D tensor v in the sorted 1-D tensor `a` of
    `n` (NumPy's order): the count of a's elements sorting before it (`right`: not after it), by a
    binary search of n.bit_length() halvings; an int64 1-D tensor."""
    out = alloc(m, "int64")
    body = each(m, parallel)
    with ir.InsertionPoint(body):
        e = body.arguments[0]
        x = tensor.extract(v, [e])
        steps = scf.ForOp(index(0), index(n.bit_length()), index(1), [index(0), index(n)])
        with ir.InsertionPoint(steps.body):
            lo, count = steps.inner_iter_args
            half = arith.shrui(count, index(1))
            mid = arith.addi(lo, half)
            y = tensor.extract(a, [arith.minsi(mid, index(n - 1))])
            after = arith.xori(_before(x, y, dtype), scalar.constant(1, "bool")) if right else _before(y, x, dtype)
            go = arith.andi(arith.cmpi(arith.CmpIPredicate.sgt, count, index(0)), after)
            scf.YieldOp([arith.select(go, arith.addi(mid, index(1)), lo),
                         arith.select(go, arith.subi(arith.subi(count, half), index(1)), half)])
        memref.store(arith.index_cast(ir.IntegerType.get_signless(64), steps.results[0]), out, [e])
        close(parallel)
    return bufferization.to_tensor(ir.RankedTensorType.get([m], out.type.element_type), out, restrict=True)


def _positions(buffer: ir.Value, base: ir.Value, n: int) -> None:
    """buffer[base + k] = k for k < n: each element's position in its row."""
    loop = scf.ForOp(index(0), index(n), index(1))
    with ir.InsertionPoint(loop.body):
        k = loop.induction_variable
        memref.store(arith.index_cast(ir.IntegerType.get_signless(64), k), buffer, [arith.addi(base, k)])
        scf.YieldOp([])


def _merge_pass(sources: list[ir.Value], targets: list[ir.Value], base: ir.Value, n: int, width: int, dtype: str) -> None:
    """Merge each pair of sorted runs of `width` in the row at `base` of sources[0] (the keys) into
    targets[0]; the other buffers (positions) move with their keys."""
    blocks = scf.ForOp(index(0), index(n), index(2 * width))
    with ir.InsertionPoint(blocks.body):
        lo = blocks.induction_variable
        mid = arith.minsi(arith.addi(lo, index(width)), index(n))
        hi = arith.minsi(arith.addi(lo, index(2 * width)), index(n))
        last = arith.subi(hi, index(1))
        steps = scf.ForOp(lo, hi, index(1), [lo, mid])
        with ir.InsertionPoint(steps.body):
            k = steps.induction_variable
            i, j = steps.inner_iter_args
            j_read = arith.minsi(j, last)  # the right run may be empty or used up: its read is then unused
            left = memref.load(sources[0], [arith.addi(base, i)])
            right = memref.load(sources[0], [arith.addi(base, j_read)])
            take = arith.andi(arith.cmpi(arith.CmpIPredicate.slt, j, hi),
                              arith.ori(arith.cmpi(arith.CmpIPredicate.sge, i, mid), _before(right, left, dtype)))
            at = arith.addi(base, k)
            memref.store(arith.select(take, right, left), targets[0], [at])
            pick = arith.addi(base, arith.select(take, j_read, i))
            for source, target in zip(sources[1:], targets[1:], strict=True):
                memref.store(memref.load(source, [pick]), target, [at])
            one, zero = index(1), index(0)
            scf.YieldOp([arith.addi(i, arith.select(take, zero, one)), arith.addi(j, arith.select(take, one, zero))])
        scf.YieldOp([])


def _before(a: ir.Value, b: ir.Value, dtype: str) -> ir.Value:
    """Whether stored element `a` sorts strictly before `b` in NumPy's order (NaN last)."""
    a, b = scalar.load(a, dtype), scalar.load(b, dtype)
    less = scalar.apply("less", dtype, "bool", [a, b])
    if not is_float(dtype):
        return less
    a_number = scalar.apply("equal", dtype, "bool", [a, a])
    b_nan = scalar.apply("not_equal", dtype, "bool", [b, b])
    return arith.ori(less, arith.andi(a_number, b_nan))
