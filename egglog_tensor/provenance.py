"""Where each value of the extracted program came from: the user's source lines, through rewriting.

A value of the extracted program that the traced program also holds (the same op, attributes and
inputs) has the lines that made it. A value the optimizer made is `rewritten`: it has the lines of
the traced values of the same op, attributes, shape and dtype (a product reordered, an op whose
inputs were rewritten), else, for an output, the traced output's (the same value), else those of the
traced values below it (a materialization), else those of its readers. Arguments have no line.
A rewritten value also names the rules that may have made it (`builders`: those that matched in the
run and build its op; egglog keeps no per-node history, so these are candidates, not a proof).

The emitter puts these on the MLIR ops as locations (`loc("file.py":12:0)`, fused when several lines
made one op, inside a name `"rewritten by rules a, b"`), so MLIR's diagnostics name the user's
lines, the debug-info stage makes them LLVM line tables, an error raised for a value or an op names
them (`naming`), and the `provenance` stage lists each emitted op with its lines and rules.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING

from egglog.declarations import BiRewriteDecl, CallDecl, RewriteDecl, RuleDecl

from .graph import Builder, Node, topological
from .ir import OP_OF_REF
from .rulesets.groups import group_of
from .sourcelines import Line, Where

if TYPE_CHECKING:
    from .optimize import OptimizeReport


def builders(report: OptimizeReport) -> dict[str, tuple[str, ...]]:
    """Op -> the rules (by group, else by ruleset) that matched in this run and build that op: the
    op at the root of their right-hand side, or one their right-hand side has and their left-hand
    side does not. A rule that matched need not have made the extracted node: this names the
    candidates, not a proof (egglog records no per-node history)."""
    found: dict[str, dict[str, None]] = {}
    for stats in report.rulesets:
        for matched, _ in stats.counted:
            made, group = getattr(matched, "built", None), getattr(matched, "group", "")  # (a saved base's rule: optimize._Saved)
            if made is None:
                rule = getattr(matched, "rule", None)  # (a report read back from the cache keeps only texts)
                if rule is None:
                    continue
                made, group = built(rule), group_of(rule)
            for op in made:
                found.setdefault(op, {})[group or stats.name] = None
    return {op: tuple(names) for op, names in found.items()}


@functools.cache
def built(rule: object) -> frozenset[str]:
    """The ops a rule declaration builds (builders' docstring)."""
    if isinstance(rule, (RewriteDecl, BiRewriteDecl)):
        matched, made = _ops(rule.lhs), _ops(rule.rhs)
        root = {OP_OF_REF[rule.rhs.callable]} if isinstance(rule.rhs, CallDecl) and rule.rhs.callable in OP_OF_REF else set()
        return frozenset(root | (made - matched) | ((matched - made) if isinstance(rule, BiRewriteDecl) else set()))
    if isinstance(rule, RuleDecl):
        return frozenset(_ops(rule.head) - _ops(rule.body))
    return frozenset()


def _ops(decl: object) -> set[str]:
    """The tensor ops called anywhere in an egglog declaration (its fields walked)."""
    found, stack = set(), [decl]
    while stack:
        d = stack.pop()
        if isinstance(d, CallDecl) and d.callable in OP_OF_REF:
            found.add(OP_OF_REF[d.callable])
        if isinstance(d, tuple):
            stack.extend(d)
        elif dataclasses.is_dataclass(d) and not isinstance(d, type):
            stack.extend(getattr(d, f.name) for f in dataclasses.fields(d))
    return found


def defined(fn: Callable[..., object]) -> Line | None:
    """The (file, line) of the `def` of a kernel's function (through decorators and partials), else None."""
    while isinstance(fn, functools.partial):
        fn = fn.func
    code = getattr(inspect.unwrap(fn), "__code__", None)
    return (code.co_filename, code.co_firstlineno) if code is not None else None


def located(traced: Sequence[Node], locations: Mapping[Node, Line], extracted: Sequence[Node],
            rules: Mapping[str, tuple[str, ...]] | None = None) -> dict[int, Where]:
    """Where of each extracted node, by id (module docstring); a rewritten one's rules: those `rules`
    (`builders`) names for its op."""
    builder = Builder()  # (copied into one builder, a value of both programs is one node)
    traced_copies, copies = builder.copy(list(traced)), builder.copy(list(extracted))

    def kind(n: Node) -> tuple:
        return n.op, n.attrs, n.shape, n.dtype

    exact: dict[int, set[Line]] = {}
    alike: dict[tuple, set[Line]] = {}
    for n in topological(list(traced)):
        if n in locations:
            exact.setdefault(id(traced_copies[id(n)]), set()).add(locations[n])
            alike.setdefault(kind(n), set()).add(locations[n])
    known = {id(c) for c in traced_copies.values()}
    same = {id(n): {locations[t]} for t, n in zip(traced, extracted) if t in locations}  # an output: the traced output's
    nodes = topological(list(extracted))
    found: dict[int, set[Line]] = {}
    rewritten: dict[int, bool] = {}
    for n in nodes:
        k = id(copies[id(n)])
        rewritten[id(n)] = k not in known
        below = set().union(*(found[id(i)] for i in n.inputs))
        found[id(n)] = (set(exact.get(k, ())) if not rewritten[id(n)]
                        else set(alike.get(kind(n), ())) or set(same.get(id(n), ())) or below)
    for n in reversed(nodes):  # values with no line below them take their readers'
        for i in n.inputs:
            if not found[id(i)]:
                found[id(i)] |= found[id(n)]
    rules = rules or {}
    return {id(n): Where(frozenset(found[id(n)]), rewritten[id(n)], rules.get(n.op, ()) if rewritten[id(n)] else ())
            for n in nodes}
