"""NPBench-style code runs unchanged (issue 25): kernels in tests/npstyle_kernels.py, each compiled and
compared with the same function under NumPy, on the return value and on every argument afterwards.

Tolerances: 0 for int results and for code whose every value is one IEEE-rounded op; rtol 1e-12 for
float64 sums, products and contractions of a few dozen terms (the summation order may differ from
NumPy's: about n*eps*cond); math functions (exp, tanh, sqrt of sums) within a few ULP, covered too."""

from __future__ import annotations

import numpy as np
import pytest

import egglog_tensor as et
import npstyle_kernels as nk

RNG = np.random.default_rng(2025)
SLOW = [pytest.mark.slow]  # 20-40 s: thousands of unrolled scalar updates


def rand(*shape: int) -> np.ndarray:
    """Standard-normal float64 test data."""
    return RNG.standard_normal(shape)


def spd(n: int) -> np.ndarray:
    """A well-conditioned symmetric positive definite matrix (for LU and Cholesky)."""
    a = rand(n, n)
    return a @ a.T + n * np.eye(n)


def gpt2_weights(c: int) -> dict:
    """One GPT-2 block's weights by gpt2_block's parameter names (width c)."""
    shapes = {"ln1_g": (c,), "ln1_b": (c,), "w_qkv": (c, 3 * c), "b_qkv": (3 * c,), "w_proj": (c, c), "b_proj": (c,),
              "ln2_g": (c,), "ln2_b": (c,), "w_fc": (c, 4 * c), "b_fc": (4 * c,), "w_out": (4 * c, c), "b_out": (c,)}
    return {k: (1 if k.endswith("_g") else 0) + 0.3 * rand(*s) for k, s in shapes.items()}


def f32(args: tuple) -> tuple:
    """The float64 array arguments as float32 (Python numbers stay weak scalars)."""
    return tuple(a.astype(np.float32) if isinstance(a, np.ndarray) and a.dtype == np.float64 else a for a in args)


def copies(args: tuple) -> list:
    """Fresh copies of the array arguments, the rest as is."""
    return [np.copy(a) if isinstance(a, np.ndarray) else a for a in args]


def as_tuple(r) -> tuple:
    """A result as a tuple of outputs (None: no outputs)."""
    return () if r is None else r if isinstance(r, tuple) else (r,)


def check(fn, args: tuple, rtol: float, atol: float = 0.0) -> None:
    """fn compiled gives NumPy's result and leaves every argument as NumPy's run of fn leaves it."""
    mine, theirs = copies(args), copies(args)
    got, want = et.kernel(fn)(*mine), fn(*theirs)
    for g, w in zip(as_tuple(got), as_tuple(want), strict=True):
        assert np.asarray(g).dtype == np.asarray(w).dtype
        np.testing.assert_allclose(g, w, rtol=rtol, atol=atol)
    for g, w in zip(mine, theirs, strict=True):
        if isinstance(w, np.ndarray):
            np.testing.assert_allclose(g, w, rtol=rtol, atol=atol)


N = 8
CASES = {
    # name: (kernel, arguments, rtol, atol, marks)
    "jacobi_1d": (nk.jacobi_1d, (4, rand(12), rand(12)), 1e-15, 0, []),
    "jacobi_2d": (nk.jacobi_2d, (3, rand(N, N), rand(N, N)), 1e-15, 0, []),
    "jacobi_2d_local": (nk.jacobi_2d_local, (3, N, rand(N, N)), 1e-15, 0, []),
    "heat_3d": (nk.heat_3d, (3, rand(6, 6, 6), rand(6, 6, 6)), 1e-14, 1e-15, []),
    "fdtd_2d": (nk.fdtd_2d, (3, rand(6, 7), rand(6, 7), rand(6, 7), rand(3)), 1e-14, 1e-15, []),
    "seidel_2d": (nk.seidel_2d, (3, 6, rand(6, 6)), 1e-14, 1e-15, SLOW),
    "adi": (nk.adi, (2, 6, rand(6, 6)), 1e-13, 1e-15, SLOW),
    "deriche": (nk.deriche, (0.25, rand(6, 7)), 1e-12, 1e-14, []),
    "vadv_columns": (nk.vadv_columns, (6, 3.0, rand(2, 3, 6), 4 + rand(2, 3, 6), rand(2, 3, 6), rand(2, 3, 6)),
                     1e-12, 1e-14, []),
    "gemver": (nk.gemver, (1.5, 1.2, rand(N, N), *(rand(N) for _ in range(8))), 1e-12, 1e-13, []),
    "gesummv": (nk.gesummv, (1.5, 1.2, rand(N, N), rand(N, N), rand(N)), 1e-12, 1e-14, []),
    "atax": (nk.atax, (rand(N, N + 2), rand(N + 2)), 1e-12, 1e-13, []),
    "bicg": (nk.bicg, (rand(N, N + 2), rand(N + 2), rand(N)), 1e-12, 1e-14, []),
    "mvt": (nk.mvt, (rand(N), rand(N), rand(N), rand(N), rand(N, N)), 1e-12, 1e-14, []),
    "syrk": (nk.syrk, (1.5, 1.2, rand(6, 6), rand(6, 4)), 1e-12, 1e-14, []),
    "syr2k": (nk.syr2k, (1.5, 1.2, rand(6, 6), rand(6, 4), rand(6, 4)), 1e-12, 1e-14, []),
    "2mm": (nk.k2mm, (1.5, 1.2, rand(5, 6), rand(6, 7), rand(7, 4), rand(5, 4)), 1e-12, 1e-13, []),
    "3mm": (nk.k3mm, (rand(5, 6), rand(6, 7), rand(7, 8), rand(8, 4)), 1e-12, 1e-13, []),
    "doitgen": (nk.doitgen, (3, 4, 5, rand(3, 4, 5), rand(5, 5)), 1e-12, 1e-14, []),
    "covariance": (nk.covariance, (5, 7.0, rand(7, 5)), 1e-12, 1e-14, []),
    "correlation": (nk.correlation, (5, 7.0, rand(7, 5)), 1e-12, 1e-14, []),
    "gramschmidt": (nk.gramschmidt, (rand(6, 4),), 1e-12, 1e-14, []),
    "trisolv": (nk.trisolv, (np.tril(rand(N, N)) + 4 * np.eye(N), rand(N), rand(N)), 1e-12, 1e-14, []),
    "trisolv_local": (nk.trisolv_local, (N, np.tril(rand(N, N)) + 4 * np.eye(N), rand(N)), 1e-12, 1e-14, []),
    "lu": (nk.lu, (6, spd(6)), 1e-12, 1e-14, SLOW),
    "cholesky": (nk.cholesky, (spd(6),), 1e-12, 1e-14, []),
    "durbin": (nk.durbin, (0.1 * rand(N),), 1e-12, 1e-14, []),
    "ludcmp": (nk.ludcmp, (6, spd(6), rand(6)), 1e-12, 1e-14, []),
    "nussinov": (nk.nussinov, (7, RNG.integers(0, 4, 7).astype(np.int32)), 0, 0, []),
    "views_written": (nk.views_written, (rand(6, 4),), 1e-15, 0, []),
    "floyd_warshall": (nk.floyd_warshall, (N, RNG.integers(1, 100, (N, N))), 0, 0, []),
    "floyd_warshall_local": (nk.floyd_warshall_local, (N, RNG.integers(1, 100, (N, N))), 0, 0, []),
    "adam_step": (nk.adam_step, (3, 1e-3, 0.9, 0.999, 1e-8, rand(4, 5), rand(4, 5), rand(4, 5), np.abs(rand(4, 5))),
                  1e-13, 0, []),
    "adam_inplace": (nk.adam_inplace, (3, 1e-3, 0.9, 0.999, 1e-8, rand(4, 5), rand(4, 5), rand(4, 5),
                                       np.abs(rand(4, 5))), 1e-13, 0, []),
    "rbf_kernel": (nk.rbf_kernel, (rand(6, 3), rand(5, 3), 0.5), 1e-12, 1e-15, []),
    "pairwise_distances": (nk.pairwise_distances, (rand(6, 3), rand(5, 3)), 1e-14, 0, []),
    "kmeans_assign": (nk.kmeans_assign, (rand(20, 3), rand(4, 3)), 0, 0, []),
    "kmeans_step": (nk.kmeans_step, (4, rand(20, 3), rand(4, 3)), 1e-13, 1e-15, []),
    "cumulative_trapezoid": (nk.cumulative_trapezoid, (rand(17), 0.1), 1e-12, 1e-15, []),
    # 10^5 steps: |error| <= n * eps * sum(|y| dx) ~ 2e-7, NumPy's own order being sequential too
    "cumulative_trapezoid_big": (nk.cumulative_trapezoid, (rand(100_000), 0.1), 0, 2e-7, []),
    "gpt2_block": (nk.gpt2_block, (2, rand(5, 8), 1 + 0.1 * rand(8), 0.1 * rand(8), 0.3 * rand(8, 24), 0.1 * rand(24),
                                   0.3 * rand(8, 8), 0.1 * rand(8), 1 + 0.1 * rand(8), 0.1 * rand(8),
                                   0.3 * rand(8, 32), 0.1 * rand(32), 0.3 * rand(32, 8), 0.1 * rand(8)), 1e-11, 1e-13, []),
    "gpt2_forward": (nk.gpt2_forward, (2, [3, 1, 4, 1, 5], 0.3 * rand(11, 8), 0.1 * rand(5, 8), [gpt2_weights(8), gpt2_weights(8)],
                                       {"g": 1 + 0.1 * rand(8), "b": 0.1 * rand(8)}), 1e-11, 1e-13, []),
    "llama_block": (nk.llama_block, (2, rand(5, 8), 1 + 0.1 * rand(8), *(0.3 * rand(8, 8) for _ in range(4)),
                                     1 + 0.1 * rand(8), 0.3 * rand(8, 16), 0.3 * rand(16, 8), 0.3 * rand(8, 16)),
                    1e-11, 1e-13, []),
}
# float32 data: float32 results where NumPy keeps float32 (rtol: a few float32 ULP through exp, sums of <= 32 terms);
# gpt2_block_f32 in the default run, the others in the slow run
CASES.update({f"{k}_f32": (CASES[k][0], f32(CASES[k][1]), 2e-5, 1e-6, CASES[k][4] if k == "gpt2_block" else SLOW)
              for k in ("gpt2_block", "llama_block", "rbf_kernel", "adam_step", "cumulative_trapezoid", "kmeans_assign",
                        "deriche", "jacobi_2d_local", "fdtd_2d")})


@pytest.mark.parametrize("name", [pytest.param(k, marks=v[4]) for k, v in CASES.items()])
def test_kernel(name: str) -> None:
    fn, args, rtol, atol, _ = CASES[name]
    check(fn, args, rtol, atol)


@pytest.mark.parametrize(("fn", "args", "message"), [
    (nk.jacobi_2d_local, (3, 10, rand(8, 8)), r"shapes \(7, 7\) and \(7, 8\) cannot be broadcast"),
    (nk.trisolv_local, (10, np.eye(8), np.ones(8)), "index 8 is out of bounds for axis 0 with size 8"),
    (nk.floyd_warshall_local, (9, np.ones((8, 8), dtype=np.int64)), "index 8 is out of bounds for axis 1 with size 8"),
])
def test_size_argument_not_matching_the_arrays(fn, args: tuple, message: str) -> None:
    """An int size argument larger than the arrays: a TracingError naming the kernel's line, where NumPy raises."""
    with pytest.raises(et.TracingError, match=message) as info:
        et.kernel(fn)(*args)
    assert "npstyle_kernels.py" in str(info.value)


def test_nussinov_with_python_s_max_names_np_maximum() -> None:
    """NPBench's nussinov as written calls Python's max on traced values: each a guard, past the limit a clear error."""
    with pytest.raises(et.UnsupportedError, match=r"Python's max\(a, b\) and min\(a, b\) of traced values.*np.maximum"):
        et.kernel(nk.nussinov, static_argnames=("builtin_max",))(10, RNG.integers(0, 4, 10).astype(np.int32), builtin_max=True)
