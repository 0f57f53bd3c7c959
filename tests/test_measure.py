"""Kernel.measure: the cost model's estimate beside the measured time, kept for inspect."""

from __future__ import annotations

import numpy as np

import egglog_tensor as et


def test_measure_reports_the_estimate_and_a_time_that_grows_with_the_work():
    f = et.kernel(lambda x: np.exp(x) * 2.0 + x)
    small, big = np.ones((16, 16), np.float32), np.ones((1024, 1024), np.float32)
    t_small, t_big = f.measure(small, min_time=0.05), f.measure(big, min_time=0.05)
    comp = f.inspect(big)
    assert t_big.estimated_ns == comp.report.cost_after > 0
    assert t_big.ratio == t_big.estimated_ns / t_big.measured_ns
    # 4096 times the elements: far more than the call overhead both share, whatever the machine's noise
    assert t_big.measured_ns > 20 * t_small.measured_ns
    assert t_big.batches >= 5
    assert comp.timing is t_big and str(t_big) in comp.summary()
    assert "measured" not in f.inspect(np.ones((8, 8), np.float32)).summary()  # (not measured yet)
