"""The typed tensor DAG: nodes with static shapes and dtypes, and the op table that infers them.

The same inference serves the tracer (to reject bad programs early), the egglog cost model (to
price a candidate e-node from its children) and the MLIR emitter (to type every value).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from .errors import TracingError, UnsupportedError

DTYPES = ("float32", "float64", "int32", "int64", "bool")
FLOAT_DTYPES = ("float32", "float64")

UNARY = (
    "negative", "absolute", "exp", "log", "sqrt", "tanh", "sin", "cos",
    "square", "reciprocal", "sign", "logical_not",
)  # fmt: skip
BINARY = (
    "add", "subtract", "multiply", "divide", "floor_divide", "remainder", "power",
    "maximum", "minimum", "arctan2",
    "equal", "not_equal", "less", "less_equal", "greater", "greater_equal",
    "logical_and", "logical_or", "logical_xor",
)  # fmt: skip
PREDICATES = ("equal", "not_equal", "less", "less_equal", "greater", "greater_equal")
LOGICAL = ("logical_and", "logical_or", "logical_xor", "logical_not")
ELEMENTWISE = frozenset(UNARY) | frozenset(BINARY) | {"where", "astype"}  # fuse into one loop body
REDUCTIONS = ("sum", "max", "min", "prod")
VIEWS = ("transpose", "broadcast_to", "slice", "diagonal")  # plus reshape when it only moves unit dims
# Transcendental ops get a higher price in the cost model.
TRANSCENDENTAL = ("exp", "log", "sqrt", "tanh", "sin", "cos", "arctan2", "power")

Shape = tuple[int, ...]


@dataclass(frozen=True, eq=False)
class Node:
    """One value of the program: op name, tensor inputs, static attributes, inferred shape/dtype."""

    op: str
    inputs: tuple[Node, ...]
    attrs: tuple[Any, ...]
    shape: Shape
    dtype: str

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    def __repr__(self) -> str:
        return f"Node({self.op}, {self.shape}, {self.dtype})"


def broadcast_shapes(*shapes: Shape) -> Shape:
    """NumPy broadcasting of static shapes; raises TracingError on mismatch."""
    rank = max((len(s) for s in shapes), default=0)
    out = []
    for i in range(rank):
        dims = {s[len(s) - rank + i] for s in shapes if len(s) - rank + i >= 0}
        dims.discard(1)
        if len(dims) > 1:
            raise TracingError(f"shapes {' and '.join(map(str, shapes))} cannot be broadcast together")
        out.append(dims.pop() if dims else 1)
    return tuple(out)


def is_unit_reshape(src: Shape, dst: Shape) -> bool:
    """True when a reshape only inserts or removes size-1 dims (so it is a free view)."""
    return [d for d in src if d != 1] == [d for d in dst if d != 1]


def _infer(op: str, ins: tuple[Node, ...], attrs: tuple) -> tuple[Shape, str]:
    """Shape and dtype of `op` applied to `ins`; the single source of typing truth."""
    if op == "arg":
        _name, shape, dtype, _layout = attrs
        return tuple(shape), dtype
    if op == "const":
        return (), attrs[1]
    if op in UNARY:
        (x,) = ins
        return x.shape, "bool" if op == "logical_not" else x.dtype
    if op in BINARY:
        a, b = ins
        if a.dtype != b.dtype:
            raise TracingError(f"{op}: operand dtypes differ ({a.dtype}, {b.dtype}); cast first")
        dtype = "bool" if op in PREDICATES or op in LOGICAL else a.dtype
        return broadcast_shapes(a.shape, b.shape), dtype
    if op == "where":
        c, a, b = ins
        return broadcast_shapes(c.shape, a.shape, b.shape), a.dtype
    if op == "astype":
        return ins[0].shape, attrs[0]
    if op in ("materialize", "fuse_rows", "fuse_rows_tiled"):
        return ins[0].shape, ins[0].dtype
    if op in REDUCTIONS:
        (x,) = ins
        axes = attrs[0]
        if op in ("max", "min") and any(x.shape[a] == 0 for a in axes):
            raise TracingError(f"zero-size array to reduction operation {op} which has no identity")
        return tuple(d for i, d in enumerate(x.shape) if i not in axes), x.dtype
    if op in ("matmul", "matmul_tiled"):
        return _matmul_shape(*ins), ins[0].dtype
    if op == "transpose":
        (x,) = ins
        return tuple(x.shape[p] for p in attrs[0]), x.dtype
    if op in ("reshape", "broadcast_to"):
        return tuple(attrs[0]), ins[0].dtype
    if op == "slice":
        return tuple(attrs[2]), ins[0].dtype
    if op == "diagonal":
        (x,) = ins
        offset, a1, a2 = attrs
        n = max(0, min(x.shape[a1] - max(-offset, 0), x.shape[a2] - max(offset, 0)))
        rest = tuple(d for i, d in enumerate(x.shape) if i not in (a1, a2))
        return rest + (n,), x.dtype
    if op == "concat":
        axis = attrs[0]
        first = ins[0]
        total = sum(t.shape[axis] for t in ins)
        return first.shape[:axis] + (total,) + first.shape[axis + 1 :], first.dtype
    raise UnsupportedError(f"unknown op {op!r}")


def _matmul_shape(a: Node, b: Node) -> Shape:
    if a.dtype != b.dtype:
        raise TracingError(f"matmul: operand dtypes differ ({a.dtype}, {b.dtype})")
    sa, sb = a.shape, b.shape
    k_a = sa[-1]
    k_b = sb[0] if len(sb) == 1 else sb[-2]
    if k_a != k_b:
        raise TracingError(f"matmul: inner dimensions differ: {sa} @ {sb}")
    if len(sa) == 3 or len(sb) == 3:
        if len(sa) != len(sb) or sa[0] != sb[0]:
            raise TracingError(f"matmul: batch shapes differ: {sa} @ {sb}")
        return (sa[0], sa[1], sb[2])
    return sa[:-1] + sb[1:] if len(sb) == 2 else sa[:-1]


_ITEMSIZE = {"float32": 4, "float64": 8, "int32": 4, "int64": 8, "bool": 1}
_MAX_BYTES = 2**63 - 1


def _check_size(op: str, shape: Shape, dtype: str) -> None:
    """NumPy's limit: the bytes of the non-zero dims must fit an int64 (else MLIR's size arithmetic overflows)."""
    if math.prod(d for d in shape if d) * _ITEMSIZE[dtype] > _MAX_BYTES:
        raise TracingError(f"{op}: an array of shape {shape} and dtype {dtype} is too big (more than 2**63 - 1 bytes)")


class Builder:
    """Creates hash-consed nodes: structurally equal requests return the same Node (a DAG)."""

    def __init__(self) -> None:
        self._nodes: dict[tuple, Node] = {}

    def make(self, op: str, inputs: tuple[Node, ...] = (), attrs: tuple = ()) -> Node:
        key = (op, tuple(id(i) for i in inputs), attrs)
        node = self._nodes.get(key)
        if node is None:
            shape, dtype = _infer(op, inputs, attrs)
            _check_size(op, shape, dtype)
            node = Node(op, inputs, attrs, shape, dtype)
            self._nodes[key] = node
        return node


def infer(op: str, inputs: tuple[Node, ...], attrs: tuple) -> tuple[Shape, str]:
    """Public entry to the op table's shape/dtype inference (used by the cost model)."""
    return _infer(op, inputs, attrs)


def topological(outputs: list[Node]) -> list[Node]:
    """All nodes reachable from `outputs`, inputs before users."""
    order: list[Node] = []
    seen: set[int] = set()
    stack: list[tuple[Node, bool]] = [(n, False) for n in reversed(outputs)]
    while stack:
        node, expanded = stack.pop()
        if expanded:
            order.append(node)
            continue
        if id(node) in seen:
            continue
        seen.add(id(node))
        stack.append((node, True))
        stack.extend((i, False) for i in reversed(node.inputs) if id(i) not in seen)
    return order
