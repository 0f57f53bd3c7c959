"""scipy.special's Bessel functions of integer order `yn` and `kn`, made of the ops bessel_yn and bessel_kn
(lowering/bessel_integer.py: forward recurrences from y0, y1 and k0, k1). SciPy's loop of a float n truncates it
to a C int (with a warning): truncated here, NaN where n is not finite (SciPy's cast of an infinite n is undefined).
tracing/special.py dispatches to BESSEL (each function's `integer_loop`: the one for an integer n)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .core import Tracer
from .special_polynomials import float64_op


def _integer_order(op: str) -> Callable[[Tracer, Tracer], Any]:
    """SciPy's ufunc of the op: the op for an integer n, of trunc(n) for a float one (NaN where n is not finite)."""

    def float_loop(n: Tracer, x: Tracer) -> Any:
        finite = np.isfinite(n)
        return np.where(finite, float64_op(op, np.trunc(np.where(finite, n, 0.0)), x), np.nan)

    float_loop.integer_loop = lambda n, x: float64_op(op, n, x)  # type: ignore[attr-defined]
    return float_loop


BESSEL: dict[str, Callable[..., Any]] = {"yn": _integer_order("bessel_yn"), "kn": _integer_order("bessel_kn")}
