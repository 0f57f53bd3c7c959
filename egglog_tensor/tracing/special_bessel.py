"""scipy.special's Bessel functions of integer order `yn kn` and, at integral orders, `jn jv jve yv yve kv kve iv ive`, made of
the ops bessel_jn, bessel_yn, bessel_kn, bessel_kne and bessel_ive (lowering/bessel_integer.py: recurrences from orders 0 and 1). SciPy's
yn and kn loops of a float n truncate it to a C int (with a warning): truncated here, NaN where n is not finite
(SciPy's cast of an infinite n is undefined); a non-integer order of the real-order functions is refused.
tracing/special.py dispatches to BESSEL (each function's `integer_loop`: the one for an integer n)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .core import Tracer
from .special_polynomials import float64_op, refuse_non_integer


def _integer_order(op: str) -> Callable[[Tracer, Tracer], Any]:
    """SciPy's ufunc of the op: the op for an integer n, of trunc(n) for a float one (NaN where n is not finite)."""

    def float_loop(n: Tracer, x: Tracer) -> Any:
        finite = np.isfinite(n)
        return np.where(finite, float64_op(op, np.trunc(np.where(finite, n, 0.0)), x), np.nan)

    float_loop.integer_loop = lambda n, x: float64_op(op, n, x)  # type: ignore[attr-defined]
    return float_loop


def _integral_real_order(name: str, op: str) -> Callable[[Tracer, Tracer], Any]:
    """SciPy's real-order ufunc `name` (jv, yv, kv and the exponentially scaled jve, yve, equal to jv, yv for real x)
    at an integral order: the op; a finite non-integer order (Amos' algorithms) refused; NaN where it is not finite."""

    def real_order(v: Tracer, x: Tracer) -> Any:
        refuse_non_integer(name, v, refused="Amos' algorithms for real orders", kept="a recurrence from orders 0 and 1")
        finite = np.isfinite(v)
        return np.where(finite, float64_op(op, np.where(finite, v, 0.0), x), np.nan)

    return real_order


BESSEL: dict[str, Callable[..., Any]] = {
    "yn": _integer_order("bessel_yn"), "kn": _integer_order("bessel_kn"),
    **{name: _integral_real_order(name, "bessel_jn") for name in ("jn", "jv", "jve")},
    "yv": _integral_real_order("yv", "bessel_yn"), "kv": _integral_real_order("kv", "bessel_kn"),
    "yve": lambda v, x: np.where(x == 0, np.nan, _integral_real_order("yve", "bessel_yn")(v, x)),  # (Amos': NaN at 0)
    "ive": _integral_real_order("ive", "bessel_ive"), "kve": _integral_real_order("kve", "bessel_kne"),
    "iv": lambda v, x: _integral_real_order("iv", "bessel_ive")(v, x) * np.exp(np.abs(x)),
}
