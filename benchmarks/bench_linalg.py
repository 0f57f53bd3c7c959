"""Dense linear algebra benchmark (issue 25): np.linalg.solve and inv of a 200 x 200 float64 matrix, inv of a
stack of 1000 4 x 4 matrices and solve at 1000 x 1000, against NumPy (LAPACK) and the installed peers, with the
roofline as benchmarks/run.py reports it (LU's 2/3 n^3 flops and the substitutions' at NumPy's sgemm rate); and
eigh, svd, qr of a 200 x 200 float64 matrix and eigh of a stack of 1000 3 x 3 (no roofline: Jacobi's sweeps), each followed by the product of its factors.

    python benchmarks/bench_linalg.py                  # every case, 9 rounds
    OPENBLAS_NUM_THREADS=1 python benchmarks/bench_linalg.py --only solve_200 --rounds 5
"""

from __future__ import annotations

import os

import numpy as np

os.environ.setdefault("EGGLOG_TENSOR_CACHE", "0")

from run import Workload, run_cases


def solve_200(a, b):
    return np.linalg.solve(a, b)


def inv_200(a):
    return np.linalg.inv(a)


def inv_stack(a):
    return np.linalg.inv(a)


def solve_1000(a, b):
    return np.linalg.solve(a, b)


def _matrices(shape: tuple[int, ...]):
    """Well-conditioned float64 matrices of `shape` (a random one plus 2 sqrt(n) I), and a right-hand side."""
    n = shape[-1]
    return lambda r: (r.standard_normal(shape) + 2 * n**0.5 * np.eye(n), r.standard_normal(n))[: 2 if len(shape) == 2 else 1]


def _flops(inputs: tuple[np.ndarray, ...]) -> float:
    """LU's 2/3 n^3 per matrix, and 2 n^2 per right-hand side (n of them for inv)."""
    a = inputs[0]
    n, matrices = a.shape[-1], a.size // a.shape[-1] ** 2
    return matrices * (2 / 3 * n**3 + 2 * n**2 * (1 if len(inputs) == 2 else n))


CASES = {
    solve_200: _matrices((200, 200)),
    inv_200: lambda r: _matrices((200, 200))(r)[:1],
    inv_stack: _matrices((1000, 4, 4)),
    solve_1000: _matrices((1000, 1000)),
}


def eigh_200(a):  # each factorization returns its product (one array whose values do not depend on the vectors' signs)
    w, v = np.linalg.eigh(a)
    return (v * w[..., None, :]) @ np.swapaxes(v, -1, -2)


def svd_200(a):
    u, s, vh = np.linalg.svd(a)
    return (u * s) @ vh


def qr_200(a):
    q, r = np.linalg.qr(a)
    return q @ r


def eigh_stack(a):
    return eigh_200(a)


def _symmetric(shape: tuple[int, ...]):
    """Random symmetric float64 matrices of `shape` (a + a^T)."""
    return lambda r: (lambda a: (a + np.swapaxes(a, -1, -2),))(r.standard_normal(shape))


ORTHOGONAL = {
    eigh_200: _symmetric((200, 200)),
    svd_200: lambda r: (r.standard_normal((200, 200)),),
    qr_200: lambda r: (r.standard_normal((200, 200)),),
    eigh_stack: _symmetric((1000, 3, 3)),
}


if __name__ == "__main__":
    run_cases(__doc__, [Workload(fn, make, _flops) for fn, make in CASES.items()] + [Workload(fn, make) for fn, make in ORTHOGONAL.items()])
