"""scipy.special's orthogonal polynomials `eval_legendre eval_sh_legendre eval_chebyt eval_chebyu eval_chebyc
eval_chebys eval_sh_chebyt eval_sh_chebyu eval_laguerre eval_genlaguerre eval_gegenbauer` of an integer degree n, made
of the ops of SciPy's recurrences (legendre_l chebyt_l chebyu_l genlaguerre_l gegenbauer_l: lowering/orthopoly.py) on
shifted or scaled x as SciPy's definitions.

SciPy runs the recurrences for an integer n (its `l` loops); for an n of a float dtype it evaluates a hypergeometric
function instead, which a kernel does not compute: a non-integer n of a float dtype is refused (while tracing when n is
a constant, else raised from the call), and so is a negative one for the Laguerre and Gegenbauer polynomials (there
SciPy's hypergeometric loop is NaN or 0 where the recurrence is 0); an integral one runs the recurrence (within a
few ULP of SciPy's hypergeometric value), an infinite or NaN n gives NaN, as SciPy's.
tracing/special.py dispatches to POLYNOMIALS (each function's `integer_loop`: the one for an integer n)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..errors import UnsupportedError
from .core import Tracer, check_at_run_time, fail, known_value, lift, result, trace_of

Polynomial = Callable[..., Any]


def float64_op(name: str, *args: Any) -> Tracer:
    """The elementwise op `name` (lowering/orthopoly.py, bessel_integer.py) of float64 operands, broadcast."""
    trace = trace_of(args)
    return result(trace, trace.make(name, tuple(lift(trace, a, "float64") for a in args)))


def refuse_non_integer(name: str, n: Tracer, negative: bool = False,
                       refused: str = "SciPy's hypergeometric-function loop", kept: str = "SciPy's recurrence") -> None:
    """Refuse a finite non-integer n (with `negative`, a negative n too), which SciPy computes otherwise (`refused`),
    while tracing if n is known, else from the call."""
    bad = np.isfinite(n) & ((n != np.floor(n)) | (n < 0 if negative else False))
    what = "a negative or non-integer" if negative else "a non-integer"
    message = (f"scipy.special.{name} of {what} n of a float dtype ({refused}) is not supported in a kernel; an integer n "
               f"({kept}) is")
    known = known_value(bad)
    if known is None:
        check_at_run_time(bad, message, UnsupportedError, of="n ")
    elif known.any():
        raise fail(UnsupportedError, message)


def _polynomial(name: str, integer_loop: Polynomial, negative: bool = False) -> Polynomial:
    """SciPy's ufunc `name`: integer_loop for an integer n; for a float n the same where n is integral (see
    refuse_non_integer), NaN where it is not finite."""

    def float_loop(n: Tracer, *rest: Tracer) -> Any:
        refuse_non_integer(name, n, negative)
        return np.where(np.isfinite(n), integer_loop(np.where(np.isfinite(n), n, 0.0), *rest), np.nan)

    float_loop.integer_loop = integer_loop  # type: ignore[attr-defined]
    return float_loop


POLYNOMIALS: dict[str, Polynomial] = {
    "eval_legendre": _polynomial("eval_legendre", lambda n, x: float64_op("legendre_l", n, x)),
    "eval_sh_legendre": _polynomial("eval_sh_legendre", lambda n, x: float64_op("legendre_l", n, 2 * x - 1)),
    "eval_chebyt": _polynomial("eval_chebyt", lambda n, x: float64_op("chebyt_l", n, x)),
    "eval_chebyc": _polynomial("eval_chebyc", lambda n, x: 2 * float64_op("chebyt_l", n, 0.5 * x)),
    "eval_sh_chebyt": _polynomial("eval_sh_chebyt", lambda n, x: float64_op("chebyt_l", n, 2 * x - 1)),
    "eval_chebyu": _polynomial("eval_chebyu", lambda n, x: float64_op("chebyu_l", n, x)),
    "eval_chebys": _polynomial("eval_chebys", lambda n, x: float64_op("chebyu_l", n, 0.5 * x)),
    "eval_sh_chebyu": _polynomial("eval_sh_chebyu", lambda n, x: float64_op("chebyu_l", n, 2 * x - 1)),
    "eval_laguerre": _polynomial("eval_laguerre", lambda n, x: float64_op("genlaguerre_l", n, 0.0, x), negative=True),
    "eval_genlaguerre": _polynomial("eval_genlaguerre", lambda n, a, x: float64_op("genlaguerre_l", n, a, x), negative=True),
    "eval_gegenbauer": _polynomial("eval_gegenbauer", lambda n, a, x: float64_op("gegenbauer_l", n, a, x), negative=True),
}
