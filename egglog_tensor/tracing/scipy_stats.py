"""scipy.stats functions (not distributions: tracing/distributions.py) whose SciPy code needs concrete values, replaced
while a kernel is traced (creation.replace_foreign_while_tracing): `rankdata`, which spearmanr, mannwhitneyu &c.
call from scipy.stats._stats_py, and `percentileofscore` (counts of a below and at each score: no sort).

rankdata sorts each line (a stable argsort), marks where the sorted values change, and gives each element its
group's rank in the sorted order ("average" (start + end) / 2 + 1, "min", "max", "dense" the running count of groups,
"ordinal" the position), read back in the original order through the inverse permutation: O(n log n), any axis.
NaN as SciPy's `nan_policy`: "propagate" makes a line with a NaN all NaN, "omit" ranks the others and leaves NaN
at the NaN; "raise" is refused. SciPy's dtype depends on the data for the integer methods (int64, float64 when a
NaN is present): whether float data holds a NaN is a guard (calling.md), so the kernel is specialized on it.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import TracingError, UnsupportedError
from .core import fail, traced_or_ndarray
from .creation import replace_foreign_while_tracing, traced_or_original

METHODS = ("average", "min", "max", "dense", "ordinal")


def rankdata(a: Any, method: str = "average", *, axis: Any = None, nan_policy: str = "propagate") -> Any:
    if method not in METHODS:
        raise fail(UnsupportedError, f"scipy.stats.rankdata: unknown method {method!r} (one of {', '.join(METHODS)})")
    if nan_policy not in ("propagate", "omit"):
        raise fail(UnsupportedError, f"scipy.stats.rankdata: nan_policy={nan_policy!r} is not supported in a kernel "
                                     "('propagate' and 'omit' are)")
    x = traced_or_ndarray(a)
    x = x.reshape(-1) if axis is None else np.moveaxis(x, axis, -1)
    n = x.shape[-1]
    order = np.argsort(x, axis=-1, kind="stable")
    ordered = np.take_along_axis(x, order, axis=-1)
    position = np.broadcast_to(np.arange(n), x.shape)
    ones = np.ones(x.shape[:-1] + (min(n, 1),), dtype=bool)
    starts = np.concatenate([ones, ordered[..., 1:] != ordered[..., :-1]], axis=-1)  # (NaN != NaN: each its own group)
    if method == "ordinal":
        ranks = position + 1
    elif method == "dense":
        ranks = np.cumsum(starts, axis=-1)
    else:
        first = np.maximum.accumulate(np.where(starts, position, 0), axis=-1)
        ends = np.concatenate([starts[..., 1:], ones], axis=-1)
        last = np.flip(np.minimum.accumulate(np.flip(np.where(ends, position, n - 1), axis=-1), axis=-1), axis=-1)
        ranks = {"min": first + 1, "max": last + 1, "average": (first + last) / 2.0 + 1.0}[method]
    ranks = np.take_along_axis(ranks, np.argsort(order, axis=-1), axis=-1)
    nan = x.dtype.kind == "f" and bool(np.any(np.isnan(x)))  # (a guard: SciPy's dtype depends on it)
    if method == "average" or nan:
        ranks = ranks.astype(np.float64)
    if nan:
        missing = np.isnan(x)
        if nan_policy == "propagate":
            missing = np.broadcast_to(np.any(missing, axis=-1, keepdims=True), x.shape)
        ranks = np.where(missing, np.nan, ranks)
    return ranks if axis is None else np.moveaxis(ranks, -1, axis)


KINDS = ("rank", "weak", "strict", "mean")


def percentileofscore(a: Any, score: Any, kind: str = "rank", nan_policy: str = "propagate") -> Any:
    """The percentile rank of each score in the 1-D a, as SciPy counts it: a's elements below it (strict), at most it
    (weak), their mean, or (rank) their sum plus one if any equals it, times 50 / n; NaN for a NaN score, and with
    nan_policy "propagate" for all when a holds a NaN ("omit" counts the others)."""
    if kind not in KINDS:
        raise fail(TracingError, "kind can only be 'rank', 'strict', 'weak' or 'mean'")
    if nan_policy not in ("propagate", "omit"):
        raise fail(UnsupportedError, f"scipy.stats.percentileofscore: nan_policy={nan_policy!r} is not supported in a "
                                     "kernel ('propagate' and 'omit' are)")
    x, s = traced_or_ndarray(a), traced_or_ndarray(score)
    if x.ndim != 1:
        raise fail(TracingError, "`a` must be 1-dimensional.")
    missing = np.isnan(x) if x.dtype.kind == "f" else np.zeros(x.shape, bool)
    n = np.count_nonzero(~missing) if nan_policy == "omit" else np.where(np.any(missing), 0, x.shape[0])
    below = np.count_nonzero(x < s[..., None], axis=-1)
    at_most = np.count_nonzero(x <= s[..., None], axis=-1)
    counted = {"strict": 2 * below, "weak": 2 * at_most, "mean": below + at_most, "rank": below + at_most + (below < at_most)}[kind]
    value = counted * (50.0 / np.where(n == 0, 1, n))
    return np.where((n == 0) | np.isnan(s.astype(np.float64)), np.nan, value)


for _module in ("scipy.stats", "scipy.stats._stats_py"):
    replace_foreign_while_tracing(f"{_module}:rankdata", traced_or_original(rankdata))
    replace_foreign_while_tracing(f"{_module}:percentileofscore", traced_or_original(percentileofscore))
