"""Contraction benchmark: float32 matmul (and matmul+bias+relu, matvec) vs NumPy, cpu and cpu-openmp.

    python benchmarks/bench_matmul.py                 # 100 256 300 512 1000 1024 2048, mm+bias+relu 1024,
                                                      # matvec, vecmat, chain_mv 2048, batched 8 x 256^3 and 64 x 64^3
    python benchmarks/bench_matmul.py --sizes 256 1024 --repeats 5

Median of repeats after a warm-up call (the warm-up also compiles). GFLOP/s = 2*m*n*k / time;
"ratio" is egglog_tensor's GFLOP/s over NumPy's (>1: faster). NumPy runs with its default
BLAS threads (OpenBLAS uses every core), so `cpu` (one thread) vs NumPy is not like for like.
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Callable
from typing import Any

import numpy as np

import egglog_tensor as et


def matmul(a, b):
    return a @ b


def mm_bias_relu(a, b, c):
    return np.maximum(a @ b + c, 0.0)


def chain_mv(a, b, x):
    return (a @ b) @ x


def median_s(fn: Callable[[], Any], repeats: int) -> float:
    fn()  # warm-up (and compile)
    time.sleep(0.3)  # the previous system's idle worker threads (OpenBLAS, OpenMP) spin ~0.1 s and take a core
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return float(np.median(times))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", type=int, nargs="*", default=[100, 256, 300, 512, 1000, 1024, 2048])
    parser.add_argument("--repeats", type=int, default=9)
    parser.add_argument("--targets", nargs="*", default=["cpu", "cpu-openmp"])
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    f32 = np.float32
    rows: list[tuple[str, Callable, tuple, float]] = []
    for n in args.sizes:
        rows.append((f"matmul {n}", matmul, (rng.standard_normal((n, n), f32), rng.standard_normal((n, n), f32)), 2.0 * n**3))
    n = 1024
    rows.append((f"mm+bias+relu {n}", mm_bias_relu,
                 (rng.standard_normal((n, n), f32), rng.standard_normal((n, n), f32), rng.standard_normal(n, f32)), 2.0 * n**3))
    n = 2048
    rows.append((f"matvec {n}", matmul, (rng.standard_normal((n, n), f32), rng.standard_normal(n, f32)), 2.0 * n * n))
    rows.append((f"vecmat {n}", matmul, (rng.standard_normal(n, f32), rng.standard_normal((n, n), f32)), 2.0 * n * n))
    rows.append((f"chain_mv {n}", chain_mv, (rng.standard_normal((n, n), f32), rng.standard_normal((n, n), f32),
                                             rng.standard_normal(n, f32)), 2.0 * n**3 + 2.0 * n * n))
    for nb, n in ((8, 256), (64, 64)):
        rows.append((f"batch {nb}x{n}", matmul, (rng.standard_normal((nb, n, n), f32), rng.standard_normal((nb, n, n), f32)),
                     2.0 * nb * n**3))

    print(f"cores: {os.cpu_count()}, numpy {np.__version__}, median of {args.repeats} after warm-up")
    head = f"{'workload':<18}{'numpy ms':>10}{'GF/s':>8}"
    for t in args.targets:
        head += f"{t + ' ms':>18}{'GF/s':>8}{'ratio':>7}"
    print(head)
    for name, fn, arrays, flops in rows:
        want = fn(*arrays)
        base = median_s(lambda: fn(*arrays), args.repeats)
        line = f"{name:<18}{base * 1e3:>10.3f}{flops / base / 1e9:>8.1f}"
        for target in args.targets:
            k = et.kernel(fn, target=target)
            np.testing.assert_allclose(k(*arrays), want, rtol=2e-3, atol=2e-2)
            t = median_s(lambda k=k: k(*arrays), args.repeats)
            line += f"{t * 1e3:>18.3f}{flops / t / 1e9:>8.1f}{base / t:>7.2f}"
        print(line, flush=True)


if __name__ == "__main__":
    main()
