"""What running the MLIR stages and LLVM's code generation out of process (egglog_tensor/forked.py) costs per kernel.

    EGGLOG_TENSOR_CACHE=0 python benchmarks/bench_forked_pipeline.py            # 10 kernels, 5 rounds
    EGGLOG_TENSOR_CACHE=0 python benchmarks/bench_forked_pipeline.py --rounds 3

Each kernel's linalg MLIR is lowered in turn in this process (`_run_stages`), in the forked worker
(`run_pipeline`, what a compile does) and in a child forked for it (`forked.run_forked`, what a
compile did before the worker), for both targets; then its optimized LLVM IR is compiled to object
code and assembly the same three ways. Reported: the mean of each, per kernel, and the median of
each one's paired difference from in-process.
"""

from __future__ import annotations

import argparse
import functools
import statistics
import time
from collections.abc import Callable

import numpy as np

import egglog_tensor as et
from egglog_tensor.forked import run_forked
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
        stages = functools.partial(_run_stages, pipeline=pipeline, printed=True)
        _compare(f"{target} MLIR stages", rounds, [c.stage("linalg") for c in comps], {
            "in-process": lambda text: stages(text, send=lambda item: None),
            "worker": lambda text: run_pipeline(text, pipeline),
            "own child": lambda text: run_forked(lambda send: stages(text, send=send), lambda item: None)})
        _compare(f"{target} codegen", rounds, [c.stage("llvm-ir-optimized") for c in comps], {
            "in-process": lambda text: _codegen_here(text, lambda item: None),
            "worker": lambda text: (llvm._codegen(text, Target.host()), llvm._codegen(text, Target.host(), assembly=True)),
            "own child": lambda text: run_forked(functools.partial(_codegen_here, text), lambda item: None)})


def _codegen_here(optimized_ir: str, send: Callable[[object], None]) -> None:
    """What `llvm._codegen` does for the object and the assembly, in this process."""
    machine = llvm._target_machine(Target.host())
    module = llvm.llvm.parse_assembly(optimized_ir)
    send((machine.emit_object(module), machine.emit_assembly(module)))


def _compare(label: str, rounds: int, texts: list[str], ways: dict[str, Callable[[str], object]]) -> None:
    """Time each way on every text in turn, rounds times; print the means and the median paired difference from the first way."""
    times: dict[str, list[float]] = {name: [] for name in ways}
    for _ in range(rounds):
        for text in texts:
            for name, run in ways.items():
                start = time.perf_counter()
                run(text)
                times[name].append(time.perf_counter() - start)
    first, *others = ways
    cells = [f"{first} {statistics.mean(times[first]) * 1e3:.0f} ms"]
    for name in others:
        extra = statistics.median(t - b for t, b in zip(times[name], times[first], strict=True))
        cells.append(f"{name} {statistics.mean(times[name]) * 1e3:.0f} ms ({extra * 1e3:+.0f} ms paired median)")
    print(f"{label} per kernel: " + ", ".join(cells))


if __name__ == "__main__":
    main()
