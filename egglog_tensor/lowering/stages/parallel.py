"""Thread-level parallelism for the cpu-openmp target, with MLIR's transform dialect.

Each linalg op of the emitted module (elementwise groups, reductions, fills, untiled
contractions) is split into one chunk per thread along one loop, and only that loop becomes
parallel; everything inside a chunk stays an ordinary sequential loop nest, which LLVM vectorizes
(zmm loads/stores, libmvec calls for exp/log/tanh/sin/cos, see stages/vecmath.py):

    scf.forall (t) in (T)                   -> scf.parallel -> omp.parallel + omp.wsloop (T iterations)
      linalg.generic on the t-th slice     -> scf.for nest (convert-linalg-to-loops), inner loop vectorized

Which loop is split (`choose`):

- an op with parallel loops: `tile_using_forall num_threads`, along the outermost parallel loop
  whose extent divides evenly into the threads or is large enough (>= 8 T) that the imbalance of
  the last chunk does not matter; otherwise the largest parallel loop. Row reductions (axis=-1)
  are thus split over rows, column reductions over columns, elementwise ops over the outer dim.
- an op with only reduction loops (`np.sum(a*b)`, full reductions): the reduction is split
  (`tile_reduction_using_forall num_threads`): each thread reduces its chunk into its own partial
  result, initialized with the combiner's neutral element, and a `linalg.reduce` combines the T
  partials afterwards. The combiner must be one arith op (addf, maximumf, addi, ...; any/all:
  maxui/minui of the stored bytes, lowering/emit.py); argmax's (two results, value and index) are
  left sequential.
- ops with less than MIN_WORK iterations in total are left alone: a parallel region costs a few
  microseconds.

The ops are addressed in payload order: one `match interface{LinalgOp}` handle split into one
handle per op (`split_handle`), so the script depends only on the IR it is built from.
The ops the "tile" stage (lowering/tiling.py, which runs next) computes are skipped, as the contraction
plan both stages read says (lowering/plan.py `Plan.owned`): the tagged contractions, which it splits
over output blocks (and batches), a matmul's epilogue and the zero fills it computes block by block
with them. An untagged batch_matmul (a unit m, n or k) is split over its batch loop here.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

from mlir import ir
from mlir.dialects import transform
from mlir.dialects.transform import structured

from ...target import Target
from .. import scripts
from ..payload import as_operation, in_forall, linalg_ops, loop_extents, reverses
from ..plan import Plan
from ..policy import MIN_WORK
from .stage import Stage


# Iterator types of the named ops the emitter produces (generics carry theirs).
_NAMED_ITERATORS = {
    "linalg.matmul": "ppr",
    "linalg.batch_matmul": "pppr",
    "linalg.matvec": "pr",
    "linalg.vecmat": "pr",
    "linalg.dot": "r",
}

# Combiners that linalg's partial-reduction interface recognizes (it needs their neutral element).
_COMBINERS = {
    "arith.addf", "arith.mulf", "arith.maximumf", "arith.minimumf", "arith.maxnumf", "arith.minnumf",
    "arith.addi", "arith.muli", "arith.maxsi", "arith.minsi", "arith.maxui", "arith.minui",
    "arith.andi", "arith.ori", "arith.xori",
}


@dataclass(frozen=True)
class Split:
    """How one linalg op is distributed: `num_threads` per loop (one nonzero entry)."""

    kind: str  # "forall" (a parallel loop) or "reduction" (partial results, combined afterwards)
    num_threads: tuple[int, ...]
    loops: tuple[int, ...]
    iterators: str  # one letter per loop: p(arallel) / r(eduction)


def _iterators(op: ir.Operation) -> str | None:
    if op.name == "linalg.generic":
        return "".join("p" if "parallel" in str(a) else "r" for a in ir.ArrayAttr(op.attributes["iterator_types"]))
    if op.name == "linalg.fill":
        return "p" * ir.ShapedType(op.results[0].type).rank
    return _NAMED_ITERATORS.get(op.name)


def _extents(op: ir.Operation) -> tuple[int, ...] | None:
    if op.name == "linalg.fill":
        extents = tuple(ir.ShapedType(op.results[0].type).shape)
    else:
        try:
            extents = loop_extents(op)
        except (KeyError, ValueError, IndexError):
            return None
    if any(e < 0 for e in extents):  # dynamic
        return None
    return extents


def _single_combiner(op: ir.Operation) -> bool:
    """Whether a one-output generic's body yields `combiner(out, x)` with a combiner linalg can split."""
    if op.name != "linalg.generic" or len(op.results) != 1:
        return False
    block = op.regions[0].blocks[0]
    ops = list(block.operations)
    owner = as_operation(ops[-1].operands[0].owner)
    if owner is None or owner.name not in _COMBINERS:
        return False
    out = block.arguments[len(block.arguments) - 1]
    return any(v == out for v in owner.operands)


def choose(op: ir.Operation, target: Target) -> Split | None:
    """The split of one linalg op over `target`'s threads, or None to leave it sequential."""
    threads = target.threads
    if threads <= 1 or in_forall(op) or reverses(op):
        return None  # (inside a row-block loop, lowering/rows.py: that loop is the parallel one)
    iterators = _iterators(op)
    extents = _extents(op)
    if iterators is None or extents is None or len(iterators) != len(extents) or not extents:
        return None
    if math.prod(extents) < MIN_WORK:
        return None
    parallel = [i for i, it in enumerate(iterators) if it == "p" and extents[i] > 1]
    if parallel:
        good = [i for i in parallel if extents[i] >= threads and (extents[i] % threads == 0 or extents[i] >= 8 * threads)]
        dim = good[0] if good else max(parallel, key=lambda i: extents[i])
        kind = "forall"
    else:
        if not _single_combiner(op):
            return None
        reductions = [i for i, it in enumerate(iterators) if it == "r" and extents[i] > 1]
        if not reductions:
            return None
        good = [i for i in reductions if extents[i] >= threads]
        dim = good[0] if good else max(reductions, key=lambda i: extents[i])
        kind = "reduction"
    n = min(threads, extents[dim])
    if n <= 1:
        return None
    num = tuple(n if i == dim else 0 for i in range(len(extents)))
    return Split(kind, num, extents, iterators)


def transform_script(module: ir.Module, plan: Plan) -> ir.Module | None:
    """The transform module splitting each sizable linalg op of `module` over the threads of `plan`'s
    target, or None. The ops the tile stage computes (`plan.owned`: the tagged contractions, their
    epilogues and the fills it computes block by block with them) are left to it."""
    ops = linalg_ops(module)
    owned = plan.owned(module)
    splits = [None if any(op == o for o in owned) else choose(op, plan.target) for op in ops]
    if not any(splits):
        return None

    def body(root: ir.Value) -> None:
        handles = scripts.linalg_handles(root, len(ops))
        for handle, split in zip(handles, splits, strict=True):
            if split is not None and split.kind == "forall":
                scripts.tile_using_forall_threads(handle, list(split.num_threads))
            elif split is not None:
                scripts.tile_reduction_using_forall(handle, list(split.num_threads))
        scripts.apply_patterns(scripts.match_kernel(root), structured.apply_patterns_linalg_tiling_canonicalization,
                               transform.apply_patterns_canonicalization)

    return scripts.build(module.context, body)


@dataclass(frozen=True)
class Parallel(Stage):
    """cpu-openmp: each linalg op split into one chunk per thread of the Target along one loop."""

    target: Target
    name: ClassVar[str] = "parallel"
    passes: ClassVar[tuple[str, ...]] = ("canonicalize",)
    scripted: ClassVar[bool] = True
    planned: ClassVar[bool] = True

    def script(self, module: ir.Module, plan: Plan) -> ir.Module | None:
        return transform_script(module, plan)
