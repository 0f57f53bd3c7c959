"""egglog_tensor: compile NumPy-style functions through egglog rewriting, MLIR and llvmlite.

    @egglog_tensor.kernel
    def f(A, B, c):
        return np.maximum(A @ B + c, 0.0)
"""

import importlib
import sys
import types
from typing import TYPE_CHECKING, Any

from .toolchain import check_versions

check_versions()

from .errors import (  # noqa: E402
    CompileError,
    ConcreteValueError,
    DataValueError,
    DeviceError,
    EgglogTensorError,
    EmptyReductionError,
    IndexOutOfBoundsError,
    KernelArgumentError,
    LinAlgError,
    OptionError,
    OutOfBoundsError,
    SpecializationWarning,
    ToolchainError,
    TracingError,
    UFuncTypeError,
    UnsupportedError,
)

if TYPE_CHECKING:
    from . import ir
    from .compiler import Compilation
    from .gpu.artifacts import compile  # noqa: A004 (et.compile: ahead of time, artifacts to a folder)
    from .kernel import Kernel, kernel
    from .optimize import Limits, OptimizeReport
    from .stages import Compiled, Lowered, Optimized, Traced
    from .target import Machine, Target, Tuning

# The rest is imported when first used: egglog and the compiler take seconds to import, which the
# tools that need only the lowering (python -m egglog_tensor.opt, FileCheck tests) should not pay.
_LAZY = {"ir": ".ir", "Compilation": ".compiler", "compile": ".gpu.artifacts", "Kernel": ".kernel", "kernel": ".kernel",
         "Limits": ".optimize", "OptimizeReport": ".optimize", "Compiled": ".stages", "Lowered": ".stages",
         "Optimized": ".stages", "Traced": ".stages", "Machine": ".target", "Target": ".target", "Tuning": ".target"}


def __getattr__(name: str) -> Any:
    """`egglog_tensor.kernel` and the rest of the public names, imported on first use (PEP 562)."""
    if name not in _LAZY:
        raise AttributeError(f"module 'egglog_tensor' has no attribute {name!r}")
    module = importlib.import_module(_LAZY[name], __name__)
    value = module if name == "ir" else getattr(module, name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    """The lazy names too, for tab completion in notebooks."""
    return sorted(set(globals()) | set(_LAZY))


class _Package(types.ModuleType):
    """This package: importing the submodule `kernel` (kernel.py) must not rebind `egglog_tensor.kernel`,
    the decorator, to the module, as Python's import does to a package's attribute of a submodule's name."""

    def __setattr__(self, name: str, value: Any) -> None:
        if not (name == "kernel" and isinstance(value, types.ModuleType)):
            super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package


__version__ = "0.1.0"

__all__ = [
    "Compilation",
    "CompileError",
    "Compiled",
    "ConcreteValueError",
    "DataValueError",
    "DeviceError",
    "EgglogTensorError",
    "EmptyReductionError",
    "IndexOutOfBoundsError",
    "Kernel",
    "KernelArgumentError",
    "LinAlgError",
    "OptionError",
    "Limits",
    "Lowered",
    "Machine",
    "OptimizeReport",
    "Optimized",
    "OutOfBoundsError",
    "SpecializationWarning",
    "Target",
    "ToolchainError",
    "Traced",
    "TracingError",
    "Tuning",
    "UFuncTypeError",
    "UnsupportedError",
    "compile",
    "ir",
    "kernel",
]
