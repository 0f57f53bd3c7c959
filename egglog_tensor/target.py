"""The machine the code is compiled for, as one frozen value: its CPU and LLVM features, SIMD
width and caches. `Target.host()` asks LLVM and sysfs once; the tile policy, the tiling rules'
candidates, the cost model, the vector-math stages and LLVM's code generation all read their facts
from a Target, and tests describe another machine with a Target of its own (`NAMED`)."""

from __future__ import annotations

import functools
import threading
from dataclasses import dataclass
from pathlib import Path

import llvmlite.binding as llvm

_init_lock = threading.Lock()


@dataclass(frozen=True)
class Target:
    """A CPU: LLVM's name and feature string for it, the SIMD register width the code uses (bytes),
    per-core data cache sizes (bytes), the cache line, L2's ways and the shared last-level cache."""

    cpu: str = "generic"
    features: str = ""  # LLVM's: "+avx2,+fma,-avx512f,..."
    simd: int = 32
    l1: int = 32 * 1024
    l2: int = 1024 * 1024
    line: int = 64
    l2_ways: int = 16
    l3: int = 32 * 1024 * 1024

    def has(self, feature: str) -> bool:
        """Whether the CPU has an LLVM feature ("avx512f", "avx2", ...)."""
        return f"+{feature}" in self.features.split(",")

    @staticmethod
    @functools.cache
    def host() -> Target:
        """This machine: LLVM's host CPU name and features (AVX-512 at full zmm width), caches from sysfs."""
        _, cpu, features = llvm_host()
        flags = features.split(",")
        simd = 64 if "+avx512f" in flags else 32 if "+avx2" in flags or "+avx" in flags else 16
        return read_caches(Target(cpu=cpu, features=features, simd=simd))


@functools.cache
def llvm_host() -> tuple[llvm.Target, str, str]:
    """Initialize LLVM's native target once; return it with the host CPU's name and features."""
    with _init_lock:
        llvm.initialize_native_target()
        llvm.initialize_native_asmprinter()
        features = llvm.get_host_cpu_features().flatten()
        if "+avx512f" in features.split(","):
            # LLVM tunes most AVX-512 CPUs to prefer 256-bit vectors; we want the full zmm width.
            features += ",-prefer-256-bit"
        return llvm.Target.from_default_triple(), llvm.get_host_cpu_name(), features


def _read_size(text: str) -> int:
    text = text.strip().upper()
    scale = {"K": 1024, "M": 1024**2, "G": 1024**3}.get(text[-1:], 1)
    return int(text.rstrip("KMG")) * scale


def read_caches(target: Target, root: str = "/sys/devices/system/cpu/cpu0/cache") -> Target:
    """target with the L1 data, L2 and L3 sizes, line and L2's ways sysfs gives under root (the
    target's own where it gives none)."""
    sizes: dict[int, int] = {}
    ways: dict[int, int] = {}
    line = target.line
    base = Path(root)
    if base.is_dir():
        for index in sorted(base.glob("index*")):
            try:
                kind = (index / "type").read_text().strip()
                level = int((index / "level").read_text())
                if kind in ("Data", "Unified") and level in (1, 2, 3):
                    sizes.setdefault(level, _read_size((index / "size").read_text()))
                    line = int((index / "coherency_line_size").read_text())
                    ways.setdefault(level, int((index / "ways_of_associativity").read_text()))
            except (OSError, ValueError):
                continue
    return Target(target.cpu, target.features, target.simd, sizes.get(1, target.l1), sizes.get(2, target.l2), line,
                  ways.get(2, target.l2_ways), sizes.get(3, target.l3))


# Machines the tests describe (the tile policy and rules for a CPU other than the host's).
NAMED = {
    "avx512": Target(cpu="skylake-avx512", features="+avx512f,+avx2,+avx,+fma,-prefer-256-bit", simd=64,
                     l1=48 * 1024, l2=2 * 1024**2, l2_ways=16, l3=32 * 1024**2),
    "avx2": Target(cpu="znver2", features="+avx2,+avx,+fma,-avx512f", simd=32,
                   l1=32 * 1024, l2=512 * 1024, l2_ways=8, l3=16 * 1024**2),
}
