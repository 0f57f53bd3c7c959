"""Orthogonal factorizations (tracing/orthogonal.py) of each matrix of a stack, as scf loops on buffers like
lowering/factor.py's (the matrices an scf.parallel loop on cpu-openmp):

- qr: Householder QR as LAPACK's geqr2 and org2r: step k's reflector is dlarfg's (beta = -sign(alpha) *
  ||(alpha, x)||, no reflection when x is 0), so R's diagonal signs are LAPACK's (NumPy's); Q's first
  `columns` columns are formed backwards from the reflectors.
- eigh: cyclic Jacobi (Golub and Van Loan's sym.schur2 rotations, row by row of pairs; the rows p and q of
  J^T A J computed and stored as its columns too, V kept transposed: contiguous rows): a pair is rotated
  while |a_pq| exceeds eps sqrt(|a_pp a_qq|) and eps ||A||_F / n; it stops after a sweep without a rotation
  or SWEEPS sweeps (then the eigenvalues are NaN: the tracer raises "did not converge"; a NaN element is
  always rotated, so NaN anywhere does not converge), sorted ascending.
- svd: one-sided Jacobi (Hestenes) on the columns of a (m >= n), V accumulated alongside; a pair is rotated
  while the cosine of their angle exceeds m eps; the singular values are the column norms, sorted descending.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

import numpy as np
from mlir import ir
from mlir.dialects import arith, math, memref, scf, tensor

from . import scalar
from .factor import F, at, copy_matrix, flat_tensor
from .loops import alloc, close, counting, each, index

SWEEPS = 30  # Jacobi sweeps at most (LAPACK's dgesvj bound); a few (6 to 12) are usual
Index = ir.Value | int


class _Matrix:
    """Element [i, j] of the row-major matrix of `width` columns at `base` of the buffer `out`, to load and store."""

    def __init__(self, out: ir.Value, base: ir.Value, width: int) -> None:
        self.out, self.base, self.width = out, base, width

    def _at(self, i: Index, j: Index) -> ir.Value:
        return at(self.base, *(index(v) if isinstance(v, int) else v for v in (i, j)), self.width)

    def __getitem__(self, ij: tuple[Index, Index]) -> ir.Value:
        return memref.load(self.out, [self._at(*ij)])

    def __setitem__(self, ij: tuple[Index, Index], value: ir.Value) -> None:
        memref.store(value, self.out, [self._at(*ij)])


@contextmanager
def _when(condition: ir.Value) -> Iterator[None]:
    """An scf.if on `condition` whose body is built in the `with` block."""
    branch = scf.IfOp(condition)
    with ir.InsertionPoint(branch.then_block):
        yield
        scf.YieldOp([])


def _totals(lower: Index, upper: Index, count: int, terms: Callable[[ir.Value], list[ir.Value]], dtype: str) -> list[ir.Value]:
    """The `count` sums over k in range(lower, upper) of terms(k), each in k's order."""
    loop = scf.ForOp(*(index(v) if isinstance(v, int) else v for v in (lower, upper, 1)), [scalar.constant(0.0, dtype)] * count)
    with ir.InsertionPoint(loop.body):
        values = terms(loop.induction_variable)
        scf.YieldOp([arith.addf(total, value) for total, value in zip(loop.inner_iter_args, values, strict=True)])
    return list(loop.results)


LANES = 4  # the SVD's dot products keep this many partial sums each (independent adds: not one latency-bound chain)


def _lane_totals(m: int, count: int, terms: Callable[[ir.Value], list[ir.Value]], dtype: str) -> list[ir.Value]:
    """The `count` sums over k < m of terms(k), each as LANES partial sums (k mod LANES) added pairwise at the end."""
    blocked = m - m % LANES
    loop = scf.ForOp(index(0), index(blocked), index(LANES), [scalar.constant(0.0, dtype)] * (count * LANES))
    with ir.InsertionPoint(loop.body):
        k = loop.induction_variable
        values = [v for lane in range(LANES) for v in terms(arith.addi(k, index(lane)) if lane else k)]
        scf.YieldOp([arith.addf(total, value) for total, value in zip(loop.inner_iter_args, values, strict=True)])
    rest = _totals(blocked, m, count, terms, dtype)
    partial = [list(loop.results[lane * count : (lane + 1) * count]) for lane in range(LANES)]
    pairs = [[arith.addf(a, b) for a, b in zip(partial[lane], partial[lane + 1], strict=True)] for lane in range(0, LANES, 2)]
    return [arith.addf(arith.addf(a, b), r) for a, b, r in zip(*pairs, rest, strict=True)]


def _square(x: ir.Value) -> ir.Value:
    return arith.mulf(x, x)


def _bit(value: bool) -> ir.Value:
    return arith.constant(ir.IntegerType.get_signless(1), int(value))


def _any(lower: Index, upper: Index, body: Callable[[ir.Value], ir.Value]) -> ir.Value:
    """Whether body(k) (an i1, built for every k in range(lower, upper)) is true for any k."""
    loop = scf.ForOp(*(index(v) if isinstance(v, int) else v for v in (lower, upper, 1)), [_bit(False)])
    with ir.InsertionPoint(loop.body):
        scf.YieldOp([arith.ori(loop.inner_iter_args[0], body(loop.induction_variable))])
    return loop.results[0]


def _sweeps(n: int, rotate: Callable[[ir.Value, ir.Value], ir.Value]) -> ir.Value:
    """Cyclic Jacobi sweeps over the pairs p < q of n (row by row), at most SWEEPS, until one rotates none:
    rotate(p, q) rotates the pair when it should and says whether it did. Whether they converged (i1)."""
    loop = scf.ForOp(index(0), index(SWEEPS), index(1), [_bit(False)])
    with ir.InsertionPoint(loop.body):
        done = loop.inner_iter_args[0]
        branch = scf.IfOp(done, [done.type], has_else=True)
        with ir.InsertionPoint(branch.then_block):
            scf.YieldOp([done])
        with ir.InsertionPoint(branch.else_block):
            rotated = _any(0, n, lambda p: _any(arith.addi(p, index(1)), n, lambda q: rotate(p, q)))
            scf.YieldOp([arith.xori(rotated, _bit(True))])
        scf.YieldOp([branch.results[0]])
    return loop.results[0]


def _hypot1(x: ir.Value) -> ir.Value:
    """sqrt(1 + x^2) without overflow."""
    one = arith.constant(x.type, 1.0)
    big = math.absf(x)
    scaled = arith.mulf(big, math.sqrt(arith.addf(one, arith.mulf(arith.divf(one, x), arith.divf(one, x)))))
    return arith.select(arith.cmpf(F.OGT, big, one), scaled, math.sqrt(arith.addf(one, arith.mulf(x, x))))


def _rotation(app: ir.Value, aqq: ir.Value, apq: ir.Value) -> tuple[ir.Value, ir.Value, ir.Value]:
    """(c, s, t = s / c) of the Jacobi rotation that zeroes apq of the symmetric 2 x 2 [[app, apq], [apq, aqq]] (the smaller angle)."""
    one = arith.constant(app.type, 1.0)
    theta = arith.divf(arith.subf(aqq, app), arith.mulf(arith.constant(app.type, 2.0), apq))
    t = arith.divf(math.copysign(one, theta), arith.addf(math.absf(theta), _hypot1(theta)))
    c = arith.divf(one, _hypot1(t))
    return c, arith.mulf(t, c), t


def _rotate(x: _Matrix, first: Callable[[ir.Value], tuple[Index, Index]], second: Callable[[ir.Value], tuple[Index, Index]],
            count: int, c: ir.Value, s: ir.Value) -> None:
    """For k < count, the elements first(k), second(k) of x as (c u - s v, s u + c v): a rotation of two rows or columns."""
    with counting(0, count) as k:
        u, v = x[first(k)], x[second(k)]
        x[first(k)] = arith.subf(arith.mulf(c, u), arith.mulf(s, v))
        x[second(k)] = arith.addf(arith.mulf(s, u), arith.mulf(c, v))


def _sort(n: int, key: Callable[[ir.Value], ir.Value], before: F, swap: Callable[[ir.Value, ir.Value], None]) -> None:
    """A selection sort of n items: item i swapped with the first later one whose key comes `before` all others."""
    with counting(0, n) as i:
        search = scf.ForOp(arith.addi(i, index(1)), index(n), index(1), [i, key(i)])
        with ir.InsertionPoint(search.body):
            j, (best, value) = search.induction_variable, search.inner_iter_args
            here = key(j)
            take = arith.cmpf(before, here, value)
            scf.YieldOp([arith.select(take, j, best), arith.select(take, here, value)])
        j = search.results[0]
        with _when(arith.cmpi(arith.CmpIPredicate.ne, i, j)):
            swap(i, j)


def _swap(x: _Matrix, first: Callable[[ir.Value], tuple[Index, Index]], second: Callable[[ir.Value], tuple[Index, Index]], count: int) -> None:
    """For k < count, exchange the elements first(k) and second(k) of x."""
    with counting(0, count) as k:
        u, v = x[first(k)], x[second(k)]
        x[first(k)] = v
        x[second(k)] = u


def _identity(x: _Matrix, rows: int, columns: int, dtype: str) -> None:
    """x's rows x columns block set to the identity's."""
    one, zero = scalar.constant(1.0, dtype), scalar.constant(0.0, dtype)
    with counting(0, rows) as i, counting(0, columns) as j:
        x[i, j] = arith.select(arith.cmpi(arith.CmpIPredicate.eq, i, j), one, zero)


def _reflect(x: _Matrix, first: ir.Value | int, last: int, v: _Matrix, k: ir.Value, m: int, tau: ir.Value, w: _Matrix) -> None:
    """x's columns first..last-1 (rows k..m-1) less tau v (v^T x), v the reflector of step k (1, then v's column k below
    row k), row by row (contiguous): w (one row) gathers v^T x in row order, as a dot product per column would."""
    first = index(first) if isinstance(first, int) else first
    below = arith.addi(k, index(1))
    zero = arith.constant(tau.type, 0.0)
    with counting(first, last) as j:
        w[0, j] = zero
    with counting(below, m) as i:
        factor = v[i, k]
        with counting(first, last) as j:
            w[0, j] = arith.addf(w[0, j], arith.mulf(factor, x[i, j]))
    with counting(first, last) as j:
        product = arith.mulf(tau, arith.addf(x[k, j], w[0, j]))
        w[0, j] = product
        x[k, j] = arith.subf(x[k, j], product)
    with counting(below, m) as i:
        factor = v[i, k]
        with counting(first, last) as j:
            x[i, j] = arith.subf(x[i, j], arith.mulf(w[0, j], factor))


def qr(flat: ir.Value, count: int, m: int, n: int, columns: int, dtype: str, parallel: bool) -> ir.Value:
    """The Householder QR of the `count` m x n matrices of the 1-D tensor `flat`: a 1-D tensor of count
    m x (columns + n) matrices, Q's first `columns` columns (none, min(m, n) or m) then R."""
    width, steps = columns + n, min(m - 1, n)
    out, taus, scratch = alloc(count * m * width, dtype), alloc(count * max(steps, 1), dtype), alloc(count * max(n, columns), dtype)
    body = each(count, parallel)
    with ir.InsertionPoint(body):
        b = body.arguments[0]
        base = arith.muli(b, index(m * width))
        q, r = _Matrix(out, base, width), _Matrix(out, arith.addi(base, index(columns)), width)
        tau_base = arith.muli(b, index(max(steps, 1)))
        w = _Matrix(scratch, arith.muli(b, index(max(n, columns))), 0)  # (row 0 only)
        copy_matrix(flat, out, arith.muli(b, index(m * n)), r.base, m, n, width)
        one = scalar.constant(1.0, dtype)
        with counting(0, steps) as k:  # dlarfg, then dlarf on the columns after k
            alpha = r[k, k]
            (squares,) = _totals(arith.addi(k, index(1)), m, 1, lambda i: [_square(r[i, k])], dtype)
            trivial = arith.cmpf(F.OEQ, squares, scalar.constant(0.0, dtype))
            beta = arith.negf(math.copysign(math.sqrt(arith.addf(arith.mulf(alpha, alpha), squares)), alpha))
            tau = arith.select(trivial, scalar.constant(0.0, dtype), arith.divf(arith.subf(beta, alpha), beta))
            scale = arith.select(trivial, one, arith.divf(one, arith.subf(alpha, beta)))
            memref.store(tau, taus, [arith.addi(tau_base, k)])
            with counting(arith.addi(k, index(1)), m) as i:
                r[i, k] = arith.mulf(r[i, k], scale)
            r[k, k] = arith.select(trivial, alpha, beta)
            _reflect(r, arith.addi(k, index(1)), n, r, k, m, tau, w)
        if columns:  # dorg2r: Q = H_0 ... H_{steps-1} I[:, :columns], the last reflector first
            _identity(q, m, columns, dtype)
            with counting(0, steps) as back:
                k = arith.subi(index(steps - 1), back)
                tau = memref.load(taus, [arith.addi(tau_base, k)])
                _reflect(q, k, columns, r, k, m, tau, w)  # (the columns before k are still e_j: no change)
        with counting(0, steps) as k, counting(arith.addi(k, index(1)), m) as i:
            r[i, k] = scalar.constant(0.0, dtype)
        close(parallel)
    return flat_tensor(out, count * m * width)


def _epsilon(dtype: str) -> tuple[float, float]:
    """The dtype's machine epsilon and smallest normal number."""
    info = np.finfo(dtype)
    return float(info.eps), float(info.tiny)


def eigh(flat: ir.Value, count: int, n: int, dtype: str, parallel: bool) -> ir.Value:
    """The eigenvectors and eigenvalues of the `count` symmetric n x n matrices of the 1-D tensor `flat`: a 1-D
    tensor of count n x (n + 1) matrices whose row i is the i-th eigenvector and its eigenvalue, ascending."""
    eps, tiny = _epsilon(dtype)
    width = n + 1
    out, work = alloc(count * n * width, dtype), alloc(count * n * n, dtype)
    body = each(count, parallel)
    with ir.InsertionPoint(body):
        b = body.arguments[0]
        a, v = _Matrix(work, arith.muli(b, index(n * n)), n), _Matrix(out, arith.muli(b, index(n * width)), width)
        copy_matrix(flat, work, a.base, a.base, n, n, n)
        _identity(v, n, n, dtype)
        (squares,) = _totals(0, n * n, 1, lambda k: [_square(memref.load(work, [arith.addi(a.base, k)]))], dtype)
        floor = arith.maximumf(arith.mulf(math.sqrt(squares), scalar.constant(eps / n, dtype)), scalar.constant(tiny, dtype))
        small = scalar.constant(eps, dtype)

        def rotate(p: ir.Value, q: ir.Value) -> ir.Value:
            apq, app, aqq = a[p, q], a[p, p], a[q, q]
            bound = arith.mulf(small, arith.mulf(math.sqrt(math.absf(app)), math.sqrt(math.absf(aqq))))
            should = arith.cmpf(F.UGT, math.absf(apq), arith.maximumf(bound, floor))
            with _when(should):
                c, s, t = _rotation(app, aqq, apq)
                with counting(0, n) as k:  # rows p and q of J^T A J (its columns p and q by symmetry) off the 2 x 2 block
                    up, uq = a[p, k], a[q, k]
                    rows = (arith.subf(arith.mulf(c, up), arith.mulf(s, uq)), arith.addf(arith.mulf(s, up), arith.mulf(c, uq)))
                    a[p, k], a[q, k] = rows
                    a[k, p], a[k, q] = rows
                shift = arith.mulf(t, apq)  # the block: diagonal a_pp - t a_pq and a_qq + t a_pq, a_pq 0
                a[p, p], a[q, q] = arith.subf(app, shift), arith.addf(aqq, shift)
                a[p, q] = a[q, p] = scalar.constant(0.0, dtype)
                _rotate(v, lambda k: (p, k), lambda k: (q, k), n, c, s)  # V^T's rows: the eigenvectors
            return should

        converged = _sweeps(n, rotate)
        nan = scalar.constant(float("nan"), dtype)
        with counting(0, n) as i:
            v[i, n] = arith.select(converged, a[i, i], nan)
        _sort(n, lambda i: v[i, n], F.OLT, lambda i, j: _swap(v, lambda k: (i, k), lambda k: (j, k), width))
        close(parallel)
    return flat_tensor(out, count * n * width)


def svd(flat: ir.Value, count: int, m: int, n: int, dtype: str, parallel: bool) -> ir.Value:
    """The one-sided Jacobi SVD of the `count` m x n matrices (m >= n) of the 1-D tensor `flat`: a 1-D tensor of
    count n x (m + n + 1) matrices whose row i is the i-th column of a V (m: u_i s_i), of V (n: v_i) and s_i,
    by descending s_i."""
    eps, tiny = _epsilon(dtype)
    width = m + n + 1
    out = alloc(count * n * width, dtype)
    body = each(count, parallel)
    with ir.InsertionPoint(body):
        b = body.arguments[0]
        x = _Matrix(out, arith.muli(b, index(n * width)), width)
        source = arith.muli(b, index(m * n))
        with counting(0, n) as i, counting(0, m) as k:
            x[i, k] = tensor.extract(flat, [at(source, k, i, n)])
        _identity(_Matrix(out, arith.addi(x.base, index(m)), width), n, n, dtype)
        cosine = scalar.constant(m * eps, dtype)
        floor = scalar.constant(tiny, dtype)

        def rotate(p: ir.Value, q: ir.Value) -> ir.Value:
            alpha, beta, gamma = _lane_totals(m, 3, lambda k: [_square(x[p, k]), _square(x[q, k]),
                                                                 arith.mulf(x[p, k], x[q, k])], dtype)
            bound = arith.mulf(cosine, arith.mulf(math.sqrt(alpha), math.sqrt(beta)))
            should = arith.cmpf(F.UGT, math.absf(gamma), arith.maximumf(bound, floor))
            with _when(should):
                c, s, _ = _rotation(alpha, beta, gamma)
                _rotate(x, lambda k: (p, k), lambda k: (q, k), m + n, c, s)
            return should

        converged = _sweeps(n, rotate)
        nan = scalar.constant(float("nan"), dtype)
        with counting(0, n) as i:
            (norm,) = _totals(0, m, 1, lambda k: [_square(x[i, k])], dtype)
            x[i, m + n] = arith.select(converged, math.sqrt(norm), nan)
        _sort(n, lambda i: x[i, m + n], F.OGT, lambda i, j: _swap(x, lambda k: (i, k), lambda k: (j, k), width))
        close(parallel)
    return flat_tensor(out, count * n * width)
