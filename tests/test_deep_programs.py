"""Deep and wide programs (issue 26): the DAG-aware extraction (egglog_tensor/extract.py) prices a
shared value once, estimates grow linearly with an unrolled loop's steps, tracing, seeding, extraction
and the program's text need no recursion, and unrolled stencils compile and match NumPy."""

from __future__ import annotations

import sys
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import numpy as np
import pytest

import egglog_tensor as et
from benchmarks.bench_compile import (
    stencil,  # a 5-point Jacobi step unrolled by a Python loop
)
from egglog_tensor.cost import node_time
from egglog_tensor.graph import topological
from egglog_tensor.lowering import policy
from egglog_tensor.target import Target


def chain(links: int) -> Callable[[np.ndarray], np.ndarray]:
    """x * 0.5 + 1.0, `links` times: a program 2 * links nodes deep."""

    def run(x: np.ndarray) -> np.ndarray:
        for _ in range(links):
            x = x * 0.5 + 1.0
        return x

    return run


@contextmanager
def recursion_limit(limit: int) -> Iterator[None]:
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(limit)
    try:
        yield
    finally:
        sys.setrecursionlimit(old)


def test_a_deep_program_compiles_without_recursion() -> None:
    """220 nodes deep, under a recursion limit of 200: trace, seed, rewrite, extract, the traced and
    extracted texts (the cache key), the emitted body of the fused loop all iterate; it matches NumPy."""
    x = np.linspace(-1.0, 1.0, 64)
    with recursion_limit(200):
        traced = et.kernel(chain(110), cache=False).trace(x)
        optimized = traced.optimize()
        texts = traced.traced_term, optimized.as_text("extracted")
        compiled = optimized.lower().compile()
    assert len(topological(list(traced.outputs))) > 220
    assert not optimized.report.fallback and not optimized.report.cut
    assert all(t.count("\n") > 220 for t in texts)  # the listing: one line per node
    np.testing.assert_allclose(compiled(x), chain(110)(x), rtol=1e-15, atol=0)


def test_a_shared_value_is_priced_once() -> None:
    """A diamond: m = a @ b read by two outputs costs m's kernel once; the second reader adds only
    its own elementwise kernel (a tree price would pay the matmul again)."""
    a = np.ones((256, 256), np.float32)
    one = et.kernel(lambda a, b: (a @ b) + 1.0, rules=None, cache=False).trace(a, a)
    two = et.kernel(lambda a, b: ((a @ b) + 1.0, (a @ b) * 2.0), rules=None, cache=False).trace(a, a)
    m, second = two.outputs[0].inputs[0], two.outputs[1]
    target = Target.host()
    matmul = node_time("matmul", m.inputs, m, target)
    extra = two.optimize().report.cost_before - one.optimize().report.cost_before
    assert extra == pytest.approx(node_time("multiply", second.inputs, second, target), rel=0.02)
    assert extra < matmul / 4


def test_estimates_grow_linearly_with_unrolled_steps() -> None:
    """The traced stencil's estimate doubles when its steps double (it grew as 5**steps priced as a tree)."""
    A = np.zeros((32, 32))
    cost = {s: et.kernel(stencil(s), rules=None, cache=False).trace(A).optimize().report.cost_before for s in (4, 8, 16)}
    assert 1.8 < cost[8] / cost[4] < 2.2 and 1.8 < cost[16] / cost[8] < 2.2
    rewritten = {s: et.kernel(stencil(s), cache=False).trace(A).optimize().report for s in (4, 8)}
    assert 1.5 < rewritten[8].cost_after / rewritten[4].cost_after < 2.5
    assert all(r.cost_after <= r.cost_before for r in rewritten.values())


def test_an_extraction_limit_is_reported_and_the_program_stays_correct() -> None:
    """Too few e-node evaluations to extract: the report says what was cut, a warning says the traced
    program is compiled, and it matches NumPy."""
    x = np.linspace(-1.0, 1.0, 16)
    k = et.kernel(chain(20), cache=False, limits=et.Limits(evaluations=10))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        comp = k.inspect(x)
    assert "extraction stopped after 10 e-node evaluations (limit 10)" in comp.report.cut
    assert "EXTRACTION LIMIT HIT" in str(comp.report) and any("unoptimized" in str(w.message) for w in caught)
    np.testing.assert_allclose(k(x), chain(20)(x), rtol=1e-15, atol=0)


@pytest.mark.slow
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_a_64_step_stencil_compiles_and_matches_numpy(dtype: str) -> None:
    A = np.random.default_rng(1).random((128, 128)).astype(dtype)
    got = et.kernel(stencil(64), cache=False)(A.copy())
    np.testing.assert_allclose(got, stencil(64)(A.copy()), rtol=1e-5 if dtype == "float32" else 1e-13, atol=0)


@pytest.mark.slow
def test_a_256_step_stencil_compiles_and_matches_numpy() -> None:
    A = np.random.default_rng(2).random((64, 64))
    got = et.kernel(stencil(256), cache=False)(A.copy())
    np.testing.assert_allclose(got, stencil(256)(A.copy()), rtol=1e-13, atol=0)


def test_a_long_chain_of_updates_is_cut_into_links() -> None:
    """40 in-place updates in a row: the emitter writes every 16th into a buffer of its own and reads it
    back (one-shot bufferization's analysis of one chain grows as its length squared: 128 steps took
    17 s to bufferize, 0.5 s in links); the values are NumPy's."""
    A = np.random.default_rng(3).random((32, 32))
    kernel = et.kernel(stencil(40), cache=False, target="cpu")
    np.testing.assert_allclose(kernel(A.copy()), stencil(40)(A.copy()), rtol=1e-13, atol=0)
    linalg = kernel.inspect(A).stage("linalg")
    assert linalg.count("memref.alloc") == 40 // policy.UPDATE_CHAIN and linalg.count("tensor.insert_slice") == 40
    assert linalg.count("bufferization.to_tensor") == 1 + 40 // policy.UPDATE_CHAIN  # the argument's and each link's


def upwind(q, c, steps):
    for _ in range(steps):
        q = q - c * (q - np.roll(q, 1))
    return q


@pytest.mark.timeout(600)
@pytest.mark.parametrize("steps", [3, 24])
def test_a_time_loop_of_shifted_reads_compiles_in_linear_size(steps: int) -> None:
    """An upwind step repeated (each step reads the last at two offsets, np.roll's): fused whole, the loop body
    computed each earlier step at every offset it reaches (12 steps: 115 s of compilation, 30 steps: out of
    memory). A value of more than SHIFTED_FUSE_MAX ops read at a second index is read from its own kernel's
    buffer: the linalg IR grows linearly with the steps (and matches NumPy)."""
    q = np.random.default_rng(0).standard_normal(256)
    comp = et.kernel(upwind, cache=False).inspect(q, 0.5, steps)
    assert comp.stage("linalg").count("arith.") < 40 * steps
    np.testing.assert_allclose(et.kernel(upwind)(q, 0.5, steps), upwind(q, 0.5, steps), rtol=1e-12, atol=1e-12)
