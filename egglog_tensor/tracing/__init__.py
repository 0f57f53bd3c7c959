"""Tracing: run the user's NumPy function on Tracer objects and record a typed Node DAG.

`core.py` holds the Tracer and the registry of NumPy functions; each module after it implements
one part of NumPy's surface and registers it (`@implements("name")`): ufuncs.py and elementwise.py,
shapes.py (views and shapes), reductions.py, statistics.py, linalg.py, conversions.py (np.asarray, np.float32(x)...), rearrange.py, indexing.py (gathers), creation.py (arrays made in the kernel: np.zeros,
arange, eye...), einsum.py, updates.py (in-place updates), bitviews.py (x.view(dtype)), packbits.py (packbits, unpackbits), series.py (numpy.polynomial series values), scans.py (cumsum, cumprod, ufunc.accumulate), convolution.py (convolve, correlate), sorting.py (sort, argsort, median, quantile), solve.py (np.linalg.solve, inv, det, slogdet, cholesky), orthogonal.py (qr, eigh, svd and what builds on the SVD),
arrayapi.py (NumPy 2's array-API spellings: vecdot, matrix_transpose, linalg.vector_norm...), outs.py (out= of reductions and scans, wrapping them: imported last). A new NumPy function goes in the module of
its kind, or a new module imported here.
"""

from __future__ import annotations

import functools
import linecache
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..errors import EgglogTensorError, TracingError, UnsupportedError
from ..graph import Builder, Node, topological
from ..spec import ArgSpec
from . import arrayapi, assembly, bitviews, calculus, comparisons, conversions, convolution, creation, distributions, einsum, elementwise, held, iir, indexing, interpolation, linalg, orthogonal, packbits, polynomials, rearrange, reductions, scans, scatter, scipy_linalg, scipy_morphology, scipy_ndimage, scipy_signal, scipy_spatial, scipy_special, scipy_stats, selections, series, shapes, solve, sorting, splines, statistics, ufunc_outer, ufuncs, updates, vectorized  # noqa: F401  (they register their functions)
from . import outs  # noqa: F401,E402  (after the others: it wraps their functions' out=)
from . import sequences  # noqa: F401,E402  (after outs: it wraps the functions outs made)
from .core import _PACKAGE_DIR, Guard, Trace, Tracer, as_tracer, fail, user_location

__all__ = ["Guard", "Tracer", "function_name", "narrowed_int_args", "trace_function", "user_location"]


def narrowed_int_args(outputs: Sequence[Node], specs: Sequence[ArgSpec], names: Sequence[str]) -> tuple[tuple[int, str], ...]:
    """(argument index, dtype) of each Python-int argument the program converts to a narrower integer
    dtype (`int32_array + n`): NumPy raises OverflowError for a value outside it, so a call checks."""
    index = {n: i for i, (n, s) in enumerate(zip(names, specs, strict=True)) if s.weak is int}
    found = {(index[n.inputs[0].attr("name")], n.dtype) for n in topological(list(outputs))
             if n.op == "astype" and n.dtype.lstrip("u").startswith("int") and n.inputs[0].op == "arg" and n.inputs[0].attr("name") in index}
    return tuple(sorted(found))


def function_name(fn: Callable[..., Any]) -> str:
    """A kernel function's name for messages: `__name__`, `partial(name)` for a functools.partial, else its type's name."""
    if isinstance(fn, functools.partial):
        return f"partial({function_name(fn.func)})"
    return getattr(fn, "__name__", None) or type(fn).__name__


def _compiled_refusal(error: BaseException) -> tuple[str, str] | None:
    """('file:line: code', the traced arguments) when `error` came out of compiled code (C, Cython) that a Python
    frame called with traced arrays: its message names the Tracer, or it was raised by no Python `raise` in a frame
    of an installed library (site-packages: SciPy's) holding tracers. None otherwise (the user's own errors)."""
    frames = []  # (Cython's frames follow the Python frame that called it: a .pyx file, "<stringsource>")
    tb = error.__traceback__
    while tb is not None:
        frames.append(tb)
        tb = tb.tb_next
    python = [f for f in frames if f.tb_frame.f_code.co_filename.endswith(".py")]
    if not python or python[-1].tb_frame.f_code.co_filename.startswith(_PACKAGE_DIR):
        return None
    tb, compiled = python[-1], python[-1] is not frames[-1]
    code = tb.tb_frame.f_code
    line = linecache.getline(code.co_filename, tb.tb_lineno).strip()
    traced = [name for name, value in tb.tb_frame.f_locals.items() if isinstance(value, Tracer)]
    library = creation.in_library(code.co_filename)
    if "Tracer" not in str(error) and (not traced or not library or (not compiled and line.startswith(("raise", "assert")))):
        return None
    return f"{code.co_filename}:{tb.tb_lineno}: {line}", ", ".join(traced) or "a Tracer"


def trace_function(fn: Callable[..., Any], names: Sequence[str], specs: Sequence[ArgSpec],
                   captured: list[tuple[str, np.ndarray]] | None = None, checks: list[tuple[type[EgglogTensorError], str]] | None = None,
                   written: list[str] | None = None, locations: dict[Node, tuple[str, int]] | None = None,
                   guards: list[Guard] | None = None) -> tuple[list[Node], bool]:
    """Trace `fn` on tracers for `specs`; returns the output nodes and whether it returned a tuple,
    and appends to `captured` the (name, array) of each large captured array, a hidden argument.
    The final value of each argument written into follows the user's outputs (its name appended to
    `written`: the call copies it into the caller's array); then the run-time checks (tracing/indexing.py),
    0-d bool outputs (true: fail) whose errors and messages are appended to `checks`. `locations` receives the
    user's (file, line) that made each node; `guards` the data values tracing took as Python values (guards.py)."""
    held_arrays: tuple[held.HeldArrayIndexed, ...] = ()  # NumPy arrays indexed with traced indices: traced (tracing/held.py)
    sites: frozenset = frozenset()  # calls making arrays of constants that meet traced values: traced (creation.py)
    while True:
        trace = Trace(Builder(), tuple(names))
        nodes = [trace.make("arg", (), (name, spec.shape, spec.dtype, spec.layout)) for name, spec in zip(names, specs, strict=True)]
        tracers = [Tracer(trace, node, spec.weak, view=True) for node, spec in zip(nodes, specs)]
        for tracer, spec in zip(tracers, specs):
            tracer._order = spec.layout if spec.layout != "strided" else None
        try:
            with creation.tracing(trace, sites), creation.rebound(fn), held.substituted(trace, held_arrays):
                result = creation.replaced(fn)(*tracers)
            break
        except creation.ConcreteArrayUsed as e:
            sites |= {e.site}
        except held.HeldArrayIndexed as e:
            if len(held_arrays) == held.MAX_ARRAYS or any(h.array is e.array for h in held_arrays):
                raise UnsupportedError(e.args[0]) from None
            held_arrays += (e.with_traceback(None),)
        except RecursionError:
            raise fail(TracingError, f"recursion limit hit while tracing {function_name(fn)}") from None
        except (TypeError, ValueError) as e:
            refused = _compiled_refusal(e)
            if refused is None:  # (the user's own errors pass through as raised)
                raise
            raise UnsupportedError(f"compiled code (C, Cython) called with traced arrays ({refused[1]}) raised "
                                   f"{type(e).__name__}: {e}\n  such code cannot be traced: call it outside the kernel, or "
                                   f"write what it computes with NumPy\n  at {refused[0]}") from None
    is_tuple = isinstance(result, (tuple, list))
    results = list(result) if is_tuple else [] if result is None and trace.written else [result]
    outputs = []
    for i, r in enumerate(results):
        if isinstance(r, selections.Selection):
            r._refused()  # (a mask selection's shape depends on the data)
        if isinstance(r, np.ndarray) or (isinstance(r, (bool, int, float, np.generic)) and np.ndim(r) == 0):  # a constant
            r = as_tracer(trace, r)
        if not isinstance(r, Tracer):
            where = f"output {i}" if is_tuple else "the result"
            raise TracingError(
                f"{function_name(fn)} must return arrays (or a tuple of arrays); "
                f"{where} is {type(r).__name__}"
            )
        outputs.append(r._node)
    if trace.captured and captured is None:
        raise TracingError(f"{function_name(fn)} captures NumPy arrays larger than the constants a kernel embeds; "
                           "pass them as arguments")
    if captured is not None:
        captured.extend((node.attr("name"), array) for node, array in trace.captured.values())
    changed = [(n, t._node) for n, t, node in zip(names, tracers, nodes) if any(w is t for w in trace.written) and t._node is not node]
    if written is None and changed:
        raise TracingError(f"{function_name(fn)} writes into its argument(s) {', '.join(n for n, _ in changed)}, "
                           "which this way of tracing cannot hand back")
    if written is not None:
        written.extend(n for n, _ in changed)
    if checks is not None:
        checks.extend((error, message) for _, message, error in trace.checks)
    if guards is not None:
        guards.extend(trace.guards)
    if locations is not None:  # (not the arguments': the caller's line made them, no line of fn)
        locations.update((node, line) for node, line in trace.locations.items() if node.op != "arg")
    return outputs + [node for _, node in changed] + [flag for flag, _, _ in trace.checks], is_tuple
