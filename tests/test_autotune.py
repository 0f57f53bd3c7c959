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
    def in_turns(kernel, comps, args, kwargs, rounds=5):
        return tuple(Timing(1.0, m, rounds) for m in measured[:len(comps)])
    return in_turns


def test_every_candidate_is_timed_and_the_kernel_stays_right():
    f = et.kernel(layer, target="cpu")
    tuned = f.autotune(A, B, C, k=3, again=True)
    assert len(tuned.names) == 3 and all(t.measured_ns > 0 for t in tuned.timings)
    assert tuned.names[0] == "the cost model's choice" and tuned.names[1].startswith("extracted alternative 1 (")
    assert tuned.names[2].startswith("matmul tiles (")
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


def test_an_extracted_alternative_is_chosen_compiled_and_reused(monkeypatch):
    """The e-graph's next-cheapest program (not only other options) can win: it is called from then on,
    and a later kernel compiles it again from the record without timing."""
    monkeypatch.setattr(autotune, "_in_turns", _faked([100.0, 50.0, 95.0, 99.0, 98.0]))
    f = et.kernel(layer, target="cpu")
    tuned = f.autotune(A, B, C, k=5, again=True)
    assert tuned.chosen == tuned.names[1] and tuned.chosen.startswith("extracted alternative 1 (estimated ")
    model = et.kernel(layer, target="cpu").inspect(A, B, C)
    chosen = f.inspect(A, B, C)
    assert chosen.extracted_term != model.extracted_term and chosen.report.cost_after >= model.report.cost_after
    np.testing.assert_allclose(f(A, B, C), layer(A, B, C), rtol=1e-4, atol=1e-4)
    monkeypatch.setattr(autotune, "_in_turns", _faked([]))
    g = et.kernel(layer, target="cpu")
    assert g.autotune(A, B, C, k=5).chosen == tuned.chosen and g.inspect(A, B, C).extracted_term == chosen.extracted_term


def test_alternatives_are_distinct_programs_priced_in_order():
    """`Traced.optimize(alternatives=k)`: programs other than the cheapest and each other, each priced at
    least the cheapest's estimate, cheapest first, each compiling to NumPy's result."""
    optimized = et.kernel(layer, target="cpu").trace(A, B, C).optimize(alternatives=3)
    others = optimized.alternatives
    assert len(others) == 3
    terms = [o.extracted_term for o in (optimized, *others)]
    assert len(set(terms)) == len(terms)
    costs = [o.report.cost_after for o in (optimized, *others)]
    assert costs == sorted(costs)
    for other in others:
        np.testing.assert_allclose(other.lower().compile()(A, B, C), layer(A, B, C), rtol=1e-4, atol=1e-4)


def test_autotune_option_tunes_at_the_first_call_of_a_signature(monkeypatch):
    """`@kernel(autotune=True)`: the first call times the candidates (once per signature) and returns
    the right result; a kernel writing into its argument is timed on copies, so the caller's array is
    written once, as by one call."""
    calls = []

    def counted(kernel, comps, args, kwargs, rounds=5):
        calls.append(len(comps))
        for c in comps:
            kernel.call_compilation(c, args, kwargs)
        return tuple(Timing(1.0, 100.0 - i, rounds) for i in range(len(comps)))

    monkeypatch.setattr(autotune, "_in_turns", counted)
    f = et.kernel(layer, target="cpu", autotune=True)
    np.testing.assert_allclose(f(A, B, C), layer(A, B, C), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(f(A, B, C), layer(A, B, C), rtol=1e-4, atol=1e-4)
    assert len(calls) == 1 and f.inspect(A, B, C).tuned is not None

    def bump(x):
        x += 1.0
        return x * 2.0

    x = np.zeros(64, np.float32)
    g = et.kernel(bump, target="cpu", autotune=True)
    np.testing.assert_array_equal(g(x), np.full(64, 2.0, np.float32))
    assert np.all(x == 1.0) and g.inspect(np.zeros(64, np.float32)).tuned is not None
