"""The contraction plan: what the tile stage does to each contraction the emitter tagged with the
term's tiles (`et.tiles`, `et.vec`: lowering/tiling.py `tag`), as typed records.

It is made once per pipeline run, from the module the first stage that reads it receives (the
parallel stage on cpu-openmp, else the tile stage; both see the IR after row fusion) and the Target,
and lowering/pipelines.py hands that one plan to both: the parallel stage leaves the ops the tile
stage computes to it (`Plan.owned`), the tile stage builds its script from the records. Making it
reads the module and never changes it; the tile policy's choices come from lowering/policy.py.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Literal

from mlir import ir

from ..target import Target
from .annotations import ROWS, TILES, VEC
from .payload import as_operation, element_bytes, indexing_maps, int_list, loop_extents
from .policy import packing, packs_panels, padded_loops, padded_tiles, panel_k

CONTRACTIONS = ("linalg.matmul", "linalg.batch_matmul", "linalg.matvec", "linalg.vecmat", "linalg.dot")


@dataclass(frozen=True)
class Contraction:
    """One tagged contraction and how the tile stage computes it (the reasons: lowering/tiling.py)."""

    op: str
    target: Target
    tiles: tuple[int, ...]  # cache tiles: the term's, those of the padded loops (`pad`) or with the panels' k step (`panels`)
    vec: tuple[int, ...]  # register tile
    loops: tuple[int, ...]  # loop extents (padded when `pad`)
    ident: int  # its index among the module's tagged contractions in payload order (`tagged`; the script matches et.id)
    elem: str = "f32"  # element type (the zero B is padded with when packed)
    itemsize: int = 4
    epilogue: str | None = None  # its only consumer's op, computed block by block with it (`_epilogue`)
    reduce: tuple[int, int] | None = None  # that consumer is a linalg.matvec: its register tile (mr, kv)
    pad: bool = False  # computed on A and C padded to whole register tiles of rows (`policy.padded_loops`)
    panels: bool = False  # A and B packed once, in panels (`policy.packs_panels`)
    packed: frozenset[str] = frozenset()  # the operands copied to contiguous buffers (`policy.packing`)
    # its zero fill (a linalg.fill): computed block by block with it ("block": in its epilogue's loop
    # or C's unpack), or split by row blocks ("rows": B packed once, C reshaped, where a plain fill of
    # C would be folded into the reshaped C and copied) unless the parallel stage split it already
    fill: Literal["block", "rows"] | None = None


def tagged(module: ir.Module) -> list[ir.Operation]:
    """The contractions of `module` the emitter tagged, in payload (walk) order."""
    found: list[ir.Operation] = []

    def visit(op: ir.Operation) -> ir.WalkResult:
        if op.name in CONTRACTIONS and TILES in op.attributes and VEC in op.attributes:
            found.append(op)
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit)
    return found


@dataclass(frozen=True)
class Plan:
    """The contractions the tile stage computes in one module, for one Target."""

    target: Target
    contractions: tuple[Contraction, ...]
    count: int  # the module's tagged contractions (a matvec epilogue is one, computed with its matmul)

    def ops(self, module: ir.Module) -> list[ir.Operation]:
        """Each planned contraction's op in `module`: the module planned, or that module after stages
        that leave tagged contractions alone (the parallel stage)."""
        found = tagged(module)
        if len(found) != self.count or any(found[t.ident].name != t.op for t in self.contractions):
            raise ValueError("the module's tagged contractions are not those of its plan")
        return [found[t.ident] for t in self.contractions]

    def owned(self, module: ir.Module) -> list[ir.Operation]:
        """The ops of `module` the tile stage computes: the planned contractions, their epilogues and
        the zero fills it computes block by block with them."""
        found: list[ir.Operation] = []
        for t, op in zip(self.contractions, self.ops(module), strict=True):
            found.append(op)
            if t.epilogue is not None:
                found.append(as_operation(next(iter(op.results[0].uses)).owner))
            if t.fill == "block":
                found.append(as_operation(op.operands[-1].owner))
        return found


def _epilogue(op: ir.Operation, claimed: list[ir.Operation]) -> ir.Operation | None:
    """The consumer a 2-D matmul's result is computed for block by block, when it is its only user
    and no other matmul's (`claimed`): an elementwise linalg.generic reading it element for element
    (bias, activation), which then runs on each output block while it is in cache; or a
    linalg.matvec taking it as its matrix (`(a @ b) @ x`), which then reduces each output block
    while it is in cache."""
    uses = list(op.results[0].uses)
    if op.name != "linalg.matmul" or len(uses) != 1:
        return None
    user = as_operation(uses[0].owner)
    if any(user == c for c in claimed):
        return None
    if user.name == "linalg.matvec" and uses[0].operand_number == 0:
        return user
    if user.name != "linalg.generic" or len(user.results) != 1 or ROWS in user.attributes:
        return None
    maps = indexing_maps(user)
    iterators = ir.ArrayAttr(user.attributes["iterator_types"])
    number = uses[0].operand_number
    if any("parallel" not in str(it) for it in iterators) or number >= len(maps) - 1:
        return None
    same = ir.ShapedType(user.results[0].type).shape == ir.ShapedType(op.results[0].type).shape
    return user if same and maps[number] == ir.AffineMap.get_identity(2) else None


def _packed(t: Contraction) -> frozenset[str]:
    """`packing` of a matmul: all of B once when in panels; an elementwise epilogue's loop computes
    the matmul block by block, so its B is not packed up front (a matvec epilogue's is, unless its
    blocks are one register tile wide, TN = nr: an int32 (a @ b) @ x so tiled aborted in MLIR's
    vector lowering); a batch_matmul's blocks copy their B micro-panels."""
    if t.panels:
        return frozenset("P")
    if len(t.loops) == 4:
        return packing(t.loops[1:], t.tiles[1:], t.vec[1:], t.itemsize, t.target, prepack=False)
    prepack = t.epilogue is None or (t.reduce is not None and t.tiles[1] > t.vec[1])
    return packing(t.loops, t.tiles, t.vec, t.itemsize, t.target, t.epilogue is not None, prepack=prepack)


def _fill(t: Contraction, op: ir.Operation) -> Literal["block", "rows"] | None:
    """What the tile stage does to the contraction's zero fill (`Contraction.fill`)."""
    init = as_operation(op.operands[-1].owner)
    if init is None or init.name != "linalg.fill":
        return None
    if t.epilogue is not None or t.panels:
        return "block" if len(list(init.results[0].uses)) == 1 else None
    return "rows" if "P" in t.packed else None


def _planned(op: ir.Operation, ident: int, user: ir.Operation | None, target: Target) -> Contraction:
    """The record of one tagged contraction whose epilogue is `user` (None: none)."""
    elem = ir.ShapedType(op.results[0].type).element_type
    t = Contraction(op.name, target, int_list(op.attributes[TILES]), int_list(op.attributes[VEC]), loop_extents(op),
                    ident, elem=str(elem), itemsize=element_bytes(elem))
    if user is not None:
        t = replace(t, epilogue=user.name, reduce=int_list(user.attributes[VEC]) if user.name == "linalg.matvec" else None)
    if packs_panels(t.loops, t.tiles, t.vec, target, t.reduce is not None):
        t = replace(t, tiles=(*t.tiles[:2], panel_k(t.loops[2], t.tiles[2])), panels=True)
    # (an epilogue's loop computes the matmul block by block: its blocks are not padded; panels are
    # padded by their packs)
    elif t.epilogue is None and (padded := padded_loops(t.op, t.loops, t.vec, target)) is not None:
        t = replace(t, loops=padded, tiles=padded_tiles(t.loops, padded, t.tiles, t.vec), pad=True)
    t = replace(t, packed=_packed(t))
    return replace(t, fill=_fill(t, op))


def contraction_plan(module: ir.Module, target: Target) -> Plan:
    """The plan of every tagged contraction of `module` for `target`, in payload order (a matmul's
    matvec epilogue is planned with it, not on its own)."""
    ops = tagged(module)
    claimed: list[ir.Operation] = []
    found: list[Contraction] = []
    for ident, op in enumerate(ops):
        if any(op == c for c in claimed):
            continue
        user = _epilogue(op, claimed)
        if user is not None:
            claimed.append(user)
        found.append(_planned(op, ident, user, target))
    return Plan(target, tuple(found), len(ops))
