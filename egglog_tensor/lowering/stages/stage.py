"""What every lowering stage is: a name, its passes, and optionally a transform script before them
and a rewrite after them that may return a typed record of what it decided."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from mlir import ir

if TYPE_CHECKING:
    from ..plan import Plan


class Stage:
    """One named step of a pipeline: its pass-pipeline elements run inside `builtin.module(...)`.

    A stage with `scripted` builds a transform-dialect module from the IR it receives (`script`;
    None: the stage has nothing to do and is skipped), kept as the stage text "<name>-script": typed
    IR (an ir.Module built with lowering/scripts.py), applied to the payload in place before the
    passes. `rewrite` runs in place after them and returns the stage's facts: a small frozen record
    of what it decided (or None), kept by name with the compilation (`Compilation.facts`)."""

    name: str
    passes: tuple[str, ...] = ()
    scripted: ClassVar[bool] = False
    planned: ClassVar[bool] = False  # its script reads the run's contraction plan (lowering/plan.py), made for its `target`
    with_locations: ClassVar[bool] = False  # its IR is printed with the ops' locations (debuginfo.py: mlir-translate reads them)

    def script(self, module: ir.Module) -> ir.Module | None:
        """The transform module to apply before the passes (only called when `scripted`; a `planned`
        stage's takes the run's contraction plan too: `script(module, plan)`)."""
        return None

    def script_for(self, module: ir.Module, plan: Plan | None) -> ir.Module | None:
        """`script` for `module`, given the run's contraction plan when the stage is `planned`."""
        return self.script(module, plan) if self.planned else self.script(module)

    def decided(self, script: ir.Module) -> Any:
        """The facts of the script this stage built (None: none to record)."""
        return None

    def rewrite(self, module: ir.Module) -> Any:
        """Rewrite `module` in place after the passes; its facts (None: none to record)."""
        return None

    @property
    def pipeline_text(self) -> str:
        """The textual pass pipeline handed to PassManager.parse."""
        return f"builtin.module({','.join(self.passes)})"


@dataclass(frozen=True)
class Passes(Stage):
    """A stage that only runs passes (for tests and tools that build a pipeline of their own)."""

    name: str
    passes: tuple[str, ...] = ()


def count_ops(module: ir.Module, name: str) -> int:
    """How many ops named `name` `module` holds (for a stage's facts)."""
    found = 0

    def visit(op: ir.Operation) -> ir.WalkResult:
        nonlocal found
        found += op.name == name
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit)
    return found
