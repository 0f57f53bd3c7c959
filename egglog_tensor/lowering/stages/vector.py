"""The vector stage: vector ops left by the tile stage, n-D transfers as loops of 1-D ones, masks as selects."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from .stage import Stage


@dataclass(frozen=True)
class Vector(Stage):
    """n-D vector transfers become loops of 1-D ones (fully unrolled), masks become selects."""

    name: ClassVar[str] = "vector"
    passes: ClassVar[tuple[str, ...]] = ("convert-vector-to-scf{full-unroll=true}", "func.func(lower-vector-mask)", "canonicalize", "cse")
