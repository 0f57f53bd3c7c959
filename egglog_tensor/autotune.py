"""Autotuning (`f.autotune(*args)`): where the cost model may be wrong, time the alternatives.

The candidates are the model's choice, matmul cache tiles next to the ones it chose (each tile
halved and doubled, through `Target.tuning`), and the program without the fusion and tiling
choices (`rules=algebra | layout`). Each is compiled, timed on the call's own arguments
(in turns, as benchmarks/run.py times systems) and the fastest is kept for this signature when it beats the model's by more
than the noise margin. The choice is recorded beside the compilation cache, so a later process
compiles only the chosen candidate; `inspect` then shows the candidates and their times.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from .graph import topological
from .measure import Timing, median_ns

if TYPE_CHECKING:
    from .compiler import Compilation, Options
    from .kernel import Kernel

MARGIN = 0.95  # another candidate must take under 95% of the model's time to be chosen


@dataclass(frozen=True)
class Tuned:
    """The candidates timed for one signature, and the one kept."""

    names: tuple[str, ...]
    timings: tuple[Timing | None, ...]  # None: not timed (the recorded choice was reused)
    chosen: str

    def __str__(self) -> str:
        lines = [f"autotuned: {self.chosen}" + ("" if any(self.timings) else " (recorded choice)")]
        for name, t in zip(self.names, self.timings, strict=True):
            if t is not None:
                mark = "*" if name == self.chosen else " "
                lines.append(f"  {mark} {t.measured_ns / 1e3:10.1f} µs measured, {t.estimated_ns / 1e3:10.1f} µs estimated  {name}")
        return "\n".join(lines)


def _with_tiles(options: Options, tiles: tuple[int, int, int]) -> Options:
    target = options.target
    return replace(options, target=replace(target, tuning=replace(target.tuning, matmul_tiles=tiles)))


def candidates(options: Options, comp: Compilation, k: int) -> list[tuple[str, Options]]:
    """(name, options) of at most k candidates, the model's choice first."""
    from .rulesets import DEFAULT, algebra, layout

    found = [("the cost model's choice", options)]
    chosen = sorted({n.attr("tiles") for n in topological(comp.outputs) if n.op == "matmul_tiled"})
    for tiles in chosen[:1]:  # (Tuning sets the tiles of every matmul: the first's neighbours)
        for axis in range(3):
            for factor in (0.5, 2.0):
                t = list(tiles)
                t[axis] = int(t[axis] * factor)
                if 8 <= t[axis] <= 1024:
                    found.append((f"matmul tiles {tuple(t)} (the model chose {tuple(tiles)})", _with_tiles(options, tuple(t))))
    if options.rules is DEFAULT:
        found.append(("without the fusion and tiling choices (rules=algebra | layout)", replace(options, rules=algebra | layout)))
    return found[:k]


def _in_turns(kernels: list[Kernel], args: tuple, kwargs: dict, rounds: int = 5) -> tuple[Timing, ...]:
    """Each kernel's Timing, the candidates taking turns over `rounds` rounds (a shared machine's speed
    drifts over seconds: turns make the drift hit every candidate alike); the median round per candidate."""
    comps = [k.inspect(*args, **kwargs) for k in kernels]  # (compiled before any timing)
    times: list[list[float]] = [[] for _ in kernels]
    for _ in range(rounds):
        for k, seen in zip(kernels, times, strict=True):
            seen.append(median_ns(lambda k=k: k(*args, **kwargs), min_time=0.05, max_batches=10)[0])
    return tuple(Timing(c.report.cost_after, sorted(t)[rounds // 2], rounds) for c, t in zip(comps, times, strict=True))


def _record(comp: Compilation) -> Any:
    """The file recording this signature's choice, or None without a cache dir."""
    from .cache import record_path

    options = comp.options
    return record_path("autotune", f"{comp.traced_term}|{options.target.label}|{options.target.features}|{options.fastmath}|{comp.specs}")


def autotune(kernel: Kernel, args: tuple, kwargs: dict, k: int = 8, again: bool = False) -> Tuned:
    """Time up to k candidates on these arguments; the kernel then calls the fastest for their signature."""
    from .cache import read_record, write_record
    from .kernel import Kernel

    comp = kernel.inspect(*args, **kwargs)
    found = candidates(kernel.options, comp, k)
    path = _record(comp)
    recorded = None if again else (read_record(path) or {}).get("chosen")
    names = tuple(name for name, _ in found)
    if recorded in names:
        tuned = Tuned(names, (None,) * len(names), recorded)
    else:
        timings = _in_turns([Kernel(kernel.fn, options, kernel._static) for _, options in found], args, kwargs)
        best = min(range(len(found)), key=lambda i: timings[i].measured_ns)
        if timings[best].measured_ns >= MARGIN * timings[0].measured_ns:
            best = 0
        tuned = Tuned(names, timings, names[best])
        write_record(path, {"chosen": tuned.chosen, "candidates": list(names)})
    options = dict(found)[tuned.chosen]
    chosen = Kernel(kernel.fn, options, kernel._static).inspect(*args, **kwargs)
    chosen.tuned = tuned
    kernel.use(chosen, args, kwargs)
    return tuned
