"""Guards: data values a trace took as Python values (`if not np.isfinite(X).all(): raise`, `if x.max() > 1`,
`n = int(idx.max()) + 1`), as torch.compile's guards.

While a kernel traces a call, `Concrete` computes such a value for the call's arguments: its sub-program (the
value's ancestors) is compiled through the normal pipeline and caches, for the host CPU, and run. The kernel
records a Guard (tracing/core.py); every later call of that specialization first runs one small program computing
all its guards (`checker`) and takes the specialization only if each has the value traced (docs/calling.md#guards).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from .compiler import Compilation, Options, compile_traced
from .graph import Node
from .lowering.pipelines import resolve_target
from .spec import ArgSpec, spec_of
from .target import Target
from .tracing import Guard, narrowed_int_args
from .tracing.core import EVALUATOR, Trace

Run = Callable[[Compilation, Sequence[Any]], tuple]  # runs a compilation on a call's own values (kernel.py), returns its results
Made = dict[tuple, Compilation]  # sub-programs compiled while tracing one call, by their outputs


def on_host(options: Options) -> Options:
    """The options guard programs compile with: the kernel's, for this machine's CPU when the kernel's target is a GPU
    or a CPU whose features this machine lacks (a guard's value is needed here, while tracing)."""
    target = options.target
    if target.device is None and not target.missing_on(Target.host()):
        return options
    return replace(options, target=resolve_target(None))


def program(fn: Callable[..., Any], nodes: Sequence[Node], names: Sequence[str], specs: Sequence[ArgSpec],
            captured: Sequence[np.ndarray], options: Options, made: Made) -> Compilation:
    """The compiled program computing `nodes` (0-d) from arguments `names` (the captured arrays' last), once per `made`."""
    from .stages import Traced

    key = (tuple(map(id, nodes)), tuple(names))  # (the nodes stay alive in the compilation: their ids are not reused)
    comp = made.get(key)
    if comp is None:
        traced = Traced(fn, tuple(names), tuple(specs), on_host(options), True, narrowed_int_args(nodes, specs, names), tuple(nodes),
                        captured=tuple(captured))
        comp = made[key] = compile_traced(traced)
    return comp


class Concrete:
    """The arguments of the call being traced: computes a traced 0-d value for them (tracing/core.py's Evaluator)."""

    def __init__(self, fn: Callable[..., Any], names: Sequence[str], values: Sequence[Any], specs: Sequence[ArgSpec],
                 options: Options, literal: frozenset[str], run: Run) -> None:
        self.fn, self.names, self.values, self.specs, self.options = fn, tuple(names), list(values), tuple(specs), options
        self.literal = literal
        self.run = run
        self.made: Made = {}

    def __call__(self, trace: Trace, node: Node) -> np.ndarray:
        captured = [(n.attr("name"), array) for n, array in trace.captured.values()]
        names = (*self.names, *(n for n, _ in captured))
        specs = (*self.specs, *(spec_of(a, n) for n, a in captured))
        arrays = [a for _, a in captured]
        comp = program(self.fn, [node], names, specs, arrays, self.options, self.made)
        (value,) = self.run(comp, self.values)  # (the captured arrays: hidden arguments the run adds)
        return np.asarray(value)


def checker(comp: Compilation, fn: Callable[..., Any]) -> Compilation:
    """The program computing all of comp's guards, one 0-d output each: made once (while tracing, the guard's own
    sub-program when there is one guard)."""
    if comp.guard_program is None:
        concrete = EVALUATOR.get()
        made = concrete.made if isinstance(concrete, Concrete) else {}
        comp.guard_program = program(fn, [g.node for g in comp.guards], comp.arg_names, comp.specs, comp.captured, comp.options, made)
    return comp.guard_program


def failed(comp: Compilation, fn: Callable[..., Any], values: Sequence[Any], run: Run) -> list[str]:
    """Each of comp's guards that has, for these runtime argument values, another value than traced (and that value)."""
    if not comp.guards:
        return []
    taken = run(checker(comp, fn), values)
    return [f"{g} (now {np.asarray(v).item()!r})" for g, v in zip(comp.guards, taken, strict=True) if not same(g, v)]


def same(guard: Guard, value: Any) -> bool:
    """Whether a call's value of a guard is the one traced: the same truth value, the same int (a float that int()
    would refuse never is), or an equal float (NaN equal to NaN)."""
    if guard.kind == "bool":
        return bool(value) == guard.value
    if guard.kind == "int":
        return math.isfinite(value) and int(value) == guard.value
    value = float(value)
    return value == guard.value or (math.isnan(value) and math.isnan(guard.value))

