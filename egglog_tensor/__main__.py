"""`python -m egglog_tensor demo`: compile real kernels, check them against NumPy, show what happened;
`python -m egglog_tensor inspect FILE.py:FUNC --arg ...`: any stage of a compilation (cli.py)."""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np

import egglog_tensor as et
from egglog_tensor import cli


def _median_ms(fn: Callable[[], Any], repeat: int = 7) -> float:
    fn()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return float(np.median(times)) * 1e3


def mm_bias_relu(a, b, c):
    return np.maximum(a @ b + c, 0.0)


def ew_chain(A, b):
    return np.exp(np.maximum(A + b, 0.0)) * 0.5 + A


def softmax(x):
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def gram_trace(A, B):
    # (A.T).T and x * 1.0 are rewritten away by the algebra ruleset; the transposes become indexing maps.
    return np.trace(A.T.T @ B.T) * 1.0, (A.T @ B).sum(axis=0)


def stencil(u):
    return 0.25 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:])


def _workloads(rng: np.random.Generator) -> list[tuple[Callable[..., Any], tuple[np.ndarray, ...]]]:
    f32 = np.float32
    return [
        (mm_bias_relu, (rng.standard_normal((256, 256), f32), rng.standard_normal((256, 256), f32), rng.standard_normal(256, f32))),
        (ew_chain, (rng.standard_normal((1024, 1024), f32), rng.standard_normal(1024, f32))),
        (softmax, (rng.standard_normal((1024, 256), f32),)),
        (gram_trace, (rng.standard_normal((128, 128)), rng.standard_normal((128, 128)))),
        (stencil, (rng.standard_normal((1024, 1024), f32),)),
    ]


def demo(target: str, verbose: bool) -> int:
    """Compile each workload, compare with NumPy, print timings and the optimizer's report."""
    rng = np.random.default_rng(0)
    failures = 0
    print(f"egglog_tensor {et.__version__} demo, target={target}\n")
    print(f"{'kernel':14s} {'compile':>9s} {'numpy':>10s} {'compiled':>10s} {'speedup':>8s}  check")
    reports = []
    for fn, args in _workloads(rng):
        k = et.kernel(fn, target=target)
        start = time.perf_counter()
        comp = k.inspect(*args)
        compile_s = time.perf_counter() - start
        got, want = k(*args), fn(*args)
        got_t = got if isinstance(got, tuple) else (got,)
        want_t = want if isinstance(want, tuple) else (want,)
        ok = all(np.allclose(g, w, rtol=1e-4, atol=1e-4) for g, w in zip(got_t, want_t, strict=True))
        failures += not ok
        t_np, t_et = _median_ms(lambda: fn(*args)), _median_ms(lambda: k(*args))
        print(f"{fn.__name__:14s} {compile_s:8.2f}s {t_np:9.3f}ms {t_et:9.3f}ms {t_np / t_et:7.2f}x  {'ok' if ok else 'MISMATCH'}")
        reports.append((fn.__name__, comp))
    print("\nWhat the optimizer did:")
    for name, comp in reports:
        print(f"\n== {name} ==")
        print(comp.report)
        if verbose:
            print(comp.stage("extracted"))
            print(comp.stage("linalg"))
    return 1 if failures else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m egglog_tensor")
    sub = parser.add_subparsers(dest="command", required=True)
    d = sub.add_parser("demo", help="compile and run a few kernels, compare with NumPy")
    d.add_argument("--target", default="cpu", help="lowering pipeline: cpu or cpu-openmp")
    d.add_argument("-v", "--verbose", action="store_true", help="also print extracted terms and linalg MLIR")
    cli.add_parser(sub)
    args = parser.parse_args(argv)
    if args.command == "inspect":
        try:
            return cli.run(args)
        except (cli.CliError, et.EgglogTensorError, KeyError) as e:
            print(f"python -m egglog_tensor inspect: {e.args[0] if isinstance(e, KeyError) else e}", file=sys.stderr)
            return 2
    return demo(args.target, args.verbose)


if __name__ == "__main__":
    sys.exit(main())
