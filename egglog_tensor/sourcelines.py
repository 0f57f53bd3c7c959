"""The user's source lines of emitted ops and errors: `loc("file.py":12:0)` locations read back, an
error's message naming the lines it was raised for, and the `provenance` stage's listing (which
provenance.py fills from the optimizer's side). Free of egglog: the lowering tools import it."""

from __future__ import annotations

import linecache
import re
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

from .errors import EgglogTensorError

Line = tuple[str, int]  # (file, line)


@dataclass(frozen=True)
class Where:
    """The source lines of one value, whether the optimizer made it (not in the traced program), and
    then the rules that may have: those that matched and build its op (`builders`)."""

    lines: frozenset[Line]
    rewritten: bool
    rules: tuple[str, ...] = ()


def lines_in(location: object) -> list[Line]:
    """The (file, line)s an MLIR location names (its text as MLIR prints it, or an ir.Location)."""
    return [(f, int(n)) for f, n in _FILE.findall(str(location))]


def source(lines: Iterable[Line], short: bool = False) -> str:
    """`file:line: code` of each line ("; " between them); `short`: the file's name without its directory."""
    return "; ".join(f"{f.rsplit('/', 1)[-1] if short else f}:{n}: {linecache.getline(f, n).strip()}" for f, n in sorted(lines))


@contextmanager
def naming(lines: Iterable[Line]) -> Iterator[None]:
    """An EgglogTensorError raised inside names the user's `lines` (those of the value or op it was
    raised for) at the end of its message, once: the innermost `naming` names them, outer ones
    leave them. `error.lines` keeps them."""
    try:
        yield
    except EgglogTensorError as error:
        name_lines(error, lines)
        raise


def name_lines(error: EgglogTensorError, lines: Iterable[Line]) -> EgglogTensorError:
    """`error` with the user's `lines` named at the end of its message and kept in `error.lines`,
    unless it names some already (or has no one-string message, or `lines` is empty)."""
    lines = sorted(set(lines))
    if lines and getattr(error, "lines", None) is None and len(error.args) == 1 and isinstance(error.args[0], str):
        error.lines = lines
        error.args = (f"{error.args[0]}\n  at {source(lines)}",)
    return error


def listing(ops: Sequence[tuple[str, str]]) -> str:
    """The `provenance` stage: each op of the kernel's body (its name, its location as MLIR prints it)
    with the source lines it came from."""
    rows = []
    for name, where in ops:
        text = source(lines_in(where), short=True) or "(no source line)"
        rules = _RULES.search(where)
        rows.append(f"{name:24s} <- {text}" + (f" [rewritten by the optimizer{': rules ' + rules[1] if rules else ''}]"
                                               if '"rewritten' in where else ""))
    return "\n".join(rows)


_FILE = re.compile(r'"([^"]+)":(\d+):\d+')
_RULES = re.compile(r'"rewritten by rules ([^"]+)"')
