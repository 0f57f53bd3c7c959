"""The compiled kernels' interfaces checked against their launches: each kernel's parameters as the
launcher will pass them (egglog_tensor/gpu/signature.py) and its launch's block.

AMD: the HSACO's AMDGPU metadata note (llvm-readelf --notes): the explicit arguments' offsets and
sizes; `.kernarg_segment_size` their natural-aligned size, plus, when the code reads them, the hidden
arguments code object v5 appends (256 bytes from an 8-aligned offset; the runtime fills them), rounded
up to 4 (AMDGPUSubtarget::getKernArgSegmentSize); `.max_flat_workgroup_size` at least the block's
threads and `.reqd_workgroup_size`, when emitted, the block. NVIDIA: each PTX `.entry`'s parameters
(count and sizes) and `.maxntid` / `.reqntid`, when emitted. A mismatch is CompileError naming the kernel.
"""

from __future__ import annotations

import math
import re
from typing import TYPE_CHECKING

from ...errors import CompileError
from ...gpu.signature import offsets, parameters

if TYPE_CHECKING:
    from .codegen import DeviceKernel

COV5_HIDDEN = 256  # bytes of code object v5's hidden kernel arguments
_PTX_BYTES = {"8": 1, "16": 2, "32": 4, "64": 8}


def _amdgpu_kernels(report: str) -> dict[str, str]:
    """Each kernel's entry of the metadata note's `amdhsa.kernels` list, by name; CompileError without the note."""
    if "amdhsa.kernels:\n" not in report:
        raise CompileError(f"the HSACO has no AMDGPU metadata note listing its kernels\n{report}")
    start = report.index("amdhsa.kernels:\n") + len("amdhsa.kernels:\n")
    end = re.compile(r"^\S", re.MULTILINE).search(report, start)
    listing = report[start: None if end is None else end.start()]
    entries = ["    " + entry for entry in re.split(r"^  - ", listing, flags=re.MULTILINE)[1:]]
    return {re.search(r"^    \.name:\s+(\S+)$", e, re.MULTILINE)[1]: e for e in entries}  # type: ignore[index]


def _field(entry: str, name: str) -> str | None:
    match = re.search(rf"^    \.{name}:[ \t]*(\S+)$", entry, re.MULTILINE)
    return None if match is None else match[1]


def _hsaco_problems(kernel: DeviceKernel, entry: str, bare: bool) -> list[str]:
    """What in one kernel's metadata entry disagrees with its launch."""
    params = parameters(kernel.args, bare)
    where, explicit = offsets(params)
    section = re.search(r"^    \.args:\n((?:^      .*\n)*)", entry, re.MULTILINE)
    args = [dict(re.findall(r"\.(\w+):\s+(\S+)", a)) for a in re.split(r"^      - ", section[1] if section else "", flags=re.MULTILINE)[1:]]
    given = [(int(a["offset"]), int(a["size"])) for a in args if not a["value_kind"].startswith("hidden_")]
    wrong = []
    if given != [(at, p.size) for at, p in zip(where, params, strict=True)]:
        wrong.append(f"its arguments (offset, size) are {given}, its launch passes {[(at, p.size) for at, p in zip(where, params)]} "
                     f"({', '.join(p.what for p in params)})")
    hidden = any(a["value_kind"].startswith("hidden_") for a in args)
    expected = -(-((-(-explicit // 8) * 8 + COV5_HIDDEN) if hidden else explicit) // 4) * 4
    if (size := int(_field(entry, "kernarg_segment_size") or -1)) != expected:
        wrong.append(f".kernarg_segment_size is {size}, its arguments take {expected} bytes"
                     f"{' (with the 256 bytes of hidden arguments)' if hidden else ''}")
    threads = math.prod(kernel.block)
    if (most := int(_field(entry, "max_flat_workgroup_size") or 0)) < threads:
        wrong.append(f".max_flat_workgroup_size is {most}, its launch's block has {threads} threads")
    required = re.search(r"^    \.reqd_workgroup_size:\s*\n((?:^\s+- \d+\n){3})", entry, re.MULTILINE)
    if required and (sizes := tuple(map(int, re.findall(r"\d+", required[1])))) != kernel.block:
        wrong.append(f".reqd_workgroup_size is {sizes}, its launch's block {kernel.block}")
    return wrong


def check_hsaco_metadata(report: str, kernels: tuple[DeviceKernel, ...], bare: bool) -> None:
    """CompileError unless each kernel's metadata in llvm-readelf's `report` agrees with its launch
    (a program with no kernel, e.g. of empty arrays, has no metadata note to check)."""
    if not kernels:
        return
    entries = _amdgpu_kernels(report)
    for kernel in kernels:
        if kernel.name not in entries:
            raise CompileError(f"the HSACO's metadata has no kernel {kernel.name}")
        if wrong := _hsaco_problems(kernel, entries[kernel.name], bare):
            raise CompileError(f"kernel {kernel.name} ({kernel}): its HSACO metadata disagrees with its launch: {'; '.join(wrong)}")


def _ptx_problems(kernel: DeviceKernel, ptx: str, bare: bool) -> list[str]:
    """What in one kernel's PTX entry disagrees with its launch."""
    entry = re.search(rf"^\.visible \.entry {kernel.name}\(([^)]*)\)\s*((?:\.\w+ [\d, ]+\s*)*)", ptx, re.MULTILINE)
    if entry is None:
        return ["the PTX has no .entry for it"]
    sizes = [_PTX_BYTES[m] for m in re.findall(r"\.param \.[a-z](\d+)", entry[1])]
    expected = [p.size for p in parameters(kernel.args, bare)]
    wrong = [] if sizes == expected else [f"its .param sizes are {sizes}, its launch passes {expected}"]
    directives = {name: tuple(map(int, value.split(","))) for name, value in re.findall(r"\.(maxntid|reqntid) ([\d, ]+)", entry[2])}
    if "maxntid" in directives and math.prod(directives["maxntid"]) < math.prod(kernel.block):
        wrong.append(f".maxntid {directives['maxntid']} admits fewer threads than its launch's block {kernel.block}")
    if "reqntid" in directives and directives["reqntid"] + (1,) * (3 - len(directives["reqntid"])) != kernel.block:
        wrong.append(f".reqntid {directives['reqntid']} is not its launch's block {kernel.block}")
    return wrong


def check_ptx_entries(ptx: str, kernels: tuple[DeviceKernel, ...], bare: bool) -> None:
    """CompileError unless each kernel's PTX `.entry` takes its launch's parameters and admits its block."""
    for kernel in kernels:
        if wrong := _ptx_problems(kernel, ptx, bare):
            raise CompileError(f"kernel {kernel.name} ({kernel}): its PTX entry disagrees with its launch: {'; '.join(wrong)}")
