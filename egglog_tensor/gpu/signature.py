"""A GPU kernel's parameters, from the operand types of its launch (`DeviceKernel.args`) and the
calling convention (`DeviceCode.bare`), and the kernel-params array a driver launch takes.

MLIR's conventions (convert-gpu-to-rocdl / -nvvm): a memref is one pointer (bare pointers, static
identity layouts only) or its descriptor expanded: allocated and aligned pointers, offset, then each
size and each stride (i64); a scalar is its own type (index: i64). Pure Python: what the HSACO and
PTX checks compare with the compiled code, and what the launcher packs, testable without a GPU.
"""

from __future__ import annotations

import ctypes
import re
from collections.abc import Mapping
from dataclasses import dataclass

# bytes of each MLIR scalar type a kernel parameter can have (index is 64-bit: MLIR's default index-bitwidth)
BYTES = {"i1": 1, "i8": 1, "i16": 2, "i32": 4, "i64": 8, "index": 8, "f16": 2, "bf16": 2, "f32": 4, "f64": 8}
_CTYPE = {"ptr": ctypes.c_void_p, "i1": ctypes.c_int8, "i8": ctypes.c_int8, "i16": ctypes.c_int16, "i32": ctypes.c_int32,
          "i64": ctypes.c_int64, "index": ctypes.c_int64, "f32": ctypes.c_float, "f64": ctypes.c_double}
_MEMREF = re.compile(r"memref<((?:\d+x)*)(\w+)(?:, strided<\[([-\d, ]*)\](?:, offset: (-?\d+))?>)?>")


@dataclass(frozen=True)
class Operand:
    """One operand of a launch: a memref view (shape, element strides and offset from its root buffer) or a scalar (shape None)."""

    name: str  # its value in the host function ("%arg0", "%alloc_1", "%subview")
    element: str  # MLIR element type ("f32", "i8", "index")
    shape: tuple[int, ...] | None = None
    strides: tuple[int, ...] = ()
    offset: int = 0

    @property
    def itemsize(self) -> int:
        return BYTES[self.element]


def operand(arg: str) -> Operand:
    """The Operand of "%name: type" (DeviceKernel.args); ValueError for a type with dynamic sizes, strides or offset."""
    name, _, kind = arg.partition(": ")
    if kind in BYTES:
        return Operand(name, kind)
    match = _MEMREF.fullmatch(kind)
    if match is None or match[2] not in BYTES:
        raise ValueError(f"kernel operand {arg!r}: not a static memref or scalar type the launcher can pass")
    shape = tuple(int(n) for n in match[1].split("x")[:-1])
    strides = tuple(int(s) for s in match[3].split(",")) if match[3] else _contiguous(shape)
    return Operand(name, match[2], shape, strides, int(match[4] or 0))


def _contiguous(shape: tuple[int, ...]) -> tuple[int, ...]:
    """The element strides of a C-contiguous array of `shape` (an identity layout)."""
    strides, step = [], 1
    for n in reversed(shape):
        strides.append(step)
        step *= n
    return tuple(reversed(strides))


@dataclass(frozen=True)
class Param:
    """One kernel parameter: what it holds ("%arg0 aligned", "%alloc size 1") and its type ("ptr" or a scalar type)."""

    what: str
    kind: str

    @property
    def size(self) -> int:
        return 8 if self.kind == "ptr" else BYTES[self.kind]


def parameters(args: tuple[str, ...], bare: bool) -> tuple[Param, ...]:
    """The parameters of a kernel launched with these operands ("%name: type"), in order."""
    params: list[Param] = []
    for arg in args:
        op = operand(arg)
        if op.shape is None:
            params.append(Param(op.name, op.element))
        elif bare:
            params.append(Param(op.name, "ptr"))
        else:
            params += [Param(f"{op.name} allocated", "ptr"), Param(f"{op.name} aligned", "ptr"), Param(f"{op.name} offset", "i64")]
            params += [Param(f"{op.name} {what} {i}", "i64") for what in ("size", "stride") for i in range(len(op.shape))]
    return tuple(params)


def offsets(params: tuple[Param, ...]) -> tuple[list[int], int]:
    """Each parameter's byte offset in the kernel's argument block (each at its natural alignment) and the block's size."""
    at, where = 0, []
    for p in params:
        at = -(-at // p.size) * p.size
        where.append(at)
        at += p.size
    return where, at


@dataclass
class Packed:
    """A launch's kernel-params array: `address` is the `void**` cuLaunchKernel / hipModuleLaunchKernel take
    (each entry the address of one value); the values live as long as this object."""

    values: list[ctypes._SimpleCData]
    array: ctypes.Array

    @property
    def address(self) -> int:
        return ctypes.addressof(self.array)


def pack(args: tuple[str, ...], bare: bool, base: Mapping[str, int], scalars: Mapping[str, int | float] | None = None) -> Packed:
    """The kernel-params array of a launch: `base` maps each memref operand's name to the device address of
    the buffer it is a view of (the type's offset is from there); `scalars` each scalar operand's value."""
    values: list[ctypes._SimpleCData] = []
    for arg in args:
        op = operand(arg)
        if op.shape is None:
            if scalars is None or op.name not in scalars:
                raise ValueError(f"kernel operand {arg!r}: a scalar without a value")
            values.append(_CTYPE[op.element](scalars[op.name]))
            continue
        if op.name not in base:
            raise ValueError(f"kernel operand {arg!r}: no device buffer for {op.name}")
        if bare:
            values.append(ctypes.c_void_p(base[op.name] + op.offset * op.itemsize))
            continue
        values += [ctypes.c_void_p(base[op.name]), ctypes.c_void_p(base[op.name]), ctypes.c_int64(op.offset)]
        values += [ctypes.c_int64(n) for n in (*op.shape, *op.strides)]
    array = (ctypes.c_void_p * max(len(values), 1))(*[ctypes.addressof(v) for v in values])
    return Packed(values, array)
