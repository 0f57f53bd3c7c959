"""The debug-info stage: the user's source lines, which the ops carry as MLIR locations
(egglog_tensor/provenance.py), become LLVM line tables.

MLIR's `ensure-debug-info-scope-on-llvm-func` gives each LLVM function a DISubprogram (line tables
only: no variables, no types), so mlir-translate turns each op's file:line location into a
`!DILocation` with a `!DIFile` naming the user's file, and LLVM's code generator emits `.file` and
`.loc` directives in the assembly. The stage prints its module with those locations (the text
mlir-translate takes). It is the last stage: a later rewrite's new ops would lack a location.
A module whose functions have no location (a kernel function with no `def` line: emit.py) is
left as it is: MLIR's pass would refuse it, and there is nothing to put in a line table. (A module
parsed from text printed without locations, as the linalg stage's, has the parser's: `"-":line:col`.)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from mlir import ir, passmanager

from .stage import Stage

PASS = "builtin.module(ensure-debug-info-scope-on-llvm-func{emission-kind=LineTablesOnly})"


@dataclass(frozen=True)
class DebugInfo(Stage):
    """Line-table debug info on every LLVM function defined, from the ops' locations."""

    name: ClassVar[str] = "debug-info"
    with_locations: ClassVar[bool] = True

    def rewrite(self, module: ir.Module) -> None:
        defined = [op for op in module.body.operations if op.name == "llvm.func" and op.regions[0].blocks]
        if any(str(op.location) != "loc(unknown)" for op in defined):
            passmanager.PassManager.parse(PASS).run(module.operation)
