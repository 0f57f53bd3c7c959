"""The optimizer: run an egglog schedule under limits, then extract with the shape-aware cost model."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from egglog import EGraph, Ruleset, Schedule
from egglog.pretty import pretty_decl

from .cost import TensorCostModel
from .graph import Node, topological
from .ir import Program, Tensor, from_term, shape_facts, to_term


@dataclass(frozen=True)
class Limits:
    """Bounds on one optimizer run; hitting one stops rewriting and is reported, never silent."""

    iterations: int = 30
    enodes: int = 50_000
    seconds: float = 10.0


@dataclass(frozen=True)
class OptimizeReport:
    """What the optimizer did: schedule, iterations, why it stopped, rule matches, sizes, costs."""

    schedule: str
    iterations: int
    stop_reason: str  # "saturated", "iteration limit", "e-node limit", "time limit"
    matches: tuple[tuple[str, int], ...]
    enodes: int
    seconds: float
    cost_before: float
    cost_after: float
    limits: Limits = field(default_factory=Limits)

    @property
    def hit_limit(self) -> bool:
        return self.stop_reason != "saturated"

    def __str__(self) -> str:
        lines = [
            f"schedule {self.schedule}: {self.iterations} iteration(s), stopped: {self.stop_reason}, "
            f"{self.enodes} e-nodes, {self.seconds * 1e3:.1f} ms",
            f"estimated cost {self.cost_before:,.1f} ns -> {self.cost_after:,.1f} ns",
        ]
        fired = [(r, n) for r, n in self.matches if n]
        lines += [f"  {n:5d} x {r}" for r, n in fired] or ["  no rule matched"]
        return "\n".join(lines)


def egraph_size(egraph: EGraph) -> int:
    """Number of e-nodes (rows of all functions) in the e-graph."""
    return sum(size for _, size in egraph.all_function_sizes())


def optimize(
    outputs: list[Node],
    schedule: Ruleset | Schedule | None,
    limits: Limits = Limits(),
    cost_model: TensorCostModel | None = None,
) -> tuple[Program, Program, list[Node], OptimizeReport]:
    """Rewrite the program's term with `schedule` (one step per iteration) and extract the cheapest.

    Returns the traced term, the extracted term, the extracted Nodes and the report.
    """
    from .rulesets.shapes import shapes

    cost_model = cost_model or TensorCostModel()
    terms: dict[int, Tensor] = {}
    traced = to_term(outputs, terms)
    egraph = EGraph()
    egraph.register(traced, *shape_facts(topological(outputs), terms))
    _, before = egraph.extract(traced, include_cost=True, cost_model=cost_model)
    start = time.perf_counter()
    matches: dict[str, int] = {}
    iterations, reason = 0, "saturated"
    if schedule is not None:
        reason = "iteration limit"
        while iterations < limits.iterations:
            report = egraph.run(schedule)
            shaped = egraph.run(shapes.saturate())  # shapes of the terms this step created, for later conditions
            iterations += 1
            for rule, n in report.num_matches_per_rule.items():
                text = pretty_decl(report._decls, rule)
                matches[text] = matches.get(text, 0) + n
            if not report.updated and not shaped.updated:
                reason = "saturated"
                break
            if egraph_size(egraph) > limits.enodes:
                reason = "e-node limit"
                break
            if time.perf_counter() - start > limits.seconds:
                reason = "time limit"
                break
    seconds = time.perf_counter() - start
    extracted, after = egraph.extract(traced, include_cost=True, cost_model=cost_model)
    nodes = from_term(extracted)
    report = OptimizeReport(
        schedule=str(schedule) if schedule is not None else "none",
        iterations=iterations,
        stop_reason=reason,
        matches=tuple(sorted(matches.items(), key=lambda kv: -kv[1])),
        enodes=egraph_size(egraph),
        seconds=seconds,
        cost_before=before.total,
        cost_after=after.total,
        limits=limits,
    )
    return traced, extracted, nodes, report
