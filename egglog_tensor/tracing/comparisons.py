"""Whole-array comparisons and membership at trace time, as NumPy writes them: array_equal/array_equiv (a 0-d
bool; shapes that differ or do not broadcast: False, known while tracing), isin (each element against every
test element), isposinf/isneginf, and iscomplexobj/isrealobj (a traced array is real)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import UnsupportedError
from ..graph import is_float
from .core import Tracer, as_array, fail, implements, trace_of
from .shapes import reshape


def _arrays(*values: Any) -> list[Tracer]:
    """The values as NumPy's functions read them (np.asarray: a Python number has its default dtype)."""
    trace = trace_of(list(values))
    return [as_array(trace, v) for v in values]


@implements("array_equal")
def array_equal(a1: Any, a2: Any, equal_nan: bool = False) -> Any:
    """Same shape and equal elements (with `equal_nan`, NaN equal to NaN): a 0-d bool (NumPy: a Python bool)."""
    x, y = _arrays(a1, a2)
    if x.shape != y.shape:
        return np.bool_(False)
    same = x == y
    if equal_nan and (is_float(x.dtype) or is_float(y.dtype)):
        same = same | (np.isnan(x) & np.isnan(y))
    return np.all(same)


@implements("array_equiv")
def array_equiv(a1: Any, a2: Any) -> Any:
    """Shapes that broadcast and equal elements: a 0-d bool (NumPy: a Python bool)."""
    x, y = _arrays(a1, a2)
    try:
        np.broadcast_shapes(x.shape, y.shape)
    except ValueError:
        return np.bool_(False)
    return np.all(x == y)


@implements("isin")
def isin(element: Any, test_elements: Any, assume_unique: bool = False, invert: bool = False, *, kind: Any = None) -> Tracer:
    """Whether each element equals any test element (every element compared with every test element)."""
    x, t = _arrays(element, test_elements)
    found = np.any(reshape(x, x.shape + (1,)) == reshape(t, (t.size,)), axis=-1)
    return ~found if invert else found


def _no_out(name: str, out: Any) -> None:
    if out is not None:
        raise fail(UnsupportedError, f"np.{name}(out=...) is not supported")


@implements("isposinf")
def isposinf(x: Any, out: Any = None) -> Tracer:
    _no_out("isposinf", out)
    (x,) = _arrays(x)
    return np.isinf(x) & ~np.signbit(x)


@implements("isneginf")
def isneginf(x: Any, out: Any = None) -> Tracer:
    _no_out("isneginf", out)
    (x,) = _arrays(x)
    return np.isinf(x) & np.signbit(x)


@implements("iscomplexobj")
def iscomplexobj(x: Any) -> bool:
    return False


@implements("isrealobj")
def isrealobj(x: Any) -> bool:
    return True
