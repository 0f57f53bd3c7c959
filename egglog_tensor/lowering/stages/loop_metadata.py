"""The loop-metadata stage: loop annotations moved where mlir-translate emits them as `!llvm.loop`.

The lanes and interleave stages annotate an `scf.for` with the discardable attribute
`llvm.loop_annotation`, which convert-scf-to-cf forwards to the loop's back edge; mlir-translate
only emits `llvm.br`'s own `loop_annotation`, so this stage moves it there.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from mlir import ir

from .stage import Stage


def loop_metadata(module: ir.Module) -> None:
    """Move each back edge's forwarded `llvm.loop_annotation` to llvm.br's `loop_annotation` (in place)."""

    def visit(op: ir.Operation) -> ir.WalkResult:
        if op.name == "llvm.br" and "llvm.loop_annotation" in op.attributes:
            op.attributes["loop_annotation"] = op.attributes["llvm.loop_annotation"]
            del op.attributes["llvm.loop_annotation"]
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit)


@dataclass(frozen=True)
class LoopMetadata(Stage):
    """Back edges' forwarded loop annotations moved to llvm.br's `loop_annotation`."""

    name: ClassVar[str] = "loop-metadata"

    def rewrite(self, module: ir.Module) -> None:
        loop_metadata(module)
