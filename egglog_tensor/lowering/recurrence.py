"""Linear recurrences along the last axis (the `recurrence` op: tracing/iir.py's scipy.signal filters), as scf loops
on buffers: each output reads the previous ones, which no linalg.generic expresses. The rows are an scf.parallel loop
on cpu-openmp (the openmp stage shares them among the threads); each row is one scf.for over its samples whose
iteration arguments are the sections' states, so they stay in registers, and each sample goes through every section
before the next is read (sosfilt's loop order: one pass over memory for any number of sections).

A section's step is SciPy's, in its order of operations (no products fused into sums), so results are SciPy's bit for
bit where the coefficients are: lfilter's direct form II transposed (scipy/signal/_lfilter.cc, `filt`),

    y = z[0] + b[0] x,   z[k] = (z[k + 1] + x b[k + 1]) - y a[k + 1],   z[p - 1] = x b[p] - y a[p],

and sosfilt's (scipy/signal/_sosfilt.pyx), whose state update adds the next state last:

    y = b[0] x + z[0],   z[k] = (b[k + 1] x - a[k + 1] y) + z[k + 1],   z[p - 1] = b[p] x - a[p] y.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from mlir import ir
from mlir.dialects import arith, memref, scf, tensor

from .factor import flat_tensor
from .loops import alloc, close, each, index

Step = Callable[[ir.Value, Sequence[ir.Value], Sequence[ir.Value], Sequence[ir.Value]], tuple[ir.Value, list[ir.Value]]]


def _lfilter_step(x: ir.Value, z: Sequence[ir.Value], b: Sequence[ir.Value], a: Sequence[ir.Value]) -> tuple[ir.Value, list[ir.Value]]:
    """One sample through lfilter's direct form II transposed section: its output and the next states."""
    y = arith.addf(z[0], arith.mulf(b[0], x))
    p = len(z)
    states = [arith.subf(arith.addf(z[k + 1], arith.mulf(x, b[k + 1])), arith.mulf(y, a[k + 1])) for k in range(p - 1)]
    return y, [*states, arith.subf(arith.mulf(x, b[p]), arith.mulf(y, a[p]))]


def _sosfilt_step(x: ir.Value, z: Sequence[ir.Value], b: Sequence[ir.Value], a: Sequence[ir.Value]) -> tuple[ir.Value, list[ir.Value]]:
    """One sample through sosfilt's section: its output and the next states."""
    y = arith.addf(arith.mulf(b[0], x), z[0])
    p = len(z)
    new = [arith.subf(arith.mulf(b[k + 1], x), arith.mulf(a[k + 1], y)) for k in range(p)]
    return y, [arith.addf(v, z[k + 1]) for k, v in enumerate(new[:-1])] + [new[-1]]


STEPS: tuple[Step, ...] = (_lfilter_step, _sosfilt_step)  # by ops.RECURRENCE_FORMS' index


INTERLEAVED = 4  # rows filtered side by side in one loop: a step waits on the previous one's result, four chains hide it


def filter_rows(x: ir.Value, coefficients: ir.Value, state: ir.Value, rows: int, n: int, sections: int, order: int, form: int,
                final: bool, dtype: str, parallel: bool) -> ir.Value:
    """The `rows` rows of n samples of the 1-D tensor x (row-major) through `sections` sections of `order` in cascade:
    their numerators and denominators the 1-D tensor `coefficients` ((sections, 2, order + 1) row-major), each row's
    initial states `state` ((rows, sections, order)); a 1-D tensor of rows rows of n outputs, each followed by its
    final states when `final`. INTERLEAVED rows at a time share a loop over the samples (their steps independent,
    so each waits less on its own previous one), the rows left over one at a time."""
    width = n + (sections * order if final else 0)
    out = alloc(rows * width, dtype)
    blocked = rows - rows % INTERLEAVED
    for first, count, together in ((0, blocked // INTERLEAVED, INTERLEAVED), (blocked, rows - blocked, 1)):
        if not count:
            continue
        body = each(count, parallel and count > 1)
        with ir.InsertionPoint(body):
            start = arith.addi(index(first), arith.muli(body.arguments[0], index(together)))
            group = [arith.addi(start, index(r)) for r in range(together)]
            _filter(group, x, coefficients, state, out, n, width, sections, order, STEPS[form], final)
            close(parallel and count > 1)
    return flat_tensor(out, rows * width)


def _filter(group: list[ir.Value], x: ir.Value, coefficients: ir.Value, state: ir.Value, out: ir.Value, n: int, width: int,
            sections: int, order: int, step: Step, final: bool) -> None:
    """The rows `group` filtered in one scf.for over the samples whose iteration arguments are their states (row by
    row, section by section); each row's outputs stored at its row of `out` (of `width`), then its final states."""
    taps, size = order + 1, sections * order
    b, a = ([[tensor.extract(coefficients, [index((s * 2 + which) * taps + k)]) for k in range(taps)] for s in range(sections)]
            for which in (0, 1))
    initial = [tensor.extract(state, [arith.addi(arith.muli(row, index(size)), index(j))]) for row in group for j in range(size)]
    sources, targets = ([arith.muli(row, index(stride)) for row in group] for stride in (n, width))
    loop = scf.ForOp(index(0), index(n), index(1), initial)
    with ir.InsertionPoint(loop.body):
        k, states, following = loop.induction_variable, list(loop.inner_iter_args), []
        for r, (source, target) in enumerate(zip(sources, targets, strict=True)):
            value = tensor.extract(x, [arith.addi(source, k)])
            for s in range(sections):
                at = r * size + s * order
                value, section = step(value, states[at:at + order], b[s], a[s])
                following += section
            memref.store(value, out, [arith.addi(target, k)])
        scf.YieldOp(following)
    if final:
        for r, target in enumerate(targets):
            for j in range(size):
                memref.store(loop.results[r * size + j], out, [arith.addi(target, index(n + j))])
