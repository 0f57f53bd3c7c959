"""The optimizer: run an egglog schedule under limits, then extract with the shape-aware cost model."""

from __future__ import annotations

import atexit
import functools
import gc
import math
import queue
import re
import threading
import time
import warnings
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from concurrent.futures import Future
from typing import Any, TypeVar
from dataclasses import dataclass, field, replace

from egglog import EGraph, Ruleset, Schedule, bindings
from egglog.declarations import RulesetDecl
from egglog.pretty import pretty_decl

from .cost import TensorCostModel
from .extract import Extracted, ExtractionError, extract
from .extract import alternatives as extract_alternatives
from .graph import Builder, Node, topological
from . import cache, prebuilt
from .progress import Progress
from .seed import called, program, seed
from .target import Target

T = TypeVar("T")


@dataclass(frozen=True)
class Limits:
    """Bounds on one optimizer run; hitting one stops rewriting and is reported, never silent."""

    iterations: int = 30
    enodes: int = 50_000
    seconds: float = 10.0
    evaluations: int = 2_000_000  # e-node pricings of the extraction (egglog_tensor/extract.py)


SHOWN_RULES = 8  # rules printed per ruleset, most matches first
_GROUPED = re.compile(r"([\w-]+): ")  # a match's text starts with its rule group's name (rulesets/groups.py), if any


def _most_first(counts: Iterable[tuple[str, int]]) -> dict[str, int]:
    """The counts summed per name, the largest first."""
    total: dict[str, int] = {}
    for name, n in counts:
        total[name] = total.get(name, 0) + n
    return dict(sorted(total.items(), key=lambda kv: -kv[1]))


@dataclass(frozen=True)
class RulesetStats:
    """One ruleset's share of a run: time searching/applying, iterations it matched in, rule matches
    (each rule's text, after the name of its group and a colon when it is in one)."""

    name: str
    seconds: float
    iterations: int
    counted: tuple[tuple[object, int], ...]  # (rule: its text, or a _Matched made into text when first read, times matched)

    @functools.cached_property
    def matches(self) -> tuple[tuple[str, int], ...]:
        """(rule text, times matched), most first: texts are made when read (black formats each: milliseconds)."""
        return tuple(_most_first((str(rule), n) for rule, n in self.counted).items())

    @property
    def groups(self) -> dict[str, int]:
        """Matches per rule group, most first (a rule in no group counts for this ruleset's name)."""
        return _most_first(((g[1] if (g := _GROUPED.match(rule)) else self.name), n) for rule, n in self.matches)

    def __str__(self) -> str:
        total = sum(n for _, n in self.counted)
        spent = f", {self.seconds * 1e3:.1f} ms searching and applying" if self.seconds else ""
        head = f"  ruleset {self.name}: {total} match(es) in {self.iterations} iteration(s){spent}"
        shown = [f"    {n:5d} x {r}" for r, n in self.matches[:SHOWN_RULES]]
        rest = self.matches[SHOWN_RULES:]
        if rest:  # (all of them stay in `matches`)
            shown.append(f"    ... {len(rest)} more rule(s), {sum(n for _, n in rest)} match(es)")
        return "\n".join([head, *shown])

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        """Pickled with the texts (a _Matched holds egglog declarations)."""
        return RulesetStats, (self.name, self.seconds, self.iterations, self.matches)


@dataclass(frozen=True)
class OptimizeReport:
    """What the optimizer did: schedule, iterations, why it stopped, per-ruleset matches, sizes, costs."""

    schedule: str
    iterations: int
    stop_reason: str  # "saturated", "iteration limit", "e-node limit", "time limit", "interrupted" (Ctrl-C)
    rulesets: tuple[RulesetStats, ...]
    enodes: int
    seconds: float
    cost_before: float
    cost_after: float
    limits: Limits = field(default_factory=Limits)
    fallback: str = ""  # why the traced program was kept instead of an extracted one ("": it was not)
    cut: str = ""  # what the extraction left undone when it hit its limit ("": nothing)
    # the next-cheapest distinct programs, when asked for (autotuning): (DAG price, output Nodes), cheapest first
    alternatives: tuple[tuple[float, tuple[Node, ...]], ...] = field(default=(), compare=False, repr=False)

    @property
    def hit_limit(self) -> bool:
        return self.stop_reason != "saturated"

    @property
    def matches(self) -> list[tuple[str, int]]:
        """(rule, times matched) over all rulesets, most matched first."""
        return sorted(((r, n) for rs in self.rulesets for r, n in rs.matches), key=lambda rn: -rn[1])

    @property
    def groups(self) -> dict[str, int]:
        """Matches per rule group ("transpose", "power", ...: rulesets/groups.py) over all rulesets, most first."""
        return _most_first(group for rs in self.rulesets for group in rs.groups.items())

    def __str__(self) -> str:
        limit = ("" if not self.hit_limit else " (Ctrl-C: the best program found so far)" if self.stop_reason == "interrupted"
                 else f" (LIMIT HIT: {self.limits})")
        lines = [
            f"schedule {self.schedule}: {self.iterations} iteration(s), stopped: {self.stop_reason}{limit}, "
            f"{self.enodes} e-nodes, {self.seconds * 1e3:.1f} ms",
            f"estimated cost {self.cost_before:,.1f} ns -> {self.cost_after:,.1f} ns",
        ]
        if self.cut:
            lines.append(f"EXTRACTION LIMIT HIT: {self.cut}")
        if self.fallback:
            lines.append(f"EXTRACTION FAILED, the traced program is compiled unoptimized: {self.fallback}")
        lines += [str(rs) for rs in self.rulesets] or ["  no rule matched"]
        return "\n".join(lines)


@dataclass
class _Tally:
    seconds: float = 0.0
    iterations: int = 0
    matches: dict[object, int] = field(default_factory=dict)  # by rule declaration
    decls: Any = None  # the declarations the rules are in (for their texts)

    def stats(self, name: str) -> RulesetStats:
        ordered = tuple(sorted(((r if isinstance(r, _Saved) else _Matched(self.decls, r), n) for r, n in self.matches.items() if n),
                               key=lambda rn: -rn[1]))
        return RulesetStats(name, self.seconds, self.iterations, ordered)


# A rule's text (pretty_decl formats it with black: milliseconds each), once per rule; each declarations'
# rules' rulesets, by their rulesets in order (a rule's owner depends on the schedule it ran in).
_RULES: dict[object, str] = {}
_OWNERS: dict[tuple[object, ...], dict[object, str]] = {}


@dataclass(frozen=True, eq=False)
class _Matched:
    """A rule a run matched; str() is its readable text ("group: rule" for a rule of a named group),
    made when a report is first read, not by each compile."""

    decls: Any = field(repr=False)
    rule: object

    def __str__(self) -> str:
        from .rulesets.groups import group_of

        known = _RULES.get(self.rule)
        if known is None:
            group = group_of(self.rule)
            text = _EGGLOG_THREAD.run(pretty_decl, self.decls, self.rule)  # (ast.parse: see egglog_text)
            known = _RULES[self.rule] = f"{group}: {text}" if group else text
        return known


@dataclass(frozen=True)
class _Saved:
    """A rule of a base e-graph loaded from saved commands (prebuilt.py): the ruleset the report counts
    it for, and where the package schedule `package`'s declarations hold it; str() is its text, made when
    first read (the schedule's declarations run every rule generator: seconds, once per process)."""

    owner: str
    group: str  # its rule group's name ("": none)
    built: tuple[str, ...]  # the ops it builds (provenance.builders)
    ruleset: str
    index: int
    package: str  # "DEFAULT" or "DEFAULT + FASTMATH" (prebuilt.schedule_of)

    def _declared(self) -> tuple[Any, object]:
        decls = _EGGLOG_THREAD.run(lambda: prebuilt.schedule_of(self.package).__egg_decls__)
        (held,) = (d for ident, d in decls._rulesets.items() if str(ident) == self.ruleset)
        return decls, held.rules[self.index]

    @property
    def rule(self) -> object:
        """Its declaration (as a _Matched's: explain's provenance reads it)."""
        return self._declared()[1]

    def __str__(self) -> str:
        return str(_Matched(*self._declared()))


def rule_record(rule: object) -> Any:
    """A counted rule as JSON (the disk cache stores reports): its text, or where a saved base's rule
    is declared (its text is not made by storing it)."""
    return [rule.owner, rule.group, list(rule.built), rule.ruleset, rule.index, rule.package] if isinstance(rule, _Saved) else str(rule)


def rule_of_record(data: Any) -> object:
    """The counted rule `rule_record` made JSON of."""
    if isinstance(data, str):
        return data
    owner, group, built, ruleset, index, package = data
    return _Saved(str(owner), str(group), tuple(map(str, built)), str(ruleset), int(index), str(package))


def _describe(decls: Any, rule: object) -> tuple[str, str, tuple[str, ...]]:
    """What a saved base keeps of a rule (prebuilt.Describe): its report's ruleset, group and built ops."""
    from .provenance import built
    from .rulesets.groups import group_of

    return _owner(decls, rule), group_of(rule) or "", tuple(sorted(built(rule)))


def _owner(decls: Any, rule: object) -> str:
    """The name of the first ruleset of `decls` (egglog declarations) holding `rule`: on a rule not
    seen before, every rule of `decls` is indexed in one pass (looking each up in every ruleset's
    list compared rules deeply: a fifth of a second kernel's optimizer time). Indexed per `decls`:
    a rule a schedule of fast-math groups ran first is still filed under `algebra_fastmath` where
    the default schedule runs it."""
    owners = _OWNERS.setdefault(tuple(decls._rulesets), {})
    if rule not in owners:
        for ident, decl in decls._rulesets.items():
            if isinstance(decl, RulesetDecl):
                for held in decl.rules:
                    owners.setdefault(held, _short(ident.name))
    return owners.get(rule, "?")


def _tally(stats: dict[str, _Tally], step: _Step) -> None:
    """Add one step to the per-ruleset tallies (rules are attributed to their ruleset)."""
    matched: set[str] = set()
    for rule, n in step.matches.items():
        name = rule.owner if isinstance(rule, _Saved) else _owner(step.decls, rule)
        tally = stats.setdefault(name, _Tally())
        tally.matches[rule] = tally.matches.get(rule, 0) + n
        tally.decls = step.decls
        matched.add(name)
    for name, spent in step.seconds.items():
        if _short(name) in stats:
            stats[_short(name)].seconds += spent
    for name in matched:
        stats[name].iterations += 1


@dataclass(frozen=True)
class _Step:
    """What one run of a schedule did: whether it changed the e-graph, the rules that matched (egglog
    declarations) and how often, seconds searching and applying per ruleset, the declarations."""

    updated: bool
    matches: dict[object, int]
    seconds: dict[str, float]
    decls: Any


_SCHEDULE_TEXTS: dict[object, str] = {}


def _schedule_text(schedule: Ruleset | Schedule | None) -> str:
    """str(schedule), made once per schedule (egglog formats it with black: milliseconds), "none" for None."""
    if schedule is None:
        return "none"
    text = _SCHEDULE_TEXTS.get(schedule.schedule)
    if text is None:
        text = _SCHEDULE_TEXTS[schedule.schedule] = str(schedule)
    return text


def _run(base: prebuilt.Base, schedule: Ruleset | Schedule) -> _Step:
    """base.egraph.run(schedule), its command made once per base: EGraph.run merges the schedule's
    declarations again and hashes each of its rules deeply on every run, and translates its report
    rule by rule (a third of a small kernel's rewriting). `_base` registered the rules before any run.
    A loaded base (prebuilt.py) has its commands saved and names its rules by their saved places."""
    egraph = base.egraph
    command = base.runs.get(schedule.schedule)
    if command is None:
        egraph._add_decls(schedule)
        command = base.runs[schedule.schedule] = egraph._state.run_schedule_to_egg(schedule.schedule)
    (output,) = egraph._run_program(command)
    report, decls = output.report, egraph._state.rule_name_to_command_decl
    matches: dict[object, int] = {}
    for name, n in report.num_matches_per_rule.items():
        if n:
            rule = _Saved(*base.rules[name], base.package) if base.rules else decls[name]
            matches[rule] = matches.get(rule, 0) + n
    seconds = {name: spent.total_seconds() for name, spent in report.search_and_apply_time_per_ruleset.items()}
    return _Step(report.updated, matches, seconds, egraph._state.__egg_decls__)


def _short(name: str) -> str:
    """A ruleset's name without the module path egglog prefixes."""
    return name.rsplit(".", 1)[-1]


def egraph_size(egraph: EGraph) -> int:
    """Number of e-nodes (rows of the functions the program's declarations define) in the e-graph:
    EGraph.all_function_sizes's sum without making a Python callable of each of its ~1,500 functions."""
    (output,) = egraph._run_program(bindings.PrintSize(bindings.RustSpan("", 0, 0), None))
    defined = egraph._state.egg_fn_to_callable_refs
    return sum(size for name, size in output.sizes if defined.get(name))


class _EgglogThread:
    """The one thread every egglog EGraph is made, used and dropped on (an EGraph may not leave its
    thread, and it sits in a reference cycle, so it is collected there too). A daemon thread, so the
    base e-graphs it keeps can still be released on it at exit (a ThreadPoolExecutor stops taking
    work before atexit handlers run)."""

    def __init__(self) -> None:
        self._jobs: queue.SimpleQueue[tuple[Callable[..., Any], tuple, Future]] = queue.SimpleQueue()
        self.idle: list[Callable[[], None]] = []  # work done while no job waits (`later`); only read on the thread
        self._thread = threading.Thread(target=self._serve, name="egglog", daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while True:
            if self.idle and self._jobs.empty():
                try:
                    self.idle.pop(0)()
                except Exception:  # (idle work is redone by the next job that needs it, which raises then)
                    pass
                continue
            fn, args, done = self._jobs.get()
            try:
                done.set_result(fn(*args))
            except BaseException as e:  # handed to the caller
                done.set_exception(e)

    def run(self, fn: Callable[..., Any], *args: Any) -> Any:
        """fn(*args) on the egglog thread; its result, or its exception raised here (called directly when on it).
        A first Ctrl-C while waiting asks a running rewrite to stop after its current iteration (`INTERRUPT`:
        the best program found so far is extracted and compiled); a second one is raised."""
        if threading.current_thread() is self._thread:
            return fn(*args)
        done: Future = Future()
        self._jobs.put((fn, args, done))
        try:
            return done.result()
        except KeyboardInterrupt:
            INTERRUPT.set()
            warnings.warn("egglog_tensor: interrupted; the optimizer stops after this iteration and the best program "
                          "found so far is compiled (interrupt again to abandon the compile)", stacklevel=3)
            return done.result()

    def later(self, fn: Callable[[], None]) -> None:
        """fn() on the thread once no job waits (called on the thread): work the next job needs done, off its clock."""
        self.idle.append(fn)


INTERRUPT = threading.Event()  # set by a Ctrl-C: the rewrite loop stops at its next iteration (stop reason "interrupted")


_EGGLOG_THREAD = _EgglogThread()


def egglog_text(value: object) -> str:
    """str() of an egglog expression, made on the egglog thread: egglog's pretty printer runs
    ast.parse, which CPython 3.11 cannot run on two threads at once (SystemError: AST constructor
    recursion depth mismatch, seen with kernels compiled concurrently)."""
    return _EGGLOG_THREAD.run(str, value)


def _release_bases() -> None:
    _EGGLOG_THREAD.idle.clear()
    _DROPPED.extend(base for _, base in _BASES.values())
    _BASES.clear()
    _STATES.clear()
    _free_dropped()


atexit.register(_EGGLOG_THREAD.run, _release_bases)


def optimize(
    outputs: list[Node],
    schedule: Ruleset | Schedule | None,
    limits: Limits,
    cost_model: TensorCostModel,
    baseline: Sequence[Ruleset | Schedule | None] = (),
    alternatives: int = 0,
) -> tuple[list[Node], OptimizeReport]:
    """Rewrite the program's term with `schedule` (one step per iteration) and extract the cheapest
    under `cost_model` (which prices for one Target). `baseline`: smaller schedules run to a fixpoint
    first on the same e-graph, each extracted: the result is the cheapest extraction, so a larger rule
    set (fast math on top of the default) never extracts a costlier program than the default's.
    `alternatives`: that many next-cheapest distinct programs too, in the report (extract.alternatives).

    Returns the extracted Nodes and the report (the extracted term: ir.to_term of the Nodes).
    """
    nodes, report = _EGGLOG_THREAD.run(_optimize_and_collect, outputs, schedule, limits, cost_model, tuple(baseline), alternatives)
    if report.fallback:
        warnings.warn(f"egglog_tensor: {report.fallback}; the traced program is compiled unoptimized", stacklevel=3)
    return nodes, report


def _optimize_and_collect(*args: object) -> tuple[list[Node], OptimizeReport]:
    try:
        return _optimize(*args)  # type: ignore[arg-type]
    finally:
        if _DROPPED and _free_dropped not in _EGGLOG_THREAD.idle:  # a base was let go: freed here once idle (~0.1 s)
            _EGGLOG_THREAD.later(_free_dropped)


# One e-graph per schedule with its rules (and the shape analysis) already declared: egglog-python
# converts every rule of a schedule for each new EGraph, about half of a small kernel's optimizer
# time. A run pushes it, works on the pushed copy and pops back to the empty base. It is rebuilt
# when the schedule's rulesets change (a ruleset redefined under the same name in a notebook).
# The package default's is loaded from saved commands (prebuilt.py), identified by its name.
_BASES: OrderedDict[object, tuple[object, prebuilt.Base]] = OrderedDict()  # by the schedule's declaration (str() formats it: ms)
_MAX_BASES = 8
_STATES: dict[int, str] = {}  # by id() of each base in _BASES, its e-graph: "empty" (the base), "pushed" (a copy ready for a run), "used" (a run's copy: _ready)
_DROPPED: list[object] = []  # what `_base` let go (bases; a failed load's error, whose traceback holds its e-graph): _free_dropped


def _free_dropped() -> None:
    """Free what `_base` let go, on the egglog thread (where an EGraph must be dropped: PyO3's "EGraph is unsendable,
    but is being dropped on another thread" otherwise). An e-graph can sit in a reference cycle, which a collection
    on any thread may free: held in _DROPPED until now, the dropped objects are let go and collected here with
    automatic collection paused, so no other thread's collection can find them unreachable first."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        _DROPPED.clear()
        gc.collect()
    finally:
        if enabled:
            gc.enable()


def _base(schedule: Ruleset | Schedule | None, saved: bool = True) -> prebuilt.Base:
    """The empty e-graph with `schedule`'s rules declared (kept for the last _MAX_BASES schedules);
    not `saved`: made through egglog-python even for the package default, so that egglog-python's
    own readers of an e-graph (`freeze`, `extract`) know its declarations. A base loaded from saved
    commands declares the rules earlier programs could match (`_with_rules`)."""
    key = (None if schedule is None else schedule.schedule, saved)
    package = cache.package_schedule_name(schedule) if saved else None  # (its rulesets' declarations would run every rule generator)
    rulesets = package or ({} if schedule is None else dict(schedule.__egg_decls__._rulesets))
    found = _BASES.get(key)
    if found is None or found[0] != rulesets:
        if found is not None:
            _drop(found[1])
        found = _BASES[key] = (rulesets, _build(schedule, package))
        _STATES[id(found[1])] = "empty"
    _BASES.move_to_end(key)
    while len(_BASES) > _MAX_BASES:
        _drop(_BASES.popitem(last=False)[1][1])
    return found[1]


def _with_rules(schedule: Ruleset | Schedule | None, saved: bool, base: prebuilt.Base, ops: frozenset[str]) -> prebuilt.Base | None:
    """None when `base` declares every saved rule a program calling `ops` can match (prebuilt.Commands.needed),
    else the base that does, in their saved order: `base` with them added when they all come after its
    rules, else one loaded anew with its rules and them, replacing it (a rule left out can never match,
    so the program's run is the one on the full base)."""
    commands = base.commands
    wanted = frozenset() if commands is None else commands.needed(ops) - base.loaded
    if not wanted:
        return None
    if min(wanted) > max(base.loaded, default=-1):
        if _STATES[id(base)] != "empty":
            base.egraph.pop()
            _STATES[id(base)] = "empty"
        prebuilt.extend(base, wanted)
        return base
    rebuilt = prebuilt.load(commands, prebuilt.runs_of(base.package), base.loaded | wanted)
    key = (None if schedule is None else schedule.schedule, saved)
    _BASES[key] = (_BASES[key][0], rebuilt)
    _drop(base)
    _STATES[id(rebuilt)] = "empty"
    return rebuilt


def _drop(base: prebuilt.Base) -> None:
    """Let `base` go (collected after the run, on the egglog thread)."""
    del _STATES[id(base)]
    _DROPPED.append(base)


def _build(schedule: Ruleset | Schedule | None, package: str | None) -> prebuilt.Base:
    """`schedule`'s base: loaded from saved commands for the package default `package` (the packaged
    ones, else the cache dir's, saved first if they are not yet), else made through egglog-python."""
    from .rulesets.shapes import shapes

    if package is not None and schedule is not None:
        data = prebuilt.saved(package) or prebuilt.save(package, _describe)
        try:
            commands = None if data is None else prebuilt.Commands(data)
            loaded = None if commands is None else prebuilt.load(commands, prebuilt.runs_of(package), frozenset())  # (rules: _with_rules)
        except Exception as error:  # a saved file this code cannot run (edited, or from a damaged disk): the base is built as below
            _DROPPED.append(error)  # (its traceback holds the partly loaded e-graph)
            loaded = None
        if loaded is not None:
            for declared, text in loaded.schedules.items():
                _SCHEDULE_TEXTS.setdefault(declared, text)
            return loaded
    egraph = EGraph()
    if schedule is not None:
        egraph.run(schedule)
    egraph.run(shapes.saturate())
    return prebuilt.Base(egraph, {}, {})


@contextmanager
def _pushed(schedule: Ruleset | Schedule | None, saved: bool, outputs: list[Node], target: Target,
            facts: list[Node] | None = None) -> Iterator[tuple[prebuilt.Base, list[bindings._Command]]]:
    """`schedule`'s base (`_base`) declaring the rules the program `outputs` can match, its e-graph pushed
    for one run, and the commands seeding the program into it (seed.program: with the shapes and dtypes
    of `facts`, all nodes by default, and what the tiling rules read of `target`; made on the pushed copy,
    whose egglog-python state they may add to).
    egglog's push clones the e-graph with its rules and pop drops the clone, so both are done after the
    run, while the thread is idle (the caller lowers and compiles meanwhile): the next run finds a pushed
    copy ready."""
    base: prebuilt.Base | None = _base(schedule, saved)
    nodes = topological(outputs)
    while base is not None:  # (once more when rules were added: the commands are made on the new pushed copy)
        _ready(base)
        seeding = program(base.egraph, outputs, nodes, nodes if facts is None else facts, target)
        used, base = base, _with_rules(schedule, saved, base, called(seeding))
    base = used
    _STATES[id(base)] = "used"
    try:
        yield base, seeding
    finally:
        _EGGLOG_THREAD.later(lambda: _ready(base))


def _ready(base: prebuilt.Base) -> None:
    """Make `base`'s e-graph a pushed copy of the empty base: pop a used copy, push a new one."""
    if _STATES[id(base)] == "used":
        base.egraph.pop()
        _STATES[id(base)] = "empty"
    if _STATES[id(base)] == "empty":
        base.egraph.push()
        _STATES[id(base)] = "pushed"


def _optimize(
    outputs: list[Node],
    schedule: Ruleset | Schedule | None,
    limits: Limits,
    cost_model: TensorCostModel,
    baseline: tuple[Ruleset | Schedule | None, ...] = (),
    alternatives: int = 0,
) -> tuple[list[Node], OptimizeReport]:
    with _pushed(schedule, True, outputs, cost_model.target) as (base, seeding):
        return _rewrite_and_extract(base, seeding, outputs, schedule, limits, cost_model, baseline, alternatives)


def rewritten(outputs: list[Node], schedule: Ruleset | Schedule | None, look: Callable[[EGraph], T],
              limits: Limits = Limits(), seeded: Callable[[list[Node]], list[Node]] = topological) -> T:
    """look(e-graph) after the optimizer's rewriting of `outputs` with `schedule` (before extraction),
    run on the egglog thread: for tests and debugging of what the rules build. The shapes and dtypes
    of the nodes `seeded(outputs)` are seeded (the optimizer seeds all; fewer test the shape rules)."""

    def run() -> T:
        with _pushed(schedule, False, outputs, Target.host(), seeded(outputs)) as (base, seeding):  # (look may read it with egglog-python)
            INTERRUPT.clear()
            seed(base.egraph, seeding)
            _rewrite(base, schedule, limits)
            return look(base.egraph)

    return _EGGLOG_THREAD.run(run)


def _is_traced(nodes: list[Node], outputs: list[Node], builder: Builder) -> bool:
    """Whether `nodes` (made by `builder`) are the traced program `outputs`."""
    copies = builder.copy(outputs)
    return all(a is copies[id(b)] for a, b in zip(nodes, outputs, strict=True))


def _rewrite(base: prebuilt.Base, schedule: Ruleset | Schedule | None,
             limits: Limits, stats: dict[str, _Tally] | None = None) -> tuple[dict[str, _Tally], int, str, float]:
    """Run `schedule` one step per iteration, saturating the shape analysis after each, until nothing
    changes or a limit is hit: per-ruleset tallies (added to `stats`), iterations, why it stopped, seconds."""
    from .rulesets.shapes import shapes

    start = time.perf_counter()
    stats = {} if stats is None else stats
    iterations, reason = 0, "saturated"
    if schedule is not None:
        reason = "iteration limit"
        with Progress("optimizer", limits.iterations) as progress:
            while iterations < limits.iterations:
                report = _run(base, schedule)
                shaped = _run(base, shapes.saturate())  # shapes and dtypes of the terms this step created, for later conditions
                iterations += 1
                _tally(stats, report)
                size = egraph_size(base.egraph)
                progress.update(iterations, f"{size:,} e-nodes")
                if not report.updated and not shaped.updated:
                    reason = "saturated"
                    break
                if size > limits.enodes:
                    reason = "e-node limit"
                    break
                if time.perf_counter() - start > limits.seconds:
                    reason = "time limit"
                    break
                if INTERRUPT.is_set():
                    reason = "interrupted"
                    break
    return stats, iterations, reason, time.perf_counter() - start


def _rewrite_and_extract(
    base: prebuilt.Base,
    seeding: list[bindings._Command],
    outputs: list[Node],
    schedule: Ruleset | Schedule | None,
    limits: Limits,
    cost_model: TensorCostModel,
    baseline: tuple[Ruleset | Schedule | None, ...] = (),
    alternatives: int = 0,
) -> tuple[list[Node], OptimizeReport]:
    INTERRUPT.clear()  # (a Ctrl-C from now on stops the rewriting, every phase of it)
    egraph = base.egraph
    seed(egraph, seeding)  # (the traced program, one `let` per node: seeding stays linear in its size at any depth)
    builder = Builder()
    try:
        first = extract(egraph, cost_model, limits.evaluations, builder)
    except ExtractionError as e:
        first = Extracted([], math.nan, 0, str(e))
    before = first.cost
    if first.cut or not _is_traced(first.outputs, outputs, builder):  # never compile a term of a wrongly built e-graph
        fallback = "egglog registered the traced program wrongly (its e-graph does not hold the traced term)"
        if first.cut:
            fallback = f"the traced program could not be read back from its e-graph ({first.cut})"
        report = OptimizeReport("none", 0, "saturated", (), egraph_size(egraph), 0.0, before, before,
                                limits, fallback, first.cut)
        return outputs, report
    stats: dict[str, _Tally] = {}
    iterations, reasons, seconds = 0, [], 0.0
    fallback, nodes, after, cut = "", outputs, before, ""
    for phase in (*baseline, schedule):  # the e-graph grows phase by phase: the cheapest extraction wins
        left = replace(limits, iterations=max(1, limits.iterations - iterations), seconds=limits.seconds - seconds)
        _, steps, reason, spent = _rewrite(base, phase, left, stats)
        iterations, seconds = iterations + steps, seconds + spent
        reasons.append(reason)
        try:
            got = extract(egraph, cost_model, limits.evaluations)
        except ExtractionError as e:
            fallback, nodes, after, cut = f"the extraction found no program ({e})", outputs, before, ""
            break
        if nodes is outputs or got.cost < after:  # (the first phase's program is taken as extracted)
            nodes, after, cut = got.outputs, got.cost, got.cut
    reason = next((r for r in reasons if r != "saturated"), "saturated")
    others = () if fallback or not alternatives else \
        tuple((x.cost, tuple(x.outputs)) for x in extract_alternatives(egraph, cost_model, limits.evaluations, alternatives))
    report = OptimizeReport(
        schedule=_schedule_text(schedule),
        iterations=iterations,
        stop_reason=reason,
        rulesets=tuple(t.stats(name) for name, t in stats.items()),
        enodes=egraph_size(egraph),
        seconds=seconds,
        cost_before=before,
        cost_after=after,
        limits=limits,
        fallback=fallback,
        cut=cut,
        alternatives=others,
    )
    return nodes, report
