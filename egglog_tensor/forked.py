"""Run a function in a forked child process, so that a native abort (an LLVM assertion in MLIR's
in-process passes, which this build has enabled) ends the child instead of this process (a
notebook's kernel, a test run) and becomes an exception here.

`run_job` hands a picklable job to one long-lived forked worker, which runs jobs one after another:
a fresh child per job paid its copy-on-write faults and first-use costs of MLIR and LLVM (~10,000
page faults, 0.1 s, each time); the worker pays them once. `run_forked` forks a child for one function."""

from __future__ import annotations

import faulthandler
import gc
import os
import pickle
import resource
import signal
import sys
import tempfile
import threading
import traceback
from collections.abc import Callable
from typing import IO, Any

from llvmlite.binding import ffi as llvm_ffi


# Held by this process's own MLIR work (emitting, reading a stage's IR) and around each fork: a child
# never inherits a lock of MLIR's held by another thread in the middle of that work.
NATIVE = threading.RLock()


class ChildDied(Exception):
    """The child ended before its function returned or raised: killed by a signal or exited."""

    def __init__(self, how: str, stderr: str) -> None:
        super().__init__(f"{how}\n{stderr}")
        self.how = how
        self.stderr = stderr


def run_forked(fn: Callable[[Callable[[Any], None]], None], sink: Callable[[Any], None]) -> None:
    """Call fn(send) in a forked child; each object it sends reaches `sink` here as it is sent (pickled
    through a pipe), so what came before a crash is kept. An exception fn raises is raised here (its
    child traceback as a note); a child that dies raises ChildDied with how and its stderr."""
    read, write = os.pipe()
    with tempfile.TemporaryFile() as err:
        # The child never collects garbage (off from before the fork): collecting an MLIR context inherited
        # from this process joins its thread pool, whose threads the child does not have (it hung forever)
        collecting = gc.isenabled()
        gc.disable()
        pid = _fork()
        if pid == 0:  # the child: never returns into the caller's code, nor runs its atexit handlers
            try:
                faulthandler.disable()  # (pytest's would print the child's Python stack on an abort)
                os.close(read)
                os.dup2(err.fileno(), 2)
                with os.fdopen(write, "wb") as out:
                    _serve(fn, out)
            finally:
                os._exit(0)
        if collecting:
            gc.enable()
        os.close(write)
        with os.fdopen(read, "rb") as pipe:
            outcome = _receive(pipe, sink)
        _, status = os.waitpid(pid, 0)
        err.seek(0)
        stderr = err.read().decode(errors="replace")
    if outcome is not None and outcome[0] == "raise":
        raise outcome[1]
    if outcome is None or status != 0:
        raise ChildDied(_how(status), stderr)
    if stderr:  # (what the child printed, e.g. MLIR remarks, is not lost)
        sys.stderr.write(stderr)


def _fork() -> int:
    """os.fork() holding NATIVE and llvmlite's global lock, which every llvmlite call holds: no other
    thread is then inside MLIR or LLVM's C API, whose state (and llvmlite's lock itself) the child
    would inherit mid-use. (A child forked while another thread compiled waited forever on that lock
    in its first llvmlite call.) Both processes release them: in the child the forking thread still owns them."""
    with NATIVE, llvm_ffi.lib._lock:  # (private to llvmlite, which is pinned below 0.51: the one lock of its FFI)
        return os.fork()


def _serve(fn: Callable[[Callable[[Any], None]], None], out: Any) -> None:
    """In a child: run fn, sending its items, then ("done", None) or ("raise", the exception)."""

    def send(kind: str, item: Any) -> None:
        pickle.dump((kind, item), out)
        out.flush()

    try:
        fn(lambda item: send("item", item))
    except Exception as exc:  # noqa: BLE001 (any exception goes back to the caller)
        exc.add_note("raised in the forked compile process:\n" + traceback.format_exc())
        try:
            pickle.dumps(exc)
        except Exception:  # noqa: BLE001
            exc = RuntimeError(f"{type(exc).__name__}: {exc}\n{traceback.format_exc()}")
        send("raise", exc)
        return
    send("done", None)


def _how(status: int) -> str:
    """How a child ended, from its wait status: 'killed by SIGABRT', 'exit code 3'."""
    if os.WIFSIGNALED(status):
        return f"killed by {signal.Signals(os.WTERMSIG(status)).name}"
    return f"exit code {os.WEXITSTATUS(status)}, without a result"


def _receive(pipe: IO[bytes], sink: Callable[[Any], None]) -> tuple[str, Any] | None:
    """Pass a child's items to `sink` until its outcome (("done", _) or ("raise", exc)); None if it died first."""
    while True:
        try:
            kind, item = pickle.load(pipe)
        except (EOFError, pickle.UnpicklingError):  # the child died (maybe mid-message)
            return None
        if kind != "item":
            return kind, item
        sink(item)


# A worker runs this many jobs, or until it has grown by this many KiB, then a new one is forked: LLVM's
# pass pipelines keep 150-400 KB per run that they never free, and the parent's later state (rules
# built, modules imported, classes defined in a notebook) reaches a new worker.
WORKER_JOBS = 200
WORKER_GROWTH_KIB = 512 * 1024


class _Worker:
    """A forked child that runs the jobs sent through a pipe (`_work`), its stderr a file both processes hold."""

    def __init__(self) -> None:
        jobs_read, jobs_write = os.pipe()
        results_read, results_write = os.pipe()
        self.err = tempfile.TemporaryFile()
        self.stderr, self.jobs_run = "", 0
        collecting = gc.isenabled()
        gc.disable()  # (see run_forked)
        self.pid = _fork()
        if self.pid == 0:  # the worker: never returns into the caller's code, nor runs its atexit handlers
            try:
                os.close(jobs_write)
                os.close(results_read)
                _work(os.fdopen(jobs_read, "rb"), os.fdopen(results_write, "wb"), self.err)
            finally:
                os._exit(0)
        if collecting:
            gc.enable()
        os.close(jobs_read)
        os.close(results_write)
        self.owner = os.getpid()
        self.jobs, self.results = os.fdopen(jobs_write, "wb"), os.fdopen(results_read, "rb")

    def run(self, message: bytes, sink: Callable[[Any], None]) -> tuple[bool, tuple[str, Any] | None]:
        """Send a pickled job, pass its items to `sink`: whether the worker started it, and its outcome
        (None: the worker died in it). A worker that ended before (grown, or unable to read the job) did not start it."""
        start = os.fstat(self.err.fileno()).st_size
        try:
            self.jobs.write(message)
            self.jobs.flush()
            ack, _ = pickle.load(self.results)
        except (BrokenPipeError, EOFError):
            return False, None
        if ack != "started":
            return False, None
        self.jobs_run += 1
        outcome = _receive(self.results, sink)
        self.stderr = os.pread(self.err.fileno(), 1 << 20, start).decode(errors="replace")
        return True, outcome

    def close(self, kill: bool = False) -> int:
        """End the worker (at once with `kill`, else as it reads the closed pipe): its wait status."""
        if kill:
            os.kill(self.pid, signal.SIGKILL)
        for f in (self.jobs, self.results, self.err):
            try:
                f.close()
            except OSError:  # (a broken pipe's unflushed write)
                pass
        return os.waitpid(self.pid, 0)[1]


def _work(jobs: IO[bytes], out: IO[bytes], err: IO[bytes]) -> None:
    """The worker's loop: acknowledge each job, run it under the environment it came with; end when the
    pipe closes, a job does not unpickle here (it names what this older copy of the parent lacks) or
    the process grew past WORKER_GROWTH_KIB. What it inherited is frozen out of garbage collection
    (see run_forked: collecting an inherited MLIR context hangs); what its jobs make is collected."""
    faulthandler.disable()
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's (it kills a worker it interrupts)
    os.dup2(err.fileno(), 2)
    gc.freeze()
    gc.enable()
    born = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    while resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - born <= WORKER_GROWTH_KIB:
        try:
            job, environment = pickle.load(jobs)
        except EOFError:
            return
        except Exception as exc:  # noqa: BLE001
            pickle.dump(("stale", repr(exc)), out)
            out.flush()
            return
        pickle.dump(("started", None), out)
        out.flush()
        if os.environ != environment:
            os.environ.clear()
            os.environ.update(environment)
        _serve(job, out)


_WORKER: _Worker | None = None
_WORKER_LOCK = threading.Lock()


def run_job(job: Callable[[Callable[[Any], None]], None], sink: Callable[[Any], None]) -> None:
    """run_forked(job, sink), in the process's worker: the same outcomes (items to `sink`, the job's
    exception raised here, ChildDied if the worker dies in it: the next job gets a new worker). A job
    that does not pickle, or comes while another thread's job runs, gets a child of its own."""
    try:
        message = pickle.dumps((job, dict(os.environ)))
    except (pickle.PicklingError, AttributeError, TypeError):
        return run_forked(job, sink)
    if not _WORKER_LOCK.acquire(blocking=False):
        return run_forked(job, sink)
    try:
        outcome, stderr = _in_worker(message, sink)
    finally:
        _WORKER_LOCK.release()
    if outcome is None:  # two workers could not read it
        return run_forked(job, sink)
    if outcome[0] == "raise":
        raise outcome[1]
    if stderr:  # (what the worker printed, e.g. MLIR remarks, is not lost)
        sys.stderr.write(stderr)


def _in_worker(message: bytes, sink: Callable[[Any], None]) -> tuple[tuple[str, Any] | None, str]:
    """Run a pickled job in the worker (a new one when there is none for this process, it has run
    WORKER_JOBS, or it ended before starting the job): its outcome and stderr; (None, "") if two did not start it."""
    global _WORKER
    for _ in range(2):
        if _WORKER is None or _WORKER.owner != os.getpid() or _WORKER.jobs_run >= WORKER_JOBS:
            if _WORKER is not None and _WORKER.owner == os.getpid():
                _WORKER.close()
            _WORKER = _Worker()
        worker = _WORKER
        try:
            started, outcome = worker.run(message, sink)
        except BaseException:  # Ctrl-C while it runs: the worker is mid-job, out of step with the pipe
            _WORKER = None
            worker.close(kill=True)
            raise
        if outcome is not None:
            return outcome, worker.stderr
        _WORKER = None
        status = worker.close()
        if started:
            raise ChildDied(_how(status), worker.stderr)
    return None, ""
