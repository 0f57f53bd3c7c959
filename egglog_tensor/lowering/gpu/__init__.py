"""The stages of a GPU target's pipeline (rocdl:<chip>, nvvm:<chip>), beside the CPU's of lowering/stages/:

    destinations (passes)    each result computed in its output argument (no copy after the kernels)
    gpu-tile     tile.py     each linalg op tiled over blocks and threads (scf.forall, GPU mappings), fills fused
    gpu-bufferize tile.py    tensors -> buffers (one-shot bufferization)
    gpu-reduce   reduce.py   reductions over long rows split across a block (workgroup memory, barriers);
                 matmul.py   matmuls tiled through workgroup memory (block, k and register tiles);
                 rows.py     softmax/layernorm-like row groups fused: one launch, a block per row
    gpu-map      launch.py   each forall nest as a gpu.launch (transform dialect), linalg bodies as loops
    gpu-outline  launch.py   launches' bodies outlined as kernels (gpu.module / gpu.func)
    math         devmath.py  every math function inline on the device code (no device math library): exp and
                             float32 tanh as the CPU's (../stages/math.py), float32 log/sin/cos in float32, the rest in float64
    noalias      device.py   kernel memref arguments marked noalias (bare pointers); math the device cannot compute refused
    rocdl / nvvm device.py   the device code to the ROCDL or NVVM and LLVM dialects (one pointer per memref where
                             every kernel's arguments are static and contiguous, else memref descriptors)

What follows the MLIR stages (device module, LLVM IR, code generation, link and checks) is codegen.py.
"""

from __future__ import annotations

from ...target import Target
from ..stages.stage import Passes, Stage
from .codegen import DeviceCode, DeviceKernel
from .device import Convention, Convert, NoAlias
from .devmath import DeviceMath
from .host import HostBuffers
from .launch import GpuMap, GpuOutline
from .reduce import GpuReduce
from .tile import GpuBufferize, GpuTile

RECORDS = {record.__name__: record for record in (Convention, DeviceCode, DeviceKernel, HostBuffers)}  # (the cache stores them by name)

DESTINATIONS = Passes("destinations", ("eliminate-empty-tensors", "empty-tensor-to-alloc-tensor"))


def gpu_stages(target: Target) -> tuple[Stage, ...]:
    """The stages of a GPU target's pipeline (`target.device` set)."""
    assert target.device is not None
    return (DESTINATIONS, GpuTile(target.device), GpuBufferize(), GpuReduce(target.device), GpuMap(), GpuOutline(), DeviceMath(target), NoAlias(target),
            Convert(target))
