"""The optimizer: run an egglog schedule under limits, then extract with the shape-aware cost model."""

from __future__ import annotations

import gc
import time
import warnings
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from egglog import EGraph, Ruleset, RunReport, Schedule
from egglog.declarations import RulesetDecl
from egglog.pretty import pretty_decl

from .cost import TensorCostModel
from .graph import Node, topological
from .ir import Program, Tensor, from_term, static_facts, to_term


@dataclass(frozen=True)
class Limits:
    """Bounds on one optimizer run; hitting one stops rewriting and is reported, never silent."""

    iterations: int = 30
    enodes: int = 50_000
    seconds: float = 10.0


SHOWN_RULES = 8  # rules printed per ruleset, most matches first


@dataclass(frozen=True)
class RulesetStats:
    """One ruleset's share of a run: time searching/applying, iterations it matched in, rule matches."""

    name: str
    seconds: float
    iterations: int
    matches: tuple[tuple[str, int], ...]

    def __str__(self) -> str:
        total = sum(n for _, n in self.matches)
        spent = f", {self.seconds * 1e3:.1f} ms searching and applying" if self.seconds else ""
        head = f"  ruleset {self.name}: {total} match(es) in {self.iterations} iteration(s){spent}"
        shown = [f"    {n:5d} x {r}" for r, n in self.matches[:SHOWN_RULES]]
        rest = self.matches[SHOWN_RULES:]
        if rest:  # (all of them stay in `matches`)
            shown.append(f"    ... {len(rest)} more rule(s), {sum(n for _, n in rest)} match(es)")
        return "\n".join([head, *shown])


@dataclass(frozen=True)
class OptimizeReport:
    """What the optimizer did: schedule, iterations, why it stopped, per-ruleset matches, sizes, costs."""

    schedule: str
    iterations: int
    stop_reason: str  # "saturated", "iteration limit", "e-node limit", "time limit"
    rulesets: tuple[RulesetStats, ...]
    enodes: int
    seconds: float
    cost_before: float
    cost_after: float
    limits: Limits = field(default_factory=Limits)
    fallback: str = ""  # why the traced program was kept instead of an extracted one ("": it was not)

    @property
    def hit_limit(self) -> bool:
        return self.stop_reason != "saturated"

    @property
    def matches(self) -> list[tuple[str, int]]:
        """(rule, times matched) over all rulesets, most matched first."""
        return sorted(((r, n) for rs in self.rulesets for r, n in rs.matches), key=lambda rn: -rn[1])

    def __str__(self) -> str:
        limit = "" if not self.hit_limit else f" (LIMIT HIT: {self.limits})"
        lines = [
            f"schedule {self.schedule}: {self.iterations} iteration(s), stopped: {self.stop_reason}{limit}, "
            f"{self.enodes} e-nodes, {self.seconds * 1e3:.1f} ms",
            f"estimated cost {self.cost_before:,.1f} ns -> {self.cost_after:,.1f} ns",
        ]
        if self.fallback:
            lines.append(f"EXTRACTION FAILED, the traced program is compiled unoptimized: {self.fallback}")
        lines += [str(rs) for rs in self.rulesets] or ["  no rule matched"]
        return "\n".join(lines)


@dataclass
class _Tally:
    seconds: float = 0.0
    iterations: int = 0
    matches: dict[str, int] = field(default_factory=dict)

    def stats(self, name: str) -> RulesetStats:
        ordered = tuple(sorted(((r, n) for r, n in self.matches.items() if n), key=lambda rn: -rn[1]))
        return RulesetStats(name, self.seconds, self.iterations, ordered)


# A rule's text (pretty_decl formats it with black: milliseconds each) and its ruleset, once per rule.
_RULES: dict[object, tuple[str, str]] = {}


def _rule(report: RunReport, rule: object) -> tuple[str, str]:
    """(ruleset name, readable text) of a rule in a RunReport."""
    known = _RULES.get(rule)
    if known is None:
        owner = next((_short(ident.name) for ident, decl in report._decls._rulesets.items()
                      if isinstance(decl, RulesetDecl) and rule in decl.rules), "?")
        known = _RULES[rule] = (owner, pretty_decl(report._decls, rule))
    return known


def _tally(stats: dict[str, _Tally], report: RunReport) -> None:
    """Add one step's RunReport to the per-ruleset tallies (rules are attributed to their ruleset)."""
    matched: set[str] = set()
    for rule, n in report.num_matches_per_rule.items():
        if n:  # only matched rules are reported
            name, text = _rule(report, rule)
            tally = stats.setdefault(name, _Tally())
            tally.matches[text] = tally.matches.get(text, 0) + n
            matched.add(name)
    for name, spent in report.search_and_apply_time_per_ruleset.items():
        if _short(name) in stats:
            stats[_short(name)].seconds += spent.total_seconds()
    for name in matched:
        stats[name].iterations += 1


def _short(name: str) -> str:
    """A ruleset's name without the module path egglog prefixes."""
    return name.rsplit(".", 1)[-1]


def egraph_size(egraph: EGraph) -> int:
    """Number of e-nodes (rows of all functions) in the e-graph."""
    return sum(size for _, size in egraph.all_function_sizes())


# egglog's EGraph may only be used and dropped on the thread that made it, and it sits in a
# reference cycle: every e-graph lives and is collected on this one thread.
_EGGLOG_THREAD = ThreadPoolExecutor(max_workers=1, thread_name_prefix="egglog")


def optimize(
    outputs: list[Node],
    schedule: Ruleset | Schedule | None,
    limits: Limits = Limits(),
    cost_model: TensorCostModel | None = None,
) -> tuple[Program, Program, list[Node], OptimizeReport]:
    """Rewrite the program's term with `schedule` (one step per iteration) and extract the cheapest.

    Returns the traced term, the extracted term, the extracted Nodes and the report.
    """
    result = _EGGLOG_THREAD.submit(_optimize_and_collect, outputs, schedule, limits, cost_model).result()
    if result[3].fallback:
        warnings.warn(f"egglog_tensor: {result[3].fallback}; the traced program is compiled unoptimized", stacklevel=3)
    return result


def _optimize_and_collect(*args: object) -> tuple[Program, Program, list[Node], OptimizeReport]:
    try:
        return _optimize(*args)  # type: ignore[arg-type]
    finally:
        gc.collect()  # free this run's e-graph here, on its own thread


def _optimize(
    outputs: list[Node],
    schedule: Ruleset | Schedule | None,
    limits: Limits,
    cost_model: TensorCostModel | None,
) -> tuple[Program, Program, list[Node], OptimizeReport]:
    from .rulesets.shapes import shapes

    cost_model = cost_model or TensorCostModel()
    terms: dict[int, Tensor] = {}
    traced = to_term(outputs, terms)
    egraph = EGraph()
    egraph.register(traced, *static_facts(topological(outputs), terms))
    _, before = egraph.extract(traced, include_cost=True, cost_model=cost_model)
    start = time.perf_counter()
    stats: dict[str, _Tally] = {}
    iterations, reason = 0, "saturated"
    if schedule is not None:
        reason = "iteration limit"
        while iterations < limits.iterations:
            report = egraph.run(schedule)
            shaped = egraph.run(shapes.saturate())  # shapes and dtypes of the terms this step created, for later conditions
            iterations += 1
            _tally(stats, report)
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
    fallback = ""
    try:
        extracted, after = egraph.extract(traced, include_cost=True, cost_model=cost_model)
    except BaseException as e:  # a Rust panic reaches Python as pyo3's PanicException (a BaseException)
        if type(e).__name__ != "PanicException":
            raise
        fallback = (f"egglog's extractor failed ({e}): a cost that does not fall when a child's cost falls "
                    "leaves it no acyclic best term (see egglog_tensor/cost.py)")
        extracted, after = traced, before
    nodes = from_term(extracted)
    report = OptimizeReport(
        schedule=str(schedule) if schedule is not None else "none",
        iterations=iterations,
        stop_reason=reason,
        rulesets=tuple(t.stats(name) for name, t in stats.items()),
        enodes=egraph_size(egraph),
        seconds=seconds,
        cost_before=before.total,
        cost_after=after.total,
        limits=limits,
        fallback=fallback,
    )
    return traced, extracted, nodes, report
