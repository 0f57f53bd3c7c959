"""`out=` of NumPy's reductions, scans and the functions like them (`np.sum(x, axis=1, out=m)`, `np.cumsum(y, out=y)`,
`x.max(out=o)`): the result stored into `out`, an array of the kernel or an argument, cast as NumPy casts into it
(unsafe, as an assignment), and `out` returned. Imported after the modules that register those functions: it wraps them."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any

from ..errors import TracingError
from .core import IMPLEMENTATIONS, Tracer, fail
from .updates import require_traced, store

NAMES = ("sum", "prod", "mean", "max", "min", "amax", "amin", "std", "var", "any", "all", "argmax", "argmin", "ptp",
         "cumsum", "cumprod", "nancumsum", "nancumprod", "nansum", "nanprod", "nanmean", "nanstd", "nanvar", "nanmax",
         "nanmin", "nanargmax", "nanargmin", "median", "nanmedian", "percentile", "quantile", "nanpercentile",
         "nanquantile", "round", "around", "trace", "take")


def with_out(name: str, implementation: Callable[..., Any]) -> Callable[..., Any]:
    """np.`name` whose `out=` array receives the result (the function itself called without it)."""
    signature = inspect.signature(implementation)

    @functools.wraps(implementation)
    def call(*args: Any, **kwargs: Any) -> Any:
        bound = signature.bind(*args, **kwargs)
        out = bound.arguments.get("out")
        if out is None:
            return implementation(*args, **kwargs)
        bound.arguments["out"] = None
        value = implementation(*bound.args, **bound.kwargs)
        require_traced(out, f"np.{name}(out=...)")
        if not isinstance(value, Tracer) or value.shape != out.shape:
            raise fail(TracingError, f"np.{name}: the out array's shape {out.shape} is not the result's {getattr(value, 'shape', ())}")
        store(out, value)
        return out

    return call


for _name in NAMES:
    if _name in IMPLEMENTATIONS and "out" in inspect.signature(IMPLEMENTATIONS[_name]).parameters:
        IMPLEMENTATIONS[_name] = with_out(_name, IMPLEMENTATIONS[_name])
