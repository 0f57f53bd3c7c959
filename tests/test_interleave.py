"""Interleave counts of long elementwise loops (lowering/interleave.py)."""

from __future__ import annotations

import re

import numpy as np
import pytest

import egglog_tensor as et
from egglog_tensor.lowering import interleave
from egglog_tensor.lowering.llvm import host_has


def gelu(x):
    return 0.5 * x * (1 + np.tanh(0.7978846 * (x + 0.044715 * x * x * x)))


def counts(comp: et.Kernel) -> list[int]:
    """The interleave counts the LLVM IR asks for, in order."""
    return [int(n) for n in re.findall(r'"llvm\.loop\.interleave\.count", i32 (\d+)', comp.stage("llvm-ir"))]


def test_count_grows_with_the_chain_then_shrinks_for_registers() -> None:
    assert interleave.count(interleave.SHORT_CHAIN - 1) is None
    assert interleave.count(interleave.SHORT_CHAIN) == 8
    assert interleave.count(interleave.LONG_CHAIN - 1) == 8
    assert interleave.count(interleave.LONG_CHAIN) == interleave.count(200) == 4
    assert interleave.count(float("inf")) is None  # a loop calling a function


@pytest.mark.parametrize("target", ["cpu", "cpu-openmp"])
def test_long_elementwise_loops_interleave_by_their_length(target: str) -> None:
    """gelu (inline tanh: ~45 ops per element) interleaves 4 vectors, exp(x) * 2 (~17) eight, a
    short chain keeps LLVM's choice; the vector loop really holds that many vector stores, and
    every shape's remainders still compute the right thing."""
    x = np.random.default_rng(0).standard_normal((67, 1000)).astype(np.float32)
    long_chain = et.kernel(gelu, target=target)
    medium = et.kernel(lambda a: np.exp(a) * 2, target=target)
    short = et.kernel(lambda a: a * 3 + a, target=target)
    assert counts(long_chain.inspect(x)) == [4]
    assert counts(medium.inspect(x)) == [8]
    assert counts(short.inspect(x)) == []
    lanes = 16 if host_has("avx512f") else 8
    blocks = re.split(r"\n(?=\S+:)", long_chain.inspect(x).stage("llvm-ir-optimized"))
    assert max(len(re.findall(rf"store <{lanes} x float>", block)) for block in blocks) == 4  # LLVM's own: 2
    for shape in [(67, 1000), (3, 5), (1, 130), (129, 67)]:
        a = np.random.default_rng(1).standard_normal(shape).astype(np.float32) * 3
        np.testing.assert_allclose(long_chain(a), gelu(a), rtol=2e-6, atol=2e-7)
        np.testing.assert_allclose(medium(a), np.exp(a) * 2, rtol=2e-6)


@pytest.mark.parametrize("target", ["cpu", "cpu-openmp"])
def test_reductions_and_loops_calling_math_are_left_alone(target: str) -> None:
    """A reduction loop (lowering/lanes.py's to annotate) and a loop calling libmvec (the call
    spills whatever is interleaved) come out of the interleave stage unchanged."""
    x = np.random.default_rng(0).standard_normal((512, 100)).astype(np.float32)
    loops = "loops" if target == "cpu" else "parallel-loops"
    for fn in (lambda a, b: np.sum(np.exp(a) * b), lambda a, b: np.sin(a) * 3 + np.cos(b) * 2):
        comp = et.kernel(fn, target=target).inspect(x, x)
        assert comp.stage("interleave") == comp.stage(loops)
