"""scikit-learn's pairwise kernels (sklearn/metrics/pairwise.py): their bodies unchanged, decorators left out.

BSD 3-Clause License, Copyright (c) 2007-2024 The scikit-learn developers.
https://github.com/scikit-learn/scikit-learn/blob/008655100996bb658cbcfe2cc61e0aea228d7704/sklearn/metrics/pairwise.py
The helpers they call from elsewhere in scikit-learn (input validation, array-API namespace, sparse
dispatch, batching) are replaced by the minimal NumPy equivalents at the top, each saying what it stands for.
`@validate_params` (parameter checks outside the computation) is left out.
"""

import numpy as np


def get_namespace(*arrays):
    """sklearn.utils._array_api.get_namespace on NumPy input: NumPy, not an array-API wrapper."""
    return np, False


def get_namespace_and_device(*arrays):
    """sklearn.utils._array_api.get_namespace_and_device on NumPy input: NumPy, on the CPU."""
    return np, False, None


def check_pairwise_arrays(X, Y, **kwargs):
    """sklearn's check_pairwise_arrays on valid dense float input: Y defaults to X (the same object)."""
    if Y is None:
        Y = X
    return X, Y


def safe_sparse_dot(a, b, *, dense_output=False):
    """sklearn.utils.extmath.safe_sparse_dot on dense arrays: a @ b."""
    return a @ b


def row_norms(X, squared=False):
    """sklearn.utils.extmath.row_norms on dense arrays (its einsum, then sqrt unless squared)."""
    norms = np.einsum("ij,ij->i", X, X)
    if not squared:
        norms = np.sqrt(norms)
    return norms


def normalize(X, copy=True):
    """sklearn.preprocessing.normalize(X, norm="l2") on dense arrays: rows divided by their norms, zero rows left zero."""
    norms = row_norms(X)
    norms[norms == 0.0] = 1.0
    return X / norms[:, np.newaxis]


def _modify_in_place_if_numpy(xp, func, *args, out=None, **kwargs):
    """sklearn.utils._array_api._modify_in_place_if_numpy, unchanged: out= on NumPy."""
    if xp is np:
        func(*args, out=out, **kwargs)
    else:
        out = func(*args, **kwargs)
    return out


def _fill_or_add_to_diagonal(array, value, xp, add_value=True, wrap=False):
    """sklearn.utils._array_api._fill_or_add_to_diagonal (2-D, wrap=False): the diagonal through a flat view (NumPy's fill_diagonal)."""
    min_rows_columns = min(array.shape)
    end = array.shape[1] * min_rows_columns
    step = array.shape[1] + 1
    array_flat = xp.reshape(array, (-1,))
    if add_value:
        array_flat[:end:step] += value
    else:
        array_flat[:end:step] = value


def gen_batches(n, batch_size):
    """sklearn.utils.gen_batches (min_batch_size=0): consecutive slices of batch_size over range(n)."""
    start = 0
    for _ in range(int(n // batch_size)):
        end = start + batch_size
        yield slice(start, end)
        start = end
    if start < n:
        yield slice(start, n)


def _max_precision_float_dtype(xp, device):
    """sklearn.utils._array_api._max_precision_float_dtype on NumPy: float64."""
    return xp.float64


def issparse(x):
    """scipy.sparse.issparse on dense arrays: False."""
    return False


def euclidean_distances(
    X, Y=None, *, Y_norm_squared=None, squared=False, X_norm_squared=None
):
    xp, _ = get_namespace(X, Y)
    X, Y = check_pairwise_arrays(X, Y)

    if X_norm_squared is not None:
        X_norm_squared = check_array(X_norm_squared, ensure_2d=False)
        original_shape = X_norm_squared.shape
        if X_norm_squared.shape == (X.shape[0],):
            X_norm_squared = xp.reshape(X_norm_squared, (-1, 1))
        if X_norm_squared.shape == (1, X.shape[0]):
            X_norm_squared = X_norm_squared.T
        if X_norm_squared.shape != (X.shape[0], 1):
            raise ValueError(
                f"Incompatible dimensions for X of shape {X.shape} and "
                f"X_norm_squared of shape {original_shape}."
            )

    if Y_norm_squared is not None:
        Y_norm_squared = check_array(Y_norm_squared, ensure_2d=False)
        original_shape = Y_norm_squared.shape
        if Y_norm_squared.shape == (Y.shape[0],):
            Y_norm_squared = xp.reshape(Y_norm_squared, (1, -1))
        if Y_norm_squared.shape == (Y.shape[0], 1):
            Y_norm_squared = Y_norm_squared.T
        if Y_norm_squared.shape != (1, Y.shape[0]):
            raise ValueError(
                f"Incompatible dimensions for Y of shape {Y.shape} and "
                f"Y_norm_squared of shape {original_shape}."
            )

    return _euclidean_distances(X, Y, X_norm_squared, Y_norm_squared, squared)


def check_array(array, ensure_2d=True):
    """sklearn.utils.check_array on a valid dense array: the array."""
    return array


def _euclidean_distances(X, Y, X_norm_squared=None, Y_norm_squared=None, squared=False):
    xp, _, device_ = get_namespace_and_device(X, Y)
    if X_norm_squared is not None and X_norm_squared.dtype != xp.float32:
        XX = xp.reshape(X_norm_squared, (-1, 1))
    elif X.dtype != xp.float32:
        XX = row_norms(X, squared=True)[:, None]
    else:
        XX = None

    if Y is X:
        YY = None if XX is None else XX.T
    else:
        if Y_norm_squared is not None and Y_norm_squared.dtype != xp.float32:
            YY = xp.reshape(Y_norm_squared, (1, -1))
        elif Y.dtype != xp.float32:
            YY = row_norms(Y, squared=True)[None, :]
        else:
            YY = None

    if X.dtype == xp.float32 or Y.dtype == xp.float32:
        # To minimize precision issues with float32, we compute the distance
        # matrix on chunks of X and Y upcast to float64
        distances = _euclidean_distances_upcast(X, XX, Y, YY)
    else:
        # if dtype is already float64, no need to chunk and upcast
        distances = -2 * safe_sparse_dot(X, Y.T, dense_output=True)
        distances += XX
        distances += YY

    xp_zero = xp.asarray(0, device=device_, dtype=distances.dtype)
    distances = _modify_in_place_if_numpy(
        xp, xp.maximum, distances, xp_zero, out=distances
    )

    # Ensure that distances between vectors and themselves are set to 0.0.
    # This may not be the case due to floating point rounding errors.
    if X is Y:
        _fill_or_add_to_diagonal(distances, 0, xp=xp, add_value=False)

    if squared:
        return distances

    distances = _modify_in_place_if_numpy(xp, xp.sqrt, distances, out=distances)
    return distances


def _euclidean_distances_upcast(X, XX=None, Y=None, YY=None, batch_size=None):
    xp, _, device_ = get_namespace_and_device(X, Y)
    n_samples_X = X.shape[0]
    n_samples_Y = Y.shape[0]
    n_features = X.shape[1]

    distances = xp.empty((n_samples_X, n_samples_Y), dtype=xp.float32, device=device_)

    if batch_size is None:
        x_density = (
            X.nnz / xp.prod(X.shape) if issparse(X) else xp.asarray(1, device=device_)
        )
        y_density = (
            Y.nnz / xp.prod(Y.shape) if issparse(Y) else xp.asarray(1, device=device_)
        )

        # Allow 10% more memory than X, Y and the distance matrix take (at
        # least 10MiB)
        maxmem = max(
            (
                (x_density * n_samples_X + y_density * n_samples_Y) * n_features
                + (x_density * n_samples_X * y_density * n_samples_Y)
            )
            / 10,
            10 * 2**17,
        )

        # The increase amount of memory in 8-byte blocks is:
        # - x_density * batch_size * n_features (copy of chunk of X)
        # - y_density * batch_size * n_features (copy of chunk of Y)
        # - batch_size * batch_size (chunk of distance matrix)
        # Hence x² + (xd+yd)kx = M, where x=batch_size, k=n_features, M=maxmem
        #                                 xd=x_density and yd=y_density
        tmp = (x_density + y_density) * n_features
        batch_size = (-tmp + xp.sqrt(tmp**2 + 4 * maxmem)) / 2
        batch_size = max(int(batch_size), 1)

    x_batches = gen_batches(n_samples_X, batch_size)
    xp_max_float = _max_precision_float_dtype(xp=xp, device=device_)
    for i, x_slice in enumerate(x_batches):
        X_chunk = xp.astype(X[x_slice], xp_max_float)
        if XX is None:
            XX_chunk = row_norms(X_chunk, squared=True)[:, None]
        else:
            XX_chunk = XX[x_slice]

        y_batches = gen_batches(n_samples_Y, batch_size)

        for j, y_slice in enumerate(y_batches):
            if X is Y and j < i:
                # when X is Y the distance matrix is symmetric so we only need
                # to compute half of it.
                d = distances[y_slice, x_slice].T

            else:
                Y_chunk = xp.astype(Y[y_slice], xp_max_float)
                if YY is None:
                    YY_chunk = row_norms(Y_chunk, squared=True)[None, :]
                else:
                    YY_chunk = YY[:, y_slice]

                d = -2 * safe_sparse_dot(X_chunk, Y_chunk.T, dense_output=True)
                d += XX_chunk
                d += YY_chunk

            distances[x_slice, y_slice] = xp.astype(d, xp.float32, copy=False)

    return distances


def linear_kernel(X, Y=None, dense_output=True):
    X, Y = check_pairwise_arrays(X, Y)
    return safe_sparse_dot(X, Y.T, dense_output=dense_output)


def polynomial_kernel(X, Y=None, degree=3, gamma=None, coef0=1):
    X, Y = check_pairwise_arrays(X, Y)
    if gamma is None:
        gamma = 1.0 / X.shape[1]

    K = safe_sparse_dot(X, Y.T, dense_output=True)
    K *= gamma
    K += coef0
    K **= degree
    return K


def sigmoid_kernel(X, Y=None, gamma=None, coef0=1):
    xp, _ = get_namespace(X, Y)
    X, Y = check_pairwise_arrays(X, Y)
    if gamma is None:
        gamma = 1.0 / X.shape[1]

    K = safe_sparse_dot(X, Y.T, dense_output=True)
    K *= gamma
    K += coef0
    # compute tanh in-place for numpy
    K = _modify_in_place_if_numpy(xp, xp.tanh, K, out=K)
    return K


def rbf_kernel(X, Y=None, gamma=None):
    xp, _ = get_namespace(X, Y)
    X, Y = check_pairwise_arrays(X, Y)
    if gamma is None:
        gamma = 1.0 / X.shape[1]

    K = euclidean_distances(X, Y, squared=True)
    K *= -gamma
    # exponentiate K in-place when using numpy
    K = _modify_in_place_if_numpy(xp, xp.exp, K, out=K)
    return K


def cosine_similarity(X, Y=None, dense_output=True):
    # to avoid recursive import

    X, Y = check_pairwise_arrays(X, Y)

    X_normalized = normalize(X, copy=True)
    if X is Y:
        Y_normalized = X_normalized
    else:
        Y_normalized = normalize(Y, copy=True)

    K = safe_sparse_dot(X_normalized, Y_normalized.T, dense_output=dense_output)

    return K
