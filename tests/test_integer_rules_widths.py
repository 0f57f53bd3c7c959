"""The exact integer rewrites (x - x = 0, the sum of a broadcast as one multiply, powers by squaring)
apply to every integer width, signed and unsigned: wrapping arithmetic makes them exact modulo 2**bits."""

from __future__ import annotations

import numpy as np
import pytest

import egglog_tensor as et


def _f(x):
    return np.broadcast_to(x, (300, x.shape[0])).sum(axis=0, dtype=x.dtype) + x ** 5 + (x - x)


@pytest.mark.parametrize("dtype", [np.int8, np.uint16, np.uint64])
def test_integer_rules_fire_for_every_width_and_match_numpy_s_wraparound(dtype) -> None:
    x = (np.arange(64) * 37 - 1000).astype(dtype)  # values that overflow the width when multiplied
    k = et.kernel(_f, cache=False)
    got = k(x)
    assert got.dtype == dtype
    np.testing.assert_array_equal(got, _f(x))
    term = k.compilations[0].extracted_term
    assert "broadcast_to(Vec(300" not in term and "**" not in term and " - " not in term, term
