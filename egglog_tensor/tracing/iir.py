"""scipy.signal's recursive filters in a kernel: `lfilter` (and its FIR case), `lfilter_zi`, `filtfilt` (method "pad"),
`sosfilt`, `sosfilt_zi`, `sosfiltfilt`. SciPy runs them in C, which traced arrays cannot reach; while a kernel is traced
(and scipy.signal was imported) they are replaced in scipy.signal by these when an argument is traced
(creation.replace_foreign_while_tracing, as tracing/scipy_signal.py), and in scipy.signal._signaltools, whose own
functions call them.

An IIR filter is the `recurrence` op (ops.py, lowering/recurrence.py) along the filtered axis: lfilter's direct form II transposed with b and a padded to one length and divided by a[0] as SciPy's C code
does, or sosfilt's sections in cascade; each in SciPy's order of operations, so results are SciPy's up to the
coefficients' own rounding. The coefficients are operands: traced ones are fine (a[0] == 0, sos[:, 3] != 1 raise
DataValueError after the call). With one denominator coefficient lfilter is SciPy's FIR path: the full convolution
with b / a[0] (shifted slices, which fuse), zi added to its first len(b) - 1 outputs. The computation dtype is the
arguments' promoted one, float32 or float64 (SciPy's long double and complex are not supported; integers promote to
float64 as in SciPy, and alone raise as SciPy's NotImplementedError does). filtfilt and sosfiltfilt are SciPy's
compositions (its odd/even/constant extensions: scipy.signal._arraytools on traced arrays); Gustafsson's method
(filtfilt(method="gust")) is refused.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import numpy as np

from ..errors import DataValueError, UnsupportedError
from ..ops import RECURRENCE_FORMS
from .core import Tracer, as_tracer, check_at_run_time, fail, lift, result, trace_of, traced_or_ndarray
from .creation import replace_foreign_while_tracing, traced_or_original
from .statistics import _filled


def _dtype(name: str, *values: Any) -> np.dtype:
    """The promoted dtype of the arguments given (None: left out), SciPy's computation dtype; float32 or float64."""
    dtype = np.result_type(*(v.dtype if isinstance(v, Tracer) else np.asarray(v).dtype for v in values if v is not None))
    if dtype.char not in "fd":
        raise fail(UnsupportedError, f"scipy.signal.{name}: input type '{dtype}' not supported in a kernel (float32, float64 are)")
    return dtype


def _vector(name: str, v: Any, what: str, dtype: Any = None) -> Any:
    """A non-empty 1-D coefficient vector (a traced one or an ndarray), in `dtype` when given."""
    v = traced_or_ndarray(v, dtype)
    v = v.reshape(1) if v.ndim == 0 else v
    if v.ndim != 1 or v.size == 0:
        raise fail(DataValueError, f"scipy.signal.{name}: parameter {what} is not a non-empty 1d array, since {what}.shape={v.shape}")
    return v


def _padded(v: Any, n: int) -> Any:
    return v if v.shape[0] == n else np.concatenate([v, np.zeros(n - v.shape[0], dtype=v.dtype)])


def _nonzero_leading(name: str, a: Any) -> None:
    """SciPy's refusal of a[0] == 0: while tracing for a constant a, after the call for a traced one."""
    message = f"scipy.signal.{name}: filter coefficient a[0] == 0 not supported"
    if isinstance(a, Tracer):
        check_at_run_time(a[0] == 0, message, DataValueError, of="a ")
    elif a[0] == 0:
        raise fail(DataValueError, message)


def _filtered(x: Tracer, coefficients: Any, state: Any, form: str, final: bool, axis: int) -> tuple[Tracer, Tracer]:
    """The recurrence op along `axis` of x from `state` (x's shape without axis, sections, order): the outputs (x's
    shape) and the final states (x's shape with sections * order along axis; nothing when not `final`), in x's dtype."""
    trace = x._trace
    sections, _, taps = coefficients.shape
    columns = sections * (taps - 1) if final else 0
    nodes = (x._node, lift(trace, coefficients, x.dtype.name), lift(trace, state, x.dtype.name))
    out = result(trace, trace.make("recurrence", nodes, (RECURRENCE_FORMS.index(form), columns, axis)))
    n = x.shape[axis]
    return out[(slice(None),) * axis + (slice(0, n),)], out[(slice(None),) * axis + (slice(n, None),)]


def _initial(x: Tracer, zi: Any, order: int, axis: int) -> Any:
    """lfilter's zi (x's shape with `order` along axis; 1 broadcasts on the other axes, as SciPy's C code expands it) as
    the op's state (x's shape without axis, 1, order), or zeros."""
    rest = x.shape[:axis] + x.shape[axis + 1:]
    if zi is None:
        return _filled(x._trace, 0, x.dtype.name, rest + (1, order))
    zi = traced_or_ndarray(zi, x.dtype)
    expected = x.shape[:axis] + (order,) + x.shape[axis + 1:]
    if zi.ndim != x.ndim or any(z != e and (d == axis or z != 1) for d, (z, e) in enumerate(zip(zi.shape, expected))):
        raise fail(DataValueError, f"scipy.signal.lfilter: unexpected shape for zi: expected {expected}, found {zi.shape}")
    return np.broadcast_to(np.moveaxis(zi, axis, -1), rest + (order,)).reshape(rest + (1, order))


def _fir(b: Any, x: Any, zi: Any) -> tuple[Any, Any]:
    """SciPy's lfilter with one denominator coefficient (b already divided by it) along x's last axis: the full
    convolution, zi added to its first len(b) - 1 outputs; (its first n outputs, the rest)."""
    m, n = b.shape[0], x.shape[-1]
    zeros = np.zeros(x.shape[:-1] + (m - 1,), dtype=x.dtype)
    padded = np.concatenate([zeros, x, zeros], axis=-1) if m > 1 else x
    full = sum(padded[..., m - 1 - k:m - 1 - k + n + m - 1] * b[k] for k in range(m))
    if zi is not None and m > 1:
        full = np.concatenate([full[..., :m - 1] + zi.reshape(x.shape[:-1] + (m - 1,)), full[..., m - 1:]], axis=-1)
    return full[..., :n], full[..., n:]


def lfilter(b: Any, a: Any, x: Any, axis: int = -1, zi: Any = None) -> Any:
    """y (and zf when zi is given) of the filter b / a along `axis` of x: SciPy's direct form II transposed."""
    b, a = _vector("lfilter", b, "b"), _vector("lfilter", a, "a")
    dtype = _dtype("lfilter", b, a, x, zi)
    x = as_tracer(trace_of([b, a, x, zi]), traced_or_ndarray(x, dtype))
    if x.ndim == 0:
        raise fail(DataValueError, "scipy.signal.lfilter: x must be at least 1-D")
    axis = int(axis) % x.ndim
    b, a = b.astype(dtype), a.astype(dtype)
    order = max(a.shape[0], b.shape[0]) - 1
    state = _initial(x, zi, order, axis)
    if a.shape[0] == 1:  # (SciPy's FIR path, which divides by a zero a[0])
        y, zf = _fir(b / a[0], np.moveaxis(x, axis, -1), None if zi is None else state)
        y, zf = np.moveaxis(y, -1, axis), np.moveaxis(zf, -1, axis)
    else:
        _nonzero_leading("lfilter", a)
        coefficients = np.stack([_padded(b, order + 1) / a[0], _padded(a, order + 1) / a[0]])[None]
        y, zf = _filtered(x, coefficients, state, "lfilter", zi is not None, axis)
    return y if zi is None else (y, zf)


def lfilter_zi(b: Any, a: Any) -> Any:
    """The state of lfilter's step response at rest (SciPy's: a's leading zeros dropped, normalized by a[0], the system
    (I - companion(a).T) zi = b[1:] - a[1:] b[0] solved)."""
    b, a = _vector("lfilter_zi", b, "b"), _vector("lfilter_zi", a, "a")
    while a.shape[0] > 1 and bool(a[0] == 0.0):  # (a guard for a traced a)
        a = a[1:]
    b, a = b / a[0], a / a[0]
    n = max(a.shape[0], b.shape[0])
    b, a = _padded(b, n), _padded(a, n)
    dtype = np.result_type(a.dtype, b.dtype)
    companion = np.concatenate([-a[None, 1:], np.eye(n - 2, n - 1, dtype=dtype)])
    return np.linalg.solve(np.eye(n - 1, dtype=dtype) - companion.T.astype(dtype), (b[1:] - a[1:] * b[0]).astype(dtype))


def _private(module: str, name: str) -> Callable[..., Any]:
    """SciPy's own helper `name` of scipy.signal.<module> (plain NumPy code, which traced arrays run)."""
    return getattr(sys.modules[f"scipy.signal.{module}"], name)


def filtfilt(b: Any, a: Any, x: Any, axis: int = -1, padtype: Any = "odd", padlen: Any = None, method: str = "pad",
             irlen: Any = None) -> Any:
    """lfilter forward and backward along `axis` from the step response's state at each end of x extended by padlen
    (SciPy's composition, method "pad")."""
    if method not in ("pad", "gust"):
        raise fail(DataValueError, "scipy.signal.filtfilt: method must be 'pad' or 'gust'.")
    if method == "gust":
        raise fail(UnsupportedError, "scipy.signal.filtfilt(method='gust') is not supported in a kernel (Gustafsson's initial "
                                     "conditions come from a least-squares solve per row); use method='pad'")
    b, a = _vector("filtfilt", b, "b"), _vector("filtfilt", a, "a")
    x = traced_or_ndarray(x)
    edge, ext = _private("_signaltools", "_validate_pad")(padtype, padlen, x, axis, ntaps=max(a.shape[0], b.shape[0]))
    zi = _step_state(b, a)
    shape = [1] * x.ndim
    shape[axis] = zi.size
    zi = zi.reshape(shape)
    return _forward_backward(lambda v, state: lfilter(b, a, v, axis=axis, zi=state), ext, zi, axis, edge)


def _step_state(b: Any, a: Any) -> Any:
    """lfilter_zi: ours for traced coefficients, SciPy's for constants."""
    if isinstance(b, Tracer) or isinstance(a, Tracer):
        return lfilter_zi(b, a)
    return _private("_signaltools", "lfilter_zi")(b, a)


def _forward_backward(run: Callable[[Any, Any], tuple[Any, Any]], ext: Any, zi: Any, axis: int, edge: int) -> Any:
    """filtfilt's and sosfiltfilt's passes: `run` forward from zi times the first sample, backward from zi times the
    last output, reversed, the extension cut off."""
    ax = _private("_arraytools", "axis_slice")
    y, _ = run(ext, zi * ax(ext, stop=1, axis=axis))
    y, _ = run(ax(y, step=-1, axis=axis), zi * ax(y, start=-1, axis=axis))
    y = ax(y, step=-1, axis=axis)
    return ax(y, start=edge, stop=-edge, axis=axis) if edge > 0 else y


def _sections(name: str, sos: Any) -> Any:
    """sos of shape (n_sections, 6) with sos[:, 3] == 1 (after the call for a traced sos)."""
    sos = traced_or_ndarray(sos)
    sos = sos.reshape(1, -1) if sos.ndim == 1 else sos
    if sos.ndim != 2 or sos.shape[1] != 6:
        raise fail(DataValueError, f"scipy.signal.{name}: sos array must be shape (n_sections, 6)")
    message = f"scipy.signal.{name}: sos[:, 3] should be all ones"
    if isinstance(sos, Tracer):
        check_at_run_time(sos[:, 3] != 1, message, DataValueError, of="sos ")
    elif not np.all(sos[:, 3] == 1):
        raise fail(DataValueError, message)
    return sos


def sosfilt(sos: Any, x: Any, axis: int = -1, zi: Any = None) -> Any:
    """y (and zf when zi is given) of the second-order sections in cascade along `axis` of x: SciPy's sosfilt."""
    sos = _sections("sosfilt", sos)
    dtype = _dtype("sosfilt", sos, x, zi)
    x = traced_or_ndarray(x, dtype)
    if x.ndim == 0:
        raise fail(DataValueError, "scipy.signal.sosfilt: x must be at least 1-D")
    axis = int(axis) % x.ndim
    sections = sos.shape[0]
    expected = (sections,) + tuple(2 if d == axis else n for d, n in enumerate(x.shape))
    x = as_tracer(trace_of([sos, x, zi]), x)
    rest = x.shape[:axis] + x.shape[axis + 1:]
    if zi is None:
        state = _filled(x._trace, 0, dtype.name, rest + (sections, 2))
    else:
        zi = traced_or_ndarray(zi, dtype)
        if zi.shape != expected:
            raise fail(DataValueError, f"scipy.signal.sosfilt: invalid zi shape. With axis={axis}, an input with shape {x.shape}, and an "
                                       f"sos array with {sections} sections, zi must have shape {expected}, got {zi.shape}.")
        state = np.moveaxis(zi, (0, axis + 1), (-2, -1))
    y, zf = _filtered(x, sos.astype(dtype).reshape(sections, 2, 3), state, "sosfilt", zi is not None, axis)
    if zi is None:
        return y
    return y, np.moveaxis(zf.reshape(x.shape[:axis] + (sections, 2) + x.shape[axis + 1:]), axis, 0)


def sosfilt_zi(sos: Any) -> Any:
    """Each section's lfilter_zi scaled by the DC gain of the sections before it (SciPy's)."""
    sos = traced_or_ndarray(sos)
    if sos.ndim != 2 or sos.shape[1] != 6:
        raise fail(DataValueError, "scipy.signal.sosfilt_zi: sos must be shape (n_sections, 6)")
    sos = sos.astype(np.float64) if sos.dtype.kind in "biu" else sos
    rows, scale = [], 1.0
    for section in range(sos.shape[0]):
        b, a = sos[section, :3], sos[section, 3:]
        rows.append(scale * lfilter_zi(b, a))
        scale = scale * (np.sum(b) / np.sum(a))
    return np.stack(rows).astype(sos.dtype)


def sosfiltfilt(sos: Any, x: Any, axis: int = -1, padtype: Any = "odd", padlen: Any = None) -> Any:
    """sosfilt forward and backward along `axis` (SciPy's composition: its default padlen from the sections' zeros and
    poles at the origin, a guard for a traced sos)."""
    sos = _sections("sosfiltfilt", sos)
    x = traced_or_ndarray(x)
    sections = sos.shape[0]
    ntaps = 2 * sections + 1 - int(min(np.sum(sos[:, 2] == 0), np.sum(sos[:, 5] == 0)))
    edge, ext = _private("_signaltools", "_validate_pad")(padtype, padlen, x, axis, ntaps=ntaps)
    zi = sosfilt_zi(sos) if isinstance(sos, Tracer) else _private("_signaltools", "sosfilt_zi")(sos)
    shape = [1] * x.ndim
    shape[axis] = 2
    zi = zi.reshape([sections] + shape)
    return _forward_backward(lambda v, state: sosfilt(sos, v, axis=axis, zi=state), ext, zi, axis, edge)


FUNCTIONS: dict[str, Callable[..., Any]] = {fn.__name__: fn for fn in (
    lfilter, lfilter_zi, filtfilt, sosfilt, sosfilt_zi, sosfiltfilt)}


for _name, _ours in FUNCTIONS.items():
    for _module in ("scipy.signal", "scipy.signal._signaltools"):
        replace_foreign_while_tracing(f"{_module}:{_name}", traced_or_original(_ours))
for _name in ("lfilter", "sosfilt"):  # (bound at its import by scipy.signal's spline filters: cspline1d, qspline1d...)
    replace_foreign_while_tracing(f"scipy.signal._spline_filters:{_name}", traced_or_original(FUNCTIONS[_name]))
