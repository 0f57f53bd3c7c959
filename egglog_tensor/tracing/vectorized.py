"""np.vectorize in a kernel: the function is traced once on the whole arrays, broadcast together (as
jax.numpy.vectorize does), which computes what NumPy computes element by element when the function is made of
elementwise operations. What only one element at a time can do is refused, naming why: Python control flow or
`math` calls on a value (the trace's ConcreteValueError), or an operation across elements between the arguments
and the result (a reduction, a view, a gather, a matmul: per element it would see one value)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import ConcreteValueError, TracingError, UnsupportedError
from ..graph import Node, topological
from ..ops import OPS, Kind
from .core import Tracer, as_array, as_tracer, astype, fail, trace_of
from .creation import replace_foreign_while_tracing, traced_or_original
from .shapes import broadcast_to

_ACROSS = Kind.REDUCTION | Kind.CONTRACTION | Kind.VIEW | Kind.SHAPE | Kind.INDEX | Kind.SCAN | Kind.SORT | Kind.FACTOR | Kind.RECURRENCE


def _across_elements(result: Node, inputs: set[int]) -> str | None:
    """The first op computed from the inputs (node ids) on the way to `result` that mixes elements, or None."""
    computed = set(inputs)
    for node in topological([result]):
        if id(node) in inputs or not any(id(i) in computed for i in node.inputs):
            continue
        computed.add(id(node))
        kind = OPS[node.op].kind if node.op in OPS else Kind(0)
        if kind & _ACROSS or node.op in ("iota", "gather", "update_slice", "scatter_add", "array", "searchsorted"):
            return node.op
    return None


def vectorize_call(self: np.vectorize, *args: Any, **kwargs: Any) -> Any:
    """np.vectorize(pyfunc)(*args): pyfunc of the broadcast arrays (module docstring), each output cast to `otypes`."""
    name = getattr(self.pyfunc, "__name__", "the function")
    if self.signature is not None:
        raise fail(UnsupportedError, f"np.vectorize({name}, signature={self.signature!r}) is not supported in a kernel "
                                     "(elementwise functions are: without a signature)")
    trace = trace_of([*args, *kwargs.values()])
    positions = [i for i in range(len(args)) if i not in self.excluded]
    keys = [k for k in kwargs if k not in self.excluded]
    arrays = [as_array(trace, args[i]) for i in positions] + [as_array(trace, kwargs[k]) for k in keys]
    shape = np.broadcast_shapes(*(a.shape for a in arrays))
    if not self.otypes and 0 in shape:
        raise fail(TracingError, "cannot call `vectorize` on size 0 inputs unless `otypes` is set")
    spread = [broadcast_to(a, shape) for a in arrays]
    given, named = list(args), dict(kwargs)
    for i, a in zip(positions + keys, spread, strict=True):
        if isinstance(i, int):
            given[i] = a
        else:
            named[i] = a
    try:
        out = self.pyfunc(*given, **named)
    except ConcreteValueError as error:
        raise fail(UnsupportedError, f"np.vectorize({name}): a kernel traces the function once on whole arrays, so its "
                                     f"Python control flow or math-module calls on a value cannot run ({error.args[0].splitlines()[0]}); "
                                     "write it with np.where / np.select and NumPy's ufuncs") from None
    outs = out if isinstance(out, tuple) else (out,)
    inputs = {id(a._node) for a in spread}
    results = []
    for k, value in enumerate(outs):
        value = as_tracer(trace, value) if isinstance(value, Tracer) else as_array(trace, value)
        mixed = _across_elements(value._node, inputs)
        if mixed is not None or value.shape not in (shape, ()):
            why = f"its result has shape {value.shape}" if mixed is None else f"it computes {mixed} of its argument(s)"
            raise fail(UnsupportedError, f"np.vectorize({name}): {why}, where each element's call would see one value: a "
                                         "kernel traces the function once on whole arrays (elementwise functions only)")
        value = broadcast_to(value, shape)
        results.append(astype(value, np.dtype(self.otypes[k]).name) if self.otypes else value)
    return tuple(results) if isinstance(out, tuple) else results[0]


replace_foreign_while_tracing("numpy:vectorize.__call__", traced_or_original(vectorize_call))
