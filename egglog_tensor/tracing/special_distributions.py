"""scipy.special's inverses of the gamma distribution's cdf in its rate and quantile, `gdtria` and `gdtrix` (SciPy
1.17's gammaincinv quotients), and of the binomial and negative binomial distributions' cdf, `bdtri` and `nbdtri`, made of
the `betaincinv` and `betainccinv` ops: Cephes' equations, as SciPy 1.17's, solved by the ops (SciPy's Cephes incbi
is up to 1e-13 relatively off for moderate arguments, and fails for y below about 1e-18: the tests check against
mpmath). SciPy casts their integer arguments to C ints: here they are truncated (bdtri's k floored), and one that
is not finite is NaN, as SciPy's casts make it. tracing/special.py dispatches to DISTRIBUTIONS."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from . import special
from .core import Tracer


def _bdtri(k: Tracer, n: Tracer, y: Tracer) -> Any:
    """bdtri(k, n, y): the binomial probability p with bdtr(k, n, p) = I_(1-p)(n - k, k + 1) = y, k floored. Cephes
    solves I_(1-p) = y for 1 - p (incbi) and subtracts it from 1, or I_p(k + 1, n - k) = 1 - y for p, whichever
    I_(1/2)(n - k, k + 1) says is better conditioned, and at k = 0 takes 1 - y^(1/(n - k)); each loses digits to the
    subtraction from 1 (up to 1e-13 relative, and all of them where y < 1e-16 and 1 - y rounds to 1). Here p is the
    root of 1 - I_p(k + 1, n - k) = y solved for directly (betainccinv): the same equation, without the rounding of 1 -
    x or 1 - y. NaN where y is outside [0, 1], k < 0, n <= k or k or n is NaN or not finite."""
    k, n = np.floor(k), np.trunc(n)
    invalid = np.isnan(k) | np.isnan(y) | (y < 0) | (y > 1) | (k < 0) | (n <= k) | ~np.isfinite(n)
    return np.where(invalid, np.nan, special.call_op("betainccinv", k + 1, n - k, y))


def _nbdtri(k: Tracer, n: Tracer, p: Tracer) -> Any:
    """nbdtri(k, n, p): the negative binomial probability of success with nbdtr(k, n, .) = p, Cephes' incbi(n, k + 1, p)
    (k and n truncated): 0 where p is 0 and 1 where p is 1 (whatever n), else betaincinv (NaN where n <= 0); NaN where
    p is outside [0, 1], k < 0 or k or n is not finite."""
    k, n = np.trunc(k), np.trunc(n)
    root = np.where(p == 0, 0.0, np.where(p == 1, 1.0, np.where(n > 0, special.call_op("betaincinv", n, k + 1, p), np.nan)))
    return np.where((p < 0) | (p > 1) | (k < 0) | ~np.isfinite(k) | ~np.isfinite(n), np.nan, root)


def _gdtria(p: Tracer, b: Tracer, x: Tracer) -> Any:
    """gdtria(p, b, x): the gamma distribution's rate a with gdtr(a, b, x) = P(b, a x) = p, SciPy 1.17's
    gammaincinv(b, p) / x; NaN at x = 0; where b = p = 0, 0 (NaN at x = +inf)."""
    both_zero = np.where(np.isinf(x) & (x > 0), np.nan, 0.0)
    value = np.where((b == 0) & (p == 0), both_zero, special.call_op("gammaincinv", b, p) / x)
    return np.where(x == 0, np.nan, value)


def _gdtrix(a: Tracer, b: Tracer, p: Tracer) -> Any:
    """gdtrix(a, b, p): the gamma distribution's quantile x with gdtr(a, b, x) = p, SciPy 1.17's gammaincinv(b, p) / a;
    NaN where a = b = 0, or a or b is +inf and neither is negative."""
    invalid = ((a == 0) & (b == 0)) | ((np.isinf(a) | np.isinf(b)) & (a >= 0) & (b >= 0))
    return np.where(invalid, np.nan, special.call_op("gammaincinv", b, p) / a)


DISTRIBUTIONS: dict[str, Callable[..., Any]] = {"bdtri": _bdtri, "nbdtri": _nbdtri, "gdtria": _gdtria, "gdtrix": _gdtrix}
