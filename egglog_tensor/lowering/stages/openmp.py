"""The openmp stage (cpu-openmp): the parallel-loops stage's scf.parallel loops become OpenMP
parallel regions (omp.parallel + omp.wsloop) of the Target's threads."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from mlir import ir

from .stage import Stage, count_ops


@dataclass(frozen=True)
class Threaded:
    """What the openmp stage made: its parallel regions (code with any needs the OpenMP runtime)."""

    regions: int


@dataclass(frozen=True)
class OpenMP(Stage):
    """scf.parallel loops become omp.parallel regions of `threads` threads (compiled in)."""

    threads: int
    name: ClassVar[str] = "openmp"

    @property
    def passes(self) -> tuple[str, ...]:  # type: ignore[override]
        return (f"convert-scf-to-openmp{{num-threads={self.threads}}}",)

    def rewrite(self, module: ir.Module) -> Threaded:
        return Threaded(count_ops(module, "omp.parallel"))
