"""scipy.special's Python functions (not ufuncs) whose SciPy code needs concrete values, replaced while a kernel is traced
(creation.replace_foreign_while_tracing): `factorial` (its `place`/`extract` select by value), `polygamma` (np.asarray)
`comb` (its assignment through a mask) and `multigammaln` (np.asarray, a check of the data). (scipy.special.zeta traces unchanged: its private ufuncs are ops.)"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import DataValueError, TracingError, UnsupportedError
from .core import as_tracer, astype, check_at_run_time, fail, trace_of
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


def polygamma(n: Any, x: Any) -> Any:
    """scipy.special.polygamma, SciPy's formula on traced arrays: psi(x) where n = 0, else (-1)^(n+1) n! zeta(n + 1, x)."""
    trace = trace_of([n, x])
    n, x = as_tracer(trace, n), as_tracer(trace, x)
    return np.where(n == 0, call_op("psi", x), (-1.0) ** (n + 1) * call_op("gamma", n + 1.0) * call_op("_zeta", n + 1, x))


def comb(N: Any, k: Any, *, exact: bool = False, repetition: bool = False) -> Any:
    """scipy.special.comb with exact=False: binom(N, k) where 0 <= k <= N, else 0; with repetition binom(N + k - 1, k),
    1 where k = 0 <= N. exact=True (Python integers, per element) is refused for traced arrays."""
    if exact:
        raise fail(UnsupportedError, "scipy.special.comb(exact=True) of traced arrays is not supported in a kernel (its "
                                     "exact integers are Python's, computed per value); exact=False is")
    trace = trace_of([N, k])
    N, k = as_tracer(trace, N), as_tracer(trace, k)
    if repetition:
        return np.where((k == 0) & (N >= 0), 1.0, call_op("binom", N + k - 1, k))
    return np.where((k <= N) & (N >= 0) & (k >= 0), call_op("binom", N, k), 0.0)


def multigammaln(a: Any, d: Any) -> Any:
    """scipy.special.multigammaln: d (d - 1) / 4 log(pi) + sum_j gammaln(a - j / 2), j < d, in float64; a <= (d - 1) / 2
    raises SciPy's ValueError from the call (d: a positive integer, static)."""
    if not isinstance(d, (int, np.integer)) or d < 1:
        raise fail(TracingError, "d should be a positive integer (dimension)")
    x = astype(as_tracer(trace_of([a]), a), "float64")
    check_at_run_time(x <= 0.5 * (d - 1), f"scipy.special.multigammaln: condition a > 0.5 * (d-1) ({0.5 * (d - 1)}) not met",
                      DataValueError, of="a ")
    total = (d * (d - 1) * 0.25) * np.log(np.pi)
    for j in range(d):
        total = total + call_op("gammaln", x - 0.5 * j)
    return total


replace_foreign_while_tracing("scipy.special:factorial", traced_or_original(factorial))
replace_foreign_while_tracing("scipy.special:multigammaln", traced_or_original(multigammaln))
replace_foreign_while_tracing("scipy.special:polygamma", traced_or_original(polygamma))
replace_foreign_while_tracing("scipy.special:comb", traced_or_original(comb))
