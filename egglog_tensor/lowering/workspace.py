"""Large temporaries as kernel arguments: the caller lends them from the output pool.

A kernel's temporary buffer (the product of `(a @ b) @ x`, B packed once for a GEMM) is a
`memref.alloc` that the kernel mallocs and frees on every call. glibc serves a large block with a
fresh mmap, or returns the top of its heap to the system on free, so each call faulted its pages
in again and zeroed them: two 16 MiB temporaries of a 2048^3 chain cost 8K page faults a call
(67 -> 74 ms). The `bufferize` stage's `hoist` rewrite turns every such allocation at the top of
the kernel (static shape, at least `MIN_BYTES`, freed at the end) into one more trailing function
argument, returned to the stage as its facts, and each call passes buffers from
`outputs.POOL` (pages already mapped, cache-line aligned, transparent huge pages where NumPy
asks for them), given back when the call returns. Smaller or nested allocations stay malloc.
MIN_BYTES is well below the output pool's: glibc mmaps blocks from 128 KiB until a free raises that
threshold, then trims the top of its heap when twice the threshold is free there, so two 4 MB
packs of a 1000^3 GEMM (each below a threshold of 4 MiB) were faulted in again on every call: 1945
faults, 14 ms a call instead of 11. From glibc's first threshold, 128 KiB: a time loop over 100,000
float64 values (an upwind step with np.roll, two 800 KB temporaries a step) spent most of each call
faulting them in (3 steps 2.2 ms, 12 steps 15 ms; lent: 0.37 and 2.4 ms, NumPy 1.0 and 2.5).
"""

from __future__ import annotations

import math

import numpy as np
from mlir import ir

from ..graph import DTYPES, numpy_dtype
from ..outputs import ALIGN
from .scalar import storage_type

MIN_BYTES = 1 << 17  # a temporary from this size (glibc mmaps from 128 KiB) is lent (a lease costs about a microsecond)


def _buffer_type(value_type: ir.Type) -> tuple[tuple[int, ...], np.dtype] | None:
    """(shape, dtype) of a static, identity-layout memref whose elements are stored as those of a
    dtype the runtime passes (scalar.storage_type); else None."""
    try:
        memref = ir.MemRefType(value_type)
    except ValueError:
        return None
    identity = isinstance(memref.layout, ir.AffineMapAttr) and memref.layout == ir.AffineMapAttr.get(ir.AffineMap.get_identity(memref.rank))
    if not memref.has_static_shape or not identity or memref.memory_space is not None:
        return None
    names = [d for d in DTYPES if storage_type(d) == memref.element_type]
    return (tuple(memref.shape), numpy_dtype(names[0])) if names else None


def _hoistable(op: ir.Operation) -> list[ir.Operation] | None:
    """The deallocations of a large static `memref.alloc`, all at the function's top level (None: not hoistable)."""
    if op.name != "memref.alloc" or len(op.operands) or (found := _buffer_type(op.results[0].type)) is None:
        return None
    shape, dtype = found
    alignment = ir.IntegerAttr(op.attributes["alignment"]).value if "alignment" in op.attributes else 0
    if math.prod(shape) * dtype.itemsize < MIN_BYTES or alignment > ALIGN:  # (the pool's buffers start on a cache line)
        return None
    deallocs = [use.owner for use in op.results[0].uses if use.owner.name == "memref.dealloc"]
    if not deallocs or any(d.parent.name != "func.func" for d in deallocs):
        return None  # an escaping or conditionally freed buffer: leave it to malloc
    return deallocs


def hoist(module: ir.Module) -> list[tuple[tuple[int, ...], np.dtype]]:
    """Each kernel's large top-level temporaries become trailing arguments (see the module docstring);
    their (shape, dtype), in order."""
    lent: list[tuple[tuple[int, ...], np.dtype]] = []
    for func in module.body.operations:
        if func.operation.name != "func.func" or "llvm.emit_c_interface" not in func.operation.attributes:
            continue
        block = func.operation.regions[0].blocks[0]
        for op in [o.operation for o in block.operations]:
            deallocs = _hoistable(op)
            if deallocs is None:
                continue
            lent.append(_buffer_type(op.results[0].type))  # type: ignore[arg-type]
            argument = block.add_argument(op.results[0].type, op.location)
            for dealloc in deallocs:
                dealloc.erase()
            op.results[0].replace_all_uses_with(argument)
            op.erase()
        attributes = func.operation.attributes
        if "arg_attrs" in attributes:
            attrs = list(ir.ArrayAttr(attributes["arg_attrs"]))
            attrs += [ir.DictAttr.get({})] * (len(block.arguments) - len(attrs))
            attributes["arg_attrs"] = ir.ArrayAttr.get(attrs)
        kind = ir.FunctionType(ir.TypeAttr(attributes["function_type"]).value)
        attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get([a.type for a in block.arguments], kind.results))
    return lent
