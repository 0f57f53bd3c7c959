"""The shape-aware egglog cost model: estimated nanoseconds from FLOPs, bytes and kernel count.

Costs flow bottom-up through extraction; each child's cost also carries its static meaning
(a tensor's shape and dtype, a literal's value), so a node is priced from its real shapes.
All machine numbers live in `Machine`.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from egglog import EGraph, get_callable_fn

from .graph import BINARY, REDUCTIONS, TRANSCENDENTAL, UNARY, VIEWS, Node, infer
from .ir import OP_OF, literal


@dataclass(frozen=True)
class Machine:
    """Throughputs of the target, in the units the model uses (GFLOP/s = flop/ns, GB/s = byte/ns)."""

    gflops: float = 100.0  # sustained vector FLOP rate for fused elementwise work
    gemm_gflops: float = 400.0  # dense matmul throughput
    bandwidth_gbs: float = 39.0  # copy bandwidth (read + write)
    kernel_overhead_ns: float = 500.0  # loop nest setup, allocation of its result
    transcendental_flops: float = 10.0  # one exp/log/tanh/... counted as this many flops


DEFAULT_MACHINE = Machine()
_EPSILON = 1e-3  # every node costs something, so extraction never prefers a longer equivalent term


@functools.total_ordering
@dataclass(frozen=True, eq=False)
class Cost:
    """Estimated time (ns) of a subterm, plus what the subterm statically is (shape+dtype, or a literal)."""

    total: float
    meta: Any = None

    def __lt__(self, other: Cost) -> bool:
        return self.total < other.total

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Cost) and self.total == other.total and _key(self.meta) == _key(other.meta)

    def __hash__(self) -> int:
        return hash((self.total, _key(self.meta)))


def _key(meta: Any) -> Any:
    """Value identity of a cost's meta (stand-in Nodes compare by shape and dtype)."""
    if isinstance(meta, Node):
        return ("tensor", meta.shape, meta.dtype)
    if isinstance(meta, tuple):
        return tuple(_key(m) for m in meta)
    return meta


def node_time(op: str, inputs: tuple[Node, ...], out: Node, machine: Machine = DEFAULT_MACHINE) -> float:
    """Estimated ns to compute one node as its own kernel from materialized inputs (roofline)."""
    if op in ("arg", "const"):
        return 0.0
    if op in VIEWS or op == "reshape":
        return 0.0
    itemsize = np.dtype(out.dtype).itemsize
    if op == "matmul":
        a, b = inputs
        k = a.shape[-1]
        flops = 2.0 * out.size * k
        moved = (a.size + b.size + out.size) * itemsize
        return max(flops / machine.gemm_gflops, moved / machine.bandwidth_gbs) + machine.kernel_overhead_ns
    if op in REDUCTIONS:
        flops = float(inputs[0].size)
    elif op in UNARY or op in BINARY or op in ("where", "astype"):
        weight = machine.transcendental_flops if op in TRANSCENDENTAL else 1.0
        flops = weight * out.size
    else:  # concat and data movement
        flops = 0.0
    moved = (sum(i.size * np.dtype(i.dtype).itemsize for i in inputs) + out.size * itemsize)
    return max(flops / machine.gflops, moved / machine.bandwidth_gbs) + machine.kernel_overhead_ns


class TensorCostModel:
    """egglog CostModel: prices Tensor e-nodes with `node_time` using their children's shapes."""

    def __init__(self, machine: Machine = DEFAULT_MACHINE) -> None:
        self.machine = machine

    def __call__(self, egraph: EGraph, expr: Any, children: list[Cost]) -> Cost:
        below = math.fsum(c.total for c in children)
        fn = get_callable_fn(expr)
        op = OP_OF.get(fn) if fn is not None else None
        if op is None:  # literals, dtypes, layouts, Vec containers, Program
            try:
                meta = literal(expr)
            except ValueError:
                meta = tuple(c.meta for c in children)
            return Cost(below, meta)
        if op == "concat":
            parts, axis = children
            tensors = tuple(parts.meta)
            attrs: tuple = (axis.meta,)
        else:
            tensors = tuple(c.meta for c in children if isinstance(c.meta, Node))
            attrs = tuple(c.meta for c in children if not isinstance(c.meta, Node))
        shape, dtype = infer(op, tensors, attrs)
        out = Node(op, (), (), shape, dtype)
        own = node_time(op, tensors, out, self.machine) + _EPSILON
        return Cost(below + own, out)
