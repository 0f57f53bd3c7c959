"""Benchmark suite: NumPy vs egglog_tensor (cpu and cpu-openmp) on the project's reference workloads.

    python benchmarks/run.py            # full sizes (see WORKLOADS), table + benchmarks/results/latest.json
    python benchmarks/run.py --quick    # smaller sizes, for a fast look

Median of repeats after a warm-up call; the machine's copy bandwidth and NumPy's float32 GEMM
rate are measured in the same run and printed beside the table.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

import egglog_tensor as et

F32 = np.float32


def ew_chain(A, b):
    return np.exp(np.maximum(A + b, 0.0)) * 0.5 + A


def gelu(x):
    return 0.5 * x * (1 + np.tanh(0.7978846 * (x + 0.044715 * x * x * x)))


def softmax(x):
    return np.exp(x - np.max(x, axis=1, keepdims=True)) / np.sum(np.exp(x - np.max(x, axis=1, keepdims=True)), axis=1, keepdims=True)


def layernorm(x, g):
    mu = np.mean(x, axis=1, keepdims=True)
    var = np.mean((x - mu) * (x - mu), axis=1, keepdims=True)
    return (x - mu) / np.sqrt(var + 1e-5) * g


def mm_bias_relu(a, b, c):
    return np.maximum(a @ b + c, 0.0)


def chain_mv(a, b, x):
    return (a @ b) @ x


def sum_prod(a, b):
    return np.sum(a * b)


def WORKLOADS(scale: int) -> list[tuple[Callable[..., Any], Callable[[np.random.Generator], tuple]]]:
    """(function, argument maker) per workload; scale divides the reference sizes."""
    n, m = 4096 // scale, 1024 // scale
    return [
        (ew_chain, lambda r: (r.standard_normal((n, n), F32), r.standard_normal(n, F32))),
        (gelu, lambda r: (r.standard_normal((n, n), F32),)),
        (softmax, lambda r: (r.standard_normal((n, m), F32),)),
        (layernorm, lambda r: (r.standard_normal((n, m), F32), r.standard_normal(m, F32))),
        (mm_bias_relu, lambda r: (r.standard_normal((m, m), F32), r.standard_normal((m, m), F32), r.standard_normal(m, F32))),
        (chain_mv, lambda r: (r.standard_normal((n // 2, n // 2), F32), r.standard_normal((n // 2, n // 2), F32), r.standard_normal(n // 2, F32))),
        (sum_prod, lambda r: (r.standard_normal((n, n), F32), r.standard_normal((n, n), F32))),
    ]


def median_ms(fn: Callable[[], Any], min_time: float = 0.5, max_repeat: int = 15) -> float:
    fn()
    times: list[float] = []
    start = time.perf_counter()
    while len(times) < 3 or (len(times) < max_repeat and time.perf_counter() - start < min_time):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return float(np.median(times)) * 1e3


def machine_numbers() -> dict[str, float]:
    """Copy bandwidth (GB/s, read+write) and NumPy float32 GEMM (GFLOP/s), measured now."""
    src = np.ones(64 * 2**20 // 4, F32)
    dst = np.empty_like(src)
    copy_ms = median_ms(lambda: np.copyto(dst, src))
    a = np.ones((2048, 2048), F32)
    gemm_ms = median_ms(lambda: a @ a)
    return {"copy_GBps": 2 * src.nbytes / copy_ms / 1e6, "sgemm_GFLOPs": 2 * 2048**3 / gemm_ms / 1e6}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="reference sizes divided by 4")
    parser.add_argument("--out", default=str(Path(__file__).parent / "results" / "latest.json"))
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    machine = machine_numbers()
    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
          f"copy {machine['copy_GBps']:.1f} GB/s, numpy sgemm {machine['sgemm_GFLOPs']:.0f} GFLOP/s")
    targets = ["cpu", "cpu-openmp"]
    header = f"{'workload':14s} {'numpy ms':>9s}" + "".join(f" {t + ' ms':>15s} {'vs numpy':>8s}" for t in targets)
    print(header)
    rows = []
    for fn, make in WORKLOADS(4 if args.quick else 1):
        inputs = make(rng)
        row: dict[str, Any] = {"workload": fn.__name__, "shapes": [list(a.shape) for a in inputs]}
        row["numpy_ms"] = median_ms(lambda: fn(*inputs))
        line = f"{fn.__name__:14s} {row['numpy_ms']:9.3f}"
        for target in targets:
            k = et.kernel(fn, target=target)
            got, want = k(*inputs), fn(*inputs)
            ok = bool(np.allclose(got, want, rtol=2e-3, atol=1e-3))
            ms = median_ms(lambda: k(*inputs))
            row[target] = {"ms": ms, "ratio_vs_numpy": row["numpy_ms"] / ms, "correct": ok}
            line += f" {ms:15.3f} {row['numpy_ms'] / ms:7.2f}x" + ("" if ok else " WRONG")
        print(line)
        rows.append(row)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"machine": machine, "results": rows}, indent=1))
    print(f"saved {out}")


if __name__ == "__main__":
    main()
