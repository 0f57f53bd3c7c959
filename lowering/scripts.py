"""Transform-dialect scripts as typed IR: built with the MLIR Python bindings' transform builders
(`mlir.dialects.transform`, `.structured`), applied to the payload module in place by the transform
interpreter (`apply_named_sequence`), so neither the payload nor the script is printed and re-parsed.

A script is a `builtin.module` with `transform.with_named_sequence` holding one named sequence,
`@__transform_main(%root: !transform.any_op {transform.readonly})`; `build` makes it around a body
function that emits the sequence's ops at the current insertion point, the helpers below emit the
ops the stages use. Printing the module gives the script text a stage keeps as "<stage>-script".
"""

from __future__ import annotations

from collections.abc import Callable

from mlir import ir
from mlir.dialects import transform
from mlir.dialects.transform import interpreter, structured

ENTRY = "__transform_main"


def _any() -> ir.Type:
    """`!transform.any_op`: every handle of the stages' scripts has this type."""
    return transform.AnyOpType.get()


def build(context: ir.Context, body: Callable[[ir.Value], None]) -> ir.Module:
    """A transform module in `context` (the payload's) whose entry sequence runs `body(root)` on the
    payload root, then yields."""
    with context, ir.Location.unknown():
        module = ir.Module.create()
        module.operation.attributes["transform.with_named_sequence"] = ir.UnitAttr.get()
        readonly = ir.DictAttr.get({"transform.readonly": ir.UnitAttr.get()})
        with ir.InsertionPoint(module.body):
            entry = transform.NamedSequenceOp(ENTRY, [_any()], [], arg_attrs=ir.ArrayAttr.get([readonly]))
        with ir.InsertionPoint(entry.body):
            body(entry.bodyTarget)
            transform.YieldOp()
    return module


def apply(payload: ir.Module, script: ir.Module) -> None:
    """Run the script's entry sequence on `payload`, changing it in place (ir.MLIRError when a transform fails)."""
    entry = ir.SymbolTable(script.operation)[ENTRY]
    interpreter.apply_named_sequence(payload, entry, script)


def split(handle: ir.Value, count: int) -> list[ir.Value]:
    """`count` handles, one per payload op of `handle` in its order (`transform.split_handle`)."""
    return list(transform.SplitHandleOp([_any()] * count, handle).results)


def linalg_handles(root: ir.Value, count: int) -> list[ir.Value]:
    """One handle per linalg op of the payload, in `tiling.linalg_ops` order (`match interface{LinalgOp}`
    then split: `count` must be the number of those ops)."""
    matched = structured.MatchOp(_any(), root, interface=structured.MatchInterfaceEnum.LinalgOp).result
    return split(matched, count)


def flatten_elementwise(handle: ir.Value) -> ir.Value:
    """Collapse an elementwise linalg op's loops into one (`transform.structured.flatten_elementwise`)."""
    return structured.FlattenElementwiseLinalgOp(_any(), handle).result


def convert_to_loops(handle: ir.Value) -> ir.Value:
    """Lower a linalg op to scf.for loops, outermost first (`transform.structured.convert_to_loops`)."""
    return structured.ConvertToLoopsOp(_any(), handle).result


def annotate(handle: ir.Value, name: str, value: ir.Attribute) -> None:
    """Set the attribute `name` = `value` on the payload ops of `handle` (`transform.annotate` of a param constant)."""
    param = transform.ParamConstantOp(transform.AnyParamType.get(), value).result
    transform.AnnotateOp(handle, name, param=param)


def match_ops(root: ir.Value, *names: str) -> ir.Value:
    """A handle to every payload op under `root` named one of `names` (`transform.structured.match ops{...}`)."""
    return structured.MatchOp.match_op_names(root, list(names)).result


def tile_using_forall(handle: ir.Value, sizes: list[int]) -> tuple[ir.Value, ir.Value]:
    """Tile a linalg op with `sizes` (0: untiled) in an scf.forall: (the tiled op, the loop)."""
    op = structured.TileUsingForallOp(handle, tile_sizes=sizes)
    return op.tiled_op, op.forall_op


def tile_using_forall_threads(handle: ir.Value, num_threads: list[int]) -> tuple[ir.Value, ir.Value]:
    """Split a linalg op into `num_threads` chunks per loop (0: unsplit) in an scf.forall: (the tiled op, the loop)."""
    op = structured.TileUsingForallOp(handle, num_threads=num_threads)
    return op.tiled_op, op.forall_op


def tile_reduction_using_forall(handle: ir.Value, num_threads: list[int]) -> None:
    """Split a reduction over `num_threads` chunks per loop in an scf.forall: each chunk reduces into
    its own partial result, combined after the loop (`tile_reduction_using_forall`)."""
    structured.TileReductionUsingForallOp([_any()], _any(), _any(), _any(), handle, num_threads=num_threads)


def fuse_into(producer: ir.Value, loop: ir.Value) -> tuple[ir.Value, ir.Value]:
    """Fuse a producer's slice into a containing loop (`fuse_into_containing_op`): (the fused op, the new loop)."""
    op = structured.FuseIntoContainingOp(producer, loop)
    return op.fused_op, op.new_containing_op


def apply_cse(handle: ir.Value) -> None:
    """Merge identical ops inside the payload ops of `handle` (`transform.apply_cse`)."""
    transform.ApplyCommonSubexpressionEliminationOp(handle)


def apply_patterns(handle: ir.Value, *patterns: Callable[[], object]) -> None:
    """Apply pattern sets greedily, as one set, to the payload ops of `handle` (`transform.apply_patterns`);
    each of `patterns` emits one pattern op (e.g. `transform.apply_patterns_canonicalization`)."""
    op = transform.ApplyPatternsOp(handle)
    with ir.InsertionPoint(op.patterns):
        for pattern in patterns:
            pattern()
