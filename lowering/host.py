"""What the lowering knows of the host CPU, asked of LLVM once: its target, name and features."""

from __future__ import annotations

import functools
import threading

import llvmlite.binding as llvm

_init_lock = threading.Lock()


@functools.cache
def host_target() -> tuple[llvm.Target, str, str]:
    """Initialize the native target once; return it with the host CPU name and features."""
    with _init_lock:
        llvm.initialize_native_target()
        llvm.initialize_native_asmprinter()
        features = llvm.get_host_cpu_features().flatten()
        if "+avx512f" in features.split(","):
            # LLVM tunes most AVX-512 CPUs to prefer 256-bit vectors; we want the full zmm width.
            features += ",-prefer-256-bit"
        return llvm.Target.from_default_triple(), llvm.get_host_cpu_name(), features


def host_has(feature: str) -> bool:
    """Whether the host CPU has an LLVM feature ("avx512f", "avx2", ...)."""
    return f"+{feature}" in host_target()[2].split(",")


def simd_bytes() -> int:
    """The width of the host's widest vector registers the code uses: 64 (AVX-512), 32 (AVX), 16."""
    if host_has("avx512f"):
        return 64
    if host_has("avx2") or host_has("avx"):
        return 32
    return 16
