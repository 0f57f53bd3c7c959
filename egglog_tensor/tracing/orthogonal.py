"""np.linalg's orthogonal factorizations on stacked matrices (..., m, n): qr (Householder, LAPACK's signs),
eigh/eigvalsh (cyclic Jacobi), svd/svdvals (one-sided Jacobi), and on the SVD pinv, lstsq, matrix_rank,
cond and the 2, -2 and nuclear matrix norms (lowering/orthogonal.py). The Jacobi loops stop after a fixed
number of sweeps: if they did not converge (NaN or inf input), the call raises NumPy's LinAlgError
("SVD did not converge", "Eigenvalues did not converge") after it. The SVD's U is the Q of a QR of A V
(signs made to match A V's columns), so it is orthonormal, and complete, for rank-deficient A too.
np.linalg.eig and eigvals (complex results) are refused."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import LinAlgError, UnsupportedError
from .core import (
    Tracer,
    as_array,
    check_at_run_time,
    describe,
    fail,
    implements,
    result,
    trace_of,
)
from .solve import inverse, matrices

_QR_RESULT, _EIGH_RESULT, _SVD_RESULT = (type(f(np.eye(1))) for f in (np.linalg.qr, np.linalg.eigh, np.linalg.svd))  # NumPy's named tuples


def _nonempty(name: str, x: Tracer) -> Tracer:
    if not x.size:
        raise fail(UnsupportedError, f"np.linalg.{name}: empty matrices {x.shape} are not supported")
    return x


def _householder(x: Tracer, columns: int) -> tuple[Tracer, Tracer]:
    """Q's first `columns` columns (..., m, columns) and R (..., m, n) of the Householder QR of x (the `qr` primitive)."""
    packed = result(x._trace, x._trace.make("qr", (x._node,), (columns,)))
    return packed[..., :columns], packed[..., columns:]


@implements("linalg.qr")
def qr(a: Any, mode: str = "reduced") -> Any:
    """np.linalg.qr: mode 'reduced' (Q m x k, R k x n), 'complete' (Q m x m, R m x n) or 'r' (R k x n), k = min(m, n)."""
    (x,) = matrices("qr", a, square=False)
    _nonempty("qr", x)
    m, n = x.shape[-2:]
    k = min(m, n)
    if mode == "raw":
        raise fail(UnsupportedError, "np.linalg.qr(mode='raw') (LAPACK's packed reflectors and tau) is not supported; "
                                     "use mode 'reduced', 'complete' or 'r'")
    if mode not in ("reduced", "complete", "r"):
        raise ValueError(f"np.linalg.qr: unrecognized mode '{mode}'")
    q, r = _householder(x, {"reduced": k, "complete": m, "r": 0}[mode])
    if mode == "r":
        return r[..., :k, :]
    return _QR_RESULT(q, r if mode == "complete" else r[..., :k, :])


def _power_of_two_scale(x: Tracer) -> Tracer:
    """The power of two at or below each matrix's largest |element| (1 for a zero matrix), (..., 1, 1): dividing by it
    (exactly) keeps the Jacobi loops' squares from underflowing or overflowing, as LAPACK scales."""
    largest = np.max(np.abs(x), axis=(-2, -1), keepdims=True)
    return np.exp2(np.floor(np.log2(np.where(largest > 0, largest, 1)))).astype(x.dtype)


def _eigen(name: str, a: Any, UPLO: str) -> tuple[Tracer, Tracer]:
    """The ascending eigenvalues and the eigenvectors (columns) of each symmetric matrix, read from its UPLO triangle."""
    UPLO = str(UPLO).upper()
    if UPLO not in ("L", "U"):
        raise ValueError(f"np.linalg.{name}: UPLO argument must be 'L' or 'U', got {UPLO!r}")
    (x,) = matrices(name, a)
    _nonempty(name, x)
    n = x.shape[-1]
    half, strict = (np.tril(x), np.tril(x, -1)) if UPLO == "L" else (np.triu(x), np.triu(x, 1))
    symmetric = half + np.swapaxes(strict, -1, -2)
    scale = _power_of_two_scale(symmetric)
    packed = result(x._trace, x._trace.make("eigh", ((symmetric / scale)._node,)))  # rows: eigenvector, eigenvalue
    w = packed[..., n] * scale[..., 0]
    check_at_run_time(~np.isfinite(w), f"np.linalg.{name}: Eigenvalues did not converge", LinAlgError)
    return w, np.swapaxes(packed[..., :n], -1, -2)


@implements("linalg.eigh")
def eigh(a: Any, UPLO: str = "L") -> Any:
    """np.linalg.eigh: (eigenvalues ascending, eigenvectors as columns) of each symmetric matrix."""
    return _EIGH_RESULT(*_eigen("eigh", a, UPLO))


@implements("linalg.eigvalsh")
def eigvalsh(a: Any, UPLO: str = "L") -> Tracer:
    """np.linalg.eigvalsh: the ascending eigenvalues of each symmetric matrix."""
    return _eigen("eigvalsh", a, UPLO)[0]


def _refuse_eig(name: str) -> None:
    def refuse(*args: Any, **kwargs: Any) -> Tracer:
        raise fail(UnsupportedError, f"np.linalg.{name}({describe(args)}): the eigenvalues of a general matrix are complex, and complex arrays are "
                                     "not supported; for a symmetric matrix use np.linalg.eigh (eigvalsh for the eigenvalues only)")

    implements(f"linalg.{name}")(refuse)


for _name in ("eig", "eigvals"):
    _refuse_eig(_name)


def _jacobi(name: str, x: Tracer) -> tuple[Tracer, Tracer, Tracer, bool]:
    """The one-sided Jacobi SVD of x or, if it is wide, of its transpose (the tall one, M x N, M >= N): A V
    (..., M, N: columns u_i s_i), V^T (..., N, N), s (..., N) descending, and whether x is tall."""
    m, n = _nonempty(name, x).shape[-2:]
    tall = m >= n
    y = x if tall else np.swapaxes(x, -1, -2)
    rows, columns = y.shape[-2:]
    scale = _power_of_two_scale(y)
    packed = result(x._trace, x._trace.make("svd", ((y / scale)._node,)))
    s = packed[..., rows + columns] * scale[..., 0]
    check_at_run_time(~np.isfinite(s), f"np.linalg.{name}: SVD did not converge", LinAlgError)
    return np.swapaxes(packed[..., :rows], -1, -2) * scale, packed[..., rows : rows + columns], s, tall


@implements("linalg.svd")
def svd(a: Any, full_matrices: bool = True, compute_uv: bool = True, hermitian: bool = False) -> Any:
    """np.linalg.svd: (U, s, Vh) with s descending (full_matrices: U m x m, Vh n x n), or s (compute_uv=False);
    `hermitian` only allows a faster algorithm in NumPy: the general one is used."""
    (x,) = matrices("svd", a, square=False)
    scaled, vt, s, tall = _jacobi("svd", x)
    if not compute_uv:
        return s
    rows, columns = scaled.shape[-2:]
    q, r = _householder(scaled, rows if full_matrices else columns)
    sign = np.where(np.diagonal(r[..., :columns, :], axis1=-2, axis2=-1) < 0, -1, 1).astype(x.dtype)
    if full_matrices and rows > columns:
        sign = np.concatenate([sign, np.ones_like(q[..., 0, columns:])], axis=-1)
    u = q * sign[..., None, :]
    if tall:
        return _SVD_RESULT(u, s, vt)
    return _SVD_RESULT(np.swapaxes(vt, -1, -2), s, np.swapaxes(u, -1, -2))


@implements("linalg.svdvals")
def svdvals(x: Any, /) -> Tracer:
    """np.linalg.svdvals: the singular values of each matrix, descending."""
    (y,) = matrices("svdvals", x, square=False)
    return _jacobi("svdvals", y)[2]


def _relative(x: Tracer, bound: Any) -> Tracer:
    """A cutoff (a number, or one per matrix of x's stack; traced ones too) in x's dtype, broadcast against s (..., k)."""
    return as_array(x._trace, bound).astype(x.dtype)[..., None]


def _pseudo_inverse(name: str, x: Tracer, rcond: Any) -> tuple[Tracer, Tracer, Tracer]:
    """x's pseudo-inverse (singular values <= rcond times the largest taken as 0), its singular values and
    the count of those kept."""
    scaled, vt, s, tall = _jacobi(name, x)
    large = s > _relative(x, rcond) * s[..., :1]
    weights = np.where(large, 1 / np.where(large, s, 1), 0).astype(x.dtype)[..., :, None]
    u = weights * np.swapaxes(scaled, -1, -2)  # u_i^T = (u_i s_i)^T / s_i, then v_i u_i^T / s_i (not / s_i^2: no underflow)
    tall_inverse = np.swapaxes(vt, -1, -2) @ (weights * u)
    return (tall_inverse if tall else np.swapaxes(tall_inverse, -1, -2)), s, np.sum(large, axis=-1)


@implements("linalg.pinv")
def pinv(a: Any, rcond: Any = None, hermitian: bool = False, *, rtol: Any = np._NoValue) -> Tracer:
    """np.linalg.pinv: V diag(1/s) U^T, singular values <= rcond * max(s) dropped (NumPy's rcond/rtol defaults)."""
    (x,) = matrices("pinv", a, square=False)
    if rcond is None:
        rcond = 1e-15 if rtol is np._NoValue else max(x.shape[-2:]) * np.finfo(x.dtype).eps if rtol is None else rtol
    elif rtol is not np._NoValue:
        raise ValueError("np.linalg.pinv: `rtol` and `rcond` can't be both set.")
    return _pseudo_inverse("pinv", x, rcond)[0]


@implements("linalg.lstsq")
def lstsq(a: Any, b: Any, rcond: Any = None) -> tuple[Tracer, Tracer, Tracer, Tracer]:
    """np.linalg.lstsq of 2-D a and 1-D or 2-D b: (x, residuals, rank, s). The residuals' shape is static:
    (k,) (1 for a 1-D b) when m > n, else (0,); NumPy also gives (0,) when the rank is below n, known only at
    run time: then this gives the residuals' sums of squares all the same."""
    x, y = matrices("lstsq", a, b, square=False)
    if x.ndim != 2 or y.ndim not in (1, 2):
        raise fail(LinAlgError, f"np.linalg.lstsq: {x.ndim if x.ndim != 2 else y.ndim}-dimensional array given. Array must be two-dimensional")
    m, n = x.shape
    if y.shape[0] != m:
        raise fail(LinAlgError, f"np.linalg.lstsq: Incompatible dimensions: a {x.shape}, b {y.shape}")
    if rcond is None:
        rcond = np.finfo(x.dtype).eps * max(m, n)
    inverse_, s, rank = _pseudo_inverse("lstsq", x, rcond)
    solution = inverse_ @ y
    error = y - x @ solution
    residuals = np.sum(error * error, axis=0, keepdims=y.ndim == 1)
    return solution, residuals if m > n else residuals[..., :0], rank.astype("int32"), s


@implements("linalg.matrix_rank")
def matrix_rank(A: Any, tol: Any = None, hermitian: bool = False, *, rtol: Any = None) -> Tracer:
    """np.linalg.matrix_rank: the count of singular values above tol (default max(s) * max(m, n) * eps)."""
    trace = trace_of([A])
    x = as_array(trace, A)
    if x.ndim < 2:
        return np.any(x != 0).astype("int64")
    (x,) = matrices("matrix_rank", x, square=False)
    if rtol is not None and tol is not None:
        raise ValueError("np.linalg.matrix_rank: `tol` and `rtol` can't be both set.")
    s = _jacobi("matrix_rank", x)[2]
    if tol is None:
        tol = s[..., :1] * _relative(x, max(x.shape[-2:]) * np.finfo(x.dtype).eps if rtol is None else rtol)
    else:
        tol = _relative(x, tol)
    return np.sum(s > tol, axis=-1).astype("int64")


@implements("linalg.cond")
def cond(x: Any, p: Any = None) -> Tracer:
    """np.linalg.cond: s_max / s_min (p None or 2; -2: the inverse), else norm(x, p) norm(inv(x), p); NaN from a
    singular matrix as inf (unless x has NaN), as NumPy."""
    (y,) = matrices("cond", x, square=p not in (None, 2, -2))
    if p in (None, 2, -2):
        s = _jacobi("cond", y)[2]
        r = s[..., -1] / s[..., 0] if p == -2 else s[..., 0] / s[..., -1]
    else:
        norm = lambda v: np.linalg.norm(v, p, axis=(-2, -1))
        r = norm(y) * norm(inverse("cond", y, check=False))
    return np.where(np.isnan(r) & ~np.any(np.isnan(y), axis=(-2, -1)), np.inf, r).astype(y.dtype)
