"""NPBench jacobi_1d: polybench/jacobi_1d/jacobi_1d_numpy.py (the kernel) and jacobi_1d.py (its initialize), unchanged.

Copyright 2021 ETH Zurich and the NPBench authors. BSD 3-Clause License.
https://github.com/spcl/npbench/tree/f2d7f27d87ba4881991e62c18a607aa6ba52b260/npbench/benchmarks/polybench/jacobi_1d
"""

import numpy as np


def kernel(TSTEPS, A, B):

    for t in range(1, TSTEPS):
        B[1:-1] = 0.33333 * (A[:-2] + A[1:-1] + A[2:])
        A[1:-1] = 0.33333 * (B[:-2] + B[1:-1] + B[2:])


def initialize(N, datatype=np.float64):
    A = np.fromfunction(lambda i: (i + 2) / N, (N, ), dtype=datatype)
    B = np.fromfunction(lambda i: (i + 3) / N, (N, ), dtype=datatype)

    return A, B
