"""np.linalg's orthogonal factorizations (tracing/orthogonal.py, lowering/orthogonal.py) against NumPy: qr
(R and Q as LAPACK's, signs included), eigh/eigvalsh (A V = V diag(w), V orthogonal, w as NumPy's), svd (its
reconstruction, orthogonality, s as NumPy's) and on it pinv, lstsq, matrix_rank, cond and the 2, -2 and
nuclear norms; rank-deficient input; NaN input raising NumPy's "did not converge" after the call."""

from __future__ import annotations

import numpy as np
import pytest

import egglog_tensor as et


def decompositions(a, s, s_upper):
    """Every factorization of a (..., m, n) and of the symmetric s (..., n, n) in one kernel (one compile)."""
    q, r = np.linalg.qr(a)
    qc, rc = np.linalg.qr(a, mode="complete")
    w, v = np.linalg.eigh(s)
    u, sv, vh = np.linalg.svd(a)
    ur, _, vhr = np.linalg.svd(a, full_matrices=False)
    norms = [np.linalg.norm(a, order, axis=(-2, -1)) for order in (2, -2, "nuc")]
    return (q, r, qc, rc, np.linalg.qr(a, mode="r"), w, v, u, sv, vh, ur, vhr,
            np.linalg.svd(a, compute_uv=False), np.linalg.pinv(a), np.linalg.matrix_rank(a), np.linalg.cond(a), *norms,
            np.linalg.eigvalsh(s_upper, UPLO="U"))


def orthogonality(q: np.ndarray) -> float:
    """max |Q^T Q - I| over the stack."""
    k = q.shape[-1]
    return float(np.abs(np.swapaxes(q, -1, -2) @ q - np.eye(k)).max())


def check(shape: tuple[int, ...], dtype: str, target: str | None = None) -> None:
    rng = np.random.default_rng(sum(shape))
    a = rng.standard_normal(shape).astype(dtype)
    half = rng.standard_normal(shape[:-2] + (shape[-1], shape[-1]))
    s = (half + np.swapaxes(half, -1, -2)).astype(dtype)
    s_lower = np.tril(s) + np.triu(np.full_like(s, np.nan), 1)  # eigh reads s's lower triangle only (eigvalsh(UPLO='U') the upper)
    s_upper = np.triu(s) + np.tril(np.full_like(s, np.nan), -1)
    got = et.kernel(decompositions, target=target)(a, s_lower, s_upper)
    q, r, qc, rc, rr, w, v, u, sv, vh, ur, vhr, s_only, p, rank, c, n2, nm2, nuc, got_upper = got
    m, n = shape[-2:]
    k = min(m, n)
    f64 = dtype == "float64"
    tol = (1e-13 if f64 else 1e-5) * max(m, n)  # orthogonality, residuals relative to ||a||
    scale = np.abs(a).max()
    assert {x.dtype for x in got if x.dtype.kind == "f"} == {np.dtype(dtype)}
    # qr: NumPy's Q and R (LAPACK's Householder signs), orthogonal Q
    want_q, want_r = np.linalg.qr(a)
    want_qc, want_rc = np.linalg.qr(a, mode="complete")
    assert q.shape == want_q.shape and r.shape == want_r.shape and qc.shape == want_qc.shape and rc.shape == want_rc.shape
    np.testing.assert_array_equal(np.sign(np.diagonal(r, axis1=-2, axis2=-1)), np.sign(np.diagonal(want_r, axis1=-2, axis2=-1)))
    for x, y in ((q, want_q), (r, want_r), (qc, want_qc), (rc, want_rc), (rr, want_r)):
        np.testing.assert_allclose(x, y, atol=tol * max(1.0, scale), rtol=0)
    assert orthogonality(q) < tol and orthogonality(qc) < tol
    assert np.all(np.tril(r, -1) == 0) and np.all(np.tril(rc, -1) == 0)
    # eigh: A V = V diag(w), V orthogonal, w ascending as NumPy's
    want_w = np.linalg.eigvalsh(s)
    norm_s = np.abs(want_w).max()
    np.testing.assert_allclose(w, want_w, atol=tol * norm_s, rtol=0)
    np.testing.assert_allclose(got_upper, want_w, atol=tol * norm_s, rtol=0)
    assert np.all(np.diff(w, axis=-1) >= 0)
    assert np.abs(s.astype(np.float64) @ v - v * w[..., None, :]).max() < tol * norm_s
    assert orthogonality(v) < tol
    # svd: s as NumPy's, U S Vh = a, U (m x m, m x k) and Vh orthogonal
    want_s = np.linalg.svd(a, compute_uv=False)
    norm_a = want_s[..., 0].max()
    for x in (sv, s_only):
        np.testing.assert_allclose(x, want_s, atol=tol * norm_a, rtol=0)
    assert u.shape == shape[:-2] + (m, m) and vh.shape == shape[:-2] + (n, n) and ur.shape == shape[:-2] + (m, k) and vhr.shape == shape[:-2] + (k, n)
    assert np.abs((ur * sv[..., None, :]) @ vhr - a).max() < tol * norm_a
    assert np.abs((u[..., :k] * sv[..., None, :]) @ vh[..., :k, :] - a).max() < tol * norm_a
    for x in (u, ur, np.swapaxes(vh, -1, -2), np.swapaxes(vhr, -1, -2)):
        assert orthogonality(x) < tol
    # on the SVD
    np.testing.assert_allclose(p, np.linalg.pinv(a), atol=tol * 10 * np.abs(np.linalg.pinv(a)).max(), rtol=0)
    np.testing.assert_array_equal(rank, np.linalg.matrix_rank(a))
    np.testing.assert_allclose(c, np.linalg.cond(a), rtol=tol * 100)
    for x, order in zip((n2, nm2, nuc), (2, -2, "nuc"), strict=True):
        np.testing.assert_allclose(x, np.linalg.norm(a, order, axis=(-2, -1)), rtol=tol)


SLOW = pytest.mark.slow


@pytest.mark.parametrize(("shape", "dtype"), [
    ((1, 1), "float64"), ((3, 3), "float64"), ((64, 64), "float64"), ((17, 5), "float64"), ((3, 17), "float32"),
    pytest.param((2, 2), "float64", marks=SLOW), pytest.param((17, 17), "float64", marks=SLOW), pytest.param((64, 64), "float32", marks=SLOW), pytest.param((17, 17), "float32", marks=SLOW), pytest.param((5, 17), "float64", marks=SLOW),
    pytest.param((2, 2), "float32", marks=SLOW), pytest.param((200, 120), "float64", marks=SLOW),
])  # fmt: skip
def test_decompositions_match_lapack(shape: tuple[int, ...], dtype: str) -> None:
    check(shape, dtype)


def test_stacked_matrices_on_openmp() -> None:
    check((2, 3, 4, 6), "float64", target="cpu-openmp")  # (wide: the SVD of each transpose)


def test_cond_of_other_norms_and_singular_matrices() -> None:
    """cond(x, p) for p not ±2 is norm(x, p) norm(inv(x), p); a singular matrix gives inf, as NumPy (no error)."""
    rng = np.random.default_rng(4)
    stack = np.stack([rng.standard_normal((3, 3)), np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [0.0, 1.0, 1.0]])])
    orders = ("fro", 1, -1, np.inf, -np.inf, None, -2)
    fn = lambda x: tuple(np.linalg.cond(x, p) for p in orders)
    for p, got, want in zip(orders, et.kernel(fn)(stack), fn(stack), strict=True):
        if p is None:  # s_max / s_min: the SVD's s_min of a singular matrix is 0 or rounding (NumPy: 1e16)
            assert got[1] > 1e15
        elif p == -2:
            assert got[1] < 1e-15
        else:
            assert np.isinf(got[1]) and np.isinf(want[1]), p
        np.testing.assert_allclose(got[0], want[0], rtol=1e-12, err_msg=str(p))


def test_rank_deficient_pinv_lstsq_matrix_rank() -> None:
    rng = np.random.default_rng(7)
    a = rng.standard_normal((6, 2)) @ rng.standard_normal((2, 4))  # 6 x 4 of rank 2
    b = rng.standard_normal(6)

    def fn(a, b):
        x, residuals, rank, s = np.linalg.lstsq(a, b)
        u, _, vh = np.linalg.svd(a)
        return np.linalg.pinv(a), np.linalg.matrix_rank(a), x, residuals, rank, s, u, vh

    p, rank, x, residuals, lrank, s, u, vh = et.kernel(fn)(a, b)
    cutoffs = np.array([0.5, 1e-9])  # traced cutoffs, one per matrix of a stack
    stack = np.stack([a, a])
    ranks, relative, inverses = et.kernel(lambda a, t: (np.linalg.matrix_rank(a, tol=t), np.linalg.matrix_rank(a, rtol=t),
                                                        np.linalg.pinv(a, rcond=t)))(stack, cutoffs)
    np.testing.assert_array_equal(ranks, np.linalg.matrix_rank(stack, tol=cutoffs))
    np.testing.assert_array_equal(relative, np.linalg.matrix_rank(stack, rtol=cutoffs))
    np.testing.assert_allclose(inverses, np.linalg.pinv(stack, rcond=cutoffs), atol=1e-12)
    want_x, _, want_rank, want_s = np.linalg.lstsq(a, b)
    np.testing.assert_allclose(p, np.linalg.pinv(a), atol=1e-12)
    assert rank == 2 == np.linalg.matrix_rank(a) and lrank == want_rank
    np.testing.assert_allclose(x, want_x, atol=1e-12)
    np.testing.assert_allclose(s, want_s, atol=1e-13 * want_s[0])
    assert residuals.shape == (1,)  # static: m > n (NumPy gives (0,) at this run-time rank 2 < 4: documented)
    assert residuals[0] == pytest.approx(np.sum((b - a @ want_x) ** 2), rel=1e-9)
    assert orthogonality(u) < 1e-13 and orthogonality(vh) < 1e-13  # complete and orthonormal though a is rank-deficient
    # a full-rank tall and a wide system: NumPy's residuals and shapes
    tall, wide, c = rng.standard_normal((7, 3)), rng.standard_normal((3, 5)), rng.standard_normal((7, 2))
    lstsq = et.kernel(lambda a, b: np.linalg.lstsq(a, b, rcond=None))
    for a, b in ((tall, c), (wide, c[:3])):
        got, want = lstsq(a, b), np.linalg.lstsq(a, b)
        for x, y in zip(got, want, strict=True):
            assert np.shape(x) == np.shape(y)
            np.testing.assert_allclose(x, y, rtol=1e-10, atol=1e-12)


def test_nan_input_raises_did_not_converge() -> None:
    bad = np.array([[1.0, np.nan], [np.nan, 1.0]])  # (NaN off the diagonal only: it must spread)
    with pytest.raises(np.linalg.LinAlgError, match="np.linalg.svd: SVD did not converge"):
        et.kernel(np.linalg.svd)(bad)
    eigh = et.kernel(np.linalg.eigh)
    with pytest.raises(et.LinAlgError, match="np.linalg.eigh: Eigenvalues did not converge"):
        eigh(bad)
    w, _ = eigh(np.eye(2))  # the same kernel still runs
    np.testing.assert_array_equal(w, [1.0, 1.0])
    with pytest.raises(et.LinAlgError, match="SVD did not converge"):
        et.kernel(np.linalg.pinv)(np.array([[1.0, np.inf], [0.0, 1.0]]))


def test_integers_are_float64_and_zero_matrices() -> None:
    a = np.array([[2, 1], [1, 2]])
    w, s, rank, p = et.kernel(lambda a: (np.linalg.eigvalsh(a), np.linalg.svd(a, compute_uv=False), np.linalg.matrix_rank(a), np.linalg.pinv(a)))(a)
    assert w.dtype == s.dtype == p.dtype == np.float64 and rank == 2
    np.testing.assert_allclose(p, np.linalg.inv(a), rtol=1e-14)
    np.testing.assert_allclose(w, [1.0, 3.0], rtol=1e-15)
    np.testing.assert_allclose(s, [3.0, 1.0], rtol=1e-15)
    zero = np.zeros((3, 2))
    u, sv, vh = et.kernel(np.linalg.svd)(zero)
    assert np.all(sv == 0) and orthogonality(u) < 1e-15 and orthogonality(vh) < 1e-15


@pytest.mark.parametrize(("fn", "error", "message"), [
    (np.linalg.eig, et.UnsupportedError, r"np.linalg.eig\(tracer float64\[3, 3\]\): the eigenvalues of a general matrix are complex, .*use np.linalg.eigh"),
    (np.linalg.eigvals, et.UnsupportedError, "complex arrays are not supported; for a symmetric matrix use np.linalg.eigh"),
    (lambda a: np.linalg.qr(a, mode="raw"), et.UnsupportedError, r"np.linalg.qr\(mode='raw'\)"),
    (lambda a: np.linalg.qr(a, mode="full"), ValueError, "unrecognized mode 'full'"),
    (lambda a: np.linalg.eigh(a, UPLO="X"), ValueError, "UPLO argument must be 'L' or 'U'"),
    (lambda a: np.linalg.eigh(a[:2]), et.LinAlgError, "Last 2 dimensions of the array must be square"),
    (lambda a: np.linalg.svd(a[0]), et.LinAlgError, "1-dimensional array given"),
])  # fmt: skip
def test_refusals_while_tracing(fn, error, message) -> None:
    with pytest.raises(error, match=message):
        et.kernel(fn).trace(np.eye(3))


def test_gpu_targets_refuse_naming_the_op() -> None:
    with pytest.raises(et.UnsupportedError, match="GPU target rocdl: the (qr|svd) primitive of np.linalg.solve, .*qr, eigh, svd.* gfx942"):
        et.kernel(np.linalg.svd, target="rocdl:gfx942").inspect(np.eye(3))


def test_tiny_and_huge_float32_values_neither_underflow_nor_overflow() -> None:
    """Squares of 1e-25 underflow and of 1e25 overflow in float32: the Jacobi loops see the matrices scaled by a power of two."""
    rng = np.random.default_rng(9)
    tiny = (rng.standard_normal((4, 3)) * 1e-25).astype(np.float32)
    b = rng.standard_normal((3, 3))
    symmetric, huge = ((b + b.T) * 1e-25).astype(np.float32), (rng.standard_normal((3, 4)) * 1e25).astype(np.float32)
    fn = lambda a, s, h: (np.linalg.pinv(a), np.linalg.eigvalsh(s), np.linalg.svdvals(h))
    for got, want in zip(et.kernel(fn)(tiny, symmetric, huge), fn(tiny, symmetric, huge), strict=True):
        assert np.all(np.isfinite(got))
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4 * np.abs(want).max())
