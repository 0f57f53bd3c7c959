"""Reduction, scan and sort benchmark (issue 24): argmax, cumsum and var over a 4096x4096 float32 array,
along axis 0, axis 1 and flattened, any/all of a data check (scikit-learn's isfinite guard), sort and
argsort along rows and flattened, against NumPy, with the memory roofline as benchmarks/run.py
reports it (the input read once and the output written once, at the copy bandwidth it measures).

    python benchmarks/bench_reductions.py              # every case, 9 rounds
    python benchmarks/bench_reductions.py --only cumsum_rows,argmax_flat --rounds 5

argmax_scaled_rows and argmax_softmax_rows argmax a fused elementwise operand along rows. var_cols_wide is
var_cols of the same 67 MB as 64 x 262144: column strips of whole pages fit in L2 (lowering/stages/strips.py).
"""

from __future__ import annotations

import os

import numpy as np

os.environ.setdefault("EGGLOG_TENSOR_CACHE", "0")

from run import Workload, run_cases

N = 4096


def argmax_cols(x):
    return np.argmax(x, axis=0)


def argmax_rows(x):
    return np.argmax(x, axis=1)


def argmax_flat(x):
    return np.argmax(x)


def argmax_scaled_rows(x):
    return np.argmax(x * np.float32(0.5) + np.float32(1.0), axis=1)


def argmax_softmax_rows(x):
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return np.argmax(e / e.sum(axis=1, keepdims=True), axis=1)


def cumsum_cols(x):
    return np.cumsum(x, axis=0)


def cumsum_rows(x):
    return np.cumsum(x, axis=1)


def cumsum_flat(x):
    return np.cumsum(x)


def var_cols(x):
    return np.var(x, axis=0)


def var_cols_wide(x):
    return np.var(x, axis=0)


def var_rows(x):
    return np.var(x, axis=1)


def var_flat(x):
    return np.var(x)


def isfinite_all(x):
    return np.isfinite(x).all()


def isnan_any(x):
    return np.isnan(x).any()


def sort_rows(x):
    return np.sort(x, axis=1)


def sort_flat(x):
    return np.sort(x, axis=None)


def argsort_flat(x):
    return np.argsort(x, axis=None, kind="stable")  # (ours is stable: NumPy's default quicksort orders ties otherwise)


CASES = (argmax_cols, argmax_rows, argmax_flat, argmax_scaled_rows, argmax_softmax_rows, cumsum_cols, cumsum_rows, cumsum_flat, var_cols, var_cols_wide, var_rows,
         var_flat, isfinite_all, isnan_any, sort_rows, sort_flat, argsort_flat)


if __name__ == "__main__":
    SHAPES = {var_cols_wide: (64, N * N // 64)}
    run_cases(__doc__, [Workload(fn, lambda r, shape=SHAPES.get(fn, (N, N)): (r.standard_normal(shape, np.float32),)) for fn in CASES])
