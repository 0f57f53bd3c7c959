"""Everyday NumPy idioms found failing by a third survey (/tmp scratch list of ~80: signal processing, geometry,
index tricks, dtype corners): traced masks beside other indices, histogram2d, np.pad's remaining modes, and what
the survey found. Few kernels, small arrays."""

from __future__ import annotations

import numpy as np
import pytest
from strategies import check

import egglog_tensor as et


def mask_with_indices(x, m, c):
    y = x.copy()
    y[m, 1:] = -1
    y[:, c] = 0
    y[m, 0] += 1
    y[0, c] *= 3
    y[m, ..., 2:] = x[m, ..., 1:4] * 2  # (the selections' value: x's, where m is)
    z = x.copy()
    z[:, c] = x[:, :1] + 10  # a value broadcast along the count
    z[m, 1:] = np.arange(4)
    return (y, z, x[1:, c].sum(), x[:, c].max(), x[m, 1:].mean(axis=0), x[m, 0].sum(), (x[m, 1:] ** 2).sum(),
            x[..., c].min(axis=1), x[m, :3].std())


@pytest.mark.parametrize("dtype", ["float64", "int32"])
def test_masks_beside_other_indices_match_numpy(dtype: str) -> None:
    """A traced mask with slices, ints and an Ellipsis beside it: stored into (=, +=, a selection) and reduced."""
    x = ((np.arange(20).reshape(4, 5) * 7) % 11 - 3).astype(dtype)
    check(mask_with_indices, x, np.array([True, False, True, True]), np.array([False, True, True, False, True]))


def test_mask_beside_ints_apart_is_refused() -> None:
    """x[0, :, m]: NumPy puts the count first (the int and the mask apart): a clear UnsupportedError."""
    def f(x, m):
        y = x.copy()
        y[0, :, m] = 1.0
        return y

    with pytest.raises(et.UnsupportedError, match="mask"):
        et.kernel(f)(np.ones((2, 3, 4)), np.array([True, False, True, False]))
