"""Ctrl-C during saturation compiles the best program found so far; progress shows only where someone looks."""

from __future__ import annotations

import subprocess
import sys
import textwrap

from egglog_tensor import progress

SCRIPT = textwrap.dedent('''
    import signal, threading, warnings
    import numpy as np
    import egglog_tensor as et
    from egglog_tensor import optimize, progress
    from npstyle_kernels import jacobi_2d

    signal.signal(signal.SIGINT, signal.default_int_handler)  # (as in a terminal: a parent, e.g. an xdist worker, may ignore it)

    def ctrl_c_after_the_first_iteration(self, done, status):  # a user's Ctrl-C, at a known moment
        if done == 1:  # to the main thread, as a terminal's Ctrl-C; then wait until its handler has asked the optimizer to stop
            signal.pthread_kill(threading.main_thread().ident, signal.SIGINT)
            optimize.INTERRUPT.wait(60)
    original, progress.Progress.update = progress.Progress.update, ctrl_c_after_the_first_iteration

    A, B = np.full((32, 32), 1.0) + np.arange(32.0), np.zeros((32, 32))
    k = et.kernel(jacobi_2d)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        comp = k.inspect(4, A.copy(), B.copy())
    want_A, want_B = A.copy(), B.copy()
    jacobi_2d(4, want_A, want_B)
    got_A, got_B = A.copy(), B.copy()
    k(4, got_A, got_B)
    np.testing.assert_allclose(got_A, want_A, rtol=1e-12)
    np.testing.assert_allclose(got_B, want_B, rtol=1e-12)
    print(comp.report.stop_reason, comp.report.iterations, comp.cache_note)
    print(str(comp.report).splitlines()[0])
    print([str(w.message) for w in caught if "interrupted" in str(w.message)])
    progress.Progress.update = original
    comp2 = et.kernel(jacobi_2d).inspect(4, A.copy(), B.copy())  # not from the cache: optimized in full
    print(comp2.report.stop_reason, comp2.cache)
''')


def test_ctrl_c_during_saturation_returns_a_working_kernel(tmp_path):
    tests = str(__import__("pathlib").Path(__file__).parent)
    done = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=600,
                          env={**__import__("os").environ, "PYTHONPATH": tests, "EGGLOG_TENSOR_CACHE_DIR": str(tmp_path)})
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "interrupted 1 not stored: the optimizer was interrupted", lines
    assert "stopped: interrupted (Ctrl-C: the best program found so far)" in lines[1]
    assert "the best program found so far is compiled" in lines[2]
    assert lines[3] == "saturated miss-stored", lines


def test_progress_is_silent_where_nobody_looks(monkeypatch, capsys):
    monkeypatch.setattr(progress, "SHOW_AFTER_S", 0.0)
    with progress.Progress("optimizer", 3) as p:  # pytest captures stderr: not a terminal
        p.update(1, "10 e-nodes")
    assert p.bar is None and capsys.readouterr().err == ""
    monkeypatch.setattr(progress, "_interactive", lambda: True)
    with progress.Progress("optimizer", 3) as p:
        p.update(2, "10 e-nodes")
    assert p.bar is not None and "10 e-nodes" in capsys.readouterr().err
