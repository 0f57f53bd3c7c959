"""scipy.special's Python functions (not ufuncs) whose SciPy code needs concrete values, replaced while a kernel is traced
(creation.replace_foreign_while_tracing): `factorial` (its `place`/`extract` select by value)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import UnsupportedError
from .core import as_tracer, astype, fail, trace_of
from .creation import replace_foreign_while_tracing, traced_or_original
from .special import call_op


def factorial(n: Any, exact: bool = False, extend: str = "zero") -> Any:
    """scipy.special.factorial (Python code whose `place`/`extract` need concrete values), replaced while tracing:
    gamma(n + 1) for n >= 0, 0 below, NaN at NaN; exact=True (Python integers) or extend="complex" are refused."""
    if exact or extend != "zero":
        raise fail(UnsupportedError, f"scipy.special.factorial(exact={exact}, extend={extend!r}) is not supported in a kernel "
                                     "(exact=False, extend='zero' is)")
    x = astype(as_tracer(trace_of([n]), n), "float64")
    return np.where(np.isnan(x), np.nan, np.where(x >= 0, call_op("gamma", np.where(x >= 0, x, 0.0) + 1.0), 0.0))


replace_foreign_while_tracing("scipy.special:factorial", traced_or_original(factorial))
