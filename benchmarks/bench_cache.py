"""Compilation cache: cold compile vs a warm process that loads the kernel from the on-disk cache.

    python benchmarks/bench_cache.py               # gelu (10 elementwise ops, float32), 3 rounds
    python benchmarks/bench_cache.py --rounds 5 --target cpu-openmp

Each round uses a fresh, empty cache dir: a first process compiles (miss-stored), a second one
loads the entry (hit). Reported per process: the first call (trace + optimize + lower + load, or
trace + key + load from cache) and the whole process wall time (Python start, imports included).
Medians over the rounds.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

CHILD = """
import json, sys, time
start = time.perf_counter()
import numpy as np
import egglog_tensor as et
imported = time.perf_counter()

def gelu(x):
    return 0.5 * x * (1.0 + np.tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)))

k = et.kernel(gelu, target=sys.argv[1])
x = np.linspace(-5, 5, 1 << 20, dtype=np.float32)
t0 = time.perf_counter()
y = k(x)
t1 = time.perf_counter()
comp = k.inspect(x)
np.testing.assert_allclose(y, gelu(x), rtol=1e-5, atol=1e-5)
print(json.dumps({"cache": comp.cache, "import": imported - start, "first_call": t1 - t0,
                  "timings": comp.timings}))
"""


def _child(directory: str, target: str) -> dict:
    env = {**os.environ, "EGGLOG_TENSOR_CACHE_DIR": directory}
    start = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", CHILD, target], env=env, capture_output=True, text=True, check=True)
    result = json.loads(out.stdout.strip().splitlines()[-1])
    result["process"] = time.perf_counter() - start
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--target", default="cpu")
    args = parser.parse_args()
    runs: dict[str, list[dict]] = {"cold": [], "warm": []}
    for _ in range(args.rounds):
        with tempfile.TemporaryDirectory(prefix="egglog-tensor-bench-cache-") as directory:
            cold, warm = _child(directory, args.target), _child(directory, args.target)
        assert (cold["cache"], warm["cache"]) == ("miss-stored", "hit"), (cold["cache"], warm["cache"])
        runs["cold"].append(cold)
        runs["warm"].append(warm)
    print(f"gelu float32[{1 << 20}], target {args.target}, median of {args.rounds} round(s)")
    for name, results in runs.items():
        first = statistics.median(r["first_call"] for r in results) * 1e3
        process = statistics.median(r["process"] for r in results) * 1e3
        imports = statistics.median(r["import"] for r in results) * 1e3
        stages = {k: statistics.median(r["timings"].get(k, 0.0) for r in results) * 1e3 for k in results[0]["timings"]}
        detail = ", ".join(f"{k} {v:.0f}" for k, v in stages.items())
        print(f"  {name} ({results[0]['cache']}): first call {first:7.1f} ms, process {process:7.1f} ms (import {imports:.0f} ms)")
        print(f"      stages (ms): {detail}")


if __name__ == "__main__":
    main()
