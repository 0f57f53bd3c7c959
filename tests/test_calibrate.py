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
    # a transposed copy and a plain one
    shapes = sorted(s for s, _ in seen)
    assert shapes == sorted([(16,)] + [(2 * calibrate.IN_CACHE,)] * 4 + [(1024, 1024)] * 5) and {t for _, t in seen} == {2}
    for value in (m.gflops, m.gemm_gflops, m.bandwidth_gbs, m.inline_math_flops, m.transcendental_flops, m.reduction_flops):
        assert math.isfinite(value) and value > 0
    assert m.inline_math_flops >= 1.0 and m.kernel_overhead_ns == 123.0  # (overrides kept)
    assert m.transcendental_flops >= 1.0 and m.reduction_flops >= 1.0 and m.transposed_copy_slowdown >= 1.0
    assert m.gemm_strided_b_slowdown >= 1.0 and m.gemm_strided_a_slowdown >= 1.0


def test_calibrated_measures_once_per_host_and_keeps_it(monkeypatch, tmp_path):
    monkeypatch.setenv("EGGLOG_TENSOR_CACHE_DIR", str(tmp_path))
    made = et.Machine(gflops=11.0, gemm_gflops=22.0, bandwidth_gbs=33.0, transcendental_flops=44.0)
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
