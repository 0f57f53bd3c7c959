"""Arrays made inside a kernel: np.zeros, ones, full, empty (and their `_like` forms), arange,
linspace, eye, identity, tri, triu, tril and diag, with NumPy's values and dtypes.

None of them is ever stored unless the optimizer chooses to: a filled array is a constant broadcast
to its shape, and the others are elementwise functions of `iota`, the op giving each element its
index along one axis (computed in the loop body that reads it), so `x + np.arange(n)` is one loop.

`np.zeros(3)` has no traced argument, so NumPy never hands it to the Tracer: while a kernel is
traced, the NumPy functions in CREATORS are replaced in the `numpy` module by wrappers that return
traced arrays when called from user code in the thread that traces, and call NumPy's own function
everywhere else (other threads, NumPy's and this package's own code). Compiled code has no Python frame,
so a call from it seems to come from the user line that called into it (`np.random.default_rng(0)`,
whose Cython code calls np.zeros): a call counts as the user's only if the call expression running in
the user's frame names the wrapper itself (looked up without running code), or cannot be resolved. The wrappers are installed
while any thread traces and removed after the last one finishes. A name bound before tracing
(`from numpy import zeros`) is NumPy's own function: `zeros(3, like=x)` reaches the Tracer anyway.
"""

from __future__ import annotations

import ast
import builtins
import contextlib
import functools
import inspect
import linecache
import math
import operator
import sys
import sysconfig
import threading
import weakref
from collections.abc import Callable, Iterator
from types import FrameType
from typing import Any

import numpy as np

from ..errors import TracingError, UnsupportedError
from ..graph import DTYPES
from .core import IMPLEMENTATIONS, Trace, Tracer, as_tracer, dtype_name, fail, first_tracer, implements, is_user_code, lift, memory_order, result
from .shapes import concatenate, diagonal, reshape
from .ufuncs import where

CREATORS = ("zeros", "ones", "empty", "full", "arange", "linspace", "eye", "identity", "tri")
_NUMPY = {name: getattr(np, name) for name in CREATORS}  # NumPy's own functions
_NDARRAY = np.ndarray  # (np.ndarray itself is replaced while tracing: conversions.py)
_STATE = threading.local()  # .traces: the traces this thread is running, innermost last
_LOCK = threading.Lock()
_tracing_threads = 0  # how many traces run in all threads (the wrappers are installed while > 0)


# --- the traces in progress -----------------------------------------------------------------------
def _wrap(name: str) -> Callable[..., Any]:
    """np.<name> as seen while tracing: traced when user code of a tracing thread calls it."""
    numpy_fn = _NUMPY[name]

    @functools.wraps(numpy_fn)
    def creator(*args: Any, **kwargs: Any) -> Any:
        frame = sys._getframe(1)
        if not called_by_user(frame, creator):
            return numpy_fn(*args, **kwargs)
        site = (frame.f_code, frame.f_lasti)
        if name in CREATORS:  # (a library's small array of constants: NumPy's, its shape bookkeeping stays concrete)
            if not in_library(frame.f_code.co_filename) or site in _STATE.sites or _traced(args, kwargs):
                return IMPLEMENTATIONS[name](*args, **kwargs)
            made = numpy_fn(*args, **kwargs)
            if type(made) is not _NDARRAY or made.size > LIBRARY_CONSTANTS:
                return IMPLEMENTATIONS[name](*args, **kwargs)
        else:  # np.asarray & co.: NumPy's array of what holds no traced value
            made = IMPLEMENTATIONS[name](*args, **kwargs)
            if type(made) is not _NDARRAY:
                return made
        if site in _STATE.sites:
            return as_tracer(_current(name), made)
        _STATE.made[id(made)] = (weakref.ref(made), site)
        return made

    return creator


# NumPy arrays of constants made while tracing: np.asarray & co. of values holding no traced array give NumPy's
# arrays (user code's too), and so do an installed library's np.zeros & co. with constant arguments (SciPy's,
# scikit-learn's: library code computes shapes and axes with such arrays, scipy.stats' np.ones((n, ndim), dtype=int)
# of shapes, np.insert into it, which must stay concrete). If one (or a view of one) is then indexed with a traced
# index or a traced value is written into it (`lut[idx]`, a buffer the library fills), `concrete_array_used` stops
# the trace, and it runs again with that call site making a traced array (`_STATE.sites`).
_LIBRARIES = tuple(sysconfig.get_paths()[k] for k in ("purelib", "platlib"))
MAX_SITES = 32  # call sites traced at most per trace (each one more run of it)
LIBRARY_CONSTANTS = 256  # elements of a library's array made concrete at most (a larger one is a buffer: traced)


class ConcreteArrayUsed(Exception):
    """An array of constants made while tracing was indexed with, or given, a traced value: trace again with its
    call site traced."""

    def __init__(self, site: tuple[Any, int]) -> None:
        super().__init__("an array of constants indexed with or given a traced value")
        self.site = site


def in_library(filename: str) -> bool:
    """Whether `filename` is an installed library's code (site-packages: SciPy's, scikit-learn's)."""
    return filename.startswith(_LIBRARIES)


def _traced(args: tuple, kwargs: dict) -> bool:
    return any(isinstance(v, Tracer) for v in (*args, *kwargs.values()))


@implements("array.made")
def concrete_array_used(tracer: Tracer) -> None:
    """Raise ConcreteArrayUsed if `tracer` is being converted because the subscript the caller's frame runs reads
    (`made[tracer]`) or writes (`made[i] = tracer`) an array (or a view of one) of constants made while tracing."""
    frame = sys._getframe(2)
    expr = running_expression(frame) if is_user_code(frame.f_code.co_filename) else None
    if not isinstance(expr, ast.Subscript):
        return
    try:
        array = resolve(frame, expr.value)
    except (KeyError, AttributeError, IndexError, TypeError):
        return
    made = getattr(_STATE, "made", {})
    while isinstance(array, _NDARRAY):
        ref, site = made.get(id(array), (None, None))
        if ref is not None and ref() is array and len(_STATE.sites) < MAX_SITES:
            raise ConcreteArrayUsed(site)
        array = array.base


def called_by_user(frame: FrameType, fn: Any) -> bool:
    """Whether `fn`, called from `frame`, was called by the user's code in a thread that traces."""
    return bool(getattr(_STATE, "traces", None)) and is_user_code(frame.f_code.co_filename) and _may_call(frame, fn)


@functools.lru_cache(maxsize=64)
def _expressions(source: str) -> dict[tuple[int, int, int, int], ast.expr]:
    """Each call and subscript in `source`, by its position (lines and byte columns): the spans an
    instruction running it carries (a call's and a subscript's spans never coincide)."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return {}
    return {(n.lineno, n.end_lineno or n.lineno, n.col_offset, n.end_col_offset or 0): n
            for n in ast.walk(tree) if isinstance(n, (ast.Call, ast.Subscript))}


def running_expression(frame: FrameType) -> ast.expr | None:
    """The call or subscript expression `frame` is running, if its source can be read."""
    positions = list(frame.f_code.co_positions())
    index = frame.f_lasti // 2
    if not 0 <= index < len(positions) or None in positions[index]:
        return None
    return _expressions("".join(linecache.getlines(frame.f_code.co_filename))).get(positions[index])  # type: ignore[arg-type]


def resolve(frame: FrameType, expr: ast.expr) -> Any:
    """The object a name, attribute chain or constant subscript of a dict, list or tuple (`params["wte"]`)
    in `frame` denotes, found without running code (KeyError/AttributeError/IndexError if it cannot be)."""
    if isinstance(expr, ast.Name):
        for scope in (frame.f_locals, frame.f_globals, vars(builtins)):
            if expr.id in scope:
                return scope[expr.id]
        raise KeyError(expr.id)
    if isinstance(expr, ast.Attribute):
        return inspect.getattr_static(resolve(frame, expr.value), expr.attr)
    if isinstance(expr, ast.Subscript) and isinstance(expr.slice, ast.Constant):
        container = resolve(frame, expr.value)
        if type(container) in (dict, list, tuple):
            return container[expr.slice.value]
    raise KeyError(type(expr).__name__)


def _may_call(frame: FrameType, fn: Any) -> bool:
    """Whether the call `frame` is running may be a call of `fn` itself: False when its callee resolves to
    another function (which called `fn` from compiled code, e.g. NumPy's Cython internals), or is a method of an
    object made in the same expression, named otherwise (`np.random.default_rng(0).standard_normal(5)`: the
    Generator's Cython code calls np.empty, and a traced array handed to it crashes the process)."""
    call = running_expression(frame)
    try:
        return not isinstance(call, ast.Call) or resolve(frame, call.func) is fn
    except (KeyError, AttributeError, IndexError, TypeError):
        return not isinstance(call.func, ast.Attribute) or call.func.attr == getattr(fn, "__name__", call.func.attr)


_WRAPPERS: dict[str, Any] = {name: _wrap(name) for name in CREATORS}


def replace_while_tracing(name: str, replacement: Any = None) -> None:
    """Make np.<name> (a dotted name: in a submodule, "random.rand") `replacement` (default: traced when user code
    calls it) while any thread traces, as the creators are (conversions.py: np.asarray, np.float32...)."""
    module, attr = _owner(name)
    _NUMPY[name] = getattr(module, attr)
    _WRAPPERS[name] = _wrap(name) if replacement is None else replacement


_FOREIGN: dict[str, Callable[[Any], Any]] = {}  # "module:Owner.attr" -> its replacement made of the original


def replace_foreign_while_tracing(name: str, make: Callable[[Any], Any]) -> None:
    """Make the attribute `name` ("module:Owner.attr", of a library this package never imports: SciPy's) `make(original)`
    while any thread traces, from the first trace that starts after the user imported that module."""
    _FOREIGN[name] = make


def traced_or_original(ours: Callable[..., Any]) -> Callable[[Any], Any]:
    """For replace_foreign_while_tracing: the replacement of a library's function (or method) that runs `ours` when an
    argument holds a traced array, the library's own otherwise."""
    def make(original: Any) -> Any:
        @functools.wraps(original)
        def function(*args: Any, **kwargs: Any) -> Any:
            if first_tracer(args) is None and first_tracer(tuple(kwargs.values())) is None:
                return original(*args, **kwargs)
            return ours(*args, **kwargs)
        return function
    return make


def replacement(name: str) -> Any:
    """What np.<name> is while tracing (for a library's own binding of it: `from numpy import asarray`)."""
    return _WRAPPERS[name]


def _owner(name: str) -> tuple[Any, str]:
    """The module (or class) holding np.<name> (or "module:Owner.attr") and the attribute's name in it."""
    module, _, path = name.rpartition(":")
    space, _, attr = path.rpartition(".")
    owner = sys.modules[module] if module else np
    return functools.reduce(getattr, space.split(".") if space else (), owner), attr


def _install(delta: int) -> None:
    """Count a trace starting (+1) or ending (-1) in any thread; install or remove the wrappers."""
    global _tracing_threads
    with _LOCK:
        _tracing_threads += delta
        for name in [n for n in _FOREIGN if n.partition(":")[0] in sys.modules]:
            module, attr = _owner(name)
            _NUMPY[name] = getattr(module, attr)
            _WRAPPERS[name] = _FOREIGN.pop(name)(_NUMPY[name])
        for name, wrapper in _WRAPPERS.items():
            module, attr = _owner(name)
            if _tracing_threads and getattr(module, attr) is _NUMPY[name]:
                setattr(module, attr, wrapper)
            elif not _tracing_threads and getattr(module, attr) is wrapper:
                setattr(module, attr, _NUMPY[name])


def _drawn_while_tracing(name: str) -> Any:
    """np.random.<name> in a kernel: an UnsupportedError (its values would be drawn once, while tracing, and be
    the same at every call); NumPy's own in a thread that is not tracing, and `default_rng(seed)` with a seed
    (its draws are the same at every call in NumPy too: a constant of the kernel)."""
    def refuse(*args: Any, **kwargs: Any) -> Any:
        seeded = name == "default_rng" and (args or kwargs) and (args[0] if args else kwargs.get("seed")) is not None
        if seeded or not getattr(_STATE, "traces", None):
            return _NUMPY[f"random.{name}"](*args, **kwargs)
        raise fail(UnsupportedError, f"np.random.{name} in a kernel is not supported: its values would be drawn once, "
                                     "while tracing, and be the same at every call; draw them outside the kernel and "
                                     "pass them as an argument (or use np.random.default_rng(seed): a constant)")
    return refuse


for _name in ("rand", "randn", "random", "random_sample", "ranf", "sample", "uniform", "normal", "standard_normal",
              "randint", "random_integers", "choice", "permutation", "shuffle", "binomial", "poisson", "exponential",
              "gamma", "beta", "default_rng"):
    replace_while_tracing(f"random.{_name}", _drawn_while_tracing(_name))


_REPLACED: list[Any] = [0, {}, {}]  # [len(_WRAPPERS) when made, id(original function) -> its replacement, the same of
# the libraries' functions alone (replace_foreign_while_tracing's "module:attr")]


def _replaced_functions(foreign: bool = False) -> dict[int, Any]:
    """id of each replaced function (not type) -> its replacement, or with `foreign` of the libraries' functions alone
    (not NumPy's); remade only when a replacement was added."""
    with _LOCK:
        if _REPLACED[0] != len(_WRAPPERS):
            functions = [(name, wrapper) for name, wrapper in _WRAPPERS.items() if name in _NUMPY and not isinstance(_NUMPY[name], type)]
            _REPLACED[:] = (len(_WRAPPERS), {id(_NUMPY[name]): wrapper for name, wrapper in functions},
                            {id(_NUMPY[name]): wrapper for name, wrapper in functions if ":" in name})
        return _REPLACED[2 if foreign else 1]


def replaced(fn: Callable[..., Any]) -> Callable[..., Any]:
    """What `fn` is while tracing: its replacement when it is a library's function replaced while tracing (a kernel
    of scipy.linalg.expm itself), else `fn` (each function it wraps, `__wrapped__`, looked up in turn; NumPy's own
    dispatch to the tracer's functions)."""
    table = _replaced_functions(foreign=True)
    inner = fn
    while inner is not None and id(inner) not in table:
        inner = getattr(inner, "__wrapped__", None)
    return fn if inner is None else table[id(inner)]


@contextlib.contextmanager
def rebound(fn: Callable[..., Any]) -> Iterator[None]:
    """While tracing `fn`: the names of its module's globals and of its closure that hold a function replaced while
    tracing (bound before the trace: `from numpy import zeros`, `from scipy.linalg import solve`) hold the replacement;
    they hold the function again when the trace ends. (Other modules' bindings keep theirs; so do names holding NumPy's
    types, np.ndarray or np.float32, which code compares by identity: only the module's own np.ndarray is replaced.)"""
    replaced = _replaced_functions()
    fn = inspect.unwrap(fn)  # (the kernel's own call wrapper, functools.wraps: the user's function)
    namespace = getattr(fn, "__globals__", {})
    names = [k for k, v in namespace.items() if id(v) in replaced and callable(v)]
    cells = [c for c in getattr(fn, "__closure__", None) or () if _filled(c) and id(c.cell_contents) in replaced]
    saved = [namespace[k] for k in names], [c.cell_contents for c in cells]
    for k in names:
        namespace[k] = replaced[id(namespace[k])]
    for c in cells:
        c.cell_contents = replaced[id(c.cell_contents)]
    try:
        yield
    finally:
        for k, v in zip(names, saved[0], strict=True):
            namespace[k] = v
        for c, v in zip(cells, saved[1], strict=True):
            c.cell_contents = v


def _filled(cell: Any) -> bool:
    try:
        cell.cell_contents
    except ValueError:  # (an empty cell)
        return False
    return True


@contextlib.contextmanager
def tracing(trace: Trace, sites: frozenset = frozenset()) -> Iterator[None]:
    """Make `trace` the one that NumPy's creation functions called in this thread add to; at the call
    `sites` they make traced arrays (ConcreteArrayUsed)."""
    traces = _STATE.__dict__.setdefault("traces", [])
    saved = getattr(_STATE, "sites", frozenset()), getattr(_STATE, "made", {})
    traces.append(trace)
    _STATE.sites, _STATE.made = sites, {}
    _install(+1)
    try:
        yield
    finally:
        _install(-1)
        traces.pop()
        _STATE.sites, _STATE.made = saved


def _current(name: str) -> Trace:
    """The trace this thread runs (the innermost)."""
    traces = getattr(_STATE, "traces", None)
    if not traces:
        raise fail(TracingError, f"np.{name} made a traced array outside a kernel's trace")
    return traces[-1]


# --- shared pieces ---------------------------------------------------------------------------------
def _size(name: str, value: Any) -> int:
    """A size or offset as a Python int (operator.index; of a traced 0-d value, a guard: tracing/core.py)."""
    try:
        return value._taken(f"np.{name}: a size or offset", "index") if isinstance(value, Tracer) else operator.index(value)
    except TypeError:
        raise fail(TracingError, f"np.{name}: {type(value).__name__} {value!r} is not an integer size") from None


def _shape(name: str, shape: Any) -> tuple[int, ...]:
    """A shape (an int or a sequence of them) as NumPy takes it: non-negative Python ints."""
    dims = tuple(_size(name, d) for d in (shape if isinstance(shape, (tuple, list)) else (shape,)))
    if any(d < 0 for d in dims):
        raise fail(TracingError, f"np.{name}: negative dimensions are not allowed (shape {dims})")
    return dims


def _dtype(name: str, dtype: Any, default: str) -> str:
    """The name of `dtype` (None: `default`), which the compiler must support."""
    dt = default if dtype is None else dtype_name(dtype)
    if dt not in DTYPES:
        raise fail(UnsupportedError, f"np.{name}: dtype {dt} is not supported (supported: {', '.join(DTYPES)})")
    return dt


def _scalar(name: str, value: Any, dtype: str) -> Any:
    """A Python number as NumPy stores it into an array of `dtype` (np.full's unsafe cast), as a Python value."""
    stored = np.empty((), dtype)
    try:
        np.copyto(stored, value, casting="unsafe")
    except (OverflowError, TypeError, ValueError) as e:
        raise fail(TracingError, f"np.{name}: {e}") from None
    return stored.item()


def _fill(name: str, trace: Trace, shape: tuple[int, ...], value: Any, dtype: str) -> Tracer:
    """`value` (a number, or a traced array that broadcasts to `shape`) cast to `dtype` and broadcast to
    `shape`: an array the kernel owns (not a view: in-place updates may rebind it)."""
    if not isinstance(value, Tracer) and np.ndim(value):
        raise fail(UnsupportedError, f"np.{name}: a fill value that is a list or NumPy array is not supported; "
                                     "pass it as a kernel argument")
    if isinstance(value, Tracer):
        node = lift(trace, value, dtype)
        if len(node.shape) > len(shape) or any(d not in (1, s) for d, s in zip(node.shape[::-1], shape[::-1])):
            raise fail(TracingError, f"np.{name}: a fill value of shape {node.shape} does not broadcast to {shape}")
    else:
        node = trace.const(_scalar(name, value, dtype), dtype)
    return result(trace, node if node.shape == shape else trace.make("broadcast_to", (node,), (shape,)))


def iota(trace: Trace, shape: tuple[int, ...], axis: int, dtype: str = "int64") -> Tracer:
    """The array of `shape` whose elements are their index along `axis`, as `dtype`."""
    return result(trace, trace.make("iota", (), (shape, axis, dtype)))


def _offsets(trace: Trace, rows: int, cols: int) -> Tracer:
    """j - i at each (i, j) of a rows x cols matrix: which diagonal each element is on."""
    return iota(trace, (rows, cols), 1) - iota(trace, (rows, cols), 0)


def _clamp(k: int, rows: int, cols: int) -> int:
    """A diagonal offset clamped to [-rows, cols]: the same elements lie on either side of it."""
    return max(-rows, min(k, cols))


# --- filled arrays -------------------------------------------------------------------------------------
@implements("zeros", "empty")
def zeros(shape: Any, dtype: Any = None, order: str = "C", *, device: Any = None, like: Any = None) -> Tracer:
    """np.zeros; np.empty is zeros too (its contents are unspecified: zeros are a valid choice, and free)."""
    return ordered(_fill("zeros", _current("zeros"), _shape("zeros", shape), 0, _dtype("zeros", dtype, "float64")), order)


@implements("ones")
def ones(shape: Any, dtype: Any = None, order: str = "C", *, device: Any = None, like: Any = None) -> Tracer:
    """np.ones: a constant 1 broadcast to `shape`."""
    return ordered(_fill("ones", _current("ones"), _shape("ones", shape), 1, _dtype("ones", dtype, "float64")), order)


def _value_dtype(value: Any) -> np.dtype:
    """The dtype NumPy gives an array of `value` (np.full's default)."""
    return value.dtype if isinstance(value, Tracer) else np.asarray(value).dtype


@implements("full")
def full(shape: Any, fill_value: Any, dtype: Any = None, order: str = "C", *, device: Any = None, like: Any = None) -> Tracer:
    """np.full: fill_value (a number or a traced array) cast to the dtype and broadcast to `shape`."""
    dt = _dtype("full", dtype, _value_dtype(fill_value).name)
    return ordered(_fill("full", _current("full"), _shape("full", shape), fill_value, dt), order)


def ordered(x: Tracer, order: str | None) -> Tracer:
    """x, a new array, laid out in `order` in NumPy ("C", "F"; None: unknown; "A" and "K" of no array: C), which
    decides whether NumPy's reshape of it is a view (tracing/shapes.py)."""
    x._order = "C" if order in ("A", "K") else order
    return x


def _like(name: str, a: Any, fill_value: Any, dtype: Any, shape: Any, order: str) -> Tracer:
    """An array filled with `fill_value`, of a's dtype and shape unless `dtype` or `shape` say otherwise, laid out as
    NumPy's `order` makes it (K: as a, if a is contiguous)."""
    dt = _dtype(name, dtype, _value_dtype(a).name)
    if shape is not None:
        return ordered(_fill(name, _current(name), _shape(name, shape), fill_value, dt), order)
    return ordered(_fill(name, _current(name), np.shape(a), fill_value, dt), memory_order(a, order))


@implements("zeros_like", "empty_like")
def zeros_like(a: Any, dtype: Any = None, order: str = "K", subok: bool = True, shape: Any = None, *, device: Any = None) -> Tracer:
    """np.zeros_like; np.empty_like is zeros too (as np.empty)."""
    return _like("zeros_like", a, 0, dtype, shape, order)


@implements("ones_like")
def ones_like(a: Any, dtype: Any = None, order: str = "K", subok: bool = True, shape: Any = None, *, device: Any = None) -> Tracer:
    """np.ones_like."""
    return _like("ones_like", a, 1, dtype, shape, order)


@implements("full_like")
def full_like(a: Any, fill_value: Any, dtype: Any = None, order: str = "K", subok: bool = True, shape: Any = None,
              *, device: Any = None) -> Tracer:
    """np.full_like: fill_value cast to a's dtype (or `dtype`), as NumPy's unsafe copy does."""
    return _like("full_like", a, fill_value, dtype, shape, order)


# --- ranges ---------------------------------------------------------------------------------------------
def _arange_length(start: Any, stop: Any, step: Any) -> int:
    """NumPy's length of arange(start, stop, step): ceil((stop - start) / step) in Python arithmetic, at least 0."""
    try:
        ratio = float((stop - start) / step)
    except ZeroDivisionError:
        raise fail(TracingError, "np.arange: step is zero (division by zero)") from None
    if math.isnan(ratio):
        raise fail(TracingError, "np.arange: cannot compute length")
    if ratio > sys.maxsize:
        raise fail(TracingError, "np.arange: maximum allowed size exceeded")
    return max(0, math.ceil(ratio))


def _bits(value: np.generic) -> bytes:
    """A scalar's bytes: equal values bit for bit (signed zeros and NaNs told apart)."""
    return np.asarray(value).tobytes()


@implements("arange")
def arange(start: Any = None, stop: Any = None, step: Any = None, dtype: Any = None, *, device: Any = None,
           like: Any = None) -> Tracer:
    """np.arange as NumPy computes it: the first two values stored as given (start, start + step),
    the rest start + i * delta in the dtype, delta the difference of the first two."""
    trace = _current("arange")
    if start is None and stop is None:
        raise fail(TracingError, "np.arange() requires stop to be specified")
    start, stop = (0, start) if stop is None else (0 if start is None else start, stop)
    step = 1 if step is None else step
    start, stop, step = (v.item() if isinstance(v, Tracer) else v for v in (start, stop, step))  # (a traced value: a guard)
    n = _arange_length(start, stop, step)
    dt = _dtype("arange", dtype, np.result_type(np.intp, *(np.asarray(v).dtype for v in (start, stop, step))).name)
    if dt == "bool" and n > 2:
        raise fail(TracingError, f"np.arange: no fill-function for data-type bool (length {n} > 2)")
    stored = np.zeros(min(n, 2), dt)  # NumPy's own stores (and casts) of the first two values
    if n:
        stored[0] = start
    if n > 1:
        stored[1] = start + step
    at = iota(trace, (n,), 0)
    if n <= 2:
        return where(at == 0, stored[0], stored[-1]) if n else result(trace, lift(trace, at, dt))
    first, second = stored
    with np.errstate(all="ignore"):
        delta = second - first
        values = iota(trace, (n,), 0, dt)
        if delta != 1 or _bits(first) != _bits(np.zeros((), dt)):  # (else start + i * delta is i itself)
            values = first + values * delta
        for i, value in ((0, first), (1, second)):  # where start + i * delta is not the stored value
            if _bits(first + np.dtype(dt).type(i) * delta) != _bits(value):
                values = where(at == i, value, values)
    return values


@implements("linspace")
def linspace(start: Any, stop: Any, num: Any = 50, endpoint: bool = True, retstep: bool = False, dtype: Any = None,
             axis: int = 0, *, device: Any = None) -> Any:
    """np.linspace by NumPy's formula: i * step + start (i / div * delta when any step underflows to 0), the last
    point `stop` itself when `endpoint`; start and stop numbers or arrays (traced too: one line per element, along `axis`)."""
    start, stop = (v if isinstance(v, Tracer) or not np.ndim(v) else np.asarray(v) for v in (start, stop))
    traced = [v for v in (start, stop) if isinstance(v, Tracer)]
    trace = traced[0]._trace if traced else _current("linspace")
    num = _size("linspace", num)
    if num < 0:
        raise fail(TracingError, f"np.linspace: number of samples, {num}, must be non-negative")
    shape = np.broadcast_shapes(*(np.shape(v) if not isinstance(v, Tracer) else v.shape for v in (start, stop)))
    if not -len(shape) - 1 <= axis <= len(shape):
        raise fail(TracingError, f"np.linspace: axis {axis} is out of bounds for an array of dimension {len(shape) + 1}")
    if traced or shape:
        dt = np.dtype(_dtype("linspace", np.result_type(start, stop, 1.0), ""))  # NumPy's computation dtype (inexact)
    else:
        dt = np.dtype(_dtype("linspace", _NUMPY["linspace"](start, stop, 0).dtype, ""))
    out = _dtype("linspace", dtype, dt.name)
    div = num - 1 if endpoint else num
    with np.errstate(all="ignore"):
        if traced:
            delta = np.subtract(*(v.astype(dt.name) if isinstance(v, Tracer) else np.asarray(v, dt) for v in (stop, start)))
        else:
            delta = np.subtract(stop, start, dtype=dt.type)
        y = iota(trace, (num,) + (1,) * len(shape), 0, dt.name)
        step = delta / div if div > 0 else np.nan
        if div <= 0:
            y = y * delta
        elif isinstance(step, Tracer):  # NumPy's way when any step is denormal, else i * step
            y = where(np.any(step == 0), y / div * delta, y * step)
        else:
            y = y / div * delta if np.any(step == 0) else y * step
        y = (y + start).astype(dt)
        if endpoint and num > 1:
            last = stop.astype(dt.name) if isinstance(stop, Tracer) else np.asarray(stop).astype(dt) if shape else dt.type(_scalar("linspace", stop, dt.name))
            y = where(iota(trace, y.shape, 0) == num - 1, last, y)
    if axis not in (0, -len(shape) - 1):
        y = np.moveaxis(y, 0, axis)
    if np.issubdtype(out, np.integer):
        y = np.floor(y)
    y = result(trace, lift(trace, y, out))
    return (y, step) if retstep else y


# --- matrices ---------------------------------------------------------------------------------------------
def _tri_sizes(name: str, N: Any, M: Any, k: Any) -> tuple[int, int, int]:
    """Rows, columns (M, else N) and the clamped diagonal offset of an eye or tri."""
    rows = _size(name, N)
    cols = rows if M is None else _size(name, M)
    if rows < 0 or cols < 0:
        raise fail(TracingError, f"np.{name}: negative dimensions are not allowed ({rows}, {cols})")
    return rows, cols, _clamp(_size(name, k), rows, cols)


@implements("eye")
def eye(N: Any, M: Any = None, k: Any = 0, dtype: Any = float, order: str = "C", *, device: Any = None, like: Any = None) -> Tracer:
    """Ones on diagonal k (j - i == k), zeros elsewhere."""
    rows, cols, k = _tri_sizes("eye", N, M, k)
    trace = _current("eye")
    return result(trace, lift(trace, _offsets(trace, rows, cols) == k, _dtype("eye", dtype, "float64")))


@implements("identity")
def identity(n: Any, dtype: Any = None, *, like: Any = None) -> Tracer:
    """np.identity: np.eye(n)."""
    return eye(n, dtype=dtype)


@implements("tri")
def tri(N: Any, M: Any = None, k: Any = 0, dtype: Any = float, *, like: Any = None) -> Tracer:
    """Ones on and below diagonal k (j - i <= k), zeros above."""
    rows, cols, k = _tri_sizes("tri", N, M, k)
    trace = _current("tri")
    return result(trace, lift(trace, _offsets(trace, rows, cols) <= k, _dtype("tri", dtype, "float64")))


def _triangle(name: str, m: Any, k: Any, lower: bool) -> Tracer:
    """m with the elements above diagonal k (lower) or below it (upper) zeroed, over its last two axes."""
    if not isinstance(m, Tracer) or m.ndim == 0:
        raise fail(TracingError, f"np.{name}: needs an array of at least one dimension")
    mask = tri(*m.shape[-2:], k=_size(name, k) - (0 if lower else 1), dtype=bool)
    zero = m.dtype.type(0)
    return where(mask, m, zero) if lower else where(mask, zero, m)


@implements("tril")
def tril(m: Any, k: Any = 0) -> Tracer:
    """np.tril: where(tri(k), m, 0) over the last two axes (a 1-D m is broadcast to a square first)."""
    return _triangle("tril", m, k, lower=True)


@implements("triu")
def triu(m: Any, k: Any = 0) -> Tracer:
    """np.triu: where(tri(k - 1), 0, m) over the last two axes."""
    return _triangle("triu", m, k, lower=False)


@implements("diag")
def diag(v: Any, k: Any = 0) -> Tracer:
    """A 1-D v on diagonal k of a square matrix (each element reads v by its row, or by its column
    below the main diagonal, from v padded with |k| zeros); a 2-D v's diagonal k (a view)."""
    k = _size("diag", k)
    if not isinstance(v, Tracer) or v.ndim not in (1, 2):
        raise fail(TracingError, "np.diag: input must be 1- or 2-d")
    if v.ndim == 2:
        return diagonal(v, k)
    trace, n = v._trace, v.shape[0] + abs(k)
    zero = v.dtype.type(0)
    padded = concatenate([v, zeros(abs(k), v.dtype)]) if k else v
    along = reshape(padded, (n, 1) if k >= 0 else (1, n))
    return where(_offsets(trace, n, n) == k, along, zero)


@implements("diagflat")
def diagflat(v: Any, k: Any = 0) -> Tracer:
    """np.diagflat: v flattened, on diagonal k of a square matrix."""
    return diag(reshape(v, (-1,)), k)
