"""Compile time against program size: unrolled stencil loops and wide synthetic programs.

    python benchmarks/bench_compile.py                       # stencil steps 1 4 16 64, wide 250 1000 5000 nodes
    python benchmarks/bench_compile.py --steps 1 16 256 --nodes 1000 --no-lower

In one process, cache off, after one warm-up compile (the rule sets' base e-graph is built once per
process: that is the cold part). Per program: its traced nodes, the time to trace, to optimize
(seed the e-graph, rewrite, extract), to lower (emit + MLIR + LLVM) and load, and the optimizer's
estimated cost before and after (a DAG price: each materialized value once). The result is checked
against NumPy. Prints a markdown table; no plot (matplotlib is not a dependency).
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

import numpy as np

import egglog_tensor as et
from egglog_tensor.graph import topological


def stencil(steps: int) -> Callable[[np.ndarray], np.ndarray]:
    """A 5-point Jacobi step on a 2-D array, unrolled `steps` times by a Python loop."""

    def run(A: np.ndarray) -> np.ndarray:
        for _ in range(steps):
            B = A.copy()
            B[1:-1, 1:-1] = 0.2 * (A[1:-1, 1:-1] + A[1:-1, :-2] + A[1:-1, 2:] + A[2:, 1:-1] + A[:-2, 1:-1])
            A = B
        return A

    return run


def wide(nodes: int) -> Callable[[np.ndarray], np.ndarray]:
    """About `nodes` traced nodes: nodes/4 terms sin(x + i), summed pairwise (a shallow, wide DAG)."""

    def run(x: np.ndarray) -> np.ndarray:
        terms = [np.sin(x + float(i)) for i in range(max(1, nodes // 4))]
        while len(terms) > 1:
            terms = [a + b for a, b in zip(terms[::2], terms[1::2], strict=False)] + terms[len(terms) & ~1:]
        return terms[0]

    return run


def measure(name: str, fn: Callable[[np.ndarray], np.ndarray], arg: np.ndarray, lower: bool) -> dict[str, object]:
    """Trace, optimize and (if `lower`) lower and load `fn` for `arg`; times in seconds."""
    row: dict[str, object] = {"program": name}
    t0 = time.perf_counter()
    traced = et.kernel(fn, cache=False).trace(arg)
    t1 = time.perf_counter()
    optimized = traced.optimize()
    t2 = time.perf_counter()
    row.update(nodes=len(topological(list(traced.outputs))), trace=t1 - t0, optimize=t2 - t1,
               before=optimized.report.cost_before, after=optimized.report.cost_after)
    if lower:
        compiled = optimized.lower().compile()
        row["lower"] = time.perf_counter() - t2
        np.testing.assert_allclose(compiled(arg.copy()), fn(arg.copy()), rtol=1e-12, atol=1e-12)
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, nargs="*", default=[1, 4, 16, 64], help="stencil steps (128x128 float64)")
    parser.add_argument("--nodes", type=int, nargs="*", default=[250, 1000, 5000], help="wide programs' node counts")
    parser.add_argument("--no-lower", action="store_true", help="trace and optimize only")
    args = parser.parse_args()
    grid = np.random.default_rng(0).random((128, 128))
    line = np.linspace(0.0, 1.0, 4096)
    measure("warm-up", stencil(1), grid, lower=True)
    rows = [measure(f"stencil {s} steps", stencil(s), grid, not args.no_lower) for s in args.steps]
    rows += [measure(f"wide {n}", wide(n), line, not args.no_lower) for n in args.nodes]
    print("| program | nodes | trace s | optimize s | lower+load s | est. before ns | est. after ns |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        lowered = f"{r['lower']:.2f}" if "lower" in r else "-"
        print(f"| {r['program']} | {r['nodes']} | {r['trace']:.2f} | {r['optimize']:.2f} | {lowered} | "
              f"{r['before']:,.0f} | {r['after']:,.0f} |")


if __name__ == "__main__":
    main()
