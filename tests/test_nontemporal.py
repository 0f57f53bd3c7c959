"""Non-temporal stores for outputs larger than the last-level cache (lowering/stages/loops.py and streams.py)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

import egglog_tensor as et
from egglog_tensor.lowering.annotations import PLAIN_STORES
from egglog_tensor.lowering.stages import loops, streams
from egglog_tensor.lowering.pipelines import resolve_target
from egglog_tensor.target import Target

TARGETS = ["cpu", "cpu-openmp"]
SMALL = 1 << 16  # a streaming threshold that lets test arrays of a few hundred KiB stream


def small_l3(name: str) -> Target:
    """This machine under pipeline `name` (two threads), with an L3 small enough that outputs of
    SMALL bytes stream (loops.min_bytes: a quarter of L3)."""
    return resolve_target(replace(Target.host(), name=name, threads=2, l3=4 * SMALL))


def _placed_like(array: np.ndarray, skew: int) -> np.ndarray:
    """An empty C-contiguous array like `array` whose data starts `skew` elements past a 64-byte boundary."""
    raw = np.empty(array.size + 64, array.dtype)
    start = (-raw.ctypes.data % 64) // array.itemsize + skew
    return raw[start:start + array.size].reshape(array.shape)


def _affine(a, b):
    return a * 3 + b


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32])
def test_large_arithmetic_outputs_are_streamed(target: str, dtype) -> None:
    """The loop nest is versioned on the output's alignment; the aligned copy's vector stores are
    non-temporal; results are NumPy's bit for bit in an aligned (pool) and a misaligned output."""
    target = small_l3(target)
    rng = np.random.default_rng(1)
    a = (rng.standard_normal((256, 512)) * 100).astype(dtype)
    b = (rng.standard_normal(512) * 100).astype(dtype)
    kernel = et.kernel(_affine, target=target)
    comp = kernel.inspect(a, b)
    loops = comp.stage("parallel-loops" if target.name == "cpu-openmp" else "loops")
    assert "scf.if" in loops and loops.count("{nontemporal = true}") == 1
    streams = comp.stage("llvm-ir-optimized").count(", !nontemporal ")
    assert streams and f"streaming stores: {streams} non-temporal vector stores" in comp.summary()
    assert "vmovnt" in comp.stage("asm") and "sfence" in comp.stage("asm")
    want = a * 3 + b
    np.testing.assert_array_equal(kernel(a, b), want)
    for skew in (0, 1):  # the streaming branch, the plain one
        out = _placed_like(want, skew)
        assert kernel(a, b, out=out) is out
        np.testing.assert_array_equal(out, want)


@pytest.mark.parametrize("target", TARGETS)
def test_rows_not_whole_cache_lines_stay_plain_and_correct(target: str) -> None:
    """Rows of 1001 floats: LLVM cannot prove the vector stores aligned, so none is non-temporal."""
    target = small_l3(target)
    a = np.random.default_rng(2).standard_normal((129, 1001), dtype=np.float32)
    b = np.float32(0.5) * a[0]
    kernel = et.kernel(_affine, target=target)
    comp = kernel.inspect(a, b)
    assert "{nontemporal = true}" in comp.stage("parallel-loops" if target.name == "cpu-openmp" else "loops")
    assert "vmovnt" not in comp.stage("asm")
    np.testing.assert_array_equal(kernel(a, b), a * 3 + b)


def _horner(x, degree):
    acc = x * 0.5 + 0.25
    for i in range(degree - 1):
        acc = acc * x + (0.1 * i + 0.3)
    return acc


def test_compute_bound_loops_small_outputs_and_read_outputs_keep_plain_stores() -> None:
    """Not streamed: a loop calling vector math (libmvec's sin) or doing more than MAX_WORK ops per
    store (a Horner polynomial of degree 40: 80 ops), an output below the threshold, and an output
    the nest also reads (a column sum accumulating in it). Streamed: loops up to MAX_WORK (a Horner
    polynomial of degree 6, 12 ops; exp(x) * 2, 17 with the inline exp; gelu, about 52)."""
    a = np.random.default_rng(3).standard_normal((8, 32768), dtype=np.float32)
    small = et.kernel(_affine, target="cpu").inspect(a[:, :64], a[0, :64])
    assert "nontemporal" not in small.stage("loops") and "scf.if" not in small.stage("loops")
    cpu = small_l3("cpu")
    for fn in (lambda x: _horner(x, 6), lambda x: np.exp(x) * 2, lambda x: 0.5 * x * (1 + np.tanh(x + 0.04 * x * x * x))):
        assert "{nontemporal = true}" in et.kernel(fn, target=cpu).inspect(a).stage("loops")
    for fn, want in ((lambda x: np.sin(x) * 2, np.sin(a) * 2), (lambda x: _horner(x, 40), _horner(a, 40)),
                     (lambda x: x.sum(axis=0), a.sum(axis=0))):
        kernel = et.kernel(fn, target=cpu)
        comp = kernel.inspect(a)
        assert "nontemporal" not in comp.stage("loops") and "vmovnt" not in comp.stage("asm")
        np.testing.assert_allclose(kernel(a), want, rtol=1e-5)


def test_outputs_larger_than_the_last_level_cache_stream_unless_turned_off() -> None:
    """At the host's real thresholds (an output of a quarter of its L3, in a kernel moving at least
    the whole L3), with the default target; a kernel moving less keeps plain stores, and so does
    streaming=False (the emitted function says so, and the guard removes the mark)."""
    rows = 2 * loops.min_bytes(Target.host()) // (4 * 4096)
    assert "vmovnt" not in et.kernel(lambda x: x * 0.5 - 1.0).inspect(np.zeros((rows - 1, 4096), np.float32)).stage("asm")
    a = np.arange(rows * 4096, dtype=np.float32).reshape(rows, 4096)
    want = a * np.float32(0.5) - np.float32(1.0)
    streamed, plain = et.kernel(lambda x: x * 0.5 - 1.0), et.kernel(lambda x: x * 0.5 - 1.0, streaming=False)
    assert "vmovntps" in streamed.inspect(a).stage("asm")
    comp = plain.inspect(a)
    assert PLAIN_STORES in comp.stage("linalg") and PLAIN_STORES not in comp.stage("llvm")
    loop_ir = comp.stage("parallel-loops" if "parallel-loops" in comp.stages else "loops")
    assert "scf.if" not in loop_ir and "vmovnt" not in comp.stage("asm") and "streaming stores" not in comp.summary()
    for kernel in (streamed, plain):
        np.testing.assert_array_equal(kernel(a), want)


STORES = """define void @f(ptr %p, <16 x float> %v, <8 x double> %w, float %s) {
  store <16 x float> %v, ptr %p, align 64, !llvm.access.group !0
  store <16 x float> %v, ptr %p, align 4, !llvm.access.group !0
  store <16 x float> %v, ptr %p, align 64
  store <8 x double> %w, ptr %p, align 32, !llvm.access.group !0
  store float %s, ptr %p, align 64, !llvm.access.group !0
  ret void
}

!0 = distinct !{}
"""


def test_mark_makes_only_marked_vector_stores_aligned_to_their_width_nontemporal() -> None:
    marked, streamed = streams.mark(STORES)
    lines = marked.splitlines()
    stores = [line for line in lines if "store" in line]
    assert [("!nontemporal !1" in line) for line in stores] == [True, False, False, False, False]
    assert lines[-1] == "!1 = !{i32 1}" and streamed == streams.Streamed(1)
    assert streams.mark(STORES.replace("!llvm.access.group !0", "")) == (STORES.replace("!llvm.access.group !0", ""), streams.Streamed(0))


@pytest.mark.parametrize("target", TARGETS)
def test_a_loop_storing_what_calls_computed_elsewhere_streams(target: str) -> None:
    """Softmax's rows: exp runs in one loop (into a block buffer), the division by the row sums
    stores the output in another, which streams."""
    target = small_l3(target)
    x = np.random.default_rng(4).standard_normal((256, 1024), dtype=np.float32)

    def softmax(x):
        e = np.exp(x - np.max(x, axis=1, keepdims=True))
        return e / np.sum(e, axis=1, keepdims=True)

    kernel = et.kernel(softmax, target=target)
    comp = kernel.inspect(x)
    assert "{nontemporal = true}" in comp.stage("parallel-loops" if target.name == "cpu-openmp" else "loops")
    assert "vmovntps" in comp.stage("asm")
    np.testing.assert_allclose(kernel(x), softmax(x), rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("target", TARGETS)
def test_several_outputs_stream_when_all_their_addresses_are_aligned(target: str) -> None:
    """Two results written by one loop nest: the streaming copy runs only if both are aligned;
    any mix of aligned and misaligned outputs gives NumPy's results."""
    target = small_l3(target)
    a = np.random.default_rng(5).standard_normal((256, 512), dtype=np.float32)
    kernel = et.kernel(lambda a: (a * 2, a - 1), target=target)
    loops = kernel.inspect(a).stage("parallel-loops" if target.name == "cpu-openmp" else "loops")
    assert loops.count("{nontemporal = true}") == 2 and loops.count("llvm.inline_asm") == 2
    for skews in ((0, 0), (0, 1), (1, 0)):
        outs = tuple(_placed_like(a, skew) for skew in skews)
        assert all(got is out for got, out in zip(kernel(a, out=outs), outs, strict=True))
        np.testing.assert_array_equal(outs[0], a * 2)
        np.testing.assert_array_equal(outs[1], a - 1)


@pytest.mark.parametrize("target", TARGETS)
def test_vector_scans_stream_their_rows(target: str) -> None:
    """A long cumsum's vector loop (lowering/scanrows.py: transfer_write) stores non-temporally too: the loops
    stage makes its row writes nontemporal vector.store; results right in an aligned and a misaligned output."""
    x = (np.arange(2**17, dtype=np.int64) % 1000) - 300
    kernel = et.kernel(lambda a: np.cumsum(a), target=small_l3(target))
    comp = kernel.inspect(x)
    loops = comp.stage("parallel-loops" if target == "cpu-openmp" else "loops")
    assert "scf.if" in loops and "vector.store" in loops and "nontemporal = true" in loops
    assert "vmovnt" in comp.stage("asm") and "sfence" in comp.stage("asm")
    want = np.cumsum(x)
    np.testing.assert_array_equal(kernel(x), want)
    for skew in (0, 1):
        out = _placed_like(want, skew)
        assert kernel(x, out=out) is out
        np.testing.assert_array_equal(out, want)
