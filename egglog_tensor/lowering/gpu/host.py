"""What the host function of a GPU compilation does besides its launches: the buffers it allocates (on
the device, when launched), the constant arrays it reads (`memref.get_global`), the views it takes
of both and of its arguments (each launch operand is a view of one root buffer), and its constant
scalars. The launcher (egglog_tensor/gpu/launch.py) replays it with device buffers.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from mlir import ir

from ...errors import UnsupportedError
from ...forked import NATIVE

VIEWS = frozenset({"memref.subview", "memref.expand_shape", "memref.collapse_shape", "memref.cast"})
_NOTHING = frozenset({"func.return", "memref.dealloc", "gpu.launch_func"})


@dataclass(frozen=True)
class HostBuffers:
    """The host function's arguments (in order; those receiving the results), its allocations (bytes) and
    constant arrays, each value's root buffer, its scalars."""

    arguments: tuple[str, ...]
    outputs: tuple[str, ...] = ()
    allocs: dict[str, int] = field(default_factory=dict)
    constants: dict[str, bytes] = field(default_factory=dict)
    roots: dict[str, str] = field(default_factory=dict)  # every memref value -> the argument, allocation or constant it views
    scalars: dict[str, int | float] = field(default_factory=dict)


def _nbytes(memref: ir.Type) -> int:
    view = ir.MemRefType(memref)
    return int(np.prod(view.shape, dtype=np.int64)) * max(1, view.element_type.width // 8)


def host_buffers(lowered: str) -> HostBuffers:
    """The HostBuffers of the (single) host function of a lowered GPU module."""
    with NATIVE, ir.Context() as context, ir.Location.unknown():
        context.allow_unregistered_dialects = True
        module = ir.Module.parse(lowered)
        globals_ = {ir.StringAttr(op.attributes["sym_name"]).value: op for op in module.body.operations if op.operation.name == "memref.global"}
        (host,) = [op for op in module.body.operations if op.operation.name == "func.func"]
        entry = host.regions[0].blocks[0]
        names = tuple(a.get_name() for a in entry.arguments)
        attrs = list(ir.ArrayAttr(host.attributes["arg_attrs"])) if "arg_attrs" in host.attributes else []
        buffers = HostBuffers(names, tuple(n for n, a in zip(names, attrs) if "et.output" in ir.DictAttr(a)))
        buffers.roots.update((name, name) for name in buffers.arguments)
        for op in entry.operations:
            kind = op.operation.name
            name = op.results[0].get_name() if len(op.results) else ""
            if kind == "memref.alloc":
                buffers.allocs[name] = _nbytes(op.results[0].type)
                buffers.roots[name] = name
            elif kind == "memref.get_global":
                value = ir.DenseElementsAttr(globals_[ir.FlatSymbolRefAttr(op.attributes["name"]).value].attributes["initial_value"])
                buffers.constants[name] = np.ascontiguousarray(np.array(value)).tobytes()  # (a splat too: NumPy expands it)
                buffers.roots[name] = name
            elif kind in VIEWS:
                buffers.roots[name] = buffers.roots[op.operands[0].get_name()]
            elif kind == "arith.constant":
                buffers.scalars[name] = op.attributes["value"].value  # type: ignore[attr-defined]
            elif kind not in _NOTHING:
                raise UnsupportedError(f"GPU launch: the host function does {kind}, which the launcher cannot replay")
        return buffers
