"""Minimal programs from bugs the differential fuzzer (tests/test_fuzz.py) found, as plain tests."""

from __future__ import annotations

import numpy as np
from strategies import check


def _abs_of_max_and_max(x):
    m = np.max(x, axis=1)
    return np.abs(m), m


def test_two_outputs_of_a_row_fused_1x1_consumer() -> None:
    """The 'rows' stage once fused the max (also an output) into abs's row loop; MLIR then swapped
    the two outputs' destinations when the one-iteration loop folded. Such producers stay outside."""
    check(_abs_of_max_and_max, np.array([[[-4.75]]], np.float32))


def test_two_outputs_of_a_row_fused_consumer() -> None:
    check(_abs_of_max_and_max, np.array([[[-4.75, 2.0]], [[1.0, -3.0]]], np.float32))


def _gram_and_where(x0):
    v1 = np.where(x0 == x0, x0, x0)
    return x0 @ np.swapaxes(x0, -1, -2), v1


def test_gram_of_a_single_row() -> None:
    """A 1x1 matmul output (register tile nr = 1) once took the packed-B path, whose pad then
    bufferized to a memref.copy runtime call the JIT cannot resolve (lowering/tiling.py)."""
    check(_gram_and_where, np.array([[3.0, -5.0]], np.float32))
