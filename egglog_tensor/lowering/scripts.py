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
from mlir.dialects.transform import interpreter, structured, tensor
from mlir.dialects.transform import loop as loop_ops

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
    """One handle per linalg op of the payload, in `payload.linalg_ops` order (`match interface{LinalgOp}`
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


def match_kernel(root: ir.Value) -> ir.Value:
    """A handle to the kernel's function under `root` (emit.py's C-interface func.func), not the declarations of the
    library functions its scalar code calls (`func.func private @lgamma`): patterns apply to one function, so a match
    of every func.func failed where a kernel called one ("requires exactly one target handle")."""
    return structured.MatchOp(_any(), root, ops=ir.ArrayAttr.get([ir.StringAttr.get("func.func")]),
                              op_attrs=ir.DictAttr.get({"llvm.emit_c_interface": ir.UnitAttr.get()})).result


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


def tile_and_fuse(root: ir.Value, sizes: list[int], producers: list[ir.Value], bubble_slices: bool = False) -> ir.Value:
    """`root` tiled with `sizes` in an scf.forall and each of `producers` (consumers first) fused into it, CSE run
    inside the loop before each fusion (and, with `bubble_slices`, extract_slices bubbled up through reshapes, so a
    producer behind an expand_shape is reached): the loop."""
    _, loop = tile_using_forall(root, sizes)
    for producer in producers:
        apply_cse(loop)  # (only inside the loop: see stages/tile.py)
        if bubble_slices:
            apply_patterns(loop, tensor.apply_patterns_tensor_bubble_up_extract_slice)
        _, loop = fuse_into(producer, loop)
    return loop


def tidy_fused(funcs: ir.Value) -> None:
    """After tiling and fusion: empty tensors folded, the tiled loops' and the payload's canonicalization."""
    apply_patterns(funcs, tensor.apply_patterns_tensor_fold_tensor_empty, structured.apply_patterns_linalg_tiling_canonicalization,
                   transform.apply_patterns_canonicalization)


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


def op_type(name: str) -> ir.Type:
    """`!transform.op<"name">`: a handle to payload ops named `name` only."""
    return transform.OperationType.get(name)


def match(root: ir.Value, names: tuple[str, ...] = (), attrs: dict[str, int] | None = None) -> ir.Value:
    """A handle to the payload ops under `root` named one of `names` (any if none) with the i64 attributes `attrs` (`structured.match`)."""
    i64 = ir.IntegerType.get_signless(64)
    found = {k: ir.IntegerAttr.get(i64, v) for k, v in (attrs or {}).items()}
    ops = ir.ArrayAttr.get([ir.StringAttr.get(n) for n in names]) if names else None
    return structured.MatchOp(_any(), root, ops=ops, op_attrs=ir.DictAttr.get(found) if found else None).result


def cast(handle: ir.Value, to: ir.Type) -> ir.Value:
    """The same payload ops, as a handle of type `to` (`transform.cast`)."""
    return transform.CastOp(to, handle).result


def tile_using_for(handle: ir.Value, sizes: list[int], interchange: list[int] | None = None) -> tuple[ir.Value, list[ir.Value]]:
    """Tile a linalg op with `sizes` (0: untiled) in scf.for loops, in `interchange` order: (the tiled op, the loops)."""
    op = structured.TileUsingForOp(handle, sizes=sizes, interchange=interchange)
    return op.tiled_linalg_op, list(op.loops)


def tile_reduction_using_for(handle: ir.Value, sizes: list[int]) -> tuple[ir.Value, ir.Value, ir.Value, ir.Value]:
    """Split a reduction into `sizes`-wide partial results in an scf.for (`tile_reduction_using_for`):
    (their fill, the partial op, their combination, the loop)."""
    op = structured.TileReductionUsingForOp([_any()], _any(), _any(), _any(), handle, tile_sizes=sizes)
    return op.fill_op[0], op.split_op, op.combining_op, op.for_op


def split_reduction(handle: ir.Value, factor: int, dimension: int) -> tuple[ir.Value, ir.Value, ir.Value, ir.Value]:
    """`transform.structured.split_reduction` by `factor`, the new dim at `dimension`: (init, fill, split op, combiner)."""
    op = structured.SplitReductionOp(_any(), _any(), _any(), _any(), handle, split_factor=factor, insert_split_dimension=dimension)
    return op.init_or_alloc_op, op.fill_op, op.split_linalg_op, op.combining_linalg_op


def peel(loop: ir.Value) -> tuple[ir.Value, ir.Value]:
    """Peel an scf.for: (its full iterations, the remainder loop) (`transform.loop.peel`)."""
    op = loop_ops.LoopPeelOp(_any(), _any(), cast(loop, op_type("scf.for")))
    return op.peeled_loop, op.remainder_loop


def pad(handle: ir.Value, values: list[ir.Attribute], dims: list[int], nofold: list[int], copy_back: str,
        multiple: list[int] | None = None) -> tuple[ir.Value, ir.Value, ir.Value]:
    """`transform.structured.pad` of a linalg op's operands along `dims` (to `multiple`): (the padded op, the pad, the copy back)."""
    op = structured.PadOp(handle, pad_to_multiple_of=multiple, padding_values=values, padding_dimensions=dims,
                          nofold_flags=nofold, copy_back_op=copy_back)
    return op.padded, op.pad, op.copy


def bufferize_to_allocation(handle: ir.Value) -> None:
    """Bufferize the payload ops' results into new allocations, copied in with linalg.copy (`bufferize_to_allocation`)."""
    structured.BufferizeToAllocationOp(handle, memcpy_op="linalg.copy")


def vectorize(handle: ir.Value, sizes: list[int] | None = None) -> None:
    """Vectorize linalg ops to `sizes` (masked where their shape is smaller) (`transform.structured.vectorize`)."""
    structured.VectorizeOp(handle, sizes)


def generalize(handle: ir.Value) -> ir.Value:
    """The named linalg ops as linalg.generic (`transform.structured.generalize`)."""
    return structured.GeneralizeOp(handle).result


def specialize(handle: ir.Value) -> ir.Value:
    """linalg.generic ops as the named ops they are (`transform.structured.specialize`)."""
    return structured.SpecializeOp(_any(), handle).result


def producer_of(handle: ir.Value, operand: int, kind: ir.Type | None = None) -> ir.Value:
    """The op defining operand `operand` of the payload op (`transform.get_producer_of_operand`)."""
    return transform.GetProducerOfOperand(kind or _any(), handle, operand).result


def consumers_of(handle: ir.Value, result: int, kind: ir.Type | None = None) -> ir.Value:
    """The ops using result `result` of the payload op (`transform.get_consumers_of_result`)."""
    return transform.GetConsumersOfResult(kind or _any(), handle, result).result


def pack(handle: ir.Value, sizes: list[int]) -> ir.Value:
    """A linalg op packed by `sizes` per loop (0: not packed): the linalg.generic on packed operands (`structured.pack`)."""
    return structured.PackOp(op_type("linalg.generic"), handle, [], static_packed_sizes=sizes).result


def pack_transpose(target: ir.Value, compute: ir.Value, outer: list[int] | None = None, inner: list[int] | None = None,
                   unpack: bool = False) -> tuple[ir.Value, ir.Value, ir.Value]:
    """Transpose the pack (`unpack`: unpack) `target` of the generic `compute` (`pack_transpose`): (the generic, the pack, the unpack)."""
    types = (_any(), op_type("linalg.unpack")) if unpack else (op_type("linalg.pack"), _any())
    op = structured.PackTransposeOp(op_type("linalg.generic"), *types, target, compute, outer_perm=outer, inner_perm=inner)
    return op.packed_op, op.pack_op, op.un_pack_op


def lower_pack(handle: ir.Value) -> tuple[ir.Value, ir.Value, ir.Value]:
    """A linalg.pack as tensor.pad, expand_shape and linalg.transpose (`lower_pack`): their handles."""
    op = structured.LowerPackOp(op_type("tensor.pad"), op_type("tensor.expand_shape"), op_type("linalg.transpose"), handle)
    return op.pad_op, op.expand_shape_op, op.transpose_op


def lower_unpack(handle: ir.Value) -> tuple[ir.Value, ir.Value, ir.Value, ir.Value]:
    """A linalg.unpack as tensor.empty, linalg.transpose, collapse_shape and extract_slice (`lower_unpack`): their handles."""
    op = structured.LowerUnPackOp(op_type("tensor.empty"), op_type("linalg.transpose"), op_type("tensor.collapse_shape"),
                                  op_type("tensor.extract_slice"), handle)
    return op.empty_op, op.transpose_op, op.collapse_shape_op, op.extract_slice_op


def foreach(handle: ir.Value, body: Callable[[ir.Value], None]) -> None:
    """Run `body(op)` for each payload op of `handle` in turn (`transform.foreach`)."""
    op = transform.ForeachOp([], [handle])
    with ir.InsertionPoint(op.body):
        body(op.bodyTargets[0])
        transform.YieldOp()


def hoist_loop_invariant_subsets(handle: ir.Value) -> None:
    """Hoist loop-invariant tensor subset reads/writes (accumulators) out of the loops (`hoist_loop_invariant_subsets`)."""
    loop_ops.HoistLoopInvariantSubsetsOp(handle)


def note(text: str) -> None:
    """A comment in the script: an unused `transform.param.constant` of the string `text`."""
    transform.ParamConstantOp(transform.AnyParamType.get(), ir.StringAttr.get(text))
