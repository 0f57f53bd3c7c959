"""The base e-graphs of the package's own default schedules, saved once and loaded as egglog commands.

egglog-python makes a schedule's ~1,200 rules by running the rule generators through its DSL and
converting each declaration: about 3 s of a fresh process's first kernel. Those are the package's
own rules, so the egg commands that conversion sends to egglog (the declarations, the rules, the
base's runs of the schedule and of the shape analysis) are saved once as egglog text in the on-disk
cache (`<cache dir>/bases/`, JSON), keyed by the package's source hash and egglog's version (the rules
are the same on every machine: what the tiling rules read of a Target are facts added with each program). A later process parses and runs those commands: no rule goes through
egglog-python. Saved beside them: what the optimizer otherwise asks egglog-python's state for (the
egg names of functions and sorts, the run commands, each egg rule's ruleset and its place in the
declarations, whose text a report makes when read).

Only the unmodified package default (`rulesets.DEFAULT`, with `FASTMATH` under fastmath:
`cache.package_schedule_name`) is saved; any other schedule builds its base through egglog-python.

The same saved form is also generated into the package (`egglog_tensor/bases/*.json.gz`, written
by `python -c 'import egglog_tensor.prebuilt as p; p.write_packaged()'`), keyed by the sources the
rules are made from (`RULE_SOURCES`) instead of all the package's: it serves a first kernel with
the cache off (EGGLOG_TENSOR_CACHE=0), or before the cache dir has a base, when its key is this
process's.
A stale file is not used; tests/test_compile_time.py fails on one (a key that is not current, or
contents that recording them again does not make).

A loaded base declares its rules only as programs need them (`Commands.needed`): egglog takes ~0.35 ms
to add a rule, 0.4 s for all, and a kernel's ops and dtypes can match a tenth of them. A rule whose
query calls a constructor (an op, a dtype) that neither the program nor a needed rule's actions call
can never match, so leaving it out changes nothing that runs; a base's rules keep their saved order.
"""

from __future__ import annotations

import dataclasses
import functools
import gc
import gzip
import hashlib
import json
import re
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import egglog.declarations
from egglog import EGraph, Ruleset, Schedule, bindings

from . import cache

FORMAT = 7


class _Unsaveable(Exception):
    """A value the JSON form cannot hold (a Python object in a rule): that base is not saved."""


def encode(value: Any) -> Any:
    """An egglog declaration reference (Ident, FunctionRef, JustTypeRef, ...: the keys of egglog-python's
    name tables) as JSON: {"d": class name, "a": fields}."""
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, tuple):
        return {"t": [encode(v) for v in value]}
    kind = type(value)
    if dataclasses.is_dataclass(value) and getattr(egglog.declarations, kind.__name__, None) is kind:
        return {"d": kind.__name__, "a": [encode(getattr(value, f.name)) for f in dataclasses.fields(value)]}
    raise _Unsaveable(f"a {kind.__name__} in egglog-python's name tables")


def decode(value: Any) -> Any:
    """The value `encode` made JSON of."""
    if not isinstance(value, dict):
        return value
    if "t" in value:
        return tuple(decode(v) for v in value["t"])
    return getattr(egglog.declarations, value["d"])(*map(decode, value["a"]))


def _name(command: bindings._Command) -> str | None:
    """A rewrite command's rule name (None for other commands: a rule prints its name)."""
    return getattr(getattr(command, "rewrite", None), "name", None)


def _text(command: bindings._Command, parser: bindings.EGraph) -> str:
    """An egg command as egglog text (a rewrite with its rule name, which egglog does not print), checked
    to parse back to the same command."""
    text = str(command)
    if _name(command):
        text = f"{text[:-1]} :name {json.dumps(_name(command))})"
    back = parser.parse_program(text)
    if len(back) != 1 or str(back[0]) != str(command) or _name(back[0]) != _name(command):
        raise _Unsaveable(f"a command egglog does not print as it parses: {text[:200]}")
    return text


_TOKENS = re.compile(r'"(?:\\.|[^"\\])*"|[()]|[^\s()]+')


def _parts(text: str) -> list[set[str]]:
    """The top-level parts of an egglog command's text: an atom as itself, a list as the names it calls."""
    parts: list[set[str]] = []
    depth, head = 0, False
    for token in _TOKENS.findall(text):
        if token == "(":
            if depth == 1:
                parts.append(set())
            depth, head = depth + 1, True
            continue
        if token == ")":
            depth -= 1
        elif depth == 1:
            parts.append({token})
        elif head:
            parts[-1].add(token)
        head = False
    return parts


def rule_ops(texts: list[str]) -> dict[str, list[list[str]]]:
    """For each rule command of `texts` (by its index): the constructors its query calls and those its actions
    call (egg names: ops, dtypes, ...). A rule cannot match while a constructor of its query has no e-node."""
    constructors = {text.split()[1] for text in texts if text.startswith("(constructor ")}
    ops: dict[str, list[list[str]]] = {}
    for index, text in enumerate(texts):
        kind = text[1:].split(None, 1)[0]
        if kind not in ("rewrite", "rule"):
            continue
        parts = _parts(text)  # rewrite: its name, lhs, rhs[, :when, conditions], ...; rule: its name, query, actions, ...
        when = [parts[i + 1] for i in range(3, len(parts) - 1) if kind == "rewrite" and parts[i] == {":when"}]
        query = parts[1].union(*when)
        ops[str(index)] = [sorted(query & constructors), sorted(parts[2] & constructors)]
    return ops


class Commands:
    """A saved base's commands, each parsed alone when first run (one text of them all: egglog's parser
    takes seconds, each of its spans holding the whole text), and which of its rules a program can match."""

    def __init__(self, data: dict[str, Any]) -> None:
        self.data = data
        self.texts: list[str] = data["commands"]
        self.rules = {int(i): (frozenset(query), frozenset(built)) for i, (query, built) in data["ops"].items()}
        self.declarations = [i for i in range(len(self.texts)) if i not in self.rules]  # (and the base's runs)
        self._parser = bindings.EGraph()
        self._parsed: dict[int, list[bindings._Command]] = {}
        self._needed: dict[frozenset[str], frozenset[int]] = {}

    @functools.cached_property
    def names(self) -> tuple[dict[str, set[Any]], dict[Any, tuple[str, bool]], dict[Any, str]]:
        """egglog-python's name tables, decoded (each base loaded from these commands gets copies)."""
        return ({name: set(map(decode, refs)) for name, refs in self.data["functions"]},
                {decode(ref): (egg, reverse) for ref, (egg, reverse) in self.data["callables"]},
                {decode(ref): sort for ref, sort in self.data["sorts"]})

    @functools.cached_property
    def places(self) -> dict[str, tuple[Any, ...]]:
        """Each egg rule name's ruleset for the report, group, ops built, declaring ruleset and index there (Base.rules)."""
        return {name: (owner, group, tuple(built), ruleset, index) for name, (owner, group, built, ruleset, index) in self.data["rules"].items()}

    def parsed(self, indices: Iterable[int]) -> list[bindings._Command]:
        """The egg commands of the saved texts at `indices`, in that order."""
        for i in indices:
            if i not in self._parsed:
                self._parsed[i] = self._parser.parse_program(self.texts[i])
        return [command for i in indices for command in self._parsed[i]]

    def parse(self, text: str) -> bindings._Command:
        """One command of a saved text (a run)."""
        (command,) = self._parser.parse_program(text)
        return command

    def needed(self, ops: frozenset[str]) -> frozenset[int]:
        """The rules a program calling the functions `ops` (egg names: seed.called) can match: those whose
        query calls only constructors of the program or of a needed rule's actions (a fixpoint)."""
        if ops not in self._needed:
            held, rules, changed = set(ops), set(), True
            while changed:
                changed = False
                for index, (query, built) in self.rules.items():
                    if index not in rules and query <= held:
                        rules.add(index)
                        held |= built
                        changed = True
            self._needed[ops] = frozenset(rules)
        return self._needed[ops]


@dataclass
class Base:
    """A base e-graph: the e-graph, each schedule's run command (made when first run), and, when made
    from saved commands (egglog-python's state then holds only the saved names), each egg rule name's
    ruleset for the report and its place in the schedule's declarations (for its text, made when read)."""

    egraph: EGraph
    runs: dict[object, bindings._Command]  # by the schedule's declaration
    rules: dict[str, tuple[Any, ...]]  # egg rule name -> (report's ruleset, group, ops built, declaring ruleset, index there)
    package: str = ""  # the package schedule it was saved for ("": made through egglog-python)
    schedules: dict[object, str] = dataclasses.field(default_factory=dict)  # str() of each schedule, by its declaration (saved)
    commands: Commands | None = None  # the saved commands it was loaded from (None: made through egglog-python)
    loaded: frozenset[int] = frozenset()  # which of their rules it declares


@functools.cache
def schedule_of(name: str) -> Schedule:
    """The package schedule `name` ("DEFAULT" or "DEFAULT + FASTMATH"), one object per process."""
    from . import rulesets

    return rulesets.DEFAULT if name == "DEFAULT" else rulesets.DEFAULT + rulesets.FASTMATH


PACKAGE = Path(__file__).resolve().parent
# What a saved base is made from, besides egglog: the rules' modules, what they import of the package
# and what is saved of each rule (provenance.built, groups.group_of); the packaged bases' key hashes these.
RULE_SOURCES = ("rulesets/*.py", "ir.py", "ops.py", "fastmath.py", "lowering/policy.py", "provenance.py", "prebuilt.py")


@functools.cache
def rules_hash() -> str:
    """SHA-256 over the files of `RULE_SOURCES` (a packaged base is stale when one changes)."""
    digest = hashlib.sha256()
    for path in sorted({p for pattern in RULE_SOURCES for p in PACKAGE.glob(pattern)}):
        digest.update(str(path.relative_to(PACKAGE)).encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def _key(name: str, packaged: bool = False) -> str:
    """The key of the saved base of `name`: its sources (`packaged`: `RULE_SOURCES`; else the whole
    package's, as the disk cache's) and egglog's version."""
    return "\n".join([f"base e-graph format {FORMAT}: {name}", rules_hash() if packaged else cache.source_hash(),
                      f"egglog {cache._distribution_version('egglog')}"])


def packaged_path(name: str) -> Path:
    """Where the base of the package schedule `name` is generated into the package."""
    return PACKAGE / "bases" / f"{name.replace(' + ', '+')}.json.gz"


def _packaged(name: str) -> dict[str, Any] | None:
    """The packaged base of `name` when it is one for this process (its key), else None."""
    try:
        data = json.loads(gzip.decompress(packaged_path(name).read_bytes()))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) and data.get("key") == _key(name, packaged=True) else None


def path(name: str) -> Path | None:
    """Where the base of the package schedule `name` ("DEFAULT", "DEFAULT + FASTMATH") is saved; None with the cache off."""
    folder = cache.cache_dir()
    return None if folder is None else folder / "bases" / f"{hashlib.sha256(_key(name).encode()).hexdigest()[:24]}.json"


# (egglog declarations, rule) -> the ruleset the report counts it for, its group, the ops it builds (provenance.py)
Describe = Callable[[Any, Any], tuple[str, str, tuple[str, ...]]]


def record(schedule: Ruleset | Schedule, runs: dict[str, Ruleset | Schedule], describe: Describe) -> dict[str, Any]:
    """Build `schedule`'s base e-graph through egglog-python (as optimize._base does: run it, then the
    shape analysis, on an empty e-graph), recording every command it sends to egglog; the saved form.
    `runs`: the schedules a compile runs on this base, by name."""
    from .rulesets.shapes import shapes

    egraph, sent = EGraph(), []
    state_run = egraph._state._run_program

    def recorded(*commands: bindings._Command) -> list[bindings._CommandOutput]:
        sent.extend(commands)
        return state_run(*commands)

    egraph._state._run_program = recorded  # type: ignore[method-assign]
    egraph._run_program = recorded  # type: ignore[method-assign]
    egraph.run(schedule)
    egraph.run(shapes.saturate())
    state = egraph._state
    commands = {name: state.run_schedule_to_egg(s.schedule) for name, s in runs.items()}  # (declared already)
    assert len(sent) == len(set(map(id, sent))), "a command sent twice"
    decls = state.__egg_decls__
    places: dict[object, tuple[str, int]] = {}  # a rule -> (the first ruleset holding it, its index there)
    for ident, held in decls._rulesets.items():
        for index, rule in enumerate(getattr(held, "rules", ())):
            places.setdefault(rule, (str(ident), index))
    parser = bindings.EGraph()
    texts = [_text(c, parser) for c in sent]
    return {
        "commands": texts,
        "ops": rule_ops(texts),
        "runs": {name: _text(c, parser) for name, c in commands.items()},
        "schedules": {name: str(s) for name, s in runs.items()},  # (str() runs every rule generator: saved for the report)
        "rules": {name: [*describe(decls, rule), *places[rule]] for name, rule in state.rule_name_to_command_decl.items()},
        "functions": [[name, [encode(r) for r in sorted(refs, key=repr)]] for name, refs in state.egg_fn_to_callable_refs.items()],
        "callables": [[encode(ref), list(egg)] for ref, egg in state.callable_ref_to_egg_fn.items()],
        "sorts": [[encode(ref), sort] for ref, sort in state.type_ref_to_egg_sort.items()],
        "counters": [state.expr_to_let_counter, state.unnamed_function_counter, state.rule_name_counter],
    }


def load(commands: Commands, runs: dict[str, Ruleset | Schedule], rules: frozenset[int]) -> Base:
    """A fresh e-graph with the saved declarations and the rules `rules` (indices in `commands`) run, in
    their saved order, and egglog-python's state told the saved names."""
    data, egraph = commands.data, EGraph()
    egraph._run_program(*commands.parsed(sorted({*commands.declarations, *rules})))
    state, (functions, callables, sorts) = egraph._state, commands.names
    state.egg_fn_to_callable_refs = defaultdict(set, {name: set(refs) for name, refs in functions.items()})
    state.callable_ref_to_egg_fn, state.type_ref_to_egg_sort = dict(callables), dict(sorts)
    state.egg_sort_to_type_ref = {sort: ref for ref, sort in sorts.items()}
    state.expr_to_let_counter, state.unnamed_function_counter, state.rule_name_counter = data["counters"]
    return Base(egraph, {runs[name].schedule: commands.parse(text) for name, text in data["runs"].items()},
                commands.places, data["name"], {runs[name].schedule: text for name, text in data["schedules"].items()}, commands, rules)


def extend(base: Base, rules: frozenset[int]) -> None:
    """Declare the saved rules `rules` in `base`'s empty e-graph too (each after every rule it holds: the saved order)."""
    assert base.commands is not None and min(rules) > max(base.loaded, default=-1)
    base.egraph._run_program(*base.commands.parsed(sorted(rules)))
    base.loaded |= rules


def saved(name: str) -> dict[str, Any] | None:
    """The saved form of the package schedule `name`'s base, if it is saved for these sources and this
    egglog: the packaged one, else the cache dir's (none with the cache off)."""
    data = _packaged(name)
    if data is not None:
        return data
    data = cache.read_record(path(name))
    return data if isinstance(data, dict) and data.get("key") == _key(name) else None


def runs_of(name: str) -> dict[str, Ruleset | Schedule]:
    """The schedules a compile runs on the base of the package schedule `name`, by name ("schedule": its own)."""
    from .rulesets import DEFAULT
    from .rulesets.shapes import shapes

    return {"schedule": schedule_of(name), "shapes": shapes.saturate(), **({"baseline": DEFAULT} if name != "DEFAULT" else {})}


def generate(name: str, describe: Describe, packaged: bool = True) -> dict[str, Any]:
    """The saved form of the base of the package schedule `name`, recorded now, with its key (`_key`);
    the e-graph recording it made (in a reference cycle) is collected here, on the thread it was made on."""
    data = record(schedule_of(name), runs_of(name), describe)
    gc.collect()
    data["key"], data["name"] = _key(name, packaged), name
    return data


def write_packaged() -> list[Path]:
    """Generate the packaged bases ("DEFAULT", "DEFAULT + FASTMATH") into the package (byte-reproducible gzip)."""
    from .optimize import _EGGLOG_THREAD, _describe

    written = []
    for name in ("DEFAULT", "DEFAULT + FASTMATH"):
        data = _EGGLOG_THREAD.run(generate, name, _describe)
        packaged_path(name).parent.mkdir(exist_ok=True)
        packaged_path(name).write_bytes(gzip.compress(json.dumps(data, sort_keys=True).encode(), 9, mtime=0))
        written.append(packaged_path(name))
    return written


def save(name: str, describe: Describe) -> dict[str, Any] | None:
    """Record the package schedule `name`'s base and save it in the cache dir (an unwritable cache:
    not saved); None with the cache off or when its rules cannot be saved."""
    where = path(name)
    if where is None:
        return None
    try:
        data = generate(name, describe, packaged=False)
    except _Unsaveable:
        return None
    try:
        cache.write_atomic(where, json.dumps(data).encode())
    except OSError:
        pass
    return data

