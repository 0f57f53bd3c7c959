"""Benchmark suite: NumPy, egglog_tensor (cpu, cpu-openmp), Numba and JAX on the reference workloads.

    pip install -e '.[bench]'            # Numba, JAX and matplotlib (each optional: missing ones are skipped)
    python benchmarks/run.py             # full sizes (see workloads), table + results/latest.json + latest.png
    python benchmarks/run.py --quick     # sizes divided by 4, for a fast look
    python benchmarks/run.py --only gelu,softmax   # some of the workloads ("calls": the call-overhead table)

Every system runs the same NumPy-style function: egglog_tensor compiles it with `et.kernel`, Numba
with `numba.njit(parallel=True)` (a workload it cannot compile is reported as "unsupported"), JAX
with `jax.jit` of the same code with `np` bound to `jax.numpy` (float32 device arrays made before
timing, `block_until_ready` inside it). In one process, after a warm-up call, the systems take
turns: each round times one batch of calls (about 50 ms) of every system in order, after a pause
that lets the previous system's worker threads (OpenMP, BLAS) go idle. A shared machine's speed
drifts over seconds (here medians of one system measured in a block moved by 10% from run to run),
and taking turns makes the drift hit every system alike.

Columns: ms, the median over rounds; "vs numpy" and "vs best peer" are speedups (the other's ms /
this one's, > 1: this is faster; the best peer is the fastest correct of NumPy, Numba and JAX);
"roofline" is the share of
the bound max(bytes / copy bandwidth, flops / NumPy sgemm rate) reached, where bytes is the
compulsory traffic (every input read once, the output written once) and flops counts contractions
only (2mnk; elementwise work is treated as free). Copy bandwidth and sgemm rate are measured by the
same run (np.copyto split over one thread per core; a 2048^3 NumPy matmul). WRONG: output differs from NumPy's.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
import types
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from importlib.util import find_spec
from pathlib import Path
from typing import Any

import numpy as np

import egglog_tensor as et
from egglog_tensor.target import copy_bandwidth

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


@dataclass(frozen=True)
class Workload:
    """A function, a maker of its float32 inputs, and its contraction flops (for the roofline)."""

    fn: Callable[..., Any]
    make: Callable[[np.random.Generator], tuple[np.ndarray, ...]]
    flops: Callable[[tuple[np.ndarray, ...]], float] = lambda inputs: 0.0


def _mm_flops(a: np.ndarray, b: np.ndarray) -> float:
    return 2.0 * a.shape[0] * a.shape[1] * (b.shape[1] if b.ndim == 2 else 1)


def workloads(scale: int) -> list[Workload]:
    """The issue's reference workloads; scale divides the sizes. chain_mv's flops are as written
    ((a@b)@x: 2n^3 + 2n^2; the reordering A@(B@x) is fastmath-only, not what DEFAULT runs)."""
    n, m = 4096 // scale, 1024 // scale
    h = n // 2

    def normal(*shape: int) -> Callable[[np.random.Generator], np.ndarray]:
        return lambda r: r.standard_normal(shape, F32)

    def inputs(*makers: Callable[[np.random.Generator], np.ndarray]) -> Callable[[np.random.Generator], tuple]:
        return lambda r: tuple(make(r) for make in makers)

    return [
        Workload(ew_chain, inputs(normal(n, n), normal(n))),
        Workload(gelu, inputs(normal(n, n))),
        Workload(softmax, inputs(normal(n, m))),
        Workload(layernorm, inputs(normal(n, m), normal(m))),
        Workload(mm_bias_relu, inputs(normal(m, m), normal(m, m), normal(m)), lambda i: _mm_flops(i[0], i[1])),
        Workload(chain_mv, inputs(normal(h, h), normal(h, h), normal(h)), lambda i: _mm_flops(i[0], i[1]) + _mm_flops(i[0], i[2])),
        Workload(sum_prod, inputs(normal(n, n), normal(n, n)), lambda i: 2.0 * i[0].size),
    ]


def median_ms(fn: Callable[[], Any], min_time: float = 0.5, max_repeat: int = 15) -> float:
    """Median wall time of fn() in ms, after one warm-up call: at least 3 repeats, more up to min_time s."""
    fn()
    times: list[float] = []
    start = time.perf_counter()
    while len(times) < 3 or (len(times) < max_repeat and time.perf_counter() - start < min_time):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return float(np.median(times)) * 1e3


def small(a, b):
    return a * b + a


CALL_SIZES = (4, 200)  # the issue's tiny kernel, and the size of many real programs' arrays


def call_overhead(rounds: int) -> list[dict[str, Any]]:
    """Microseconds per call of `a * b + a` on small float32 arrays, for every system, with
    egglog_tensor's `out=` path beside its plain one: at 4x4 the time is all dispatch."""
    rows = []
    for n in CALL_SIZES:
        rng = np.random.default_rng(n)
        a, b = rng.standard_normal((n, n), F32), rng.standard_normal((n, n), F32)
        want = small(a, b)
        runs: dict[str, Runner] = {}
        row: dict[str, Any] = {"shape": [n, n], "systems": {}}
        for name, prepare in systems().items():
            run, row["systems"][name] = prepare_checked(prepare, small, (a, b), want)
            if run is not None:
                runs[name] = run
        for target in ("cpu", "cpu-openmp"):
            k, out = et.kernel(small, target=target), np.empty_like(want)
            k(a, b, out=out)
            row["systems"][f"et:{target} out="] = {"correct": matches(out, want), "dtype": "float32"}
            runs[f"et:{target} out="] = lambda k=k, out=out: k(a, b, out=out)
        for name, times in take_turns(runs, rounds).items():
            row["systems"][name]["us"] = float(np.median(times)) * 1e6
        rows.append(row)
    return rows


def print_calls(rows: list[dict[str, Any]]) -> None:
    """The call-overhead table: one line per system, one column per size."""
    print("\ncall overhead, a * b + a, float32, us per call (median of rounds): "
          + ", ".join(f"{n}x{n}" for n in CALL_SIZES))
    for name in rows[0]["systems"]:
        cells = []
        for row in rows:
            r = row["systems"][name]
            cells.append(f"{'unsupported' if 'unsupported' in r else format(r['us'], '.2f'):>12s}"
                         + ("" if r.get("correct", True) else " WRONG"))
        print(f"  {name:20s}" + "".join(cells))


def cpu_model() -> str:
    """The CPU's model name from /proc/cpuinfo (platform's guess elsewhere)."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def machine_numbers() -> dict[str, Any]:
    """Copy bandwidth, NumPy float32 GEMM rate (GFLOP/s, 2048^3), CPU and load, measured now."""
    cores = len(os.sched_getaffinity(0))
    a = np.ones((2048, 2048), F32)
    gemm_ms = median_ms(lambda: a @ a)
    return {
        "copy_GBps": copy_bandwidth(cores),
        "sgemm_GFLOPs": 2 * 2048**3 / gemm_ms / 1e6,
        "cpu": cpu_model(),
        "cores": cores,
        "load_at_start": list(os.getloadavg()),
    }


def describe(machine: dict[str, Any]) -> str:
    """One line of the machine numbers, printed beside the table."""
    load = ", ".join(f"{x:.2f}" for x in machine["load_at_start"])
    return (f"machine: {machine['cpu']}, {machine['cores']} cores, copy {machine['copy_GBps']:.1f} GB/s, "
            f"numpy sgemm {machine['sgemm_GFLOPs']:.0f} GFLOP/s, load average {load}")


# --- systems: each turns (function, inputs) into a zero-argument call returning the result ------
Runner = Callable[[], Any]


class Unsupported(Exception):
    """A system cannot compile a workload (reported as such, never replaced by something else)."""


def numpy_system(fn: Callable[..., Any], inputs: tuple) -> Runner:
    """NumPy itself: the plain function."""
    return lambda: fn(*inputs)


def et_system(target: str) -> Callable[[Callable[..., Any], tuple], Runner]:
    """egglog_tensor with DEFAULT rules on one target."""

    def prepare(fn: Callable[..., Any], inputs: tuple) -> Runner:
        k = et.kernel(fn, target=target)
        return lambda: k(*inputs)

    return prepare


def numba_system(fn: Callable[..., Any], inputs: tuple) -> Runner:
    """numba.njit(parallel=True) of the same function, compiled here (the first call)."""
    import numba

    jitted = numba.njit(parallel=True)(fn)
    try:
        with warnings.catch_warnings():  # "parallel=True but no transformation was possible" (matmul only)
            warnings.simplefilter("ignore", numba.NumbaPerformanceWarning)
            jitted(*inputs)
    except numba.core.errors.NumbaError as e:
        lines = str(e).strip().splitlines()
        raise Unsupported(next((s.strip(" >") for s in lines if s.lstrip().startswith(">>>")), lines[0])) from e
    return lambda: jitted(*inputs)


def jax_system(fn: Callable[..., Any], inputs: tuple) -> Runner:
    """jax.jit of the same code with `np` bound to jax.numpy; device arrays made here, not timed."""
    import jax
    import jax.numpy as jnp

    same_code = types.FunctionType(fn.__code__, {**fn.__globals__, "np": jnp}, fn.__name__)
    jitted = jax.jit(same_code)
    on_device = [jax.device_put(a) for a in inputs]
    return lambda: jitted(*on_device).block_until_ready()


def systems() -> dict[str, Callable[[Callable[..., Any], tuple], Runner]]:
    """NumPy, egglog_tensor's CPU targets, and the peers that are installed (the `bench` extra)."""
    found = {"numpy": numpy_system, "et:cpu": et_system("cpu"), "et:cpu-openmp": et_system("cpu-openmp")}
    for name, prepare in (("numba", numba_system), ("jax", jax_system)):
        if find_spec(name):
            found[name] = prepare
    return found


PEERS = ("numpy", "numba", "jax")


def matches(got: Any, want: np.ndarray) -> bool:
    """Same shape and values as NumPy's result, to float32 tolerance scaled by the result's magnitude."""
    got = np.asarray(got)
    scale = float(np.max(np.abs(want))) if want.size else 1.0
    return got.shape == want.shape and bool(np.allclose(got, want, rtol=2e-3, atol=1e-4 * max(scale, 1.0)))


PAUSE_S = 0.3  # idle worker threads spin this long at most: OpenBLAS's ~0.1 s, OpenMP's KMP_BLOCKTIME 0.2 s
BATCH_S = 0.05  # wall time of one batch of calls


def prepare_checked(prepare: Callable[[Callable[..., Any], tuple], Runner], fn: Callable[..., Any], inputs: tuple,
                    want: np.ndarray) -> tuple[Runner | None, dict[str, Any]]:
    """One system made ready (compiled, warmed up) and its result checked, or why it is unsupported."""
    try:
        run = prepare(fn, inputs)
    except Unsupported as e:
        return None, {"unsupported": str(e)}
    got = np.asarray(run())
    return run, {"correct": matches(got, want), "dtype": str(got.dtype)}


def take_turns(runs: dict[str, Runner], rounds: int) -> dict[str, list[float]]:
    """Seconds per call of each system in each round: the systems take turns, one batch of calls
    each per round (BATCH_S long), each batch after a pause (PAUSE_S)."""
    calls = {}
    for name, run in runs.items():
        start = time.perf_counter()
        run()
        calls[name] = max(1, round(BATCH_S / max(time.perf_counter() - start, 1e-7)))
    times: dict[str, list[float]] = {name: [] for name in runs}
    for _ in range(rounds):
        for name, run in runs.items():
            time.sleep(PAUSE_S)
            start = time.perf_counter()
            for _ in range(calls[name]):
                run()
            times[name].append((time.perf_counter() - start) / calls[name])
    return times


def add_times(row: dict[str, Any], times: dict[str, list[float]]) -> None:
    """Median ms (and each round's), speedups vs NumPy and vs the best correct peer, and % of the
    roofline, for each timed system."""
    timed = {name: row["systems"][name] for name in times}
    for name, r in timed.items():
        r["ms"] = float(np.median(times[name])) * 1e3
        r["rounds_ms"] = [t * 1e3 for t in times[name]]
    best_peer = min(r["ms"] for name, r in timed.items() if name in PEERS and r["correct"])
    for r in timed.values():
        r["vs_numpy"] = timed["numpy"]["ms"] / r["ms"]
        r["vs_best_peer"] = best_peer / r["ms"]
        r["roofline_pct"] = 100.0 * row["roofline_ms"] / r["ms"]


def run_workload(w: Workload, rng: np.random.Generator, machine: dict[str, Any], rounds: int) -> dict[str, Any]:
    """Every system on one workload, with its bytes, flops and roofline time."""
    inputs = w.make(rng)
    want = np.asarray(w.fn(*inputs))
    nbytes = sum(a.nbytes for a in inputs) + want.nbytes
    flops = w.flops(inputs)
    roofline_ms = max(nbytes / machine["copy_GBps"] / 1e6, flops / machine["sgemm_GFLOPs"] / 1e6)
    row: dict[str, Any] = {"workload": w.fn.__name__, "shapes": [list(a.shape) for a in inputs],
                           "bytes": nbytes, "flops": flops, "roofline_ms": roofline_ms}
    runs: dict[str, Runner] = {}
    row["systems"] = {}
    for name, prepare in systems().items():
        run, row["systems"][name] = prepare_checked(prepare, w.fn, inputs, want)
        if run is not None:
            runs[name] = run
    add_times(row, take_turns(runs, rounds))
    return row


def print_row(row: dict[str, Any]) -> None:
    """A workload's lines of the table, one per system."""
    print(f"{row['workload']:13s} {'':14s} roofline {row['roofline_ms']:.3f} ms "
          f"({row['bytes'] / 1e6:.0f} MB, {row['flops'] / 1e9:.2f} GFLOP)")
    for name, r in row["systems"].items():
        if "unsupported" in r:
            print(f"{'':13s} {name:14s} {'unsupported':>10s}  {r['unsupported'][:90]}")
            continue
        notes = ("" if r["correct"] else " WRONG") + ("" if r["dtype"] == "float32" else f" (returns {r['dtype']})")
        print(f"{'':13s} {name:14s} {r['ms']:10.3f} {r['vs_numpy']:8.2f}x {r['vs_best_peer']:8.2f}x "
              f"{r['roofline_pct']:7.1f}%{notes}")


def run_cases(doc: str, cases: list[Workload]) -> None:
    """A benchmark script's command line (--rounds, --only): the machine's numbers, then each case's table rows."""
    parser = argparse.ArgumentParser(description=doc.split("\n", 1)[0])
    parser.add_argument("--rounds", type=int, default=9, help="turns each system takes per case")
    parser.add_argument("--only", default="", help="comma-separated case names (default: all)")
    args = parser.parse_args()
    wanted = set(args.only.split(",")) if args.only else {w.fn.__name__ for w in cases}
    machine = machine_numbers()
    print(describe(machine))
    print(f"{'workload':13s} {'system':14s} {'ms':>10s} {'vs numpy':>9s} {'vs peer':>9s} {'roofline':>8s}")
    rng = np.random.default_rng(0)
    for w in cases:
        if w.fn.__name__ in wanted:
            print_row(run_workload(w, rng, machine, args.rounds))


def chart(rows: list[dict[str, Any]], machine: dict[str, Any], path: Path) -> None:
    """Bar chart of speedup vs NumPy per workload and system (log scale), saved as a PNG."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = [n for n in rows[0]["systems"] if n != "numpy"]
    width = 0.8 / len(names)
    fig, ax = plt.subplots(figsize=(11, 4.5))
    for i, name in enumerate(names):
        speedups = [row["systems"][name].get("vs_numpy", np.nan) for row in rows]
        ax.bar(np.arange(len(rows)) + (i - (len(names) - 1) / 2) * width, speedups, width, label=name)
    ax.axhline(1.0, color="black", linewidth=0.8)
    ax.set_yscale("log")
    ax.set_xticks(np.arange(len(rows)), [row["workload"] for row in rows])
    ax.set_ylabel("speedup vs NumPy (log; missing bar: unsupported)")
    ax.set_title(f"{machine['cpu']}, {machine['cores']} cores", fontsize=9)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--quick", action="store_true", help="reference sizes divided by 4")
    parser.add_argument("--rounds", type=int, default=9, help="turns each system takes per workload")
    parser.add_argument("--only", default="", help="comma-separated workload names to run, \"calls\" for the call-overhead table (default: all)")
    parser.add_argument("--out", default=str(Path(__file__).parent / "results" / "latest.json"))
    args = parser.parse_args()
    chosen = workloads(4 if args.quick else 1)
    wanted = args.only.split(",") if args.only else []
    if args.only:
        unknown = set(wanted) - {w.fn.__name__ for w in chosen} - {"calls"}
        if unknown:
            parser.error(f"unknown workload(s) {', '.join(sorted(unknown))}; workloads: {', '.join(w.fn.__name__ for w in chosen)}, calls")
        chosen = [w for w in chosen if w.fn.__name__ in wanted]
    rng = np.random.default_rng(0)
    machine = machine_numbers()
    print(describe(machine))
    print(f"{'workload':13s} {'system':14s} {'ms':>10s} {'vs numpy':>9s} {'vs peer':>9s} {'roofline':>8s}")
    rows = []
    for w in chosen:
        rows.append(run_workload(w, rng, machine, args.rounds))
        print_row(rows[-1])
    calls = call_overhead(args.rounds) if not args.only or "calls" in wanted else []
    if calls:
        print_calls(calls)
    machine["load_at_end"] = list(os.getloadavg())
    print(f"load average at end: {', '.join(f'{x:.2f}' for x in machine['load_at_end'])}")
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    versions = {name: __import__(name).__version__ for name in ("numpy", "numba", "jax") if find_spec(name)}
    out.write_text(json.dumps({"machine": machine, "versions": versions, "quick": args.quick, "rounds": args.rounds,
                               "results": rows, "call_overhead": calls}, indent=1))
    print(f"saved {out}")
    if rows and find_spec("matplotlib"):
        chart(rows, machine, out.with_suffix(".png"))
        print(f"saved {out.with_suffix('.png')}")


if __name__ == "__main__":
    main()
