"""scipy.stats' continuous distributions in a kernel (tracing/distributions.py): rv_continuous's pdf, logpdf, cdf,
logcdf, sf, logsf, ppf and isf evaluate the distribution's formula on every entry and select as SciPy places,
so values outside the support, NaN, infinities and invalid loc, scale or shape arguments give SciPy's results.
Each is checked against SciPy itself on the same arguments."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.stats as st

import egglog_tensor as et
from egglog_tensor.errors import UnsupportedError

RNG = np.random.default_rng(11)
X = np.concatenate([RNG.standard_normal(200) * 3, np.linspace(-6, 6, 49), [0.0, -0.0, 0.5, np.inf, -np.inf, np.nan, 1e-300, 40.0, -40.0]])
Q = np.concatenate([RNG.random(200), np.linspace(0, 1, 41), [0.0, 1.0, np.nan, -0.5, 1.5, 1e-300, 1 - 1e-16]])
METHODS = ("pdf", "logpdf", "cdf", "logcdf", "sf", "logsf", "ppf", "isf")

# distribution: its shape arguments (the default run checks the first ones, the slow run all)
DISTRIBUTIONS = {"norm": (), "expon": (), "laplace": (), "lognorm": (0.6,), "weibull_min": (1.7,), "genextreme": (-0.3,)}
MORE = {"logistic": (), "uniform": (), "gumbel_r": (), "gumbel_l": (), "halfnorm": (), "rayleigh": (),
        "pareto": (2.5,), "lomax": (1.5,), "genextreme": (0.4,)}


def all_methods(name: str, shapes: tuple) -> tuple:
    """The kernel's function: every method of the distribution at loc 0.5, scale 2."""
    dist = getattr(st, name)
    return lambda x, q: tuple(getattr(dist, m)(q if m in ("ppf", "isf") else x, *shapes, loc=0.5, scale=2.0) for m in METHODS)


def check(got: tuple, want: tuple) -> None:
    for method, g, w in zip(METHODS, got, want, strict=True):
        assert g.dtype == w.dtype, method
        np.testing.assert_array_equal(np.isnan(g), np.isnan(w), err_msg=method)
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-300, err_msg=method)


def _cases(table: dict) -> list:
    return [pytest.param(name, shapes, id=f"{name}{shapes or ''}") for name, shapes in table.items()]


@pytest.mark.parametrize(("name", "shapes"), _cases(DISTRIBUTIONS))
def test_every_method_matches_scipy(name: str, shapes: tuple) -> None:
    fn = all_methods(name, shapes)
    with np.errstate(all="ignore"):
        want = fn(X, Q)
    check(et.kernel(fn)(X, Q), want)


@pytest.mark.slow
@pytest.mark.parametrize(("name", "shapes"), _cases(MORE))
def test_every_method_matches_scipy_more_distributions(name: str, shapes: tuple) -> None:
    test_every_method_matches_scipy(name, shapes)


def test_traced_loc_scale_and_shape_arguments_with_invalid_entries() -> None:
    """loc, scale and a shape argument passed in: where scale <= 0 or the shape argument is invalid SciPy gives NaN
    (its badvalue), and so does the kernel; float32 data gives SciPy's float64."""
    x = RNG.standard_normal((5, 8)).astype(np.float32) + 1.0
    loc = np.array([0.0, 1.0, -1.0, 0.5, 2.0, 0.0, np.nan, 0.0])
    scale = np.array([1.0, 2.0, 0.0, -1.0, 0.5, 3.0, 1.0, np.inf])
    c = np.array([[1.5], [0.0], [-1.0], [2.0], [0.7]])

    def f(x, loc, scale, c):
        return st.norm.logpdf(x, loc, scale), st.weibull_min.cdf(x, c, loc=loc, scale=scale), st.expon.ppf(np.abs(x) / 4, loc, scale)

    with np.errstate(all="ignore"):
        want = f(x, loc, scale, c)
    got = et.kernel(f)(x, loc, scale, c)
    for g, w in zip(got, want, strict=True):
        assert g.dtype == w.dtype == np.float64
        np.testing.assert_array_equal(np.isnan(g), np.isnan(w))
        np.testing.assert_allclose(g, w, rtol=1e-12)


def test_frozen_distributions_and_a_log_likelihood() -> None:
    """`norm(mu, sigma)` frozen outside the kernel and inside it, and the sum of a logpdf (a fused reduction)."""
    frozen = st.norm(1.0, 2.5)
    x = RNG.standard_normal(1000) * 2

    def f(x, mu):
        return frozen.cdf(x), st.laplace(mu, 0.5).sf(x), st.norm.logpdf(x, mu, 2.0).sum()

    got = et.kernel(f)(x, np.float64(0.3))
    want = f(x, np.float64(0.3))
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-12)


def test_scalars_and_scipy_outside_the_kernel() -> None:
    """A 0-d argument gives a 0-d result; SciPy's own methods are back once the trace ends."""
    pdf = st.rv_continuous.pdf
    got = et.kernel(lambda v: st.norm.pdf(v))(np.float64(0.25))
    assert np.shape(got) == () and got == pytest.approx(st.norm.pdf(0.25), rel=1e-15)
    assert st.rv_continuous.pdf is pdf and st.norm.pdf(np.array([0.0]))[0] == pytest.approx(1 / np.sqrt(2 * np.pi))


def test_distributions_whose_formula_a_kernel_lacks_are_named() -> None:
    """The noncentral t's pdf calls SciPy's private ufunc _nct_pdf (Boost's), which no kernel computes: the error names it."""
    with pytest.raises(UnsupportedError, match="the ufunc '_nct_pdf'"):
        et.kernel(lambda x: st.nct.pdf(x, 3.0, 0.5))(np.linspace(0.1, 0.9, 5))


def test_discrete_pmf_and_logpmf_match_scipy() -> None:
    """rv_discrete's pmf and logpmf (poisson, geom, randint; binom's and nbinom's logpmf: their pmf is a private
    SciPy ufunc) at integer and float k (non-integers, NaN, +-inf, outside the support), with a traced rate, and
    gamma's logpdf with a traced shape argument (scipy.special.gammaln, libm's lgamma)."""
    k = np.concatenate([np.arange(-3.0, 30.0), [2.5, np.nan, np.inf, -np.inf, 100.0]])
    ks = np.arange(-3, 30)
    mu = np.linspace(0.5, 9.0, 38)

    def f(k, ks, mu):
        return (st.poisson.pmf(k, mu), st.poisson.logpmf(ks, 4.5, loc=1), st.geom.pmf(k, 0.25), st.geom.logpmf(ks, 0.25),
                st.randint.pmf(ks, 2, 9), st.randint.logpmf(k, 2, 9), st.binom.logpmf(k, 20, 0.3), st.nbinom.logpmf(ks, 5, 0.4),
                st.gamma.logpdf(np.abs(k) + 0.5, mu))

    with np.errstate(all="ignore"):
        want = f(k, ks, mu)
    for g, w in zip(et.kernel(f)(k, ks, mu), want, strict=True):
        assert g.dtype == w.dtype
        np.testing.assert_array_equal(np.isnan(g), np.isnan(w))
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-300)


DISCRETE = {"geom": (0.25,), "randint": (2, 9), "planck": (0.6,), "dlaplace": (0.8,), "boltzmann": (1.4, 19)}
DISCRETE_METHODS = ("cdf", "logcdf", "sf", "logsf", "ppf", "isf")


@pytest.mark.parametrize(("name", "shapes"), _cases(DISCRETE))
def test_discrete_cdf_sf_ppf_match_scipy(name: str, shapes: tuple) -> None:
    """rv_discrete's cdf, logcdf, sf, logsf, ppf and isf at integer and float k (outside the support, NaN, +-inf), with
    loc, and with an invalid shape argument in a traced array (SciPy's placements: 1 or 0 past the ends even then)."""
    dist = getattr(st, name)
    k = np.concatenate([np.arange(-4.0, 25.0), [2.5, np.nan, np.inf, -np.inf, 100.0]])
    bad = np.array([shapes[0], -1.0, shapes[0]])  # an invalid first shape argument in the middle entry

    def f(k, q, bad):
        per = tuple(getattr(dist, m)(q if m in ("ppf", "isf") else k, *shapes, loc=1) for m in DISCRETE_METHODS)
        return per + (dist.cdf(k[:3], bad, *shapes[1:]), dist.sf(k[-3:], bad, *shapes[1:]), dist.ppf(Q[:3], bad, *shapes[1:]))

    with np.errstate(all="ignore"):
        want = f(k, Q, bad)
        got = et.kernel(f)(k, Q, bad)
    for method, g, w in zip(DISCRETE_METHODS + ("cdf bad", "sf bad", "ppf bad"), got, want, strict=True):
        assert g.dtype == w.dtype, method
        np.testing.assert_array_equal(np.isnan(g), np.isnan(w), err_msg=method)
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-15, err_msg=method)  # (log of 1 - tiny: an ULP of 1)


def test_discrete_functions_needing_what_a_kernel_lacks_are_named() -> None:
    """binom's ppf is a private SciPy ufunc (Boost's inverse incomplete beta), poisson's ppf the inverse incomplete gamma (pdtrik)."""
    with pytest.raises(UnsupportedError, match="_binom_ppf"):
        et.kernel(lambda q: st.binom.ppf(q, 10, 0.3))(np.linspace(0.1, 0.9, 5))
    with pytest.raises(UnsupportedError, match="pdtrik"):
        et.kernel(lambda q: st.poisson.ppf(q, 3.0))(np.linspace(0.1, 0.9, 5))
