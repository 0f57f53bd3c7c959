"""egglog_tensor: compile NumPy-style functions through egglog rewriting, MLIR and llvmlite.

    @egglog_tensor.kernel
    def f(A, B, c):
        return np.maximum(A @ B + c, 0.0)
"""

from .toolchain import check_versions

check_versions()

from . import ir  # noqa: E402
from .compiler import Compilation  # noqa: E402
from .errors import (  # noqa: E402
    CompileError,
    ConcreteValueError,
    DeviceError,
    EgglogTensorError,
    IndexOutOfBoundsError,
    LinAlgError,
    KernelArgumentError,
    OptionError,
    OutOfBoundsError,
    SpecializationWarning,
    ToolchainError,
    TracingError,
    UnsupportedError,
)
from .gpu.artifacts import compile  # noqa: E402,A004 (et.compile: ahead of time, artifacts to a folder)
from .kernel import Kernel, kernel  # noqa: E402
from .optimize import Limits, OptimizeReport  # noqa: E402
from .stages import Compiled, Lowered, Optimized, Traced  # noqa: E402
from .target import Machine, Target, Tuning  # noqa: E402

__version__ = "0.1.0"

__all__ = [
    "Compilation",
    "CompileError",
    "Compiled",
    "ConcreteValueError",
    "DeviceError",
    "EgglogTensorError",
    "IndexOutOfBoundsError",
    "LinAlgError",
    "Kernel",
    "KernelArgumentError",
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
    "UnsupportedError",
    "compile",
    "ir",
    "kernel",
]
