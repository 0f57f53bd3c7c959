"""Rulesets over the tensor term language, as egglog rulesets users can import and compose.

`DEFAULT` is what `@kernel` runs unless `rules=` says otherwise (one step each of `algebra`,
`fusion`, `layout` and `tiling`, repeated until nothing changes or a limit is hit); `FASTMATH` is added on top when a
kernel is compiled with `fastmath=True`, and `fastmath_rules(flags)` (the groups of `FASTMATH` whose
fast-math flags `flags` allows) with `fastmath=` some flags. `shapes` is the shape analysis the optimizer always runs.
`algebra`, `algebra_fastmath`, `fusion` and `layout` are made of named groups of rules
(`groups.GROUPS`: "transpose", "power", "materialize", ...), rulesets of their own that the report names.

The tiling rules depend on the machine: `tiling_rules(target)` and `default_for(target)` build them
for a Target; `tiling`, `DEFAULT` and `DEFAULT_RULESETS` are the host's. A kernel
compiled for another Target with the default rules runs `default_for` that Target.
"""

from __future__ import annotations

import functools
from functools import reduce
from operator import add

from egglog import Ruleset, unstable_combine_rulesets

from ..target import Target
from .algebra import algebra, algebra_fastmath
from ..fastmath import FLAGS, fastmath_flags
from .fusion import fusion
from .groups import GROUPS, NEEDS
from .layout import layout
from .shapes import shapes
from .tiling import tiling_rules, what_rules_read

FASTMATH = algebra_fastmath


def default_rulesets(target: Target) -> tuple[Ruleset, ...]:
    """What the default schedule for `target` runs, one step each, in this order."""
    return (algebra, fusion, layout, tiling_rules(target))


def default_for(target: Target) -> Ruleset:
    """The default schedule for `target`: algebra + fusion + layout + its tiling rules (one object for
    targets that share their tiling rules)."""
    return _default(what_rules_read(target))


@functools.cache
def _default(target: Target) -> Ruleset:
    return reduce(add, default_rulesets(target))


def fastmath_groups(flags: frozenset[str]) -> tuple[str, ...]:
    """The names of the fast-math groups whose flags all are in `flags`."""
    return tuple(name for name, needs in NEEDS.items() if needs <= flags)


def fastmath_rules(flags: frozenset[str]) -> Ruleset | None:
    """The fast-math groups `flags` allows, as one ruleset: `FASTMATH` itself when that is every
    group, None when it is none."""
    return _fastmath_rules(fastmath_groups(flags))


@functools.cache
def _fastmath_rules(names: tuple[str, ...]) -> Ruleset | None:
    if set(names) == set(NEEDS):
        return FASTMATH
    return unstable_combine_rulesets(*(GROUPS[name] for name in names), name="fastmath:" + "+".join(names)) if names else None


# The host's (the tiling rules read its caches and SIMD width here, once).
tiling = tiling_rules(Target.host())
DEFAULT_RULESETS = default_rulesets(Target.host())
DEFAULT = default_for(Target.host())

__all__ = ["DEFAULT", "DEFAULT_RULESETS", "FASTMATH", "FLAGS", "algebra", "algebra_fastmath", "default_for", "default_rulesets",
           "fastmath_flags", "fastmath_groups", "fastmath_rules", "fusion", "layout", "shapes", "tiling", "tiling_rules"]
