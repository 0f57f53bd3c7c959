"""Elementwise ops over contiguous buffers as one flat loop.

A 2-D elementwise op becomes a loop over rows around a vectorized loop over each row, and every
row ends in a remainder: with rows of 100 floats, six vectors of 16 and four elements of scalar
code, whose chain of inline math (the math stage) is as long as the vector one's. NumPy
treats contiguous operands as one flat array. After bufferization, the "flatten" stage collapses
each `linalg.generic` whose iterators are all parallel, whose indexing maps are all the identity
and whose operands are all contiguous memrefs (a whole array, or a block of whole rows of one:
the OpenMP chunks, the last of which may be shorter) into one dimension, with upstream
`transform.structured.flatten_elementwise` (memref.collapse_shape of each operand). Broadcasts,
transposes and strided views keep their loop nest.

Measured (AMD EPYC Zen 4, float32, one core, cycles per 16 elements, nested -> flat, paired):
gelu 100x100 57 -> 41, 200x200 45.5 -> 32.5, 300x300 40.5 -> 31.3; exp 25.2 -> 21.6, 14.1 -> 13.0,
14.7 -> 11.1; x * 3 + x * x unchanged (7.6, 6.2). At 4096x4096 within the noise (two cores: gelu
4.80 / 4.85 ms, exp(x) * 0.5 + x 3.43 / 3.52, one core gelu 9.2-9.5 / 9.7-10.8: the flat loop
keeps gelu's constants in registers and spills one of them).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from mlir import ir

from .. import scripts
from ..payload import linalg_ops
from .stage import Stage, count_ops


def _contiguous(value_type: ir.Type) -> bool:
    """A memref whose elements are consecutive (row-major, no gaps); only its leading size may be
    dynamic (the last OpenMP chunk of rows is shorter)."""
    try:
        memref = ir.MemRefType(value_type)
    except ValueError:
        return False
    if memref.rank == 0 or any(memref.is_dynamic_dim(d) for d in range(1, memref.rank)):
        return False
    strides, _ = memref.get_strides_and_offset()
    expected = 1
    for size, stride in zip(reversed(memref.shape[1:]), reversed(strides[1:]), strict=True):
        if size != 1 and stride != expected:
            return False
        expected *= size
    return strides[0] == expected or memref.shape[0] == 1


def flattens(op: ir.Operation) -> bool:
    """Whether `op` is a rank >= 2 elementwise linalg.generic over contiguous buffers, identity maps only."""
    if op.name != "linalg.generic" or "iterator_types" not in op.attributes:
        return False
    iterators = ir.ArrayAttr(op.attributes["iterator_types"])
    identity = ir.AffineMap.get_identity(len(iterators))
    maps = [ir.AffineMapAttr(m).value for m in ir.ArrayAttr(op.attributes["indexing_maps"])]
    return (len(iterators) >= 2 and all("parallel" in str(it) for it in iterators) and all(m == identity for m in maps)
            and all(_contiguous(operand.type) for operand in op.operands) and scalar_body(op))


def scalar_body(op: ir.Operation) -> bool:
    """Whether op's body only computes scalars (arith, math), as flatten_elementwise requires: a gather
    with run-time indices of rank >= 2 (np.take(a, idx2d)) loads from a buffer in its body."""
    return all(o.name.split(".")[0] in ("arith", "math") or o.name in ("linalg.yield", "linalg.index")
               for o in op.regions[0].blocks[0].operations)


def transform_script(module: ir.Module) -> ir.Module | None:
    """The transform module flattening each op `flattens` accepts (None when there is none)."""
    ops = linalg_ops(module)
    chosen = [i for i, op in enumerate(ops) if flattens(op)]
    if not chosen:
        return None

    def body(root: ir.Value) -> None:
        handles = scripts.linalg_handles(root, len(ops))
        for i in chosen:
            scripts.flatten_elementwise(handles[i])

    return scripts.build(module.context, body)


@dataclass(frozen=True)
class Flattened:
    """What the flatten stage decided: how many elementwise ops it collapsed to one loop."""

    ops: int


@dataclass(frozen=True)
class Flatten(Stage):
    """Elementwise ops over contiguous buffers become one flat loop: no remainder per row."""

    name: ClassVar[str] = "flatten"
    passes: ClassVar[tuple[str, ...]] = ("canonicalize",)
    scripted: ClassVar[bool] = True

    def script(self, module: ir.Module) -> ir.Module | None:
        return transform_script(module)

    def decided(self, script: ir.Module) -> Flattened:
        """The ops the script flattens (its flatten_elementwise ops)."""
        return Flattened(count_ops(script, "transform.structured.flatten_elementwise"))
