"""Relative error of large sums and contractions against the exact result, NumPy beside us.

    python benchmarks/accuracy.py            # 2^28-element sums (1 GiB float32; about a minute)
    python benchmarks/accuracy.py --log2 24  # smaller

Inputs hold one value (np.full or a stride-0 broadcast view), so the exact result is n·v.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from fractions import Fraction

import numpy as np

import egglog_tensor as et


def _rel(got: object, exact: float) -> float:
    return float(np.max(np.abs(np.asarray(got, np.float64) - exact))) / abs(exact)


def cases(log2: int) -> list[tuple[str, Callable, tuple[np.ndarray, ...], float]]:
    """(label, function, arguments, exact result) per row of the table."""
    v32, v64 = Fraction(float(np.float32(0.1))), Fraction(0.1)
    rows = 1 << (log2 - 12)
    x = np.full((rows, 4096), np.float32(0.1))
    x64 = np.full((rows // 4, 4096), 0.1)
    b = np.broadcast_to(np.float32(0.1), (rows, 4096))
    k = 1 << (log2 - 8)
    A, y = np.full((64, k), np.float32(0.1)), np.full(k, np.float32(0.1))
    C, B = np.full((64, k >> 4), np.float32(0.1)), np.full((k >> 4, 64), np.float32(0.1))
    n = x.size
    return [
        (f"float32 x.sum(), {x.shape}", lambda a: a.sum(), (x,), float(v32 * n)),
        (f"float32 x.mean(), {x.shape}", lambda a: a.mean(), (x,), float(v32)),
        (f"float32 x.sum(axis=1), {x.shape}", lambda a: a.sum(axis=1), (x,), float(v32 * 4096)),
        (f"float32 x.sum(axis=0), {x.shape}", lambda a: a.sum(axis=0), (x,), float(v32 * rows)),
        (f"float32 broadcast b.sum(), {b.shape}", lambda a: a.sum(), (b,), float(v32 * n)),
        (f"float64 x.sum(), {x64.shape}", lambda a: a.sum(), (x64,), float(v64 * x64.size)),
        (f"float32 A @ y, A {A.shape}", lambda a, c: a @ c, (A, y), float(v32 * v32 * k)),
        (f"float32 C @ B, k = {C.shape[1]}", lambda a, c: a @ c, (C, B), float(v32 * v32 * C.shape[1])),
        (f"float32 y @ y, {y.shape}", lambda a: a @ a, (y,), float(v32 * v32 * k)),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--log2", type=int, default=28, help="log2 of the element count of the sums")
    parser.add_argument("--target", default=None, help="cpu or cpu-openmp (default: the kernel's default)")
    args = parser.parse_args()
    options = {"target": args.target} if args.target else {}
    print("| program | NumPy | egglog_tensor |\n|---|---|---|")
    for label, fn, inputs, exact in cases(args.log2):
        ours = et.kernel(fn, cache=False, **options)(*inputs)
        print(f"| {label} | {_rel(fn(*inputs), exact):.2g} | {_rel(ours, exact):.2g} |", flush=True)


if __name__ == "__main__":
    main()
