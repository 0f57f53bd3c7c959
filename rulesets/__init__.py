"""Rulesets over the tensor term language, as egglog rulesets users can import and compose.

`DEFAULT` is what `@kernel` runs unless `rules=` says otherwise; `FASTMATH` is added on top when
a kernel is compiled with `fastmath=True`.
"""

from .algebra import algebra, algebra_fastmath

DEFAULT = algebra
FASTMATH = algebra_fastmath

__all__ = ["DEFAULT", "FASTMATH", "algebra", "algebra_fastmath"]
