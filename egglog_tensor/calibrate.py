"""The cost model's numbers measured on this machine with the project's own kernels
(`et.Machine.measure()`), and kept per host (`et.Machine.calibrated()`).

Each number is timed on a kernel that isolates it, compiled with the default numbers and the
target's threads: copy bandwidth (np.copyto over the threads), the fused elementwise rate (a chain
of multiply-adds on an array in L2, so memory is not what is timed), the inline math cost (an
exp over the same array), libm's (a log), a reduction's (a sum of it), each as flop-equivalents of
that rate with a call's overhead (a 16-element call) taken off, the GEMM rate (a 1024^3 float32
matmul) and its slowdowns on transposed operands, the GEMM rate by size (64^3, 256^3, 1024^3: each as the cost
model prices it, its cache-tile slowdown and the call's overhead taken off), and a transposed copy against a plain one
(1024^2 float32). About three seconds; `calibrated` stores the result in the compilation cache's folder, keyed
by CPU, features and threads, and measures again only when that is gone.
"""

from __future__ import annotations

from dataclasses import asdict, replace
from typing import Any

import numpy as np

from .target import Machine, Target, copy_bandwidth

CHAIN = 16  # multiply-adds per element of the elementwise kernel
IN_CACHE = 64 * 1024  # float32 elements: 256 KiB, in L2
GEMM_SIZES = (64, 256, 1024)  # n of the n^3 float32 products timed for Machine.gemm_sizes


def _rate(fn: Any, args: tuple, target: Target, **options: Any) -> float:
    """ns per call of `fn` compiled for `target` (uncached: calibration must measure this build)."""
    from .kernel import kernel

    return kernel(fn, target=target, cache=False, **options).measure(*args, min_time=0.3).measured_ns


def _priced_gemm_rate(n: int, ns: float, call_ns: float, target: Target) -> float:
    """The GFLOP/s at which the cost model, dividing by its cache-tile slowdown, prices an n^3 float32 product at the
    `ns` it was measured to take (a call's `call_ns` taken off, at most half of it)."""
    from .cost import tile_slowdown
    from .lowering.policy import choose_tiles

    loops = (n, n, n)
    slowdown = tile_slowdown(loops, choose_tiles("linalg.matmul", loops, 4, target).tiles, 4, target)
    return 2.0 * n**3 * slowdown / max(ns - call_ns, ns / 2)


def _chain(x):
    for _ in range(CHAIN):
        x = x * 0.999 + 0.001
    return x


def measure(threads: int | None = None, **overrides: Any) -> Machine:
    """This machine's numbers (module docstring), for a `cpu-openmp` target of `threads` threads (default: the host's)."""
    from .lowering.pipelines import resolve_target

    target = resolve_target("cpu-openmp" if (threads or 2) > 1 else "cpu", threads)
    x = np.linspace(-1.0, 1.0, IN_CACHE * target.threads, dtype=np.float32)
    a = np.ones((1024, 1024), np.float32)
    call_ns = _rate(lambda x: x * 2, (x[:16],), target)  # a call's own overhead, taken off the per-element rates below
    elementwise_ns = _rate(_chain, (x,), target) - call_ns
    gflops = 2 * CHAIN * x.size / elementwise_ns

    def flops_per_element(fn: Any) -> float:
        return max(1.0, (_rate(fn, (x,), target) - call_ns) * gflops / x.size)

    gemm_ns = _rate(lambda a, b: a @ b, (a, a), target)
    sizes = tuple((n, _priced_gemm_rate(n, gemm_ns if n == a.shape[0] else _rate(lambda a, b: a @ b, (a[:n, :n].copy(),) * 2, target),
                                        call_ns, target)) for n in GEMM_SIZES)
    # A transposed operand read as it lies (rules=None: no layout copy), against the row-major product
    strided_b, strided_a = (_rate(fn, (a, a), target, rules=None) / gemm_ns for fn in (lambda a, b: a @ b.T, lambda a, b: a.T @ b))
    transposed = _rate(lambda a: a.T.copy(), (a,), target, rules=None) / _rate(lambda a: a * 1, (a,), target)
    measured = Machine(
        gflops=gflops,
        inline_math_flops=flops_per_element(lambda x: np.exp(x)),
        transcendental_flops=flops_per_element(lambda x: np.log(x)),
        reduction_flops=flops_per_element(lambda x: x.sum()),
        transposed_copy_slowdown=max(1.0, transposed),
        gemm_gflops=2 * 1024**3 / gemm_ns,
        bandwidth_gbs=copy_bandwidth(target.threads),
        gemm_strided_b_slowdown=max(1.0, strided_b),
        gemm_strided_a_slowdown=max(1.0, strided_a),
        gemm_sizes=sizes,
    )
    return replace(measured, **overrides)


def calibrated(threads: int | None = None) -> Machine:
    """`measure(threads)` once per host and thread count, kept beside the compilation cache; measured anew
    (not stored) when there is no writable cache folder, or when the record is damaged or from an older Machine."""
    from .cache import read_record, record_path, write_record
    from .lowering.pipelines import resolve_target

    target = resolve_target("cpu-openmp", threads)
    path = record_path("machine", f"{target.cpu}|{target.features}|{target.threads}")
    stored = read_record(path)
    try:
        return Machine(**stored)
    except TypeError:  # (none, or fields this Machine does not have)
        machine = measure(target.threads)
        write_record(path, asdict(machine))
        return machine
