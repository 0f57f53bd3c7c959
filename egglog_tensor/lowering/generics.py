"""The pieces a linalg.generic is assembled from (lowering/emit.py, lowering/scans.py): its plan (the inputs and
their indexing maps over the loop domain), that plan with one loop split into blocks or cut to a tail (the
blocked sums and scans, the interleaved rows), and the small tensor helpers they share (fill, slices, reshapes).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from mlir import ir
from mlir.dialects import linalg, tensor

from . import scalar


@dataclass
class Plan:
    """The inputs (value + indexing map) of one linalg.generic being assembled, and its domain."""

    domain: tuple[int, ...]
    inputs: list[tuple[ir.Value, ir.AffineMap, str]] = field(default_factory=list)
    _index: dict[tuple, int] = field(default_factory=dict)

    def input(self, value: ir.Value, idx: list[ir.AffineExpr], dtype: str) -> tuple:
        amap = ir.AffineMap.get(len(self.domain), 0, idx)
        value = self._fit(value, amap)
        key = (value, str(amap))
        if key not in self._index:
            self._index[key] = len(self.inputs)
            self.inputs.append((value, amap, dtype))
        return ("in", self._index[key])

    def spans(self, dim: int) -> bool:
        """Whether some input is indexed by loop `dim` itself, so linalg can infer its bounds."""
        return any(isinstance(e, ir.AffineDimExpr) and e.position == dim for _, m, _ in self.inputs for e in m.results)

    def _fit(self, value: ir.Value, amap: ir.AffineMap) -> ir.Value:
        """Linalg needs a dim indexed by a bare loop index to span exactly that loop: cut it to size."""
        shape = list(ir.RankedTensorType(value.type).shape)
        sizes = list(shape)
        for j, expr in enumerate(amap.results):
            if isinstance(expr, ir.AffineDimExpr):
                sizes[j] = self.domain[expr.position]
        return slice_of(value, sizes, [0] * len(shape))


def split_inputs(plan: Plan, tree: tuple, axis: int, size: int, count: int) -> list[tuple[ir.Value, ir.AffineMap, str]] | None:
    """The plan's operands over the domain with loop `axis` split into (count, size): each operand
    dim read by the bare loop index is cut to count*size and expanded into (block, index in block)
    (tensor.expand_shape: a view); None if an operand reads the loop otherwise (a[1:], diagonals), or if
    the body `tree` computes a value from the loop indices (reads_indices): the split renumbers the loops,
    so each block would see the first one's indices (cumsum along rows of a broadcast np.arange gave every
    block of 4 rows its first row's values). A path that wants the split anyway reads such a value from
    its own buffer (emit.Emitter._index_free)."""
    if reads_indices(tree):
        return None
    rank = len(plan.domain) + 1
    new = [ir.AffineDimExpr.get(i) for i in range(rank)]
    moved = ir.AffineMap.get(rank, 0, [new[i] if i < axis else new[i + 1] for i in range(rank - 1)])
    out = []
    for value, amap, dtype in plan.inputs:
        results = list(amap.results)
        if any(uses(e, axis) and not is_dim(e, axis) for e in results):
            return None
        bare = [j for j, e in enumerate(results) if is_dim(e, axis)]
        exprs, shape, groups = [], [], []
        src = ir.RankedTensorType(value.type)
        sizes = list(src.shape)
        for j, e in enumerate(results):
            if j in bare:
                groups.append([len(shape), len(shape) + 1])
                shape += [count, size]
                exprs += [new[axis], new[axis + 1]]
                sizes[j] = count * size
            else:
                groups.append([len(shape)])
                shape.append(src.shape[j])
                exprs.append(e.compose(moved))
        if bare:
            value = slice_of(value, sizes, [0] * len(sizes))
            value = tensor.expand_shape(ir.RankedTensorType.get(shape, src.element_type), value, dim_groups(groups), [], shape)
        out.append((value, ir.AffineMap.get(rank, 0, exprs), dtype))
    return out


def tail_inputs(plan: Plan, axis: int, start: int, tail: int) -> list[tuple[ir.Value, ir.AffineMap, str]]:
    """The plan's operands over the domain with loop `axis` cut to [start, start + tail)."""
    out = []
    for value, amap, dtype in plan.inputs:
        results = list(amap.results)
        shape = list(ir.RankedTensorType(value.type).shape)
        offsets = [start if is_dim(e, axis) else 0 for e in results]
        sizes = [tail if is_dim(e, axis) else n for e, n in zip(results, shape, strict=True)]
        out.append((slice_of(value, sizes, offsets), amap, dtype))
    return out


def reads_indices(tree: tuple) -> bool:
    """Whether a body expression computes an iota from the loop indices (each shared subtree looked at once)."""
    stack, seen = [tree], set()
    while stack:
        sub = stack.pop()
        if id(sub) in seen:
            continue
        seen.add(id(sub))
        if sub[0] == "iota":
            return True
        if sub[0] not in ("in", "c"):
            stack.extend(sub[3])
    return False


def compose(amap: ir.AffineMap, inner: ir.AffineMap) -> ir.AffineMap:
    """amap after `inner`: the index amap gives of the index `inner` gives of inner's loops."""
    return ir.AffineMap.get(inner.n_dims, 0, [r.compose(inner) for r in amap.results])


def is_dim(expr: ir.AffineExpr, dim: int) -> bool:
    """Whether `expr` is loop `dim`'s bare index."""
    return isinstance(expr, ir.AffineDimExpr) and expr.position == dim


def uses(expr: ir.AffineExpr, dim: int) -> bool:
    """Whether `expr` reads loop `dim` at all."""
    return re.search(rf"\bd{dim}\b", str(expr)) is not None


def slice_of(value: ir.Value, sizes: list[int], offsets: list[int]) -> ir.Value:
    """The part of `value` of `sizes` at `offsets` (unit strides; `value` itself when that is all of it)."""
    shape = list(ir.RankedTensorType(value.type).shape)
    if sizes == shape:
        return value
    rtype = ir.RankedTensorType.get(sizes, ir.RankedTensorType(value.type).element_type)
    return tensor.extract_slice(rtype, value, [], [], [], offsets, sizes, [1] * len(shape))


def fill(shape: Sequence[int], dtype: str, value: float) -> ir.Value:
    """A new tensor of `shape` holding `value` everywhere."""
    init = tensor.empty(list(shape), scalar.storage_type(dtype))
    return linalg.fill(scalar.constant(value, dtype, stored=True), outs=[init])


def without(shape: Sequence[int], axes: Sequence[int]) -> tuple[int, ...]:
    """`shape` without the dims `axes` (a reduction's or scan's kept dims)."""
    return tuple(n for i, n in enumerate(shape) if i not in axes)


def reshaped(value: ir.Value, shape: Sequence[int]) -> ir.Value:
    """A C-ordered tensor as `shape` of the same size: collapsed to 1-D, then expanded (each step only where needed)."""
    t = ir.RankedTensorType(value.type)
    if list(t.shape) == list(shape):
        return value
    if t.rank != 1:
        value = tensor.collapse_shape(ir.RankedTensorType.get([math.prod(t.shape)], t.element_type), value, dim_groups([list(range(t.rank))]))
    if len(shape) != 1:
        value = tensor.expand_shape(ir.RankedTensorType.get(list(shape), t.element_type), value, dim_groups([list(range(len(shape)))]),
                                    [], list(shape))
    return value


def dim_groups(groups: list[list[int]]) -> ir.ArrayAttr:
    """The reassociation attribute of a collapse/expand_shape: which dims become one."""
    i64 = ir.IntegerType.get_signless(64)
    return ir.ArrayAttr.get([ir.ArrayAttr.get([ir.IntegerAttr.get(i64, i) for i in g]) for g in groups])
