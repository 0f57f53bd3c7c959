"""Several contractions in one kernel: each is tiled on its own (lowering/tiling.py's et.id), whatever
tags, shapes, operands or outputs they share (issue 22: two products with equal tiles stopped the tile stage)."""

from __future__ import annotations

import numpy as np
import pytest

import egglog_tensor as et

pytestmark = pytest.mark.slow  # minutes long: .ci/run runs it after the default run

TARGETS = ["cpu", "cpu-openmp"]
DTYPES = [np.float32, np.float64]
SHAPES = {"A": (50, 35), "B": (50, 35), "C": (50, 50), "S": (35, 35), "x": (35,)}

# The programs of issue 22 (A, B 50x35, C 50x50, S 35x35, x a vector; the argument names are the
# shapes'); syr2k passed in float32 only, the last one in both.
ISSUE_PROGRAMS = {
    "syr2k": lambda C, A, B: 1.2 * C + 1.5 * (A @ B.T + B @ A.T),
    "sum": lambda A, B: A @ B.T + B @ A.T,
    "two-outputs": lambda A, B: (A @ B.T, B @ A.T),
    "chain-epilogue": lambda A, S: np.maximum(A @ S @ S.T, 0),
    "product": lambda A, B: (A @ B.T) * (B @ A.T),
    "gram": lambda A, B: A.T @ A + B.T @ B,
    "epilogue-chain": lambda A, S: np.maximum(A @ S, 0) @ S,
    "three": lambda A, B, S: A @ S + B @ S + A @ S.T,
    "matvec-broadcast": lambda A, S, x: A @ S + (A @ x)[:, None],
}


def _args(shapes: list[tuple[int, ...]], dtype: type, seed: int = 0) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(s).astype(dtype) for s in shapes]


def _assert_matches(fn, args: list[np.ndarray], target: str) -> None:
    """The kernel's result(s) against NumPy's, to the dtype's tolerance scaled by the longest reduction."""
    got, want = et.kernel(fn, target=target)(*args), fn(*args)
    tol = 1e-4 if args[0].dtype == np.float32 else 1e-10
    scale = max(max(a.shape) for a in args)
    for g, w in zip(got if isinstance(got, tuple) else (got,), want if isinstance(want, tuple) else (want,), strict=True):
        assert g.shape == w.shape and g.dtype == w.dtype
        np.testing.assert_allclose(g, w, rtol=tol, atol=tol * scale)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("name", ISSUE_PROGRAMS)
def test_issue_programs(name: str, dtype: type, target: str) -> None:
    fn = ISSUE_PROGRAMS[name]
    names = fn.__code__.co_varnames[: fn.__code__.co_argcount]
    _assert_matches(fn, _args([SHAPES[n] for n in names], dtype), target)


def _products(count: int):
    """(x0 @ x1, x2 @ x3, ...): `count` products, each an output, a function of 2 * count arguments."""
    return lambda *xs: tuple(xs[2 * i] @ xs[2 * i + 1] for i in range(count))


# Float32 products n = 40 columns wide (one register tile of 32 and a remainder of 8, vectorized at its
# own width, which takes one matmul at a time): products matched together by equal tags fail there.
MANY = {  # name: (function, argument shapes)
    "3-equal": (_products(3), [(20, 30), (30, 40)] * 3),
    "6-equal": (_products(6), [(12, 20), (20, 40)] * 6),
    "4-different-equal-tiles": (_products(4), [(20, 256), (256, 40), (20, 384), (384, 40), (12, 100), (100,), (20, 200), (200,)]),
    "5-chain": (lambda a, b, c, d, e, f: np.tanh(a @ b @ c @ d @ e @ f), [(40, 40)] * 6),
    "4-shared-operands": (lambda a, b: (a @ b, b @ a, a @ a, b @ b), [(40, 40)] * 2),
    "3-kinds-twice": (lambda a, b, x, y, u, v: (a @ x + b @ y, u @ a + v @ b, np.dot(x, y) + np.dot(y, x), a @ b.T + b @ a.T),
                      [(40, 100), (40, 100), (100,), (100,), (40,), (40,)]),
    "3-batched": (lambda a, b, c: a @ b + b @ c + c @ a, [(3, 16, 16)] * 3),
}


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("name", MANY)
def test_many_products(name: str, target: str) -> None:
    fn, shapes = MANY[name]
    _assert_matches(fn, _args(shapes, np.float32, seed=1), target)


LARGE = {  # each product takes a different path of the tile stage; two of each, equal shapes
    "packed-panels": (lambda a, b, c, d: a @ b + c @ d, [(256, 256)] * 4),
    "panel-epilogues": (lambda a, b, c, d: (np.tanh(a @ b), np.maximum(c @ d, 0)), [(256, 256)] * 4),
    "padded": (lambda a, b, c, d: a @ b - c @ d, [(100, 100)] * 4),
    "matvec-epilogues": (lambda a, b, c, x: (a @ b) @ x + (c @ b) @ x, [(128, 128)] * 3 + [(128,)]),
}


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("name", LARGE)
def test_two_large_products_of_each_kind(name: str, target: str) -> None:
    fn, shapes = LARGE[name]
    _assert_matches(fn, _args(shapes, np.float32, seed=2), target)
