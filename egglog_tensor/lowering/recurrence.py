"""Linear recurrences along an axis (the `recurrence` op: tracing/iir.py's scipy.signal filters; the `spline_filter`
op: tracing/splines.py's ndimage prefilter, along the last axis), as scf loops on buffers: each output reads the
previous ones, which no linalg.generic expresses. The rows are an scf.parallel loop on cpu-openmp (the openmp stage
shares them among the threads); a filter's rows are read and written in place in the array's layout (no transposed
copy for an axis other than the last), 4 at a time in one scf.for over their samples whose iteration arguments are
the sections' states, so they stay in registers, and each sample goes through every section before the next is read
(sosfilt's loop order: one pass over memory for any number of sections).

A section's step is SciPy's, in its order of operations (no products fused into sums), so results are SciPy's bit for
bit where the coefficients are: lfilter's direct form II transposed (scipy/signal/_lfilter.cc, `filt`),

    y = z[0] + b[0] x,   z[k] = (z[k + 1] + x b[k + 1]) - y a[k + 1],   z[p - 1] = x b[p] - y a[p],

and sosfilt's (scipy/signal/_sosfilt.pyx), whose state update adds the next state last:

    y = b[0] x + z[0],   z[k] = (b[k + 1] x - a[k + 1] y) + z[k + 1],   z[p - 1] = b[p] x - a[p] y.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from mlir import ir
from mlir.dialects import arith, memref, scf, tensor

from .factor import flat_tensor
from .loops import alloc, close, counting, each, index

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


def filter_rows(x: ir.Value, coefficients: ir.Value, state: ir.Value, shape: tuple[int, int, int], sections: int, order: int,
                form: int, final: bool, dtype: str, parallel: bool) -> ir.Value:
    """x, the 1-D tensor of a row-major (outer, n, inner) array, filtered along its middle axis: each of its outer x
    inner rows of n samples through `sections` sections of `order` in cascade, their numerators and denominators the
    1-D tensor `coefficients` ((sections, 2, order + 1) row-major), each row's initial states `state` ((outer, inner,
    sections, order)); a 1-D tensor of (outer, n (+ sections * order when `final`: the final states), inner).
    INTERLEAVED rows at a time share a loop over the samples (their steps independent, so each waits less on its own
    previous one; neighbours along inner, when they are, read and write neighbouring elements), the rows left over
    one at a time."""
    outer, n, inner = shape
    width = n + (sections * order if final else 0)
    out = alloc(outer * width * inner, dtype)
    rows = outer * inner
    blocked = rows - rows % INTERLEAVED
    for first, count, together in ((0, blocked // INTERLEAVED, INTERLEAVED), (blocked, rows - blocked, 1)):
        if not count:
            continue
        body = each(count, parallel and count > 1)
        with ir.InsertionPoint(body):
            start = arith.addi(index(first), arith.muli(body.arguments[0], index(together)))
            group = [arith.addi(start, index(r)) for r in range(together)]
            _filter(group, x, coefficients, state, out, (n, inner, width), sections, order, STEPS[form], final)
            close(parallel and count > 1)
    return flat_tensor(out, outer * width * inner)


def _filter(group: list[ir.Value], x: ir.Value, coefficients: ir.Value, state: ir.Value, out: ir.Value, extents: tuple[int, int, int],
            sections: int, order: int, step: Step, final: bool) -> None:
    """The rows `group` (row r: sample k of x at (r // inner) n inner + k inner + r % inner, of `out` the same with
    `width` for n) filtered in one scf.for over the samples whose iteration arguments are their states (row by row,
    section by section); each output stored, then each row's final states after its n outputs."""
    n, inner, width = extents
    taps, size = order + 1, sections * order
    b, a = ([[tensor.extract(coefficients, [index((s * 2 + which) * taps + k)]) for k in range(taps)] for s in range(sections)]
            for which in (0, 1))
    initial = [tensor.extract(state, [arith.addi(arith.muli(row, index(size)), index(j))]) for row in group for j in range(size)]
    starts = [(arith.divui(row, index(inner)), arith.remui(row, index(inner))) for row in group]
    sources, targets = ([arith.addi(arith.muli(o, index(length * inner)), j) for o, j in starts] for length in (n, width))

    def sample(base: ir.Value, k: ir.Value | int) -> ir.Value:
        return arith.addi(base, arith.muli(index(k) if isinstance(k, int) else k, index(inner)))

    loop = scf.ForOp(index(0), index(n), index(1), initial)
    with ir.InsertionPoint(loop.body):
        k, states, following = loop.induction_variable, list(loop.inner_iter_args), []
        for r, (source, target) in enumerate(zip(sources, targets, strict=True)):
            value = tensor.extract(x, [sample(source, k)])
            for s in range(sections):
                at = r * size + s * order
                value, section = step(value, states[at:at + order], b[s], a[s])
                following += section
            memref.store(value, out, [sample(target, k)])
        scf.YieldOp(following)
    if final:
        for r, target in enumerate(targets):
            for j in range(size):
                memref.store(loop.results[r * size + j], out, [sample(target, n + j)])


def spline_rows(x: ir.Value, rows: int, n: int, order: int, mode: int, parallel: bool) -> ir.Value:
    """scipy.ndimage's B-spline prefilter (ni_splines.c, apply_filter) of the `rows` float64 rows of n samples of the
    1-D tensor x: each row times the gain, then for each pole z its causal pass c[i] += z c[i - 1] and anticausal pass
    c[i] = z (c[i + 1] - c[i]), each from its boundary's initial value (ops.SPLINE_BOUNDARIES[mode]), on a row buffer;
    rows of one sample unchanged. SciPy's arithmetic in its order, except that the initial values' sums stop where
    z^i (its repeated products) is 0, where SciPy adds the zero terms to the end of the row."""
    poles = POLES[order]
    gain = 1.0
    for z in poles:
        gain *= (1.0 - z) * (1.0 - 1.0 / z)
    out = alloc(rows * n, "float64")
    body = each(rows, parallel)
    with ir.InsertionPoint(body):
        base = arith.muli(body.arguments[0], index(n))

        def at(i: ir.Value | int) -> ir.Value:
            return arith.addi(base, index(i) if isinstance(i, int) else i)

        def load(i: ir.Value | int) -> ir.Value:
            return memref.load(out, [at(i)])

        def store(value: ir.Value, i: ir.Value | int) -> None:
            memref.store(value, out, [at(i)])

        with counting(0, n) as i:
            store(arith.mulf(tensor.extract(x, [at(i)]), number(gain if n > 1 else 1.0)), i)
        for z in poles if n > 1 else ():
            store(_BOUNDARIES[mode][0](load, n, z), 0)
            causal = scf.ForOp(index(1), index(n), index(1), [load(0)])
            with ir.InsertionPoint(causal.body):
                i = causal.induction_variable
                value = arith.addf(load(i), arith.mulf(number(z), causal.inner_iter_args[0]))
                store(value, i)
                scf.YieldOp([value])
            store(_BOUNDARIES[mode][1](load, n, z), n - 1)
            anticausal = scf.ForOp(index(0), index(n - 1), index(1), [load(n - 1)])
            with ir.InsertionPoint(anticausal.body):
                i = arith.subi(index(n - 2), anticausal.induction_variable)
                value = arith.mulf(number(z), arith.subf(anticausal.inner_iter_args[0], load(i)))
                store(value, i)
                scf.YieldOp([value])
        close(parallel)
    return flat_tensor(out, rows * n)


# SciPy's poles of the B-spline prefilters of orders 2 to 5 (ni_splines.c, get_filter_poles)
POLES = {2: (-0.171572875253809902396622551580603843,), 3: (-0.267949192431122706472553658494127633,),
         4: (-0.361341225900220177092212841325675255, -0.013725429297339121360331226939128204),
         5: (-0.430575347099973791851434783493520110, -0.043096288203264653822712376822550182)}


def number(value: float) -> ir.Value:
    return arith.constant(ir.F64Type.get(), value)


def _vanishing(z: float) -> int:
    """The first i with z^i (repeated products, from z) exactly 0: the terms from there on add nothing."""
    power, i = z, 1
    while power != 0.0:
        power, i = power * z, i + 1
    return i


def _power(z: float, n: int) -> float:
    """z^n by n - 1 repeated products (0 from _vanishing(z) on)."""
    power = z
    for _ in range(min(n, _vanishing(z)) - 1):
        power *= z
    return power if n < _vanishing(z) else 0.0


def _powered_sum(first: ir.Value, z: float, end: int, term: Callable[[ir.Value], ir.Value]) -> tuple[ir.Value, ir.Value]:
    """first + z term(1) + z^2 term(2) + ... + z^(end - 1) term(end - 1), added in order, z^i by repeated products
    (SciPy's loops), the terms from _vanishing(z) on left out; and z^end."""
    loop = scf.ForOp(index(1), index(max(min(end, _vanishing(z)), 1)), index(1), [first, number(z)])
    with ir.InsertionPoint(loop.body):
        total, power = loop.inner_iter_args
        scf.YieldOp([arith.addf(total, arith.mulf(power, term(loop.induction_variable))), arith.mulf(power, number(z))])
    return loop.results[0], loop.results[1]


Load = Callable[[ir.Value | int], ir.Value]


def _causal_mirror(load: Load, n: int, z: float) -> ir.Value:
    far = number(math.pow(z, n - 1))
    first = arith.addf(load(0), arith.mulf(far, load(n - 1)))
    total, _ = _powered_sum(first, z, n - 1, lambda i: arith.addf(load(i), arith.mulf(far, load(arith.subi(index(n - 1), i)))))
    return arith.divf(total, number(1 - math.pow(z, n - 1) * math.pow(z, n - 1)))


def _anticausal_mirror(load: Load, n: int, z: float) -> ir.Value:
    return arith.divf(arith.mulf(arith.addf(arith.mulf(number(z), load(n - 2)), load(n - 1)), number(z)), number(z * z - 1))


def _causal_reflect(load: Load, n: int, z: float) -> ir.Value:
    """(SciPy's last term, i = n - 1, reads c[0] as summed so far: it is added after the loop.)"""
    far = number(math.pow(z, n))
    first = arith.addf(load(0), arith.mulf(far, load(n - 1)))
    total, power = _powered_sum(first, z, n - 1, lambda i: arith.addf(load(i), arith.mulf(far, load(arith.subi(index(n - 1), i)))))
    if n - 1 < _vanishing(z):
        total = arith.addf(total, arith.mulf(power, arith.addf(load(n - 1), arith.mulf(far, total))))
    return arith.addf(arith.mulf(total, number(z / (1 - math.pow(z, n) * math.pow(z, n)))), load(0))


def _anticausal_reflect(load: Load, n: int, z: float) -> ir.Value:
    return arith.mulf(load(n - 1), number(z / (z - 1)))


def _causal_wrap(load: Load, n: int, z: float) -> ir.Value:
    total, _ = _powered_sum(load(0), z, n, lambda i: load(arith.subi(index(n), i)))
    return arith.divf(total, number(1 - _power(z, n)))


def _anticausal_wrap(load: Load, n: int, z: float) -> ir.Value:
    total, _ = _powered_sum(load(n - 1), z, n, lambda i: load(arith.subi(i, index(1))))
    return arith.mulf(total, number(z / (_power(z, n) - 1)))


_BOUNDARIES = ((_causal_mirror, _anticausal_mirror), (_causal_reflect, _anticausal_reflect), (_causal_wrap, _anticausal_wrap))
