"""scipy.linalg's dense solvers in a kernel (tracing/scipy_linalg.py): solve (assume_a, transposed),
solve_triangular (lower, trans, unit_diagonal), cholesky (SciPy's upper default), cho_factor/cho_solve, inv, det,
norm, eigh, svd, qr, called as `scipy.linalg.f`, through an alias, and bound by name before tracing (`from
scipy.linalg import cho_solve`, in the module's globals or a closure: creation.rebound, which also rebinds NumPy's
functions bound by name, `from numpy import zeros_like`), against SciPy itself."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg
import scipy.linalg as sla
from numpy import asarray, zeros_like
from scipy.linalg import cho_solve, cholesky, solve_triangular

import egglog_tensor as et
from egglog_tensor.errors import UnsupportedError

RNG = np.random.default_rng(12)
A = RNG.standard_normal((6, 6))
K = A @ A.T + 6 * np.eye(6)  # symmetric positive definite
Y = RNG.standard_normal(6)
B = RNG.standard_normal((6, 3))


def gaussian_process(K, y, B):
    """What GP and Kalman code writes: a Cholesky factor, solves with it, and the others."""
    L = cholesky(K, lower=True)
    U = sla.cholesky(K)
    return (cho_solve((L, True), y), solve_triangular(L, B, lower=True), U, sla.cho_solve(sla.cho_factor(K), B),
            scipy.linalg.solve(K, B, assume_a="pos"), sla.solve(K, y, transposed=True), sla.solve(np.triu(K) + 1, y, assume_a="sym"),
            sla.inv(K), sla.det(K), sla.norm(K), sla.norm(y, 1), sla.eigh(K)[0], sla.eigh(K, eigvals_only=True), sla.svd(K)[1],
            sla.qr(B)[0], sla.qr(B, mode="economic")[1], solve_triangular(U, y, trans="T"), sla.solve_triangular(K, y, unit_diagonal=True),
            zeros_like(asarray(y)) + 1)


def test_scipy_linalg_solvers_match_scipy() -> None:
    got, want = et.kernel(gaussian_process)(K, Y, B), gaussian_process(K, Y, B)
    for i, (g, w) in enumerate(zip(got, want, strict=True)):
        assert np.shape(g) == np.shape(w), i
        if i == 14:  # Q of a 6x3 QR: columns 3-5 span the complement, unique up to a rotation there; Q orthogonal
            np.testing.assert_allclose(g[:, :3] @ np.diag(np.sign(g[0, :3] * w[0, :3])), w[:, :3], rtol=1e-10, atol=1e-12)
            np.testing.assert_allclose(g.T @ g, np.eye(6), atol=1e-12)
            continue
        if i == 15:  # R up to the signs of its rows
            g = (np.sign(np.diag(g)) * np.sign(np.diag(w)))[:, None] * g
        np.testing.assert_allclose(g, w, rtol=1e-10, atol=1e-12, err_msg=str(i))


def test_bindings_hold_scipys_and_numpys_functions_again_after_the_trace() -> None:
    """A closure's and the module's names bound to SciPy's and NumPy's functions are rebound only while tracing."""
    solve = sla.solve

    def f(K, y):
        return solve(K, y) + cho_solve((cholesky(K, lower=True), True), y)

    np.testing.assert_allclose(et.kernel(f)(K, Y), f(K, Y), rtol=1e-10)
    assert solve is scipy.linalg._basic.solve and sla.solve is solve and cholesky is scipy.linalg._decomp_cholesky.cholesky
    assert zeros_like is np.zeros_like and np.zeros_like.__module__ == "numpy" and sla.cho_solve(sla.cho_factor(K), Y).shape == (6,)


def test_qr_r_mode_is_scipys_full_r() -> None:
    (got,), (want,) = et.kernel(lambda b: sla.qr(b, mode="r"))(B), sla.qr(B, mode="r")
    assert got.shape == want.shape == (6, 3)
    np.testing.assert_allclose(np.abs(got), np.abs(want), rtol=1e-10, atol=1e-12)


def test_unsupported_options_are_named() -> None:
    with pytest.raises(UnsupportedError, match="generalized problem"):
        et.kernel(lambda a: sla.eigh(a, a))(K)
    with pytest.raises(UnsupportedError, match="pivoting"):
        et.kernel(lambda a: sla.qr(a, pivoting=True))(K)


def test_triangles_and_diagonals_need_no_constant_matrix() -> None:
    """assume_a sym/pos/diagonal and unit_diagonal read the argument's triangle or diagonal by index, not through an
    n x n identity constant embedded in the kernel."""
    k = np.tril(RNG.standard_normal((40, 40))) + 40 * np.eye(40)

    def f(a, y):
        return (sla.solve(a, y, assume_a="pos", lower=True), sla.solve(a.T, y, assume_a="sym"),
                sla.solve_triangular(a, y, lower=True, unit_diagonal=True), sla.solve(a, y, assume_a="diagonal"))

    kern, y = et.kernel(f), RNG.standard_normal(40)
    assert "array(" not in kern.lower(k, y).as_text("traced")
    for got, want in zip(kern(k, y), f(k, y), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)


def test_scipy_lstsq_matches_scipy() -> None:
    """scipy.linalg.lstsq: (x, residues, rank, s), residues a 0-d sum of squares for a 1-D b, as SciPy's."""
    rng = np.random.default_rng(3)
    a, b = rng.standard_normal((7, 3)), rng.standard_normal(7)

    def f(a, b):
        return (*scipy.linalg.lstsq(a, b), *scipy.linalg.lstsq(a, np.stack([b, 2 * b], 1)))

    for got, want in zip(et.kernel(f)(a, b), f(a, b), strict=True):
        assert np.shape(got) == np.shape(want)
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14)
