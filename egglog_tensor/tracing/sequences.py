"""NumPy functions given a list of traced arrays where they take one array: `np.mean([a, b], axis=0)`,
`np.max((x, y), axis=0)`, `np.transpose([q1, q2])` (scikit-learn's robust_scale), `np.polyval([c0, c1], x)`.

NumPy dispatches a function to `__array_function__` for the arguments its dispatcher names; for a parameter that
takes one array-like (`a`, `x`, `arr`...) that is the list itself, not the arrays in it, so NumPy converts the
list, which a traced array cannot be. While a kernel is traced, each such function that kernels implement is
replaced by one that first stacks such a list as np.asarray does (conversions.py) and then calls NumPy's function,
which dispatches to the traced one. Lists without traced arrays reach NumPy's function unchanged.
"""

from __future__ import annotations

import functools
import inspect
from typing import Any

import numpy as np

from .conversions import asarray
from .core import IMPLEMENTATIONS, first_tracer
from .creation import replace_while_tracing, replacement

ARRAY_PARAMETERS = {"a", "x", "arr", "array", "ary", "m", "p"}  # NumPy's names of a parameter taking one array


def _holds_tracer(value: Any) -> bool:
    return isinstance(value, (list, tuple)) and first_tracer(value) is not None


def _stacking(numpy_fn: Any, parameter: str) -> Any:
    """numpy_fn with a list holding traced arrays as its first argument (`parameter`) stacked first."""
    @functools.wraps(numpy_fn)
    def stacking(*args: Any, **kwargs: Any) -> Any:
        if args and _holds_tracer(args[0]):
            args = (asarray(args[0]), *args[1:])
        elif _holds_tracer(kwargs.get(parameter)):
            kwargs[parameter] = asarray(kwargs[parameter])
        return numpy_fn(*args, **kwargs)
    return stacking


def _first_array_parameter(fn: Any) -> str | None:
    """The name of fn's first parameter if it is one of NumPy's names of an array parameter (and fn is a NumPy
    function dispatched through __array_function__)."""
    if type(fn) is not type(np.mean):
        return None
    first = next(iter(inspect.signature(fn).parameters), None)
    return first if first in ARRAY_PARAMETERS else None


def _install() -> None:
    for name in sorted(IMPLEMENTATIONS):
        space, _, attr = name.rpartition(".")
        fn = getattr(getattr(np, space, None) if space else np, attr, None)
        parameter = _first_array_parameter(fn)
        if parameter is None:
            continue
        try:
            replacement(name)
        except KeyError:  # (not already replaced while tracing: np.asarray & co. convert lists themselves)
            replace_while_tracing(name, _stacking(fn, parameter))


_install()
