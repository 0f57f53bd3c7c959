"""SciPy's compiled functions that a kernel traces (tracing/scipy_spatial.py, scipy_ndimage.py) against SciPy's own C:
cdist over row pairs, ndimage filters over an image. "ratio" is SciPy's time over ours (> 1: faster).

    python benchmarks/bench_scipy.py                      # cdist 2000x1000x64, 2000^2 images, cpu-openmp
    python benchmarks/bench_scipy.py --only "gaussian_filter s=2" --target cpu
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable

import numpy as np

os.environ.setdefault("EGGLOG_TENSOR_CACHE", "0")

import egglog_tensor as et  # noqa: E402
from bench_matmul import median_s  # noqa: E402


def cases(n: int) -> dict[str, tuple[Callable[..., np.ndarray], tuple[np.ndarray, ...]]]:
    """Name -> (function, operands): float64 unless the name says float32."""
    import scipy.ndimage as nd
    import scipy.spatial.distance as dist

    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((n, 64)), rng.standard_normal((n // 2, 64))
    image = rng.standard_normal((n, n))
    table: dict[str, tuple[Callable[..., np.ndarray], tuple[np.ndarray, ...]]] = {
        f"cdist {m}": ((lambda m: lambda a, b: dist.cdist(a, b, m))(m), (a, b)) for m in ("euclidean", "cityblock", "cosine", "chebyshev")}
    filters = {"gaussian_filter s=2": lambda x: nd.gaussian_filter(x, 2.0), "uniform_filter 5": lambda x: nd.uniform_filter(x, 5),
               "sobel": lambda x: nd.sobel(x), "laplace": lambda x: nd.laplace(x), "maximum_filter 3": lambda x: nd.maximum_filter(x, 3)}
    for name, fn in filters.items():
        table[name] = (fn, (image,))
        table[f"{name} float32"] = (fn, (image.astype(np.float32),))
    return table


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--target", default="cpu-openmp")
    parser.add_argument("--only", default="")
    args = parser.parse_args()
    chosen = set(args.only.split(",")) if args.only else None
    print(f"n {args.n}, target {args.target}, {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}")
    print(f"{'function':<28}{'scipy ms':>10}{'ours ms':>10}{'ratio':>8}")
    for name, (fn, xs) in cases(args.n).items():
        if chosen and name not in chosen:
            continue
        kernel = et.kernel(fn, target=args.target)
        np.testing.assert_allclose(kernel(*xs), fn(*xs), rtol=1e-5, atol=1e-5, err_msg=name)
        ours, scipy = median_s(lambda: kernel(*xs), args.repeats), median_s(lambda: fn(*xs), args.repeats)
        print(f"{name:<28}{scipy * 1e3:>10.2f}{ours * 1e3:>10.2f}{scipy / ours:>8.2f}")


if __name__ == "__main__":
    main()
