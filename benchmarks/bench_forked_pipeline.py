"""What running the MLIR stages in a forked child (egglog_tensor/forked.py) costs per kernel.

    EGGLOG_TENSOR_CACHE=0 python benchmarks/bench_forked_pipeline.py            # 10 kernels, 5 rounds
    EGGLOG_TENSOR_CACHE=0 python benchmarks/bench_forked_pipeline.py --rounds 3

Each kernel's linalg MLIR is lowered alternately in this process (`_run_stages`, what the pipeline
did before) and forked (`run_pipeline`), for both targets; reported: the mean of each and the
median of the paired differences, per kernel.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

import egglog_tensor as et
from egglog_tensor.lowering.pipelines import _run_stages, pipeline_for, run_pipeline

_r = np.random.default_rng(0)
A, B, S, X = _r.random((50, 35)), _r.random((50, 35)), _r.random((35, 35)), _r.random(35)
M = _r.random((256, 256)).astype(np.float32)
KERNELS = [
    (lambda a, b: a @ b.T + b @ a.T, (A, B)),
    (lambda a: np.exp(a) * 2 + 1, (A,)),
    (lambda a: np.sum(a * a, axis=1), (A,)),
    (lambda a, s: np.maximum(a @ s, 0) @ s, (A, S)),
    (lambda a: np.tanh(a @ a), (M,)),
    (lambda a, x: a @ x, (A, X)),
    (lambda a: a - a.max(axis=1, keepdims=True), (A,)),
    (lambda a: np.exp(a) / np.exp(a).sum(axis=1, keepdims=True), (M,)),
    (lambda a, b: (a @ b.T, np.sqrt(np.abs(a)) + b), (A, B)),
    (lambda a: np.dot(a[0], a[1]), (A,)),
]


def main() -> None:
    """Print, per target, the in-process and forked pipeline times per kernel and their paired difference."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    rounds = parser.parse_args().rounds
    for target in ("cpu", "cpu-openmp"):
        texts = [et.kernel(fn, target=target).inspect(*args).stage("linalg") for fn, args in KERNELS]
        pipeline = pipeline_for(target)
        inside, forked = [], []
        for _ in range(rounds):
            for text in texts:
                start = time.perf_counter()
                _run_stages(text, pipeline, lambda item: None)
                inside.append(time.perf_counter() - start)
                start = time.perf_counter()
                run_pipeline(text, pipeline)
                forked.append(time.perf_counter() - start)
        extra = statistics.median(f - i for f, i in zip(forked, inside, strict=True))
        print(f"{target}: in-process {statistics.mean(inside) * 1e3:.0f} ms, forked {statistics.mean(forked) * 1e3:.0f} ms"
              f" per kernel; paired difference median {extra * 1e3:.0f} ms")


if __name__ == "__main__":
    main()
