"""scipy.linalg's dense solvers in a kernel: `solve`, `solve_triangular`, `cholesky`, `cho_factor`, `cho_solve`, `inv`,
`det`, `norm`, `eigh`, `svd`, `qr`, `lstsq`, `lu_factor`, `lu_solve`, `expm`, on the kernel's np.linalg (tracing/solve.py,
orthogonal.py), and the special matrices `toeplitz`, `hankel`, `circulant` (gathers: SciPy strides a view).

SciPy's own functions validate their arguments with NumPy conversions and call LAPACK, which traced arrays cannot
reach. While a kernel is traced (and scipy.linalg was imported) they are replaced in scipy.linalg by these when an
argument is traced, so `scipy.linalg.solve(...)`, `sla.cho_solve(...)` trace; the kernel function's own module
globals that hold SciPy's function (`from scipy.linalg import solve`) hold the replacement while it is traced too
(creation.rebound). SciPy's conventions are kept: `cholesky` is upper unless `lower=True`; `solve` with
`assume_a="pos"`/`"sym"` reads one triangle (`lower`), `transposed` solves with a.T; `solve_triangular` reads one
triangle, `trans`, `unit_diagonal`; `cho_factor`'s other triangle holds zeros (SciPy's: whatever a held there,
documented as arbitrary); `qr`'s mode "full" (SciPy's default) is NumPy's "complete", "economic" NumPy's "reduced",
"r" gives (r,). Triangular systems are solved by the kernel's LU solve of the triangle (no pivoting is needed for
an upper one: the same substitution; a lower one may swap rows: within the same accuracy). Other scipy.linalg
functions keep SciPy's (their error names the compiled code)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..errors import UnsupportedError
from .core import fail, traced_or_ndarray
from .creation import eye, replace_foreign_while_tracing, traced_or_original
from .solve import lu, matrices, substituted


def _triangle(a: Any, lower: bool, unit_diagonal: bool = False) -> Any:
    t = np.tril(a) if lower else np.triu(a)
    return np.where(eye(t.shape[-1], dtype=bool), 1.0, t) if unit_diagonal else t


def _mirrored(a: Any, lower: bool) -> Any:
    """The symmetric matrix of a's one triangle (lower or upper, diagonal included)."""
    strict = np.tril(a, -1) if lower else np.triu(a, 1)
    return _triangle(a, lower) + np.swapaxes(strict, -1, -2)


def solve(a: Any, b: Any, lower: bool = False, overwrite_a: bool = False, overwrite_b: bool = False, check_finite: bool = True,
          assume_a: str | None = None, transposed: bool = False) -> Any:
    kind = {None: "gen", "general": "gen", "symmetric": "sym", "hermitian": "sym", "her": "sym", "positive definite": "pos",
            "lower triangular": "lower", "upper triangular": "upper", "diagonal": "diagonal"}.get(assume_a, assume_a)
    if kind in ("sym", "pos"):  # one triangle read, mirrored
        a = _mirrored(a, lower)
    elif kind in ("lower", "upper"):
        a = _triangle(a, kind == "lower")
    elif kind == "diagonal":
        a = a * eye(np.shape(a)[-1], dtype=bool)
    elif kind != "gen":
        raise fail(UnsupportedError, f"scipy.linalg.solve: assume_a={assume_a!r} is not supported in a kernel")
    return np.linalg.solve(np.swapaxes(a, -1, -2) if transposed else a, b)


def solve_triangular(a: Any, b: Any, trans: Any = 0, lower: bool = False, unit_diagonal: bool = False, overwrite_b: bool = False,
                     check_finite: bool = True) -> Any:
    t = _triangle(a, lower, unit_diagonal)
    return np.linalg.solve(np.swapaxes(t, -1, -2) if trans in (1, 2, "T", "C") else t, b)


def cholesky(a: Any, lower: bool = False, overwrite_a: bool = False, check_finite: bool = True) -> Any:
    return np.linalg.cholesky(a, upper=not lower)


def cho_factor(a: Any, lower: bool = False, overwrite_a: bool = False, check_finite: bool = True) -> tuple[Any, bool]:
    return cholesky(a, lower), lower


def cho_solve(c_and_lower: tuple[Any, bool], b: Any, overwrite_b: bool = False, check_finite: bool = True) -> Any:
    c, lower = c_and_lower
    factor = _triangle(c, lower)  # L (lower) or U = L^T
    first, second = (factor, np.swapaxes(factor, -1, -2)) if lower else (np.swapaxes(factor, -1, -2), factor)
    return np.linalg.solve(second, np.linalg.solve(first, b))


def inv(a: Any, overwrite_a: bool = False, check_finite: bool = True) -> Any:
    return np.linalg.inv(a)


def det(a: Any, overwrite_a: bool = False, check_finite: bool = True) -> Any:
    return np.linalg.det(a)


def norm(a: Any, ord: Any = None, axis: Any = None, keepdims: bool = False, check_finite: bool = True) -> Any:
    return np.linalg.norm(a, ord, axis, keepdims)


def eigh(a: Any, b: Any = None, *, lower: bool = True, eigvals_only: bool = False, overwrite_a: bool = False,
         overwrite_b: bool = False, type: int = 1, check_finite: bool = True, subset_by_index: Any = None,
         subset_by_value: Any = None, driver: Any = None) -> Any:
    if b is not None or subset_by_index is not None or subset_by_value is not None:
        raise fail(UnsupportedError, "scipy.linalg.eigh: a generalized problem (b) or a subset of eigenvalues is not supported in a kernel")
    w, v = np.linalg.eigh(a, UPLO="L" if lower else "U")
    return w if eigvals_only else (w, v)


def svd(a: Any, full_matrices: bool = True, compute_uv: bool = True, overwrite_a: bool = False, check_finite: bool = True,
        lapack_driver: str = "gesdd") -> Any:
    return np.linalg.svd(a, full_matrices=full_matrices, compute_uv=compute_uv)


def qr(a: Any, overwrite_a: bool = False, lwork: Any = None, mode: str = "full", pivoting: bool = False, check_finite: bool = True) -> Any:
    if pivoting or mode not in ("full", "economic", "r"):
        raise fail(UnsupportedError, f"scipy.linalg.qr: mode={mode!r}, pivoting={pivoting} is not supported in a kernel")
    if mode == "r":  # (SciPy's R is (M, N), as in "full"; NumPy's mode "r" gives (K, N))
        return (np.linalg.qr(a, mode="complete")[1],)
    return tuple(np.linalg.qr(a, mode="complete" if mode == "full" else "reduced"))


def lstsq(a: Any, b: Any, cond: Any = None, overwrite_a: bool = False, overwrite_b: bool = False, check_finite: bool = True,
          lapack_driver: Any = None) -> Any:
    """(x, residues, rank, s) by the kernel's np.linalg.lstsq (`cond` its rcond); residues as SciPy's: a 0-d sum of
    squares for a 1-D b (NumPy's: one element), none (shape (0,)) where M <= N."""
    x, residues, rank, s = np.linalg.lstsq(a, b, rcond=cond)
    return x, residues[0] if np.ndim(b) == 1 and residues.shape[0] else residues, rank, s


def lu_factor(a: Any, overwrite_a: bool = False, check_finite: bool = True) -> tuple[Any, Any]:
    """(lu, piv): L\\U packed (L's unit diagonal implied) and the row swapped in at each step (int32, from 0), LAPACK's
    getrf as SciPy returns it (the kernel's `lu` primitive: the same pivots and arithmetic). SciPy's warning for an
    exactly singular matrix is not given (its zero pivot is in lu)."""
    (a,) = matrices("lu_factor", a)
    packed, _, swaps = lu(a)
    return packed[..., : a.shape[-1]], swaps.astype(np.int32)


def lu_solve(lu_and_piv: tuple[Any, Any], b: Any, trans: Any = 0, overwrite_b: bool = False, check_finite: bool = True) -> Any:
    """x with a x = b from lu_factor(a)'s (lu, piv) (trans 0: a's transpose is not supported), b (n,) or (n, k)."""
    if trans not in (0, "N"):
        raise fail(UnsupportedError, f"scipy.linalg.lu_solve: trans={trans!r} is not supported in a kernel (trans=0 is)")
    factors, piv = lu_and_piv
    factors, b = matrices("lu_solve", factors, b, square=True)
    column = b.ndim == 1
    b = b[:, None] if column else b
    if factors.ndim != 2 or b.ndim != 2 or b.shape[0] != factors.shape[0]:
        raise fail(UnsupportedError, f"scipy.linalg.lu_solve: lu {factors.shape} and b {b.shape}: one n x n factorization "
                                     "and b (n,) or (n, k) are supported")
    packed = np.concatenate([factors, traced_or_ndarray(piv, factors.dtype)[:, None]], axis=1)
    x = substituted(packed, b)
    return x[:, 0] if column else x


# Higham's (2005) degree-13 Padé approximant of exp: its coefficients and the largest 1-norm it is accurate to double for
_PADE13 = (64764752532480000.0, 32382376266240000.0, 7771770303897600.0, 1187353796428800.0, 129060195264000.0,
           10559470521600.0, 670442572800.0, 33522128640.0, 1323241920.0, 40840800.0, 960960.0, 16380.0, 182.0, 1.0)
_THETA13 = 5.371920351148152


def expm(A: Any) -> Any:
    """exp of each square matrix of A (..., n, n) by scaling and squaring (Higham 2005): A / 2^s with s the fewest
    halvings bringing the largest 1-norm of the stack under theta_13, the degree-13 Padé approximant (one solve), then
    s squarings. s is read from the data as a guard (int() of a traced value): a kernel is compiled per s it meets.
    SciPy picks among degrees 3-13 by norm estimates (Al-Mohy and Higham 2009): the results differ by rounding."""
    (a,) = matrices("expm", A)
    if not a.size:
        return a
    norm1 = np.max(np.sum(np.abs(a), axis=-2))
    s = int(np.where(np.isfinite(norm1) & (norm1 > _THETA13), np.ceil(np.log2(norm1 / _THETA13)), 0.0))
    a = a * (0.5 ** s)
    b = _PADE13
    ident = np.broadcast_to(eye(a.shape[-1], dtype=a.dtype), a.shape)
    a2 = a @ a
    a4 = a2 @ a2
    a6 = a4 @ a2
    u = a @ (a6 @ (b[13] * a6 + b[11] * a4 + b[9] * a2) + b[7] * a6 + b[5] * a4 + b[3] * a2 + b[1] * ident)
    v = a6 @ (b[12] * a6 + b[10] * a4 + b[8] * a2) + b[6] * a6 + b[4] * a4 + b[2] * a2 + b[0] * ident
    r = np.linalg.solve(v - u, v + u)
    for _ in range(s):
        r = r @ r
    return r


def toeplitz(c: Any, r: Any = None) -> Any:
    """The Toeplitz matrix of first column c and first row r (r[0] ignored; c's by default), each leading dims a batch
    (SciPy 1.17's): a gather of c reversed then r[1:], at (len(c) - 1) - i + j."""
    c = np.atleast_1d(c)
    r = c if r is None else np.atleast_1d(r)
    batch = np.broadcast_shapes(c.shape[:-1], r.shape[:-1])
    m, n = c.shape[-1], r.shape[-1]
    values = np.concatenate([np.broadcast_to(c[..., ::-1], batch + (m,)), np.broadcast_to(r[..., 1:], batch + (n - 1,))], axis=-1)
    return np.take(values, (m - 1) - np.arange(m)[:, None] + np.arange(n), axis=-1)


def hankel(c: Any, r: Any = None) -> Any:
    """The Hankel matrix of first column c and last row r (r[0] ignored; zeros by default), both raveled (SciPy 1.17's,
    without its FutureWarning): a gather of c then r[1:], at i + j."""
    c = np.ravel(c)
    r = np.zeros_like(c) if r is None else np.ravel(r)
    values = np.concatenate([c, r[1:]])
    return np.take(values, np.arange(c.shape[0])[:, None] + np.arange(r.shape[0]), axis=-1)


def circulant(c: Any) -> Any:
    """The circulant matrix of first column c, its leading dims a batch: c[(i - j) mod n]."""
    c = np.atleast_1d(c)
    n = c.shape[-1]
    return np.take(c, (np.arange(n)[:, None] - np.arange(n)) % n, axis=-1)


FUNCTIONS: dict[str, Callable[..., Any]] = {fn.__name__: fn for fn in (
    solve, solve_triangular, cholesky, cho_factor, cho_solve, inv, det, norm, eigh, svd, qr, lstsq, lu_factor, lu_solve, expm,
    toeplitz, hankel, circulant)}


for _name, _ours in FUNCTIONS.items():
    replace_foreign_while_tracing(f"scipy.linalg:{_name}", traced_or_original(_ours))
