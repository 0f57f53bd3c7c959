"""The Tracer: a symbolic array that records a typed Node DAG, and what every surface module shares.

Tracers take part in NumPy's own dispatch (`__array_ufunc__`, `__array_function__`) and Python
operators; each NumPy function a kernel may call is an entry of IMPLEMENTATIONS, registered by the
module that implements it (`@implements("sum")`), so adding a function never touches this module.
"""

from __future__ import annotations

import functools
import inspect
import math
import operator
import os
import sys
import warnings
from collections.abc import Callable, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from ..errors import (
    ConcreteValueError,
    EgglogTensorError,
    IndexOutOfBoundsError,
    OutOfBoundsError,
    TracingError,
    UnsupportedAttributeError,
    UnsupportedError,
)
from ..graph import DTYPES, Builder, Node, is_float, numpy_dtype, topological
from ..spec import PYTHON_SCALARS
from .constants import LIMIT as KNOWN_LIMIT, constant_value

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # egglog_tensor/: not user code
_NUMPY_DIR = os.path.dirname(np.__file__)

# name -> implementation: `np.<name>` functions, "getitem", "ufunc.<method>" ("ufunc.__call__", "ufunc.reduce"),
# and "ufunc.<name>" for a ufunc composed of others (np.float_power)
IMPLEMENTATIONS: dict[str, Callable[..., Any]] = {}


def implements(*names: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register the decorated function as the traced implementation of each of `names`."""

    def register(fn: Callable[..., Any]) -> Callable[..., Any]:
        for name in names:
            if name in IMPLEMENTATIONS:
                raise ValueError(f"{name} is implemented twice")
            IMPLEMENTATIONS[name] = fn
        return fn

    return register


@functools.lru_cache(maxsize=1024)
def is_user_code(filename: str) -> bool:
    """Whether code in `filename` is the user's: not this package's, not NumPy's, not Python's frozen modules
    (importlib runs a module first imported while tracing)."""
    path = os.path.abspath(filename)
    return not path.startswith((_PACKAGE_DIR, _NUMPY_DIR)) and "<__array_function__" not in path \
        and not filename.startswith("<frozen ")


def user_location() -> str:
    """'file:line: code' of the innermost frame that is user code (not this package, not NumPy)."""
    frame = sys._getframe(1)
    while frame is not None:
        if is_user_code(frame.f_code.co_filename):
            info = inspect.getframeinfo(frame, context=1)
            code = info.code_context[0].strip() if info.code_context else ""
            return f"{info.filename}:{info.lineno}: {code}"
        frame = frame.f_back
    return "<unknown location>"


def user_frame() -> tuple[str, int] | None:
    """(file, line) of the innermost frame that is user code: where a traced value was made."""
    frame = sys._getframe(1)
    while frame is not None:
        if is_user_code(frame.f_code.co_filename):
            return frame.f_code.co_filename, frame.f_lineno
        frame = frame.f_back
    return None


def fail(cls: type[EgglogTensorError], message: str) -> EgglogTensorError:
    return cls(f"{message}\n  at {user_location()}")


def describe(args: Sequence[Any]) -> str:
    parts = []
    for a in args:
        if isinstance(a, Tracer):
            parts.append(f"tracer {a.dtype}{list(a.shape)}")
        else:
            parts.append(type(a).__name__)
    return ", ".join(parts)


@dataclass(frozen=True, eq=False)
class Guard:
    """A data value tracing took as a Python value (a branch, int(), float()): `value`, what it was for the traced
    call's arguments; every later call checks it (egglog_tensor/guards.py). A "float" guard holds only for an equal value."""

    node: Node  # the 0-d value
    kind: str  # "bool", "int" or "float": how the value was taken, so how a call compares it
    value: bool | int | float
    where: str  # the user's line that took it ('file:line: code')

    def __str__(self) -> str:
        return f"{self.kind}(...) = {self.value!r} at {self.where}"


class Evaluator(Protocol):
    """What tracing a call with concrete arguments computes traced values with (guards.Concrete sets one)."""

    literal: frozenset[str]  # Python-number arguments: a value of only these is specialized on instead (kernel.py)

    def __call__(self, trace: Trace, node: Node) -> np.ndarray: ...


EVALUATOR: ContextVar[Evaluator | None] = ContextVar("egglog_tensor_evaluator", default=None)
GUARD_LIMIT = 64  # guards per trace: more is an error (a while loop on a data value with no fixed cap)
_TAKE = {"bool": bool, "int": int, "index": operator.index, "float": float}  # as Python takes a NumPy scalar


@dataclass
class Trace:
    """State of one tracing run: the node builder and the argument nodes by name."""

    builder: Builder
    arg_names: tuple[str, ...]
    checks: list[tuple[Node, str, type[EgglogTensorError]]] = field(default_factory=list)  # (0-d bool, message, error): a call raises it when true
    captured: dict[int, tuple[Node, np.ndarray]] = field(default_factory=dict)  # large captured arrays: hidden arguments
    written: list[Tracer] = field(default_factory=list)  # arguments written into: their final values are hidden outputs
    locations: dict[Node, tuple[str, int]] = field(default_factory=dict)  # the user's (file, line) that first made each node
    guards: list[Guard] = field(default_factory=list)  # data values taken as Python values, in the order tracing took them

    def make(self, op: str, inputs: tuple[Node, ...] = (), attrs: tuple = ()) -> Node:
        try:
            node = self.builder.make(op, inputs, attrs)
            if node not in self.locations and (where := user_frame()) is not None:
                self.locations[node] = where
            return node
        except TracingError as e:
            message = str(e) if str(e).startswith(op) else f"{op}: {e}"
            raise fail(TracingError, message) from None

    def const(self, value: object, dtype: str) -> Node:
        """A 0-d constant of `dtype`, holding the value NumPy would compute with (NEP 50): a Python
        int outside an integer dtype raises OverflowError, a number beyond a float dtype's range is
        +-inf (with NumPy's RuntimeWarning), both as in NumPy. A 64-bit integer beyond 2**53 (which the
        term's f64 value would round) is made of its two 32-bit halves."""
        bounds = np.iinfo(dtype) if np.dtype(dtype).kind in "iu" else None
        if bounds is not None and type(value) is int and not bounds.min <= value <= bounds.max:
            raise fail(OutOfBoundsError, f"Python integer {value} out of bounds for {dtype}")
        try:
            if is_float(dtype) and type(value) in (int, float):
                typed = to_float(value, dtype)
            elif bounds is not None and type(value) is int:  # in bounds: `uint8_array - 1` subtracts a uint8 1
                typed = np.asarray(value, dtype)
            elif dtype == "bool" and type(value) in (int, float):  # a logical ufunc's bool loop: np.logical_and(1, b)
                typed = np.asarray(bool(value))
            else:
                typed = np.asarray(value).astype(dtype, casting="same_kind")
        except OverflowError:  # float(10**400)
            raise fail(OutOfBoundsError, f"Python integer {value} too large to convert to {dtype}") from None
        except TypeError:
            raise fail(TracingError, f"Python scalar {value!r} does not fit in {dtype}") from None
        if np.dtype(dtype).kind in "iu" and abs(int(typed)) > 2**53:  # beyond the term's f64: (high << 32) | low
            bits = int(typed) % 2**64
            high = self.make("left_shift", (self.const(bits >> 32, dtype), self.const(32, dtype)))
            return self.make("bitwise_or", (high, self.const(bits & 0xFFFFFFFF, dtype)))
        value = float(typed)
        if (value == 0.0 or math.isnan(value)) and math.copysign(1.0, value) < 0:
            # egglog's f64 equates -0.0 with 0.0 and reads a NaN back without its sign, so negative
            # zero and a negative NaN are spelled -(0.0) and -(NaN) in the term.
            return self.make("negative", (self.make("const", (), (-value, dtype)),))
        return self.make("const", (), (value, dtype))


def to_float(value: float, dtype: str) -> np.ndarray:
    """A Python number as NumPy casts it to a float dtype: out of range it is +-inf, with NumPy's warning."""
    with np.errstate(over="ignore"):
        typed = np.asarray(float(value)).astype(dtype)
    if np.isinf(typed) and math.isfinite(float(value)):
        warnings.warn(f"overflow encountered in cast: {value!r} is {typed} in {dtype}, as in NumPy\n  at {user_location()}",
                      RuntimeWarning, stacklevel=2)
    return typed




_ENTRY_HINTS = {"as_strided": ": np.lib.stride_tricks.sliding_window_view is supported (read-only windows)"}


def numpy_entry(frame: Any) -> str | None:
    """The NumPy function the user called whose Python code converts a traced array (as_strided), or None."""
    entry = None
    while frame is not None and frame.f_globals.get("__name__", "").startswith("egglog_tensor"):  # (np.array's wrapper: creation.py)
        frame = frame.f_back
    while frame is not None and frame.f_globals.get("__name__", "").startswith("numpy"):
        entry, frame = frame.f_code.co_qualname, frame.f_back
    return entry


class Tracer(np.lib.mixins.NDArrayOperatorsMixin):
    """A symbolic array: a node of the traced DAG. Python numbers stay 'weak' (NEP 50)."""

    __array_priority__ = 1000

    def __init__(self, trace: Trace, node: Node, weak: type | None = None, view: bool = False) -> None:
        self._trace = trace
        self._own = node
        self._weak = weak
        self._view = view  # an argument: it aliases the caller's memory, writes into it reach the caller (Trace.written)
        self._base: Tracer | None = None  # a view: the array it views (never itself a view) ...
        self._steps: tuple[tuple[str, tuple], ...] = ()  # ... and the view ops (op, attrs) that make it from the base
        self._seen: Node | None = None  # the base's node that _own was derived from
        self._order: str | None = None  # an array of its own: "C" or "F" where its memory order is known (reshape's view or copy)
        self._box: Box | None = None  # where writes into a view go in its base (None: they cannot)
        self._frozen: str | None = None  # why writes into this array are refused

    @property
    def _node(self) -> Node:
        """The array's current value: a view's follows its base's, which in-place updates rebind."""
        if self._base is not None and self._base._own is not self._seen:
            self._seen = self._base._own
            self._own = replayed(self._trace, self._seen, self._steps)
        return self._own

    def __getattr__(self, name: str) -> Any:
        """Only called for attributes Tracer lacks: an ndarray method or attribute it does not support."""
        if not name.startswith("_") and hasattr(np.ndarray, name):
            raise fail(UnsupportedAttributeError, f"ndarray.{name} is not supported in a kernel (on a tracer {self.dtype}{list(self.shape)})")
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    # --- array attributes -------------------------------------------------------------------
    def _set_shape(self, shape: Any) -> None:
        raise fail(UnsupportedAttributeError, f"setting ndarray.shape in place is not supported in a kernel (on a tracer "
                                              f"{self.dtype}{list(self.shape)}); use x = x.reshape({shape!r})")

    shape = property(lambda self: self._node.shape, _set_shape)
    device = property(lambda self: "cpu")  # NumPy 2's (array API): array-API code asks it
    ndim = property(lambda self: self._node.ndim)
    size = property(lambda self: self._node.size)
    dtype = property(lambda self: np.dtype(self._node.dtype))
    T = property(lambda self: self.transpose())
    real = property(lambda self: IMPLEMENTATIONS["real"](self))  # a traced array is real: itself, and zeros
    imag = property(lambda self: IMPLEMENTATIONS["imag"](self))

    def __len__(self) -> int:
        if not self.shape:
            raise fail(TracingError, "len() of a 0-d array")
        return self.shape[0]

    def __iter__(self):
        if not self.shape:
            raise fail(TracingError, "iteration over a 0-d array")
        return (self[i] for i in range(self.shape[0]))

    def __repr__(self) -> str:
        return f"Tracer({self._node.dtype}{list(self.shape)})"

    # --- what cannot be traced ----------------------------------------------------------------
    def _concrete(self, what: str) -> ConcreteValueError:
        args = [n for n in ancestors(self._node) if n.op == "arg"]
        names = sorted({n.attr("name") for n in args})
        deps = f"it depends on argument(s) {', '.join(names)}" if names else "it is a traced value"
        scalars = sorted({n.attr("name") for n in args if not n.shape})
        hint = (f"; to use a number argument as a constant (a shape, a slice bound, a loop count), make it static: "
                f"et.kernel(f, static_argnames={tuple(scalars)!r})" if scalars else "")
        error = fail(
            ConcreteValueError,
            f"{what} needs a concrete value, but {deps}, whose values are not known while tracing; "
            f"use np.where / np.maximum etc. instead of Python control flow{hint}",
        )
        error.needs = frozenset(names)
        return error

    def _taken(self, what: str, how: str) -> Any:
        """The Python value `how` ("bool", "int", "index", "float") takes of this 0-d value for the arguments of the call
        being traced, recorded as a guard; ConcreteValueError when no call's arguments are known (tracing from shapes)."""
        error = self._concrete(what)
        evaluate = EVALUATOR.get()
        if evaluate is None or self.ndim or (error.needs and error.needs <= evaluate.literal):
            raise error
        trace = self._trace
        if len(trace.guards) == GUARD_LIMIT:
            raise fail(UnsupportedError, f"{what}: more than {GUARD_LIMIT} data values taken as Python values in one trace, each "
                                         "compiled and run while tracing (a while loop on a traced value without a fixed cap? Python's "
                                         "max(a, b) and min(a, b) of traced values, in a loop? each compares them with bool()); "
                                         "cap the loop (for i in range(n): ... if done: break), or use np.where, np.maximum, np.minimum")
        value = _TAKE[how](evaluate(trace, self._node)[()])
        trace.guards.append(Guard(self._node, "int" if how == "index" else how, value, user_location()))
        return value

    def __bool__(self) -> bool:
        try:
            return self._taken("Python control flow (bool() / if / while / and / or) on a traced array", "bool")
        except ConcreteValueError as error:
            if any(n.op in ("isfinite", "isnan", "isinf") for n in ancestors(self._node)):
                error.args = ((f"{error.args[0]}\n  This checks the data for NaN or inf (as scikit-learn's input validation does with "
                               "np.isfinite(X).all()), which only a run can tell: call the kernel (or inspect/lower it) with arguments, "
                               "which takes the value as a guard, or make the check before calling it; for scikit-learn, call the "
                               "kernel inside sklearn.config_context(assume_finite=True); SciPy's functions take check_finite=False."),)
            raise

    def __float__(self) -> float:
        return self._taken("float() of a traced array", "float")

    def __int__(self) -> int:
        return self._taken("int() of a traced array", "int")

    def __index__(self) -> int:
        return self._taken("using a traced array as an index", "index")

    def item(self, *args: Any) -> bool | int | float:
        """ndarray.item: the element at `args` (a flat index, or one per dim; none: of a size-1 array) as its Python value
        for the call's arguments (a guard)."""
        args = args[0] if len(args) == 1 and isinstance(args[0], tuple) else args
        if not args and self.size != 1:
            raise fail(TracingError, "can only convert an array of size 1 to a Python scalar")
        element = self if not args and not self.ndim else self.flat[args[0] if args else 0] if len(args) < 2 else self[args]
        return element._taken("ndarray.item() of a traced array", {"b": "bool", "i": "int", "u": "int"}.get(self.dtype.kind, "float"))

    def __array__(self, dtype=None, copy=None):
        IMPLEMENTATIONS["array.made"](self)  # `made_array[tracer]`, `[i] = tracer`: traced again (tracing/creation.py)
        IMPLEMENTATIONS["array.indexed"](self)  # `held_array[tracer]` in user code: traced again (tracing/held.py)
        if self.size <= KNOWN_LIMIT and (known := known_value(self)) is not None:  # (ndimage's np.asarray of np.ones(3) / 3)
            return known.astype(dtype or known.dtype, copy=True) if copy is not False else known
        error = self._concrete("converting a traced array to a NumPy array (with np.asarray, np.float32... bound before tracing, "
                               "or np.frombuffer & co., or a list of traced arrays where no traced array is an operand itself: "
                               "np.maximum.reduce([a, b]) converts the list before any dispatch; np.stack it first)")
        frame = sys._getframe(1)
        while frame is not None and not (frame.f_code.co_name in ("cdist", "pdist") and "scipy" in frame.f_globals.get("__name__", "")):
            frame = frame.f_back
        if frame is not None:
            error.args = (f"{error.args[0]}\n  SciPy's {frame.f_code.co_name} runs compiled code on the arrays, which a kernel "
                          "cannot trace; write the distances in NumPy, e.g. euclidean "
                          "np.sqrt(((XA[:, None, :] - XB[None, :, :]) ** 2).sum(-1)), cityblock "
                          "np.abs(XA[:, None, :] - XB[None, :, :]).sum(-1).",)
        entry = numpy_entry(sys._getframe(1))
        if entry is not None:
            error.args = (f"{error.args[0]}\n  NumPy's Python function {entry} converts it{_ENTRY_HINTS.get(entry, '')}",)
        raise error

    def __setitem__(self, key: Any, value: Any) -> None:
        IMPLEMENTATIONS["setitem"](self, key, value)

    # --- NumPy protocols: dispatched through IMPLEMENTATIONS, which the surface modules fill ----------
    def __array_namespace__(self, api_version: str | None = None) -> Any:
        """The array API namespace (array-api-compat asks it, in SciPy's and scikit-learn's code): NumPy's,
        whose functions reach the Tracer through __array_function__ / __array_ufunc__."""
        return np

    def __array_ufunc__(self, ufunc: np.ufunc, method: str, *inputs: Any, **kwargs: Any) -> Any:
        handler = IMPLEMENTATIONS.get(f"ufunc.{method}")
        if handler is None:
            raise fail(UnsupportedError, f"np.{ufunc.__name__}.{method}({describe(inputs)}) is not supported")
        return handler(ufunc, *inputs, **kwargs)

    def __array_function__(self, func: Callable, types: Any, args: Any, kwargs: Any) -> Any:
        if _is_public(func, np):
            name = func.__name__
        else:  # np.linalg's and np.lib.stride_tricks' functions are registered as "linalg.<name>", "stride_tricks.<name>"
            name = next((f"{space}.{func.__name__}" for space, module in (("linalg", np.linalg), ("stride_tricks", np.lib.stride_tricks))
                         if _is_public(func, module)), None)
        handler = IMPLEMENTATIONS.get(name)
        if handler is None:
            where = name or f"{func.__module__.removeprefix('numpy').lstrip('.')}.{func.__name__}".lstrip(".")
            raise fail(UnsupportedError, f"np.{where}({describe(args)}) is not supported"
                       + (" (complex results are not supported)" if where.startswith("fft.") else ""))
        # NumPy's "not given" default, passed on explicitly (et.kernel(np.sum) binds every parameter): not given
        while args and args[-1] is np._NoValue:
            args = args[:-1]
        return handler(*args, **{k: v for k, v in kwargs.items() if v is not np._NoValue})

    # --- methods: ndarray's signatures, NumPy's functions ----------------------------------------
    def astype(self, dtype: Any, order: str = "K", casting: str = "unsafe", subok: bool = True, copy: bool = True) -> Tracer:
        """ndarray.astype: a copy converted to dtype (copy=False: self when it has that dtype), laid out in `order` (reshape's views)."""
        if not np.can_cast(self.dtype, dtype_name(dtype), casting):
            raise fail(TracingError, f"Cannot cast array data from {self.dtype!r} to {np.dtype(dtype)!r} according to the rule {casting!r}")
        if not copy and self.dtype == dtype_name(dtype):
            return self
        out = astype(self, dtype_name(dtype))
        out._order = memory_order(self, order)
        return out

    def copy(self, order: str = "C") -> Tracer:
        return IMPLEMENTATIONS["copy"](self, order)

    def sum(self, axis=None, dtype=None, out=None, keepdims=False, **kw) -> Tracer:
        return IMPLEMENTATIONS["sum"](self, axis, dtype, out, keepdims, **kw)

    def prod(self, axis=None, dtype=None, out=None, keepdims=False, **kw) -> Tracer:
        return IMPLEMENTATIONS["prod"](self, axis, dtype, out, keepdims, **kw)

    def max(self, axis=None, out=None, keepdims=False, **kw) -> Tracer:
        return IMPLEMENTATIONS["max"](self, axis, out, keepdims, **kw)

    def min(self, axis=None, out=None, keepdims=False, **kw) -> Tracer:
        return IMPLEMENTATIONS["min"](self, axis, out, keepdims, **kw)

    def mean(self, axis=None, dtype=None, out=None, keepdims=False, **kw) -> Tracer:
        return IMPLEMENTATIONS["mean"](self, axis, dtype, out, keepdims, **kw)

    # statistics (tracing/statistics.py)
    def argmax(self, axis=None, out=None, *, keepdims=False) -> Tracer:
        return IMPLEMENTATIONS["argmax"](self, axis, out, keepdims=keepdims)

    def argmin(self, axis=None, out=None, *, keepdims=False) -> Tracer:
        return IMPLEMENTATIONS["argmin"](self, axis, out, keepdims=keepdims)

    # scans (tracing/scans.py)
    def cumsum(self, axis=None, dtype=None, out=None) -> Tracer:
        return IMPLEMENTATIONS["cumsum"](self, axis, dtype, out)

    def cumprod(self, axis=None, dtype=None, out=None) -> Tracer:
        return IMPLEMENTATIONS["cumprod"](self, axis, dtype, out)

    # sorts (tracing/sorting.py)
    def argsort(self, axis=-1, kind=None, order=None, *, stable=None) -> Tracer:
        return IMPLEMENTATIONS["argsort"](self, axis, kind, order, stable=stable)

    def searchsorted(self, v, side="left", sorter=None) -> Tracer:
        return IMPLEMENTATIONS["searchsorted"](self, v, side, sorter)

    def any(self, axis=None, out=None, keepdims=False, *, where=True) -> Tracer:
        return IMPLEMENTATIONS["any"](self, axis, out, keepdims, where=where)

    def all(self, axis=None, out=None, keepdims=False, *, where=True) -> Tracer:
        return IMPLEMENTATIONS["all"](self, axis, out, keepdims, where=where)

    def var(self, axis=None, dtype=None, out=None, ddof=0, keepdims=False, **kw) -> Tracer:
        return IMPLEMENTATIONS["var"](self, axis, dtype, out, ddof, keepdims, **kw)

    def std(self, axis=None, dtype=None, out=None, ddof=0, keepdims=False, **kw) -> Tracer:
        return IMPLEMENTATIONS["std"](self, axis, dtype, out, ddof, keepdims, **kw)

    def reshape(self, *shape, order: str = "C") -> Tracer:
        return IMPLEMENTATIONS["reshape"](self, shape[0] if len(shape) == 1 and isinstance(shape[0], (tuple, list)) else shape, order)

    def transpose(self, *axes) -> Tracer:
        return IMPLEMENTATIONS["transpose"](self, axes[0] if len(axes) == 1 and isinstance(axes[0], (tuple, list)) else axes or None)

    def swapaxes(self, axis1: int, axis2: int) -> Tracer:
        return IMPLEMENTATIONS["swapaxes"](self, axis1, axis2)

    def diagonal(self, offset: int = 0, axis1: int = 0, axis2: int = 1) -> Tracer:
        return IMPLEMENTATIONS["diagonal"](self, offset, axis1, axis2)

    def trace(self, offset: int = 0, axis1: int = 0, axis2: int = 1, dtype=None) -> Tracer:
        return IMPLEMENTATIONS["trace"](self, offset, axis1, axis2, dtype)

    def round(self, decimals: int = 0) -> Tracer:
        return IMPLEMENTATIONS["round"](self, decimals)

    def clip(self, min=None, max=None, **kw) -> Tracer:
        return IMPLEMENTATIONS["clip"](self, min, max, **kw)

    def choose(self, choices: Any, out: Any = None, mode: str = "raise") -> Tracer:
        return IMPLEMENTATIONS["choose"](self, choices, out, mode)

    def conj(self) -> Tracer:
        """ndarray.conj of a real array: a copy in its dtype (np.conj of bool gives int8; this keeps bool)."""
        return IMPLEMENTATIONS["copy"](self)

    conjugate = conj

    def dot(self, other: Any) -> Tracer:
        return IMPLEMENTATIONS["dot"](self, other)

    def ravel(self, order: str = "C") -> Tracer:
        return IMPLEMENTATIONS["ravel"](self, order)

    def flatten(self, order: str = "C") -> Tracer:
        """A flattened copy (writable, and self stays writable: its value is reshaped, not self)."""
        own = IMPLEMENTATIONS["copy"]
        x, order = IMPLEMENTATIONS["in_memory_order"](self, order)
        return own(IMPLEMENTATIONS["reshape"](own(x), (-1,), order))

    def repeat(self, repeats: Any, axis: Any = None) -> Tracer:
        return IMPLEMENTATIONS["repeat"](self, repeats, axis)

    def take(self, indices: Any, axis: Any = None, out: Any = None, mode: str = "raise") -> Tracer:
        return IMPLEMENTATIONS["take"](self, indices, axis, out, mode)

    def view(self, dtype: Any = None, type: Any = None) -> Tracer:
        """ndarray.view: a view in self's own dtype, or its bytes read as another (tracing/bitviews.py)."""
        return IMPLEMENTATIONS["ndarray.view"](self, dtype, type)

    flat = property(lambda self: IMPLEMENTATIONS["flat"](self))

    def sort(self, axis: int = -1, kind: Any = None, order: Any = None, *, stable: Any = None) -> None:
        """ndarray.sort: self's elements sorted in place (a functional update of the array it is)."""
        self[...] = IMPLEMENTATIONS["sort"](self, axis, kind, order, stable=stable)

    def fill(self, value: Any) -> None:
        """ndarray.fill: every element set to `value` (cast as an assignment casts it)."""
        self[...] = value

    itemsize = property(lambda self: self.dtype.itemsize)
    nbytes = property(lambda self: self.dtype.itemsize * self.size)

    def squeeze(self, axis=None) -> Tracer:
        return IMPLEMENTATIONS["squeeze"](self, axis)

    def __getitem__(self, key: Any) -> Tracer:
        return IMPLEMENTATIONS["getitem"](self, key)


def known_value(t: Tracer) -> np.ndarray | None:
    """The value of a traced array made of constants alone (no argument among its ancestors: np.ones(3) / 3, a
    library's constant that went through a call site traced for another value): computed with NumPy where its ops
    allow (tracing/constants.py), else by the call's evaluator; None otherwise."""
    if any(n.op == "arg" for n in ancestors(t._node)):
        return None
    if (value := constant_value(t._node)) is not None:
        return value
    evaluate = EVALUATOR.get()
    return None if evaluate is None else np.asarray(evaluate(t._trace, t._node))


def ancestors(node: Node) -> list[Node]:
    return topological([node])


# --- lifting values into the trace --------------------------------------------------------------


def check_at_run_time(bad: Tracer, message: str, error: type[EgglogTensorError] = IndexOutOfBoundsError, of: str = "") -> None:
    """Make the call raise `error` with `message` when any element of `bad` is true (a flag output the call reads);
    the message names the arguments `bad` (`of`: what of it, e.g. "indices ") was computed from."""
    if not bad.size:
        return
    trace = bad._trace
    flag = bad._node if bad.ndim == 0 else trace.make("max", (bad._node,), (tuple(range(bad.ndim)),))
    names = sorted({a.attr("name") for a in ancestors(bad._node) if a.op == "arg"})
    trace.checks.append((flag, f"{message} ({of}computed from argument(s) {', '.join(names)})\n  at {user_location()}", error))


def trace_of(values: Sequence[Any]) -> Trace:
    for v in values:
        if isinstance(v, Tracer):
            return v._trace
        if isinstance(v, (list, tuple)):
            for w in v:
                if isinstance(w, Tracer):
                    return w._trace
    raise fail(TracingError, "no traced array among the arguments")


def dtype_key(v: Any) -> Any:
    """What NumPy's dtype resolution needs: a dtype, or the Python type of a weak scalar (int, float;
    a Python bool is plain bool: it is the lowest kind, and resolve_dtypes refuses the type)."""
    if isinstance(v, Tracer):
        return np.dtype(bool) if v._weak is bool else v._weak or v.dtype
    if type(v) is bool:
        return np.dtype(bool)
    if type(v) in (int, float):
        return type(v)
    if isinstance(v, (np.generic, np.ndarray)) and np.ndim(v) == 0:
        return np.asarray(v).dtype
    if isinstance(v, np.ndarray):
        return v.dtype
    if isinstance(v, (list, tuple)):
        return dtype_key(operand_array(v))
    raise fail(UnsupportedError, f"operand of type {type(v).__name__} is not supported")


def _is_public(func: Callable, module: Any) -> bool:
    """Whether `func` is `module`'s function of its name, or the one that function wraps (while tracing, np.zeros,
    np.mean & co. are wrappers of NumPy's: creation.py, sequences.py)."""
    public = getattr(module, func.__name__, None)
    return func in (public, getattr(public, "__wrapped__", None))


def first_tracer(value: Any) -> Tracer | None:
    """The first Tracer of value: itself, or in a (nested) list or tuple; None if it holds none."""
    if isinstance(value, Tracer):
        return value
    found = (first_tracer(v) for v in value) if isinstance(value, (list, tuple)) else ()
    return next((t for t in found if t is not None), None)


def operand_array(v: list | tuple) -> Tracer | np.ndarray:
    """A list or tuple operand as NumPy converts it (np.asarray): its traced values stacked, else a constant array."""
    if first_tracer(v) is not None:
        return IMPLEMENTATIONS["asarray"](v)
    array = np.asarray(v)
    if array.dtype.kind not in "biuf":
        raise fail(UnsupportedError, f"operand {type(v).__name__} of dtype {array.dtype} is not supported")
    return array


def lift(trace: Trace, v: Any, dtype: str) -> Node:
    """A Node of `dtype` for a tracer (cast if needed) or a Python/NumPy scalar (constant)."""
    if isinstance(v, Tracer):
        node = v._node
        return node if node.dtype == dtype else trace.make("astype", (node,), (dtype,))
    if isinstance(v, (list, tuple)):
        v = operand_array(v)
        if isinstance(v, Tracer):
            return lift(trace, v, dtype)
    if isinstance(v, np.ndarray) and v.ndim:
        return constant_array(trace, v, dtype)
    if isinstance(v, np.generic) or (isinstance(v, np.ndarray) and v.ndim == 0):
        v = v.item()
    return trace.const(v, dtype)


CONSTANT_LIMIT = 4096  # bytes of a captured NumPy array embedded in the module; larger: a hidden argument (docs/calling.md)


def constant_array(trace: Trace, v: np.ndarray, dtype: str) -> Node:
    """A NumPy array the kernel captured (a global, a closure): its contents as they are now (frozen:
    a later change is not seen), a constant of the module or, larger, a hidden argument holding a copy."""
    if v.dtype.name not in DTYPES or dtype not in DTYPES:
        raise fail(UnsupportedError, f"a captured NumPy array of dtype {v.dtype} is not supported (supported: {', '.join(DTYPES)})")
    if v.size * np.dtype(dtype).itemsize <= CONSTANT_LIMIT:
        data = np.ascontiguousarray(v.astype(dtype, copy=False)).tobytes().hex()
        return trace.make("array", (), (data, tuple(v.shape), dtype))
    if id(v) not in trace.captured:  # one hidden argument per array object, in the array's own dtype
        name = f"captured#{len(trace.captured)}"  # not an identifier: no parameter has this name
        node = trace.make("arg", (), (name, tuple(v.shape), v.dtype.name, "C"))
        trace.captured[id(v)] = (node, np.array(v, order="C"))
    node = trace.captured[id(v)][0]
    return node if node.dtype == dtype else trace.make("astype", (node,), (dtype,))


def result(trace: Trace, node: Node, weak: type | None = None, view: bool = False) -> Tracer:
    return Tracer(trace, node, weak, view)


def check_dtype(name: str, dtypes: Sequence[np.dtype], inputs: Sequence[Any]) -> None:
    for dt in dtypes:
        if dt.name not in DTYPES:
            raise fail(UnsupportedError, f"np.{name}({describe(inputs)}) needs dtype {dt}, which is not supported")




def astype(x: Any, dtype: str) -> Tracer:
    trace = trace_of([x])
    if dtype not in DTYPES:
        raise fail(UnsupportedError, f"astype({dtype}) is not supported (supported: {', '.join(DTYPES)})")
    return result(trace, lift(trace, x, dtype))


def dtype_name(dtype: Any) -> str:
    try:
        return (numpy_dtype(dtype) if isinstance(dtype, str) else np.dtype(dtype)).name  # ("bfloat16": ml_dtypes')
    except TypeError:
        raise fail(UnsupportedError, f"dtype {dtype!r} is not understood") from None
    except ImportError as e:
        raise fail(UnsupportedError, str(e)) from None


def as_tracer(trace: Trace, v: Any) -> Tracer:
    if isinstance(v, Tracer):
        return v
    key = dtype_key(v)
    dtype = np.dtype(key).name if not isinstance(key, type) else PYTHON_SCALARS[key]
    return result(trace, lift(trace, v, dtype), key if isinstance(key, type) else None)


def as_array(trace: Trace, v: Any) -> Tracer:
    """`v` as np.asarray reads it, in the trace: a Python number has its default dtype (not a weak scalar, as_tracer's)."""
    return as_tracer(trace, v if isinstance(v, Tracer) else np.asarray(v))


def traced_or_ndarray(x: Any, dtype: Any = None) -> Tracer | np.ndarray:
    """x as it is when traced (x.astype(dtype) when dtype is given), anything else np.asarray(x, dtype)."""
    if isinstance(x, Tracer):
        return x if dtype is None else x.astype(dtype)
    return np.asarray(x, dtype=dtype)


def normalize_axis(ndim: int, axis: int, what: str = "axis") -> int:
    if isinstance(axis, Tracer):
        raise axis._concrete(what)
    if not isinstance(axis, (int, np.integer)) or not -ndim <= axis < ndim:
        raise fail(TracingError, f"{what} {axis!r} is out of bounds for an array of dimension {ndim}")
    return int(axis) % ndim


def normalize_axes(ndim: int, axis: Any) -> tuple[int, ...]:
    if axis is None:
        return tuple(range(ndim))
    axes = tuple(normalize_axis(ndim, a) for a in (axis if isinstance(axis, (tuple, list)) else (axis,)))
    if len(set(axes)) != len(axes):
        raise fail(TracingError, f"repeated axis in {axis!r}")
    return tuple(sorted(axes))


def view(x: Tracer, op: str, attrs: tuple) -> Tracer:
    box = slice_box(box_of(x), x.shape, *attrs) if op == "slice" else None
    return derived(x, op, attrs, box)


Box = tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]  # start, step, size per dim of the base


def base_of(x: Tracer) -> Tracer:
    """The array x views, or x itself: the array writes into x rebind."""
    return x if x._base is None else x._base


def box_of(x: Tracer) -> Box | None:
    """Where x's elements are in its base: all of it for an array that is not a view (None: not a strided box)."""
    return x._box if x._base is not None else ((0,) * x.ndim, (1,) * x.ndim, x.shape)


def derived(x: Tracer, op: str, attrs: tuple, box: Box | None) -> Tracer:
    """A view of x (NumPy shares memory) by the view op `op`: its node is re-derived when x's base is updated in place."""
    base = base_of(x)
    out = Tracer(x._trace, x._trace.make(op, (x._node,), attrs), x._weak)
    out._base, out._steps, out._seen, out._box, out._frozen = base, x._steps + ((op, attrs),), base._own, box, x._frozen
    return out


def replayed(trace: Trace, node: Node, steps: tuple[tuple[str, tuple], ...]) -> Node:
    """`node` through the view ops `steps`."""
    for op, attrs in steps:
        node = trace.make(op, (node,), attrs)
    return node


def memory(x: Tracer) -> np.ndarray | None:
    """A stand-in for x's memory in NumPy (x's shape and its strides, over one byte: only its strides are read), where
    its base's order is known: C or F (an argument's layout, an array made, copied or computed in a known order), or any
    order of an array with at most one dim longer than 1; None where unknown (a strided argument, a ufunc's result of
    operands of mixed layouts, which NumPy lays out by their strides)."""
    base = base_of(x)
    order = own_order(base)
    if order is None:
        return None
    dims = base.shape if order == "C" else base.shape[::-1]
    strides = [math.prod(dims[i + 1:]) for i in range(len(dims))]
    stand_in = np.lib.stride_tricks.as_strided(np.zeros(1, np.uint8), base.shape, strides if order == "C" else strides[::-1])
    for op, attrs in x._steps:
        if op == "slice":
            stand_in = stand_in[tuple(python_slice(a, k, n) for a, k, n in zip(*attrs, strict=True))]
        elif op == "reshape":
            stand_in = np.reshape(stand_in, attrs[0], copy=False)
        elif op != "bitcast":  # (of the same itemsize: the same strides)
            stand_in = {"transpose": np.transpose, "broadcast_to": np.broadcast_to, "diagonal": np.diagonal}[op](stand_in, *attrs)
    return stand_in


def any_order(shape: tuple[int, ...]) -> bool:
    """Whether an array of `shape` is laid out alike in every order (at most one dim longer than 1: C and F both)."""
    return sum(d != 1 for d in shape) <= 1


def own_order(base: Tracer) -> str | None:
    """The memory order of an array of its own (no view): its known one, C for one of `any_order`, else None."""
    return base._order or ("C" if any_order(base.shape) else None)


def memory_order(x: Tracer | np.ndarray, order: str = "K") -> str | None:
    """The memory order NumPy gives a new array made from x in `order` ("C", "F", or "K"/"A": x's own where it is
    contiguous, else unknown: None)."""
    if order in ("C", "F"):
        return order
    if isinstance(x, Tracer) and x._base is None:  # (no stand-in needed: ufuncs ask this of every operand)
        return own_order(x)
    stand_in = memory(x) if isinstance(x, Tracer) else x if isinstance(x, np.ndarray) else None
    return None if stand_in is None else "C" if stand_in.flags.c_contiguous else "F" if stand_in.flags.f_contiguous else None


def python_slice(start: int, step: int, size: int) -> slice:
    """The Python slice of `size` elements from `start` by `step` (a slice op's attributes of one dim)."""
    stop = start + step * size
    return slice(start, stop if stop >= 0 else None, step) if size else slice(0, 0)


def slice_box(box: Box | None, shape: tuple[int, ...], start: tuple, step: tuple, size: tuple) -> Box | None:
    """The box of x[slices] in x's base, from x's box (whose size x's shape is a unit reshape of)."""
    if box is None or 0 in size:
        return None if box is None else ((0,) * len(box[0]), (1,) * len(box[0]), (0,) * len(box[0]))
    b_start, b_step, b_size = (list(b) for b in box)
    mine = [d for d, n in enumerate(b_size) if n != 1]
    for d, k in zip(mine, (d for d, n in enumerate(shape) if n != 1), strict=True):
        b_start[d] += b_step[d] * start[k]
        b_step[d] *= step[k]
        b_size[d] = size[k]
    return tuple(b_start), tuple(b_step), tuple(b_size)


