"""The machine the code is compiled for, as one frozen value: the pipeline that lowers for it, its
CPU and LLVM features, SIMD width, caches, threads and the cost model's throughput numbers.

`Target.host()` asks LLVM and sysfs once; a kernel's options carry its Target, and the tiling rules'
candidates, the cost model, the emitter, every lowering stage and LLVM's code generation receive it
as an argument (none asks the host itself). Tests describe other machines with Targets of their
own (`NAMED`), and force the tile policy with its `Tuning`; the Target is part of the compilation
cache's key.
"""

from __future__ import annotations

import functools
import math
import os
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import llvmlite.binding as llvm
import numpy as np

_init_lock = threading.Lock()


def default_threads() -> int:
    """Threads of the cpu-openmp target when not given: OMP_NUM_THREADS if set, else every core this process may use."""
    value = os.environ.get("OMP_NUM_THREADS", "").split(",")[0].strip()
    if value.isdigit() and int(value) > 0:
        return int(value)
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


REFERENCE_THREADS = 2  # the threads Machine()'s numbers were measured with
BANDWIDTH_EXPONENT = 0.65  # copy bandwidth grows as threads ** this (reference machine: 1 thread 16 GB/s, 2 threads 25)


@dataclass(frozen=True)
class Machine:
    """Throughputs the cost model prices with (GFLOP/s = flop/ns, GB/s = byte/ns) and per-kernel overhead,
    for the whole target (all its threads). The defaults are a 2-core AMD EPYC's with both threads
    (REFERENCE_THREADS); `for_threads` scales them to another thread count."""

    gflops: float = 100.0  # sustained vector FLOP rate for fused elementwise work
    gemm_gflops: float = 150.0  # dense matmul throughput
    bandwidth_gbs: float = 39.0  # copy bandwidth (read + write)
    kernel_overhead_ns: float = 500.0  # loop nest setup and the allocation of its result
    # GEMM slowdown when an operand is not row-major (a transposed view or a Fortran-ordered
    # argument): B's tiles are read along rows, A's are broadcast. Measured on one core, float32: B
    # 1.6-1.8x at 64^3-128^3, 0.8-1.2x from 256^3 (its panels are packed); A 1.05-1.2x.
    gemm_strided_b_slowdown: float = 1.6
    gemm_strided_a_slowdown: float = 1.1
    transcendental_flops: float = 100.0  # one log/sin/pow/... (~1 ns per element per core with libmvec)
    inline_math_flops: float = 40.0  # one exp or float32 tanh, inline arithmetic (the math stage): ~0.5 ns per element per core
    reduction_flops: float = 1.0  # one element folded into a reduction (sum, max, argmax...), in elementwise flops
    # A copy that reads or writes across rows (b.T made row-major, a Fortran-ordered argument copied) against
    # a plain copy of its bytes, in the transposes stage's blocks: measured 5-6x at 1024^2 and 4096^2 float32.
    transposed_copy_slowdown: float = 5.0
    # GEMM throughput by size: (n, GFLOP/s) of n^3 float32 products, n ascending, as the cost model prices them (their
    # cache-tile slowdown and a call's overhead taken off: calibrate.py); a product's rate is interpolated in log n
    # between them, n its (m n k)^(1/3), and is the nearest end's outside; none (the default): gemm_gflops at any size
    gemm_sizes: tuple[tuple[int, float], ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "gemm_sizes", tuple((int(n), float(rate)) for n, rate in self.gemm_sizes))  # (JSON: lists)

    def gemm_rate(self, m: int, n: int, k: int) -> float:
        """GFLOP/s of an m x k @ k x n product (`gemm_sizes`, else `gemm_gflops`)."""
        points = self.gemm_sizes
        if not points:
            return self.gemm_gflops
        size = max(m * n * k, 1) ** (1 / 3)
        if size <= points[0][0]:
            return points[0][1]
        for (n0, r0), (n1, r1) in zip(points, points[1:]):
            if size <= n1:
                return r0 * (r1 / r0) ** (math.log(size / n0) / math.log(n1 / n0))
        return points[-1][1]

    def for_threads(self, threads: int) -> Machine:
        """These numbers, measured with REFERENCE_THREADS threads, scaled to `threads`: the FLOP rates in
        proportion, the bandwidth as threads ** BANDWIDTH_EXPONENT (one thread's copy on the reference
        machine: 16 of 25 GB/s); ratios and the per-kernel overhead unchanged."""
        share = threads / REFERENCE_THREADS
        return replace(self, gflops=self.gflops * share, gemm_gflops=self.gemm_gflops * share,
                       bandwidth_gbs=self.bandwidth_gbs * share**BANDWIDTH_EXPONENT,
                       gemm_sizes=tuple((n, rate * share) for n, rate in self.gemm_sizes))

    def kernel(self, flops: float, moved: float, peak: float | None = None) -> float:
        """Roofline time of one kernel in ns."""
        return max(flops / (peak or self.gflops), moved / self.bandwidth_gbs) + self.kernel_overhead_ns

    @classmethod
    def measure(cls, threads: int | None = None, **overrides: Any) -> Machine:
        """This machine's numbers, timed now with the project's own kernels (about two seconds):
        bandwidth, elementwise and GEMM rates, the cost of a transcendental (egglog_tensor/calibrate.py);
        other numbers default or from `overrides`."""
        from .calibrate import measure

        return measure(threads, **overrides)

    @classmethod
    def calibrated(cls, threads: int | None = None) -> Machine:
        """`measure(threads)` once per host and thread count, kept beside the compilation cache."""
        from .calibrate import calibrated

        return calibrated(threads)


def _best_seconds(fn: Any, repeats: int = 7) -> float:
    """Fastest of `repeats` timed calls after a warm-up call."""
    fn()
    best = math.inf
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def copy_bandwidth(threads: int, nbytes: int = 64 * 2**20) -> float:
    """Copy bandwidth in GB/s (bytes read + written): np.copyto of `nbytes` split over `threads`
    threads (NumPy releases the GIL while copying), so every core's share of memory is used."""
    src = np.ones(nbytes // 4, np.float32)
    dst = np.empty_like(src)
    pairs = list(zip(np.array_split(dst, threads), np.array_split(src, threads), strict=True))
    with ThreadPoolExecutor(threads) as pool:
        seconds = _best_seconds(lambda: list(pool.map(lambda p: np.copyto(*p), pairs)))
    return 2 * nbytes / seconds / 1e9


@dataclass(frozen=True)
class Tuning:
    """Settings of the tile policy (lowering/policy.py) a Target carries, its own defaults unless set:
    what a test forces, and what autotuning would choose."""

    matmul_tiles: tuple[int, int, int] | None = None  # cache tiles (TM, TN, TK) of every matmul and batch_matmul, over the term's
    pad_min_work: int = 64**3  # multiply-adds from which a matmul with a partial register tile of rows is padded (`policy.padded_loops`)
    panel_min_work: int = 64**3  # multiply-adds from which a matmul may pack A and B in panels (at 128^3 as fast as blocks)
    serial_below_ns: float = 30_000.0  # a cpu-openmp program the cost model prices below this runs on one thread (`policy.lowering_target`)


@dataclass(frozen=True)
class UnitLimits:
    """What one CU (AMD) or SM (NVIDIA) holds at once, for occupancy (gpu/occupancy.py): its SIMDs (an
    NVIDIA SM counted as one SIMD of 32 lanes with all its registers), 32-bit registers per SIMD lane,
    the allocation granule and most registers of a thread, waves (warps) per SIMD, shared memory (LDS)
    per unit and reserved per block, blocks per unit, and the latency of a global load (ns)."""

    simds: int = 1
    lane_registers: int = 2048  # NVIDIA: 65536 registers per SM / 32 lanes
    granule: int = 8  # NVIDIA: 256 registers per warp
    max_registers: int = 255
    max_waves: int = 64
    shared: int = 164 * 1024
    shared_reserved: int = 1024  # NVIDIA sm_80 on: 1 KiB of each block's shared memory is the system's
    max_blocks: int = 32
    latency_ns: float = 500.0


@dataclass(frozen=True)
class Device:
    """A GPU a Target compiles for (egglog_tensor/gpu/targets.py): its MLIR backend ("rocdl": AMD,
    "nvvm": NVIDIA), chip ("gfx942", "sm_90"), compute units (AMD CUs / NVIDIA SMs), wave (warp)
    size, shared memory (LDS) a block may use in bytes, memory bandwidth (GB/s), float32 GFLOP/s and
    the float64 rate as a fraction of it (1/2 on datacenter parts, 1/32-1/64 on consumer GPUs), and what
    one CU / SM holds at once (`limits`: registers, waves, shared memory, global load latency)."""

    backend: str
    chip: str
    units: int
    wave: int
    shared: int
    bandwidth_gbs: float
    gflops: float
    fp64_rate: float = 1.0
    limits: UnitLimits = field(default_factory=UnitLimits)

    def flops_weight(self, dtype: str) -> float:
        """One flop of `dtype` in float32 flops at the device's FLOP rate (float64: 1 / fp64_rate)."""
        return 1.0 / self.fp64_rate if dtype == "float64" else 1.0


@dataclass(frozen=True)
class Target:
    """What code is compiled for: the pipeline (`name`: "cpu", or "cpu-openmp" with `threads` threads),
    LLVM's CPU name and feature string, the SIMD register width the code uses (bytes), per-core data
    cache sizes (bytes), the cache line, L2's ways, the shared last-level cache, the cost model's
    throughput numbers (`machine`) and the tile policy's settings (`tuning`)."""

    name: str = "cpu"
    cpu: str = "generic"
    features: str = ""  # LLVM's: "+avx2,+fma,-avx512f,..."
    simd: int = 32
    l1: int = 32 * 1024
    l2: int = 1024 * 1024
    line: int = 64
    l2_ways: int = 16
    l3: int = 32 * 1024 * 1024
    threads: int = 1
    machine: Machine = field(default_factory=Machine)
    tuning: Tuning = field(default_factory=Tuning)
    device: Device | None = None  # a GPU target's device ("rocdl:gfx942", "nvvm:sm_90"): `cpu` is then its chip

    @property
    def label(self) -> str:
        """The pipeline, its threads and the CPU, for reports: "cpu-openmp (4 threads) on znver4"."""
        threads = f" ({self.threads} threads)" if self.name == "cpu-openmp" else ""
        return f"{self.name}{threads} on {self.cpu}"

    def has(self, feature: str) -> bool:
        """Whether the CPU has an LLVM feature ("avx512f", "avx2", ...)."""
        return f"+{feature}" in self.features.split(",")

    def missing_on(self, host: Target) -> list[str]:
        """The instruction-set features this target's code may use that `host` lacks (tuning flags aside)."""
        return [f[1:] for f in self.features.split(",") if f.startswith("+") and f not in _TUNING and not host.has(f[1:])]

    @staticmethod
    @functools.cache
    def host() -> Target:
        """This machine: LLVM's host CPU name and features (AVX-512 at full zmm width), caches from sysfs."""
        _, cpu, features = llvm_host()
        flags = features.split(",")
        simd = 64 if "+avx512f" in flags else 32 if "+avx2" in flags or "+avx" in flags else 16
        return read_caches(Target(cpu=cpu, features=features, simd=simd))


_TUNING = {"+prefer-256-bit"}  # LLVM features that tune code generation, not instructions the CPU needs


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
    return replace(target, l1=sizes.get(1, target.l1), l2=sizes.get(2, target.l2), line=line,
                   l2_ways=ways.get(2, target.l2_ways), l3=sizes.get(3, target.l3))


# Machines the tests describe (the tile policy and rules for a CPU other than the host's).
NAMED = {
    "avx512": Target(cpu="skylake-avx512", features="+avx512f,+avx2,+avx,+fma,-prefer-256-bit", simd=64,
                     l1=48 * 1024, l2=2 * 1024**2, l2_ways=16, l3=32 * 1024**2),
    "avx2": Target(cpu="znver2", features="+avx2,+avx,+fma,-avx512f", simd=32,
                   l1=32 * 1024, l2=512 * 1024, l2_ways=8, l3=16 * 1024**2),
}
