"""Interleave counts of long elementwise loops (lowering/stages/interleave.py)."""

from __future__ import annotations

import re
from dataclasses import replace

import numpy as np
import pytest

import egglog_tensor as et
from egglog_tensor.lowering.stages import interleave
from egglog_tensor.target import NAMED, Target


def gelu(x):
    return 0.5 * x * (1 + np.tanh(0.7978846 * (x + 0.044715 * x * x * x)))


def counts(comp: et.Kernel) -> list[int]:
    """The interleave counts the LLVM IR asks for, in order."""
    return counts_in(comp.stage("llvm-ir"))


def counts_in(llvm_ir: str) -> list[int]:
    return [int(n) for n in re.findall(r'"llvm\.loop\.interleave\.count", i32 (\d+)', llvm_ir)]


def test_count_grows_with_the_chain_then_shrinks_for_registers_and_short_loops() -> None:
    count = interleave.count
    assert count(interleave.SHORT_CHAIN - 1, None, 16) is None
    assert count(interleave.SHORT_CHAIN, None, 16) == count(interleave.SHORT_CHAIN, 512, 16) == 8
    assert count(interleave.LONG_CHAIN - 1, 1000, 16) == 8
    assert count(interleave.LONG_CHAIN, 1000, 16) == count(200, None, 16) == 4
    assert count(float("inf"), None, 16) is None  # a loop calling a function
    assert count(20, 511, 16) == 4 and count(20, 255, 16) is None and count(20, 255, 8) == 4  # 4 steps of n vectors
    assert count(40, 200, 16) is None and count(40, 256, 16) == 4


@pytest.mark.parametrize("target", ["cpu", "cpu-openmp"])
def test_long_elementwise_loops_interleave_by_their_length(target: str) -> None:
    """On an AVX-512 CPU (lowered, not run: any host) gelu (inline tanh: ~45 ops per element)
    interleaves 4 vectors, exp(x) * 2 (~17) eight (on AVX2, without its exponent instructions, exp
    takes ~23 ops: four), a short chain keeps LLVM's choice; on this host the vector loop really holds
    that many vector stores, and every shape's remainders still compute the right thing."""
    x = np.random.default_rng(0).standard_normal((67, 1000)).astype(np.float32)
    avx512 = replace(NAMED["avx512"], name=target, threads=2 if target == "cpu-openmp" else 1)
    assert lowered_counts(gelu, avx512, x) == [4] and lowered_counts(lambda a: np.exp(a) * 2, avx512, x) == [8]
    assert lowered_counts(lambda a: a * 3 + a, avx512, x) == []
    avx2 = replace(NAMED["avx2"], name=target, threads=2 if target == "cpu-openmp" else 1)
    assert lowered_counts(gelu, avx2, x) == [4] and lowered_counts(lambda a: np.exp(a) * 2, avx2, x) == [4]
    long_chain = et.kernel(gelu, target=target)
    medium = et.kernel(lambda a: np.exp(a) * 2, target=target)
    assert "interleave counts asked of LLVM's vectorizer: 4" in long_chain.inspect(x).summary()
    lanes = 16 if Target.host().has("avx512f") else 8
    blocks = re.split(r"\n(?=\S+:)", long_chain.inspect(x).stage("llvm-ir-optimized"))
    assert max(len(re.findall(rf"store <{lanes} x float>", block)) for block in blocks) == 4  # LLVM's own: 2
    for shape in [(67, 1000), (3, 5), (1, 130), (129, 67)]:
        a = np.random.default_rng(1).standard_normal(shape).astype(np.float32) * 3
        np.testing.assert_allclose(long_chain(a), gelu(a), rtol=2e-6, atol=2e-7)
        np.testing.assert_allclose(medium(a), np.exp(a) * 2, rtol=2e-6)


def lowered_counts(fn, target: Target, *args) -> list[int]:
    """The interleave counts of `fn` lowered for `target` (any CPU: the code is not loaded)."""
    return counts_in(et.kernel(fn, target=target).lower(*args).as_text("llvm-ir"))


def test_short_rows_keep_llvms_count() -> None:
    """A broadcast keeps gelu(x + b) a loop over rows (the flatten stage leaves it): rows of 200
    float32 are fewer than MIN_STEPS steps of 4 zmm vectors (256 elements), so with AVX-512 LLVM
    picks; rows of 256 (or 8-lane AVX2 vectors: 128) are long enough."""
    kernel = et.kernel(lambda x, b: gelu(x + b))
    expected = [] if Target.host().has("avx512f") else [4]
    assert counts(kernel.inspect(np.zeros((200, 200), np.float32), np.zeros(200, np.float32))) == expected
    assert counts(kernel.inspect(np.zeros((200, 256), np.float32), np.zeros(256, np.float32))) == [4]


@pytest.mark.parametrize("target", ["cpu", "cpu-openmp"])
def test_reductions_and_loops_calling_math_are_left_alone(target: str) -> None:
    """A reduction loop (the lanes stage's to annotate) and a loop calling libmvec (the call
    spills whatever is interleaved) come out of the interleave stage unchanged."""
    x = np.random.default_rng(0).standard_normal((512, 100)).astype(np.float32)
    loops = "loops" if target == "cpu" else "parallel-loops"
    for fn in (lambda a, b: np.sum(np.exp(a) * b), lambda a, b: np.sin(a) * 3 + np.cos(b) * 2):
        comp = et.kernel(fn, target=target).inspect(x, x)
        assert comp.stage("interleave") == comp.stage(loops)
