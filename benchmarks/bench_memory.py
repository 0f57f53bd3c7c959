"""Memory over many compilations: RSS while one process compiles N distinct kernels.

    python benchmarks/bench_memory.py                 # 1,000 kernels, dropped after their call
    python benchmarks/bench_memory.py -n 200 --keep   # keep every Kernel alive (native code, stages)

Each kernel is a different small program (elementwise chain, a reduction and a transpose, with a
different constant each time, so neither the in-process nor the on-disk cache can serve it; the
disk cache is off). Prints RSS every `--every` kernels and the growth per kernel over the second
half of the run, where start-up costs (imports, first MLIR context, JIT) are paid.
"""

from __future__ import annotations

import argparse
import gc
import os
import time

os.environ.setdefault("EGGLOG_TENSOR_CACHE", "0")

import numpy as np  # noqa: E402

import egglog_tensor as et  # noqa: E402


def rss_mb() -> float:
    """Resident set size of this process in MB (Linux /proc)."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS in /proc/self/status")


def program(i: int):
    """The i-th distinct kernel body."""
    c = 1.0 + i / 1024

    def f(x, y):
        return (np.tanh(x * c) + y).sum(axis=0), (x.T - c) * y.T

    return f


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("-n", type=int, default=1000, help="kernels to compile")
    parser.add_argument("--every", type=int, default=100, help="report every this many kernels")
    parser.add_argument("--keep", action="store_true", help="keep every Kernel object alive")
    args = parser.parse_args()
    x = np.linspace(-1, 1, 64, dtype=np.float32).reshape(8, 8)
    y = np.ones((8, 8), np.float32)
    kept = []
    start, marks = time.perf_counter(), {0: rss_mb()}
    print(f"{'kernels':>8} {'RSS MB':>8} {'s':>7}")
    for i in range(1, args.n + 1):
        k = et.kernel(program(i))
        k(x, y)
        if args.keep:
            kept.append(k)
        if i % args.every == 0:
            gc.collect()
            marks[i] = rss_mb()
            print(f"{i:8d} {marks[i]:8.1f} {time.perf_counter() - start:7.1f}", flush=True)
    half = max(k for k in marks if k <= args.n // 2)
    per_kernel = (marks[args.n] - marks[half]) / max(args.n - half, 1) * 1024
    print(f"RSS {marks[0]:.1f} MB before, {marks[args.n]:.1f} MB after {args.n} kernels; "
          f"{per_kernel:.1f} KB per kernel over kernels {half}-{args.n}{' (kept alive)' if args.keep else ''}")


if __name__ == "__main__":
    main()
