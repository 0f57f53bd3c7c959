"""scipy.spatial.distance's cdist, pdist and squareform in a kernel (tracing/scipy_spatial.py): every metric SciPy
has against SciPy's own, with and without weights, SciPy's defaults of V and VI, zero rows, float32 input."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.spatial.distance as dist
from strategies import sweep

import egglog_tensor as et
from egglog_tensor.errors import UnsupportedError
from egglog_tensor.tracing.scipy_spatial import METRICS

RNG = np.random.default_rng(5)
XA, XB = RNG.standard_normal((7, 5)), RNG.standard_normal((9, 5))
XA[0, :2], XB[1, :2], XB[2] = 0.0, 0.0, XA[3]  # zeros and a shared row
BITS_A, BITS_B = (RNG.random((7, 5)) < 0.5).astype(float), (RNG.random((9, 5)) < 0.5).astype(float)
BITS_A[0], BITS_B[0], BITS_B[1] = 0.0, 0.0, 1.0  # an all-false pair (0/0 where SciPy's formula has it) and all-true
W = RNG.uniform(0.5, 2.0, 5)
UNWEIGHTED = ("seuclidean", "mahalanobis", "jensenshannon")  # (SciPy takes no w for them)
BOOLEAN = ("jaccard", "dice", "rogerstanimoto", "russellrao", "sokalsneath", "yule")


def _data(metric: str) -> tuple[np.ndarray, np.ndarray]:
    if metric in BOOLEAN:
        return BITS_A, BITS_B
    return (np.abs(XA) + 0.1, np.abs(XB) + 0.1) if metric == "jensenshannon" else (XA, XB)  # (probabilities)


@pytest.mark.parametrize("metric", sweep(METRICS, ["euclidean", "minkowski", "mahalanobis", "correlation", "canberra", "jensenshannon", "yule"]))
def test_cdist_and_pdist_match_scipy(metric: str) -> None:
    a, b = _data(metric)
    options = [{}] if metric in UNWEIGHTED else [{}, {"w": W}]
    if metric == "minkowski":
        options.append({"p": 3.5, "w": W})

    def distances(a, b):
        return tuple(f for kw in options for f in (dist.cdist(a, b, metric, **kw), dist.pdist(a, metric, **kw)))

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = distances(a, b)
        got = et.kernel(distances)(a, b)
    for g, w in zip(got, want, strict=True):
        assert g.dtype == w.dtype == np.float64 and g.shape == w.shape
        np.testing.assert_allclose(g, w, rtol=1e-14, atol=1e-15)


def test_squareform_both_ways_aliases_and_float32() -> None:
    """squareform of pdist and of cdist(x, x), SciPy's metric aliases, float32 rows computed in float64, out=."""
    def f(a, b):
        out = np.zeros((7, 9))
        dist.cdist(a, b, "cityblock", out=out)
        return (dist.squareform(dist.pdist(a)), dist.squareform(dist.cdist(a, a, "euclidean")), dist.cdist(a, b, "sqe"), out,
                dist.cdist(a.astype(np.float32), b, "cos"), dist.squareform(dist.pdist(a[:1])))

    for g, w in zip(et.kernel(f)(XA, XB), f(XA, XB), strict=True):
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_allclose(g, w, rtol=1e-14, atol=1e-15)


def test_what_cannot_be_traced_is_named() -> None:
    with pytest.raises(UnsupportedError, match="callable metric"):
        et.kernel(lambda a, b: dist.cdist(a, b, lambda u, v: np.abs(u - v).sum()))(XA, XB)
    with pytest.raises(UnsupportedError, match="same number of columns"):
        et.kernel(lambda a, b: dist.cdist(a, b))(XA, XB[:, :3])
    with pytest.raises(UnsupportedError, match="metric 'wminkowski'"):
        et.kernel(lambda a, b: dist.cdist(a, b, "wminkowski"))(XA, XB)


def test_kmeans_assignment_through_scipys_own_binding() -> None:
    """scipy.cluster.vq binds cdist at its import (`from scipy.spatial.distance import cdist`): replaced there too, so
    SciPy's k-means assignment py_vq (check_finite's branch a guard) traces unchanged."""
    from scipy.cluster import vq

    obs, code_book = RNG.standard_normal((50, 3)), RNG.standard_normal((4, 3))
    codes, distances = et.kernel(lambda o, c: vq.py_vq(o, c))(obs, code_book)
    want_codes, want_distances = vq.py_vq(obs, code_book)
    np.testing.assert_array_equal(codes, want_codes)
    np.testing.assert_allclose(distances, want_distances, rtol=1e-14)
