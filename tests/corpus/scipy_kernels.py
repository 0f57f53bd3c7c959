"""SciPy's vq assignment (scipy/cluster/vq.py `py_vq`) and `cumulative_trapezoid` (scipy/integrate/_quadrature.py), SciPy 1.17.1, bodies unchanged.

BSD 3-Clause License, Copyright (c) 2001-2002 Enthought, Inc. 2003, SciPy Developers.
https://github.com/scipy/scipy/blob/v1.17.1/scipy/cluster/vq.py
https://github.com/scipy/scipy/blob/v1.17.1/scipy/integrate/_quadrature.py
What they call from elsewhere in SciPy is replaced by the minimal NumPy equivalents at the top.
"""

import numpy as np


def array_namespace(*arrays):
    """scipy._lib._array_api.array_namespace on NumPy input: NumPy."""
    return np


def _asarray(a, xp=None, check_finite=True):
    """scipy._lib._array_api._asarray on NumPy input (finiteness checked by the caller here): xp.asarray(a)."""
    return xp.asarray(a)


def cdist(XA, XB):
    """scipy.spatial.distance.cdist(XA, XB) (metric "euclidean", a C loop): the same distances in NumPy."""
    return np.sqrt(np.sum((XA[:, np.newaxis, :] - XB[np.newaxis, :, :]) ** 2, axis=-1))


def tupleset(t, i, value):
    l = list(t)
    l[i] = value
    return tuple(l)


def py_vq(obs, code_book, check_finite=True):
    xp = array_namespace(obs, code_book)
    obs = _asarray(obs, xp=xp, check_finite=check_finite)
    code_book = _asarray(code_book, xp=xp, check_finite=check_finite)

    if obs.ndim != code_book.ndim:
        raise ValueError("Observation and code_book should have the same rank")

    if obs.ndim == 1:
        obs = obs[:, xp.newaxis]
        code_book = code_book[:, xp.newaxis]

    # Once `cdist` has array API support, this `xp.asarray` call can be removed
    dist = xp.asarray(cdist(obs, code_book))
    code = xp.argmin(dist, axis=1)
    min_dist = xp.min(dist, axis=1)
    return code, min_dist


def cumulative_trapezoid(y, x=None, dx=1.0, axis=-1, initial=None):
    xp = array_namespace(y)
    y = xp.asarray(y)

    if y.shape[axis] == 0:
        raise ValueError("At least one point is required along `axis`.")

    if x is None:
        d = dx
    else:
        x = xp.asarray(x)
        if x.ndim == 1:
            d = xp.diff(x)
            # reshape to correct shape
            shape = [1] * y.ndim
            shape[axis] = -1
            d = xp.reshape(d, tuple(shape))
        elif len(x.shape) != len(y.shape):
            raise ValueError("If given, shape of x must be 1-D or the "
                             "same as y.")
        else:
            d = xp.diff(x, axis=axis)

        if d.shape[axis] != y.shape[axis] - 1:
            raise ValueError("If given, length of x along axis must be the "
                             "same as y.")

    nd = len(y.shape)
    slice1 = tupleset((slice(None),)*nd, axis, slice(1, None))
    slice2 = tupleset((slice(None),)*nd, axis, slice(None, -1))
    res = xp.cumulative_sum(d * (y[slice1] + y[slice2]) / 2.0, axis=axis)

    if initial is not None:
        if initial != 0:
            raise ValueError("`initial` must be `None` or `0`.")
        if not np.isscalar(initial):
            raise ValueError("`initial` parameter should be a scalar.")

        shape = list(res.shape)
        shape[axis] = 1
        res = xp.concat((xp.full(tuple(shape), initial, dtype=res.dtype), res),
                        axis=axis)

    return res
