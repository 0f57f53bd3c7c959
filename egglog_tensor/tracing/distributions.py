"""scipy.stats' distributions on traced arrays: `norm.pdf(x)`, `expon(scale=2).cdf(x)`, `laplace.ppf(q)`, `poisson.pmf(k, mu)`.

SciPy's `rv_continuous` methods evaluate a distribution's formula (`_pdf`, `_cdf`...) on the entries whose
arguments are valid only: they compress the arguments to those entries (`argsreduce`), skip the formula when
there are none (`if np.any(cond)`) and `place` its results back, shapes that depend on values. While a kernel
is traced (and scipy.stats was imported) the eight methods below are replaced on `rv_continuous`, and pmf, logpmf,
cdf, logcdf, sf, logsf, ppf and isf on `rv_discrete`, by these, which evaluate the formula on every entry and select with np.where, with SciPy's
conditions, fill values and order of placements: the same results. A call without traced arguments runs SciPy's method; a distribution
whose formula is not traceable (numerical integration, scipy.special functions a kernel lacks) gets the
error of the part that is not. scipy is not imported here.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np

from .core import astype, first_tracer, traced_or_ndarray
from .creation import replace_foreign_while_tracing, replacement, traced_or_original

_INFRASTRUCTURE = "scipy.stats._distn_infrastructure"


def _standardized(dist: Any, x: Any, args: tuple, kwds: dict) -> tuple[Any, tuple, Any, Any]:
    """SciPy's first steps of the x methods: (x - loc) / scale in x's dtype promoted with float64, the shape
    arguments, scale and cond0 (arguments valid)."""
    args, loc, scale = dist._parse_args(*args, **kwds)
    x, loc, scale = map(traced_or_ndarray, (x, loc, scale))
    args = tuple(map(traced_or_ndarray, args))
    z = astype((x - loc) / scale, np.promote_types(x.dtype, np.float64))
    return z, args, scale, dist._argcheck(*args) & (scale > 0)


def _x_method(formula: str, start: float, at_end: str | None, log: bool) -> Callable[..., Any]:
    """pdf/logpdf (at_end None: the closed support, the formula over scale), cdf/logcdf (at_end "b": 1 (or 0 in
    logs) from the support's upper end on), sf/logsf (at_end "a": up to its lower end)."""
    def method(dist: Any, x: Any, *args: Any, **kwds: Any) -> Any:
        z, args, scale, cond0 = _standardized(dist, x, args, kwds)
        support = dist._support_mask if at_end is None else dist._open_support_mask
        cond1 = support(z, *args) & (scale > 0)
        cond = cond0 & cond1
        # (1-cond0)+isnan(z) as SciPy writes it (cond0 may be the int 1; logcdf's (1-cond0)*(cond1 == cond1) is the same)
        out = np.where(np.logical_not(cond0) | np.isnan(z), dist.badvalue, start)
        if at_end is not None:
            a, b = dist._get_support(*args)
            end = (z >= np.asarray(b)) & cond0 if at_end == "b" else cond0 & (z <= a)
            out = np.where(end, 0.0 if log else 1.0, out)
        value = getattr(dist, formula)(z, *args)
        if at_end is None:
            value = value - np.log(scale) if log else value / scale
        return np.where(cond, value, out)
    return method


def _q_method(formula: str, lower_at: float) -> Callable[..., Any]:
    """ppf (lower_at 0: q == 0 gives the support's lower end, q == 1 its upper) and isf (lower_at 1)."""
    def method(dist: Any, q: Any, *args: Any, **kwds: Any) -> Any:
        args, loc, scale = dist._parse_args(*args, **kwds)
        q, loc, scale = map(traced_or_ndarray, (q, loc, scale))
        args = tuple(map(traced_or_ndarray, args))
        a, b = dist._get_support(*args)
        cond0 = dist._argcheck(*args) & (scale > 0) & (loc == loc)
        cond = cond0 & (0 < q) & (q < 1)
        out = np.where(cond0 & (q == lower_at), a * scale + loc, dist.badvalue)
        out = np.where(cond0 & (q == 1 - lower_at), b * scale + loc, out)
        return np.where(cond, getattr(dist, formula)(q, *args) * scale + loc, out)
    return method


def _k_standardized(dist: Any, k: Any, args: tuple, kwds: dict) -> tuple[Any, tuple, Any, Any, Any]:
    """SciPy's first steps of rv_discrete's k methods: k - loc, the shape arguments, the support's ends (a, b) and
    cond0 (arguments valid)."""
    args, loc, _ = dist._parse_args(*args, **kwds)
    k, loc = traced_or_ndarray(k), traced_or_ndarray(loc)
    args = tuple(map(traced_or_ndarray, args))
    a, b = dist._get_support(*args)
    return k - loc, args, a, b, dist._argcheck(*args)


def _k_method(formula: str, log: bool) -> Callable[..., Any]:
    """rv_discrete's pmf (the formula clipped to [0, 1]) and logpmf: on the support's integers (an empirical rv_sample's
    values: any), 0 (-inf) elsewhere, NaN where the arguments are invalid or k is NaN; float64."""
    def method(dist: Any, k: Any, *args: Any, **kwds: Any) -> Any:
        k, args, a, b, cond0 = _k_standardized(dist, k, args, kwds)
        cond1 = (k >= a) & (k <= b)
        if type(dist).__name__ != "rv_sample":
            cond1 = cond1 & dist._nonzero(k, *args)
        out = np.where(np.logical_not(cond0) | np.isnan(k), dist.badvalue, -np.inf if log else 0.0)
        value = getattr(dist, formula)(k, *args)
        return np.where(cond0 & cond1, value if log else np.clip(value, 0, 1), out)
    return method


def _k_tail(formula: str, upper: bool, log: bool) -> Callable[..., Any]:
    """rv_discrete's cdf/logcdf (not `upper`: 1 (0 in logs) from the support's upper end on) and sf/logsf (`upper`: up
    to its lower end), with SciPy's placements in its order; the formula where k is in the support (finite, for
    cdf and sf, clipped to [0, 1]); float64."""
    def method(dist: Any, k: Any, *args: Any, **kwds: Any) -> Any:
        k, args, a, b, cond0 = _k_standardized(dist, k, args, kwds)
        bad = np.logical_not(cond0) | np.isnan(k)
        cond = cond0 & (k >= a) & (k < b)
        one, zero = (0.0, -np.inf) if log else (1.0, 0.0)
        if upper:  # sf: bad, then 1 below the support (or at -inf); logsf: bad, then 0 below it
            out = np.where(bad, dist.badvalue, zero)
            out = np.where(((k < a) | np.isneginf(k) if not log else k < a) & cond0, one, out)
        elif log:  # logcdf: bad, then 0 from the upper end on
            out = np.where(k >= b, one, np.where(bad, dist.badvalue, zero))
        else:  # cdf: 1 from the upper end on, 0 at -inf, then bad
            out = np.where(bad, dist.badvalue, np.where(np.isneginf(k), zero, np.where(k >= b, one, zero)))
        value = getattr(dist, formula)(k, *args)
        if not log:
            cond, value = cond & np.isfinite(k), np.clip(value, 0, 1)
        return np.where(cond, value, out)
    return method


def _q_discrete(formula: str, lower_at: float) -> Callable[..., Any]:
    """rv_discrete's ppf (lower_at 0: q == 0 gives a - 1, q == 1 the support's upper end b) and isf (lower_at 1)."""
    def method(dist: Any, q: Any, *args: Any, **kwds: Any) -> Any:
        args, loc, _ = dist._parse_args(*args, **kwds)
        q, loc = traced_or_ndarray(q), traced_or_ndarray(loc)
        args = tuple(map(traced_or_ndarray, args))
        a, b = dist._get_support(*args)
        cond0 = dist._argcheck(*args) & (loc == loc)
        out = np.where(cond0 & (q == 1 - lower_at), b + loc, np.where(cond0 & (q == lower_at), a - 1 + loc, dist.badvalue))
        return astype(np.where(cond0 & (q > 0) & (q < 1), getattr(dist, formula)(q, *args) + loc, out), "float64")
    return method


METHODS: dict[str, Callable[..., Any]] = {
    "pdf": _x_method("_pdf", 0.0, None, log=False), "logpdf": _x_method("_logpdf", -np.inf, None, log=True),
    "cdf": _x_method("_cdf", 0.0, "b", log=False), "logcdf": _x_method("_logcdf", -np.inf, "b", log=True),
    "sf": _x_method("_sf", 0.0, "a", log=False), "logsf": _x_method("_logsf", -np.inf, "a", log=True),
    "ppf": _q_method("_ppf", 0.0), "isf": _q_method("_isf", 1.0),
}


DISCRETE: dict[str, Callable[..., Any]] = {
    "pmf": _k_method("_pmf", log=False), "logpmf": _k_method("_logpmf", log=True),
    "cdf": _k_tail("_cdf", upper=False, log=False), "logcdf": _k_tail("_logcdf", upper=False, log=True),
    "sf": _k_tail("_sf", upper=True, log=False), "logsf": _k_tail("_logsf", upper=True, log=True),
    "ppf": _q_discrete("_ppf", 0.0), "isf": _q_discrete("_isf", 1.0),
}

for _name, _ours in METHODS.items():
    replace_foreign_while_tracing(f"{_INFRASTRUCTURE}:rv_continuous.{_name}", traced_or_original(_ours))
for _name, _ours in DISCRETE.items():
    replace_foreign_while_tracing(f"{_INFRASTRUCTURE}:rv_discrete.{_name}", traced_or_original(_ours))
# the module's own `from numpy import asarray`, which the default argument check (`_argcheck`) calls
replace_foreign_while_tracing(f"{_INFRASTRUCTURE}:asarray", lambda original: replacement("asarray"))


def _apply_where(original: Any) -> Any:
    """array_api_extra's `_apply_where` (SciPy's `xpx.apply_where`, which scipy.stats' formulas use): on traced arrays
    both functions on every entry and np.where, its own path for namespaces without boolean indexing (JAX's)."""
    @functools.wraps(original)
    def apply_where(cond: Any, f1: Any, f2: Any, fill_value: Any, *args: Any, xp: Any) -> Any:
        if first_tracer((cond, fill_value, *args)) is None:
            return original(cond, f1, f2, fill_value, *args, xp=xp)
        return np.where(cond, f1(*args), f2(*args) if f2 is not None else fill_value)
    return apply_where


replace_foreign_while_tracing("scipy._lib.array_api_extra._lib._funcs:_apply_where", _apply_where)
