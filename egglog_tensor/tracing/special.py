"""scipy.special's elementwise functions (its ufuncs) in a kernel: `erf` and `erfc` are ops of their own
(libm's, vectorized by libmvec: lowering/stages/vecmath.py); the others are made of NumPy's ufuncs by
SciPy's own definitions (its special cases of 0, NaN and negative arguments included), in the dtype
SciPy's loop resolves. Those whose float32 loop SciPy computes in float64 are computed in float64 here
too and rounded once. A SciPy ufunc is recognized by identity (`scipy.special.<name> is ufunc`), looked
up only when the code calls one: scipy is not imported here."""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..errors import UnsupportedError
from .core import Tracer, as_tracer, astype, fail, trace_of

OPS = ("erf", "erfc")  # SciPy ufuncs that are ops of their own (ops.py)


def _module_of(ufunc: np.ufunc) -> str | None:
    """"scipy.special" when `ufunc` is that module's function of its name (None otherwise)."""
    module = sys.modules.get("scipy.special")
    return "scipy.special" if module is not None and getattr(module, ufunc.__name__, None) is ufunc else None


def is_op(ufunc: np.ufunc) -> bool:
    """Whether `ufunc` is NumPy's own of its name, or a SciPy ufunc that is an op of its own (OPS)."""
    if getattr(np, ufunc.__name__, None) is ufunc:
        return True
    return ufunc.__name__ in OPS and _module_of(ufunc) is not None


def composed(ufunc: np.ufunc) -> Callable[..., Tracer] | None:
    """The implementation of a SciPy ufunc made of NumPy's (None for NumPy's own ufuncs, SciPy's OPS and
    other libraries' ufuncs, which tracing/ufuncs.py refuses); UnsupportedError naming a SciPy ufunc not implemented."""
    if is_op(ufunc) or _module_of(ufunc) is None:
        return None
    name = ufunc.__name__
    fn = _FUNCTIONS.get(name)
    if fn is None:
        raise fail(UnsupportedError, f"scipy.special.{name} is not supported in a kernel (supported: {', '.join(supported())})")
    return lambda *inputs: _call(ufunc, fn, inputs)


def supported() -> list[str]:
    """The scipy.special ufuncs a kernel computes."""
    return sorted((*_FUNCTIONS, *OPS))


def _call(ufunc: np.ufunc, fn: Callable[..., Any], inputs: Sequence[Any]) -> Tracer:
    """fn on the inputs cast to SciPy's loop dtype (float32: widened to float64 unless fn is _IN_LOOP_DTYPE), rounded to it."""
    from .ufuncs import loop_dtypes

    trace = trace_of(inputs)
    loop = loop_dtypes(ufunc, inputs)
    if any(d.kind != "f" for d in loop):
        raise fail(UnsupportedError, f"scipy.special.{ufunc.__name__} on {loop[0]} is not supported (float32 and float64 are)")
    work = loop[-1] if fn in _IN_LOOP_DTYPE else np.dtype("float64")
    args = [astype(as_tracer(trace, v), work.name) for v in inputs]
    return astype(as_tracer(trace, fn(*args)), loop[-1].name)


def _expit(x: Tracer) -> Any:
    return 1 / (1 + np.exp(-x))


def _logit(x: Tracer) -> Any:  # SciPy's: log(x / (1 - x)), and near 1/2 the difference of two log1p's
    s = 2 * (x - 0.5)
    return np.where((x < 0.3) | (x > 0.65), np.log(x / (1 - x)), np.log1p(s) - np.log1p(-s))


def _log_expit(x: Tracer) -> Any:
    """SciPy's x - log1p(exp(x)) below 0 and -log1p(exp(-x)) from 0, as one expression: the same operations per branch."""
    return np.minimum(x, 0) - np.log1p(np.exp(-np.abs(x)))


def _times_log(log: Callable[[Any], Any]) -> Callable[[Tracer, Tracer], Any]:
    """xlogy, xlog1py: x * log(y) (log1p(y)), 0 where x is 0 and y is not NaN."""
    return lambda x, y: np.where((x == 0) & ~np.isnan(y), 0.0, x * log(y))


def _entr(x: Tracer) -> Any:
    return np.where(np.isnan(x), x, np.where(x > 0, -x * np.log(x), np.where(x == 0, 0.0, -np.inf)))


def _rel_entr(x: Tracer, y: Tracer) -> Any:
    """x log(x/y) for positive x and y as SciPy's: log1p of (x - y) / y where x/y is near 1, log(x) - log(y) where
    x/y over- or underflows; 0 at x = 0 <= y; inf where x or y is negative."""
    r = x / y
    inner = np.where((r > 0.5) & (r < 2), x * np.log1p((x - y) / y),
                     np.where((r > np.finfo(np.float64).tiny) & (r < np.inf), x * np.log(r), x * (np.log(x) - np.log(y))))
    value = np.where((x > 0) & (y > 0), inner, np.where((x == 0) & (y >= 0), 0.0, np.inf))
    return np.where(np.isnan(x) | np.isnan(y), np.nan, value)


def _kl_div(x: Tracer, y: Tracer) -> Any:
    """x log(x/y) - x + y for positive x and y (SciPy's formula: x/y may overflow); y at x = 0 <= y; inf where x or y is negative."""
    value = np.where((x > 0) & (y > 0), x * np.log(x / y) - x + y, np.where((x == 0) & (y >= 0), y, np.inf))
    return np.where(np.isnan(x) | np.isnan(y), np.nan, value)


def _ndtr(a: Tracer) -> Any:  # Cephes' ndtr: erf near 0, erfc of |x| beyond (no cancellation in either tail)
    x = a * np.sqrt(0.5)
    tail = 0.5 * _special("erfc", np.abs(x))
    return np.where(np.abs(x) < np.sqrt(0.5), 0.5 + 0.5 * _special("erf", x), np.where(x > 0, 1 - tail, tail))


def _huber(delta: Tracer, r: Tracer) -> Any:
    value = np.where(np.abs(r) <= delta, 0.5 * r * r, delta * (np.abs(r) - 0.5 * delta))
    return np.where(delta < 0, np.inf, value)


def _pseudo_huber(delta: Tracer, r: Tracer) -> Any:
    """delta^2 (sqrt(1 + (r/delta)^2) - 1) as expm1(log1p(u^2) / 2): no cancellation for small r/delta."""
    u = r / delta
    value = np.where((delta == 0) | (r == 0), 0.0, delta * delta * np.expm1(0.5 * np.log1p(u * u)))
    return np.where(delta < 0, np.inf, value)


def _boxcox(log: Callable[[Any], Any]) -> Callable[[Tracer, Tracer], Any]:
    """boxcox, boxcox1p: (x^l - 1) / l as expm1(l log x) / l (log1p for boxcox1p), log x where |l| < 1e-19."""
    return lambda x, lmbda: np.where(np.abs(lmbda) < 1e-19, log(x), np.expm1(lmbda * log(x)) / lmbda)


def _special(name: str, x: Tracer) -> Tracer:
    """scipy.special's erf or erfc of x (an op: ops.py)."""
    from .ufuncs import apply_ufunc

    return apply_ufunc(trace_of([x]), getattr(sys.modules["scipy.special"], name), (x,))


_FUNCTIONS: dict[str, Callable[..., Any]] = {
    "expit": _expit, "logit": _logit, "log_expit": _log_expit,
    "xlogy": _times_log(np.log), "xlog1py": _times_log(np.log1p),
    "entr": _entr, "rel_entr": _rel_entr, "kl_div": _kl_div,
    "ndtr": _ndtr, "huber": _huber, "pseudo_huber": _pseudo_huber,
    "boxcox": _boxcox(np.log), "boxcox1p": _boxcox(np.log1p),
    # SciPy's own spellings of NumPy's functions
    "expm1": np.expm1, "log1p": np.log1p, "cbrt": np.cbrt, "exp2": np.exp2, "round": np.rint,
    "exp10": lambda x: np.power(10.0, x),
}
_IN_LOOP_DTYPE = {_expit, _logit, _log_expit}  # SciPy's float32 loops of these compute in float32
