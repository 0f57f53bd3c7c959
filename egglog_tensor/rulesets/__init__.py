"""Rulesets over the tensor term language, as egglog rulesets users can import and compose.

`DEFAULT` is what `@kernel` runs unless `rules=` says otherwise (one step each of `algebra`,
`fusion`, `layout` and `tiling`, repeated until nothing changes or a limit is hit); `FASTMATH` is added on top when a
kernel is compiled with `fastmath=True`, and `fastmath_rules(flags)` (the groups of `FASTMATH` whose
fast-math flags `flags` allows) with `fastmath=` some flags. `shapes` is the shape analysis the optimizer always runs.
`algebra`, `algebra_fastmath`, `fusion` and `layout` are made of named groups of rules
(`groups.GROUPS`: "transpose", "power", "materialize", ...), rulesets of their own that the report names.

The rules are the same for every machine: what the tiling rules offer (cache tiles, reduction lanes)
is read from facts about the kernel's Target that the optimizer adds with each program
(`tiling.target_facts`), so a schedule holding `tiling` tiles for whichever Target a kernel compiles for.
"""

from __future__ import annotations

import functools
from functools import reduce
from operator import add

from egglog import Ruleset, unstable_combine_rulesets

from .algebra import algebra, algebra_fastmath
from ..fastmath import FLAGS, fastmath_flags
from .fusion import fusion
from .groups import GROUPS, NEEDS
from .layout import layout
from .shapes import shapes
from .tiling import tiling

FASTMATH = algebra_fastmath


DEFAULT_RULESETS = (algebra, fusion, layout, tiling)  # what the default schedule runs, one step each, in this order
DEFAULT = reduce(add, DEFAULT_RULESETS)


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

__all__ = ["DEFAULT", "DEFAULT_RULESETS", "FASTMATH", "FLAGS", "algebra", "algebra_fastmath",
           "fastmath_flags", "fastmath_groups", "fastmath_rules", "fusion", "layout", "shapes", "tiling"]
