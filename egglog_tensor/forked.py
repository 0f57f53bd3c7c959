"""Run a function in a forked child process, so that a native abort (an LLVM assertion in MLIR's
in-process passes, which this build has enabled) ends the child instead of this process (a
notebook's kernel, a test run) and becomes an exception here."""

from __future__ import annotations

import faulthandler
import gc
import os
import pickle
import signal
import sys
import tempfile
import threading
import traceback
from collections.abc import Callable
from typing import Any

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
        outcome: tuple[str, Any] | None = None
        with os.fdopen(read, "rb") as pipe:
            while outcome is None:
                try:
                    kind, item = pickle.load(pipe)
                except (EOFError, pickle.UnpicklingError):  # the child died (maybe mid-message)
                    break
                if kind == "item":
                    sink(item)
                else:
                    outcome = (kind, item)
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
    """In the child: run fn, sending its items, then ("done", None) or ("raise", the exception)."""

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
