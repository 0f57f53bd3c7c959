"""NumPy's own parameter names work as keywords on every function a kernel implements (`np.sum(a=x)`,
`np.broadcast_to(array=x, shape=s)`), and NumPy 2's `mean=`/`correction=` of var, std, nanvar, nanstd."""

from __future__ import annotations

import inspect

import numpy as np
import pytest

import egglog_tensor as et
from egglog_tensor.tracing.core import IMPLEMENTATIONS

RNG = np.random.default_rng(5)
X = RNG.standard_normal((4, 6))


def _numpy_function(name: str):
    obj = np
    for part in name.split("."):
        obj = getattr(obj, part, None)
    return obj


def _parameters(fn) -> list[inspect.Parameter]:
    try:
        return list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):  # (a builtin without a signature)
        return []


def test_each_implementation_takes_numpys_parameter_names() -> None:
    """Each NumPy parameter is one of ours (or goes to our **kwargs), and our positional parameters are named as
    NumPy's at the same place."""
    missing = {}
    for name, ours in IMPLEMENTATIONS.items():
        theirs = _numpy_function(name)
        if theirs is None or isinstance(theirs, np.ufunc) or not callable(theirs):
            continue
        parameters = inspect.signature(ours).parameters
        numpys = _parameters(theirs)
        positional = [p.name for p in parameters.values() if p.kind == p.POSITIONAL_OR_KEYWORD]
        renamed = [(o, t.name) for o, t in zip(positional, numpys, strict=False)
                   if t.kind == t.POSITIONAL_OR_KEYWORD and o != t.name]
        rest = any(p.kind == p.VAR_KEYWORD for p in parameters.values())
        lacking = [t.name for t in numpys if t.kind in (t.POSITIONAL_OR_KEYWORD, t.KEYWORD_ONLY) and t.name not in parameters and not rest]
        if lacking or renamed:
            missing[name] = lacking + renamed
    assert not missing, missing


def keywords(x):
    return (np.sum(a=x, axis=0), np.mean(a=x, axis=1), np.trace(a=x), np.swapaxes(a=x, axis1=0, axis2=1),
            np.broadcast_to(array=x[0], shape=(2, 6)), np.expand_dims(a=x, axis=0), np.squeeze(a=x[:1]),
            np.diagonal(a=x, offset=1), np.shape(a=x), np.ndim(a=x), np.array(object=x, dtype=np.float32), np.asarray(a=x) + 1)


def test_numpys_keywords_match_numpy() -> None:
    for got, want in zip(et.kernel(keywords)(X), keywords(X), strict=True):
        np.testing.assert_array_equal(got, want)


def moments(x, m):
    y = np.where(x > 1.5, np.nan, x)
    return (np.var(x, axis=0, mean=m), np.std(x, axis=0, mean=m, correction=1), np.var(x, correction=1),
            np.nanvar(y, axis=0, mean=np.nanmean(y, axis=0, keepdims=True)), np.nanstd(y, axis=1, correction=1),
            x.var(axis=0, mean=m, ddof=1))


def test_var_std_take_mean_and_correction() -> None:
    m = X.mean(axis=0, keepdims=True)
    for got, want in zip(et.kernel(moments)(X, m), moments(X, m), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-15)
    with pytest.raises(et.TracingError, match="ddof and correction"):
        et.kernel(lambda x: np.nanvar(x, ddof=1, correction=1))(X)
