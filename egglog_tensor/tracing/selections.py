"""Boolean-mask selections `x[mask]` (mask over x's leading dims) where their count does not matter: read back into
the array (`x[m] *= -1`, `x[m] = x[m] * 2 + 1`) or reduced (`x[m].mean()`, `np.sum(x[m] ** 2)`, `x[m].max(axis=0)`).
A Selection is the elementwise value on x's whole shape with the mask beside it: ufuncs and arithmetic apply to
every element, a reduction over the selected ones is one of np.where(mask, value, identity), a store a
np.where into x. Anything that needs the selection's length (its shape, another use) is refused as before."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import EmptyReductionError, TracingError, UnsupportedError
from .core import IMPLEMENTATIONS, Tracer, as_tracer, check_at_run_time, fail, implements, result, trace_of
from .shapes import basic_index, reshape

MASK_HINT = ("its result shape depends on the mask's values, which are not known while tracing; use np.where(mask, x, fill) "
             "for a result of x's shape (a selection x[m] may be reduced, x[m].sum(), or stored back, x[m] *= 2)")
_HINT = f"boolean-mask indexing (x[mask]) is not supported: {MASK_HINT}"
_REDUCTIONS = ("sum", "mean", "max", "min", "any", "all", "prod", "var", "std")
_ELEMENTWISE = ("where", "clip", "round", "around", "nan_to_num", "isclose", "fix", "sinc", "real", "imag")  # functions of x[m] elementwise
_UFUNCS = {"add": "sum", "multiply": "prod", "maximum": "max", "minimum": "min", "logical_and": "all", "logical_or": "any"}


class Selection(np.lib.mixins.NDArrayOperatorsMixin):
    """x[mask]: `value` (x's whole shape) at the True elements of `mask` (value's dims from `at` on; x[:, m] has at 1)."""

    def __init__(self, value: Tracer, mask: Tracer, at: int = 0) -> None:
        self.value, self.mask, self.at = value, mask, at

    def _refused(self, *_: Any, **__: Any) -> Any:
        raise fail(UnsupportedError, _HINT)

    shape = size = property(_refused)
    __len__ = __iter__ = __array__ = __bool__ = __float__ = __int__ = __index__ = __getitem__ = _refused

    device = property(lambda self: "cpu")  # (array-API code asks it of every array)

    @property
    def ndim(self) -> int:
        return self.value.ndim - self.mask.ndim + 1

    @property
    def dtype(self) -> np.dtype:
        return self.value.dtype

    def _broadcast(self, other: Any) -> Any:
        """An operand beside the selection, of shape (*lead, count, *rest): a same-mask selection's value, or one that
        broadcasts over the selected elements (its count dim 1 or absent), its count dim made the mask's unit dims."""
        if isinstance(other, Selection):
            if other.mask._node is not self.mask._node or other.at != self.at:
                raise fail(UnsupportedError, f"combining selections by different masks is not supported; {_HINT}")
            return other.value
        shape, count = np.shape(other), np.ndim(other) - (self.ndim - self.at)  # other's dim at the selection's count dim
        if count < 0:
            return other
        if shape[count] != 1:
            raise fail(UnsupportedError, f"an operand of shape {shape} beside a mask selection: {_HINT}")
        return np.reshape(other, shape[:count] + (1,) * self.mask.ndim + shape[count + 1:])

    def __array_ufunc__(self, ufunc: np.ufunc, method: str, *inputs: Any, **kwargs: Any) -> Any:
        out = kwargs.pop("out", None)
        if method == "__call__" and not kwargs and out in (None, (self,)):
            value = ufunc(*(i.value if i is self else self._broadcast(i) for i in inputs))
            if out is None:
                return tuple(Selection(v, self.mask, self.at) for v in value) if isinstance(value, tuple) else Selection(value, self.mask, self.at)
            if not np.can_cast(value.dtype, self.dtype, "same_kind"):  # x[m] *= 1.5 of an int x: NumPy's in-place rule
                raise fail(TracingError, f"Cannot cast ufunc '{ufunc.__name__}' output from {value.dtype!r} to {self.dtype!r} "
                                         "with casting rule 'same_kind'")
            self.value = value.astype(self.dtype)
            return self
        if method == "reduce" and out is None and ufunc.__name__ in _UFUNCS:
            return self._reduce(_UFUNCS[ufunc.__name__], kwargs.get("axis", 0), kwargs.get("dtype"), None, kwargs.get("keepdims", False))
        return self._refused()

    def __array_function__(self, func: Any, types: Any, args: Any, kwargs: Any) -> Any:
        name = {"amax": "max", "amin": "min"}.get(func.__name__, func.__name__)
        if name in _REDUCTIONS and args and args[0] is self:
            return getattr(self, name)(*args[1:], **{k: v for k, v in kwargs.items() if v is not np._NoValue})
        if name in _ELEMENTWISE:  # np.where(x[m] > 0, 1.0, -1.0): on the values, the same selection
            value = func(*(self._broadcast(a) for a in args), **{k: self._broadcast(v) for k, v in kwargs.items()})
            return Selection(value, self.mask, self.at)
        return self._refused()

    def _reduce(self, name: str, axis: Any = None, dtype: Any = None, out: Any = None, keepdims: bool = False, ddof: int = 0) -> Tracer:
        """The reduction over the selected elements (axis None: all; `at`: the selection's count, per element of rest):
        x's reduction with where= the mask (max/min with the dtype's far end as `initial`: an empty selection gives
        it, where NumPy raises ValueError); var/std NumPy's two passes over the selected elements."""
        if out is not None or keepdims or axis not in (None, self.at, self.at - self.ndim):
            raise fail(UnsupportedError, f"{name} of a mask selection with out=, keepdims or axis={axis!r} is not supported; {_HINT}")
        value = self.value
        where = np.broadcast_to(spread(self.mask, self.at, value.ndim), value.shape)
        axes = None if axis is None else tuple(range(self.at, self.at + self.mask.ndim))
        if name in ("var", "std"):
            from .reductions import divide_count  # (reductions imports ufuncs, which import updates and indexing: this module)
            deviation = value - IMPLEMENTATIONS["mean"](value, axes, dtype, keepdims=True, where=where)
            count = IMPLEMENTATIONS["sum"](where, axes, "int64")
            squares = IMPLEMENTATIONS["sum"](deviation * deviation, axes, dtype, where=where)
            var = divide_count(squares, np.maximum(count - ddof, 0))
            return np.sqrt(var) if name == "std" else var
        if ddof:
            raise fail(TracingError, f"{name}() got an unexpected keyword argument 'ddof'")
        if name in ("max", "min"):
            if value.dtype.kind not in "iuf":
                raise fail(UnsupportedError, f"{name} of a mask selection of {value.dtype} is not supported")
            info = np.finfo(value.dtype) if value.dtype.kind == "f" else np.iinfo(value.dtype)
            far = (-np.inf if name == "max" else np.inf) if value.dtype.kind == "f" else info.min if name == "max" else info.max
            check_at_run_time(~IMPLEMENTATIONS["any"](self.mask, None), f"zero-size array to reduction operation "
                              f"{'maximum' if name == 'max' else 'minimum'} which has no identity (an empty mask selection)", EmptyReductionError)
            return IMPLEMENTATIONS[name](value, axes, initial=value.dtype.type(far), where=where)
        if name in ("any", "all"):  # the unselected elements as the identity, False (any) or True (all)
            return IMPLEMENTATIONS[name](np.where(where, value.astype("bool"), name == "all"), axes)
        return IMPLEMENTATIONS[name](value, axes, where=where, dtype=dtype)

    def sum(self, axis: Any = None, dtype: Any = None, out: Any = None, keepdims: bool = False) -> Tracer:
        return self._reduce("sum", axis, dtype, out, keepdims)

    def prod(self, axis: Any = None, dtype: Any = None, out: Any = None, keepdims: bool = False) -> Tracer:
        return self._reduce("prod", axis, dtype, out, keepdims)

    def mean(self, axis: Any = None, dtype: Any = None, out: Any = None, keepdims: bool = False) -> Tracer:
        return self._reduce("mean", axis, dtype, out, keepdims)

    def var(self, axis: Any = None, dtype: Any = None, out: Any = None, ddof: int = 0, keepdims: bool = False) -> Tracer:
        return self._reduce("var", axis, dtype, out, keepdims, ddof)

    def std(self, axis: Any = None, dtype: Any = None, out: Any = None, ddof: int = 0, keepdims: bool = False) -> Tracer:
        return self._reduce("std", axis, dtype, out, keepdims, ddof)

    def max(self, axis: Any = None, out: Any = None, keepdims: bool = False) -> Tracer:
        return self._reduce("max", axis, None, out, keepdims)

    def min(self, axis: Any = None, out: Any = None, keepdims: bool = False) -> Tracer:
        return self._reduce("min", axis, None, out, keepdims)

    def any(self, axis: Any = None, out: Any = None, keepdims: bool = False) -> Tracer:
        return self._reduce("any", axis, None, out, keepdims)

    def all(self, axis: Any = None, out: Any = None, keepdims: bool = False) -> Tracer:
        return self._reduce("all", axis, None, out, keepdims)

    def astype(self, dtype: Any, **kw: Any) -> Selection:
        return Selection(self.value.astype(dtype, **kw), self.mask, self.at)

    def copy(self) -> Selection:
        return self


def spread(mask: Tracer, at: int, ndim: int) -> Tracer:
    """The mask with unit dims around it, over an array of `ndim` dims whose dims from `at` on it indexes."""
    return reshape(mask, (1,) * at + mask.shape + (1,) * (ndim - at - mask.ndim))


def selected(x: Tracer, mask: Tracer, at: int = 0) -> Selection:
    """x[..., mask] for a mask over x's dims from `at` on (shapes checked as NumPy checks them)."""
    check_mask(x, mask, at)
    return Selection(IMPLEMENTATIONS["copy"](x), mask, at)


def check_mask(x: Tracer, mask: Tracer, at: int) -> None:
    """TracingError as NumPy's IndexError unless `mask` fits x's dims from `at` on."""
    if at + mask.ndim > x.ndim:
        raise fail(TracingError, f"too many indices for array: array is {x.ndim}-dimensional, but {at + mask.ndim} were indexed")
    for axis, (k, n) in enumerate(zip(mask.shape, x.shape[at:]), start=at):
        if k != n:
            raise fail(TracingError, f"boolean index did not match indexed array along axis {axis}; "
                                     f"size of axis is {n} but size of corresponding boolean axis is {k}")


def mask_view(x: Tracer, key: tuple, mask: Any) -> tuple[Tracer, int] | None:
    """For a key of one boolean mask (the entry `mask`, as a tracer) among slices, ints and an Ellipsis (x[m, 1:],
    x[:, m], x[m, 0]): the view of x the other entries take and its dim where the mask's dims start; None for keys
    whose selection NumPy lays out otherwise (ints apart from the mask with slices before it: x[0, :, m]) or others."""
    at = next(i for i, k in enumerate(key) if k is mask)
    rest = key[:at] + key[at + 1:]
    if not all(k is Ellipsis or isinstance(k, (slice, int, np.integer)) and not isinstance(k, bool) for k in rest):
        return None
    fill = x.ndim - mask.ndim - sum(1 for k in rest if k is not Ellipsis)
    if fill < 0 or sum(1 for k in rest if k is Ellipsis) > 1:
        raise fail(TracingError, f"too many indices for array: array is {x.ndim}-dimensional, but {x.ndim - fill} were indexed")
    def expand(part: tuple) -> tuple:
        return tuple(e for k in part for e in ((slice(None),) * fill if k is Ellipsis else (k,)))

    head, tail = expand(key[:at]), expand(key[at + 1:]) + ((slice(None),) * fill if Ellipsis not in rest else ())
    kinds = "".join("s" if isinstance(k, slice) else "a" for k in (*head, mask, *tail))  # slices, advanced entries
    start = sum(isinstance(k, slice) for k in head)
    if "s" in kinds.strip("s") and start:  # the ints and the mask not one run: NumPy puts the count first
        return None
    view = basic_index(x, head + (slice(None),) * mask.ndim + tail)
    check_mask(view, mask, start)
    return view, start


def masked_value(x: Tracer, selection: Selection) -> Tracer:
    """x's value with the selection's where its mask is True (cast to x's dtype by the store)."""
    return np.where(spread(selection.mask, selection.at, x.ndim), selection.value, IMPLEMENTATIONS["copy"](x))


@implements("piecewise")
def piecewise(x: Any, condlist: Any, funclist: Any, *args: Any, **kw: Any) -> Tracer:
    """np.piecewise: each function called on the selection x[cond] (elementwise over x's shape, a reduction in it over
    the selected elements), its result written where cond holds (cast to x's dtype), later pieces winning; a
    constant written as is; with one function more than conditions, the last where none holds. (Not the NumPy
    functions of a selection that need its length, as everywhere a Selection goes.)"""
    trace = trace_of([x, condlist])
    x = as_tracer(trace, x)
    first = condlist[0] if not np.isscalar(condlist) else None  # (NumPy's test: a list of conditions, or one)
    if first is None or (not isinstance(first, (list, np.ndarray)) and not (isinstance(first, Tracer) and first.ndim) and x.ndim != 0):
        condlist = [condlist]
    conds = [as_tracer(trace, c if isinstance(c, Tracer) else np.asarray(c)).astype("bool") for c in condlist]
    if any(c.shape != x.shape for c in conds):
        raise fail(UnsupportedError, f"np.piecewise: conditions of shapes {[c.shape for c in conds]} for x of shape {x.shape} "
                                     "(conditions of x's shape are supported)")
    if len(conds) == len(funclist) - 1:
        conds.append(~IMPLEMENTATIONS["any"](np.stack(conds), 0))
    elif len(conds) != len(funclist):
        raise fail(TracingError, f"with {len(conds)} condition(s), either {len(conds)} or {len(conds) + 1} functions are expected")
    y = np.zeros_like(x)
    for cond, func in zip(conds, funclist):
        checks = len(trace.checks)
        value = func(Selection(IMPLEMENTATIONS["copy"](x), cond), *args, **kw) if callable(func) else func
        selects = IMPLEMENTATIONS["any"](cond, None)  # NumPy calls no function on an empty selection: its checks need one
        trace.checks[checks:] = [((result(trace, flag) & selects)._node, *rest) for flag, *rest in trace.checks[checks:]]
        if isinstance(value, Selection):
            if value.mask._node is not cond._node:
                raise fail(UnsupportedError, f"np.piecewise: a function's result selected by another mask; {_HINT}")
            value = value.value
        elif np.ndim(value):
            raise fail(UnsupportedError, f"np.piecewise: a function returned an array of shape {np.shape(value)} (one value "
                                         f"per selected element, or one value, is supported); {_HINT}")
        y = np.where(cond, value.astype(x.dtype) if isinstance(value, Tracer) else np.asarray(value).astype(x.dtype), y)
    return y
