"""NPBench doitgen: polybench/doitgen/doitgen_numpy.py (the kernel) and doitgen.py (its initialize), unchanged.

Copyright 2021 ETH Zurich and the NPBench authors. BSD 3-Clause License.
https://github.com/spcl/npbench/tree/f2d7f27d87ba4881991e62c18a607aa6ba52b260/npbench/benchmarks/polybench/doitgen
"""

import numpy as np


def kernel(NR, NQ, NP, A, C4):

    # for r in range(NR):
    #     for q in range(NQ):
    #         sum[:] = A[r, q, :] @ C4
    #         A[r, q, :] = sum
    A[:] = np.reshape(np.reshape(A, (NR, NQ, 1, NP)) @ C4, (NR, NQ, NP))


def initialize(NR, NQ, NP, datatype=np.float64):
    A = np.fromfunction(lambda i, j, k: ((i * j + k) % NP) / NP, (NR, NQ, NP),
                        dtype=datatype)
    C4 = np.fromfunction(lambda i, j: (i * j % NP) / NP, (NP, NP),
                         dtype=datatype)

    return A, C4
