"""The gpu-tile and gpu-bufferize stages: each linalg op tiled for a GPU launch on tensors, then bufferized.

Every linalg op but a fill becomes one kernel: its innermost parallel loop is split into blocks of
`threads` iterations (`#gpu.block<x>`), the two parallel loops outside it into blocks of one
iteration (`#gpu.block<y>`, `<z>`; more iterations per block where a loop is longer than a grid
dimension may be), then each block's slice of the innermost loop over `threads` threads
(`num_threads`, `#gpu.thread<x>`: static even for a partial last block). Loops beyond those three
and every reduction loop run inside each thread: one thread per output element, for the reductions
gpu-reduce does not split across a block (reduce.py: those are left untiled here, a linalg.dot
or linalg.matvec generalized for it); matmuls are left whole too (linalg.matmul and batch_matmul
generalized) for gpu-reduce's tiling through workgroup memory (matmul.py). Each fill is fused into both foralls of the op it initializes,
so it runs in that op's kernel. The transform script tiles; MLIR's one-shot bufferization follows.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from mlir import ir
from mlir.dialects.transform import structured

from ...errors import UnsupportedError
from ...sourcelines import lines_in, naming
from ...target import Device
from .. import scripts
from ..payload import as_operation, linalg_ops, loop_extents, reverses
from ..stages.stage import Stage

WORKGROUP = "#gpu.address_space<workgroup>"  # the memory space of a block's shared buffers (gpu-reduce's)
GRID_YZ = 65535  # the largest grid y and z of both vendors (x allows 2^31 - 1)
BLOCK_AXES = ("x", "y", "z")
_NAMED = {"matmul": "ppr", "batch_matmul": "pppr", "matvec": "pr", "vecmat": "pr", "dot": "r"}  # loop kinds of named ops


@dataclass(frozen=True)
class Launch:
    """How one linalg op is tiled: block tile sizes per loop (0: not split over blocks), the block
    axis of each split loop in loop order, the loop split over threads (x) and the threads of a block."""

    sizes: tuple[int, ...]
    axes: tuple[str, ...]
    inner: int
    threads: int

    @property
    def thread_counts(self) -> list[int]:
        """num_threads per loop of the thread-level forall: only the innermost parallel loop is split."""
        return [self.threads if i == self.inner else 0 for i in range(len(self.sizes))]


def loop_kinds(op: ir.Operation) -> str:
    """One letter per loop of a linalg op: "p" parallel, "r" reduction."""
    if "iterator_types" in op.attributes:
        return "".join("p" if "parallel" in str(t) else "r" for t in ir.ArrayAttr(op.attributes["iterator_types"]))
    name = op.name.removeprefix("linalg.")
    if name not in _NAMED:
        raise UnsupportedError(f"GPU targets: {op.name} is not supported yet")
    return _NAMED[name]


def plan_launch(op: ir.Operation, threads: int, wave: int) -> Launch:
    """The tiling of `op` for blocks of at most `threads` threads (whole waves); an error names `op`'s source lines."""
    with naming(lines_in(op.location)):
        return _plan_launch(op, threads, wave)


def _plan_launch(op: ir.Operation, threads: int, wave: int) -> Launch:
    if reverses(op):  # (linalg's tiling asserts on a negative map coefficient)
        raise UnsupportedError("GPU targets: a reversed view (a[::-1], np.flip, or an index list read backwards) is not supported yet")
    extents = loop_extents(op)
    parallel = [i for i, kind in enumerate(loop_kinds(op)) if kind == "p"]
    if not parallel:
        raise UnsupportedError(f"GPU targets: {op.name} reduces to one value with a body the block split does not "
                               "take (one combining op: sum, product, max, min, and, or, xor); not supported on GPU targets yet")
    inner = parallel[-1]
    block = min(threads, -(-extents[inner] // wave) * wave)
    sizes = [0] * len(extents)
    sizes[inner] = block
    for loop in parallel[-3:-1]:
        sizes[loop] = -(-extents[loop] // GRID_YZ)
    split = [i for i, s in enumerate(sizes) if s]
    axes = tuple(BLOCK_AXES[len(split) - 1 - k] for k in range(len(split)))
    return Launch(tuple(sizes), axes, inner, block)


def _mapping(kind: str, axes: tuple[str, ...]) -> ir.ArrayAttr:
    """`[#gpu.block<y>, #gpu.block<x>]` (kind "block" or "thread") for the split loops' axes."""
    return ir.ArrayAttr.get([ir.Attribute.parse(f"#gpu.{kind}<{axis}>") for axis in axes])


def _fills_of(op: ir.Operation) -> list[ir.Operation]:
    """The linalg.fills that initialize `op`'s outputs (an arg-reduction has two: best and index)."""
    inits = op.opview.outputs if hasattr(op.opview, "outputs") else [op.operands[len(op.operands) - 1]]
    found = [as_operation(init.owner) for init in inits]
    return [f for f in found if f is not None and f.name == "linalg.fill"]


@dataclass(frozen=True)
class GpuTile(Stage):
    """Linalg ops tiled over blocks and threads (scf.forall with GPU mappings), fills fused; reductions
    over long rows and matmuls left whole for gpu-reduce (named ones generalized for it)."""

    device: Device
    threads: int = 256
    name: ClassVar[str] = "gpu-tile"
    scripted: ClassVar[bool] = True

    def script(self, module: ir.Module) -> ir.Module | None:
        from .matmul import matmul_plan
        from .reduce import reduction_plan, scalar
        from .rows import mark_row_groups

        ops = linalg_ops(module)
        fills = [_fills_of(op) for op in ops]
        grouped = mark_row_groups(module, self.device)  # (fused by gpu-reduce: left whole)
        matmuls = [matmul_plan(op, self.device) is not None for op in ops]
        split = [op.name != "linalg.fill" and (matmuls[i] or op in grouped or scalar(op) or reduction_plan(op, self.device) is not None)
                 for i, op in enumerate(ops)]
        named = [i for i, op in enumerate(ops) if split[i] and op.name != "linalg.generic"]
        kernels = [(i, op, plan_launch(op, self.threads, self.device.wave)) for i, op in enumerate(ops)
                   if op.name != "linalg.fill" and not split[i]]
        if not kernels and not named:
            return None

        def body(root: ir.Value) -> None:
            handles = scripts.linalg_handles(root, len(ops))
            for i in named:
                structured.GeneralizeOp(handles[i])
            for i, op, launch in kernels:
                blocks = structured.TileUsingForallOp(handles[i], tile_sizes=launch.sizes, mapping=_mapping("block", launch.axes))
                fused = [scripts.fuse_into(handles[ops.index(fill)], blocks.forall_op)[0] for fill in fills[i]]
                threads = structured.TileUsingForallOp(blocks.tiled_op, num_threads=launch.thread_counts, mapping=_mapping("thread", ("x",)))
                for handle in fused:
                    scripts.fuse_into(handle, threads.forall_op)

        return scripts.build(module.context, body)

    def rewrite(self, module: ir.Module) -> None:
        drop_dead_fills(module)


def drop_dead_fills(module: ir.Module) -> None:
    """Erase the fills fusion left unused outside the foralls (on tensors, but bufferized they would
    run on the host, filling whole outputs)."""
    for op in linalg_ops(module):
        if op.name == "linalg.fill" and not list(op.results[0].uses):
            op.erase()


def top_foralls(module: ir.Module) -> list[ir.Operation]:
    """The outermost scf.forall ops (the block loops), in order."""
    found: list[ir.Operation] = []

    def visit(op: ir.Operation) -> ir.WalkResult:
        if op.name == "scf.forall":
            found.append(op)
            return ir.WalkResult.SKIP
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit, ir.WalkOrder.PRE_ORDER)
    return found


@dataclass(frozen=True)
class GpuBufferize(Stage):
    """MLIR's one-shot bufferization of the tiled module."""

    name: ClassVar[str] = "gpu-bufferize"
    passes: ClassVar[tuple[str, ...]] = (
        "one-shot-bufferize{bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map}",
        "canonicalize", "cse", "canonicalize",
    )



LAUNCH = "et.launch"  # on each block-level scf.forall after bufferization: its launch's number, for the gpu-map script
THREADS = "et.threads"  # beside it: the block's threads


def mark_launches(module: ir.Module) -> None:
    """Number each top-level forall (one launch each) and record its block's threads, read off its
    thread forall (a block-split reduction's forall has them already)."""
    i64 = ir.IntegerType.get_signless(64)
    for number, forall in enumerate(top_foralls(module)):
        forall.attributes[LAUNCH] = ir.IntegerAttr.get(i64, number)
        if THREADS not in forall.attributes:
            forall.attributes[THREADS] = ir.IntegerAttr.get(i64, _threads(forall))


def _threads(forall: ir.Operation) -> int:
    """The trip count of the thread-level forall nested in a block-level one."""
    found: list[int] = []

    def visit(op: ir.Operation) -> ir.WalkResult:
        if op.name == "scf.forall" and op != forall:
            found.append(ir.DenseI64ArrayAttr(op.attributes["staticUpperBound"])[0])
            return ir.WalkResult.INTERRUPT
        return ir.WalkResult.ADVANCE

    forall.walk(visit, ir.WalkOrder.PRE_ORDER)
    return found[0]
