"""`np.<ufunc>.outer(a, b)`: the ufunc on every pair, `ufunc(a[..., None, ...], b)` as NumPy defines it
(shape `a.shape + b.shape`, the ufunc's dtype rules); a broadcast the optimizer fuses, no op of its own."""

from __future__ import annotations

from typing import Any

import numpy as np

from .core import IMPLEMENTATIONS, as_tracer, implements, trace_of
from .shapes import reshape


@implements("ufunc.outer")
def ufunc_outer(ufunc: np.ufunc, a: Any, b: Any, **kwargs: Any) -> Any:
    """`np.add.outer(a, b)` and kin (floyd_warshall's `np.add.outer(path[:, k], path[k, :])`): a reshaped to rank a.ndim + b.ndim, then the ufunc."""
    trace = trace_of([a, b])
    # outer converts its operands with np.asarray: a Python number is a float64/int64 array, not weak
    a, b = (as_tracer(trace, v if hasattr(v, "dtype") else np.asarray(v)) for v in (a, b))
    return IMPLEMENTATIONS["ufunc.__call__"](ufunc, reshape(a, a.shape + (1,) * b.ndim), b, **kwargs)
