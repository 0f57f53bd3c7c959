"""NPBench correlation: polybench/correlation/correlation_numpy.py (the kernel) and correlation.py (its initialize), unchanged.

Copyright 2021 ETH Zurich and the NPBench authors. BSD 3-Clause License.
https://github.com/spcl/npbench/tree/f2d7f27d87ba4881991e62c18a607aa6ba52b260/npbench/benchmarks/polybench/correlation
"""

import numpy as np


def kernel(M, float_n, data):

    mean = np.mean(data, axis=0)
    stddev = np.std(data, axis=0)
    stddev[stddev <= 0.1] = 1.0
    data -= mean
    data /= np.sqrt(float_n) * stddev
    corr = np.eye(M, dtype=data.dtype)
    for i in range(M - 1):
        corr[i + 1:M, i] = corr[i, i + 1:M] = data[:, i] @ data[:, i + 1:M]

    return corr


def initialize(M, N, datatype=np.float64):
    float_n = datatype(N)
    data = np.fromfunction(lambda i, j: (i * j) / M + i, (N, M),
                           dtype=datatype)

    return float_n, data
