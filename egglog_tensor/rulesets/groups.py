"""Named groups of rules: each group is a ruleset of its own ("transpose", "power", ...) whose rules
the public rulesets (`algebra`, `fusion`, ...) also hold, so a schedule runs them as one ruleset
while the optimizer's report and the tests name the group a fired rule belongs to. A group that is
not exact under IEEE-754 names the fast-math flags it needs (`needs=`, fastmath.py): it runs
only in kernels whose `fastmath=` allows all of them."""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable
from typing import Any, get_type_hints

from egglog import Ruleset, ruleset

from egglog_tensor.fastmath import FLAGS

Generator = Callable[..., Iterable[Any]]

GROUPS: dict[str, Ruleset] = {}  # every group, by name, in order of definition
_MADE: dict[str, list[Any]] = {}  # each group's rules, once a ruleset holding them is expanded
_INDEX: dict[object, str] = {}  # rule declaration -> its group's name (filled by group_of)
_INDEXED: list[int] = [0]  # how many made rules `_INDEX` holds
NEEDS: dict[str, frozenset[str]] = {}  # each inexact group's fast-math flags, by name, in order of definition


def group(name: str, *parents: Ruleset, needs: Iterable[str] = ()) -> Callable[[Generator], Generator]:
    """Decorator: register a rule generator as the group `name` and in each of `parents`, which
    run its rules (egglog calls the generator once: the rules are made once and shared); `needs`:
    the fast-math flags an inexact group's rules need (none: the group is exact)."""

    def register(gen: Generator) -> Generator:
        if name in GROUPS:
            raise ValueError(f"rule group {name!r} is defined twice")
        if not set(needs) <= set(FLAGS):
            raise ValueError(f"rule group {name!r} needs unknown fast-math flags {sorted(set(needs) - set(FLAGS))}")
        if needs:
            NEEDS[name] = frozenset(needs)
        made = _MADE[name] = []

        @functools.wraps(gen)
        def once(*variables: Any) -> list[Any]:
            if not made:
                made.extend(gen(*variables))
            return made

        once.__annotations__ = get_type_hints(gen)  # resolved here: egglog reads them in this module
        GROUPS[name] = ruleset(name=name)
        for target in (GROUPS[name], *parents):
            target.register(once)
        return gen

    return register


def group_of(rule: object) -> str | None:
    """The name of the group holding `rule` (an egglog rule declaration, as a RunReport names it), or
    None for a rule in no group (a user's own). A rule that ran was made, so only made rules are looked at;
    they are indexed again only when more were made (a rule in no group asked for again costs one lookup)."""
    if rule not in _INDEX and (count := sum(map(len, _MADE.values()))) != _INDEXED[0]:
        for name, made in _MADE.items():
            _INDEX.update((r.decl, name) for r in made)
        _INDEXED[0] = count
    return _INDEX.get(rule)


__all__ = ["GROUPS", "NEEDS", "group", "group_of"]
