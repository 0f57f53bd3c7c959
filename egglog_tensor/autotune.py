"""Autotuning (`f.autotune(*args)`, or `@kernel(autotune=True)` at a signature's first call): where the
cost model may be wrong, time the alternatives.

The candidates are the model's choice, the next-cheapest distinct programs of the e-graph
(`extract.alternatives`: the cheapest program with one of its choices made otherwise, e.g. a value
materialized instead of fused, other lanes or tiles), matmul cache tiles next to the ones it chose
(each tile halved and doubled, through `Target.tuning`), and the program without the fusion and
tiling choices (`rules=algebra | layout`). Each is compiled, timed on the call's own arguments (in
turns, as benchmarks/run.py times systems; on copies of the arrays a kernel writes into) and the
fastest is kept for this signature when it beats the model's by more than the noise margin. The
choice is recorded beside the compilation cache, so a later process compiles only the chosen
candidate; `inspect` then shows the candidates and their times.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from .graph import topological
from .measure import Timing, median_ns

if TYPE_CHECKING:
    from .compiler import Compilation, Options
    from .kernel import Kernel
    from .stages import Optimized

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


Candidate = tuple[str, Callable[[], "Compilation"]]  # (name, compile it)


def candidates(kernel: Kernel, args: tuple, kwargs: dict, comp: Compilation, k: int) -> list[Candidate]:
    """(name, compile) of at most k candidates, the model's choice first, then up to half of the rest
    extracted alternatives (cheapest first), neighbouring matmul tiles, no fusion choices."""
    from .kernel import Kernel
    from .rulesets import DEFAULT, algebra, layout

    def compiled(options: Options) -> Callable[[], Compilation]:
        return lambda: Kernel(kernel.fn, replace(options, autotune=False), kernel._static).inspect(*args, **kwargs)

    def lowered(alternative: Optimized) -> Callable[[], Compilation]:
        def make() -> Compilation:
            made = alternative.lower().compile().compilation
            made.tree = comp.tree
            return made
        return make

    options = kernel.options
    found: list[Candidate] = [("the cost model's choice", lambda: comp)]
    traced = replace(kernel.trace(*args, **kwargs), options=replace(options, autotune=False))
    for i, other in enumerate(traced.optimize(alternatives=max(0, (k - 1) // 2)).alternatives):
        if other.extracted_term != comp.extracted_term:
            found.append((f"extracted alternative {i + 1} (estimated {other.report.cost_after / 1e3:.1f} µs)", lowered(other)))
    chosen = sorted({n.attr("tiles") for n in topological(comp.outputs) if n.op == "matmul_tiled"})
    for tiles in chosen[:1]:  # (Tuning sets the tiles of every matmul: the first's neighbours)
        for axis in range(3):
            for factor in (0.5, 2.0):
                t = list(tiles)
                t[axis] = int(t[axis] * factor)
                if 8 <= t[axis] <= 1024:
                    found.append((f"matmul tiles {tuple(t)} (the model chose {tuple(tiles)})", compiled(_with_tiles(options, tuple(t)))))
    if options.rules is DEFAULT:
        found.append(("without the fusion and tiling choices (rules=algebra | layout)", compiled(replace(options, rules=algebra | layout))))
    return found[:k]


def _in_turns(kernel: Kernel, comps: list[Compilation], args: tuple, kwargs: dict, rounds: int = 5) -> tuple[Timing, ...]:
    """Each compilation's Timing, called as `kernel` on the arguments, the candidates taking turns over
    `rounds` rounds (a shared machine's speed drifts over seconds: turns make the drift hit every
    candidate alike); the median round per candidate."""
    times: list[list[float]] = [[] for _ in comps]
    for _ in range(rounds):
        for c, seen in zip(comps, times, strict=True):
            seen.append(median_ns(lambda c=c: kernel.call_compilation(c, args, kwargs), min_time=0.05, max_batches=10)[0])
    return tuple(Timing(c.report.cost_after, sorted(t)[rounds // 2], rounds) for c, t in zip(comps, times, strict=True))


def _record(comp: Compilation) -> Any:
    """The file recording this signature's choice, or None without a cache dir."""
    from .cache import record_path

    options = comp.options
    return record_path("autotune", f"{comp.traced_term}|{options.target.label}|{options.target.features}|{options.fastmath}|{comp.specs}")


def autotune(kernel: Kernel, args: tuple, kwargs: dict, k: int = 8, again: bool = False) -> Tuned:
    """Time up to k candidates on these arguments; the kernel then calls the fastest for their signature."""
    from .cache import read_record, write_record

    comp = kernel.inspect(*args, **kwargs)
    found = candidates(kernel, args, kwargs, comp, k)
    path = _record(comp)
    recorded = None if again else (read_record(path) or {}).get("chosen")
    names = tuple(name for name, _ in found)
    made = dict(found)
    if recorded in names:
        tuned, chosen = Tuned(names, (None,) * len(names), recorded), made[recorded]()
    else:
        comps = [make() for _, make in found]  # (all compiled before any timing)
        # (a kernel that writes into its arguments is timed on copies: the call's own are written once, by the call)
        timings = _in_turns(kernel, comps, *copy.deepcopy((args, kwargs)) if comp.written else (args, kwargs))
        best = min(range(len(found)), key=lambda i: timings[i].measured_ns)
        if timings[best].measured_ns >= MARGIN * timings[0].measured_ns:
            best = 0
        tuned, chosen = Tuned(names, timings, names[best]), comps[best]
        write_record(path, {"chosen": tuned.chosen, "candidates": list(names)})
    chosen.tuned = tuned
    kernel.use(chosen, args, kwargs)
    return tuned
