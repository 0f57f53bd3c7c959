"""The loops stage: linalg ops become loops, and loop nests writing large outputs are versioned for
non-temporal (streaming) stores, for kernel outputs larger than the last-level cache.

A plain store first reads its cache line from memory (read for ownership), so an elementwise
kernel writing a 64 MiB result moves 64 MiB more than it must, and evicts useful lines for a
result that cannot stay in cache anyway. x86's non-temporal stores (`vmovntps`, ...) write whole
lines past the caches. They need their address aligned to the vector width, which the loop
vectorizer cannot promise for the scalar stores it widens, so this takes three steps (the last two
in streams.py):

1. `guard` (this stage, after convert-linalg-to-loops): a top-level loop nest that writes an output of
   at least `min_bytes()` bytes (the output argument is tagged `et.output` by the emitter), in a kernel
   whose arguments total at least the last-level cache's size, which the kernel never reads, from
   loops doing at most MAX_WORK ops per store (`work`: compute-bound loops measured slower
   streamed), is versioned on the output's base address: `scf.if` it is 64-byte aligned (as the
   output pool's buffers are), the copy in the `then` branch marks those stores `nontemporal` (a
   vector loop's 1-D in-bounds `vector.transfer_write`s become nontemporal `vector.store`s: lowering/scanrows.py),
   shows LLVM the alignment (`_aligned`, inside any parallel body, so each OpenMP thread's outlined
   code sees it) and ends each thread's work with `sfence` (streaming stores are weakly ordered);
   a misaligned output (a user's `out=`) runs the original nest.
2. and 3. (streams.py): the streams stage gives those stores an access group that LLVM's
   vectorizer keeps; after `opt -O3`, `mark` makes the vector ones proved aligned non-temporal.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from mlir import ir
from mlir.dialects import arith, builtin, llvm, memref, scf, vector

from ...outputs import ALIGN  # the output pool's alignment, a cache line: also the widest (AVX-512) vector store
from ...target import Target
from ..annotations import OUTPUT, PLAIN_STORES
from ..payload import element_bytes
from .stage import Stage


_VIEWS = ("memref.subview", "memref.cast", "memref.collapse_shape", "memref.expand_shape", "memref.reinterpret_cast")
_INLINE_MATH = ("math.sqrt", "math.absf", "math.absi", "math.fma", "math.copysign", "math.floor", "math.ceil",
                "math.trunc", "math.roundeven")  # math ops LLVM lowers to instructions, not calls
_FREE = ("arith.constant", "arith.bitcast", "arith.index_cast", "arith.index_castui")  # no instruction of their own
_SLOW = ("arith.divf", "arith.remf", "math.sqrt")
_STORES = ("memref.store", "vector.transfer_write")  # (a vector loop's: lowering/scanrows.py)
SLOW_OP = 8
# Streaming pays where the loop keeps up with memory. Measured before long loops were interleaved
# (AMD EPYC, float32, paired A/B): Horner polynomials of 2-12 ops per element over 4096^2 1.3-1.45x
# faster streamed, 20 ops 0.85-1.12x, 32 ops 0.72-0.80x; loops calling libmvec 5-35% slower. Since
# the interleave stage keeps 4-8 vectors in flight (streamed vs plain, 4096^2, two cores / one):
# 20 ops 1.4-1.55x / 1.35x, exp(x) * 0.5 + x 1.4-1.8x / 1.7x, exp(max(A + b, 0)) * 0.5 + A
# 1.5-1.6x / 1.2-1.4x, 32 ops 1.0x / 1.0x, 64 ops 1.0x / 1.0x, gelu (about 52 with its division)
# 1.0-1.08x / 1.0x. So every loop up to the 64 ops measured streams; one calling a function does not.
MAX_WORK = 64
_SFENCE = 'llvm.call_intrinsic "llvm.x86.sse.sfence"() : () -> ()'


def min_bytes(target: Target) -> int:
    """Outputs from this size (a quarter of `target`'s last-level cache) are streamed by kernels whose
    arguments total at least 4 * min_bytes() (the whole cache: their results cannot all stay in it).

    Measured at 4096x1024 float32 (16 MiB in, 16 MiB out, L3 32 MiB, paired A/B): softmax 1.0x on
    two cores and 1.18x on one, layer norm 1.11x and 1.54x faster streamed."""
    return target.l3 // 4


def _argument_bytes(func: ir.Operation) -> int:
    """Bytes of all the function's statically shaped memref arguments (inputs and outputs)."""
    return sum(_bytes(arg.type) for arg in func.regions[0].blocks[0].arguments)


def _bytes(value_type: ir.Type) -> int:
    """Bytes of a statically shaped memref (0 for anything else)."""
    try:
        shaped = ir.MemRefType(value_type)
    except ValueError:
        return 0
    if not shaped.has_static_shape:
        return 0
    return math.prod(shaped.shape) * element_bytes(shaped.element_type)


def _outputs(func: ir.Operation, target: Target) -> list[ir.Value]:
    """The function's output arguments (tagged et.output) of at least min_bytes(target)."""
    if "arg_attrs" not in func.attributes:
        return []
    arguments = func.regions[0].blocks[0].arguments
    tagged = [arg for arg, attrs in zip(arguments, ir.ArrayAttr(func.attributes["arg_attrs"]), strict=False)
              if OUTPUT in ir.DictAttr(attrs)]
    return [arg for arg in tagged if _bytes(arg.type) >= min_bytes(target)]


def _root(value: ir.Value) -> ir.Value:
    """The buffer a memref value views (through subviews, casts and reshapes)."""
    while True:
        owner = value.owner.operation if isinstance(value.owner, ir.OpView) else value.owner
        if not isinstance(owner, ir.Operation) or owner.name not in _VIEWS:
            return value
        value = owner.operands[0]


def _uses(region_op: ir.Operation, outputs: list[ir.Value]) -> tuple[list[ir.Value], list[ir.Value], bool]:
    """The outputs stored to inside `region_op`, those otherwise used there (read, copied, passed
    on: streamed lines would be fetched back), and whether a loop storing to one does more than
    MAX_WORK per store (compute-bound: streaming slows it)."""
    stored: list[ir.Value] = []
    read: list[ir.Value] = []
    heavy = False

    def visit(op: ir.Operation) -> ir.WalkResult:
        nonlocal heavy
        for index, operand in enumerate(op.operands):
            root = _root(operand)
            if root not in outputs:
                continue
            if op.name in _STORES and index == 1:
                stored.append(root)
                heavy = heavy or work(op.parent) > MAX_WORK
            elif not (op.name in _VIEWS and index == 0):
                read.append(root)
        return ir.WalkResult.ADVANCE

    region_op.walk(visit)
    return stored, read, heavy


def work(loop: ir.OpView | ir.Operation) -> float:
    """Arithmetic ops (arith, math, LLVM intrinsics) per store in the loop around a store
    (divisions and square roots count SLOW_OP each: one takes several cycles per vector); infinite
    if the loop calls a function (math other than _INLINE_MATH and the math stage's goes to
    libm/libmvec)."""
    ops, stores = 0.0, 0

    def visit(op: ir.Operation) -> ir.WalkResult:
        nonlocal ops, stores
        name = op.name
        if name in ("func.call", "llvm.call") or (name.startswith("math.") and name not in _INLINE_MATH):
            ops = math.inf
        elif name in _STORES:
            stores += 1
        elif name.startswith(("arith.", "math.", "llvm.intr.")) and name not in _FREE and not all(str(r.type) == "index" for r in op.results):
            ops += SLOW_OP if name in _SLOW else 1
        return ir.WalkResult.ADVANCE

    loop.operation.walk(visit)
    return ops / max(stores, 1)


def _sfence_before(op: ir.Operation) -> None:
    ir.InsertionPoint(op).insert(ir.Operation.parse(_SFENCE))


def _stream(nest: ir.Operation, outputs: list[ir.Value]) -> None:
    """In the copy `nest`: the outputs' stores nontemporal, their alignment shown to LLVM (where
    the nest uses them or a view of them made outside it, as the flatten stage's collapse), an
    sfence at the end of each parallel body (each thread's stores)."""
    users: list[tuple[ir.Operation, int]] = []
    bodies: list[ir.Block] = []
    writes: list[ir.Operation] = []

    def visit(op: ir.Operation) -> ir.WalkResult:
        if op.name == "memref.store" and _root(op.operands[1]) in outputs:
            op.attributes["nontemporal"] = ir.BoolAttr.get(True)
        elif op.name == "vector.transfer_write" and _root(op.operands[1]) in outputs:
            writes.append(op)
        users.extend((op, i) for i, operand in enumerate(op.operands)
                     if operand in outputs or (_root(operand) in outputs and not _inside(operand, nest)))
        if op.name == "scf.parallel":
            bodies.append(op.regions[0].blocks[0])
        return ir.WalkResult.ADVANCE

    nest.walk(visit)
    for body in bodies:
        _sfence_before(list(body.operations)[-1])
    for op, index in users:
        with ir.InsertionPoint(op), op.location:
            op.operands[index] = _aligned(op.operands[index])
    for write in writes:
        _nontemporal_store(write)


def _nontemporal_store(write: ir.Operation) -> None:
    """A 1-D in-bounds vector.transfer_write of a row's contiguous elements as a nontemporal vector.store (others stay)."""
    vector_type = ir.VectorType(write.operands[0].type)
    memref_type = ir.MemRefType(write.operands[1].type)
    rank = memref_type.rank
    if (vector_type.rank != 1 or len(write.operands) != 2 + rank or str(write.attributes["in_bounds"]) != "[true]"
            or ir.AffineMapAttr(write.attributes["permutation_map"]).value != ir.AffineMap.get_minor_identity(rank, 1)):
        return
    with ir.InsertionPoint(write), write.location:
        vector.store(write.operands[0], write.operands[1], list(write.operands[2:]), nontemporal=True)
    write.erase()


def _inside(value: ir.Value, nest: ir.Operation) -> bool:
    """Whether `value` is defined in `nest` (by an op or as a block argument of its regions)."""
    owner = value.owner
    op = owner.owner if isinstance(owner, ir.Block) else owner.operation
    while op is not None:
        if op == nest:
            return True
        op = op.parent
    return False


def _aligned(buffer: ir.Value) -> ir.Value:
    """`buffer` with its aligned pointer passed through `llvm.intr.ptrmask` (low 6 bits cleared: a
    no-op on a buffer checked aligned) for LLVM to derive the stores' alignment from. Not
    `memref.assume_alignment`: the OpenMP lowering drops its `llvm.assume` when it outlines a
    parallel body."""
    rank = ir.MemRefType(buffer.type).rank
    sizes = f", array<{rank} x i64>, array<{rank} x i64>" if rank else ""
    descriptor = builtin.unrealized_conversion_cast([ir.Type.parse(f"!llvm.struct<(ptr, ptr, i64{sizes})>")], [buffer])
    pointer = llvm.extractvalue(ir.Type.parse("!llvm.ptr"), descriptor, [1])
    mask = llvm.mlir_constant(ir.IntegerAttr.get(ir.IntegerType.get_signless(64), -ALIGN))
    masked = llvm.insertvalue(descriptor, llvm.intr_ptrmask(pointer, mask, results=[pointer.type]), [1])
    return builtin.unrealized_conversion_cast([buffer.type], [masked])


def _version(nest: ir.Operation, outputs: list[ir.Value]) -> None:
    """Replace `nest` by `scf.if (outputs 64-byte aligned) {streaming copy} else {nest}` (yielding what the nest
    yields: a loop carrying values, as a one-row vector scan's, lowering/scanrows.py)."""
    with ir.InsertionPoint(nest), nest.location:
        i64 = ir.IntegerType.get_signless(64)
        mask = arith.constant(i64, ALIGN - 1)
        zero = arith.constant(i64, 0)
        aligned = None
        for out in outputs:
            address = arith.index_cast(i64, memref.extract_aligned_pointer_as_index(out))
            # An empty asm hands the address on unseen: LLVM may not learn the pointer's alignment
            # from this check, or it folds away the hints of _aligned and then cannot prove the
            # vector stores aligned (seen in a sequential softmax).
            opaque = llvm.inline_asm(i64, [address], "", "=r,0")
            low = arith.andi(opaque, mask)
            this = arith.cmpi(arith.CmpIPredicate.eq, low, zero)
            aligned = this if aligned is None else arith.andi(aligned, this)
        branch = scf.IfOp(aligned, [r.type for r in nest.results], has_else=True)
        for result, value in zip(nest.results, branch.results, strict=True):
            result.replace_all_uses_with(value)
        with ir.InsertionPoint(branch.then_block):
            copy = nest.clone()
            scf.YieldOp(list(copy.results))
        _sfence_before(list(branch.then_block.operations)[-1])
        with ir.InsertionPoint(branch.else_block):
            yield_op = scf.YieldOp(list(nest.results))
        nest.move_before(yield_op)
    _stream(copy, outputs)


def guard(module: ir.Module, target: Target) -> None:
    """Version each top-level loop nest writing an output large for `target` on its alignment (step 1; in place)."""
    for func in module.body.operations:
        func = func.operation
        if func.name != "func.func" or not func.regions[0].blocks:  # (a declaration: libm's lgamma)
            continue
        if PLAIN_STORES in func.attributes:  # et.kernel(..., streaming=False)
            del func.attributes[PLAIN_STORES]
            continue
        if _argument_bytes(func) < 4 * min_bytes(target) or not (outputs := _outputs(func, target)):
            continue
        read = _uses(func, outputs)[1]
        outputs = [out for out in outputs if out not in read]  # only ever written
        for op in list(func.regions[0].blocks[0].operations):
            op = op.operation
            if op.name not in ("scf.for", "scf.parallel"):
                continue
            stored, _, heavy = _uses(op, outputs)
            if stored and not heavy:
                _version(op, [out for out in outputs if out in stored])


@dataclass(frozen=True)
class Loops(Stage):
    """Linalg ops become loops (cpu-openmp, `parallel`: the chunks' forall becomes scf.parallel);
    nests writing outputs large for the Target are versioned on their alignment for streamed stores."""

    target: Target
    parallel: bool = False

    @property
    def name(self) -> str:  # type: ignore[override]
        return "parallel-loops" if self.parallel else "loops"

    @property
    def passes(self) -> tuple[str, ...]:  # type: ignore[override]
        forall = "scf-forall-to-parallel" if self.parallel else "scf-forall-to-for"
        return ("func.func(convert-linalg-to-loops)", forall, "canonicalize", "cse")

    def rewrite(self, module: ir.Module) -> None:
        guard(module, self.target)
