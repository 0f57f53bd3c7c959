"""The forked worker (egglog_tensor/forked.py): jobs run one after another in one warm child; a job
that kills it kills only it; jobs see the caller's environment; what cannot go to it runs in a child
of its own."""

from __future__ import annotations

import functools
import os
import sys
import types

import pytest

from egglog_tensor import forked
from egglog_tensor.forked import ChildDied, run_job


def _pid(send) -> None:
    send(os.getpid())


def _getenv(name: str, send) -> None:
    send(os.environ.get(name))


def _abort(send) -> None:
    send("before")
    os.abort()


def _fail(send) -> None:
    raise ValueError("a job's own error")


def _run(job) -> list:
    got: list = []
    run_job(job, got.append)
    return got


def test_jobs_share_one_worker_that_is_not_this_process() -> None:
    """(A fresh worker: one that earlier tests' compiles brought to WORKER_JOBS, or grew, is replaced between the two.)"""
    if forked._WORKER is not None and forked._WORKER.owner == os.getpid():
        forked._WORKER.close()
    forked._WORKER = None
    first, second = _run(_pid), _run(_pid)
    assert first == second and first[0] != os.getpid()


def test_a_job_that_kills_the_worker_is_child_died_and_the_next_gets_a_new_one() -> None:
    before = _run(_pid)[0]
    got: list = []
    with pytest.raises(ChildDied, match="SIGABRT"):
        run_job(_abort, got.append)
    assert got == ["before"]  # what came before the crash is kept
    after = _run(_pid)[0]
    assert after not in (before, os.getpid())


def test_a_jobs_exception_is_raised_here_and_the_worker_lives_on() -> None:
    before = _run(_pid)[0]
    with pytest.raises(ValueError, match="a job's own error"):
        _run(_fail)
    assert _run(_pid)[0] == before


def test_jobs_see_the_environment_of_their_call(monkeypatch) -> None:
    _run(_pid)  # the worker exists before the variable is set
    monkeypatch.setenv("EGGLOG_TENSOR_FORKED_TEST", "set after the fork")
    assert _run(functools.partial(_getenv, "EGGLOG_TENSOR_FORKED_TEST")) == ["set after the fork"]
    monkeypatch.delenv("EGGLOG_TENSOR_FORKED_TEST")
    assert _run(functools.partial(_getenv, "EGGLOG_TENSOR_FORKED_TEST")) == [None]


def test_a_job_naming_what_the_worker_lacks_runs_in_a_new_worker(monkeypatch) -> None:
    before = _run(_pid)[0]
    module = types.ModuleType("egglog_tensor_forked_test_later")  # made after the worker forked
    exec("import os\ndef pid(send):\n    send(('later', os.getpid()))\n", module.__dict__)
    monkeypatch.setitem(sys.modules, module.__name__, module)
    [(tag, pid)] = _run(module.pid)
    assert tag == "later" and pid not in (before, os.getpid())


def test_a_job_that_does_not_pickle_runs_in_a_child_of_its_own() -> None:
    worker = _run(_pid)[0]
    got = _run(lambda send: send(os.getpid()))
    assert got[0] not in (worker, os.getpid())
    assert _run(_pid) == [worker]


def test_a_worker_is_replaced_after_its_jobs(monkeypatch) -> None:
    monkeypatch.setattr(forked, "WORKER_JOBS", 2)
    pids = [_run(_pid)[0] for _ in range(5)]
    assert len(set(pids)) >= 2 and pids[-1] != pids[-3]


def test_an_interrupted_wait_ends_the_worker_and_the_next_job_runs() -> None:
    before = _run(_pid)[0]

    def interrupted(item) -> None:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run_job(_pid, interrupted)
    with pytest.raises(ProcessLookupError):
        os.kill(before, 0)  # killed and reaped
    assert _run(_pid)[0] not in (before, os.getpid())
