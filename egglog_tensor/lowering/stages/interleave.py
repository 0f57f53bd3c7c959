"""Interleave counts for long elementwise loops, handed to LLVM's loop vectorizer.

An elementwise loop with inline math (the math stage's exp and tanh) is one long chain of
dependent ops per vector: gelu's is about 45, some 120 cycles from load to store. LLVM interleaves
such a loop twice (its cost model shrinks the count as the body grows), and two chains do not fill
the core's out-of-order window, so the loop waits on latency, not on its FMA units. More vectors
side by side hide it. After the loops stage, each innermost `scf.for` without loop-carried values
(reductions are the lanes stage's) whose work per store (`loops.work`: arithmetic ops,
divisions counting several) reaches SHORT_CHAIN gets

    llvm.loop_annotation = #llvm.loop_annotation<interleave = <count = N>>

(N = 8 up to LONG_CHAIN ops, 4 beyond: eight chains of a longer loop run out of the 32 vector
registers), which convert-scf-to-cf forwards to the back edge and the loop-metadata stage moves into
`!llvm.loop`. N is halved while the loop runs fewer than MIN_STEPS steps of N vectors (of the
stored elements' width): a short loop spends what it gains on its remainder (rows of 200 floats:
exp 13.3 cycles per 16 elements with LLVM's 2 against 15.6 with 8), and at 2 it is LLVM's own.
Loops calling a function (libmvec's math) keep LLVM's choice: the call spills them.

Measured (AMD EPYC Zen 4, float32 64x1024 in L2, one core, cycles per 16 elements, LLVM's
interleave 2 / 4 / 8): exp 14.1 / 13.9 / 12.1; exp(max(x + 0.1, 0)) * 0.5 + x 19.1 / 17.4 / 15.3;
tanh 29.6 / 24.9 / 25.6; gelu 40.7 / 31.3 / 33.0; a 12-op Horner polynomial 8.4 / 8.5 / 8.6 (short
chains gain nothing, so they keep LLVM's count). Rows of 1000: exp 13.1 / 13.2 / 12.2, gelu 38.3 /
33.4 / 35.8.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from mlir import ir

from ...target import Target
from .lanes import vector_lanes
from .loops import work
from .stage import Stage

SHORT_CHAIN = 14  # ops per store from which a loop interleaves 8 vectors
LONG_CHAIN = 24  # ... and from which 4
MIN_STEPS = 4  # steps of the interleaved vectors a loop must run
ATTRIBUTE = "llvm.loop_annotation"


def count(work: float, trip: int | None, lanes: int) -> int | None:
    """The interleave count for a loop doing `work` ops per store over `trip` elements (None:
    unknown), in vectors of `lanes`; None: LLVM's own."""
    if work < SHORT_CHAIN or work == float("inf"):
        return None
    n = 8 if work < LONG_CHAIN else 4
    while n > 2 and trip is not None and trip < MIN_STEPS * n * lanes:
        n //= 2
    return n if n > 2 else None


def _constant(value: ir.Value) -> int | None:
    owner = value.owner
    if isinstance(owner, ir.OpView) and owner.operation.name == "arith.constant":
        return ir.IntegerAttr(owner.operation.attributes["value"]).value
    return None


def _trip(loop: ir.Operation) -> int | None:
    """The loop's static trip count (None if a bound or the step is not a constant)."""
    lower, upper, step = (_constant(v) for v in loop.operands[:3])
    if lower is None or upper is None or not step:
        return None
    return max(0, -(-(upper - lower) // step))


def _lanes(loop: ir.Operation, target: Target) -> int:
    """`target`'s vector lanes of the widest element the loop stores (a byte's if it stores none)."""
    stored: list[ir.Type] = []

    def visit(op: ir.Operation) -> ir.WalkResult:
        if op.name == "memref.store":
            stored.append(op.operands[0].type)
        return ir.WalkResult.ADVANCE

    loop.walk(visit)
    return min((vector_lanes(t, target) for t in stored), default=vector_lanes(ir.IntegerType.get_signless(8), target))


def _innermost(loop: ir.Operation) -> bool:
    """Whether no loop is nested in `loop`."""
    found = []

    def visit(op: ir.Operation) -> ir.WalkResult:
        if op.name in ("scf.for", "scf.parallel", "scf.forall"):
            found.append(op)
            return ir.WalkResult.INTERRUPT
        return ir.WalkResult.ADVANCE

    for op in loop.regions[0].blocks[0].operations:
        op.operation.walk(visit)
    return not found


@dataclass(frozen=True)
class Interleaved:
    """What the interleave stage decided: the interleave count of each loop it annotated, in order."""

    counts: tuple[int, ...]


def annotate(module: ir.Module, target: Target) -> Interleaved:
    """Annotate each long elementwise innermost loop with its interleave count for `target` (in place)."""
    loops: list[ir.Operation] = []

    def visit(op: ir.Operation) -> ir.WalkResult:
        if op.name == "scf.for" and len(op.results) == 0 and ATTRIBUTE not in op.attributes and _innermost(op):
            loops.append(op)
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit)
    counts = []
    for loop in loops:
        n = count(work(loop), _trip(loop), _lanes(loop, target))
        if n is not None:
            loop.attributes[ATTRIBUTE] = ir.Attribute.parse(
                f"#llvm.loop_annotation<interleave = #llvm.loop_interleave<count = {n} : i32>>")
            counts.append(n)
    return Interleaved(tuple(counts))


@dataclass(frozen=True)
class Interleave(Stage):
    """Long elementwise loops (inline math) ask LLVM to interleave 4 or 8 vectors of the Target."""

    target: Target
    name: ClassVar[str] = "interleave"

    def rewrite(self, module: ir.Module) -> Interleaved:
        return annotate(module, self.target)
