"""np.linalg's solvers (solve, inv, det, slogdet, cholesky: tracing/solve.py, lowering/factor.py) and np.i0
(lowering/special.py) against NumPy: residuals of LAPACK's class on random well-conditioned matrices,
NumPy's errors for singular and non-positive-definite matrices (raised after the call) and for bad
shapes (at trace time), batched stacks on cpu and cpu-openmp; i0 within a few ulp of NumPy."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import egglog_tensor as et


def well_conditioned(rng: np.random.Generator, shape: tuple[int, ...], dtype: str) -> np.ndarray:
    """Random matrices with n on the diagonal added: condition numbers of a few units."""
    n = shape[-1]
    return (rng.standard_normal(shape) + n**0.5 * np.eye(n) * 2).astype(dtype)


def backward_error(a: np.ndarray, x: np.ndarray, b: np.ndarray) -> float:
    """LAPACK's test ratio ||b - a x|| / (||a|| ||x|| n eps) (1-norms, worst over the stack): below 30 passes."""
    a64, x64, b64 = (v.astype(np.float64) for v in (a, x, b))
    n, eps = a.shape[-1], np.finfo(a.dtype).eps
    residual = b64 - a64 @ x64
    norm = lambda v: np.abs(v).sum(axis=-2).max(axis=-1)
    return float(np.max(norm(residual) / (norm(a64) * norm(x64) * n * eps)))


def solvers(a, b, c, s):
    """Every solver on one matrix stack: solve with a vector and with matrices, inv, det, slogdet, cholesky."""
    sign, logdet = np.linalg.slogdet(a)
    return np.linalg.solve(a, b), np.linalg.solve(a, c), np.linalg.inv(a), np.linalg.det(a), sign, logdet, np.linalg.cholesky(s)


def check_solvers(n: int, dtype: str, batch: tuple[int, ...] = (), target: str | None = None) -> None:
    rng = np.random.default_rng(n)
    a = well_conditioned(rng, batch + (n, n), dtype)
    b = rng.standard_normal(n).astype(dtype)
    c = rng.standard_normal(batch + (n, 3)).astype(dtype)
    s = (a @ np.swapaxes(a, -1, -2)).astype(dtype)
    x, y, inv, det, sign, logdet, chol = et.kernel(solvers, target=target)(a, b, c, s)
    assert {v.dtype for v in (x, y, inv, np.asarray(det), np.asarray(logdet), chol)} == {np.dtype(dtype)}
    assert backward_error(a, x[..., None], np.broadcast_to(b[:, None], x[..., None].shape)) < 30
    assert backward_error(a, y, c) < 30
    eye = np.broadcast_to(np.eye(n, dtype=dtype), a.shape)
    assert backward_error(a, inv, eye) < 30
    tol = 1e-4 if dtype == "float32" else 1e-10
    want_sign, want_logdet = np.linalg.slogdet(a)
    np.testing.assert_array_equal(sign, want_sign)
    np.testing.assert_allclose(logdet, want_logdet, rtol=tol, atol=tol * n)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # a float32 det of 64 x 64 overflows (inf: ours too)
        np.testing.assert_allclose(det, np.linalg.det(a), rtol=tol * n)
    want_chol = np.linalg.cholesky(s)
    assert np.all(np.triu(chol, 1) == 0)
    np.testing.assert_allclose(chol, want_chol, rtol=tol * n, atol=tol * n * np.abs(want_chol).max())


SLOW = pytest.mark.slow  # (a compile each: the default run keeps float32 at two sizes)


@pytest.mark.parametrize(("n", "dtype"), [
    (1, "float64"), (2, "float64"), (3, "float64"), (17, "float64"), (64, "float64"), (3, "float32"), (64, "float32"),
    pytest.param(1, "float32", marks=SLOW), pytest.param(2, "float32", marks=SLOW), pytest.param(17, "float32", marks=SLOW),
    pytest.param(200, "float64", marks=SLOW), pytest.param(200, "float32", marks=SLOW),
])  # fmt: skip
def test_solvers_match_lapack(n: int, dtype: str) -> None:
    check_solvers(n, dtype)


@pytest.mark.parametrize("target", ["cpu", "cpu-openmp"])
def test_stacked_matrices(target: str) -> None:
    """A stack (..., n, n) factored matrix by matrix (in parallel on cpu-openmp), b broadcast against it."""
    check_solvers(5, "float64", batch=(2, 3), target=target)
    rng = np.random.default_rng(1)
    a, c = well_conditioned(rng, (4, 4), "float64"), rng.standard_normal((3, 4, 2))
    x = et.kernel(np.linalg.solve, target=target)(a, c)
    np.testing.assert_allclose(x, np.linalg.solve(a, c), rtol=1e-12)
    many = well_conditioned(rng, (300, 4, 4), "float64")
    np.testing.assert_allclose(et.kernel(np.linalg.inv, target=target)(many), np.linalg.inv(many), rtol=1e-10, atol=1e-12)


def test_openmp_shares_the_matrices() -> None:
    a = np.ones((8, 3, 3)) + np.eye(3)
    regions = et.kernel(np.linalg.inv, target="cpu-openmp").inspect(a).facts.get("openmp")
    assert regions is not None and regions.regions >= 1


def test_integers_are_float64_and_pivoting_swaps_rows() -> None:
    a = np.array([[0, 2, 1], [1, 0, 0], [3, 1, 2]])  # a zero first pivot: only a row swap solves it
    b = np.array([1, 2, 3])
    x, det = et.kernel(lambda a, b: (np.linalg.solve(a, b), np.linalg.det(a)))(a, b)
    assert x.dtype == np.float64 and det.dtype == np.float64
    np.testing.assert_allclose(x, np.linalg.solve(a, b), rtol=1e-14)
    assert det == pytest.approx(np.linalg.det(a), rel=1e-14)


def test_singular_matrices_raise_after_the_call_as_numpy() -> None:
    singular = np.array([[1.0, 2.0], [2.0, 4.0]])
    with pytest.raises(np.linalg.LinAlgError, match="np.linalg.solve: Singular matrix"):
        et.kernel(np.linalg.solve)(singular, np.ones(2))
    stack = np.stack([np.eye(2), singular, np.eye(2)])  # one singular matrix of a stack
    with pytest.raises(et.LinAlgError, match="np.linalg.inv: Singular matrix"):
        et.kernel(np.linalg.inv)(stack)
    det, sign, logdet = et.kernel(lambda a: (np.linalg.det(a), np.linalg.slogdet(a).sign, np.linalg.slogdet(a).logabsdet))(stack)
    np.testing.assert_array_equal(det, np.linalg.det(stack))
    np.testing.assert_array_equal(sign, [1.0, 0.0, 1.0])
    np.testing.assert_array_equal(logdet, [0.0, -np.inf, 0.0])
    with pytest.raises(np.linalg.LinAlgError, match="Matrix is not positive definite"):
        et.kernel(np.linalg.cholesky)(np.array([[1.0, 2.0], [2.0, 1.0]]))
    assert np.all(et.kernel(np.linalg.inv)(np.eye(2) * 2) == 0.5 * np.eye(2))  # the same kernel still runs


@pytest.mark.slow
def test_slogdet_of_a_large_matrix_does_not_overflow() -> None:
    a = np.random.default_rng(5).standard_normal((500, 500)) * 10
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        det = np.linalg.det(a)
    sign, logdet = et.kernel(np.linalg.slogdet)(a)
    want_sign, want_logdet = np.linalg.slogdet(a)
    assert np.isinf(det) and sign == want_sign and logdet == pytest.approx(want_logdet, rel=1e-12)


def test_cholesky_upper_and_lower_triangle_only() -> None:
    rng = np.random.default_rng(2)
    a = well_conditioned(rng, (4, 4), "float64")
    s = a @ a.T
    lower_only = np.tril(s) + np.triu(np.full((4, 4), np.nan), 1)  # LAPACK reads the lower triangle only
    np.testing.assert_allclose(et.kernel(np.linalg.cholesky)(lower_only), np.linalg.cholesky(s), rtol=1e-12)
    np.testing.assert_allclose(et.kernel(lambda s: np.linalg.cholesky(s, upper=True))(s), np.linalg.cholesky(s, upper=True), rtol=1e-12)


@pytest.mark.parametrize(("fn", "args", "error", "message"), [
    (np.linalg.inv, (np.ones((2, 3)),), et.LinAlgError, r"np.linalg.inv: Last 2 dimensions of the array must be square, got shape \(2, 3\)"),
    (np.linalg.det, (np.ones(3),), et.LinAlgError, "np.linalg.det: 1-dimensional array given. Array must be at least two-dimensional"),
    (np.linalg.solve, (np.eye(3), np.ones(4)), et.LinAlgError, r"np.linalg.solve: b of shape \(4,\) does not match a of shape \(3, 3\)"),
    (np.linalg.solve, (np.ones((2, 3, 3)), np.ones((4, 3, 1))), et.LinAlgError, "np.linalg.solve: the stacks of a"),
    (np.linalg.cholesky, (np.eye(2, dtype=np.float16),), et.UnsupportedError, "np.linalg.cholesky: array type float16 is unsupported"),
])  # fmt: skip
def test_bad_shapes_and_dtypes_fail_while_tracing(fn, args, error, message) -> None:
    with pytest.raises(error, match=message):
        et.kernel(fn).trace(*args)


def test_gpu_targets_refuse_naming_the_op() -> None:
    with pytest.raises(et.UnsupportedError, match="GPU target rocdl: the lu_solve primitive of np.linalg.solve, .* gfx942"):
        et.kernel(np.linalg.solve, target="rocdl:gfx942").inspect(np.eye(3), np.ones(3))


def ulps(got: np.ndarray, want: np.ndarray) -> np.ndarray:
    """The distance in units in the last place (0 where both are NaN or equal)."""
    signed = np.int64 if got.dtype == np.float64 else np.int32
    same = (got == want) | (np.isnan(got) & np.isnan(want))
    return np.where(same, 0, np.abs(got.view(signed).astype(np.int64) - want.view(signed).astype(np.int64)))


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_i0_within_a_few_ulp_of_numpy(dtype: str) -> None:
    specials = [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-300, 5e-324, 8.0, 20.0, np.nextafter(20.0, 21.0), 88.72283172607421875, 88.7229,
                709.7, 709.8, 710.0]  # fmt: skip
    x = np.concatenate([np.linspace(-700, 700, 70001), specials]).astype(dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # NumPy's exp overflows
        want = np.i0(x)
    got = et.kernel(np.i0)(x)
    assert got.dtype == want.dtype
    assert ulps(got, want).max() <= 8
    np.testing.assert_array_equal(np.isinf(got), np.isinf(want))


def test_i0_of_integers_is_float64_and_half_floats_are_refused() -> None:
    i = np.arange(-5, 6)
    got = et.kernel(np.i0)(i)
    assert got.dtype == np.float64 and ulps(got, np.i0(i)).max() <= 4
    with pytest.raises(et.UnsupportedError, match="np.i0 of float16"):
        et.kernel(np.i0).trace(np.ones(3, np.float16))


def test_i0_on_a_gpu_target_emulated() -> None:
    """The same scalar code in a GPU kernel (run by the CPU emulation of its launches: no device needed)."""
    from egglog_tensor.lowering.gpu.emulate import emulate

    x = np.linspace(-100, 100, 1001).astype(np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        want = np.i0(x)
    (got,) = emulate(et.kernel(np.i0, target="rocdl:gfx942").inspect(x), x)
    assert ulps(got, want).max() <= 8
