"""scipy.linalg's dense solvers in a kernel: `solve`, `solve_triangular`, `cholesky`, `cho_factor`, `cho_solve`, `inv`,
`det`, `norm`, `eigh`, `svd`, `qr`, `lstsq`, on the kernel's np.linalg (tracing/solve.py, orthogonal.py).

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
from .core import fail
from .creation import eye, replace_foreign_while_tracing, traced_or_original


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


FUNCTIONS: dict[str, Callable[..., Any]] = {fn.__name__: fn for fn in (
    solve, solve_triangular, cholesky, cho_factor, cho_solve, inv, det, norm, eigh, svd, qr, lstsq)}


for _name, _ours in FUNCTIONS.items():
    replace_foreign_while_tracing(f"scipy.linalg:{_name}", traced_or_original(_ours))
