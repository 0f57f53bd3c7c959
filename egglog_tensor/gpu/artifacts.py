"""A compilation's artifacts as files: `et.compile(f, *args, target=..., out_dir=...)` writes every
stage's text and the built code (a GPU target's HSACO or PTX with its launches, a CPU target's
object file; a kernel with guards adds guards.json and the guard program in guards/), for tools, other
runtimes, or a machine with the device. A GPU-targeted kernel
called where its device or driver is missing writes them to `gpu/` beside the saved failures
(EGGLOG_TENSOR_CACHE_DIR, else ~/.cache/egglog_tensor) and raises DeviceError naming the folder.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import replace
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..compiler import Compilation
from ..errors import DeviceError
from ..toolchain import debug_dir

_SUFFIX = {"linalg": ".mlir", "llvm-ir": ".ll", "llvm-ir-optimized": ".ll", "asm": ".s", "device": ".mlir"}


def _file_name(stage: str, comp: Compilation) -> str:
    """A stage text's file: MLIR stages .mlir, LLVM IR .ll, assembly .s (.ptx for NVIDIA), reports .txt."""
    if stage == "asm" and comp.options.target.name == "nvvm":
        return "asm.ptx"
    suffix = _SUFFIX.get(stage, ".mlir" if stage in comp.texts and comp.texts[stage].lstrip().startswith(("module", "#")) else ".txt")
    return f"{stage}{suffix}"


def write(comp: Compilation, out_dir: str | Path) -> Path:
    """Write `comp`'s stage texts and code into `out_dir` (made if missing); return the folder."""
    folder = Path(out_dir)
    folder.mkdir(parents=True, exist_ok=True)
    for stage in comp.stages:
        (folder / _file_name(stage, comp)).write_text(comp.stage(stage))
    device = comp.facts.get("device")
    if device is not None:
        (folder / f"{comp.name}{device.suffix}").write_bytes(device.binary)
        launches = [{"kernel": k.name, "grid": k.grid, "block": k.block, "args": k.args} for k in device.kernels]
        manifest = {"target": f"{comp.options.target.name}:{comp.options.target.cpu}", "binary": f"{comp.name}{device.suffix}",
                    "arguments": [*comp.arg_names, *(f"out{i}" for i in range(len(comp.outputs)))],
                    "memrefs": "bare pointers" if comp.facts[comp.options.target.name].bare else "memref descriptors",
                    "launches": launches}
        (folder / "launches.json").write_text(json.dumps(manifest, indent=2) + "\n")
    elif comp.module is not None:
        (folder / f"{comp.name}.o").write_bytes(comp.module.object_code)
    if comp.guards:  # what a caller must check first: each guard, and the host program computing them (its outputs in order)
        guards = [{"where": g.where, "kind": g.kind, "value": g.value} for g in comp.guards]
        (folder / "guards.json").write_text(json.dumps({"guards": guards, "program": "guards/"}, indent=2) + "\n")
        if comp.guard_program is not None:
            write(comp.guard_program, folder / "guards")
    return folder


def compile(fn: Callable[..., Any], *args: Any, target: Any = None, out_dir: str | Path, **kwargs: Any) -> Compilation:  # noqa: A001 (et.compile)
    """Compile `fn` (a function or an et.kernel) for these arguments' signature and `target` (default:
    the kernel's own, else the host's) ahead of time, and write its artifacts into `out_dir`."""
    from ..kernel import Kernel, kernel
    from ..lowering.pipelines import resolve_target

    if not isinstance(fn, Kernel):
        fn = kernel(fn, target=target)
    elif target is not None:
        fn = Kernel(fn.fn, replace(fn.options, target=resolve_target(target)), fn._static)
    comp = fn.inspect(*args, **kwargs)
    write(comp, out_dir)
    return comp


def device_unavailable(comp: Compilation, why: str) -> DeviceError:
    """The error of calling a GPU-targeted kernel where it cannot run (`why`: what the launcher found),
    its artifacts written to the cache folder it names."""
    device = comp.facts["device"]
    key = hashlib.sha256(device.binary).hexdigest()[:16]
    folder = write(comp, debug_dir().with_name("gpu") / f"{comp.name}-{key}")  # (beside the saved failures)
    return DeviceError(f"{comp.name} is compiled for {comp.options.target.label} and cannot run here: {why}; its artifacts are in "
                       f"{folder} ({comp.name}{device.suffix}, launches.json, every stage's text); "
                       "et.compile(f, *args, target=..., out_dir=...) writes them anywhere")
