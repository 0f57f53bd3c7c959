"""scipy.spatial.distance's `cdist`, `pdist` and `squareform` in a kernel: SciPy computes them in C, which traced
arrays cannot reach; while a kernel is traced (and scipy.spatial.distance was imported) they are replaced there by
these when an argument is traced (creation.replace_foreign_while_tracing, as tracing/scipy_linalg.py), and so is
scipy.cluster.vq's own binding of cdist (its k-means assignment `py_vq`).

Each distance is SciPy's formula (in float64, as SciPy converts its inputs) on every pair of rows, broadcast as
(mA, mB, n) and reduced over n, which the optimizer fuses into one loop nest: euclidean, sqeuclidean, cityblock,
chebyshev, minkowski (`p`), with weights `w` where SciPy takes them; seuclidean (`V`, default the rows' variance),
mahalanobis (`VI`, default the inverse covariance of the rows), cosine and correlation (SciPy's 1 - u.v / (|u| |v|),
the cosine clipped to [-1, 1]), braycurtis, canberra (0/0 terms left out), hamming, jensenshannon, and the boolean
metrics on rows read as bool (jaccard dice rogerstanimoto russellrao sokalsneath yule, from the pairs' counts).
`pdist` is cdist of X with itself read at the pairs i < j (a gather with constant indices), `squareform` the same
gather or its inverse. A Python callable as the metric raises UnsupportedError saying to write it in NumPy.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..errors import UnsupportedError
from .core import fail, traced_or_ndarray
from .creation import eye, replace_foreign_while_tracing, traced_or_original


def _sums(terms: Any, w: Any) -> Any:
    """sum over the last axis of terms (weighted by w when given)."""
    return np.sum(terms if w is None else terms * w, axis=-1)


def _cosine(dot: Any, uu: Any, vv: Any) -> Any:
    cosine = dot / (np.sqrt(uu) * np.sqrt(vv))
    return 1.0 - np.where(np.abs(cosine) > 1.0, np.sign(cosine), cosine)


def _centered(x: Any, w: Any) -> Any:
    mean = np.mean(x, axis=-1, keepdims=True) if w is None else np.sum(x * w, axis=-1, keepdims=True) / np.sum(w)
    return x - mean


def _counts(u: Any, v: Any, w: Any) -> tuple[Any, Any, Any, Any]:
    """Boolean rows' (weighted) counts of (true, true), (true, false), (false, true), (false, false) pairs."""
    return tuple(_sums((a & b).astype(np.float64), w) for a, b in ((u, v), (u, ~v), (~u, v), (~u, ~v)))


def _relative_entropy(p: Any, q: Any) -> Any:
    """scipy.special.rel_entr for probabilities: p log(p / q), 0 where p is 0."""
    return np.where(p > 0, p * np.log(np.where(p > 0, p, 1.0) / q), 0.0)


# The boolean metrics (SciPy converts their rows to bool) from the counts tt, tf, ft, ff and the (weighted) length n
_BOOLEAN: dict[str, Callable[..., Any]] = {
    "jaccard": lambda tt, tf, ft, ff, n: np.where(tt + tf + ft == 0, 0.0, (tf + ft) / (tt + tf + ft)),
    "dice": lambda tt, tf, ft, ff, n: (tf + ft) / (2 * tt + tf + ft),
    "rogerstanimoto": lambda tt, tf, ft, ff, n: 2 * (tf + ft) / (tt + ff + 2 * (tf + ft)),
    "russellrao": lambda tt, tf, ft, ff, n: (n - tt) / n,
    "sokalsneath": lambda tt, tf, ft, ff, n: 2 * (tf + ft) / (2 * (tf + ft) + tt),
    "yule": lambda tt, tf, ft, ff, n: np.where(tf * ft == 0, 0.0, 2 * tf * ft / (tt * ff + tf * ft)),
}


def _pairs(metric: str, u: Any, v: Any, rows: Any, w: Any, p: float, V: Any, VI: Any) -> Any:
    """The (mA, mB) distances of u (mA, 1, n) and v (1, mB, n); rows: both row sets stacked (for V and VI)."""
    d = u - v
    if metric in ("euclidean", "sqeuclidean"):
        squares = _sums(d * d, w)
        return np.sqrt(squares) if metric == "euclidean" else squares
    if metric == "cityblock":
        return _sums(np.abs(d), w)
    if metric == "chebyshev":
        return np.max(np.abs(d) if w is None else np.where(w > 0, np.abs(d), 0.0), axis=-1)
    if metric == "minkowski":
        return _sums(np.abs(d) ** p, w) ** (1.0 / p)
    if metric == "seuclidean":
        variance = np.var(rows, axis=0, ddof=1) if V is None else traced_or_ndarray(V, np.float64)
        return np.sqrt(np.sum(d * d / variance, axis=-1))
    if metric == "mahalanobis":
        inverse = np.linalg.inv(np.cov(rows.T)).T if VI is None else traced_or_ndarray(VI, np.float64)
        return np.sqrt(np.sum((d @ inverse.T) * d, axis=-1))
    if metric in ("cosine", "correlation"):
        if metric == "correlation":
            u, v = _centered(u, w), _centered(v, w)
        return _cosine(_sums(u * v, w), _sums(u * u, w), _sums(v * v, w))
    if metric == "braycurtis":
        return _sums(np.abs(d), w) / _sums(np.abs(u + v), w)
    if metric == "canberra":
        denominator = np.abs(u) + np.abs(v)
        return _sums(np.where(denominator > 0, np.abs(d) / np.where(denominator > 0, denominator, 1.0), 0.0), w)
    if metric == "hamming":
        unequal = (u != v).astype(np.float64)
        return np.mean(unequal, axis=-1) if w is None else _sums(unequal, w) / np.sum(w)
    if metric in _BOOLEAN:
        return _BOOLEAN[metric](*_counts(u != 0, v != 0, w), _sums(np.ones_like(d), w))
    if metric == "jensenshannon":
        p, q = u / np.sum(u, axis=-1, keepdims=True), v / np.sum(v, axis=-1, keepdims=True)
        m = 0.5 * (p + q)
        divergence = 0.5 * np.sum(_relative_entropy(p, m) + _relative_entropy(q, m), axis=-1)
        return np.sqrt(divergence)
    raise fail(UnsupportedError, f"scipy.spatial.distance: metric {metric!r} is not supported in a kernel "
                                 f"(supported: {', '.join(METRICS)})")


METRICS = ("braycurtis", "canberra", "chebyshev", "cityblock", "correlation", "cosine", "dice", "euclidean", "hamming", "jaccard",
           "jensenshannon", "mahalanobis", "minkowski", "rogerstanimoto", "russellrao", "seuclidean", "sokalsneath", "sqeuclidean", "yule")
_ALIASES = {"cblock": "cityblock", "cb": "cityblock", "c": "cityblock", "manhattan": "cityblock", "eu": "euclidean", "e": "euclidean",
            "sqe": "sqeuclidean", "sqeuclid": "sqeuclidean", "cos": "cosine", "corr": "correlation", "chebychev": "chebyshev",
            "cheby": "chebyshev", "cheb": "chebyshev", "ch": "chebyshev", "mi": "minkowski", "m": "minkowski", "pnorm": "minkowski",
            "se": "seuclidean", "s": "seuclidean", "mahal": "mahalanobis", "mah": "mahalanobis", "hamm": "hamming", "ha": "hamming",
            "h": "hamming", "jacc": "jaccard", "ja": "jaccard", "j": "jaccard", "bray": "braycurtis", "canb": "canberra"}


def _metric(metric: Any) -> str:
    if callable(metric):
        raise fail(UnsupportedError, f"scipy.spatial.distance: a Python callable metric ({getattr(metric, '__name__', metric)}) is "
                                     "not supported in a kernel; write the distance with NumPy on broadcast rows instead")
    name = str(metric).lower()
    return _ALIASES.get(name, name)


def _matrix(x: Any, name: str) -> Any:
    x = traced_or_ndarray(x, np.float64)
    if x.ndim != 2:
        raise fail(UnsupportedError, f"scipy.spatial.distance: {name} must be a 2-dimensional array (got {x.ndim} dimensions)")
    return x


def cdist(XA: Any, XB: Any, metric: Any = "euclidean", *, out: Any = None, w: Any = None, p: float = 2.0, V: Any = None,
          VI: Any = None) -> Any:
    name = _metric(metric)
    a, b = _matrix(XA, "XA"), _matrix(XB, "XB")
    if a.shape[1] != b.shape[1]:
        raise fail(UnsupportedError, f"scipy.spatial.distance.cdist: XA and XB must have the same number of columns "
                                     f"(got {a.shape[1]} and {b.shape[1]})")
    weights = None if w is None else traced_or_ndarray(w, np.float64)
    distances = _pairs(name, a[:, None, :], b[None, :, :], np.concatenate([a, b]), weights, float(p), V, VI)
    if out is not None:
        out[...] = distances
        return out
    return distances


def pdist(X: Any, metric: Any = "euclidean", *, out: Any = None, **kwargs: Any) -> Any:
    x = _matrix(X, "X")
    name = _metric(metric)
    if name in ("seuclidean", "mahalanobis"):  # (their defaults come from X's rows, once)
        kwargs.setdefault("V" if name == "seuclidean" else "VI", np.var(x, axis=0, ddof=1) if name == "seuclidean"
                          else np.linalg.inv(np.cov(x.T)).T)
    condensed = squareform(cdist(x, x, name, **kwargs), checks=False)
    if out is not None:
        out[...] = condensed
        return out
    return condensed


def squareform(X: Any, force: str = "no", checks: bool = True) -> Any:
    """A condensed distance vector's square matrix (zero diagonal), or a square matrix's condensed upper triangle."""
    x = traced_or_ndarray(X)
    if x.ndim == 1 and force != "tovector" or force == "tomatrix":
        n = int(round((1 + np.sqrt(1 + 8 * x.shape[0])) / 2))
        if n * (n - 1) // 2 != x.shape[0]:
            raise fail(UnsupportedError, "scipy.spatial.distance.squareform: incompatible vector size; it must be a binomial "
                                         "coefficient n choose 2 for some integer n >= 2")
        if n == 1:
            return eye(1, dtype=x.dtype) * 0
        pair = [[n * i - i * (i + 1) // 2 + j - i - 1 for j in range(n)] for i in range(n)]  # (i < j)'s place in x
        index = np.array([[pair[min(r, c)][max(r, c)] if r != c else 0 for c in range(n)] for r in range(n)])
        return np.where(eye(n, dtype=bool), 0.0, x[index])
    if x.ndim != 2 or x.shape[0] != x.shape[1]:
        raise fail(UnsupportedError, f"scipy.spatial.distance.squareform: the matrix must be square (got shape {x.shape})")
    return x[np.triu_indices(x.shape[0], 1)]


FUNCTIONS: dict[str, Callable[..., Any]] = {fn.__name__: fn for fn in (cdist, pdist, squareform)}


for _name, _ours in FUNCTIONS.items():
    replace_foreign_while_tracing(f"scipy.spatial.distance:{_name}", traced_or_original(_ours))
replace_foreign_while_tracing("scipy.cluster.vq:cdist", traced_or_original(cdist))  # (bound at its import: k-means' py_vq)
