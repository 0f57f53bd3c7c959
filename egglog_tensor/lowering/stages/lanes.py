"""Vector width of reductions: the lanes chosen in the term, handed to LLVM's loop vectorizer.

A reduction chosen as `x.sum_lanes(axes, L)` (rulesets.tiling; max, min, prod alike) carries
`et.lanes = L` from the emitter, standalone or in a row-fused loop: its innermost loop, when that
loop reduces, sums L elements side by side, as L / VF vector accumulators of VF lanes each, and
combines them at the end of the loop. After bufferization the
"lanes" stage turns each such op into loops (`transform.structured.convert_to_loops`) and marks
its innermost loop, the reduction loop, with

    llvm.loop_annotation = #llvm.loop_annotation<vectorize = <width = VF>, interleave = <count = L / VF>>

which LLVM's loop vectorizer follows (`llvm.loop.vectorize.width`, `llvm.loop.interleave.count`):
one accumulator chain waits for each add's latency, several hide it. Float sums carry
`fastmath<reassoc>` on the combining step only (lowering/scalar.combine), which is what lets the
vectorizer keep partial sums. convert-scf-to-cf forwards the annotation to the loop's back edge as
the discardable attribute `llvm.loop_annotation`; the "loop-metadata" stage (loop_metadata.py)
moves it to `llvm.br`'s own `loop_annotation`, the one mlir-translate emits as `!llvm.loop`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from mlir import ir

from ...target import Target
from .. import scripts
from ..annotations import LANES
from ..policy import simd_lanes
from ..payload import element_bytes, linalg_ops
from .stage import Stage



def vector_lanes(elem: ir.Type, target: Target) -> int:
    """SIMD lanes of `target` for an element type (VF of the annotation)."""
    return simd_lanes(element_bytes(elem), target)


def _power_of_two(n: int) -> int:
    return 1 << (max(1, n).bit_length() - 1)


def annotation(lanes: int, vf: int) -> str:
    """The loop annotation asking for `lanes` elements side by side, as vectors of `vf` lanes
    (both rounded down to powers of two, the interleave count to at most 16: what LLVM takes)."""
    width = _power_of_two(min(vf, lanes))
    count = min(16, _power_of_two(lanes // width))
    return (f"#llvm.loop_annotation<vectorize = #llvm.loop_vectorize<disable = false, width = {width} : i32>, "
            f"interleave = #llvm.loop_interleave<count = {count} : i32>>")


def _innermost_reduces(op: ir.Operation) -> bool:
    """Whether a linalg op's innermost loop is a reduction (the loop the lanes annotate)."""
    iterators = ir.ArrayAttr(op.attributes["iterator_types"]) if "iterator_types" in op.attributes else []
    return len(iterators) > 0 and "reduction" in str(iterators[len(iterators) - 1])


def transform_script(module: ir.Module, target: Target) -> ir.Module | None:
    """The transform module lowering each `et.lanes` op to loops with its reduction loop annotated
    for `target`'s vectors (None when no op carries lanes)."""
    ops = linalg_ops(module)
    tagged = [(i, op) for i, op in enumerate(ops) if LANES in op.attributes and _innermost_reduces(op)]
    if not tagged:
        return None

    def body(root: ir.Value) -> None:
        handles = scripts.linalg_handles(root, len(ops))
        for i, op in tagged:
            lanes = ir.IntegerAttr(op.attributes[LANES]).value
            rank = len(ir.ArrayAttr(op.attributes["iterator_types"]))
            elem = ir.ShapedType(op.operands[len(op.operands) - 1].type).element_type  # the accumulator's
            loops = scripts.split(scripts.convert_to_loops(handles[i]), rank)
            scripts.annotate(loops[-1], "llvm.loop_annotation", ir.Attribute.parse(annotation(lanes, vector_lanes(elem, target))))

    return scripts.build(module.context, body)



@dataclass(frozen=True)
class Lanes(Stage):
    """Row reductions with lanes chosen in the term (et.lanes) as loops, their reduction loop carrying the Target's vector width and interleave count."""

    target: Target
    name: ClassVar[str] = "lanes"
    passes: ClassVar[tuple[str, ...]] = ("canonicalize",)
    scripted: ClassVar[bool] = True

    def script(self, module: ir.Module) -> ir.Module | None:
        return transform_script(module, self.target)
