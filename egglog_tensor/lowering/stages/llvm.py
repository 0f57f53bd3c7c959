"""The llvm stage: MLIR's conversions to the LLVM dialect (cpu-openmp: the OpenMP dialect's too).

Math ops with an LLVM intrinsic become intrinsics (LLVM may vectorize them); the rest (atan2, ...)
call libm. Allocations call aligned_alloc (`use-aligned-alloc`): the default, malloc and a pointer
rounded up through an integer, hides from LLVM that the block is the call's own, so a running value
kept there (a scan's, a reduction's accumulator) was loaded and stored around every element, the
stores to the output possibly overlapping it: np.cumsum of 2^24 float32 on one core 219 -> 52 ms
(load 6; NumPy 230 ms). On cpu-openmp the memrefs are lowered before the omp ops: run first,
`convert-openmp-to-llvm` lowers every memref op of the module with its own defaults (malloc).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from .stage import Stage

MEMREFS = ("expand-strided-metadata", "lower-affine", "finalize-memref-to-llvm{use-aligned-alloc=true}")  # memrefs to LLVM

PASSES = (
    "lower-affine",
    "convert-scf-to-cf",
    "convert-math-to-llvm",
    "convert-math-to-libm",
    "convert-vector-to-llvm{reassociate-fp-reductions}",
    *MEMREFS,
    "convert-arith-to-llvm",
    "convert-index-to-llvm",
    "convert-ub-to-llvm",
    "convert-func-to-llvm",
    "convert-cf-to-llvm",
    "reconcile-unrealized-casts",
)


@dataclass(frozen=True)
class LLVM(Stage):
    """Everything becomes the LLVM dialect (`openmp`: omp ops too, for the OpenMP runtime's calls)."""

    openmp: bool = False
    name: ClassVar[str] = "llvm"

    @property
    def passes(self) -> tuple[str, ...]:  # type: ignore[override]
        return ("lower-affine", *MEMREFS, "convert-openmp-to-llvm", *PASSES) if self.openmp else PASSES
