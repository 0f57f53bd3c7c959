"""The effect of each ruleset family (and of streaming stores and the inline math), as ratios
against NumPy in one run.

    python benchmarks/families.py [--target cpu] [--only rows lanes] [--rounds 9]

NumPy, the kernel without and the kernel with take turns, one batch of calls (about 50 ms) each per
round after a pause, as in run.py; ms are medians over the rounds.

fusion:   a small broadcast operand materialized once (DEFAULT) vs recomputed per element (rules=None)
chain:    (A@B)@x reordered to A@(B@x) (fastmath=True) vs as written (DEFAULT)
layout:   A @ B.T with B.T copied row-major (DEFAULT) vs read strided (rules=None)
tile:     A @ B at 1000^3 (no power-of-two tile divides 1000) with DEFAULT, whose tiling ruleset
          lets the cost model choose the cache tiles among its candidates and the emitter's default,
          vs rules=algebra | fusion | layout: no tile choice in the term, so the emitter tags the
          matmul with lowering.tiling.choose_tiles' default. The et.tiles of each are printed.
rows:     naive softmax 4096x1024 with DEFAULT (the cost model picks rows per block, et.rows = [R])
          vs rules=algebra | fusion | layout (row-fused with the lowering's block: a bare et.rows).
lanes:    np.sum(a * b) over 512x100 (in cache) with DEFAULT (rows of 3 x 32 + 4: the cost model
          picks two vector accumulators, et.lanes = 32) vs rules=algebra | fusion | layout (LLVM's
          own: four, and a vectorized remainder).
streams:  a * 0.3 + b over 4096x4096 (a 64 MiB result) written with non-temporal stores (the
          default, when 64 MiB is at least the host's L3) vs streaming=False; "streamed" shows
          which of the two kernels has them.
exp:      np.exp over 256x1024 float32 (1 MiB: in cache, so the math is what is timed) with glibc's
          libmvec (the same kernel compiled with polymath's exact table emptied: not a user option,
          the design choice measured) vs the inline float32 exp (lowering/stages/math.py, the default);
          exp64: the same over 256x512 float64.
tanh:     gelu over 4096x4096 with libmvec's tanh (as exp above) vs polymath's (the default, its
          loop interleaved by lowering/stages/interleave.py).
fasttanh: the same gelu, DEFAULT vs fastmath=True (polymath's rational tanh, 4 ULP).
"""

from __future__ import annotations

import argparse
import contextlib
import re
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
from run import gelu, machine_numbers, softmax, take_turns

import egglog_tensor as et
from egglog_tensor.lowering.stages import math as polymath
from egglog_tensor.rulesets import algebra, fusion, layout

F32 = np.float32


def tiles(k: et.Kernel, inputs: tuple) -> str:
    """The tiles on the kernel's emitted ops (et.tiles of contractions, et.rows of row loops, et.lanes
    of reductions), "-" if none."""
    linalg = k.inspect(*inputs).stage("linalg")
    found = re.findall(r"et\.tiles = \[([^\]]*)\]", linalg) + re.findall(r"et\.rows = array<i64: ([^>]*)>", linalg)
    found += ["rows"] * len(re.findall(r"et\.rows[,}]", linalg))
    found += [f"lanes {n}" for n in re.findall(r"et\.lanes = (\d+)", linalg)]
    found += ["streamed"] * ("vmovnt" in k.inspect(*inputs).stage("asm"))
    return " ".join(f"[{t}]" for t in found) or "-"


@contextlib.contextmanager
def libmvec_math() -> Iterator[None]:
    """Kernels compiled inside call libmvec's exp/expf and tanhf instead of polymath's inline code."""
    saved = dict(polymath.EXACT)
    polymath.EXACT.clear()
    try:
        yield
    finally:
        polymath.EXACT.update(saved)


def compile_with(fn, target: str, options: dict, inputs: tuple) -> et.Kernel:
    """et.kernel(fn, target, **options) compiled for inputs; the pseudo-option libmvec=True compiles
    it (uncached) with libmvec's exp and tanh."""
    options = dict(options)
    if options.pop("libmvec", False):  # never cached: the cache key does not know polymath's tables
        with libmvec_math():
            k = et.kernel(fn, target=target, cache=False, **options)
            k.inspect(*inputs)
        return k
    return et.kernel(fn, target=target, **options)


def cases(r: np.random.Generator) -> list[tuple[str, Callable[..., Any], tuple, dict, dict]]:
    """(family, function, inputs, options without, options with) of each family, inputs drawn from r."""
    x, b = r.standard_normal((4096, 1024), F32), r.standard_normal(1024, F32)
    A, B, v = r.standard_normal((2048, 2048), F32), r.standard_normal((2048, 2048), F32), r.standard_normal(2048, F32)
    M, N = r.standard_normal((1024, 1024), F32), r.standard_normal((1024, 1024), F32)
    P, Q = r.standard_normal((1000, 1000), F32), r.standard_normal((1000, 1000), F32)
    c, d = r.standard_normal((512, 100), F32), r.standard_normal((512, 100), F32)
    S, T = r.standard_normal((4096, 4096), F32), r.standard_normal((4096, 4096), F32)
    return [
        ("fusion", lambda x, b: x * np.tanh(b) + np.exp(b), (x, b), {"rules": None}, {}),
        ("chain", lambda a, b, v: (a @ b) @ v, (A, B, v), {}, {"fastmath": True}),
        ("layout", lambda a, b: a @ b.T, (M, N), {"rules": None}, {}),
        ("tile", lambda a, b: a @ b, (P, Q), {"rules": algebra | fusion | layout}, {}),
        ("rows", softmax, (x,), {"rules": algebra | fusion | layout}, {}),
        ("lanes", lambda a, b: np.sum(a * b), (c, d), {"rules": algebra | fusion | layout}, {}),
        ("streams", lambda a, b: a * 0.3 + b, (S, T), {"streaming": False}, {}),
        ("exp", lambda a: np.exp(a), (S[:256, :1024].copy(),), {"libmvec": True}, {}),
        ("exp64", lambda a: np.exp(a), (S[:256, :512].astype(np.float64),), {"libmvec": True}, {}),
        ("tanh", gelu, (S,), {"libmvec": True}, {}),
        ("fasttanh", gelu, (S,), {}, {"fastmath": True}),
    ]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--target", default="cpu")
    parser.add_argument("--only", nargs="+", metavar="FAMILY", help="run only these families")
    parser.add_argument("--rounds", type=int, default=9, help="turns numpy, without and with take (run.py's take_turns)")
    args = parser.parse_args()
    r = np.random.default_rng(0)
    m = machine_numbers()
    print(f"copy {m['copy_GBps']:.1f} GB/s, numpy sgemm {m['sgemm_GFLOPs']:.0f} GFLOP/s, target {args.target}")
    families = cases(r)
    print(f"{'family':8s} {'numpy ms':>9s} {'without ms':>11s} {'with ms':>9s} {'with/without':>12s} {'vs numpy':>9s}  tiles without -> with")
    for name, fn, inputs, without, with_ in families:
        if args.only and name not in args.only:
            continue
        runs = {"numpy": lambda: fn(*inputs)}
        k0, k1 = compile_with(fn, args.target, without, inputs), compile_with(fn, args.target, with_, inputs)
        for k in (k0, k1):
            np.testing.assert_allclose(k(*inputs), fn(*inputs), rtol=2e-3, atol=2e-3)
        runs |= {"without": lambda: k0(*inputs), "with": lambda: k1(*inputs)}
        t_np, t0, t1 = (float(np.median(t)) * 1e3 for t in take_turns(runs, args.rounds).values())
        print(f"{name:8s} {t_np:9.3f} {t0:11.3f} {t1:9.3f} {t0 / t1:11.2f}x {t_np / t1:8.2f}x  "
              f"{tiles(k0, inputs)} -> {tiles(k1, inputs)}")


if __name__ == "__main__":
    main()
