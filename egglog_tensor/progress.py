"""Progress of long compiles: a tqdm bar that appears once a step has run for a second, in terminals
and notebooks only (never in logs or test output). EGGLOG_TENSOR_PROGRESS=0 turns it off."""

from __future__ import annotations

import os
import sys
import time
from types import TracebackType
from typing import Any

SHOW_AFTER_S = 1.0


def _interactive() -> bool:
    """A terminal on stderr, or a Jupyter kernel."""
    if os.environ.get("EGGLOG_TENSOR_PROGRESS", "1") == "0":
        return False
    shell = sys.modules.get("IPython") and sys.modules["IPython"].get_ipython()
    return bool(shell and "IPKernelApp" in shell.config) or sys.stderr.isatty()


class Progress:
    """`with Progress("optimizer", total) as p: p.update(done, "1,234 e-nodes")`: shown after SHOW_AFTER_S."""

    def __init__(self, what: str, total: int) -> None:
        self.what, self.total = what, total
        self.start = time.perf_counter()
        self.bar: Any = None
        self.shown = _interactive()

    def update(self, done: int, status: str) -> None:
        if not self.shown or (self.bar is None and time.perf_counter() - self.start < SHOW_AFTER_S):
            return
        if self.bar is None:
            from tqdm.auto import tqdm

            self.bar = tqdm(total=self.total, desc=self.what, unit="iteration", leave=False)
        self.bar.n = done
        self.bar.set_postfix_str(status, refresh=True)

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None) -> None:
        if self.bar is not None:
            self.bar.close()
