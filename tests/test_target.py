"""The Target (egglog_tensor/target.py): the host as LLVM and sysfs describe it, and the tile policy
and tiling rules' candidates for machines described by a Target of their own."""

from __future__ import annotations

from egglog_tensor.lowering import tiling
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
    assert tiling.register_tile(4, wide) == (8, 32) and tiling.register_tile(4, narrow) == (6, 16)
    assert tiling.simd_lanes(8, wide) == 8 and tiling.simd_lanes(8, narrow) == 4
    for target in (wide, narrow):
        tm, tn, tk = tiling.choose_tiles("linalg.matmul", (1024, 1024, 1024), 4, target).tiles
        mr, nr = tiling.register_tile(4, target)
        assert tk * nr * 4 <= target.l1 // 2 and tm * tk * 4 <= target.l2 // 3 and tn == 4 * nr
    assert candidates(4, wide) != candidates(4, narrow)
    assert all(tk * 32 * 4 <= NAMED["avx512"].l1 for _, _, tk in candidates(4, wide))
