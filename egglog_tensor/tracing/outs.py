"""`out=` of NumPy's reductions, scans and the functions like them (`np.sum(x, axis=1, out=m)`, `np.cumsum(y, out=y)`,
`x.max(out=o)`, `np.add.reduce(x, axis=0, out=o)`, `np.maximum.accumulate(x, out=o)`, `np.einsum(..., out=o)`,
`np.dot(a, b, o)`, `np.linalg.multi_dot([a, b, c], out=o)`): the result stored into `out`, an array of the kernel or an argument, cast as NumPy casts into it
(unsafe, as an assignment; einsum: safe; dot, multi_dot: none, and out C-contiguous), and `out` returned. Imported after the modules that register those functions: it wraps them."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any

import numpy as np

from ..errors import TracingError
from .core import IMPLEMENTATIONS, Tracer, fail, memory
from .updates import require_traced, store

NAMES = ("sum", "prod", "mean", "max", "min", "amax", "amin", "std", "var", "any", "all", "argmax", "argmin", "ptp",
         "cumsum", "cumprod", "nancumsum", "nancumprod", "nansum", "nanprod", "nanmean", "nanstd", "nanvar", "nanmax",
         "nanmin", "nanargmax", "nanargmin", "median", "nanmedian", "percentile", "quantile", "nanpercentile",
         "nanquantile", "round", "around", "trace", "take", "ufunc.reduce", "ufunc.accumulate", "einsum", "dot", "linalg.multi_dot")
CASTING = {"einsum": "safe", "dot": "no", "linalg.multi_dot": "no"}  # how NumPy casts the result into `out` (others: unsafe, as an assignment)


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
        shown = f"{args[0].__name__}.{name[6:]}" if name.startswith("ufunc.") else name
        return stored(shown, value, out[0] if isinstance(out, tuple) and len(out) == 1 else out, CASTING.get(name, "unsafe"))

    return call


def stored(name: str, value: Any, out: Any, casting: str) -> Tracer:
    """`value` stored into `out` (cast under `casting`, as np.`name` casts), and `out`."""
    require_traced(out, f"np.{name}(out=...)")
    if not isinstance(value, Tracer) or value.shape != out.shape:
        raise fail(TracingError, f"np.{name}: the out array's shape {out.shape} is not the result's {getattr(value, 'shape', ())}")
    if casting == "no" and (value.dtype != out.dtype or not contiguous(out)):
        why = f"its dtype is {out.dtype}, the result's {value.dtype}" if value.dtype != out.dtype else "it is not C-contiguous"
        raise fail(TracingError, f"np.{name}: output array is not acceptable (must have the right datatype, number of dimensions, "
                                 f"and be a C-Array: {why})")
    if not np.can_cast(value.dtype, out.dtype, "unsafe" if casting == "no" else casting):
        raise fail(TracingError, f"np.{name}: cannot cast the result from {value.dtype!r} to the out array's {out.dtype!r} "
                                 f"according to the rule {casting!r}")
    store(out, value)
    return out


def contiguous(x: Tracer) -> bool:
    """Whether x is C-contiguous in NumPy, as far as the trace knows its layout (unknown: taken as so)."""
    stand_in = memory(x)
    return stand_in is None or stand_in.flags.c_contiguous


for _name in NAMES:
    if _name in IMPLEMENTATIONS and "out" in inspect.signature(IMPLEMENTATIONS[_name]).parameters:
        IMPLEMENTATIONS[_name] = with_out(_name, IMPLEMENTATIONS[_name])
