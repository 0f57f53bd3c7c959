"""Tracing: run the user's NumPy function on Tracer objects and record a typed Node DAG.

Tracers take part in NumPy's own dispatch (`__array_ufunc__`, `__array_function__`) and Python
operators, so the user's code stays plain `import numpy as np` code. Dtypes follow NumPy's own
resolution (`ufunc.resolve_dtypes`, NEP 50 weak Python scalars), shapes its broadcasting rules.
"""

from __future__ import annotations

import functools
import inspect
import math
import os
import sys
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .errors import EgglogTensorError, OutOfBoundsError, TracingError, UnsupportedError
from .graph import DTYPES, FLOAT_DTYPES, Builder, Node, topological
from .ops import BINARY, PREDICATES, UNARY, is_unit_reshape, supports
from .spec import PYTHON_SCALARS, ArgSpec

_WEAK_OF = {dtype: kind for kind, dtype in PYTHON_SCALARS.items()}  # a result dtype -> the Python type it stays weak as

_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))
_NUMPY_DIR = os.path.dirname(np.__file__)
_UFUNC_OPS = {"true_divide": "divide", "radians": "deg2rad", "degrees": "rad2deg"}


def user_location() -> str:
    """'file:line: code' of the innermost frame that is user code (not this package, not NumPy)."""
    frame = sys._getframe(1)
    while frame is not None:
        path = os.path.abspath(frame.f_code.co_filename)
        if not path.startswith((_PACKAGE_DIR, _NUMPY_DIR)) and "<__array_function__" not in path:
            info = inspect.getframeinfo(frame, context=1)
            code = info.code_context[0].strip() if info.code_context else ""
            return f"{info.filename}:{info.lineno}: {code}"
        frame = frame.f_back
    return "<unknown location>"


def _fail(cls: type[EgglogTensorError], message: str) -> EgglogTensorError:
    return cls(f"{message}\n  at {user_location()}")


def _describe(args: Sequence[Any]) -> str:
    parts = []
    for a in args:
        if isinstance(a, Tracer):
            parts.append(f"tracer {a.dtype}{list(a.shape)}")
        else:
            parts.append(type(a).__name__)
    return ", ".join(parts)


@dataclass
class Trace:
    """State of one tracing run: the node builder and the argument nodes by name."""

    builder: Builder
    arg_names: tuple[str, ...]

    def make(self, op: str, inputs: tuple[Node, ...] = (), attrs: tuple = ()) -> Node:
        try:
            return self.builder.make(op, inputs, attrs)
        except TracingError as e:
            message = str(e) if str(e).startswith(op) else f"{op}: {e}"
            raise _fail(TracingError, message) from None

    def const(self, value: object, dtype: str) -> Node:
        """A 0-d constant of `dtype`, holding the value NumPy would compute with (NEP 50): a Python
        int outside an integer dtype raises OverflowError, a number beyond a float dtype's range is
        +-inf (with NumPy's RuntimeWarning), both as in NumPy."""
        bounds = np.iinfo(dtype) if dtype.startswith("int") else None
        if bounds is not None and type(value) is int and not bounds.min <= value <= bounds.max:
            raise _fail(OutOfBoundsError, f"Python integer {value} out of bounds for {dtype}")
        try:
            if dtype.startswith("float") and type(value) in (int, float):
                typed = _to_float(value, dtype)
            else:
                typed = np.asarray(value).astype(dtype, casting="same_kind")
        except OverflowError:  # float(10**400)
            raise _fail(OutOfBoundsError, f"Python integer {value} too large to convert to {dtype}") from None
        except TypeError:
            raise _fail(TracingError, f"Python scalar {value!r} does not fit in {dtype}") from None
        if dtype.startswith("int") and abs(int(typed)) > 2**53:
            raise _fail(UnsupportedError, f"integer constant {value!r} is too large (|value| > 2**53)")
        value = float(typed)
        if value == 0.0 and math.copysign(1.0, value) < 0:
            # egglog's f64 equates -0.0 with 0.0, so negative zero is spelled -(0.0) in the term.
            return self.make("negative", (self.make("const", (), (0.0, dtype)),))
        return self.make("const", (), (value, dtype))


def _to_float(value: float, dtype: str) -> np.ndarray:
    """A Python number as NumPy casts it to a float dtype: out of range it is +-inf, with NumPy's warning."""
    with np.errstate(over="ignore"):
        typed = np.asarray(float(value)).astype(dtype)
    if np.isinf(typed) and math.isfinite(float(value)):
        warnings.warn(f"overflow encountered in cast: {value!r} is {typed} in {dtype}, as in NumPy\n  at {user_location()}",
                      RuntimeWarning, stacklevel=2)
    return typed


class Tracer(np.lib.mixins.NDArrayOperatorsMixin):
    """A symbolic array: a node of the traced DAG. Python numbers stay 'weak' (NEP 50)."""

    __array_priority__ = 1000

    def __init__(self, trace: Trace, node: Node, weak: type | None = None, view: bool = False) -> None:
        self._trace = trace
        self._node = node
        self._weak = weak
        self._view = view  # args and views alias caller memory: in-place updates are refused
        self._viewed = False

    def __getattr__(self, name: str) -> Any:
        """Only called for attributes Tracer lacks: an ndarray method or attribute it does not support."""
        if not name.startswith("_") and hasattr(np.ndarray, name):
            raise _fail(UnsupportedError, f"ndarray.{name} is not supported in a kernel (on a tracer {self.dtype}{list(self.shape)})")
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    # --- array attributes -------------------------------------------------------------------
    shape = property(lambda self: self._node.shape)
    ndim = property(lambda self: self._node.ndim)
    size = property(lambda self: self._node.size)
    dtype = property(lambda self: np.dtype(self._node.dtype))
    T = property(lambda self: self.transpose())

    def __len__(self) -> int:
        if not self.shape:
            raise _fail(TracingError, "len() of a 0-d array")
        return self.shape[0]

    def __iter__(self):
        if not self.shape:
            raise _fail(TracingError, "iteration over a 0-d array")
        return (self[i] for i in range(self.shape[0]))

    def __repr__(self) -> str:
        return f"Tracer({self._node.dtype}{list(self.shape)})"

    # --- what cannot be traced ----------------------------------------------------------------
    def _concrete(self, what: str) -> TracingError:
        names = sorted({n.attr("name") for n in _ancestors(self._node) if n.op == "arg"})
        deps = f"it depends on argument(s) {', '.join(names)}" if names else "it is a traced value"
        return _fail(
            TracingError,
            f"{what} needs a concrete value, but {deps}, whose values are not known while tracing; "
            "use np.where / np.maximum etc. instead of Python control flow",
        )

    def __bool__(self) -> bool:
        raise self._concrete("Python control flow (bool() / if / while / and / or) on a traced array")

    def __float__(self) -> float:
        raise self._concrete("float() of a traced array")

    def __int__(self) -> int:
        raise self._concrete("int() of a traced array")

    def __index__(self) -> int:
        raise self._concrete("using a traced array as an index")

    def __array__(self, dtype=None, copy=None):
        raise self._concrete("converting a traced array to a NumPy array (np.asarray / np.array)")

    def __setitem__(self, key, value) -> None:
        raise _fail(TracingError, "in-place assignment (x[...] = v) is not supported; build a new array (np.where)")

    # --- NumPy protocols ----------------------------------------------------------------------
    def __array_ufunc__(self, ufunc: np.ufunc, method: str, *inputs: Any, **kwargs: Any) -> Any:
        if method == "reduce" and ufunc.__name__ in _REDUCE_UFUNCS:
            return _ufunc_reduce(ufunc, *inputs, **kwargs)
        out = kwargs.pop("out", None)
        if kwargs:
            raise _fail(UnsupportedError, f"np.{ufunc.__name__}: keyword arguments {sorted(kwargs)} are not supported")
        if method != "__call__":
            raise _fail(UnsupportedError, f"np.{ufunc.__name__}.{method}({_describe(inputs)}) is not supported")
        result = apply_ufunc(self._trace, ufunc, inputs)
        if out is None:
            return result
        return _in_place(out, result)

    def __array_function__(self, func: Callable, types: Any, args: Any, kwargs: Any) -> Any:
        handler = _FUNCTIONS.get(func.__name__)
        if handler is None or getattr(np, func.__name__, None) is not func:
            raise _fail(UnsupportedError, f"np.{func.__name__}({_describe(args)}) is not supported")
        return handler(*args, **kwargs)

    # --- methods ------------------------------------------------------------------------------
    def astype(self, dtype: Any, copy: bool = True) -> Tracer:
        return astype(self, _dtype_name(dtype))

    def sum(self, axis=None, dtype=None, keepdims=False) -> Tracer:
        return _sum(self, axis, dtype, keepdims=keepdims)

    def prod(self, axis=None, dtype=None, keepdims=False) -> Tracer:
        return _reduce("prod", self, axis, keepdims, dtype)

    def max(self, axis=None, keepdims=False) -> Tracer:
        return _reduce("max", self, axis, keepdims)

    def min(self, axis=None, keepdims=False) -> Tracer:
        return _reduce("min", self, axis, keepdims)

    def mean(self, axis=None, dtype=None, keepdims=False) -> Tracer:
        return _mean(self, axis, dtype, keepdims=keepdims)

    def reshape(self, *shape, order: str = "C") -> Tracer:
        return _reshape(self, shape[0] if len(shape) == 1 and isinstance(shape[0], (tuple, list)) else shape, order)

    def transpose(self, *axes) -> Tracer:
        return _transpose(self, axes[0] if len(axes) == 1 and isinstance(axes[0], (tuple, list)) else axes or None)

    def swapaxes(self, axis1: int, axis2: int) -> Tracer:
        return _swapaxes(self, axis1, axis2)

    def diagonal(self, offset: int = 0, axis1: int = 0, axis2: int = 1) -> Tracer:
        return _diagonal(self, offset, axis1, axis2)

    def trace(self, offset: int = 0, axis1: int = 0, axis2: int = 1, dtype=None) -> Tracer:
        return _trace(self, offset, axis1, axis2, dtype)

    def clip(self, a_min=None, a_max=None) -> Tracer:
        return _clip(self, a_min, a_max)

    def dot(self, other: Any) -> Tracer:
        return _dot(self, other)

    def ravel(self) -> Tracer:
        return _reshape(self, (-1,), "C")

    flatten = ravel

    def squeeze(self, axis=None) -> Tracer:
        return _squeeze(self, axis)

    def __getitem__(self, key: Any) -> Tracer:
        return _getitem(self, key)


def _ancestors(node: Node) -> list[Node]:
    return topological([node])


# --- lifting values into the trace --------------------------------------------------------------


def _trace_of(values: Sequence[Any]) -> Trace:
    for v in values:
        if isinstance(v, Tracer):
            return v._trace
        if isinstance(v, (list, tuple)):
            for w in v:
                if isinstance(w, Tracer):
                    return w._trace
    raise _fail(TracingError, "no traced array among the arguments")


def _dtype_key(v: Any) -> Any:
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
        raise _fail(
            UnsupportedError,
            f"a NumPy array of shape {v.shape} captured as a constant; pass it as a kernel argument instead",
        )
    raise _fail(UnsupportedError, f"operand of type {type(v).__name__} is not supported")


def lift(trace: Trace, v: Any, dtype: str) -> Node:
    """A Node of `dtype` for a tracer (cast if needed) or a Python/NumPy scalar (constant)."""
    if isinstance(v, Tracer):
        node = v._node
        return node if node.dtype == dtype else trace.make("astype", (node,), (dtype,))
    if isinstance(v, np.generic) or (isinstance(v, np.ndarray) and v.ndim == 0):
        v = v.item()
    return trace.const(v, dtype)


def _result(trace: Trace, node: Node, weak: type | None = None, view: bool = False) -> Tracer:
    return Tracer(trace, node, weak, view)


def _check_dtype(name: str, dtypes: Sequence[np.dtype], inputs: Sequence[Any]) -> None:
    for dt in dtypes:
        if dt.name not in DTYPES:
            raise _fail(UnsupportedError, f"np.{name}({_describe(inputs)}) needs dtype {dt}, which is not supported")


def apply_ufunc(trace: Trace, ufunc: np.ufunc, inputs: Sequence[Any]) -> Tracer:
    """Apply a NumPy ufunc to traced/scalar inputs with NumPy's own dtype resolution."""
    name = _UFUNC_OPS.get(ufunc.__name__, ufunc.__name__)
    if name not in UNARY and name not in BINARY and name not in ("positive", "matmul"):
        raise _fail(UnsupportedError, f"np.{ufunc.__name__}({_describe(inputs)}) is not supported")
    keys = tuple(_dtype_key(v) for v in inputs)
    all_weak = all(isinstance(k, type) for k in keys)
    if all_weak:  # no array takes part: NumPy makes default-dtype arrays of the Python numbers
        keys = tuple(np.dtype(PYTHON_SCALARS[k]) for k in keys)
    try:
        loop = ufunc.resolve_dtypes((*keys, None))
    except (TypeError, np.exceptions.DTypePromotionError) as e:
        raise _fail(UnsupportedError, f"np.{ufunc.__name__}({_describe(inputs)}): {e}") from None
    _check_dtype(ufunc.__name__, loop, inputs)
    if name in PREDICATES and loop[0].kind == "i":
        if any(type(v) is int and not -(2**63) <= v < 2**63 for v in inputs):  # beyond int64: one answer for every element
            value = np.bool_(ufunc(*(v if type(v) is int else np.int64(0) for v in inputs)))
            shape = np.broadcast_shapes(*(v.shape if isinstance(v, Tracer) else np.shape(v) for v in inputs))
            return _broadcast_to(_as_tracer(trace, value), shape)
        loop = _exact_int_comparison(loop, inputs)
    nodes = tuple(lift(trace, v, dt.name) for v, dt in zip(inputs, loop[: len(inputs)], strict=True))
    weak = _WEAK_OF.get(loop[-1].name) if all_weak else None
    if name == "positive":
        return _result(trace, nodes[0], weak)
    if name == "matmul":
        return _matmul(trace, *nodes)
    if not supports(name, nodes[0].dtype):
        raise _fail(UnsupportedError, f"np.{ufunc.__name__} on {nodes[0].dtype} is not supported ({_describe(inputs)})")
    if name == "power" and nodes[1].ndim == 0 and not isinstance(inputs[1], Tracer):
        node = _scalar_power(trace, nodes[0], float(np.asarray(inputs[1]).item()))
        if node is not None:
            return _result(trace, node, weak)
    return _result(trace, trace.make(name, nodes), weak)


def _exact_int_comparison(loop: Sequence[np.dtype], inputs: Sequence[Any]) -> Sequence[np.dtype]:
    """NumPy compares an integer array with a Python int exactly (NEP 50: `int32_array < 2**40` is
    True): compare in int64 when the int does not fit the loop's dtype or is a runtime argument."""
    info = np.iinfo(loop[0])
    wide = any((type(v) is int and not info.min <= v <= info.max) or (isinstance(v, Tracer) and v._weak is int) for v in inputs)
    return (np.dtype("int64"),) * len(inputs) + (loop[-1],) if wide else loop


def _scalar_power(trace: Trace, x: Node, exponent: float) -> Node | None:
    """NumPy's special cases for a scalar exponent: x**2 is square(x), x**0.5 is sqrt(x), x**-1 is 1/x.

    They are NumPy's semantics, not optimizations: np.power(-inf, 0.5) is nan (sqrt), where C pow gives inf.
    """
    if exponent == 2.0:
        return trace.make("square", (x,))
    if x.dtype.startswith("float"):
        if exponent == 0.5:
            return trace.make("sqrt", (x,))
        if exponent == -1.0:
            return trace.make("reciprocal", (x,))
        if exponent == 1.0:
            return x
    return None


def _in_place(out: tuple, result: Tracer) -> Tracer:
    """`x += y` on a traced array: rebinds x when x owns its data; refused for arguments and views."""
    (target,) = out
    if not isinstance(target, Tracer) or target._view or target._viewed:
        raise _fail(
            TracingError,
            "in-place update of an argument or a view (e.g. `x += 1`, out=...) would mutate the caller's data; "
            "write `x = x + 1` instead",
        )
    if result.shape != target.shape:
        raise _fail(TracingError, f"in-place update would change shape {target.shape} to {result.shape}")
    target._node = lift(result._trace, result, target._node.dtype)
    return target


def astype(x: Any, dtype: str) -> Tracer:
    trace = _trace_of([x])
    if dtype not in DTYPES:
        raise _fail(UnsupportedError, f"astype({dtype}) is not supported (supported: {', '.join(DTYPES)})")
    return _result(trace, lift(trace, x, dtype))


def _dtype_name(dtype: Any) -> str:
    try:
        return np.dtype(dtype).name
    except TypeError:
        raise _fail(UnsupportedError, f"dtype {dtype!r} is not understood") from None


def _as_tracer(trace: Trace, v: Any) -> Tracer:
    if isinstance(v, Tracer):
        return v
    key = _dtype_key(v)
    dtype = np.dtype(key).name if not isinstance(key, type) else PYTHON_SCALARS[key]
    return _result(trace, lift(trace, v, dtype), key if isinstance(key, type) else None)


# --- shapes and views ------------------------------------------------------------------------


def _axis(ndim: int, axis: int, what: str = "axis") -> int:
    if not isinstance(axis, (int, np.integer)) or not -ndim <= axis < ndim:
        raise _fail(TracingError, f"{what} {axis!r} is out of bounds for an array of dimension {ndim}")
    return int(axis) % ndim


def _axes(ndim: int, axis: Any) -> tuple[int, ...]:
    if axis is None:
        return tuple(range(ndim))
    axes = tuple(_axis(ndim, a) for a in (axis if isinstance(axis, (tuple, list)) else (axis,)))
    if len(set(axes)) != len(axes):
        raise _fail(TracingError, f"repeated axis in {axis!r}")
    return tuple(sorted(axes))


def _view(x: Tracer, op: str, attrs: tuple) -> Tracer:
    x._viewed = True
    return _result(x._trace, x._trace.make(op, (x._node,), attrs), x._weak, view=True)


def _reshape(x: Any, shape: Any, order: str = "C") -> Tracer:
    x = _as_tracer(_trace_of([x]), x)
    if order != "C":
        raise _fail(UnsupportedError, f"reshape(order={order!r}) is not supported (only 'C')")
    shape = tuple(int(s) for s in (shape if isinstance(shape, (tuple, list)) else (shape,)))
    if shape.count(-1) > 1:
        raise _fail(TracingError, f"reshape {shape}: can only specify one unknown dimension")
    if -1 in shape:
        known = math.prod(s for s in shape if s != -1)
        if known == 0 or x.size % known:
            raise _fail(TracingError, f"cannot reshape array of size {x.size} into shape {shape}")
        shape = tuple(x.size // known if s == -1 else s for s in shape)
    if math.prod(shape) != x.size or any(s < 0 for s in shape):
        raise _fail(TracingError, f"cannot reshape array of size {x.size} into shape {shape}")
    if shape == x.shape:
        return x
    view = is_unit_reshape(x.shape, shape)
    if view:
        x._viewed = True
    return _result(x._trace, x._trace.make("reshape", (x._node,), (shape,)), x._weak, view=view)


def _transpose(x: Any, axes: Any = None) -> Tracer:
    x = _as_tracer(_trace_of([x]), x)
    perm = tuple(reversed(range(x.ndim))) if axes is None else tuple(_axis(x.ndim, a) for a in axes)
    if sorted(perm) != list(range(x.ndim)):
        raise _fail(TracingError, f"transpose axes {axes!r} are not a permutation of {x.ndim} dims")
    if perm == tuple(range(x.ndim)):
        return x
    return _view(x, "transpose", (perm,))


def _swapaxes(x: Any, axis1: int, axis2: int) -> Tracer:
    x = _as_tracer(_trace_of([x]), x)
    perm = list(range(x.ndim))
    a, b = _axis(x.ndim, axis1), _axis(x.ndim, axis2)
    perm[a], perm[b] = perm[b], perm[a]
    return _transpose(x, perm)


def _broadcast_to(x: Any, shape: Any, subok: bool = False) -> Tracer:
    x = _as_tracer(_trace_of([x]), x)
    shape = tuple(int(s) for s in (shape if isinstance(shape, (tuple, list)) else (shape,)))
    ok = len(shape) >= x.ndim and all(d in (1, s) for d, s in zip(x.shape, shape[len(shape) - x.ndim :], strict=True))
    if not ok:
        raise _fail(TracingError, f"cannot broadcast shape {x.shape} to {shape}")
    return x if shape == x.shape else _view(x, "broadcast_to", (shape,))


def _expand_dims(x: Any, axis: Any) -> Tracer:
    x = _as_tracer(_trace_of([x]), x)
    axes = axis if isinstance(axis, (tuple, list)) else (axis,)
    ndim = x.ndim + len(axes)
    positions = sorted(_axis(ndim, a) for a in axes)
    dims = iter(x.shape)
    return _reshape(x, tuple(1 if i in positions else next(dims) for i in range(ndim)))


def _squeeze(x: Any, axis: Any = None) -> Tracer:
    x = _as_tracer(_trace_of([x]), x)
    axes = tuple(i for i, d in enumerate(x.shape) if d == 1) if axis is None else _axes(x.ndim, axis)
    if any(x.shape[a] != 1 for a in axes):
        raise _fail(TracingError, "cannot select an axis to squeeze out which has size not equal to one")
    return _reshape(x, tuple(d for i, d in enumerate(x.shape) if i not in axes))


def _getitem(x: Tracer, key: Any) -> Tracer:
    """Basic indexing (ints, slices with steps, None, ...) as a slice view plus a unit reshape."""
    key = key if isinstance(key, tuple) else (key,)
    for k in key:
        if not (k is None or k is Ellipsis or isinstance(k, (slice, int, np.integer))):
            raise _fail(UnsupportedError, f"indexing with {type(k).__name__} (advanced indexing) is not supported")
    n_real = sum(1 for k in key if k is not None and k is not Ellipsis)
    if n_real > x.ndim:
        raise _fail(TracingError, f"too many indices for array: array is {x.ndim}-dimensional, but {n_real} were indexed")
    if sum(1 for k in key if k is Ellipsis) > 1:
        raise _fail(TracingError, "an index can only have a single ellipsis ('...')")
    if Ellipsis in key:
        i = key.index(Ellipsis)
        key = key[:i] + (slice(None),) * (x.ndim - n_real) + key[i + 1 :]
    else:
        key = key + (slice(None),) * (x.ndim - n_real)
    start, step, size, out_shape = [], [], [], []
    dim = 0
    for k in key:
        if k is None:
            out_shape.append(1)
            continue
        n = x.shape[dim]
        if isinstance(k, slice):
            r = range(*k.indices(n))
            start.append(r.start if len(r) else 0)
            step.append(r.step)
            size.append(len(r))
            out_shape.append(len(r))
        else:
            if not -n <= k < n:
                raise _fail(TracingError, f"index {k} is out of bounds for axis {dim} with size {n}")
            start.append(int(k) % n)
            step.append(1)
            size.append(1)
        dim += 1
    sliced = x
    if tuple(size) != x.shape or any(s != 0 for s in start) or any(s != 1 for s in step):
        sliced = _view(x, "slice", (tuple(start), tuple(step), tuple(size)))
    out = _reshape(sliced, tuple(out_shape))
    x._viewed = True
    out._view = True
    return out


def _diagonal(x: Any, offset: int = 0, axis1: int = 0, axis2: int = 1) -> Tracer:
    x = _as_tracer(_trace_of([x]), x)
    if x.ndim < 2:
        raise _fail(TracingError, "diag requires an array of at least two dimensions")
    a1, a2 = _axis(x.ndim, axis1, "axis1"), _axis(x.ndim, axis2, "axis2")
    if a1 == a2:
        raise _fail(TracingError, "axis1 and axis2 cannot be the same")
    return _view(x, "diagonal", (int(offset), a1, a2))


def _concatenate(arrays: Sequence[Any], axis: Any = 0, out: Any = None, dtype: Any = None, casting: str = "same_kind") -> Tracer:
    if out is not None:
        raise _fail(UnsupportedError, "np.concatenate(out=...) is not supported")
    trace = _trace_of(arrays)
    parts = [_as_tracer(trace, a) for a in arrays]
    if axis is None:
        parts = [_reshape(p, (-1,)) for p in parts]
        axis = 0
    if not parts:
        raise _fail(TracingError, "need at least one array to concatenate")
    target = _dtype_name(dtype) if dtype is not None else np.result_type(*[_dtype_key(p) if not p._weak else p._weak(0) for p in parts]).name
    ndim = parts[0].ndim
    if ndim == 0:
        raise _fail(TracingError, "zero-dimensional arrays cannot be concatenated")
    ax = _axis(ndim, axis)
    for p in parts:
        if p.ndim != ndim or any(d != e for i, (d, e) in enumerate(zip(p.shape, parts[0].shape)) if i != ax):
            raise _fail(TracingError, f"concatenate: shapes {[q.shape for q in parts]} differ outside axis {ax}")
    nodes = tuple(lift(trace, p, target) for p in parts)
    if len(nodes) == 1:
        return _result(trace, nodes[0])
    return _result(trace, trace.make("concat", nodes, (ax,)))


def _stack(arrays: Sequence[Any], axis: int = 0, out: Any = None, dtype: Any = None, casting: str = "same_kind") -> Tracer:
    trace = _trace_of(arrays)
    parts = [_as_tracer(trace, a) for a in arrays]
    if not parts or any(p.shape != parts[0].shape for p in parts):
        raise _fail(TracingError, "all input arrays must have the same shape")
    ax = _axis(parts[0].ndim + 1, axis)
    return _concatenate([_expand_dims(p, ax) for p in parts], ax, out, dtype)


# --- reductions ------------------------------------------------------------------------------

_REDUCE_UFUNCS = {"add": "sum", "multiply": "prod", "maximum": "max", "minimum": "min"}


def _accumulator_dtype(dtype: str) -> str:
    """NumPy's default accumulator for sum/prod: small ints and bool widen to int64."""
    return "int64" if dtype in ("bool", "int32") else dtype


def _reduce(op: str, x: Any, axis: Any, keepdims: bool, dtype: Any = None, **unsupported: Any) -> Tracer:
    if unsupported:
        raise _fail(UnsupportedError, f"np.{op}: keyword arguments {sorted(unsupported)} are not supported")
    trace = _trace_of([x])
    x = _as_tracer(trace, x)
    axes = _axes(x.ndim, axis)
    if dtype is not None:
        target = _dtype_name(dtype)
    else:
        target = _accumulator_dtype(x.dtype.name) if op in ("sum", "prod") else x.dtype.name
    node = lift(trace, x, target)
    if axes:
        reduced = trace.make(op, (node,), (axes,))
    elif op == "sum" and target in FLOAT_DTYPES and not np.signbit(np.sum(np.array(-0.0), axis=())):
        reduced = trace.make("add", (node, trace.const(0.0, target)))  # NumPy adds to its identity: -0.0 -> 0.0
    else:
        reduced = node
    out = _result(trace, reduced)
    if keepdims:
        out = _reshape(out, tuple(1 if i in axes else d for i, d in enumerate(x.shape)))
    return out


def _ufunc_reduce(ufunc: np.ufunc, x: Any, axis: Any = 0, dtype: Any = None, keepdims: bool = False, **unsupported: Any) -> Tracer:
    """`np.add.reduce(x, axis, dtype, keepdims=...)` and kin (NumPy passes all but `x` as keywords)."""
    if unsupported.get("where", False) is True:  # where=True is the default: every element
        del unsupported["where"]
    if unsupported:
        given = ", ".join(f"{k}=..." for k in sorted(unsupported))
        raise _fail(UnsupportedError, f"np.{ufunc.__name__}.reduce({given}) is not supported; axis, dtype and keepdims are")
    return _reduce(_REDUCE_UFUNCS[ufunc.__name__], x, axis, keepdims, dtype)


def _sum(x: Any, axis: Any = None, dtype: Any = None, out: Any = None, keepdims: bool = False, **kw: Any) -> Tracer:
    if out is not None:
        kw["out"] = out
    return _reduce("sum", x, axis, keepdims, dtype, **kw)


def _mean(x: Any, axis: Any = None, dtype: Any = None, out: Any = None, keepdims: bool = False, **kw: Any) -> Tracer:
    trace = _trace_of([x])
    x = _as_tracer(trace, x)
    if dtype is None:
        dtype = x.dtype.name if x.dtype.name.startswith("float") else "float64"
    total = _sum(x, axis, dtype, out, keepdims, **kw)
    count = math.prod(x.shape[a] for a in _axes(x.ndim, axis))
    return apply_ufunc(trace, np.divide, (total, np.asarray(count, dtype=_dtype_name(dtype))))


def _trace(x: Any, offset: int = 0, axis1: int = 0, axis2: int = 1, dtype: Any = None, out: Any = None) -> Tracer:
    return _sum(_diagonal(x, offset, axis1, axis2), -1, dtype, out)


# --- elementwise helpers ---------------------------------------------------------------------


def _where(cond: Any, x: Any = None, y: Any = None) -> Tracer:
    if x is None or y is None:
        raise _fail(UnsupportedError, "np.where(cond) with one argument (indices) is not supported")
    trace = _trace_of([cond, x, y])
    keys = [_dtype_key(v) for v in (x, y)]
    target = np.result_type(*[k(0) if isinstance(k, type) else k for k in keys]).name
    if target not in DTYPES:
        raise _fail(UnsupportedError, f"np.where result dtype {target} is not supported")
    c = lift(trace, cond, "bool")
    return _result(trace, trace.make("where", (c, lift(trace, x, target), lift(trace, y, target))))


def _clip(a: Any, a_min: Any = None, a_max: Any = None, out: Any = None, **kw: Any) -> Tracer:
    if out is not None or kw:
        raise _fail(UnsupportedError, "np.clip: out= and keyword arguments are not supported")
    a_min = kw.pop("min", a_min)
    result = a
    trace = _trace_of([a])
    if isinstance(a, Tracer) and a._weak is None and a.dtype.kind == "i":  # as NumPy: an int bound beyond the dtype cannot bind
        info = np.iinfo(a.dtype)
        a_min = None if type(a_min) is int and a_min < info.min else a_min
        a_max = None if type(a_max) is int and a_max > info.max else a_max
    if a_min is not None:
        result = apply_ufunc(trace, np.maximum, (result, a_min))
    if a_max is not None:
        result = apply_ufunc(trace, np.minimum, (result, a_max))
    return _as_tracer(trace, result)


def _matmul(trace: Trace, a: Node, b: Node) -> Tracer:
    if a.ndim == 0 or b.ndim == 0:
        raise _fail(TracingError, "matmul: input operand does not have enough dimensions (0-d)")
    if a.ndim > 3 or b.ndim > 3 or (max(a.ndim, b.ndim) == 3 and min(a.ndim, b.ndim) == 1):
        raise _fail(UnsupportedError, f"matmul of shapes {a.shape} @ {b.shape} is not supported (up to batched 3-D)")
    if a.dtype == "bool":
        raise _fail(UnsupportedError, "matmul of bool arrays is not supported")
    if max(a.ndim, b.ndim) == 3:
        batch = max(a.shape[0] if a.ndim == 3 else 1, b.shape[0] if b.ndim == 3 else 1)
        a = _broadcast_batch(trace, a, batch)
        b = _broadcast_batch(trace, b, batch)
    return _result(trace, trace.make("matmul", (a, b)))


def _broadcast_batch(trace: Trace, x: Node, batch: int) -> Node:
    shape = (batch, *x.shape[-2:])
    if x.shape == shape:
        return x
    if x.ndim == 2:
        x = trace.make("reshape", (x,), ((1, *x.shape),))
    if x.shape[0] != 1:
        raise _fail(TracingError, f"matmul: batch dimensions {x.shape[0]} and {batch} do not broadcast")
    return trace.make("broadcast_to", (x,), (shape,))


def _strong(v: Any) -> Any:
    """An operand as np.dot / np.outer see it: a Python number (also a Python-number argument) is
    converted to an array first, so it is not weak: np.dot(float32, 2.0) is float64."""
    if isinstance(v, Tracer):
        return Tracer(v._trace, v._node) if v._weak else v
    return np.asarray(v) if type(v) in PYTHON_SCALARS else v


def _dot(a: Any, b: Any, out: Any = None) -> Tracer:
    trace = _trace_of([a, b])
    a, b = _strong(a), _strong(b)
    if out is not None:
        raise _fail(UnsupportedError, "np.dot(out=...) is not supported")
    if np.ndim(a) == 0 or np.ndim(b) == 0:
        return apply_ufunc(trace, np.multiply, (a, b))
    if np.ndim(a) > 2 or np.ndim(b) > 2:
        raise _fail(UnsupportedError, "np.dot of arrays with more than 2 dimensions is not supported; use matmul")
    return apply_ufunc(trace, np.matmul, (a, b))


def _outer(a: Any, b: Any, out: Any = None) -> Tracer:
    trace = _trace_of([a, b])
    a, b = _reshape(_as_tracer(trace, _strong(a)), (-1, 1)), _reshape(_as_tracer(trace, _strong(b)), (1, -1))
    return apply_ufunc(trace, np.multiply, (a, b))


def _astype_fn(x: Any, dtype: Any, copy: bool = True, device: Any = None) -> Tracer:
    return astype(x, _dtype_name(dtype))


def _shape_fn(x: Any) -> tuple[int, ...]:
    return tuple(np.shape(x)) if not isinstance(x, Tracer) else x.shape


_FUNCTIONS: dict[str, Callable[..., Any]] = {
    "sum": _sum,
    "prod": lambda a, axis=None, dtype=None, out=None, keepdims=False, **kw: _reduce("prod", a, axis, keepdims, dtype, **({"out": out} if out is not None else {}), **kw),
    "max": lambda a, axis=None, out=None, keepdims=False, **kw: _reduce("max", a, axis, keepdims, **({"out": out} if out is not None else {}), **kw),
    "min": lambda a, axis=None, out=None, keepdims=False, **kw: _reduce("min", a, axis, keepdims, **({"out": out} if out is not None else {}), **kw),
    "mean": _mean,
    "transpose": lambda a, axes=None: _transpose(a, axes),
    "swapaxes": _swapaxes,
    "reshape": lambda a, shape=None, order="C", **kw: _reshape(a, shape if shape is not None else kw.get("newshape"), order),
    "broadcast_to": _broadcast_to,
    "expand_dims": _expand_dims,
    "squeeze": _squeeze,
    "ravel": lambda a, order="C": _reshape(a, (-1,), order),
    "concatenate": _concatenate,
    "stack": _stack,
    "diagonal": _diagonal,
    "trace": _trace,
    "where": _where,
    "clip": _clip,
    "dot": _dot,
    "outer": _outer,
    "astype": _astype_fn,
    "shape": _shape_fn,
    "ndim": lambda a: np.ndim(a) if not isinstance(a, Tracer) else a.ndim,
}
_FUNCTIONS["amax"] = _FUNCTIONS["max"]
_FUNCTIONS["amin"] = _FUNCTIONS["min"]


# --- entry point ------------------------------------------------------------------------------


def narrowed_int_args(outputs: Sequence[Node], specs: Sequence[ArgSpec], names: Sequence[str]) -> tuple[tuple[int, str], ...]:
    """(argument index, dtype) of each Python-int argument the program converts to a narrower integer
    dtype (`int32_array + n`): NumPy raises OverflowError for a value outside it, so a call checks."""
    index = {n: i for i, (n, s) in enumerate(zip(names, specs, strict=True)) if s.weak is int}
    found = {(index[n.inputs[0].attr("name")], n.dtype) for n in topological(list(outputs))
             if n.op == "astype" and n.dtype.startswith("int") and n.inputs[0].op == "arg" and n.inputs[0].attr("name") in index}
    return tuple(sorted(found))


def function_name(fn: Callable[..., Any]) -> str:
    """A kernel function's name for messages: `__name__`, `partial(name)` for a functools.partial, else its type's name."""
    if isinstance(fn, functools.partial):
        return f"partial({function_name(fn.func)})"
    return getattr(fn, "__name__", None) or type(fn).__name__


def trace_function(fn: Callable[..., Any], names: Sequence[str], specs: Sequence[ArgSpec]) -> tuple[list[Node], bool]:
    """Trace `fn` on tracers for `specs`; returns the output nodes and whether it returned a tuple."""
    trace = Trace(Builder(), tuple(names))
    tracers = []
    for name, spec in zip(names, specs, strict=True):
        node = trace.make("arg", (), (name, spec.shape, spec.dtype, spec.layout))
        tracers.append(Tracer(trace, node, spec.weak, view=True))
    try:
        result = fn(*tracers)
    except RecursionError:
        raise _fail(TracingError, f"recursion limit hit while tracing {function_name(fn)}") from None
    is_tuple = isinstance(result, (tuple, list))
    results = list(result) if is_tuple else [result]
    outputs = []
    for i, r in enumerate(results):
        if isinstance(r, (bool, int, float, np.generic, np.ndarray)) and np.ndim(r) == 0:
            r = _as_tracer(trace, r)
        if not isinstance(r, Tracer):
            where = f"output {i}" if is_tuple else "the result"
            raise TracingError(
                f"{function_name(fn)} must return arrays (or a tuple of arrays); "
                f"{where} is {type(r).__name__}"
            )
        outputs.append(r._node)
    return outputs, is_tuple
