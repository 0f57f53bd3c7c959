"""After the MLIR stages of a GPU target: the device code as one module (every gpu.module's kernels),
LLVM IR by mlir-translate, then code by llvmlite in the forked worker (llc.py), then, for AMD, the
object linked into an HSA code object (HSACO, code object v5) by ziglang's ld.lld and read back
with llvm-readelf; for NVIDIA, the PTX assembled by ptxas. Each step's text is a stage of `inspect`;
a check that fails raises CompileError naming it.
"""

from __future__ import annotations

import functools
import re
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from mlir import ir

from ...errors import CompileError, ToolchainError
from ...forked import NATIVE, ChildDied, run_job
from ...target import Target
from ...toolchain import run_tool, save_failure_input, tool_path
from . import llc
from .host import HostBuffers, host_buffers
from .metadata import check_hsaco_metadata, check_ptx_entries

TRIPLES = {"rocdl": "amdgcn-amd-amdhsa", "nvvm": "nvptx64-nvidia-cuda"}
COV5 = '!{i32 1, !"amdhsa_code_object_version", i32 500}'  # code object v5: what ROCm 6 loads (llvmlite's default is v6)


@dataclass(frozen=True)
class DeviceKernel:
    """One launch of the host function, in order: the kernel's symbol, grid and block sizes (x, y, z), operands."""

    name: str
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    args: tuple[str, ...] = ()  # its operands in the host function, "%arg0: memref<1000x300xf32>" (temporaries: %alloc...)

    def __str__(self) -> str:
        return f"{self.name} grid {'x'.join(map(str, self.grid))} block {'x'.join(map(str, self.block))}"


@dataclass(frozen=True)
class DeviceCode:
    """What a GPU target's compilation built: its launches, the binary (HSACO bytes, or PTX as UTF-8),
    the binary's file name suffix, the kernels' calling convention and the host function's buffers."""

    kernels: tuple[DeviceKernel, ...]
    binary: bytes
    suffix: str
    bare: bool  # memref arguments as one pointer each, else as memref descriptors (device.py's Convention)
    host: HostBuffers  # what the host function allocates and views, for the launcher


_LAUNCH = re.compile(r"gpu\.launch_func\s+@(\w+)::@\w+ blocks in \((%\w+), (%\w+), (%\w+)\) threads in \((%\w+), (%\w+), (%\w+)\)"
                     r"\s+args\((.*)\)$", re.MULTILINE)
_ARG = re.compile(r"(%\w+) : (memref<(?:[^<>]|<[^<>]*>)*>|\w+)")
_CONST = re.compile(r"(%\w+) = arith\.constant (\d+) : index")


def launches(host_text: str) -> tuple[DeviceKernel, ...]:
    """The gpu.launch_func ops of the lowered module, in order, with their constant sizes."""
    values = dict(_CONST.findall(host_text))
    return tuple(DeviceKernel(m[0], tuple(int(values[v]) for v in m[1:4]), tuple(int(values[v]) for v in m[4:7]),  # type: ignore[arg-type]
                              tuple(f"{name}: {kind}" for name, kind in _ARG.findall(m[7]))) for m in _LAUNCH.findall(host_text))


def device_module(lowered: str, target: Target) -> str:
    """Every gpu.module's functions (each kernel named after its gpu.module, declarations once) in one LLVM-dialect module
    with the device's data layout and triple: what mlir-translate takes."""
    with NATIVE, ir.Context() as context, ir.Location.unknown():
        context.allow_unregistered_dialects = True
        source = ir.Module.parse(lowered)
        device = ir.Module.create()
        seen: set[str] = set()
        for op in source.body.operations:
            if op.operation.name != "gpu.module":
                continue
            if "llvm.data_layout" in op.attributes:
                device.operation.attributes["llvm.data_layout"] = op.attributes["llvm.data_layout"]
            for inner in op.regions[0].blocks[0].operations:
                kernel = "gpu.kernel" in inner.attributes  # named after its gpu.module: unique
                name = op.attributes["sym_name"] if kernel else inner.attributes["sym_name"]
                if str(name) not in seen:
                    seen.add(str(name))
                    clone = inner.operation.clone()
                    clone.attributes["sym_name"] = name
                    device.body.append(clone)
        device.operation.attributes["llvm.target_triple"] = ir.StringAttr.get(TRIPLES[target.name])
        return str(device)


def with_cov5(llvm_ir: str) -> str:
    """AMD device IR asking for code object v5 (a module flag)."""
    match = re.search(r"^!llvm\.module\.flags = !\{(.*)\}$", llvm_ir, re.MULTILINE)
    ids = [int(n) for n in re.findall(r"^!(\d+) = ", llvm_ir, re.MULTILINE)]
    new = max(ids, default=-1) + 1
    if match is None:
        return f"{llvm_ir.rstrip()}\n!llvm.module.flags = !{{!{new}}}\n!{new} = {COV5}\n"
    flags = f"!llvm.module.flags = !{{{match[1]}, !{new}}}"
    return f"{llvm_ir[:match.start()]}{flags}{llvm_ir[match.end():]}\n!{new} = {COV5}\n"


def _run(command: list[str], what: str, saved_text: str, suffix: str) -> subprocess.CompletedProcess[str]:
    """Run a device tool; CompileError with its output and the saved input when it fails."""
    try:
        done = subprocess.run(command, capture_output=True, text=True)
    except OSError as exc:
        raise ToolchainError(f"cannot run {command[0]} ({what}): {exc}") from exc
    if done.returncode != 0:
        saved = save_failure_input(saved_text, what, suffix=suffix)
        raise CompileError(f"{what} failed (exit code {done.returncode})\n  command: {' '.join(command)}\n"
                           f"  input saved to: {saved}\n  output:\n{(done.stderr or done.stdout).rstrip()}")
    return done


def generate(llvm_ir: str, target: Target, folder: Path) -> tuple[str, bytes | None]:
    """(assembly, object code: None for NVPTX) of device LLVM IR, from llc.py in the forked worker; the
    IR, assembly and object written into `folder`."""
    (folder / "device.ll").write_text(llvm_ir)
    made: list[tuple[str, bytes | None]] = []
    try:
        run_job(functools.partial(llc.generate, llvm_ir, TRIPLES[target.name], target.cpu), made.append)
    except ChildDied as died:
        saved = save_failure_input(llvm_ir, f"llvmlite-{target.cpu}", suffix=".ll")
        raise CompileError(f"llvmlite-{target.cpu} failed: LLVM ended the process running it ({died.how})\n"
                           f"  input saved to: {saved}\n  output:\n{died.stderr.rstrip()}") from None
    asm, obj = made[-1]
    (folder / "device.s").write_text(asm)
    if obj is not None:
        (folder / "device.o").write_bytes(obj)
    return asm, obj


def link_hsaco(obj: bytes, folder: Path) -> bytes:
    """The HSA code object (a shared ELF the ROCm loader takes) of a device object: ziglang's ld.lld."""
    source, out = folder / "device.o", folder / "device.hsaco"
    source.write_bytes(obj)
    _run([str(tool_path("zig")), "ld.lld", "-shared", str(source), "-o", str(out)], "ld.lld", "", ".o")
    return out.read_bytes()


def check_hsaco(path: Path, kernels: tuple[DeviceKernel, ...]) -> str:
    """llvm-readelf's header, dynamic symbols and notes of an HSACO; CompileError unless it is an
    AMDGPU code object v5 holding each kernel's symbol and descriptor (`.kd`) and no undefined symbol."""
    report = _run([str(tool_path("llvm-readelf")), "-h", "--dyn-syms", "--notes", str(path)], "llvm-readelf", "", ".hsaco").stdout
    wrong = [] if re.search(r"ABI Version:\s+3\b", report) else ["not code object v5 (ELF ABI version 3)"]
    wrong += [] if "EM_AMDGPU" in report else ["not an AMDGPU ELF"]
    for kernel in kernels:
        wrong += [f"no symbol {s}" for s in (f"FUNC .* {kernel.name}$", rf"OBJECT .* {kernel.name}\.kd$")
                  if not re.search(s, report, re.MULTILINE)]
    if re.search(r"\bUND\b\s+\S+$", report, re.MULTILINE):
        wrong.append("undefined symbols")
    if wrong:
        raise CompileError(f"the HSACO {path} fails its checks: {'; '.join(wrong)}\n{report}")
    return report


def check_ptx(ptx: str, target: Target, folder: Path) -> str:
    """ptxas's report (registers, spills) on the PTX for the chip; CompileError when it refuses it or spills."""
    source = folder / "device.ptx"
    source.write_text(ptx)
    done = _run([str(tool_path("ptxas")), f"-arch={target.cpu}", "-v", "--warn-on-spills", str(source), "-o", str(folder / "device.cubin")],
                "ptxas", ptx, ".ptx")
    report = done.stderr + done.stdout
    if re.search(r"[1-9]\d* bytes spill", report):
        raise CompileError(f"ptxas: the kernels spill registers\n{report}")
    return report


def build(lowered: str, target: Target, bare: bool) -> tuple[list[tuple[str, str]], DeviceCode]:
    """The texts after the MLIR stages ("device", "llvm-ir", "asm" (AMDGPU assembly or PTX), "hsaco"
    (llvm-readelf's report) or "ptxas" (its report)) and the device code (`bare`: the kernels' memref convention)."""
    kernels, host = launches(lowered), host_buffers(lowered)
    device = device_module(lowered, target)
    llvm_ir = run_tool("mlir-translate", ["--mlir-to-llvmir"], device, stage="mlir-to-llvmir")
    if target.name == "rocdl":
        llvm_ir = with_cov5(llvm_ir)
    with tempfile.TemporaryDirectory(prefix="egglog_tensor-gpu-") as tmp:
        folder = Path(tmp)
        asm, obj = generate(llvm_ir, target, folder)
        if obj is not None:
            hsaco = link_hsaco(obj, folder)
            report = check_hsaco(folder / "device.hsaco", kernels)
            check_hsaco_metadata(report, kernels, bare)
            return [("device", device), ("llvm-ir", llvm_ir), ("asm", asm), ("hsaco", report)], DeviceCode(kernels, hsaco, ".hsaco", bare, host)
        report = check_ptx(asm, target, folder)
        check_ptx_entries(asm, kernels, bare)
        return [("device", device), ("llvm-ir", llvm_ir), ("asm", asm), ("ptxas", report)], DeviceCode(kernels, asm.encode(), ".ptx", bare, host)
