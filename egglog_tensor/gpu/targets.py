"""GPU targets by name: "rocdl:<gfx chip>" (AMD, through MLIR's ROCDL dialect) and "nvvm:<sm name>"
(NVIDIA, through NVVM), as Target values carrying the Device and the cost model's numbers.

A few chips have their datasheet numbers (`KNOWN`); any other well-formed chip name gets its
vendor's defaults (wave size by AMD generation: 64 on gfx9 and older, 32 from gfx10 on).
"""

from __future__ import annotations

import re
from dataclasses import replace

from ..target import Device, Machine, Target, UnitLimits

BACKENDS = ("rocdl", "nvvm")
_CHIP = {"rocdl": re.compile(r"gfx(?:[6-9]|1[0-2])[0-9a-f]{2}"), "nvvm": re.compile(r"sm_([5-9][0-9]|1[0-2][0-9])[af]?")}
_EXAMPLE = {"rocdl": "gfx942, gfx90a, gfx1100", "nvvm": "sm_80, sm_90, sm_90a, sm_120"}

KB = 1024
# (CUs or SMs, wave, shared bytes per block, GB/s, float32 GFLOP/s (vector, not matrix units), float64 rate / float32's)
KNOWN: dict[str, tuple[int, int, int, float, float, float]] = {
    "gfx90a": (110, 64, 64 * KB, 1638.0, 23_900.0, 1.0),  # MI250X, one of its two dies (FP64 vector = FP32 vector)
    "gfx942": (304, 64, 64 * KB, 5300.0, 81_700.0, 1 / 2),  # MI300X
    "gfx1100": (96, 32, 64 * KB, 960.0, 30_700.0, 1 / 32),  # RX 7900 XTX (single issue)
    "sm_80": (108, 32, 163 * KB, 2039.0, 19_500.0, 1 / 2),  # A100 SXM 80 GB
    "sm_89": (128, 32, 99 * KB, 1008.0, 82_600.0, 1 / 64),  # RTX 4090
    "sm_90": (132, 32, 227 * KB, 3350.0, 67_000.0, 1 / 2),  # H100 SXM
    "sm_90a": (132, 32, 227 * KB, 3350.0, 67_000.0, 1 / 2),
    "sm_100": (148, 32, 227 * KB, 8000.0, 80_000.0, 1 / 2),  # B200
}
# What a CU / SM holds (UnitLimits, for occupancy). NVIDIA: the CUDA Programming Guide's per-compute-capability
# table (64K registers per SM, 255 a thread, allocated by 256 a warp; warps, blocks and shared memory per SM,
# 1 KiB of it reserved per block). AMD: LLVM's AMDGPU occupancy rules (AMDGPUBaseInfo: VGPRs per SIMD lane and
# their granule, waves per SIMD; its tests' "; Occupancy" values) and the ISA guides (4 SIMDs a CU on gfx9, 2 on
# gfx11 in CU mode, 64 KiB LDS a CU; 256 VGPRs a thread: the accumulation registers of gfx90a/gfx942 are not used).
# latency_ns: a global load's round trip to memory, approximate (public pointer-chasing microbenchmarks), not measured here.
_NVIDIA = UnitLimits(simds=1, lane_registers=2048, granule=8, max_registers=255, max_waves=64, shared=228 * KB,
                     shared_reserved=KB, max_blocks=32, latency_ns=500.0)
_CDNA = UnitLimits(simds=4, lane_registers=512, granule=8, max_registers=256, max_waves=8, shared=64 * KB,
                   shared_reserved=0, max_blocks=32, latency_ns=700.0)
_RDNA3 = UnitLimits(simds=2, lane_registers=1536, granule=24, max_registers=256, max_waves=16, shared=64 * KB,
                    shared_reserved=0, max_blocks=32, latency_ns=600.0)
LIMITS: dict[str, UnitLimits] = {
    "gfx90a": _CDNA, "gfx942": _CDNA, "gfx1100": _RDNA3,
    "sm_80": replace(_NVIDIA, shared=164 * KB), "sm_89": replace(_NVIDIA, max_waves=48, shared=100 * KB, max_blocks=24, latency_ns=550.0),
    "sm_90": _NVIDIA, "sm_90a": _NVIDIA, "sm_100": _NVIDIA,
}
_DEFAULT = {"rocdl": (64, 64, 64 * KB, 1000.0, 20_000.0, 1 / 2), "nvvm": (64, 32, 48 * KB, 1000.0, 20_000.0, 1 / 2)}
# float32 math the device computes in float32 (lowering/gpu/devmath.py: exp and tanh as the CPU's, FLOAT32); the
# other float32 functions run its float64 code, priced at the float64 rate.
FLOAT32_MATH = frozenset({"exp", "tanh", "log", "sin", "cos", "sqrt"})
LAUNCH_NS = 4000.0  # a kernel launch and its synchronization, as the cost model's per-kernel overhead
# One exp/tanh/sqrt/... in flops at the device's FLOP rate: the math stage's inline exp is ~26 instructions
# and float32 tanh ~40 (no special-function unit used), where the rate counts an FMA as two flops.
TRANSCENDENTAL_FLOPS = 32.0
# A transposed or Fortran-ordered operand of a matmul: the tile copies into workgroup memory
# (lowering/gpu/matmul.py) read along A's and B's rows, so either one stored by columns makes
# consecutive threads read a column apart (uncoalesced): its global traffic costs 2x. Unmeasured
# until a GPU is at hand.
STRIDED_A, STRIDED_B = 2.0, 2.0


def is_gpu_name(name: str) -> bool:
    """Whether a target name asks for a GPU ("rocdl:..." or "nvvm:...")."""
    return name.split(":", 1)[0] in BACKENDS


def gpu_target(name: str) -> Target:
    """The Target of "rocdl:<chip>" or "nvvm:<chip>"; ValueError naming what was wrong otherwise."""
    backend, _, chip = name.partition(":")
    if backend not in BACKENDS:
        raise ValueError(f"unknown GPU backend {backend!r} in target {name!r}; GPU targets are rocdl:<chip> or nvvm:<chip>")
    if not _CHIP[backend].fullmatch(chip):
        raise ValueError(f"target {name!r}: {chip!r} is not a {'AMD gfx' if backend == 'rocdl' else 'NVIDIA sm_'} chip name "
                         f"(e.g. {_EXAMPLE[backend]})")
    units, wave, shared, bandwidth, gflops, fp64 = KNOWN.get(chip) or _defaults(backend, chip)
    device = Device(backend, chip, units, wave, shared, bandwidth, gflops, fp64, LIMITS.get(chip) or _default_limits(backend, chip))
    machine = Machine(gflops=gflops, gemm_gflops=gflops, bandwidth_gbs=bandwidth, kernel_overhead_ns=LAUNCH_NS,
                      transcendental_flops=TRANSCENDENTAL_FLOPS, inline_math_flops=TRANSCENDENTAL_FLOPS,
                      gemm_strided_a_slowdown=STRIDED_A, gemm_strided_b_slowdown=STRIDED_B)
    return replace(Target(), name=backend, cpu=chip, features="", machine=machine, device=device)


def _defaults(backend: str, chip: str) -> tuple[int, int, int, float, float, float]:
    """A chip not in KNOWN: its vendor's defaults (AMD: wave 32 and float64 at 1/32 from gfx10 on, the consumer
    RDNA parts; NVIDIA: float64 at 1/64 but on sm_x0 up to sm_100, the datacenter parts)."""
    units, wave, shared, bandwidth, gflops, fp64 = _DEFAULT[backend]
    if backend == "rocdl" and int(chip[3:-2]) >= 10:
        wave, fp64 = 32, 1 / 32
    if backend == "nvvm" and not _datacenter(chip):
        fp64 = 1 / 64
    return units, wave, shared, bandwidth, gflops, fp64


def _default_limits(backend: str, chip: str) -> UnitLimits:
    """A chip not in LIMITS: its family's (AMD gfx9 before gfx90a: 256 VGPRs a lane by 4, 10 waves a SIMD; gfx10
    and later: 2 SIMDs of 1024 by 16 (wave32), 16 waves; NVIDIA consumer parts: 48 warps and 100 KiB an SM)."""
    if backend == "nvvm":
        return _NVIDIA if _datacenter(chip) else LIMITS["sm_89"]
    if int(chip[3:-2]) >= 10:
        return replace(_RDNA3, lane_registers=1024, granule=16)
    return replace(_CDNA, lane_registers=256, granule=4, max_waves=10)


def _datacenter(chip: str) -> bool:
    """Whether an NVIDIA sm name is a datacenter part (sm_x0 up to sm_100)."""
    number = chip[3:].rstrip("af")
    return number.endswith("0") and int(number) <= 100
