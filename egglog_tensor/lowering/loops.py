"""scf loops over buffers, for the work linalg.generic cannot express (sorting.py, factor.py): a loop over
range(count), parallel or not, 1-D buffers, index constants."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from mlir import ir
from mlir.dialects import arith, memref, scf

from . import scalar


def each(count: int, parallel: bool) -> ir.Block:
    """The body of a loop over range(count), its index the block's argument: an scf.parallel loop
    (the openmp stage shares it among the threads) or an scf.for; close ends it."""
    bounds = ([index(0)], [index(count)], [index(1)])
    if parallel:
        return scf.ParallelOp([], *bounds, []).regions[0].blocks.append(ir.IndexType.get())
    return scf.ForOp(*(b[0] for b in bounds)).body


def close(parallel: bool) -> None:
    """The terminator of an `each` loop's body."""
    if parallel:
        scf.ReduceOp([], 0)
    else:
        scf.YieldOp([])


def alloc(size: int, dtype: str) -> ir.Value:
    """A 1-D buffer of `size` elements of `dtype` (freed by the bufferize stage's deallocation pipeline)."""
    return memref.alloc(ir.MemRefType.get([size], scalar.storage_type(dtype)), [], [])


def index(value: int) -> ir.Value:
    return arith.constant(ir.IndexType.get(), value)


@contextlib.contextmanager
def counting(lower: ir.Value | int, upper: ir.Value | int, step: int = 1) -> Iterator[ir.Value]:
    """An scf.for over range(lower, upper, step) whose body is built in the `with` block (its index yielded)."""
    loop = scf.ForOp(*(index(v) if isinstance(v, int) else v for v in (lower, upper, step)))
    with ir.InsertionPoint(loop.body):
        yield loop.induction_variable
        scf.YieldOp([])
