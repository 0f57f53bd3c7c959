"""np.linalg's solvers on stacked square matrices (..., n, n): solve, inv, det, slogdet and cholesky (and
tensorsolve, tensorinv: one matrix's solve and inverse, reshaped as NumPy reshapes them), on
the `lu`, `lu_solve` and `cholesky` primitives (lowering/factor.py: LAPACK's getrf/getrs/potrf
algorithms, one matrix per loop, the stack in parallel on cpu-openmp). det and slogdet are composed as
NumPy composes them from getrf's factors: the sign of the row swaps and of U's diagonal, the sum of
log|u_ii| (no overflow), det = sign * exp(logdet). A singular matrix (an exact zero pivot) makes
solve and inv raise LinAlgError("Singular matrix") after the call, cholesky "Matrix is not positive
definite", as NumPy does; integer inputs are float64, as in NumPy."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import LinAlgError, UnsupportedError
from .core import Tracer, as_array, check_at_run_time, fail, implements, result, trace_of
from .creation import iota
from .shapes import broadcast_to


def matrices(name: str, *arrays: Any, square: bool = True) -> list[Tracer]:
    """The arrays as tracers of their common linalg dtype (float32, float64; integers and bool as float64),
    the first checked to be stacked (square) matrices (NumPy's LinAlgError messages)."""
    trace = trace_of(arrays)
    xs = [as_array(trace, v) for v in arrays]
    dtype = np.result_type(*(x.dtype for x in xs))
    if dtype.kind in "biu":
        dtype = np.dtype("float64")
    if dtype.name not in ("float32", "float64"):
        raise fail(UnsupportedError, f"np.linalg.{name}: array type {dtype.name} is unsupported in linalg (NumPy raises TypeError); "
                                     "cast to float32 or float64")
    a = xs[0]
    if a.ndim < 2:
        raise fail(LinAlgError, f"np.linalg.{name}: {a.ndim}-dimensional array given. Array must be at least two-dimensional")
    if square and a.shape[-1] != a.shape[-2]:
        raise fail(LinAlgError, f"np.linalg.{name}: Last 2 dimensions of the array must be square, got shape {a.shape}")
    return [x.astype(dtype.name) for x in xs]


def lu(a: Tracer) -> tuple[Tracer, Tracer, Tracer]:
    """a's LU factorization (the `lu` primitive), U's diagonal (..., n) and the row swapped in at each step (..., n)."""
    packed = result(a._trace, a._trace.make("lu", (a._node,)))
    n = a.shape[-1]
    return packed, np.diagonal(packed[..., :n], axis1=-2, axis2=-1), packed[..., n]


def _singular_check(name: str, diagonal: Tracer) -> None:
    """Make the call raise LinAlgError("Singular matrix") when a pivot is exactly 0 (LAPACK's info > 0)."""
    check_at_run_time(diagonal == 0, f"np.linalg.{name}: Singular matrix", LinAlgError)


def solved(name: str, a: Tracer, b: Tracer, check: bool = True) -> Tracer:
    """x with a x = b for a (..., n, n) and b (..., n, k), their stacks broadcast; raising for a singular a
    (without `check`: inf or NaN in x)."""
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    n = a.shape[-1]
    a, b = broadcast_to(a, batch + (n, n)), broadcast_to(b, batch + b.shape[-2:])
    packed, diagonal, _ = lu(a)
    if check:
        _singular_check(name, diagonal)
    return substituted(packed, b)


def substituted(packed: Tracer, b: Tracer) -> Tracer:
    """x with a x = b from a's `lu` factors packed (..., n, n + 1) and b (..., n, k) (the `lu_solve` primitive)."""
    return result(packed._trace, packed._trace.make("lu_solve", (packed._node, b._node)))


@implements("linalg.solve")
def solve(a: Any, b: Any) -> Tracer:
    """np.linalg.solve: b a vector (n,) or stacked matrices (..., n, k) (NumPy 2's rule), stacks broadcast."""
    x, y = matrices("solve", a, b)
    n = x.shape[-1]
    vector = y.ndim == 1
    rhs = y.reshape(y.size, 1) if vector else y
    if rhs.ndim < 2 or rhs.shape[-2] != n:
        raise fail(LinAlgError, f"np.linalg.solve: b of shape {y.shape} does not match a of shape {x.shape} "
                                f"(b must be ({n},) or (..., {n}, k))")
    try:
        np.broadcast_shapes(x.shape[:-2], rhs.shape[:-2])
    except ValueError:
        raise fail(LinAlgError, f"np.linalg.solve: the stacks of a {x.shape} and b {y.shape} do not broadcast") from None
    out = solved("solve", x, rhs)
    return out.reshape(out.shape[:-2] + (n,)) if vector else out


@implements("linalg.inv")
def inv(a: Any) -> Tracer:
    """np.linalg.inv: the solve of each matrix with the identity."""
    (x,) = matrices("inv", a)
    return inverse("inv", x)


@implements("linalg.tensorinv")
def tensorinv(a: Any, ind: int = 2) -> Tracer:
    """np.linalg.tensorinv: the inverse of a read as a (prod(shape[:ind]), prod(shape[ind:])) matrix, shaped
    shape[ind:] + shape[:ind]."""
    x = as_array(trace_of([a]), a)
    if ind <= 0:
        raise fail(ValueError, "Invalid ind argument.")
    (square,) = matrices("tensorinv", x.reshape(int(np.prod(x.shape[ind:])), -1))
    return inverse("tensorinv", square).reshape(x.shape[ind:] + x.shape[:ind])


@implements("linalg.tensorsolve")
def tensorsolve(a: Any, b: Any, axes: Any = None) -> Tracer:
    """np.linalg.tensorsolve: x with tensordot(a, x, x.ndim) = b, as the solve of a read as a square matrix
    (after moving `axes` to the end) with b flattened, x shaped as a's trailing axes."""
    trace = trace_of([a, b])
    x, y = as_array(trace, a), as_array(trace, b)
    if axes is not None:
        order = list(range(x.ndim))
        for k in axes:
            order.remove(k)
            order.insert(x.ndim, k)
        x = x.transpose(order)
    shape = x.shape[-(x.ndim - y.ndim):]
    size = int(np.prod(shape))
    if x.size != size ** 2:
        raise fail(LinAlgError, "Input arrays must satisfy the requirement prod(a.shape[b.ndim:]) == prod(a.shape[:b.ndim])")
    return solve(x.reshape(size, size), y.reshape(-1)).reshape(shape)


def inverse(name: str, x: Tracer, check: bool = True) -> Tracer:
    """x's inverse: the solve of each matrix with the identity (raising for a singular one unless not `check`)."""
    n = x.shape[-1]
    eye = (iota(x._trace, (n, n), 0) == iota(x._trace, (n, n), 1)).astype(x.dtype)
    return solved(name, x, broadcast_to(eye, x.shape), check)


def _signed_log(a: Tracer) -> tuple[Tracer, Tracer]:
    """NumPy's slogdet from getrf's factors: the sign of the row swaps times U's diagonal's signs and the
    sum of log|u_ii|; a zero pivot gives (0, -inf)."""
    _, diagonal, rows = lu(a)
    n = a.shape[-1]
    swaps = np.sum(rows != iota(a._trace, (n,), 0).astype(a.dtype), axis=-1) + np.sum(diagonal < 0, axis=-1)
    sign = np.where(swaps % 2 == 1, -1, 1).astype(a.dtype)
    logdet = np.sum(np.log(np.abs(diagonal)), axis=-1)
    singular = np.any(diagonal == 0, axis=-1)
    return np.where(singular, 0, sign).astype(a.dtype), np.where(singular, -np.inf, logdet).astype(a.dtype)


_SLOGDET_RESULT = type(np.linalg.slogdet(np.eye(1)))  # NumPy's named tuple (sign, logabsdet), wherever NumPy defines it


@implements("linalg.slogdet")
def slogdet(a: Any) -> tuple[Tracer, Tracer]:
    """np.linalg.slogdet: (sign, logabsdet) of each matrix, no overflow, as NumPy's named tuple."""
    (x,) = matrices("slogdet", a)
    return _SLOGDET_RESULT(*_signed_log(x))


@implements("linalg.det")
def det(a: Any) -> Tracer:
    """np.linalg.det: sign * exp(log|det|), as NumPy computes it; 0 for a singular matrix."""
    (x,) = matrices("det", a)
    sign, logdet = _signed_log(x)
    return sign * np.exp(logdet)


@implements("linalg.cholesky")
def cholesky(a: Any, /, *, upper: bool = False) -> Tracer:
    """np.linalg.cholesky: the lower L with L L^T = a (upper: L^T), from a's lower triangle; raising after
    the call when a is not positive definite (a diagonal element not > 0: LAPACK's potrf check)."""
    (x,) = matrices("cholesky", a)
    factor = result(x._trace, x._trace.make("cholesky", (x._node,)))
    check_at_run_time(~(np.diagonal(factor, axis1=-2, axis2=-1) > 0), "np.linalg.cholesky: Matrix is not positive definite", LinAlgError)
    return np.swapaxes(factor, -1, -2) if upper else factor
