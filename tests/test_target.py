"""The Target (egglog_tensor/target.py): the host as LLVM and sysfs describe it, and the tile policy
and tiling rules' candidates for machines described by a Target of their own."""

from __future__ import annotations

import re
from dataclasses import replace

import numpy as np
import pytest

import egglog_tensor as et
from egglog_tensor.lowering import policy
from egglog_tensor.lowering.llvm import check_runs_here
from egglog_tensor.lowering.pipelines import resolve_target
from egglog_tensor.rulesets.tiling import candidates
from egglog_tensor.target import NAMED, Target, llvm_host


def test_host_is_what_llvm_reports() -> None:
    host = Target.host()
    _, cpu, features = llvm_host()
    assert (host.cpu, host.features) == (cpu, features)
    assert host.simd == (64 if host.has("avx512f") else 32 if host.has("avx2") or host.has("avx") else 16)
    assert host.l1 <= host.l2 <= host.l3 and host.line in (32, 64, 128)
    assert Target.host() is host  # asked once


def test_has_reads_whole_features() -> None:
    target = Target(features="+avx2,-avx512f,+fma")
    assert target.has("avx2") and target.has("fma") and not target.has("avx512f") and not target.has("avx")


def test_tile_policy_follows_the_target() -> None:
    """An AVX-512 machine gets 8 x 32 float32 register tiles (32 zmm registers), an AVX2 one 6 x 16
    (16 ymm); cache tiles follow each one's L1 and L2, whatever the host is."""
    wide, narrow = NAMED["avx512"], NAMED["avx2"]
    assert policy.register_tile(4, wide) == (8, 32) and policy.register_tile(4, narrow) == (6, 16)
    assert policy.simd_lanes(8, wide) == 8 and policy.simd_lanes(8, narrow) == 4
    for target in (wide, narrow):
        tm, tn, tk = policy.choose_tiles("linalg.matmul", (1024, 1024, 1024), 4, target).tiles
        mr, nr = policy.register_tile(4, target)
        assert tk * nr * 4 <= target.l1 // 2 and tm * tk * 4 <= target.l2 // 3 and tn == 4 * nr
    assert candidates(4, wide) != candidates(4, narrow)
    assert all(tk * 32 * 4 <= NAMED["avx512"].l1 for _, _, tk in candidates(4, wide))


def test_a_kernel_compiles_for_the_target_it_is_given() -> None:
    """A named AVX2 machine's Target reaches every stage: its tiling rules' candidates in the term,
    its register tiles in the linalg, ymm code only (on any host that runs AVX2 code), its label in
    the summary; a Target is part of the options and the compilation cache's key."""
    avx2 = replace(NAMED["avx2"], name="cpu-openmp", threads=2)
    a = np.random.default_rng(0).standard_normal((256, 256)).astype(np.float32)
    fn = lambda a, b: np.tanh(a @ b) + a.sum(axis=1, keepdims=True)  # noqa: E731
    k = et.kernel(fn, target=avx2)
    if NAMED["avx2"].missing_on(Target.host()):
        with pytest.raises(et.CompileError, match="cannot run on this machine"):
            k(a, a)
        return
    np.testing.assert_allclose(k(a, a), fn(a, a), rtol=1e-4, atol=1e-3)
    comp = k.inspect(a, a)
    assert k.options.target == avx2 and "cpu-openmp (2 threads) on znver2" in comp.summary()
    tm, tn, tk = (int(t) for t in re.search(r"matmul_tiled\(.*?, Vec\((\d+), (\d+), (\d+)\)\)", comp.extracted_term).groups())
    assert (tm, tn, tk) in candidates(4, NAMED["avx2"])
    assert "et.vec = [6, 16, 1]" in comp.stage("linalg")  # AVX2's register tile, not the host's
    assert "zmm" not in comp.stage("asm") and "ymm" in comp.stage("asm")
    assert et.kernel(fn, target=avx2).options != et.kernel(fn, target=replace(avx2, l2=avx2.l2 * 2)).options


def test_code_for_a_cpu_this_machine_lacks_features_of_is_refused() -> None:
    """Calling code compiled for features the host lacks would die on an illegal instruction: it is
    a CompileError naming what is missing."""
    alien = replace(Target.host(), features=Target.host().features + ",+no-such-isa-feature")
    assert alien.missing_on(Target.host()) == ["no-such-isa-feature"]
    assert NAMED["avx2"].missing_on(NAMED["avx512"]) == [] and "avx512f" in NAMED["avx512"].missing_on(NAMED["avx2"])
    with pytest.raises(et.CompileError, match="lacks no-such-isa-feature"):
        check_runs_here(alien)


def test_resolve_target() -> None:
    """A pipeline name means this machine; threads only apply to cpu-openmp; the default machine numbers
    are scaled to the threads, a Target's own machine is kept, and so are its threads unless given;
    machine= replaces its throughputs; bad values are refused."""
    host = Target.host()
    assert resolve_target("cpu", 4) == replace(host, name="cpu", threads=1, machine=et.Machine().for_threads(1))
    assert resolve_target("cpu-openmp", 3) == replace(host, name="cpu-openmp", threads=3, machine=et.Machine().for_threads(3))
    mine = resolve_target(replace(NAMED["avx2"], name="cpu-openmp", threads=5))
    assert mine.threads == 5 and mine.machine == et.Machine().for_threads(5)
    assert resolve_target(mine) == mine and resolve_target(mine, 2).threads == 2
    assert resolve_target(mine, machine=et.Machine(gflops=1.0)).machine.gflops == 1.0
    measured = replace(host, machine=et.Machine(gflops=7.0))
    assert resolve_target(measured, 4).machine == et.Machine(gflops=7.0)


def test_default_machine_scales_with_threads() -> None:
    """Machine()'s numbers are the reference machine's with REFERENCE_THREADS threads: FLOP rates scale in
    proportion to the threads, the copy bandwidth as threads ** BANDWIDTH_EXPONENT, ratios and overhead not."""
    from egglog_tensor.target import BANDWIDTH_EXPONENT, REFERENCE_THREADS

    base = et.Machine()
    assert base.for_threads(REFERENCE_THREADS) == base
    one, eight = base.for_threads(1), base.for_threads(8)
    assert one.gflops == pytest.approx(base.gflops / REFERENCE_THREADS) and eight.gemm_gflops == pytest.approx(base.gemm_gflops * 4)
    assert one.bandwidth_gbs == pytest.approx(base.bandwidth_gbs * (1 / REFERENCE_THREADS) ** BANDWIDTH_EXPONENT)
    assert one.bandwidth_gbs < base.bandwidth_gbs < eight.bandwidth_gbs < 4 * base.bandwidth_gbs
    assert (one.kernel_overhead_ns, one.transcendental_flops) == (base.kernel_overhead_ns, base.transcendental_flops)
    # the cost model prices a one-thread target's work slower than the two-thread default's
    from egglog_tensor.cost import TensorCostModel
    assert TensorCostModel(resolve_target("cpu")).machine.gflops < TensorCostModel(resolve_target("cpu-openmp", 2)).machine.gflops
    for bad, message in [(("gpu",), "unknown target 'gpu'"), ((3,), "target must be"), (("cpu", 0), "threads must be"),
                         (("cpu", None, {}), "machine must be")]:
        with pytest.raises(ValueError, match=message):
            resolve_target(*bad)
