"""numpy.polynomial's power and Chebyshev series values at trace time: polynomial.polyval and chebyshev.chebval,
replaced while tracing (their coefficient checks convert to NumPy arrays), with NumPy's steps (Horner's from
c[-1] + x * 0, Clenshaw's recurrence) and its shapes (`tensor`: one set of coefficients per element of x)."""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.polynomial.chebyshev  # noqa: F401  (NumPy loads numpy.polynomial lazily: imported here, the replacements
import numpy.polynomial.polynomial  # noqa: F401  below apply from the first trace, as replace_foreign_while_tracing says)

from .core import Tracer, as_array, trace_of
from .creation import replace_foreign_while_tracing, traced_or_original
from .shapes import reshape


def _series(c: Any, x: Any, tensor: bool) -> tuple[Tracer, Any]:
    """numpy.polynomial's coefficients (floats, at least 1-D; with `tensor`, one set per element of an array x:
    c's axes then x's) and x (a list or tuple as an array)."""
    trace = trace_of([c, x])
    c = as_array(trace, c)
    c = reshape(c, (1,)) if c.ndim == 0 else c
    if c.dtype.kind in "biu":
        c = c + 0.0
    if isinstance(x, (tuple, list)):
        x = as_array(trace, x)
    if tensor and isinstance(x, (Tracer, np.ndarray)):
        c = reshape(c, c.shape + (1,) * x.ndim)
    return c, x


def series_polyval(x: Any, c: Any, tensor: bool = True) -> Tracer:
    """numpy.polynomial.polynomial.polyval: c[0] + c[1] x + ..., Horner's steps from c[-1] + x * 0."""
    c, x = _series(c, x, tensor)
    value = c[-1] + x * 0
    for i in range(2, len(c) + 1):
        value = c[-i] + value * x
    return value


def chebval(x: Any, c: Any, tensor: bool = True) -> Tracer:
    """numpy.polynomial.chebyshev.chebval: the Chebyshev series' value, Clenshaw's recurrence as NumPy runs it."""
    c, x = _series(c, x, tensor)
    if len(c) <= 2:
        c0, c1 = c[0], (c[1] if len(c) == 2 else 0)
    else:
        x2, c0, c1 = 2 * x, c[-2], c[-1]
        for i in range(3, len(c) + 1):
            c0, c1 = c[-i] - c1, c0 + c1 * x2
    return c0 + c1 * x


replace_foreign_while_tracing("numpy.polynomial.polynomial:polyval", traced_or_original(series_polyval))
replace_foreign_while_tracing("numpy.polynomial.chebyshev:chebval", traced_or_original(chebval))
