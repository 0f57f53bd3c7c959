"""Conversions real code calls on its inputs: np.asarray, np.asanyarray, np.array, np.ascontiguousarray,
np.asfortranarray, and the scalar types as functions (`np.float32(x)`), on traced arrays.

None of them dispatches to `__array_function__` (only with `like=`), and a scalar type's constructor
always makes a NumPy scalar: so while a kernel is traced they are replaced in the `numpy` module, as
creation.py replaces np.zeros (the same mechanism): the functions by wrappers that trace when user
code passes a traced array (NumPy's own function otherwise), each scalar type by a subclass of itself
that converts a traced array and is the type for everything else (isinstance, np.dtype, equality).
np.ndarray is replaced the same way: `np.ndarray(shape, dtype)` in user code is a local buffer as np.empty's.
On a traced array they are the array itself (asarray) or an array of its own (a copy: the kernel may
write into it), converted as `astype` converts; layout (`order`) is not traced: results are C-ordered.
A (nested) list mixing traced arrays and numbers is stacked, with NumPy's dtype for the list.
"""

from __future__ import annotations

import inspect
import sys
from typing import Any

import numpy as np

from ..errors import TracingError, UnsupportedError
from ..graph import DTYPES
from .core import IMPLEMENTATIONS, Trace, Tracer, astype, dtype_name, fail, first_tracer, implements, lift, memory, result
from .creation import called_by_user, replace_while_tracing
from .shapes import reshape, stack
from .updates import copy as copied

# names of NumPy's scalar types besides their own: np.bool_, np.double...
_ALIASES = ("bool_", "double", "single", "half", "int_", "intp", "intc", "short", "byte", "longlong",
            "uint", "uintp", "uintc", "ushort", "ubyte", "ulonglong")


def _element_dtype(value: Any) -> np.dtype:
    """The dtype NumPy gives an element of a list it makes an array of (Python numbers: their default dtype)."""
    if isinstance(value, Tracer):
        return value.dtype
    if isinstance(value, (list, tuple)):
        return np.result_type(*map(_element_dtype, value)) if value else np.dtype("float64")
    return np.asarray(value).dtype


def _stacked(trace: Trace, value: Any, dtype: str) -> Tracer:
    """A (nested) list holding traced arrays as one traced array of `dtype`, as NumPy stacks it."""
    if not isinstance(value, (list, tuple)):
        return result(trace, lift(trace, value, dtype))
    parts = [_stacked(trace, v, dtype) for v in value]
    if any(p.shape != parts[0].shape for p in parts):
        raise fail(TracingError, "setting an array element with a sequence: the list has an inhomogeneous shape "
                                 f"(elements of shapes {[p.shape for p in parts]}), as NumPy raises")
    return stack(parts)


def _convert(name: str, a: Any, dtype: Any, copy: bool | np._CopyMode | None, ndmin: int = 0) -> Tracer:
    """Traced `a` as an array of `dtype` (None: a's own): itself when no copy is needed and `copy` is not
    True, else an array of its own; copy=False where a copy is needed raises, as NumPy does."""
    if isinstance(copy, np._CopyMode):  # NumPy's own spelling, which array-API wrappers pass (SciPy's, scikit-learn's)
        copy = {"ALWAYS": True, "IF_NEEDED": None, "NEVER": False}[copy.name]
    target = dtype_name(dtype) if dtype is not None else _element_dtype(a).name
    if target not in DTYPES:
        raise fail(UnsupportedError, f"np.{name}: dtype {target} is not supported (supported: {', '.join(DTYPES)})")
    needs_copy = not isinstance(a, Tracer) or a.dtype != target
    if needs_copy and copy is False:
        raise fail(TracingError, f"np.{name}(copy=False): unable to avoid a copy making an array of {target}, as NumPy raises")
    if not isinstance(a, Tracer):
        x = _stacked(first_tracer(a)._trace, a, target)
    elif a.dtype != target or a._weak:  # (a Python-number argument becomes a NumPy value: strong, NEP 50)
        x = astype(a, target)
    else:
        x = copied(a) if copy else a
    return reshape(x, (1,) * (ndmin - x.ndim) + x.shape) if x.ndim < ndmin else x


def _conversion(*names: str) -> Any:
    """Register `convert` as np.<name> for each name: it converts a value holding a traced array, NumPy's own
    function converts the rest (user code calling np.asarray([1, 2]) while tracing gets an ndarray)."""

    def register(convert: Any) -> Any:
        for name in names:
            numpy_fn = getattr(np, name)
            first = next(iter(inspect.signature(numpy_fn).parameters))  # NumPy's name of the value: "a", "object"

            def traced_or_numpy(*args: Any, _numpy: Any = numpy_fn, _first: str = first, **kwargs: Any) -> Any:
                kwargs.pop("like", None)  # (np.asarray(a, like=tracer) reached the Tracer: a is not traced)
                if not args and _first in kwargs:
                    args = (kwargs.pop(_first),)
                return convert(*args, **kwargs) if args and first_tracer(args[0]) is not None else _numpy(*args, **kwargs)

            implements(name)(traced_or_numpy)
            replace_while_tracing(name)
        return convert

    return register


@_conversion("asarray", "asanyarray")
def asarray(a: Any, dtype: Any = None, order: Any = None, *, device: Any = None, copy: bool | None = None) -> Tracer:
    """np.asarray: the traced array itself, or converted to `dtype`."""
    return _convert("asarray", a, dtype, copy)


@_conversion("asarray_chkfinite")
def asarray_chkfinite(a: Any, dtype: Any = None, order: Any = None) -> Tracer:
    """np.asarray_chkfinite (SciPy's check_finite): np.asarray's, and NumPy's ValueError where a float array holds an inf
    or NaN, a guard checked at each call (calling.md#guards-branches-on-data-values)."""
    x = _convert("asarray_chkfinite", a, dtype, None)
    if x.dtype.kind in "fc" and not np.isfinite(x).all():
        raise ValueError("array must not contain infs or NaNs")
    return x


@_conversion("array")
def array(obj: Any, dtype: Any = None, *, copy: bool | None = True, order: str = "K", subok: bool = False, ndmin: int = 0,
          ndmax: int = 0) -> Tracer:
    """np.array: a copy of the traced array (copy=None: only if needed), converted to `dtype`, with `ndmin` dims."""
    if ndmax:
        raise fail(UnsupportedError, "np.array(ndmax=...) of traced values is not supported")
    return _convert("array", obj, dtype, copy, ndmin)


@_conversion("ascontiguousarray")
def ascontiguousarray(a: Any, dtype: Any = None) -> Tracer:
    """np.ascontiguousarray: the traced array (at least 1-d), converted to `dtype`; a copy in C order unless it is C-contiguous."""
    return _contiguous("ascontiguousarray", a, dtype, "C")


@_conversion("asfortranarray")
def asfortranarray(a: Any, dtype: Any = None) -> Tracer:
    """np.asfortranarray: as ascontiguousarray, in Fortran order."""
    return _contiguous("asfortranarray", a, dtype, "F")


def _contiguous(name: str, a: Any, dtype: Any, order: str) -> Tracer:
    """`a` converted, itself where NumPy's layout of it is contiguous in `order` (or unknown, and `a` no view), else a
    copy in that order: writes into the result reach `a` exactly when they do in NumPy."""
    x = _convert(name, a, dtype, None, ndmin=1)
    if x is a:
        stand_in = memory(a)
        contiguous = not a._steps if stand_in is None else stand_in.flags.c_contiguous if order == "C" else stand_in.flags.f_contiguous
        return a if contiguous else copied(a, order)
    if x._base is None:
        x._order = order
    return x


@implements("may_share_memory")
def may_share_memory(a: Any, b: Any, max_work: Any = None) -> bool:
    """np.may_share_memory: True for two traced arrays (it may err that way, as NumPy's: a copy made on its
    account is free here), False for a traced array and a NumPy one (traced values never live in its memory)."""
    return isinstance(a, Tracer) and isinstance(b, Tracer)


class _StandInMeta(type):
    """The metaclass of a NumPy type's stand-in while tracing: it is the type itself for isinstance, issubclass,
    == and hash."""

    numpy_type: type

    def __instancecheck__(cls, obj: Any) -> bool:
        return isinstance(obj, cls.numpy_type)

    def __subclasscheck__(cls, sub: type) -> bool:
        return issubclass(sub, cls.numpy_type)

    def __eq__(cls, other: object) -> bool:
        return True if other is cls or other is cls.numpy_type else NotImplemented

    def __hash__(cls) -> int:
        return hash(cls.numpy_type)


def _scalar_type(numpy_type: type) -> type:
    """The stand-in for a NumPy scalar type while tracing: `np.float32(x)` of a traced x is x.astype(float32)
    (any shape, as NumPy's call converts an array), anything else is NumPy's own float32(...)."""

    def __new__(cls: type, *args: Any, **kwargs: Any) -> Any:
        if any(first_tracer(a) is not None for a in (*args, *kwargs.values())):
            if len(args) != 1 or kwargs:
                raise fail(TracingError, f"np.{numpy_type.__name__}() takes one argument, the value to convert")
            return _convert(numpy_type.__name__, args[0], numpy_type, None)
        return numpy_type(*args, **kwargs)

    return _StandInMeta(numpy_type.__name__, (numpy_type,), {"__new__": __new__, "numpy_type": numpy_type,
                                                              "__module__": numpy_type.__module__})


def _ndarray_type() -> type:
    """The stand-in for np.ndarray while tracing: `np.ndarray(shape, dtype)` called by the user's code is a
    local buffer, as np.empty(shape, dtype) (NumPy leaves its contents unspecified too); other calls are NumPy's."""
    numpy_type = np.ndarray

    def __new__(cls: type, *args: Any, **kwargs: Any) -> Any:
        if not called_by_user(sys._getframe(1), cls):
            return numpy_type(*args, **kwargs)
        return _buffer(*args, **kwargs)

    return _StandInMeta("ndarray", (numpy_type,), {"__new__": __new__, "numpy_type": numpy_type, "__module__": "numpy"})


def _buffer(shape: Any, dtype: Any = float, buffer: Any = None, offset: int = 0, strides: Any = None, order: Any = None) -> Tracer:
    """np.ndarray's arguments as a local buffer (a view of other memory is refused)."""
    if buffer is not None or offset or strides is not None:
        raise fail(UnsupportedError, "np.ndarray(shape, buffer=/offset=/strides=) in a kernel: a view of other memory is not "
                                     "supported; use np.empty(shape, dtype) for a local buffer")
    return IMPLEMENTATIONS["empty"](shape, dtype, order or "C")


def _install_scalar_types() -> None:
    """Replace each supported NumPy scalar type (by its name and its aliases: np.bool_, np.double) while tracing."""
    types = {np.dtype(d).type: _scalar_type(np.dtype(d).type) for d in DTYPES if d != "bfloat16"}  # (ml_dtypes' type)
    for name in (*(t.__name__ for t in types), *_ALIASES):
        stand_in = types.get(getattr(np, name, None))
        if stand_in is not None:
            replace_while_tracing(name, stand_in)


_install_scalar_types()
replace_while_tracing("ndarray", _ndarray_type())
