"""Values made of constants alone, computed with NumPy while tracing: np.ones(3) / 3, np.eye(3, dtype=bool), a reversed
np.ones((2, 3)) are traced arrays (made in the kernel: tracing/creation.py), and a library that needs their values
(ndimage's weights and footprints, a structuring element) converts them with np.asarray. Such a value is computed here
from its nodes when each is a leaf, a view or an elementwise NumPy ufunc; core.known_value falls back to the call's
evaluator (compiled) for any other op.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..graph import Node, topological

LIMIT = 1 << 16  # elements of a value computed here at most (a larger one stays traced)
_NUMPY_DTYPES = frozenset(np.sctypeDict) - {"bfloat16"}


def _iota(attrs: tuple) -> np.ndarray:
    shape, axis, dtype = attrs
    line = np.arange(shape[axis], dtype=dtype).reshape([-1 if a == axis else 1 for a in range(len(shape))])
    return np.broadcast_to(line, tuple(shape))


def _sliced(x: np.ndarray, attrs: tuple) -> np.ndarray:
    start, step, size = attrs
    return x[np.ix_(*(b + s * np.arange(n) for b, s, n in zip(start, step, size, strict=True)))]


_LEAVES: dict[str, Callable[[tuple], np.ndarray]] = {
    "const": lambda attrs: np.array(attrs[0], dtype=attrs[1]),
    "array": lambda attrs: np.frombuffer(bytes.fromhex(attrs[0]), dtype=attrs[2]).reshape(attrs[1]),
    "iota": _iota,
}
_VIEWS: dict[str, Callable[[np.ndarray, tuple], np.ndarray]] = {
    "broadcast_to": lambda x, attrs: np.broadcast_to(x, tuple(attrs[0])),
    "reshape": lambda x, attrs: x.reshape(tuple(attrs[0])),
    "transpose": lambda x, attrs: x.transpose(tuple(attrs[0])),
    "slice": _sliced,
    "astype": lambda x, attrs: x,  # (every value is cast to its node's dtype)
}


def constant_value(node: Node) -> np.ndarray | None:
    """node's value if it is made of constants alone through leaves, views and NumPy ufuncs (at most LIMIT elements
    each); None otherwise."""
    values: dict[int, np.ndarray] = {}
    for n in topological([node]):
        if n.size > LIMIT:
            return None
        ins = [values[id(i)] for i in n.inputs]
        if n.op in _LEAVES:
            value = _LEAVES[n.op](n.attrs)
        elif n.op in _VIEWS:
            value = _VIEWS[n.op](ins[0], n.attrs)
        elif n.op == "where":
            value = np.where(*ins)
        elif isinstance(ufunc := getattr(np, n.op, None), np.ufunc) and ufunc.nin == len(ins) and ufunc.nout == 1 and not n.attrs:
            with np.errstate(all="ignore"):  # (the trace cast the operands to the op's dtype: NumPy's loop is the kernel's)
                value = ufunc(*ins)
        else:
            return None
        if n.dtype not in _NUMPY_DTYPES:
            return None
        values[id(n)] = np.asarray(value).astype(n.dtype, copy=False)
    return values[id(node)]
