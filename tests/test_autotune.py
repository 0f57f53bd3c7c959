"""Kernel.autotune: candidates timed on the call's arguments, the fastest kept and recorded."""

from __future__ import annotations

import numpy as np
import pytest

import egglog_tensor as et
from egglog_tensor import autotune
from egglog_tensor.measure import Timing

rng = np.random.default_rng(0)
A, B, C = rng.standard_normal((256, 256), np.float32), rng.standard_normal((256, 256), np.float32), rng.standard_normal(256, np.float32)


def layer(a, b, c):
    return np.maximum(a @ b + c, 0.0)


def _faked(measured: list[float]):
    def in_turns(kernels, args, kwargs, rounds=5):
        return tuple(Timing(1.0, m, rounds) for m in measured[:len(kernels)])
    return in_turns


def test_every_candidate_is_timed_and_the_kernel_stays_right():
    f = et.kernel(layer, target="cpu")
    tuned = f.autotune(A, B, C, k=3)
    assert len(tuned.names) == 3 and all(t.measured_ns > 0 for t in tuned.timings)
    assert tuned.names[0] == "the cost model's choice" and tuned.names[1].startswith("matmul tiles (")
    assert tuned.chosen in tuned.names
    np.testing.assert_allclose(f(A, B, C), layer(A, B, C), rtol=1e-4, atol=1e-4)
    comp = f.inspect(A, B, C)
    assert comp.tuned is tuned and "autotuned: " in comp.summary()


def test_the_fastest_is_kept_recorded_and_reused(monkeypatch):
    monkeypatch.setattr(autotune, "_in_turns", _faked([100.0, 90.0, 50.0, 95.0]))
    f = et.kernel(layer, target="cpu")
    tuned = f.autotune(A, B, C, k=4)
    assert tuned.chosen == tuned.names[2]
    tiles = tuple(int(t) for t in tuned.chosen.split("(")[1].split(")")[0].split(","))
    assert f.inspect(A, B, C).options.target.tuning.matmul_tiles == tiles  # calls use the chosen compilation
    np.testing.assert_allclose(f(A, B, C), layer(A, B, C), rtol=1e-4, atol=1e-4)

    def untimed(*args, **kwargs):
        raise AssertionError("timed again")

    monkeypatch.setattr(autotune, "_in_turns", untimed)
    g = et.kernel(layer, target="cpu")  # another kernel, as in a later process: the recorded choice
    again = g.autotune(A, B, C, k=4)
    assert again.chosen == tuned.chosen and again.timings == (None,) * 4
    assert g.inspect(A, B, C).options.target.tuning.matmul_tiles == tiles
    with pytest.raises(AssertionError, match="timed again"):
        g.autotune(A, B, C, k=4, again=True)


def test_within_the_noise_margin_the_model_keeps_its_choice(monkeypatch):
    monkeypatch.setattr(autotune, "_in_turns", _faked([100.0, 97.0, 99.0]))
    f = et.kernel(layer, target="cpu")
    assert f.autotune(A, B, C, k=3, again=True).chosen == "the cost model's choice"
    assert f.inspect(A, B, C).options.target.tuning.matmul_tiles is None
