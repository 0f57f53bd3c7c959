"""The GPU performance targets (issue 27), measured where a GPU and its driver are present.

    python benchmarks/gpu.py                       # nvvm:sm_90; --target rocdl:gfx942 (etc.) for AMD
    python benchmarks/gpu.py --quick               # run.py's sizes divided by 4

For each kernel of run.py's memory-bound workloads (ew_chain, gelu, softmax, layernorm) and a 4096^2
float32 matmul: the cost model's estimate (the compilation's optimized cost, priced with the target's
bandwidth and FLOP rate) beside the bound (compulsory bytes / the device's bandwidth, or 2n^3 / its
FLOP rate). With a device: the measured time of the launches alone (inputs and outputs already on the
device: CuPy arrays if CuPy is installed, else buffers made with the driver), its share of the
device's bandwidth (target: >= 70%), and the peers installed: CuPy running the same NumPy code (and
its vendor BLAS for the matmul: target >= 50% of it), PyTorch's softmax / layer_norm, JAX's jit of
the same code (softmax and layernorm target: faster than the best of PyTorch and JAX).
Without one, the estimates and the reason no device was found.
"""

from __future__ import annotations

import argparse
import types
from collections.abc import Callable
from importlib.util import find_spec
from typing import Any

import numpy as np
from run import jax_system, median_ms, workloads

import egglog_tensor as et
from egglog_tensor.gpu.launch import DeviceBuffer, launcher

MEMORY_BOUND = ("ew_chain", "gelu", "softmax", "layernorm")


def matmul(a, b):
    return a @ b


def on_device(backend: str, array: np.ndarray) -> Any:
    """A device copy of `array`: a CuPy array if CuPy is installed, else a DeviceBuffer."""
    if find_spec("cupy"):
        import cupy

        return cupy.asarray(array)
    return DeviceBuffer(backend, array)


def peers(name: str, fn: Callable[..., Any], inputs: tuple) -> dict[str, Callable[[], Any]]:
    """The installed peers' runners (each synchronizing): CuPy on the same code, PyTorch (softmax, layernorm), JAX's jit."""
    found: dict[str, Callable[[], Any]] = {}
    if find_spec("cupy"):
        import cupy

        same = types.FunctionType(fn.__code__, {**fn.__globals__, "np": cupy}, fn.__name__)
        arrays = [cupy.asarray(a) for a in inputs]
        found["cupy (BLAS)" if name == "matmul" else "cupy"] = lambda: (same(*arrays), cupy.cuda.Device().synchronize())
    if find_spec("torch") and name in ("softmax", "layernorm"):
        import torch

        if torch.cuda.is_available():
            x, *rest = (torch.from_numpy(a).cuda() for a in inputs)
            run = ((lambda: torch.softmax(x, dim=1)) if name == "softmax"
                   else (lambda: torch.nn.functional.layer_norm(x, x.shape[1:], weight=rest[0], eps=1e-5)))
            found["torch"] = lambda: (run(), torch.cuda.synchronize())
    if find_spec("jax"):
        import jax

        if jax.default_backend() == "gpu":
            found["jax"] = jax_system(fn, inputs)
    return found


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--target", default="nvvm:sm_90")
    parser.add_argument("--quick", action="store_true", help="run.py's sizes divided by 4")
    args = parser.parse_args()
    scale = 4 if args.quick else 1
    rng = np.random.default_rng(0)
    cases = [(w.fn.__name__, w.fn, w.make(rng)) for w in workloads(scale) if w.fn.__name__ in MEMORY_BOUND]
    n = 4096 // scale
    cases.append(("matmul", matmul, (rng.standard_normal((n, n), np.float32), rng.standard_normal((n, n), np.float32))))
    device = et.kernel(matmul, target=args.target).options.target.device
    assert device is not None
    print(f"{args.target}: {device.bandwidth_gbs:.0f} GB/s, {device.gflops:.0f} GFLOP/s float32 (the cost model's numbers)")
    print(f"{'kernel':10s} {'estimate us':>12s} {'bound us':>10s} {'measured us':>12s} {'of bound':>9s}  peers (us)")
    missing = None
    for name, fn, inputs in cases:
        try:
            comp = et.kernel(fn, target=args.target).inspect(*inputs)
        except et.UnsupportedError as error:
            print(f"{name:10s} unsupported on {args.target}: {error}")
            continue
        out = np.empty(comp.outputs[0].shape, comp.outputs[0].dtype)
        bytes_moved = sum(a.nbytes for a in inputs) + out.nbytes
        bound_ns = 2.0 * n**3 / device.gflops if name == "matmul" else bytes_moved / device.bandwidth_gbs
        line = f"{name:10s} {comp.report.cost_after / 1e3:12.1f} {bound_ns / 1e3:10.1f}"
        try:
            run = launcher(comp)
        except et.DeviceError as error:
            missing = error
            print(f"{line} {'-':>12s} {'-':>9s}  (no device)")
            continue
        arrays = [on_device(args.target.split(":")[0], a) for a in (*inputs, out)]
        measured_ms = median_ms(lambda: run(*arrays))
        timed = {peer: median_ms(runner) * 1e3 for peer, runner in peers(name, fn, inputs).items()}
        print(f"{line} {measured_ms * 1e3:12.1f} {bound_ns / 1e6 / measured_ms:9.0%}  "
              + ", ".join(f"{peer} {us:.1f}" for peer, us in timed.items()))
    if missing is not None:
        print(f"\nno device measured: {missing}")


if __name__ == "__main__":
    main()
