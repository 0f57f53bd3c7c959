"""Einsum benchmark: an einsum-spelled matmul against `@` (they trace to one term, so they should
time the same), a batched matrix-vector product `bij,bj->bi` against its `@` form and NumPy, and
3- and 4-operand einsum chains and general (non-chain) contractions against NumPy's
`np.einsum(..., optimize=True)`. The einsum-vs-`@` and general rows time both sides in turns.

    python benchmarks/bench_einsum.py                 # matmul 512 and 1024, chains, cpu
    python benchmarks/bench_einsum.py --repeats 5 --target cpu-openmp

Median of repeats after a warm-up call (which compiles); "ratio" is NumPy's time over ours (>1: faster).
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

os.environ.setdefault("EGGLOG_TENSOR_CACHE", "0")

import egglog_tensor as et  # noqa: E402
from bench_matmul import median_s  # noqa: E402

CHAINS = {  # subscripts: operand shapes (skewed, so the order matters)
    "ij,jk,kl->il": [(1000, 20), (20, 1000), (1000, 30)],
    "ij,jk,kl,lm->im": [(800, 50), (50, 800), (800, 10), (10, 800)],
    "bij,bjk,bk->bi": [(16, 128, 128), (16, 128, 128), (16, 128)],
}


GENERAL = {  # contractions not in chain form: transposes + reshapes + one (batched) matmul, against NumPy's BLAS path
    "abc,cd->abd": [(64, 256, 512), (512, 512)],
    "ijk,jkl->il": [(512, 64, 32), (64, 32, 512)],
    "abc,bd->acd": [(256, 512, 64), (512, 256)],
    "bij,bjk->bki": [(32, 256, 256), (32, 256, 256)],
}


def interleaved_s(fns: list, repeats: int) -> list[float]:
    """Median seconds of each function, timed in turns (so a busy machine's load hits each alike)."""
    for fn in fns:
        fn()
    times: list[list[float]] = [[] for _ in fns]
    for _ in range(repeats):
        for fn, ts in zip(fns, times):
            t = time.perf_counter()
            fn()
            ts.append(time.perf_counter() - t)
    return [float(np.median(ts)) for ts in times]


def contraction(spec: str):
    """The kernel function computing np.einsum(spec, ...)."""
    return lambda *x: np.einsum(spec, *x)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=9)
    parser.add_argument("--target", default="cpu")
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    print(f"{'case':<36}{'ours ms':>10}{'other ms':>10}{'ratio':>8}")
    at_kernel = et.kernel(lambda a, b: a @ b, target=args.target)
    es_kernel = et.kernel(lambda a, b: np.einsum("ij,jk->ik", a, b), target=args.target)
    for n in (512, 1024):
        a, b = rng.standard_normal((n, n), np.float32), rng.standard_normal((n, n), np.float32)
        es, at = interleaved_s([lambda: es_kernel(a, b), lambda: at_kernel(a, b)], args.repeats)
        print(f"{f'einsum ij,jk->ik {n} (vs @)':<36}{es * 1e3:>10.2f}{at * 1e3:>10.2f}{at / es:>8.2f}")
    matvec = et.kernel(contraction("bij,bj->bi"), target=args.target)
    a, x = rng.standard_normal((64, 512, 512), np.float32), rng.standard_normal((64, 512), np.float32)
    ours = median_s(lambda: matvec(a, x), args.repeats)
    at = median_s(lambda: a @ x[..., None], args.repeats)
    numpy = median_s(lambda: np.einsum("bij,bj->bi", a, x), args.repeats)
    print(f"{'bij,bj->bi 64x512x512 (vs NumPy @)':<36}{ours * 1e3:>10.2f}{at * 1e3:>10.2f}{at / ours:>8.2f}")
    print(f"{'bij,bj->bi 64x512x512 (vs NumPy)':<36}{ours * 1e3:>10.2f}{numpy * 1e3:>10.2f}{numpy / ours:>8.2f}")
    for spec, shapes in CHAINS.items():
        ops = [rng.standard_normal(s, np.float32) for s in shapes]
        kernel = et.kernel(contraction(spec), target=args.target)
        ours = median_s(lambda: kernel(*ops), args.repeats)
        numpy = median_s(lambda: np.einsum(spec, *ops, optimize=True), args.repeats)
        print(f"{spec + ' (vs NumPy)':<36}{ours * 1e3:>10.2f}{numpy * 1e3:>10.2f}{numpy / ours:>8.2f}")
    for spec, shapes in GENERAL.items():
        ops = [rng.standard_normal(s, np.float32) for s in shapes]
        kernel = et.kernel(contraction(spec), target=args.target)
        ours, numpy = interleaved_s([lambda: kernel(*ops), lambda: np.einsum(spec, *ops, optimize=True)], args.repeats)
        print(f"{spec + ' (vs NumPy optimize=True)':<36}{ours * 1e3:>10.2f}{numpy * 1e3:>10.2f}{numpy / ours:>8.2f}")


if __name__ == "__main__":
    main()
