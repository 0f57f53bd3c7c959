"""The errors users see: each says what was wrong and where (argument, op, source line, stage)."""

from __future__ import annotations

import numpy as np


class EgglogTensorError(Exception):
    """Base class of every error this package raises on purpose."""


class UnsupportedError(EgglogTensorError, NotImplementedError):
    """A NumPy function, argument kind or dtype the tracer does not support."""


class UnsupportedAttributeError(UnsupportedError, AttributeError):
    """An ndarray attribute a traced array lacks (`x.flags`): an AttributeError too, so that library code's
    getattr(x, name, default) and hasattr answer as for any object without it."""


class UFuncTypeError(UnsupportedError, TypeError):
    """A ufunc NumPy has no loop for on these dtypes (`bool - bool`, `np.add` of a string): NumPy's TypeError
    and its message, naming the call; an UnsupportedError too, as it was before it was told apart."""


class TracingError(EgglogTensorError):
    """The function cannot be traced: shape mismatch, Python control flow on a traced value, ..."""


class ConcreteValueError(TracingError):
    """A traced value was needed as a Python value (a shape, slice bound, loop count, branch); `needs` names
    the arguments it depends on (a kernel retraces with Python-number ones static: docs/calling.md)."""

    needs: frozenset[str] = frozenset()


class SpecializationWarning(UserWarning):
    """A kernel compiled one specialization per value for many values of a Python argument (docs/calling.md)."""


class OutOfBoundsError(EgglogTensorError, OverflowError):
    """A Python integer outside the integer dtype NumPy converts it to (`int32_array + 2**40`): NumPy raises OverflowError too."""


class IndexOutOfBoundsError(EgglogTensorError, IndexError):
    """An index outside its axis (np.take, x[idx]): at trace time for constant indices, after the call for traced ones (NumPy raises IndexError too)."""


class LinAlgError(EgglogTensorError, np.linalg.LinAlgError):
    """A matrix np.linalg cannot factor or whose shape it refuses (singular, not positive definite, not square):
    np.linalg.LinAlgError with NumPy's message; after the call for a matrix computed in the kernel."""


class EmptyReductionError(EgglogTensorError, ValueError):
    """A max or min (no identity) of nothing: of a mask selection found empty when the kernel ran, as NumPy's ValueError."""


class DataValueError(EgglogTensorError, ValueError):
    """A value NumPy's loop refuses (an integer to a negative integer power): while tracing for a constant, after the
    call for a computed one; NumPy's ValueError and message."""


class KernelArgumentError(EgglogTensorError, TypeError):
    """A call passed arguments the kernel cannot take (count, type, dtype, rank)."""


class CompileError(EgglogTensorError):
    """A toolchain stage (mlir-opt pass, mlir-translate, LLVM) failed; the message names the stage."""


class ToolchainError(EgglogTensorError, ImportError):
    """The installed MLIR / LLVM toolchain is missing or its versions do not match."""


class DeviceError(EgglogTensorError, RuntimeError):
    """A kernel compiled for a GPU target was called where it cannot run (no device, driver or driver library)."""


class OptionError(EgglogTensorError, ValueError):
    """A kernel option given a value it cannot take (an unknown fast-math flag, ...)."""
