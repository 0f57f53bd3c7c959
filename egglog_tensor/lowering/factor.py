"""Dense factorizations (tracing/solve.py): LU with partial pivoting, its forward and back substitution,
and Cholesky, of each n x n matrix of a stack, as scf loops on buffers (each step reads what the
previous ones wrote, which no linalg.generic expresses). The matrices are an scf.parallel loop on
cpu-openmp (the openmp stage shares them among the threads).

LU is LAPACK's getf2: step k swaps in the row of the largest |a[i, k]| (i >= k; the first of equal ones,
NaN never larger), divides the column below the pivot by it (unless it is exactly 0: the matrix is
singular, the column is 0 and stays), and updates the trailing rows: its arithmetic in its order, the
updates of PANEL steps applied in one pass over each trailing row (getf2's results bit for bit, less
memory traffic). Its result is L\\U packed (L's unit diagonal implied) with the row swapped in at each
step as one more column (a float: exact for any n a kernel holds). Cholesky is LAPACK's potf2 (lower):
column j's diagonal is the square root of a[j, j] less the squares left of it, NaN or 0 when the matrix
is not positive definite (the tracer checks it).
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import arith, bufferization, math, memref, scf, tensor

from . import scalar
from .loops import alloc, close, counting, each, index

F = arith.CmpFPredicate
ROWS_PER_PASS = 4  # the substitutions subtract this many rows of x from one per pass over its k columns


def flat_tensor(buffer: ir.Value, size: int) -> ir.Value:
    """A 1-D buffer of `size` elements as the tensor the emitter continues with."""
    return bufferization.to_tensor(ir.RankedTensorType.get([size], buffer.type.element_type), buffer, restrict=True)


def at(base: ir.Value, row: ir.Value, column: ir.Value, width: int) -> ir.Value:
    """The flat position of (row, column) in the row-major matrix of `width` columns starting at `base`."""
    return arith.addi(base, arith.addi(arith.muli(row, index(width)), column))


def copy_matrix(source: ir.Value, into: ir.Value, src: ir.Value, base: ir.Value, rows: int, columns: int, width: int,
          lower: bool = False) -> None:
    """The rows x columns matrix at `src` of the 1-D tensor `source` into the buffer `into` at `base` (rows
    of `width`); with `lower`, zeros above its diagonal (Cholesky reads only the lower triangle, as LAPACK)."""
    with counting(0, rows) as i, counting(0, columns) as j:
        value = tensor.extract(source, [at(src, i, j, columns)])
        if lower:
            zero = arith.constant(value.type, 0.0)
            value = arith.select(arith.cmpi(arith.CmpIPredicate.ule, j, i), value, zero)
        memref.store(value, into, [at(base, i, j, width)])


def lu(flat: ir.Value, count: int, n: int, dtype: str, parallel: bool) -> ir.Value:
    """The LU factorizations of the `count` n x n matrices of the 1-D tensor `flat` (row-major, one after
    another): a 1-D tensor of count n x (n + 1) matrices, L\\U and the pivot row of each step. The steps go
    PANEL at a time: a step brings its own column and pivot row up to date with the panel's earlier steps,
    and the trailing rows take the panel's updates in one pass each, in step order (getf2's rounding)."""
    width = n + 1
    out = alloc(count * n * width, dtype)
    body = each(count, parallel)
    with ir.InsertionPoint(body):
        base = arith.muli(body.arguments[0], index(n * width))
        copy_matrix(flat, out, arith.muli(body.arguments[0], index(n * n)), base, n, n, width)
        with counting(0, n - n % PANEL, PANEL) as first:
            _panel(out, base, width, n, first, PANEL, dtype)
        with counting(n - n % PANEL, n) as step:  # the last n % PANEL steps one by one (less code than a panel of them)
            _panel(out, base, width, n, step, 1, dtype)
        close(parallel)
    return flat_tensor(out, count * n * width)


PANEL = 8  # LU steps whose updates of the trailing rows are applied together (one pass over each row)


def _panel(out: ir.Value, base: ir.Value, width: int, n: int, first: ir.Value, size: int, dtype: str) -> None:
    """LU steps first, ..., first + size - 1 of the matrix at `base` of `out`, then their updates of the
    rows and columns after them (each element less each step's factor times its pivot row, in step order)."""

    def load(i: ir.Value, j: ir.Value) -> ir.Value:
        return memref.load(out, [at(base, i, j, width)])

    def store(value: ir.Value, i: ir.Value, j: ir.Value) -> None:
        memref.store(value, out, [at(base, i, j, width)])

    def updated(value: ir.Value, factors: list[ir.Value], pivots: list[ir.Value]) -> ir.Value:
        for factor, pivot in zip(factors, pivots, strict=True):
            value = arith.subf(value, arith.mulf(factor, pivot))
        return value

    steps = [arith.addi(first, index(t)) if t else first for t in range(size)]
    for s, k in enumerate(steps):
        start = arith.addi(k, index(1))
        if s:  # column k of the rows from k on, up to date with the panel's earlier steps
            pivots = [load(step, k) for step in steps[:s]]
            with counting(k, n) as i:
                store(updated(load(i, k), [load(i, step) for step in steps[:s]], pivots), i, k)
        search = scf.ForOp(start, index(n), index(1), [k, math.absf(load(k, k))])
        with ir.InsertionPoint(search.body):
            i, (p, best) = search.induction_variable, search.inner_iter_args
            value = math.absf(load(i, k))
            larger = arith.cmpf(F.OGT, value, best)
            scf.YieldOp([arith.select(larger, i, p), arith.select(larger, value, best)])
        p = search.results[0]
        store(arith.sitofp(scalar.element_type(dtype), arith.index_cast(ir.IntegerType.get_signless(64), p)), k, index(n))
        with counting(0, n) as j:
            a, b = load(k, j), load(p, j)
            store(b, k, j)
            store(a, p, j)
        factors = [load(k, step) for step in steps[:s]]
        for column in steps[s + 1 :]:  # the pivot row's later panel columns, up to date
            store(updated(load(k, column), factors, [load(step, column) for step in steps[:s]]), k, column)
        pivot = load(k, k)
        singular = arith.cmpf(F.OEQ, pivot, arith.constant(pivot.type, 0.0))
        with counting(start, n) as i:
            below = load(i, k)
            store(arith.select(singular, below, arith.divf(below, pivot)), i, k)
    end = arith.addi(first, index(size))
    for r, row in enumerate(steps[1:], 1):  # the panel's pivot rows after it, in order
        factors = [load(row, step) for step in steps[:r]]
        with counting(end, n) as c:
            store(updated(load(row, c), factors, [load(step, c) for step in steps[:r]]), row, c)
    with counting(end, n) as i:
        factors = [load(i, step) for step in steps]
        with counting(end, n) as c:
            store(updated(load(i, c), factors, [load(step, c) for step in steps]), i, c)


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
            return tensor.extract(factors, [at(lu_base, i, j, width)])

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
                        place = at(base, i, c, k)
                        value = memref.load(out, [place])
                        for source, t in zip(sources, times, strict=True):
                            value = arith.subf(value, arith.mulf(t, memref.load(out, [at(base, source, c, k)])))
                        memref.store(value, out, [place])

        copy_matrix(rhs, out, base, base, n, k, k)
        with counting(0, n) as i:
            p = arith.index_cast(ir.IndexType.get(), arith.fptosi(ir.IntegerType.get_signless(64), factor(i, index(n))))
            with counting(0, k) as c:
                here, there = at(base, i, c, k), at(base, p, c, k)
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
                place = at(base, i, c, k)
                memref.store(arith.divf(memref.load(out, [place]), diagonal), out, [place])
        close(parallel)
    return flat_tensor(out, count * n * k)


def cholesky(flat: ir.Value, count: int, n: int, dtype: str, parallel: bool) -> ir.Value:
    """The lower Cholesky factors L (L L^T = a, zeros above the diagonal) of the `count` n x n matrices
    of the 1-D tensor `flat`, column by column; a 1-D tensor of count n x n."""
    out = alloc(count * n * n, dtype)
    body = each(count, parallel)
    with ir.InsertionPoint(body):
        base = arith.muli(body.arguments[0], index(n * n))
        copy_matrix(flat, out, base, base, n, n, n, lower=True)

        def dot(i: ir.Value, j: ir.Value) -> ir.Value:
            """The sum over t < j of L[i, t] L[j, t]."""
            zero = scalar.constant(0.0, dtype)
            terms = scf.ForOp(index(0), j, index(1), [zero])
            with ir.InsertionPoint(terms.body):
                t, total = terms.induction_variable, terms.inner_iter_args[0]
                product = arith.mulf(memref.load(out, [at(base, i, t, n)]), memref.load(out, [at(base, j, t, n)]))
                scf.YieldOp([arith.addf(total, product)])
            return terms.results[0]

        with counting(0, n) as j:
            diagonal_at = at(base, j, j, n)
            diagonal = math.sqrt(arith.subf(memref.load(out, [diagonal_at]), dot(j, j)))
            memref.store(diagonal, out, [diagonal_at])
            with counting(arith.addi(j, index(1)), n) as i:
                place = at(base, i, j, n)
                memref.store(arith.divf(arith.subf(memref.load(out, [place]), dot(i, j)), diagonal), out, [place])
        close(parallel)
    return flat_tensor(out, count * n * n)
