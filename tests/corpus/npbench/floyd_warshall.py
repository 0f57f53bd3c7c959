"""NPBench floyd_warshall: polybench/floyd_warshall/floyd_warshall_numpy.py (the kernel) and floyd_warshall.py (its initialize), unchanged.

Copyright 2021 ETH Zurich and the NPBench authors. BSD 3-Clause License.
https://github.com/spcl/npbench/tree/f2d7f27d87ba4881991e62c18a607aa6ba52b260/npbench/benchmarks/polybench/floyd_warshall
"""

import numpy as np


def kernel(path):

    for k in range(path.shape[0]):
        path[:] = np.minimum(path[:], np.add.outer(path[:, k], path[k, :]))


def initialize(N, datatype=np.int32):
    path = np.fromfunction(lambda i, j: i * j % 7 + 1, (N, N), dtype=datatype)
    for i in range(N):
        for j in range(N):
            if (i + j) % 13 == 0 or (i + j) % 7 == 0 or (i + j) % 11 == 0:
                path[i, j] = 999

    return path
