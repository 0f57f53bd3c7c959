"""Linear recurrences along an axis (the `recurrence` op: tracing/iir.py's scipy.signal filters; the `spline_filter`
op: tracing/splines.py's ndimage prefilter), as scf loops on buffers: each output reads the previous ones, which no
linalg.generic expresses. The rows are read and written in place in the array's layout (no transposed copy for an
axis other than the last), 4 at a time in one scf.for over their samples (four independent chains; 4 neighbouring
rows of an inner axis read neighbouring elements), the groups an scf.parallel loop on cpu-openmp (the openmp stage
shares them among the threads). A filter's loop carries the sections' states as iteration arguments, so they stay
in registers, and each sample goes through every section before the next is read (sosfilt's loop order: one pass
over memory for any number of sections).

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
Load = Callable[[ir.Value | int], ir.Value]


def filter_rows(x: ir.Value, coefficients: ir.Value, state: ir.Value, shape: tuple[int, int, int], sections: int, order: int,
                form: int, final: bool, dtype: str, parallel: bool) -> ir.Value:
    """x, the 1-D tensor of a row-major (outer, n, inner) array, filtered along its middle axis: each of its outer x
    inner rows of n samples through `sections` sections of `order` in cascade, their numerators and denominators the
    1-D tensor `coefficients` ((sections, 2, order + 1) row-major), each row's initial states `state` ((outer, inner,
    sections, order)); a 1-D tensor of (outer, n (+ sections * order when `final`: the final states), inner)."""
    outer, n, inner = shape
    width = n + (sections * order if final else 0)
    out = alloc(outer * width * inner, dtype)
    _in_groups(outer * inner, parallel, lambda group: _filter(group, x, coefficients, state, out, (n, inner, width), sections, order,
                                                              STEPS[form], final))
    return flat_tensor(out, outer * width * inner)


def _in_groups(rows: int, parallel: bool, build: Callable[[list[ir.Value]], None]) -> None:
    """build(group) for the rows in groups of INTERLEAVED, filtered side by side in one loop over their samples (their
    steps independent, so each waits less on its own previous one; neighbours along an inner axis, when they are, read
    and write neighbouring elements), then for the rows left over one at a time; the groups an scf.parallel loop on
    cpu-openmp (`parallel`)."""
    blocked = rows - rows % INTERLEAVED
    for first, count, together in ((0, blocked // INTERLEAVED, INTERLEAVED), (blocked, rows - blocked, 1)):
        if not count:
            continue
        body = each(count, parallel and count > 1)
        with ir.InsertionPoint(body):
            start = arith.addi(index(first), arith.muli(body.arguments[0], index(together)))
            build([arith.addi(start, index(r)) for r in range(together)])
            close(parallel and count > 1)


def _row_start(row: ir.Value, length: int, inner: int) -> ir.Value:
    """Where row `row` (outer index row // inner, inner index row % inner) of an (outer, length, inner) array starts."""
    return arith.addi(arith.muli(arith.divui(row, index(inner)), index(length * inner)), arith.remui(row, index(inner)))


def _sample(start: ir.Value, k: ir.Value | int, inner: int) -> ir.Value:
    """Sample k of the row starting at `start` of an array whose rows step by `inner`."""
    return arith.addi(start, arith.muli(index(k) if isinstance(k, int) else k, index(inner)))


def _filter(group: list[ir.Value], x: ir.Value, coefficients: ir.Value, state: ir.Value, out: ir.Value, extents: tuple[int, int, int],
            sections: int, order: int, step: Step, final: bool) -> None:
    """The rows `group` of x ((outer, n, inner)) filtered into `out` ((outer, width, inner)) in one scf.for over the
    samples whose iteration arguments are their states (row by row, section by section); each output stored, then
    each row's final states after its n outputs."""
    n, inner, width = extents
    taps, size = order + 1, sections * order
    b, a = ([[tensor.extract(coefficients, [index((s * 2 + which) * taps + k)]) for k in range(taps)] for s in range(sections)]
            for which in (0, 1))
    initial = [tensor.extract(state, [arith.addi(arith.muli(row, index(size)), index(j))]) for row in group for j in range(size)]
    sources, targets = ([_row_start(row, length, inner) for row in group] for length in (n, width))
    loop = scf.ForOp(index(0), index(n), index(1), initial)
    with ir.InsertionPoint(loop.body):
        k, states, following = loop.induction_variable, list(loop.inner_iter_args), []
        for r, (source, target) in enumerate(zip(sources, targets, strict=True)):
            value = tensor.extract(x, [_sample(source, k, inner)])
            for s in range(sections):
                at = r * size + s * order
                value, section = step(value, states[at:at + order], b[s], a[s])
                following += section
            memref.store(value, out, [_sample(target, k, inner)])
        scf.YieldOp(following)
    if final:
        for r, target in enumerate(targets):
            for j in range(size):
                memref.store(loop.results[r * size + j], out, [_sample(target, n + j, inner)])


def spline_rows(x: ir.Value, shape: tuple[int, int, int], order: int, mode: int, parallel: bool) -> ir.Value:
    """scipy.ndimage's B-spline prefilter (ni_splines.c, apply_filter) along the middle axis of x, the 1-D tensor of a
    row-major float64 (outer, n, inner) array: each of its outer x inner rows times the gain, then for each pole z its
    causal pass c[i] += z c[i - 1] and anticausal pass c[i] = z (c[i + 1] - c[i]), each from its boundary's initial
    value (ops.SPLINE_BOUNDARIES[mode]), in place in the result, a group of rows side by side; rows of one sample
    unchanged. SciPy's arithmetic in its order, except that the initial values' sums stop where z^i (its repeated
    products) is 0, where SciPy adds the zero terms to the end of the row."""
    outer, n, inner = shape
    gain = 1.0
    for z in POLES[order]:
        gain *= (1.0 - z) * (1.0 - 1.0 / z)
    out = alloc(outer * n * inner, "float64")

    def build(group: list[ir.Value]) -> None:
        starts = [_row_start(row, n, inner) for row in group]
        loads: list[Load] = [lambda i, start=start: memref.load(out, [_sample(start, i, inner)]) for start in starts]

        def store(value: ir.Value, start: ir.Value, i: ir.Value | int) -> None:
            memref.store(value, out, [_sample(start, i, inner)])

        with counting(0, n) as i:
            for start in starts:
                store(arith.mulf(tensor.extract(x, [_sample(start, i, inner)]), number(gain if n > 1 else 1.0)), start, i)
        for z in POLES[order] if n > 1 else ():
            causal, anticausal = _BOUNDARIES[mode]
            for start, load in zip(starts, loads, strict=True):
                store(causal(load, n, z), start, 0)
            _pass(loads, store, starts, range(1, n), -1, lambda value, previous: arith.addf(value, arith.mulf(number(z), previous)))
            for start, load in zip(starts, loads, strict=True):
                store(anticausal(load, n, z), start, n - 1)
            _pass(loads, store, starts, range(n - 2, -1, -1), 1, lambda value, previous: arith.mulf(number(z), arith.subf(previous, value)))

    _in_groups(outer * inner, parallel, build)
    return flat_tensor(out, outer * n * inner)


def _pass(loads: Sequence[Load], store: Callable[[ir.Value, ir.Value, ir.Value], None], starts: Sequence[ir.Value], samples: range,
          before: int, step: Callable[[ir.Value, ir.Value], ir.Value]) -> None:
    """c[i] = step(c[i], c[i + before]) for i in `samples` (range(1, n) or its reverse from n - 2) of each row in
    place, in one scf.for carrying each row's last value."""
    loop = scf.ForOp(index(0), index(len(samples)), index(1), [load(samples[0] + before) for load in loads])
    with ir.InsertionPoint(loop.body):
        i = arith.addi(index(samples[0]), arith.muli(loop.induction_variable, index(samples.step)))
        values = [step(load(i), previous) for load, previous in zip(loads, loop.inner_iter_args, strict=True)]
        for value, start in zip(values, starts, strict=True):
            store(value, start, i)
        scf.YieldOp(values)


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
