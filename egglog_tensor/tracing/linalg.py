"""Contractions: matmul (`@`, np.matmul) with any batch dimensions, dot, outer, tensordot, inner,
vdot and kron, each folded at trace time into the 2-D, batched 3-D and vector matmuls of the op
registry (batch dims flattened by reshapes, broadcast by views) so the tiled fast paths apply."""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

try:  # NumPy's multi_dot order, reused so that products are made in its order (numpy.linalg.linalg before 2.0)
    from numpy.linalg import _linalg as numpy_linalg
except ImportError:  # pragma: no cover
    from numpy.linalg import linalg as numpy_linalg  # type: ignore[no-redef]

from ..errors import TracingError, UnsupportedError
from ..graph import NARROW_FLOATS, Node
from ..spec import PYTHON_SCALARS
from .core import IMPLEMENTATIONS, Trace, Tracer, as_array, as_tracer, fail, implements, lift, normalize_axis, result, trace_of
from .shapes import broadcast_to, reshape, transpose
from .ufuncs import apply_ufunc


@implements("matmul")  # from apply_ufunc (np.matmul, @), on nodes of the resolved dtype
def matmul(trace: Trace, a: Node, b: Node) -> Tracer:
    """NumPy's matmul of any ranks: batch dims broadcast, folded into one 2-D or batched 3-D product."""
    if a.ndim == 0 or b.ndim == 0:
        raise fail(TracingError, "matmul: input operand does not have enough dimensions (0-d)")
    k = b.shape[0] if b.ndim == 1 else b.shape[-2]
    if a.shape[-1] != k:
        raise fail(TracingError, f"matmul: inner dimensions differ: {a.shape} @ {b.shape} "
                                 f"(operand 0's last dimension is {a.shape[-1]}, operand 1's contracted one is {k})")
    batch = batch_shape(a.shape[:-2], b.shape[:-2])
    out = (*batch, *a.shape[-2:-1], *b.shape[-1:][: b.ndim - 1])
    x, y = result(trace, a), result(trace, b)
    if a.dtype in NARROW_FLOATS:  # NumPy's half matmul and dot (ml_dtypes' bfloat16 dot) accumulate in float32, round once
        return matmul(trace, lift(trace, x, "float32"), lift(trace, y, "float32")).astype(a.dtype)
    if a.dtype == "bool":
        return reshape(bool_matmul(as_matrix(x, (1, k)), as_matrix(y, (k, 1))), out)
    if a.ndim <= 2 and b.ndim <= 2:
        return result(trace, trace.make("matmul", (a, b)))
    if a.ndim > 1 and math.prod(b.shape[:-2]) == 1:  # one right-hand matrix: the batch folds into the rows
        x = reshape(x, (math.prod(a.shape[:-1]), k))
        y = reshape(y, b.shape[-2:] if b.ndim > 1 else (k,))
    else:
        x, y = stack_batch(as_matrix(x, (1, k)), batch), stack_batch(as_matrix(y, (k, 1)), batch)
    return reshape(result(trace, trace.make("matmul", (x._node, y._node))), out)


def batch_shape(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[int, ...]:
    """The broadcast of two matmul operands' batch dims (TracingError naming both when they do not)."""
    try:
        return tuple(np.broadcast_shapes(a, b))
    except ValueError:
        raise fail(TracingError, f"matmul: batch dimensions {a} and {b} do not broadcast") from None


def as_matrix(x: Tracer, shape: tuple[int, int]) -> Tracer:
    """A matmul operand as a matrix: a vector as the 1-row or 1-column matrix `shape`."""
    return reshape(x, shape) if x.ndim == 1 else x


def stack_batch(x: Tracer, batch: tuple[int, ...]) -> Tracer:
    """A matrix operand broadcast over `batch`, its batch dims flattened into one: (B, rows, cols)."""
    core = x.shape[-2:]
    return reshape(broadcast_to(x, (*batch, *core)), (math.prod(batch), *core))


def bool_matmul(a: Tracer, b: Tracer) -> Tracer:
    """Matmul of bool matrices as NumPy computes it: the or over k of a[..., i, k] and b[..., k, j]."""
    both = apply_ufunc(a._trace, np.logical_and, (reshape(a, (*a.shape, 1)), reshape(b, (*b.shape[:-2], 1, *b.shape[-2:]))))
    return result(a._trace, a._trace.make("sum", (both._node,), ((both.ndim - 2,),)))


def strong(v: Any) -> Any:
    """An operand as np.dot / np.outer see it: a Python number (also a Python-number argument) is
    converted to an array first, so it is not weak: np.dot(float32, 2.0) is float64."""
    if isinstance(v, Tracer):
        return Tracer(v._trace, v._node) if v._weak else v
    return np.asarray(v) if type(v) in PYTHON_SCALARS else v


def operands(a: Any, b: Any) -> tuple[Tracer, Tracer]:
    """Both operands of a product function as (strong) tracers of one trace."""
    trace = trace_of([a, b])
    return as_tracer(trace, strong(a)), as_tracer(trace, strong(b))


def multiply(a: Tracer, b: Tracer) -> Tracer:
    """a * b with NumPy's broadcasting and dtype resolution."""
    return apply_ufunc(a._trace, np.multiply, (a, b))


def contract(a: Tracer, b: Tracer, axes_a: Sequence[int], axes_b: Sequence[int]) -> Tracer:
    """The sum over paired axes of a and b (as np.tensordot): a's other axes, then b's, as one matmul
    of a (free, summed) matrix by a (summed, free) one (a vector where a side has no free axes)."""
    free_a = [i for i in range(a.ndim) if i not in axes_a]
    free_b = [i for i in range(b.ndim) if i not in axes_b]
    shape = tuple(a.shape[i] for i in free_a) + tuple(b.shape[i] for i in free_b)
    if not axes_a:  # nothing summed: an outer product
        return multiply(reshape(a, a.shape + (1,) * b.ndim), b)
    k = math.prod(a.shape[i] for i in axes_a)
    x = reshape(transpose(a, (*free_a, *axes_a)), (math.prod(shape[: len(free_a)]), k)[not free_a :])
    y = reshape(transpose(b, (*axes_b, *free_b)), (k, math.prod(shape[len(free_a) :]))[: 1 + bool(free_b)])
    return reshape(apply_ufunc(a._trace, np.matmul, (x, y)), shape)


def check_pairs(a: Tracer, b: Tracer, axes_a: Sequence[int], axes_b: Sequence[int], what: str) -> None:
    """TracingError naming the axes when paired axes of a and b differ in size."""
    for i, j in zip(axes_a, axes_b, strict=True):
        if a.shape[i] != b.shape[j]:
            raise fail(TracingError, f"{what}: shape mismatch for sum: axis {i} of operand 0 {a.shape} has size "
                                     f"{a.shape[i]}, axis {j} of operand 1 {b.shape} has size {b.shape[j]}")


@implements("dot")
def dot(a: Any, b: Any, out: Any = None) -> Tracer:
    """np.dot: a product with a scalar, matmul up to a 2-D b, else the sum over a's last and b's second-to-last axis
    (`out=`: tracing/outs.py)."""
    x, y = operands(a, b)
    if x.ndim == 0 or y.ndim == 0:
        return multiply(x, y)
    if y.ndim <= 2:
        product = apply_ufunc(x._trace, np.matmul, (x, y))
        # ml_dtypes' bfloat16 matmul gives float32, its dot bfloat16 (summed in float32, rounded once)
        return product.astype("bfloat16") if x.dtype == y.dtype == "bfloat16" else product
    check_pairs(x, y, [x.ndim - 1], [y.ndim - 2], "np.dot")
    return contract(x, y, [x.ndim - 1], [y.ndim - 2])


@implements("tensordot")
def tensordot(a: Any, b: Any, axes: Any = 2) -> Tracer:
    """np.tensordot with `axes` an int (a's last n axes with b's first n) or a pair of axis lists."""
    x, y = operands(a, b)
    if isinstance(axes, (int, np.integer)):
        if not 0 <= axes <= min(x.ndim, y.ndim):
            raise fail(TracingError, f"np.tensordot: axes={axes} for operands of {x.ndim} and {y.ndim} dimensions")
        axes_a, axes_b = list(range(x.ndim - axes, x.ndim)), list(range(axes))
    else:
        try:
            first, second = ([v] if isinstance(v, (int, np.integer)) else list(v) for v in axes)
        except (TypeError, ValueError):
            raise fail(TracingError, f"np.tensordot: axes must be an int or a pair of axis lists, got {axes!r}") from None
        if len(first) != len(second):
            raise fail(TracingError, f"np.tensordot: shape-mismatch for sum: {len(first)} axes of operand 0, {len(second)} of operand 1")
        axes_a = [normalize_axis(x.ndim, i) for i in first]
        axes_b = [normalize_axis(y.ndim, i) for i in second]
        if len(set(axes_a)) != len(axes_a) or len(set(axes_b)) != len(axes_b):
            raise fail(TracingError, f"np.tensordot: repeated axis in axes={axes!r}")
    check_pairs(x, y, axes_a, axes_b, "np.tensordot")
    return contract(x, y, axes_a, axes_b)


@implements("inner")
def inner(a: Any, b: Any) -> Tracer:
    """np.inner: the sum over the last axes of a and b (a product with a scalar)."""
    x, y = operands(a, b)
    if x.ndim == 0 or y.ndim == 0:
        return multiply(x, y)
    check_pairs(x, y, [x.ndim - 1], [y.ndim - 1], "np.inner")
    return contract(x, y, [x.ndim - 1], [y.ndim - 1])


@implements("vdot")
def vdot(a: Any, b: Any) -> Tracer:
    """np.vdot of real arrays: the dot product of both flattened (no conjugation to do)."""
    x, y = (reshape(v, (v.size,)) for v in operands(a, b))
    if x.size != y.size:
        raise fail(TracingError, f"np.vdot: vectors have different lengths ({x.size} and {y.size} elements)")
    return apply_ufunc(x._trace, np.matmul, (x, y))


@implements("outer")
def outer(a: Any, b: Any, out: Any = None) -> Tracer:
    x, y = operands(a, b)
    return multiply(reshape(x, (x.size, 1)), reshape(y, (1, y.size)))


@implements("kron")
def kron(a: Any, b: Any) -> Tracer:
    """np.kron: each element of a times the whole of b, as one broadcast product of interleaved axes."""
    x, y = operands(a, b)
    rank = max(x.ndim, y.ndim)
    sa, sb = (1,) * (rank - x.ndim) + x.shape, (1,) * (rank - y.ndim) + y.shape
    pairs = multiply(reshape(x, tuple(d for s in sa for d in (s, 1))), reshape(y, tuple(d for s in sb for d in (1, s))))
    return reshape(pairs, tuple(p * q for p, q in zip(sa, sb, strict=True)))


@implements("cross")
def cross(a: Any, b: Any, axisa: int = -1, axisb: int = -1, axisc: int = -1, axis: Any = None) -> Tracer:
    """The cross product of 3-vectors along axisa/axisb (`axis` sets all three), as NumPy writes it
    (a1*b2 - a2*b1, ...) in the promoted dtype; 2-vectors (deprecated in NumPy 2, its warning too) as NumPy's: a 0 third component."""
    trace = trace_of([a, b])
    x, y = (as_array(trace, v) for v in (a, b))
    if x.ndim < 1 or y.ndim < 1:
        raise fail(TracingError, "At least one array has zero dimension")
    if axis is not None:
        axisa = axisb = axisc = axis
    move = IMPLEMENTATIONS["moveaxis"]
    x, y = move(x, normalize_axis(x.ndim, axisa, "axisa"), -1), move(y, normalize_axis(y.ndim, axisb, "axisb"), -1)
    if {x.shape[-1], y.shape[-1]} - {2, 3}:
        raise fail(TracingError, "incompatible dimensions for cross product\n(dimension must be 2 or 3)")
    dtype = np.promote_types(x.dtype, y.dtype).name
    x, y = x.astype(dtype), y.astype(dtype)
    if 2 in (x.shape[-1], y.shape[-1]):
        warnings.warn("Arrays of 2-dimensional vectors are deprecated. Use arrays of 3-dimensional vectors instead. (deprecated in NumPy 2.0)",
                      DeprecationWarning, stacklevel=2)
    if x.shape[-1] == y.shape[-1] == 2:  # NumPy's: the z component alone, axisc unused
        return x[..., 0] * y[..., 1] - x[..., 1] * y[..., 0]
    if x.shape[-1] == 2:  # NumPy's products with the missing component 0 left out
        parts = [x[..., 1] * y[..., 2], -(x[..., 0] * y[..., 2]), x[..., 0] * y[..., 1] - x[..., 1] * y[..., 0]]
    elif y.shape[-1] == 2:
        parts = [-(x[..., 2] * y[..., 1]), x[..., 2] * y[..., 0], x[..., 0] * y[..., 1] - x[..., 1] * y[..., 0]]
    else:
        parts = [x[..., i] * y[..., j] - x[..., j] * y[..., i] for i, j in ((1, 2), (2, 0), (0, 1))]
    out = IMPLEMENTATIONS["stack"](parts, -1)
    return move(out, -1, normalize_axis(out.ndim, axisc, "axisc"))


@implements("linalg.multi_dot")
def multi_dot(arrays: Any, *, out: Any = None) -> Tracer:
    """np.linalg.multi_dot: the products of 2-D arrays (the first and last may be 1-D) in NumPy's own order of
    them (its `_multi_dot_three` cost test, or its dynamic program for four or more), so results round as NumPy's
    (`out=`: tracing/outs.py)."""
    if isinstance(arrays, Tracer) or not isinstance(arrays, (list, tuple)):
        raise fail(UnsupportedError, "np.linalg.multi_dot takes a list or tuple of arrays in a kernel")
    if len(arrays) < 2:
        raise fail(TracingError, "np.linalg.multi_dot: Expecting at least two arrays.")
    if len(arrays) == 2:
        return dot(arrays[0], arrays[1])
    trace = trace_of(arrays)
    xs = [as_array(trace, a) for a in arrays]
    first, last = xs[0].ndim, xs[-1].ndim
    xs[0] = reshape(xs[0], (1, -1)) if first == 1 else xs[0]
    xs[-1] = reshape(xs[-1], (-1, 1)) if last == 1 else xs[-1]
    if any(x.ndim != 2 for x in xs):
        bad = next(x.ndim for x in xs if x.ndim != 2)
        raise fail(TracingError, f"np.linalg.multi_dot: {bad}-dimensional array given. Array must be two-dimensional")
    if len(xs) == 3:
        (a0, a1b0), (b1c0, c1) = xs[0].shape, xs[2].shape
        left_first = a0 * b1c0 * (a1b0 + c1) < a1b0 * c1 * (a0 + b1c0)  # NumPy's _multi_dot_three
        split = np.array([[0, 0, 1 if left_first else 0], [0, 0, 1], [0, 0, 0]])  # where each product splits
    else:
        split = numpy_linalg._multi_dot_matrix_chain_order(xs)

    def product(i: int, j: int) -> Tracer:
        return xs[i] if i == j else dot(product(i, split[i, j]), product(split[i, j] + 1, j))

    value = product(0, len(xs) - 1)
    return value[0, 0] if first == 1 and last == 1 else reshape(value, (-1,)) if first == 1 or last == 1 else value


@implements("linalg.matrix_power")
def matrix_power(a: Any, n: Any) -> Tracer:
    """a @ a @ ... n times (a static int n) by squaring, in NumPy's order of products; n = 0: the identity, n < 0: inv(a)'s -n-th power."""
    trace = trace_of([a])
    x = as_array(trace, a)
    if isinstance(n, Tracer) and n.ndim == 0 and n.dtype.kind in "iu":  # an int argument: specialized on (a data value: a guard)
        n = n._taken("np.linalg.matrix_power: the exponent", "index")
    if not isinstance(n, (int, np.integer)):
        raise fail(TracingError, f"np.linalg.matrix_power: exponent must be an integer, not {type(n).__name__}")
    if x.ndim < 2 or x.shape[-1] != x.shape[-2]:
        raise fail(TracingError, "Last 2 dimensions of the array must be square")
    n = int(n)
    if n < 0:  # NumPy's: the inverse's power
        x, n = IMPLEMENTATIONS["linalg.inv"](x), -n
    if n == 0:
        return broadcast_to(IMPLEMENTATIONS["eye"](x.shape[-1], dtype=x.dtype), x.shape)
    if n == 3:
        return (x @ x) @ x
    power = out = None
    while n > 0:  # NumPy's order: the bits of n from the lowest
        power = x if power is None else power @ power
        n, bit = divmod(n, 2)
        if bit:
            out = power if out is None else out @ power
    return out
