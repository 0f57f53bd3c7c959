"""Elementwise math benchmark: each NumPy math function over a 4096x4096 float32 array, compiled
against NumPy, with the share of the memory roofline reached.

    python benchmarks/bench_math.py                       # 4096^2, cpu-openmp, every function
    python benchmarks/bench_math.py --n 2048 --only floor,log1p --target cpu

Rows named `sp.*` call scipy.special (its [dev] and [bench] extras install SciPy): their "numpy" column is SciPy's
time. "ratio" is NumPy's (SciPy's) time over ours (> 1: faster). "roofline" is bytes / copy bandwidth over our time,
where bytes is the compulsory traffic (each input read once, the output written once) and the copy
bandwidth is measured by the same run (np.copyto over one thread per core); 1.0 is the bound.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable

import numpy as np

os.environ.setdefault("EGGLOG_TENSOR_CACHE", "0")

import egglog_tensor as et  # noqa: E402
from bench_matmul import median_s  # noqa: E402
from egglog_tensor.target import copy_bandwidth  # noqa: E402

UNARY = ("floor ceil trunc rint fabs signbit isnan isinf isfinite deg2rad rad2deg log1p expm1 log2 log10 exp2 "
         "sinh cosh tan arcsin arccos arctan arcsinh arccosh arctanh cbrt").split()
BINARY = "copysign hypot fmod logaddexp logaddexp2 heaviside arctan2 power".split()
COMPOSED: dict[str, Callable[..., np.ndarray]] = {
    "round(x, 2)": lambda x: np.round(x, 2),
    "nan_to_num": lambda x: np.nan_to_num(x),
    "x + arange (made in kernel)": lambda x: x + np.arange(x.shape[1], dtype=np.float32),
}


def _scipy() -> dict[str, Callable[..., np.ndarray]]:
    """scipy.special's functions (tracing/special.py), and the exact GELU of ML code."""
    import scipy.special as sp

    return {"sp.erf": lambda x: sp.erf(x), "sp.erfc": lambda x: sp.erfc(x), "sp.expit": lambda x: sp.expit(x),
            "sp.ndtr": lambda x: sp.ndtr(x), "sp.log_expit": lambda x: sp.log_expit(x),
            "sp.erf gelu": lambda x: 0.5 * x * (1.0 + sp.erf(x * np.float32(0.7071067811865476)))}


def cases() -> dict[str, tuple[Callable[..., np.ndarray], int]]:
    """Name -> (function, operand count)."""
    ufunc = lambda f: (lambda *x: f(*x))  # a plain signature: a ufunc's own has keyword-only parameters
    table = {name: (ufunc(getattr(np, name)), 1) for name in UNARY}
    table.update({name: (ufunc(getattr(np, name)), 2) for name in BINARY})
    table.update({name: (fn, 1) for name, fn in (COMPOSED | _scipy()).items()})
    return table


DOMAINS = {"arcsin": (-0.99, 0.99), "arccos": (-0.99, 0.99), "arctanh": (-0.99, 0.99), "arccosh": (1.0, 10.0),
           "log1p": (0.0, 10.0), "log2": (0.01, 10.0), "log10": (0.01, 10.0), "power": (0.1, 3.0)}  # inside the domain: NaN takes libmvec's slow path


def operand(rng: np.random.Generator, name: str, n: int) -> np.ndarray:
    """Inputs in each function's domain (DOMAINS; the rest: (-3, 3))."""
    return rng.uniform(*DOMAINS.get(name, (-3.0, 3.0)), (n, n)).astype(np.float32)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=4096)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--target", default="cpu-openmp")
    parser.add_argument("--only", default="")
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    bandwidth = copy_bandwidth(os.cpu_count() or 1)
    print(f"{args.n}x{args.n} float32, target {args.target}, copy bandwidth {bandwidth:.1f} GB/s")
    print(f"{'function':<30}{'numpy ms':>10}{'ours ms':>10}{'ratio':>8}{'roofline':>10}")
    chosen = set(args.only.split(",")) if args.only else None
    for name, (fn, arity) in cases().items():
        if chosen and name not in chosen:
            continue
        xs = [operand(rng, name, args.n) for _ in range(arity)]
        kernel = et.kernel(fn, target=args.target)
        got, want = kernel(*xs), fn(*xs)
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6, equal_nan=True, err_msg=name)
        ours = median_s(lambda: kernel(*xs), args.repeats)
        numpy = median_s(lambda: fn(*xs), args.repeats)
        traffic = sum(x.nbytes for x in xs) + np.asarray(want).nbytes
        roofline = traffic / (bandwidth * 1e9) / ours
        print(f"{name:<30}{numpy * 1e3:>10.2f}{ours * 1e3:>10.2f}{numpy / ours:>8.2f}{roofline:>10.2f}")


if __name__ == "__main__":
    main()
