"""argmax/argmin along contiguous rows as vector loops whose running bests stay in registers.

The linalg form of an arg-reduction (emit.Emitter._index_reduction) keeps one (key, index) pair
per lane in a buffer: LLVM cannot vectorize a max that carries its index, so the lanes are a
parallel loop of the generic and every step loads and stores them (0.55x NumPy at 4096x4096
float32 on one core). Here each segment of a row is one loop over vectors of VF elements, UNROLL
accumulator pairs side by side as loop-carried vectors (scf.for iter_args):

    better = (v > best or v is NaN) and best is not NaN       (floats; integers: v > best)
    best = select(better, v, best); at = select(better, i + iota, at)

Each lane meets its elements in ascending order and only a strictly better key replaces its
best, so each lane holds its first best; the lanes are then combined (the largest key, then the
smallest index among the lanes holding it, compared as scalar.order_key's integers: NaN
first, -0.0 == 0.0) and the elements past the last full step are picked
one by one. A forall over (row, segment) is the threads' loop on cpu-openmp (scf.parallel) and a
plain loop on cpu. Indices within a segment are int32 (VF lanes per vector, not VF / 2). The rows of a fused operand
(`np.argmax(x * w, -1)`) are computed inside the forall, one row at a time into a buffer in
cache (emit.py `_computed_rows`), and searched there.
"""

from __future__ import annotations

from collections.abc import Callable

from mlir import ir
from mlir.dialects import arith, scf, tensor, vector

from . import scalar

UNROLL = 4  # accumulator pairs side by side: a key's compare, max and select wait on the previous step's
# LLVM would unroll the loop again: twice the accumulators spill AVX2's 16 registers
NO_UNROLL = "#llvm.loop_annotation<unroll = #llvm.loop_unroll<disable = true>>"


def _kind(name: str) -> ir.Attribute:
    return ir.Attribute.parse(f"#vector.kind<{name}>")


def _index(value: int) -> ir.Value:
    return arith.constant(ir.IndexType.get(), value)


def supports(dtype: str) -> bool:
    """Whether arg_rows handles `dtype`: 4- and 8-byte floats (by their integer keys) and signed integers."""
    return dtype in ("float32", "float64", "int32", "int64")


Row = Callable[[ir.Value], tuple[ir.Value, ir.Value]]  # row index -> (a 2-D tensor holding the row, its row in it)


def plain_rows(x: ir.Value) -> Row:
    """The rows of a C-ordered (R, N) tensor, read where they are."""
    return lambda row: (x, row)


def arg_rows(shape: tuple[int, int], row_of: Row, pick: str, dtype: str, segments: int, lanes: int) -> tuple[ir.Value, ir.Value]:
    """For (R, N) rows of `dtype` (`row_of` gives each row, built inside the rows' loop: a fused
    operand's row is computed there, into a buffer in cache), each cut into `segments` parts (the last
    takes the rest; each at least lanes * UNROLL long): the best order key (scalar.KEYS) of each part
    and its index within the row, as (R, segments) tensors of the key type and int64."""
    rows, n = shape
    key = scalar.KEYS.get(dtype, dtype)
    size = n // segments
    width = lanes * UNROLL
    assert size >= width and supports(dtype), (size, width, dtype)
    position = "int32" if n < 2**31 else "int64"
    vtype = ir.VectorType.get([lanes], scalar.element_type(dtype))
    order = arith.CmpIPredicate.sgt if pick == "max" else arith.CmpIPredicate.slt
    extreme = arith.maxsi if pick == "max" else arith.minsi
    outs = [tensor.empty([rows, segments], scalar.element_type(key)), tensor.empty([rows, segments], scalar.element_type("int64"))]
    loop = scf.ForallOp([0], [rows * segments], [1], outs)
    with ir.InsertionPoint(loop.body):
        (item,) = loop.induction_variables
        row, part = arith.divui(item, _index(segments)), arith.remui(item, _index(segments))
        x, at_row = row_of(row)
        start = arith.muli(part, _index(size))
        last = arith.cmpi(arith.CmpIPredicate.eq, part, _index(segments - 1))
        length = arith.select(last, arith.subi(_index(n), start), _index(size))
        full = arith.muli(arith.divui(length, _index(width)), _index(width))
        iota = vector.step(ir.VectorType.get([lanes], ir.IndexType.get()))
        iota = arith.index_cast(ir.VectorType.get([lanes], scalar.element_type(position)), iota)
        floats = dtype in scalar.KEYS  # compared as floats in the loop, as keys once it ends
        identity = scalar.constant(scalar.reduction_identity(pick, dtype if floats else key, False), dtype if floats else key, lanes=lanes)
        # each lane's index starts at its first element's: a first element equal to the identity keeps it
        step = scalar.constant(lanes, position, lanes=lanes)
        firsts = [iota]
        for _ in range(UNROLL - 1):
            firsts.append(arith.addi(firsts[-1], step))
        steps = scf.ForOp(_index(0), full, _index(width), [identity] * UNROLL + firsts + [iota])
        with ir.InsertionPoint(steps.body):
            at = steps.induction_variable
            bests, indices = list(steps.inner_iter_args[:UNROLL]), list(steps.inner_iter_args[UNROLL:2 * UNROLL])
            here = steps.inner_iter_args[2 * UNROLL]  # the positions of this step's first vector
            pad = scalar.constant(0, dtype)
            for u in range(UNROLL):
                column = arith.addi(arith.addi(start, at), _index(u * lanes))
                value = vector.transfer_read(vtype, x, [at_row, column], ir.AffineMapAttr.get(ir.AffineMap.get_minor_identity(2, 1)),
                                             pad, [True])
                if floats:  # beyond, or NaN, where the best is not NaN: NaN wins, the first NaN stays
                    beyond = arith.cmpf(arith.CmpFPredicate.UGT if pick == "max" else arith.CmpFPredicate.ULT, value, bests[u])
                    better = arith.andi(beyond, arith.cmpf(arith.CmpFPredicate.ORD, bests[u], bests[u]))
                    bests[u] = arith.select(better, value, bests[u])
                else:
                    better = arith.cmpi(order, value, bests[u])
                    bests[u] = extreme(value, bests[u])
                indices[u] = arith.select(better, here, indices[u])
                here = arith.addi(here, step)  # one constant in a register, not one per vector
            scf.YieldOp(bests + indices + [here])
        steps.operation.attributes["llvm.loop_annotation"] = ir.Attribute.parse(NO_UNROLL)
        bests = [scalar.order_key(pick, dtype, b, lanes) for b in steps.results[:UNROLL]]
        indices = list(steps.results[UNROLL:2 * UNROLL])
        top = bests[0]
        for b in bests[1:]:
            top = extreme(top, b)
        best = vector.reduction(scalar.element_type(key), _kind("maxsi" if pick == "max" else "minsi"), top)
        holders = vector.broadcast(top.type, best)
        never = scalar.constant(2**31 - 1 if position == "int32" else 2**63 - 1, position, lanes=lanes)
        first = never
        for b, i in zip(bests, indices, strict=True):
            first = arith.minsi(first, arith.select(arith.cmpi(arith.CmpIPredicate.eq, b, holders), i, never))
        index = arith.extsi(scalar.element_type("int64"), vector.reduction(scalar.element_type(position), _kind("minsi"), first))
        # the elements past the last full step, one by one
        tail = scf.ForOp(full, length, _index(1), [best, index])
        with ir.InsertionPoint(tail.body):
            at = tail.induction_variable
            value = scalar.load(tensor.extract(x, [at_row, arith.addi(start, at)]), dtype)
            k = scalar.order_key(pick, dtype, value)
            better = arith.cmpi(order, k, tail.inner_iter_args[0])
            here = arith.index_cast(scalar.element_type("int64"), at)
            scf.YieldOp([extreme(k, tail.inner_iter_args[0]), arith.select(better, here, tail.inner_iter_args[1])])
        best, index = tail.results
        index = arith.addi(index, arith.index_cast(scalar.element_type("int64"), start))
        ones = [tensor.from_elements(ir.RankedTensorType.get([1, 1], v.type), [v]) for v in (best, index)]
        terminator = loop.terminator()
        with ir.InsertionPoint(terminator.block):
            for one, into in zip(ones, loop.inner_iter_args, strict=True):
                dynamic = ir.ShapedType.get_dynamic_stride_or_offset()  # offsets (row, part) are operands
                tensor.parallel_insert_slice(one, into, [row, part], [], [], [dynamic, dynamic], [1, 1], [1, 1])
    return loop.results[0], loop.results[1]
