"""NPBench's NumPy benchmarks, one module per benchmark, each its `_numpy.py` kernel and its `initialize` as published.

Copyright 2021 ETH Zurich and the NPBench authors. BSD 3-Clause License. https://github.com/spcl/npbench
"""
