"""Threads: one kernel called, and compiled for the first time, from 8 threads at once; calls do not leak."""

from __future__ import annotations

import resource
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

import egglog_tensor as et

# An e-graph dropped on the wrong thread surfaces as an "unraisable" exception: make it a failure.
pytestmark = pytest.mark.filterwarnings("error::pytest.PytestUnraisableExceptionWarning")
rng = np.random.default_rng(11)


def test_first_compilation_from_8_threads() -> None:
    k = et.kernel(lambda a, b: np.tanh(a @ b + 1.0))
    args = [(rng.standard_normal((16, 8)), rng.standard_normal((8, 4))) for _ in range(8)]
    with ThreadPoolExecutor(8) as pool:
        results = list(pool.map(lambda ab: k(*ab), args))
    for (a, b), got in zip(args, results, strict=True):
        np.testing.assert_allclose(got, np.tanh(a @ b + 1.0), rtol=1e-12)
    assert len(k.compilations) == 1


def test_different_signatures_compiled_concurrently() -> None:
    k = et.kernel(lambda a: (a * 2.0).sum(axis=0))
    arrays = [rng.standard_normal((n, 3)).astype(dt) for n in (2, 3, 4, 5) for dt in (np.float32, np.float64)]
    with ThreadPoolExecutor(8) as pool:
        results = list(pool.map(k, arrays))
    for a, got in zip(arrays, results, strict=True):
        np.testing.assert_allclose(got, (a * 2.0).sum(axis=0), rtol=1e-5)
        assert got.dtype == a.dtype
    assert len(k.compilations) == 8


def test_same_kernel_called_from_8_threads() -> None:
    k = et.kernel(lambda a, b: np.maximum(a, b) - a * b)
    k(np.ones(3), np.ones(3))
    inputs = [(rng.standard_normal(1000), rng.standard_normal(1000)) for _ in range(64)]
    with ThreadPoolExecutor(8) as pool:
        results = list(pool.map(lambda ab: k(*ab), inputs))
    for (a, b), got in zip(inputs, results, strict=True):
        np.testing.assert_array_equal(got, np.maximum(a, b) - a * b)


def _rss_mb() -> float:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def test_100k_calls_do_not_leak() -> None:
    k = et.kernel(lambda a, s: a * s + 1.0)
    a = np.ones((4, 4), np.float32)
    for _ in range(2000):
        k(a, 2.0)
    before = _rss_mb()
    for _ in range(100_000):
        k(a, 2.0)
    grown = _rss_mb() - before
    assert grown < 8.0, f"RSS grew {grown:.1f} MB over 100,000 calls"


def test_distinct_kernels_compiled_concurrently() -> None:
    """Separate kernels share no lock: egglog e-graphs, MLIR contexts and LLVM engines are per compilation."""
    fns = [lambda a, c=c: np.exp(a * c) + c for c in range(8)]
    a = rng.standard_normal((32, 32))
    with ThreadPoolExecutor(8) as pool:
        results = list(pool.map(lambda f: et.kernel(f)(a), fns))
    for f, got in zip(fns, results, strict=True):
        np.testing.assert_allclose(got, f(a), rtol=1e-12)


_FORK_WHILE_LLVMLITE_IS_BUSY = """
import threading, time
from llvmlite.binding import ffi
from egglog_tensor.lowering.llvm import _codegen
from egglog_tensor.target import Target
host = Target.host()
held = threading.Event()

def hold():
    with ffi.lib._lock:  # another thread inside llvmlite, as a concurrent compilation is
        held.set()
        time.sleep(1.0)

thread = threading.Thread(target=hold)
thread.start()
held.wait()
ir = "define i32 @f() {\\n  ret i32 1\\n}\\n"
object_code = _codegen(ir, host)  # forks its code generator now
asm = _codegen(ir, host, assembly=True)
thread.join()
print("generated", len(object_code) > 0, "f:" in asm)
"""


def test_code_generation_forks_only_when_no_thread_is_inside_llvmlite() -> None:
    """A child forked while another thread held llvmlite's lock inherited it held and waited forever
    in its first llvmlite call (a test run hung in test_distinct_kernels_compiled_concurrently); the
    fork now waits for the lock. In a subprocess, with a timeout, so a regression fails instead of hanging."""
    result = subprocess.run([sys.executable, "-c", _FORK_WHILE_LLVMLITE_IS_BUSY], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "generated True True"


_DROP_A_BASE_IN_A_CYCLE = """
import gc, sys, time, weakref
import numpy as np
import egglog_tensor as et
from egglog_tensor import optimize
caught = []
sys.unraisablehook = lambda u: caught.append(str(u.exc_value))
et.kernel(lambda a: a * 2.0 + 1.0, cache=False)(np.ones(3))

def drop_one():
    base = optimize._BASES.pop(next(iter(optimize._BASES)))[1]
    base.egraph.__dict__["cycle"] = base.egraph  # (its e-graph in a reference cycle, as egglog-python's objects can be)
    optimize._drop(base)
    return weakref.ref(base.egraph)

dropped = optimize._EGGLOG_THREAD.run(drop_one)
gc.collect()  # a collection on this thread before the egglog thread's
held = dropped() is not None
et.kernel(lambda a: a - 3.0, cache=False)(np.ones(3))  # (the egglog thread frees what was dropped once idle)
for _ in range(400):
    if dropped() is None:
        break
    time.sleep(0.05)
print(held, dropped() is None, caught)
"""


def test_a_dropped_base_is_freed_on_the_egglog_thread() -> None:
    """A base e-graph the optimizer lets go (a schedule's base evicted or rebuilt with more rules) is held until the
    egglog thread frees it: a collection on another thread first (an automatic one, by chance: once per test run)
    found its reference cycle unreachable and dropped the EGraph there (PyO3: "EGraph is unsendable, but is being
    dropped on another thread"). In a subprocess: the test run's own bases stay as they are."""
    result = subprocess.run([sys.executable, "-c", _DROP_A_BASE_IN_A_CYCLE], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "True True []", result.stdout
