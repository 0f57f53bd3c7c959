"""SciPy's own Python code called inside a kernel (issue 25's real code by others; scipy is a [dev] dependency).

scipy.stats' reductions compute the result's shape with small NumPy arrays of constants (`_axis_nan_policy`:
np.ones((n, ndim), dtype=int) of shapes, np.insert into it): an installed library's np.ones & co. of constants
give NumPy's arrays (tracing/creation.py), so that bookkeeping stays concrete; where the library then writes a traced
value into such an array or indexes it with one (scipy.linalg.block_diag fills np.zeros), the trace runs again with
that call traced."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.integrate as si
import scipy.linalg as sl
import scipy.stats as ss

import egglog_tensor as et

X = np.random.default_rng(3).standard_normal((20, 4))

STATS = {
    "skew": lambda x: ss.skew(x, axis=0), "kurtosis": lambda x: ss.kurtosis(x, axis=1), "sem": lambda x: ss.sem(x, axis=0),
    "iqr": lambda x: ss.iqr(x, axis=0), "trim_mean": lambda x: ss.trim_mean(x, 0.1, axis=0),
    "skew of all": lambda x: ss.skew(x, axis=None), "zscore": lambda x: ss.zscore(x, axis=0),
    "linalg.norm": lambda x: sl.norm(x),  # (np.asarray_chkfinite: a guard)
}


@pytest.mark.parametrize("name", sorted(STATS))
def test_scipy_stats_reductions_match_scipy(name: str) -> None:
    fn = STATS[name]
    np.testing.assert_allclose(et.kernel(fn)(X), fn(X), rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("size", [2, 12], ids=["small: traced again", "large: traced at once"])
def test_library_buffers_filled_with_traced_values(size: int) -> None:
    """block_diag fills np.zeros of the summed shapes: a small one is made NumPy's first, then traced again."""
    a, b = X[:size, :2].copy(), X[:size, 1:].copy()
    fn = lambda a, b: sl.block_diag(a, b)  # noqa: E731
    np.testing.assert_array_equal(et.kernel(fn)(a, b), fn(a, b))
    y = X[:, 0].copy()
    np.testing.assert_allclose(et.kernel(lambda y: si.cumulative_simpson(y, dx=0.1))(y), si.cumulative_simpson(y, dx=0.1), rtol=1e-13)


def test_only_library_code_gets_numpys_arrays() -> None:
    """The user's own np.zeros is traced as before (an index-computed value, never a NumPy array)."""
    def f(x):
        z = np.zeros(3)
        assert type(z) is not np.ndarray
        return x[:3] + z

    np.testing.assert_array_equal(et.kernel(f)(X[:, 0].copy()), X[:3, 0])
