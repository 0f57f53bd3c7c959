"""et.Machine.measure / calibrated: the cost model's numbers timed with the project's kernels, kept per host."""

from __future__ import annotations

import json
import math

import pytest

import egglog_tensor as et
from egglog_tensor import calibrate


def test_measure_times_each_number_on_its_own_kernel(monkeypatch):
    seen = []
    real = calibrate._rate

    def rate(fn, args, target, **options):
        seen.append((args[0].shape, target.threads))
        return real(fn, args, target, **options)

    monkeypatch.setattr(calibrate, "_rate", rate)
    m = et.Machine.measure(threads=2, kernel_overhead_ns=123.0)
    # a 16-element call (the overhead), the chain, exp, log and sum in L2, the GEMM and its two transposed forms,
    # the smaller GEMMs of its size classes, a transposed copy and a plain one
    shapes = sorted(s for s, _ in seen)
    assert shapes == sorted([(16,)] + [(2 * calibrate.IN_CACHE,)] * 4 + [(1024, 1024)] * 5 + [(64, 64), (256, 256)]) and {t for _, t in seen} == {2}
    assert [n for n, _ in m.gemm_sizes] == list(calibrate.GEMM_SIZES) and all(math.isfinite(r) and r > 0 for _, r in m.gemm_sizes)
    for value in (m.gflops, m.gemm_gflops, m.bandwidth_gbs, m.inline_math_flops, m.transcendental_flops, m.reduction_flops):
        assert math.isfinite(value) and value > 0
    assert m.inline_math_flops >= 1.0 and m.kernel_overhead_ns == 123.0  # (overrides kept)
    assert m.transcendental_flops >= 1.0 and m.reduction_flops >= 1.0 and m.transposed_copy_slowdown >= 1.0
    assert m.gemm_strided_b_slowdown >= 1.0 and m.gemm_strided_a_slowdown >= 1.0


def test_calibrated_measures_once_per_host_and_keeps_it(monkeypatch, tmp_path):
    monkeypatch.setenv("EGGLOG_TENSOR_CACHE_DIR", str(tmp_path))
    made = et.Machine(gflops=11.0, gemm_gflops=22.0, bandwidth_gbs=33.0, transcendental_flops=44.0, gemm_sizes=((64, 5.0), (1024, 20.0)))
    monkeypatch.setattr(calibrate, "measure", lambda threads: made)
    assert et.Machine.calibrated(2) == made
    (stored,) = tmp_path.glob("machine/*.json")
    assert json.loads(stored.read_text())["gemm_gflops"] == 22.0

    def fail(threads):
        raise AssertionError("measured again")

    monkeypatch.setattr(calibrate, "measure", fail)
    assert et.Machine.calibrated(2) == made  # read back
    stored.write_text("{not json")
    with pytest.raises(AssertionError, match="measured again"):  # a damaged file is measured anew
        et.Machine.calibrated(2)


def test_gemm_rates_by_size_price_small_products_at_their_own_rate():
    """Machine.gemm_sizes: a product's rate interpolated in log n between the measured sizes (the nearest end's outside,
    gemm_gflops without any); the cost model prices a matmul with it (a machine four times slower at 64^3 and as fast
    at 1024^3 prices a 64^3 product about four times dearer and a 1024^3 one the same); scaled with the threads."""
    import numpy as np

    m = et.Machine(gemm_sizes=[[64, 10.0], [1024, 160.0]])  # (as read back from JSON)
    assert m.gemm_sizes == ((64, 10.0), (1024, 160.0)) and hash(m) == hash(et.Machine(gemm_sizes=((64, 10.0), (1024, 160.0))))
    assert m.gemm_rate(64, 64, 64) == 10.0 and m.gemm_rate(8, 8, 8) == 10.0 and m.gemm_rate(4096, 4096, 4096) == 160.0
    assert m.gemm_rate(256, 256, 256) == pytest.approx(40.0) and m.gemm_rate(64, 1024, 256) == pytest.approx(40.0)
    assert et.Machine(gemm_gflops=7.0).gemm_rate(64, 64, 64) == 7.0
    assert m.for_threads(4).gemm_sizes == ((64, 20.0), (1024, 320.0))
    flat = et.Machine(gemm_sizes=((64, 160.0), (1024, 160.0)))
    slow_small = et.Machine(gemm_sizes=((64, 40.0), (1024, 160.0)))

    def estimate(machine, n):
        a = np.ones((n, n), np.float32)
        return et.kernel(lambda a, b: a @ b, cache=False, target="cpu", machine=machine).inspect(a, a).report.cost_after

    overhead = et.Machine().kernel_overhead_ns
    assert (estimate(slow_small, 64) - overhead) == pytest.approx(4 * (estimate(flat, 64) - overhead), rel=0.05)
    assert estimate(slow_small, 1024) == pytest.approx(estimate(flat, 1024), rel=1e-6)
