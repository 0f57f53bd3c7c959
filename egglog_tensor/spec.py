"""What the compiler knows about each argument: shape, dtype, layout, and scalar weakness.

An ArgSpec is part of the specialization key; `spec_of` also validates call arguments so that
native code only ever sees arrays it was compiled for.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .errors import KernelArgumentError
from .gpu.launch import device_array
from .graph import DTYPES
from .runtime import NDARRAY, supported


@dataclass(frozen=True)
class ArgSpec:
    """One argument's static signature. `weak` is the Python type of a Python-number argument."""

    shape: tuple[int, ...]
    dtype: str
    layout: str  # "C", "F" or "strided"
    weak: type | None = None

    def __str__(self) -> str:
        kind = f"python {self.weak.__name__}" if self.weak else f"{self.dtype}[{','.join(map(str, self.shape))}]"
        return kind if self.weak or self.layout == "C" else f"{kind} ({self.layout})"


PYTHON_SCALARS = {bool: "bool", int: "int64", float: "float64"}


def signature(names: Sequence[str], specs: Sequence[ArgSpec], static: Sequence[tuple[str, object]] = ()) -> str:
    """A signature as messages and summaries show it: `x: float32[4,3], n: python int`, static ones `k=3`."""
    return ", ".join([f"{n}: {s}" for n, s in zip(names, specs, strict=True)] + [f"{n}={v!r}" for n, v in static])


def specs_of(names: Sequence[str], values: Sequence[object]) -> tuple[ArgSpec, ...]:
    """The ArgSpec of each call argument (`spec_of`)."""
    return tuple(spec_of(v, n) for n, v in zip(names, values, strict=True))


def layout_of(a: np.ndarray) -> str:
    """C for C-contiguous, F for Fortran-contiguous (rank >= 2), else strided."""
    if a.flags.c_contiguous:
        return "C"
    if a.flags.f_contiguous:
        return "F"
    return "strided"


def spec_of(value: object, name: str) -> ArgSpec:
    """The ArgSpec of a call argument; KernelArgumentError for anything the kernel cannot take."""
    if type(value) in PYTHON_SCALARS:
        return ArgSpec((), PYTHON_SCALARS[type(value)], "C", type(value))
    if isinstance(value, (np.generic, list, tuple, complex)):
        value = as_array(value, name)
    if not isinstance(value, np.ndarray) and (device := device_array(value)) is not None:  # CuPy, ...: a GPU target reads it in place
        if not device.contiguous:
            raise KernelArgumentError(f"argument {name!r}: a device array must be C-contiguous (e.g. cupy.ascontiguousarray(x))")
        return ArgSpec(device.shape, device.dtype.name, "C")
    if not isinstance(value, np.ndarray):
        raise KernelArgumentError(
            f"argument {name!r}: expected a NumPy array or a Python number, got {type(value).__name__}"
        )
    if type(value) not in (NDARRAY, np.memmap):
        # masked arrays, np.matrix...: NumPy gives them other semantics (masks, `*` as matmul) the kernel would drop
        raise KernelArgumentError(
            f"argument {name!r}: ndarray subclass {type(value).__name__} is not supported "
            "(its NumPy semantics would be lost); pass np.asarray(x) to compute on the plain data"
        )
    if not supported(value.dtype.newbyteorder("=")):  # (byte order: its own error below)
        raise KernelArgumentError(
            f"argument {name!r}: dtype {value.dtype} is not supported (supported: {', '.join(DTYPES)})"
        )
    if not value.dtype.isnative:
        raise KernelArgumentError(f"argument {name!r}: non-native byte order {value.dtype.str} is not supported")
    return ArgSpec(tuple(value.shape), value.dtype.name, layout_of(value))


def as_array(value: object, name: str) -> np.ndarray:
    """A NumPy scalar, Python list or tuple (nested: N-D) or complex argument as NumPy converts it (np.asarray)."""
    try:
        return np.asarray(value)
    except (ValueError, OverflowError) as e:  # a ragged list; an int beyond 64 bits
        raise KernelArgumentError(f"argument {name!r}: NumPy cannot make an array of this {type(value).__name__}: {e}") from None
