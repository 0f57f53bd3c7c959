"""What running the MLIR stages and LLVM's code generation in forked children (egglog_tensor/forked.py) costs per kernel.

    EGGLOG_TENSOR_CACHE=0 python benchmarks/bench_forked_pipeline.py            # 10 kernels, 5 rounds
    EGGLOG_TENSOR_CACHE=0 python benchmarks/bench_forked_pipeline.py --rounds 3

Each kernel's linalg MLIR is lowered alternately in this process (`_run_stages`, what the pipeline
did before) and forked (`run_pipeline`), for both targets; then its optimized LLVM IR is compiled
to object code and assembly alternately in this process and forked (`llvm._codegen`). Reported:
the mean of each and the median of the paired differences, per kernel.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

import numpy as np

import egglog_tensor as et
from egglog_tensor.lowering import llvm
from egglog_tensor.lowering.pipelines import _run_stages, pipeline_for, resolve_target, run_pipeline
from egglog_tensor.target import Target

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
        comps = [et.kernel(fn, target=target).inspect(*args) for fn, args in KERNELS]
        pipeline = pipeline_for(resolve_target(target))
        _paired(f"{target} MLIR stages", rounds, [c.stage("linalg") for c in comps],
                lambda text: _run_stages(text, pipeline, lambda item: None, True), lambda text: run_pipeline(text, pipeline))
        _paired(f"{target} codegen", rounds, [c.stage("llvm-ir-optimized") for c in comps], _codegen_here,
                lambda text: llvm._codegen(text, Target.host()))


def _codegen_here(optimized_ir: str) -> None:
    """What `llvm._codegen` does, in this process."""
    machine = llvm._target_machine(Target.host())
    module = llvm.llvm.parse_assembly(optimized_ir)
    machine.emit_object(module)
    machine.emit_assembly(module)


def _paired(label: str, rounds: int, texts: list[str], inside: Callable[[str], object], forked: Callable[[str], object]) -> None:
    """Time inside(text) and forked(text) alternately for every text, rounds times; print means and the median difference."""
    times: dict[str, list[float]] = {"inside": [], "forked": []}
    for _ in range(rounds):
        for text in texts:
            for name, run in (("inside", inside), ("forked", forked)):
                start = time.perf_counter()
                run(text)
                times[name].append(time.perf_counter() - start)
    extra = statistics.median(f - i for f, i in zip(times["forked"], times["inside"], strict=True))
    print(f"{label}: in-process {statistics.mean(times['inside']) * 1e3:.0f} ms, forked {statistics.mean(times['forked']) * 1e3:.0f} ms"
          f" per kernel; paired difference median {extra * 1e3:.0f} ms")

if __name__ == "__main__":
    main()
