"""Rulesets over the tensor term language, as egglog rulesets users can import and compose.

`DEFAULT` is what `@kernel` runs unless `rules=` says otherwise (one step each of `algebra`,
`fusion`, `layout` and `tiling`, repeated until nothing changes or a limit is hit); `FASTMATH` is added on top when a
kernel is compiled with `fastmath=True`. `shapes` is the shape analysis the optimizer always runs.
"""

from functools import reduce
from operator import add

from .algebra import algebra, algebra_fastmath
from .fusion import fusion
from .layout import layout
from .shapes import shapes
from .tiling import tiling

DEFAULT_RULESETS = (algebra, fusion, layout, tiling)  # what DEFAULT runs, one step each, in this order
DEFAULT = reduce(add, DEFAULT_RULESETS)  # algebra + fusion + layout + tiling
FASTMATH = algebra_fastmath

__all__ = ["DEFAULT", "DEFAULT_RULESETS", "FASTMATH", "algebra", "algebra_fastmath", "fusion", "layout", "shapes", "tiling"]
