"""Fast-math flags, LLVM's: what a kernel compiled with `fastmath=` allows the optimizer and the code.

Each flag allows one kind of inexactness (LLVM LangRef, "Fast-Math Flags"): `reassoc` reassociation
(matrix chains, sums), `nnan` assuming no NaN, `ninf` assuming no infinity, `nsz` ignoring the sign
of zero, `arcp` a reciprocal for a division, `contract` fusing a multiply and an add (FMA), `afn`
approximate math functions. A rule group that is not exact names the flags it needs
(`rulesets/groups.py`), and the emitted float arithmetic carries the allowed flags as MLIR's
`#arith.fastmath<...>` (lowering/emit.py).
"""

from __future__ import annotations

from collections.abc import Iterable

from egglog_tensor.errors import OptionError

FLAGS = ("reassoc", "nnan", "ninf", "nsz", "arcp", "contract", "afn")  # LLVM's (and MLIR's printing) order


class FastMath(frozenset[str]):
    """A set of fast-math flags whose repr and str list them in LLVM's order (stable cache keys)."""

    def __repr__(self) -> str:
        return f"FastMath({str(self)!r})"

    def __str__(self) -> str:
        return ",".join(f for f in FLAGS if f in self) or "none"


ALL = FastMath(FLAGS)
NONE = FastMath()


def fastmath_flags(value: bool | str | Iterable[str] | None) -> FastMath:
    """The flags `fastmath=` names: True (or "fast") all of them, False/None none, else a flag, a
    comma- or space-separated string of flags, or an iterable of them; an unknown flag is an OptionError."""
    if isinstance(value, FastMath):
        return value
    if value is None or isinstance(value, bool):
        return ALL if value else NONE
    if not isinstance(value, str | Iterable):
        raise OptionError(f"fastmath: {value!r} is not True/False, a flag or flags; the flags are {', '.join(FLAGS)}")
    names = value.replace(",", " ").split() if isinstance(value, str) else list(value)
    if names == ["fast"]:
        return ALL
    unknown = [n for n in names if n not in FLAGS]
    if unknown:
        raise OptionError(f"fastmath: unknown flag(s) {', '.join(map(repr, unknown))}; the flags are "
                          f"{', '.join(FLAGS)} (LLVM's), or True for all of them")
    return FastMath(names)


__all__ = ["ALL", "FLAGS", "NONE", "FastMath", "fastmath_flags"]
