"""How many blocks of a kernel one CU / SM holds at once, from the Target's UnitLimits and the kernel's
threads, registers a thread and shared memory a block, and how much of a global load's latency they hide.

Registers are allocated per wave in the unit's granule; a unit holds the blocks its registers, its shared
memory, its wave slots and its block slots all admit (NVIDIA's occupancy calculator; LLVM AMDGPU's
occupancy, a block's waves spread over the CU's SIMDs). A kernel that waits at a barrier for its global
loads each step (a tiled matmul's k loop, no double buffering) keeps its unit busy only while another
resident block computes: `hidden` is the busy share of a step.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..target import Device


@dataclass(frozen=True)
class Occupancy:
    """Blocks (and their waves) resident on one CU / SM, what bounds them ("registers", "shared memory",
    "waves", "blocks"), and the registers a thread is allocated (rounded up to the granule)."""

    blocks: int
    waves: int
    limit: str
    registers: int

    def describe(self, device: Device) -> str:
        """"1 block (8 waves) per SM, bound by registers"."""
        unit = "SM" if device.backend == "nvvm" else "CU"
        return f"{self.blocks} block{'s' * (self.blocks != 1)} ({self.waves} waves) per {unit}, bound by {self.limit}"


def occupancy(device: Device, threads: int, registers: int, shared: int) -> Occupancy:
    """The blocks of `threads` threads using `registers` a thread and `shared` bytes of workgroup memory
    one unit of `device` holds; 0 blocks ("registers") beyond a thread's most registers (it would spill)."""
    limits = device.limits
    allocated = -(-registers // limits.granule) * limits.granule
    if registers > limits.max_registers:
        return Occupancy(0, 0, "registers", allocated)
    waves = -(-threads // device.wave)
    bounds = {"registers": limits.lane_registers // allocated * limits.simds // waves,
              "shared memory": limits.shared // (shared + limits.shared_reserved) if shared else limits.max_blocks,
              "waves": limits.max_waves * limits.simds // waves,
              "blocks": limits.max_blocks}
    limit = min(bounds, key=bounds.__getitem__)
    return Occupancy(bounds[limit], bounds[limit] * waves, limit, allocated)


def hidden(device: Device, resident: int, step_ns: float) -> float:
    """The busy share of a unit running `resident` blocks that each compute `step_ns` between waits for
    global loads: while one waits (the device's latency), the others compute."""
    return min(1.0, resident * step_ns / (step_ns + device.limits.latency_ns))
