"""scipy.ndimage's B-spline prefilter in a kernel: `spline_filter1d`, `spline_filter` (orders 2 to 5; 0 and 1 copy),
on the `spline_filter` op (ops.py, lowering/recurrence.py: SciPy's ni_splines.c arithmetic on each row of float64, as
its line buffers). While a kernel is traced (and scipy.ndimage was imported) they are replaced in scipy.ndimage by
these when an argument is traced (creation.replace_foreign_while_tracing, as tracing/scipy_ndimage.py).

The boundary modes take SciPy's initial values: "mirror" (the default), "constant", "grid-constant" and "wrap" the
mirror's, "reflect", "grid-mirror" and "nearest" the reflection's, "grid-wrap" the periodic one's. The result is in
`output` (a dtype, float64 by default, or an array written in place), each axis's pass of spline_filter read back
from it as SciPy does.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..errors import UnsupportedError
from ..ops import SPLINE_BOUNDARIES
from .core import as_tracer, fail, result, trace_of, traced_or_ndarray
from .creation import replace_foreign_while_tracing, traced_or_original
from .scipy_ndimage import _dtype, _result

_MODES = {"mirror": "mirror", "constant": "mirror", "grid-constant": "mirror", "wrap": "mirror", "reflect": "reflect",
          "grid-mirror": "reflect", "nearest": "reflect", "grid-wrap": "wrap"}


def _order(name: str, order: int, lowest: int) -> int:
    if not isinstance(order, (int, np.integer)) or not lowest <= order <= 5:
        raise fail(UnsupportedError, f"scipy.ndimage.{name}: spline order {order!r} not supported (SciPy's: {lowest} to 5)")
    return int(order)


def spline_filter1d(input: Any, order: int = 3, axis: int = -1, output: Any = np.float64, mode: str = "mirror") -> Any:
    """The B-spline coefficients of `order` along `axis` (float64 arithmetic, as SciPy's line buffers)."""
    order = _order("spline_filter1d", order, 0)
    if mode not in _MODES:
        raise fail(UnsupportedError, f"scipy.ndimage.spline_filter1d: mode {mode!r} is not supported (supported: {', '.join(_MODES)})")
    x = traced_or_ndarray(input)
    if x.dtype.kind == "c":
        raise fail(UnsupportedError, "scipy.ndimage.spline_filter1d: complex input is not supported in a kernel")
    if order < 2 or x.ndim == 0:
        return _result(x, input, output)
    trace = trace_of([x])
    rows = as_tracer(trace, x).astype(np.float64)
    node = trace.make("spline_filter", (rows._node,), (order, SPLINE_BOUNDARIES.index(_MODES[mode]), int(axis) % x.ndim))
    return _result(result(trace, node), input, output)


def spline_filter(input: Any, order: int = 3, output: Any = np.float64, mode: str = "mirror") -> Any:
    """spline_filter1d along each axis in turn, each pass's result in the output dtype (SciPy's)."""
    order = _order("spline_filter", order, 2)
    dtype = _dtype(traced_or_ndarray(input), output)
    x = input
    for axis in range(np.ndim(input)):
        x = spline_filter1d(x, order, axis, dtype, mode)
    return _result(traced_or_ndarray(x), input, output)


FUNCTIONS: dict[str, Callable[..., Any]] = {fn.__name__: fn for fn in (spline_filter1d, spline_filter)}


for _name, _ours in FUNCTIONS.items():
    replace_foreign_while_tracing(f"scipy.ndimage:{_name}", traced_or_original(_ours))
