"""Scans along contiguous rows as vector loops: cumsum/cumprod/cummax/cummin of long rows.

The linalg form of a scan (scans._scan_generic) adds one element at a time to a running
value: one dependent scalar op per element, scalar loads and stores (about 40% of the copy roofline
at 4096x4096 float32). Here each row is one iteration of a forall (the threads' loop on
cpu-openmp, a plain loop on cpu), walked VF elements at a time:

    for s = 1, 2, 4, ... < VF:                        each lane: the prefix of its vector (log2 VF steps;
        v = v op spread(v, s)                         spread: in each block of 2s lanes, the lower half's last
                                                      lane in the upper half, the op's identity in the lower:
                                                      in-lane shuffles for s < 4 on AVX2)
    out[at:at+VF] = running op v                      running: the value before the vector, in every lane
    running = running op broadcast(v[VF-1])           the same operands as the stored last lane: the same value

so the loop carries one vector and each step waits on one op. The elements past the last full
vector are scanned one by one. Order: element i is (the running value before its vector) op (its
vector's prefix up to i, as a tree); NumPy applies the op one element at a time. Integer scans and
max/min give the same values in any order; float sums and products round differently, with an
error that grows with i / VF instead of i (docs/accuracy.md, "Scans").
"""

from __future__ import annotations

import math

from mlir import ir
from mlir.dialects import arith, scf, tensor, vector

from . import scalar
from .argrows import Row
from .loops import index

DTYPES = ("float32", "float64", "int32", "int64", "uint32", "uint64")


def supports(dtype: str) -> bool:
    """Whether scan_rows handles `dtype` (4- and 8-byte elements whose ops apply to vectors as they are)."""
    return dtype in DTYPES


def scan_rows(shape: tuple[int, ...], n: int, row_of: Row, op: str, dtype: str, identity: float, lanes: int,
              starts: ir.Value | None = None) -> ir.Value:
    """The scan with `op` (a reduction's name: sum, prod, max, min) of the rows of n elements of `dtype` that make up
    a C-ordered tensor of `shape` (n divides its last extent; `row_of` gives each row inside the rows' loop), each
    from `starts[row]` (a 1-D tensor) or `identity`: a tensor of `shape`, each row written in place (the kernel's
    output itself where it is the result)."""
    rows, rank = math.prod(shape) // n, len(shape)
    assert supports(dtype) and shape[-1] % n == 0, (dtype, shape, n)
    name, element = scalar.STEPS[op], scalar.storage_type(dtype)
    vtype = ir.VectorType.get([lanes], element)
    full = n // lanes * lanes
    fill = scalar.constant(identity, dtype, lanes=lanes)
    loop = scf.ForallOp([0], [rows], [1], [tensor.empty(list(shape), element)])
    dynamic = ir.ShapedType.get_dynamic_stride_or_offset()
    row_type = ir.RankedTensorType.get([n], element)
    with ir.InsertionPoint(loop.body):
        (row,) = loop.induction_variables
        x, at_row = row_of(row)
        place, at = [], arith.muli(row, index(n))  # the row's first element's index along each axis
        for extent in reversed(shape):
            place.insert(0, arith.remui(at, index(extent)))
            at = arith.divui(at, index(extent))
        where = ([], [], [], [dynamic] * rank, [1] * (rank - 1) + [n], [1] * rank)
        dest = tensor.extract_slice(row_type, loop.inner_iter_args[0], place, *where[1:])
        start = tensor.extract(starts, [row]) if starts is not None else scalar.constant(identity, dtype)
        minor = ir.AffineMapAttr.get(ir.AffineMap.get_minor_identity(2, 1))
        steps = scf.ForOp(index(0), index(full), index(lanes), [vector.broadcast(vtype, start), dest])
        with ir.InsertionPoint(steps.body):
            at = steps.induction_variable
            running, out = steps.inner_iter_args
            v = vector.transfer_read(vtype, x, [at_row, at], minor, scalar.constant(0, dtype), [True])
            span = 1
            while span < lanes:  # in each block of 2 * span lanes, the upper half takes the lower half's last lane
                mask = [lanes + i // (2 * span) * 2 * span + span - 1 if i % (2 * span) >= span else i for i in range(lanes)]
                v = scalar.apply(name, dtype, dtype, [vector.shuffle(fill, v, mask), v])
                span *= 2
            total = vector.shuffle(v, v, [lanes - 1] * lanes)
            identity_map = ir.AffineMapAttr.get(ir.AffineMap.get_identity(1))
            out = vector.transfer_write(row_type, scalar.apply(name, dtype, dtype, [running, v]), out, [at], identity_map, [True])
            scf.YieldOp([scalar.apply(name, dtype, dtype, [running, total]), out])
        tail = scf.ForOp(index(full), index(n), index(1), [vector.extract(steps.results[0], [], [0]), steps.results[1]])
        with ir.InsertionPoint(tail.body):
            at = tail.induction_variable
            value = scalar.apply(name, dtype, dtype, [tail.inner_iter_args[0], tensor.extract(x, [at_row, at])])
            scf.YieldOp([value, tensor.insert(value, tail.inner_iter_args[1], [at])])
        terminator = loop.terminator()
        with ir.InsertionPoint(terminator.block):
            tensor.parallel_insert_slice(tail.results[1], loop.inner_iter_args[0], place, *where[1:])
    return loop.results[0]
