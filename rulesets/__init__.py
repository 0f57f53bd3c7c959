"""Rulesets over the tensor term language, as egglog rulesets users can import and compose.

`DEFAULT` is what `@kernel` runs unless `rules=` says otherwise (one step of `algebra`, one of
`fusion` and one of `layout`, repeated until nothing changes or a limit is hit); `FASTMATH` is added on top when a
kernel is compiled with `fastmath=True`. `shapes` is the shape analysis the optimizer always runs.
"""

from .algebra import algebra, algebra_fastmath
from .fusion import fusion
from .layout import layout
from .shapes import shapes

DEFAULT = algebra + fusion + layout
FASTMATH = algebra_fastmath

__all__ = ["DEFAULT", "FASTMATH", "algebra", "algebra_fastmath", "fusion", "layout", "shapes"]
