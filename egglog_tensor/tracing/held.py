"""NumPy arrays the user's objects hold, indexed with traced indices: `self.tok_embedding[tokens]`
(llama3.np), `EMB[ids]`, `params["wte"][ids]`.

NumPy's own `ndarray.__getitem__` runs such a subscript and only asks the traced index for a NumPy array
(`Tracer.__array__`), which has none. There, the subscript the user's frame is running is read from
its source; if its container resolves, without running code, to a NumPy array, the trace is stopped
(HeldArrayIndexed) and run again with that array replaced, in every dict, list and closure cell that
holds it (module globals, object attributes, weight dicts), by a traced constant: the array captured as
any other (tracing/core.py constant_array), then gathered with indices checked at run time. The holders
get the array back when the trace ends; while it runs, code in other threads reading them would see the
stand-in.
"""

from __future__ import annotations

import ast
import contextlib
import gc
import sys
import types
from collections import deque
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from ..errors import ConcreteValueError, UnsupportedError
from .core import Trace, Tracer, constant_array, implements, is_user_code, result, user_location
from .creation import resolve, running_expression

WALK = 100_000  # objects visited at most, looking for the holders of an indexed array
MAX_ARRAYS = 32  # traces run again at most this many times, once per held array found
OWN = __name__.split(".")[0]  # this package's objects (tracers, traces) are not entered
NDARRAY = np.ndarray  # (np.ndarray itself is replaced while tracing: conversions.py)
FROZEN = "it is a NumPy array captured by the kernel (a global, closure or object attribute), a constant here"


class HeldArrayIndexed(ConcreteValueError):
    """A NumPy array held by the user's objects was indexed with a traced index: trace again with it traced
    (its message is for when that does not reach the array)."""

    def __init__(self, message: str, array: np.ndarray, holders: list[tuple[Any, Any]]) -> None:
        super().__init__(message)
        self.array = array
        self.holders = holders


def indexed_array(frame: types.FrameType) -> np.ndarray | None:
    """The NumPy array the subscript `frame` runs indexes (`A[t]`, `self.w[t, 0]`), if `frame` is the user's
    and the container resolves without running code; else None."""
    if not is_user_code(frame.f_code.co_filename):
        return None
    expr = running_expression(frame)
    if not (isinstance(expr, ast.Subscript) and isinstance(expr.ctx, ast.Load)):
        return None
    try:
        array = resolve(frame, expr.value)
    except (KeyError, AttributeError, IndexError, TypeError):
        return None
    return array if type(array) is NDARRAY else None


def _holders(array: np.ndarray, frame: types.FrameType | None) -> list[tuple[Any, Any]]:
    """(container, key) of each dict, list and closure cell holding `array` (key None for a cell) that the
    user's frames from `frame` outward reach: their globals, closure cells, and the dicts, lists, tuples
    and objects' attributes reachable from those and from their locals (modules, classes, functions and this
    package's objects not entered; at most WALK objects visited)."""
    found: list[tuple[Any, Any]] = []
    seen: set[int] = set()
    queue: deque[Any] = deque()  # breadth first: a global or an attribute is found before WALK runs out in a deep graph
    while frame is not None:
        if is_user_code(frame.f_code.co_filename):
            queue.append(frame.f_globals)
            queue.extend(frame.f_locals.values())
            if frame.f_code.co_freevars:  # the closure cells of the functions running this code
                queue.extend(c for f in gc.get_referrers(frame.f_code) if type(f) is types.FunctionType and f.__closure__
                             for c in f.__closure__)
        frame = frame.f_back
    while queue and len(seen) < WALK:
        obj = queue.popleft()
        if id(obj) in seen:
            continue
        seen.add(id(obj))
        if type(obj) is types.CellType:
            with contextlib.suppress(ValueError):
                found.extend([(obj, None)] if obj.cell_contents is array else [])
                queue.append(obj.cell_contents)
            continue
        if type(obj) is dict:
            found.extend((obj, k) for k, v in obj.items() if v is array)
            queue.extend(obj.values())
        elif type(obj) is list:
            found.extend((obj, i) for i, v in enumerate(obj) if v is array)
            queue.extend(obj)
        elif type(obj) is tuple:
            queue.extend(obj)
        elif not isinstance(obj, (types.ModuleType, type, types.FunctionType, types.BuiltinFunctionType, NDARRAY)) \
                and not type(obj).__module__.startswith(OWN) and type(getattr(obj, "__dict__", None)) is dict:
            queue.append(obj.__dict__)
    return found


def _put(container: Any, key: Any, value: Any) -> None:
    if key is None:
        container.cell_contents = value
    else:
        container[key] = value


def _get(container: Any, key: Any) -> Any:
    return container.cell_contents if key is None else container[key]


@contextlib.contextmanager
def substituted(trace: Trace, held: Sequence[HeldArrayIndexed]) -> Iterator[None]:
    """While tracing, each array found `held` replaced in its holders by a traced constant of `trace` (writes
    into it refused); the holders that still hold the stand-in get the array back afterwards."""
    placed: list[tuple[Any, Any, np.ndarray, Tracer]] = []
    try:
        for found in held:
            array = found.array
            stand_in = result(trace, constant_array(trace, array, array.dtype.name))
            stand_in._frozen = FROZEN
            for container, key in found.holders:
                _put(container, key, stand_in)
                placed.append((container, key, array, stand_in))
        yield
    finally:
        for container, key, array, stand_in in reversed(placed):
            with contextlib.suppress(LookupError, ValueError):
                if _get(container, key) is stand_in:
                    _put(container, key, array)


@implements("array.indexed")
def check_indexed(tracer: Tracer) -> None:
    """Raise HeldArrayIndexed if `tracer` is being converted because the user's subscript indexes a held NumPy
    array; UnsupportedError if no holder of it can be found (a local variable made from a concrete array)."""
    frame = sys._getframe(2)
    array = indexed_array(frame)
    if array is None:
        return
    holders = _holders(array, frame)
    message = (f"a NumPy array of shape {array.shape} indexed with traced indices: the kernel traces it as a constant "
               "where a global, closure, object attribute, dict or list holds it, but this one was not found there "
               "(a local variable holding a concrete array?); pass it as an argument of the kernel, or keep it "
               f"in a global or an object's attribute\n  at {user_location()}")
    if not holders:
        raise UnsupportedError(message)
    raise HeldArrayIndexed(message, array, holders)

