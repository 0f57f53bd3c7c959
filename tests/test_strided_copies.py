"""Copies of non-contiguous arguments (issue 22): a reshape or ravel of a Fortran-ordered, strided,
negative-stride or broadcast argument feeding a contraction, a concatenation or an output once
failed at `link` ("the code calls memrefCopy"): bufferization copied the strided buffer with
memref.copy, a runtime-library call. The sweep: layouts x programs x both targets."""

from __future__ import annotations

import numpy as np
import pytest
from strategies import compare

import egglog_tensor as et

pytestmark = pytest.mark.slow  # minutes long: .ci/run runs it after the default run

_RNG = np.random.default_rng(22)
_BASE = _RNG.standard_normal((12, 16))
LAYOUTS = {
    "C": lambda: _BASE[:6, :4].copy(),
    "F": lambda: np.asfortranarray(_BASE[:6, :4]),
    "columns[:, ::2]": lambda: _BASE[:6, :8:2],
    "negative": lambda: _BASE[5::-1, 3::-1],
    "broadcast": lambda: np.broadcast_to(_BASE[0, :4], (6, 4)),
    "transposed": lambda: _BASE[:4, :6].T,
}
B, V, M = _RNG.standard_normal((6, 3)), _RNG.standard_normal(24), _RNG.standard_normal((24, 5))

PROGRAMS = {
    "reshape @ b": lambda a, b, v, m: a.reshape(4, 6) @ b,
    "ravel @ v": lambda a, b, v, m: a.ravel() @ v,
    "v @ ravel": lambda a, b, v, m: v @ a.ravel(),
    "ravel @ m": lambda a, b, v, m: a.ravel() @ m,
    "dot(ravel, ravel)": lambda a, b, v, m: np.dot(a.ravel(), (a * 2).ravel()),
    "sum(ravel * v)": lambda a, b, v, m: np.sum(a.ravel() * v),
    "reshape 3-D, sum": lambda a, b, v, m: a.reshape(2, 3, 4).sum(axis=1),
    "reshape, concatenate, matmul": lambda a, b, v, m: np.concatenate([a.reshape(4, 6), a.reshape(4, 6)]) @ b,
    "returned as is and raveled": lambda a, b, v, m: (a, a.ravel()),
}


@pytest.mark.parametrize("target", ["cpu", "cpu-openmp"])
@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_reshaped_strided_argument(layout: str, target: str) -> None:
    a = LAYOUTS[layout]()
    for name, fn in PROGRAMS.items():
        got, want = et.kernel(fn, target=target)(a, B, V, M), fn(a, B, V, M)
        for g, w in zip(got, want, strict=True) if isinstance(want, tuple) else [(got, want)]:
            compare(g, np.asarray(w) if np.ndim(w) else w, 1e-12, 1e-12, False, f"{name} on a {layout} argument")


@pytest.mark.parametrize("target", ["cpu", "cpu-openmp"])
def test_no_runtime_copy_in_lowered_code(target: str) -> None:
    f = et.kernel(lambda a, b: a.reshape(4, 6) @ b, target=target)
    comp = f.inspect(np.asfortranarray(_BASE[:6, :4]), B)
    assert "memref.copy" not in comp.stage("bufferize") and "memrefCopy" not in comp.stage("llvm-ir")
    assert "linalg.copy" in comp.stage("bufferize")
