"""Float sums stay within c·ε·log2(n) of the exact sum at any size, layout and thread count.

The inputs are cheap: np.full and broadcast (stride-0) views, whose exact sums are known; each
size here is one where a single accumulation chain (the code before lowering/blocking.py) was
off by 1e-4 to 0.84.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from fuzz_oracle import SUM_BOUND, check_result, evaluate
from fuzz_programs import Program, Step

import egglog_tensor as et
from egglog_tensor.lowering import blocking

C = 1.0  # docs/accuracy.md's bound: relative error <= C * eps * log2(n) for same-sign sums (measured max 0.31)
V = float(np.float32(0.1))  # the value every element holds (exact in float32 and float64)
V64 = 0.1  # float64 sums of V are exact (24-bit values): float64 tests use all 53 bits


def _bound(n: int, dtype: type) -> float:
    return C * float(np.finfo(dtype).eps) * math.log2(n)


def _check(got: np.ndarray | np.generic, exact: float, n: int, dtype: type) -> None:
    rel = np.max(np.abs(np.asarray(got, np.float64) - exact)) / abs(exact)
    assert rel <= _bound(n, dtype), f"relative error {rel:.3g} > {_bound(n, dtype):.3g} (n = {n})"


def _views(rows: int, cols: int, dtype: type) -> dict[str, np.ndarray]:
    """One logical (rows, cols) array of V in each memory layout the compiler distinguishes."""
    c = np.full((rows, cols), V, dtype)
    wide = np.full((rows, 2 * cols), V, dtype)
    return {
        "C": c,
        "F": np.asfortranarray(c),
        "strided": wide[:, ::2],
        "negative": c[::-1, ::-1],
        "broadcast": np.broadcast_to(dtype(V), (rows, cols)),
    }


@pytest.mark.slow
@pytest.mark.parametrize("target", ["cpu", "cpu-openmp"])
@pytest.mark.parametrize("layout", ["C", "F", "strided", "negative", "broadcast"])
def test_sums_of_2_24_float32_in_every_layout(target: str, layout: str) -> None:
    """Full sums, means and both single-axis sums of 2^24 float32 values."""
    rows, cols = 4096, 4096
    x = _views(rows, cols, np.float32)[layout]
    n = rows * cols
    fns = {
        "sum": (lambda a: np.sum(a), n * V, n),
        "mean": (lambda a: np.mean(a), V, n),
        "axis0": (lambda a: np.sum(a, axis=0), rows * V, rows),
        "axis1": (lambda a: np.sum(a, axis=1), cols * V, cols),
    }
    for fn, exact, count in fns.values():
        _check(et.kernel(fn, target=target)(x), exact, count, np.float32)


@pytest.mark.slow
@pytest.mark.parametrize("target", ["cpu", "cpu-openmp"])
def test_sum_of_2_30_broadcast_float32(target: str) -> None:
    """2^30 elements of a stride-0 view (no memory): a single chain stopped at 2^24 here."""
    n = 1 << 30
    b = np.broadcast_to(np.float32(V), (1 << 15, 1 << 15))
    _check(et.kernel(lambda a: a.sum(), target=target)(b), n * V, n, np.float32)


@pytest.mark.slow
@pytest.mark.parametrize("target", ["cpu", "cpu-openmp"])
def test_sum_of_2_28_float32(target: str) -> None:
    """The issue's first row: 2^28 float32 values of 0.1 (1 GiB), full sum and mean."""
    x = np.full((1 << 16, 4096), V, np.float32)
    _check(et.kernel(lambda a: a.sum(), target=target)(x), x.size * V, x.size, np.float32)
    _check(et.kernel(lambda a: a.mean(axis=(0, 1)), target=target)(x), V, x.size, np.float32)


@pytest.mark.parametrize("target", ["cpu", "cpu-openmp"])
def test_float64_sums(target: str) -> None:
    def exact(n: int) -> float:
        return float(Fraction(V64) * n)

    x = np.full((4096, 4096), V64, np.float64)
    _check(et.kernel(lambda a: a.sum(), target=target)(x), exact(x.size), x.size, np.float64)
    _check(et.kernel(lambda a: a.sum(axis=0), target=target)(x), exact(4096), 4096, np.float64)
    b = np.broadcast_to(np.float64(V64), (1 << 12, 1 << 14))
    _check(et.kernel(lambda a: a.sum(), target=target)(b), exact(b.size), b.size, np.float64)


@pytest.mark.parametrize("shape,axes", [((3, 1 << 20), (1,)), ((1 << 20, 3), (0,)), ((64, 64, 4099), (0, 2)),
                                        ((4099, 7, 129), (0, 1, 2)), ((1000003,), (0,))])
def test_odd_shapes_and_axis_sets(shape: tuple[int, ...], axes: tuple[int, ...]) -> None:
    """Tails past the last full block, several reduced axes around a kept one, a prime length."""
    x = np.broadcast_to(np.float32(V), shape)
    n = math.prod(shape[a] for a in axes)
    _check(et.kernel(lambda a: np.sum(a, axis=axes))(x), n * V, n, np.float32)


def test_fused_producer_random_data() -> None:
    """sum(a*b) over random same-sign data against math.fsum, and the thread count changes the
    result by no more than the bound."""
    rng = np.random.default_rng(0)
    a, b = rng.random((2048, 3000), np.float32), rng.random((2048, 3000), np.float32)
    exact = math.fsum((a.astype(np.float64) * b.astype(np.float64)).ravel())
    one, two = (et.kernel(lambda a, b: np.sum(a * b), target="cpu-openmp", threads=t)(a, b) for t in (1, 2))
    _check(one, exact, a.size, np.float32)
    _check(two, exact, a.size, np.float32)


@pytest.mark.parametrize("shape,axes,unit_stride", [((1 << 16, 4096), (0, 1), True), ((1 << 16, 4096), (0,), True),
                                                    ((1 << 30,), (0,), False), ((4099, 7, 129), (0, 1, 2), True),
                                                    ((3, 1 << 20), (1,), True), ((5, 3), (0, 1), True)])
def test_plan_bounds_every_chain(shape: tuple[int, ...], axes: tuple[int, ...], unit_stride: bool) -> None:
    """Each step adds at most about 2·CHAIN values into an accumulator lane (a block plus its
    tail), long vector loops pin their lanes, and the step count is logarithmic."""
    vf = 16
    steps = blocking.plan(shape, axes, unit_stride, vf)
    n = math.prod(shape[a] for a in axes)
    assert len(steps) <= math.ceil(math.log(n, blocking.CHAIN)) + 2
    reduced = tuple(sorted(axes))
    for k, step in enumerate(steps):
        inner = len(shape) - 1
        vector = (unit_stride or k > 0) and inner in reduced and shape[inner] >= 2 * vf
        lanes = (step.lanes or vf) if vector else 1
        assert step.lanes is None or shape[inner] > blocking.CHAIN * vf
        chain = 1
        for a in step.axes:
            chain *= math.ceil(shape[a] / lanes) + lanes.bit_length() - 1 if a == inner and vector else shape[a]
        if step.block:
            chain *= 2 * step.block[1] // (lanes if step.block[0] == inner else 1)
        assert chain <= 2 * blocking.CHAIN + 8, (k, step, chain)
        shape, reduced = step.result(shape, reduced)
    assert not reduced


def test_fuzz_oracle_rejects_a_single_accumulation_chain() -> None:
    """The fuzzer's bound for sums is the blocked one: a linear float32 sum of 2^20 values (the
    accumulation before blocking) fails it, the exact sum rounded once passes."""
    n = 1 << 20
    x = np.full(n, np.float32(V))
    program = Program(((x.shape, "float32"),), (Step("reduce", (0,), ("sum", None, False)),), (1,))
    want = evaluate(program, [x])
    check_result(np.float32(n * V), want)
    with pytest.raises(AssertionError):
        check_result(np.cumsum(x, dtype=np.float32)[-1], want)
    assert SUM_BOUND * math.log2(n) < n
