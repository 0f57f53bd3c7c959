"""The cost model's estimate of a compiled kernel beside its measured time (`Kernel.measure`).

The estimate is what extraction minimized (OptimizeReport.cost_after, nanoseconds of native work);
the measurement is the wall time of whole calls, argument checks included, so for kernels of a few
microseconds the ratio also shows the call overhead the model does not price.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

BATCH_S = 0.002  # wall time of one timed batch of calls: long enough that the timer's resolution does not matter


@dataclass(frozen=True)
class Timing:
    """A compiled kernel's estimated and measured nanoseconds per call."""

    estimated_ns: float
    measured_ns: float
    batches: int  # the measurement is the median over this many batches of calls

    @property
    def ratio(self) -> float:
        """estimated / measured: 1 is exact, above 1 the model overestimates."""
        return self.estimated_ns / self.measured_ns

    def __str__(self) -> str:
        return (f"estimated {time_text(self.estimated_ns)}, measured {time_text(self.measured_ns)} per call "
                f"(median of {self.batches} batches): estimate/measured {self.ratio:.2g}")


def time_text(ns: float) -> str:
    """ns in the unit that reads best."""
    for unit, scale in (("s", 1e9), ("ms", 1e6), ("µs", 1e3)):
        if ns >= scale:
            return f"{ns / scale:.3g} {unit}"
    return f"{ns:.3g} ns"


def median_ns(call: Callable[[], Any], min_time: float = 0.2, max_batches: int = 50) -> tuple[float, int]:
    """Median ns per call() over batches of calls, after one warm-up call: at least 5 batches, more up to min_time s."""
    start = time.perf_counter()
    call()
    per_batch = max(1, int(BATCH_S / max(time.perf_counter() - start, 1e-9)))
    means: list[float] = []
    start = time.perf_counter()
    while len(means) < 5 or (len(means) < max_batches and time.perf_counter() - start < min_time):
        t = time.perf_counter()
        for _ in range(per_batch):
            call()
        means.append((time.perf_counter() - t) / per_batch)
    means.sort()
    return means[len(means) // 2] * 1e9, len(means)
