"""The typed tensor DAG: hash-consed nodes with static shapes and dtypes (inferred by the op
registry, egglog_tensor.ops, when a node is made: the tracer rejects bad programs early)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from .errors import TracingError
from .ops import OPS, Shape, infer

DTYPES = ("float32", "float64", "int32", "int64", "bool", "float16", "int8", "int16", "uint8", "uint16", "uint32", "uint64",
          "bfloat16")
FLOAT_DTYPES = ("float32", "float64", "float16", "bfloat16")
# Stored as such, each op computed in float32 and rounded back: NumPy's half loops, ml_dtypes' bfloat16 loops.
NARROW_FLOATS = ("float16", "bfloat16")


def _ml_dtypes() -> Any:
    """ml_dtypes, an optional package that only bfloat16 programs need: imported when first needed."""
    try:
        import ml_dtypes
    except ImportError:
        raise ImportError("bfloat16 needs the ml_dtypes package (pip install ml_dtypes)") from None
    return ml_dtypes


def numpy_dtype(name: str) -> np.dtype:
    """The NumPy dtype of a dtype name; "bfloat16" is ml_dtypes'."""
    return np.dtype(_ml_dtypes().bfloat16) if name == "bfloat16" else np.dtype(name)


def is_float(dtype: str | np.dtype) -> bool:
    """Whether a dtype (or its name) is a float one; bfloat16, whose NumPy kind is "V", is."""
    return (dtype if isinstance(dtype, str) else dtype.name) in FLOAT_DTYPES


def float_info(dtype: str | np.dtype) -> Any:
    """np.finfo of a float dtype; ml_dtypes.finfo for bfloat16, which NumPy's does not know."""
    return _ml_dtypes().finfo(_ml_dtypes().bfloat16) if str(dtype) == "bfloat16" else np.finfo(dtype)


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

    def attr(self, name: str) -> Any:
        """The static attribute `name` (egglog_tensor.ops names each op's attributes)."""
        return OPS[self.op].attr(self.attrs, name)

    def __repr__(self) -> str:
        return f"Node({self.op}, {self.shape}, {self.dtype})"


_ITEMSIZE = {"float32": 4, "float64": 8, "int32": 4, "int64": 8, "bool": 1, "float16": 2, "int8": 1, "int16": 2,
             "uint8": 1, "uint16": 2, "uint32": 4, "uint64": 8, "bfloat16": 2}
_MAX_BYTES = 2**63 - 1


def itemsize(dtype: str) -> int:
    """Bytes per element of a dtype name."""
    return _ITEMSIZE[dtype]


def _check_size(op: str, shape: Shape, dtype: str) -> None:
    """NumPy's limit: the bytes of the non-zero dims must fit an int64 (else MLIR's size arithmetic overflows)."""
    if math.prod(d for d in shape if d) * _ITEMSIZE[dtype] > _MAX_BYTES:
        raise TracingError(f"{op}: an array of shape {shape} and dtype {dtype} is too big (more than 2**63 - 1 bytes)")


_NAN = float("nan")  # the one NaN object of attrs: NaN != NaN, so attrs holding two NaN objects would never match


def _same_nan(attrs: tuple) -> tuple:
    """attrs with each NaN float replaced by _NAN, so that a constant NaN read back from the e-graph
    (a new float) is the traced node again. (A negative NaN constant is traced as -(NaN): core.const.)"""
    if not any(type(a) is float and a != a for a in attrs):
        return attrs
    return tuple(_NAN if type(a) is float and a != a else a for a in attrs)


class Builder:
    """Creates hash-consed nodes: structurally equal requests return the same Node (a DAG)."""

    def __init__(self) -> None:
        self._nodes: dict[tuple, Node] = {}

    def make(self, op: str, inputs: tuple[Node, ...] = (), attrs: tuple = ()) -> Node:
        attrs = _same_nan(attrs)
        key = (op, tuple(id(i) for i in inputs), attrs)
        node = self._nodes.get(key)
        if node is None:
            shape, dtype = infer(op, inputs, attrs)
            _check_size(op, shape, dtype)
            node = Node(op, inputs, attrs, shape, dtype)
            self._nodes[key] = node
        return node

    def copy(self, outputs: list[Node]) -> dict[int, Node]:
        """Every node of `outputs`' DAG made by this builder, by the original's id: structurally equal
        nodes of two programs copied into one builder are one node."""
        copies: dict[int, Node] = {}
        for node in topological(outputs):
            copies[id(node)] = self.make(node.op, tuple(copies[id(i)] for i in node.inputs), node.attrs)
        return copies


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


def depth(outputs: list[Node]) -> int:
    """The longest chain of nodes from an input to an output."""
    levels: dict[int, int] = {}
    for node in topological(outputs):
        levels[id(node)] = 1 + max((levels[id(i)] for i in node.inputs), default=0)
    return max((levels[id(o)] for o in outputs), default=0)
