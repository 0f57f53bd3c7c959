"""Guards (issue 25; egglog_tensor/guards.py): Python control flow and int()/float()/.item() on a traced data value
take the value it has for the call's arguments (its sub-program compiled and run while tracing), the kernel
checks the value before each later call runs, and traces again (keeping both specializations) when it differs."""

from __future__ import annotations

import importlib
import json
import warnings

import numpy as np
import pytest

import egglog_tensor as et

kernel_module = importlib.import_module("egglog_tensor.kernel")  # (not yet imported when this file runs alone: et.kernel is lazy)
core = importlib.import_module("egglog_tensor.tracing.core")


def counted(fn):
    """A kernel of fn and the list each trace of it appends to."""
    traces: list[int] = []

    def traced(*args):
        traces.append(1)
        return fn(*args)

    traced.__name__ = fn.__name__
    return et.kernel(traced), traces


def validated(X):
    """scikit-learn's _assert_all_finite (assume_finite=False): a branch on whether the data has NaN or inf."""
    if not np.isfinite(X).all():
        raise ValueError("Input contains NaN or infinity")
    return X * 2.0 + 1.0


def test_the_finite_check_compiles_raises_the_users_error_and_reuses_the_first_specialization() -> None:
    k, traces = counted(validated)
    X = np.arange(12, dtype=np.float32).reshape(3, 4)
    np.testing.assert_array_equal(k(X), validated(X))
    assert len(traces) == 1
    bad = X.copy()
    bad[1, 2] = np.nan
    with pytest.raises(ValueError, match="Input contains NaN or infinity"):
        k(bad)
    assert len(traces) == 2
    np.testing.assert_array_equal(k(X + 3), validated(X + 3))  # the first specialization's guard holds: no trace
    assert len(traces) == 2 and len(k.compilations) == 1
    (guard,) = k.inspect(X).guards
    assert (guard.kind, guard.value) == ("bool", True) and "test_guards.py" in guard.where and "isfinite" in guard.where
    assert "guards (checked before each call runs" in k.inspect(X).summary()
    assert "Traced for data where bool() of the value at" in k.inspect(X).explain()


def test_a_guard_program_and_a_kernel_of_the_same_term_are_cached_apart() -> None:
    """A kernel returning np.isfinite(X).all() (one 0-d result) and the guard program computing the same value (a
    tuple of results) share a term: the on-disk cache keeps them apart (a hit had handed the guard a bare scalar)."""
    X = np.arange(12, dtype=np.float32).reshape(3, 4)
    assert et.kernel(lambda X: np.isfinite(X).all())(X) is np.True_
    np.testing.assert_array_equal(et.kernel(validated)(X), validated(X))


def normalized(x):
    if x.max() > 1:
        x = x / x.max()
    return x - 0.5


def test_a_branch_on_the_data_takes_both_ways_one_specialization_each() -> None:
    k, traces = counted(normalized)
    small, large = np.linspace(0, 1, 8), np.linspace(0, 5, 8)
    for x in (small, large, small, large):
        np.testing.assert_allclose(k(x), normalized(x), rtol=1e-15)
    assert len(traces) == 2 and len(k.compilations) == 2
    assert [c.guards[0].value for c in k.compilations] == [False, True]


def bincount(idx, w):
    n = int(idx.max()) + 1  # a data value that decides a shape
    return ((idx[:, None] == np.arange(n)) * w[:, None]).sum(axis=0)


def test_int_of_a_data_value_decides_a_shape() -> None:
    k, traces = counted(bincount)
    w = np.linspace(1, 2, 6)
    for idx in (np.array([0, 2, 1, 2, 0, 3]), np.array([4, 0, 1, 1, 0, 2]), np.array([1, 3, 3, 0, 0, 0])):
        got = k(idx, w)
        np.testing.assert_allclose(got, np.bincount(idx, w), rtol=1e-15)
    assert len(traces) == 2  # max 3 twice, 4 once
    assert {c.guards[0].value for c in k.compilations} == {3, 4}


def test_sizes_and_bounds_of_made_arrays_from_data() -> None:
    def made(x):
        return np.zeros(x[0].astype(np.int64)) + np.arange(0, x[1]).sum()

    k = et.kernel(made)
    for x in (np.array([3.0, 4.5]), np.array([2.0, 4.5]), np.array([3.0, 4.5])):
        np.testing.assert_array_equal(k(x), made(x))
    assert [[g.value for g in c.guards] for c in k.compilations] == [[3, 4.5], [2, 4.5]]


def test_a_failed_guard_writes_nothing_into_the_argument() -> None:
    def scale_in_place(x):
        x *= 2.0
        if not np.isfinite(x).all():
            raise ValueError("not finite")

    k = et.kernel(scale_in_place)
    x = np.arange(6.0)
    k(x)
    np.testing.assert_array_equal(x, np.arange(6.0) * 2)
    bad = np.arange(6.0)
    bad[3] = np.inf
    before = bad.copy()
    with pytest.raises(ValueError, match="not finite"):
        k(bad)
    np.testing.assert_array_equal(bad, before)


def test_float_and_item_guards_hold_for_an_equal_value_only() -> None:
    def centered(x):
        mean = float(x.mean())
        return x - mean + x[0].item()

    k, traces = counted(centered)
    x = np.arange(4.0)
    np.testing.assert_array_equal(k(x), centered(x))
    np.testing.assert_array_equal(k(x.copy()), centered(x))
    assert len(traces) == 1
    y = x + 1
    np.testing.assert_array_equal(k(y), centered(y))
    assert len(traces) == 2
    assert [g.kind for g in k.compilations[0].guards] == ["float", "float"]


def test_item_of_a_size_one_array_and_at_an_index() -> None:
    """ndarray.item() of a (1,) array, item(k) (a flat index) and item(i, j), as NumPy's (until 2026-11-28 only a
    0-d array's item() was taken: a (1,) array's raised ConcreteValueError); a larger array's item() is refused."""
    def f(a, x):
        return a.item() * x, x.item(2) * x, x.item((1, 0)) + x, x.item(2, 1) - x.item(-1)

    a, x = np.array([1.5]), np.arange(6.0).reshape(3, 2)
    for g, w in zip(et.kernel(f)(a, x), f(a, x), strict=True):
        np.testing.assert_array_equal(g, w)
    with pytest.raises(et.TracingError, match="can only convert an array of size 1 to a Python scalar"):
        et.kernel(lambda x: x.item() * x)(x)


def test_a_loop_on_a_data_value_is_capped(monkeypatch) -> None:
    def countdown(x):
        while x.sum() > 0:
            x = x - 1.0
        return x

    monkeypatch.setattr(core, "GUARD_LIMIT", 3)
    np.testing.assert_array_equal(et.kernel(countdown)(np.array([1.0, 2.0])), countdown(np.array([1.0, 2.0])))  # 3 guards
    with pytest.raises(et.UnsupportedError, match=r"(?s)more than 3 data values taken as Python values in one trace.*cap the loop"):
        et.kernel(countdown)(np.array([3.0, 3.0]))


def test_many_specializations_warn_once(monkeypatch) -> None:
    monkeypatch.setattr(kernel_module, "SPECIALIZATION_LIMIT", 1)
    k = et.kernel(lambda x: x * float(x[0]))
    k(np.array([1.0, 2.0]))
    with pytest.warns(et.SpecializationWarning, match="2 specializations of one signature"):
        k(np.array([2.0, 2.0]))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        np.testing.assert_array_equal(k(np.array([3.0, 1.0])), [9.0, 3.0])


def test_the_staged_api_refuses_data_its_guards_do_not_hold() -> None:
    compiled = et.kernel(normalized).trace(np.linspace(0, 1, 8)).optimize().lower().compile()
    np.testing.assert_array_equal(compiled(np.linspace(0, 0.5, 8)), normalized(np.linspace(0, 0.5, 8)))
    with pytest.raises(et.KernelArgumentError, match=r"bool\(\.\.\.\) = False at .*if x.max\(\) > 1.*now True"):
        compiled(np.linspace(0, 5, 8))


def test_a_gpu_targets_guards_are_computed_on_the_host(tmp_path) -> None:
    comp = et.compile(validated, np.ones((4, 4), np.float32), target="nvvm:sm_90", out_dir=tmp_path)
    (guard,) = comp.guards
    assert guard.value is True
    assert comp.guard_program is not None and comp.guard_program.options.target.device is None
    written = json.loads((tmp_path / "guards.json").read_text())["guards"]
    assert written == [{"where": guard.where, "kind": "bool", "value": True}]
    assert "memref<4x4xf32>" in (tmp_path / "guards" / "linalg.mlir").read_text()  # (the guard program, for the host)
    lowered = et.kernel(validated, target="nvvm:sm_90").lower(np.ones((4, 4), np.float32))
    assert [g.value for g in lowered.guards] == [True] and "guards: bool(...) = True" in repr(lowered)
    with pytest.raises(ValueError, match="Input contains NaN"):
        et.kernel(validated, target="nvvm:sm_90").lower(np.full((4, 4), np.nan, np.float32))


W = np.linspace(-1.0, 1.0, 1024)  # 8 KiB: a captured array passed as a hidden argument (docs/calling.md)


def test_a_guard_reading_a_large_captured_array() -> None:
    def shifted(x):
        return x + 1.0 if (x * W).sum() > 0 else x - 1.0

    k, traces = counted(shifted)
    up, down = np.linspace(0, 1, 1024), np.linspace(1, 0, 1024)
    for x in (up, down, up):
        np.testing.assert_array_equal(k(x), shifted(x))
    assert len(traces) == 2
