"""Dense factorizations (tracing/solve.py): LU with partial pivoting, its forward and back substitution,
and Cholesky, of each n x n matrix of a stack, as scf loops on buffers (each step reads what the
previous ones wrote, which no linalg.generic expresses). The matrices are an scf.parallel loop on
cpu-openmp (the openmp stage shares them among the threads).

LU is LAPACK's getf2: step k swaps in the row of the largest |a[i, k]| (i >= k; the first of equal ones,
NaN never larger), divides the column below the pivot by it (unless it is exactly 0: the matrix is
singular, the column is 0 and stays), and updates the trailing rows. Its result is L\\U packed (L's unit
diagonal implied) with the row swapped in at each step as one more column (a float: exact for any n
a kernel holds). Cholesky is LAPACK's potf2 (lower): column j's diagonal is the square root of a[j, j]
less the squares left of it, NaN or 0 when the matrix is not positive definite (the tracer checks it).
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import arith, bufferization, math, memref, scf, tensor

from . import scalar
from .loops import alloc, close, counting, each, index

F = arith.CmpFPredicate
ROWS_PER_PASS = 4  # the substitutions subtract this many rows of x from one per pass over its k columns


def _flat_tensor(buffer: ir.Value, size: int) -> ir.Value:
    """A 1-D buffer of `size` elements as the tensor the emitter continues with."""
    return bufferization.to_tensor(ir.RankedTensorType.get([size], buffer.type.element_type), buffer, restrict=True)


def _at(base: ir.Value, row: ir.Value, column: ir.Value, width: int) -> ir.Value:
    """The flat position of (row, column) in the row-major matrix of `width` columns starting at `base`."""
    return arith.addi(base, arith.addi(arith.muli(row, index(width)), column))


def _copy(source: ir.Value, into: ir.Value, src: ir.Value, base: ir.Value, rows: int, columns: int, width: int,
          lower: bool = False) -> None:
    """The rows x columns matrix at `src` of the 1-D tensor `source` into the buffer `into` at `base` (rows
    of `width`); with `lower`, zeros above its diagonal (Cholesky reads only the lower triangle, as LAPACK)."""
    with counting(0, rows) as i, counting(0, columns) as j:
        value = tensor.extract(source, [_at(src, i, j, columns)])
        if lower:
            zero = arith.constant(value.type, 0.0)
            value = arith.select(arith.cmpi(arith.CmpIPredicate.ule, j, i), value, zero)
        memref.store(value, into, [_at(base, i, j, width)])


def lu(flat: ir.Value, count: int, n: int, dtype: str, parallel: bool) -> ir.Value:
    """The LU factorizations of the `count` n x n matrices of the 1-D tensor `flat` (row-major, one after
    another): a 1-D tensor of count n x (n + 1) matrices, L\\U and the pivot row of each step."""
    width = n + 1
    out = alloc(count * n * width, dtype)
    body = each(count, parallel)
    with ir.InsertionPoint(body):
        m = body.arguments[0]
        base = arith.muli(m, index(n * width))
        _copy(flat, out, arith.muli(m, index(n * n)), base, n, n, width)
        with counting(0, n) as k:
            start = arith.addi(k, index(1))
            search = scf.ForOp(start, index(n), index(1), [k, math.absf(memref.load(out, [_at(base, k, k, width)]))])
            with ir.InsertionPoint(search.body):
                i, (p, best) = search.induction_variable, search.inner_iter_args
                value = math.absf(memref.load(out, [_at(base, i, k, width)]))
                larger = arith.cmpf(F.OGT, value, best)
                scf.YieldOp([arith.select(larger, i, p), arith.select(larger, value, best)])
            p = search.results[0]
            row = arith.sitofp(scalar.element_type(dtype), arith.index_cast(ir.IntegerType.get_signless(64), p))
            memref.store(row, out, [_at(base, k, index(n), width)])
            with counting(0, n) as j:
                here, there = _at(base, k, j, width), _at(base, p, j, width)
                a, b = memref.load(out, [here]), memref.load(out, [there])
                memref.store(b, out, [here])
                memref.store(a, out, [there])
            pivot = memref.load(out, [_at(base, k, k, width)])
            singular = arith.cmpf(F.OEQ, pivot, arith.constant(pivot.type, 0.0))
            with counting(start, n) as i:
                below = memref.load(out, [_at(base, i, k, width)])
                factor = arith.select(singular, below, arith.divf(below, pivot))
                memref.store(factor, out, [_at(base, i, k, width)])
                with counting(start, n) as j:
                    at = _at(base, i, j, width)
                    update = arith.mulf(factor, memref.load(out, [_at(base, k, j, width)]))
                    memref.store(arith.subf(memref.load(out, [at]), update), out, [at])
        close(parallel)
    return _flat_tensor(out, count * n * width)


def lu_solve(factors: ir.Value, rhs: ir.Value, count: int, n: int, k: int, dtype: str, parallel: bool) -> ir.Value:
    """x with a x = b for each of the `count` factorizations (lu's 1-D tensor `factors`) and n x k
    right-hand sides b (the 1-D tensor `rhs`): b's rows swapped as the factorization's, then the forward
    substitution with the unit lower L and the back substitution with U; a 1-D tensor of count n x k."""
    width = n + 1
    out = alloc(count * n * k, dtype)
    body = each(count, parallel)
    with ir.InsertionPoint(body):
        m = body.arguments[0]
        base, lu_base = arith.muli(m, index(n * k)), arith.muli(m, index(n * width))

        def factor(i: ir.Value, j: ir.Value) -> ir.Value:
            return tensor.extract(factors, [_at(lu_base, i, j, width)])

        def subtract(i: ir.Value, first: ir.Value | int, end: ir.Value | int) -> None:
            """Row i of x less factor(i, j) times row j for j = first, ..., end - 1 in that order (the rounding of
            one row operation after another), ROWS_PER_PASS of them per pass over row i (one load and store of it)."""
            first = index(first) if isinstance(first, int) else first
            blocked = arith.addi(first, arith.muli(arith.divui(arith.subi(end, first), index(ROWS_PER_PASS)), index(ROWS_PER_PASS)))
            for lower, upper, rows in ((first, blocked, ROWS_PER_PASS), (blocked, end, 1)):
                with counting(lower, upper, rows) as j:
                    sources = [arith.addi(j, index(r)) for r in range(rows)]
                    times = [factor(i, source) for source in sources]
                    with counting(0, k) as c:
                        at = _at(base, i, c, k)
                        value = memref.load(out, [at])
                        for source, t in zip(sources, times, strict=True):
                            value = arith.subf(value, arith.mulf(t, memref.load(out, [_at(base, source, c, k)])))
                        memref.store(value, out, [at])

        _copy(rhs, out, base, base, n, k, k)
        with counting(0, n) as i:
            p = arith.index_cast(ir.IndexType.get(), arith.fptosi(ir.IntegerType.get_signless(64), factor(i, index(n))))
            with counting(0, k) as c:
                here, there = _at(base, i, c, k), _at(base, p, c, k)
                a, b = memref.load(out, [here]), memref.load(out, [there])
                memref.store(b, out, [here])
                memref.store(a, out, [there])
        with counting(1, n) as i:
            subtract(i, 0, i)
        with counting(0, n) as r:
            i = arith.subi(index(n - 1), r)
            subtract(i, arith.addi(i, index(1)), index(n))
            diagonal = factor(i, i)
            with counting(0, k) as c:
                at = _at(base, i, c, k)
                memref.store(arith.divf(memref.load(out, [at]), diagonal), out, [at])
        close(parallel)
    return _flat_tensor(out, count * n * k)


def cholesky(flat: ir.Value, count: int, n: int, dtype: str, parallel: bool) -> ir.Value:
    """The lower Cholesky factors L (L L^T = a, zeros above the diagonal) of the `count` n x n matrices
    of the 1-D tensor `flat`, column by column; a 1-D tensor of count n x n."""
    out = alloc(count * n * n, dtype)
    body = each(count, parallel)
    with ir.InsertionPoint(body):
        base = arith.muli(body.arguments[0], index(n * n))
        _copy(flat, out, base, base, n, n, n, lower=True)

        def dot(i: ir.Value, j: ir.Value) -> ir.Value:
            """The sum over t < j of L[i, t] L[j, t]."""
            zero = scalar.constant(0.0, dtype)
            terms = scf.ForOp(index(0), j, index(1), [zero])
            with ir.InsertionPoint(terms.body):
                t, total = terms.induction_variable, terms.inner_iter_args[0]
                product = arith.mulf(memref.load(out, [_at(base, i, t, n)]), memref.load(out, [_at(base, j, t, n)]))
                scf.YieldOp([arith.addf(total, product)])
            return terms.results[0]

        with counting(0, n) as j:
            diagonal_at = _at(base, j, j, n)
            diagonal = math.sqrt(arith.subf(memref.load(out, [diagonal_at]), dot(j, j)))
            memref.store(diagonal, out, [diagonal_at])
            with counting(arith.addi(j, index(1)), n) as i:
                at = _at(base, i, j, n)
                memref.store(arith.divf(arith.subf(memref.load(out, [at]), dot(i, j)), diagonal), out, [at])
        close(parallel)
    return _flat_tensor(out, count * n * n)
