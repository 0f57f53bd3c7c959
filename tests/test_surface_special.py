"""scipy.special's elementwise functions in a kernel (tracing/special.py): erf and erfc as ops (libm's,
vectorized by libmvec), the others composed of NumPy's by SciPy's definitions. Each is checked against
SciPy itself on random data and the edge values of its definition (NaN, +-inf, +-0, the domain's ends),
in float32 and float64, within a few ULP (SciPy's own Cephes erfc is 9 ULP from the true value in the
tail where libm's is exact, hence ERFC's bound), with SciPy's result dtype and NaN positions."""

from __future__ import annotations

import re

import numpy as np
import pytest
import scipy.special as sp

import egglog_tensor as et
from egglog_tensor.lowering.stages import vecmath
from egglog_tensor.target import Target

RNG = np.random.default_rng(7)
X = np.concatenate([RNG.standard_normal(300) * 4, np.linspace(-30, 30, 101),
                    [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-300, -1e-300, 5e-324, 1.0, -1.0, 40.0, -40.0, 700.0, -700.0, 1e10]])
P = np.concatenate([RNG.random(300), np.linspace(0, 1, 101),
                    [0.0, -0.0, 1.0, 0.5, 0.3, 0.65, np.nan, -1.0, 2.0, 1e-10, 1 - 1e-10, np.inf, -np.inf, 1e-300, 0.7]])
# ULP bounds against SciPy. erfc: SciPy's (Cephes) is up to 9 ULP from the true value where x > 4 (checked with
# mpmath) and 0 where it is subnormal (x > 26.6), where libm's is exact: ULP where |x| <= 6, relative 1e-12 beyond.
NEAR_ROOTS = np.concatenate([-0.504083008264455409 + np.linspace(-0.3, 0.3, 41), 1.4616321449683622 + np.linspace(-0.01, 0.01, 21)])
ERFC = 16
CANCELS = 32  # kl_div's x log(x/y) - x + y and boxcox's expm1(l log x) / l amplify log's error (SciPy's formulas too)
BOXCOX = 256  # |l log x| up to ~60 here

CASES = {  # name: (arguments, ULP bound against SciPy)
    "erf": ((X,), 4), "erfc": ((X,), ERFC), "ndtr": ((X,), ERFC), "log_ndtr": ((X,), ERFC), "ndtri": ((P,), 8),
    "expit": ((X,), 4), "logit": ((P,), 4), "log_expit": ((X,), 4),
    "xlogy": ((P, X), 4), "xlog1py": ((P, X), 4), "entr": ((X,), 4),
    "rel_entr": ((P, X[::-1]), 8), "kl_div": ((P, X[::-1]), CANCELS),
    "huber": ((P, X), 4), "pseudo_huber": ((P, X), 8),
    "boxcox": ((P, X), BOXCOX), "boxcox1p": ((X, P), BOXCOX),
    "exp10": ((X,), 4), "round": ((X * 3,), 0), "expm1": ((X,), 4), "log1p": ((P,), 4), "cbrt": ((X,), 4), "exp2": ((X,), 4),
    "gamma": ((X,), 8), "rgamma": ((X,), 8), "erfinv": ((2 * P - 1,), 8), "erfcinv": ((2 * P,), 8),
    "psi": ((np.concatenate([X, NEAR_ROOTS]),), 8),
}


def ulps(got: np.ndarray, want: np.ndarray) -> float:
    """The largest distance in units of the last place of `want` (0 where both are equal or NaN)."""
    same = (got == want) | (np.isnan(got) & np.isnan(want))
    tiny = np.finfo(want.dtype).smallest_subnormal
    with np.errstate(invalid="ignore"):
        return float(np.where(same, 0.0, np.abs(got - want) / np.maximum(np.spacing(np.abs(want)), tiny)).max())


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=lambda d: d.__name__)
@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_scipy(name: str, dtype: type) -> None:
    (args, bound), fn = CASES[name], getattr(sp, name)
    args = tuple(np.ascontiguousarray(a[: len(args[0])]).astype(dtype) for a in args)
    with np.errstate(all="ignore"):
        want = fn(*args)
    got = et.kernel(lambda *a: fn(*a))(*args)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    core = np.abs(args[0]) <= 6 if name in ("erfc", "ndtr", "log_ndtr") else np.ones(got.shape, bool)
    assert ulps(got[core], want[core]) <= bound, f"{name} {dtype.__name__}: {ulps(got[core], want[core])} ULP"
    np.testing.assert_allclose(got, want, rtol=1e-12 if dtype == np.float64 else 1e-6, atol=1e-300)


@pytest.mark.parametrize("target", ["cpu", "cpu-openmp"])
def test_gammaln_is_libms_lgamma(target: str) -> None:
    """gammaln is an op of its own calling libm's lgamma (lowering/scalar.py libm_call), exact here within 2 ULP of
    mpmath's log|gamma| for positive x (16 for negative x) where SciPy's Cephes is up to 801 ULP off (near x = 1 and 2,
    where it crosses 0); 0 and the
    negative integers give inf, NaN NaN; float32 is computed in float64 and rounded once, as SciPy does."""
    import mpmath

    x = np.concatenate([np.abs(X[:300]) * 3, X[:200] * 3, [1.0007816020716997, 2.0000001, 0.9999999, 0.0, -3.0, 171.6, 1e300]])
    x = x[np.isfinite(x)]
    got = et.kernel(lambda v: sp.gammaln(v), target=target)(x)
    mpmath.mp.dps = 40
    exact = np.array([float(mpmath.log(abs(mpmath.gamma(mpmath.mpf(v))))) if v > 0 or v != np.floor(v) else np.inf for v in x])
    with np.errstate(invalid="ignore"):
        error = np.where(got == exact, 0.0, np.abs(got - exact) / np.spacing(np.abs(exact)))
    assert error[x > 0].max() <= 2 and error[x < 0].max() <= 16, (error[x > 0].max(), error[x < 0].max())
    special = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, -1.0], np.float32)
    got32 = et.kernel(lambda v: sp.gammaln(v), target=target)(np.concatenate([x.astype(np.float32), special]))
    assert got32.dtype == np.float32
    np.testing.assert_array_equal(got32[-6:], sp.gammaln(special))
    np.testing.assert_allclose(got32[:-6], sp.gammaln(x.astype(np.float32)), rtol=2e-7, atol=1e-7)


def test_loggamma_and_factorial() -> None:
    """loggamma of real x is gammaln (libm's lgamma) for x >= 0 and NaN below; factorial (SciPy's Python code, replaced
    while tracing) is gamma(n + 1) for n >= 0, 0 below, NaN at NaN; exact=True is refused."""
    n = np.concatenate([np.arange(-3.0, 30.0), [2.5, 170.0, 171.0, np.nan]])
    got_log, got_gammaln, got_factorial = et.kernel(lambda x, n: (sp.loggamma(x), sp.gammaln(x), sp.factorial(n)))(X, n)
    np.testing.assert_array_equal(got_log, np.where(X < 0, np.nan, got_gammaln))
    assert ulps(got_factorial, sp.factorial(n)) <= 8
    with pytest.raises(et.UnsupportedError, match="exact=True"):
        et.kernel(lambda n: sp.factorial(n, exact=True))(np.arange(5))


def test_integer_and_float16_arguments_take_scipys_loop_dtype() -> None:
    i = np.arange(-5, 6)
    h = np.linspace(-2, 2, 11, dtype=np.float16)
    got = et.kernel(lambda i, h: (sp.erf(i), sp.expit(h), sp.xlogy(i, 2.0)))(i, h)
    for g, w in zip(got, (sp.erf(i), sp.expit(h), sp.xlogy(i, 2.0)), strict=True):
        assert g.dtype == w.dtype == np.float64
        np.testing.assert_allclose(g, w, rtol=1e-15)


def test_erf_gelu_fuses_and_calls_the_vector_erf() -> None:
    """The exact GELU of ML code, 0.5 x (1 + erf(x / sqrt 2)) on float32: one loop calling libmvec's erff."""
    def gelu(x):
        return 0.5 * x * (1.0 + sp.erf(x / np.sqrt(2.0).astype(np.float32)))

    x = RNG.standard_normal((64, 1000)).astype(np.float32)
    k = et.kernel(gelu)
    np.testing.assert_allclose(k(x), gelu(x), rtol=2e-6, atol=4e-7)  # (1 + erf cancels below x = -2)
    optimized = k.inspect(x).stage("llvm-ir-optimized")
    (lanes, name), *_ = vecmath.variants("erff", 32, Target.host())
    assert re.search(rf"call <{lanes} x float> @{name}\(", optimized)


def test_unsupported_scipy_functions_are_named() -> None:
    with pytest.raises(et.UnsupportedError, match=r"scipy.special.struve is not supported in a kernel \(supported: .*erf"):
        et.kernel(lambda x: sp.struve(x, x))(P)
    with pytest.raises(et.UnsupportedError, match="scipy.special.struve is not supported"):
        et.kernel(lambda x: sp.struve.outer(x, x))(P)  # (a ufunc method: the same refusal)


def test_ufunc_methods_of_composed_functions() -> None:
    x = P[:20].copy()
    got = et.kernel(lambda x: sp.xlogy.outer(x, x))(x)
    np.testing.assert_allclose(got, sp.xlogy.outer(x, x), rtol=1e-14, equal_nan=True)


def test_gpu_targets_refuse_erf_clearly() -> None:
    """No device math library is linked on GPU targets (docs/gpu.md): erf and gammaln are refused there, naming them."""
    with pytest.raises(et.UnsupportedError, match="erf"):
        et.kernel(lambda x: sp.erf(x), target="nvvm:sm_90").lower(X.astype(np.float32))
    with pytest.raises(et.UnsupportedError, match="lgamma"):
        et.kernel(lambda x: sp.gammaln(x), target="rocdl:gfx942").lower(X)
