"""Large temporaries lent by the caller (lowering/workspace.py): the rewrite, the calls, the cache."""

from __future__ import annotations

import resource

import numpy as np
import pytest
from mlir import ir

import egglog_tensor as et
from egglog_tensor import outputs
from egglog_tensor.target import Target
from egglog_tensor.lowering import workspace

TARGETS = ["cpu", "cpu-openmp"]

# 1 MiB rows: a 4 x 1 MiB alloc is hoisted; a 64 KiB one (below workspace.MIN_BYTES), one in a loop
# and one asking for more alignment than the pool's buffers have are not
MODULE = """
func.func @kernel(%arg0: memref<4x262144xf32>) attributes {llvm.emit_c_interface} {
  %big = memref.alloc() {alignment = 64 : i64} : memref<4x262144xf32>
  %small = memref.alloc() : memref<16384xf32>
  %wide = memref.alloc() {alignment = 4096 : i64} : memref<4x262144xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  scf.for %i = %c0 to %c2 step %c1 {
    %inner = memref.alloc() : memref<4x262144xf32>
    memref.copy %arg0, %inner : memref<4x262144xf32> to memref<4x262144xf32>
    memref.copy %inner, %big : memref<4x262144xf32> to memref<4x262144xf32>
    memref.dealloc %inner : memref<4x262144xf32>
  }
  memref.copy %big, %arg0 : memref<4x262144xf32> to memref<4x262144xf32>
  memref.dealloc %small : memref<16384xf32>
  memref.dealloc %wide : memref<4x262144xf32>
  memref.dealloc %big : memref<4x262144xf32>
  return
}
"""


def test_hoist_turns_large_top_level_temporaries_into_arguments() -> None:
    assert 4 * 262144 * 4 >= workspace.MIN_BYTES > 16384 * 4
    with ir.Context():
        module = ir.Module.parse(MODULE)
        lent = workspace.hoist(module)
        text = str(module)
        again = workspace.hoist(module)
    assert "func.func @kernel(%arg0: memref<4x262144xf32>, %arg1: memref<4x262144xf32>)" in text
    assert "memref.copy %arg1, %arg0" in text  # the uses of %big read the new argument
    assert text.count("memref.alloc") == 3 and text.count("memref.dealloc") == 3  # %small, %wide and %inner stay
    assert lent == [((4, 262144), np.dtype(np.float32))] and again == []


def _chain(a, b, c):
    """A product that is a temporary of another matmul (`(a @ b) @ x` with a vector x is reduced
    block by block instead, never stored: tests/test_tiling.py)."""
    return (a @ b) @ c


def _faults() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt


@pytest.mark.parametrize("target", TARGETS)
def test_a_large_temporary_product_is_lent_and_its_pages_stay_mapped(target) -> None:
    """(a @ b) @ c at 1024 (c 1024 x 32): the 4 MiB product and B packed once (4 MiB) are arguments the call
    lends from the output pool, so repeated calls fault no pages in (malloc'd, glibc returned them
    to the system after each call: thousands of faults a call); the results match NumPy's."""
    rng = np.random.default_rng(0)
    a, b = (rng.standard_normal((1024, 1024), np.float32) for _ in range(2))
    x = rng.standard_normal((1024, 32), np.float32)
    kernel = et.kernel(_chain, target=target)
    comp = kernel.inspect(a, b, x)
    assert ((1024, 1024), np.dtype(np.float32)) in comp.workspace
    assert sum(np.prod(shape) for shape, _ in comp.workspace) * 4 >= 8 * 2**20  # the product and packed B
    assert "workspace (lent by each call): " in comp.summary() and "float32[1024,1024]" in comp.summary()
    want = (a.astype(np.float64) @ b) @ x
    for _ in range(2):
        np.testing.assert_allclose(kernel(a, b, x), want, rtol=1e-4, atol=1e-3 * np.abs(want).max())
    before = _faults()
    for _ in range(5):
        kernel(a, b, x)
    assert (_faults() - before) / 5 < 256  # a page per 16 KiB of the 8 MiB would be 512


def test_packs_below_the_output_pools_size_are_lent_too() -> None:
    """A 1000^3 GEMM packs A and B once (lowering/tiling.py), in buffers of about 4 MB (4,000,000 and
    4,096,000 bytes with the tiles an idle machine's numbers choose; other tiles under load): below the
    output pool's MIN_BYTES, above workspace.MIN_BYTES, so they are lent and repeated calls fault no
    pages in (malloc'd, glibc trimmed them off its heap: ~1950 faults a call)."""
    rng = np.random.default_rng(2)
    a, b = (rng.standard_normal((1000, 1000), np.float32) for _ in range(2))
    kernel = et.kernel(lambda a, b: a @ b, target="cpu")
    work = kernel.inspect(a, b).workspace
    if 1000 * 1000 * 4 <= Target.host().l2:  # (B fits L2: not packed once, nothing to lend)
        assert work == ()
        return
    sizes = [int(np.prod(shape)) * 4 for shape, _ in work]
    assert len(sizes) == 2 and all(workspace.MIN_BYTES <= n < outputs.MIN_BYTES for n in sizes), sizes
    np.testing.assert_allclose(kernel(a, b), a.astype(np.float64) @ b, rtol=1e-4, atol=1e-3)
    before = _faults()
    for _ in range(5):
        kernel(a, b)
    assert (_faults() - before) / 5 < 256  # the output comes from malloc's free lists


def test_workspace_survives_the_disk_cache() -> None:
    rng = np.random.default_rng(1)
    a, b = (rng.standard_normal((1024, 1024), np.float32) for _ in range(2))
    x = rng.standard_normal((1024, 32), np.float32)
    first = et.kernel(_chain)
    fresh = first.inspect(a, b, x)
    again = et.kernel(_chain)
    hit = again.inspect(a, b, x)
    assert fresh.cache == "miss-stored" and hit.cache == "hit"
    assert hit.workspace == fresh.workspace != ()
    np.testing.assert_array_equal(again(a, b, x), first(a, b, x))


def test_out_argument_and_concurrent_calls_get_their_own_workspace() -> None:
    """Two threads calling one kernel at once each get their own lent buffers (the results are
    those of single calls), and out= works with a workspace."""
    import threading

    rng = np.random.default_rng(2)
    args = [(rng.standard_normal((1024, 1024), np.float32), rng.standard_normal((1024, 1024), np.float32),
             rng.standard_normal((1024, 32), np.float32)) for _ in range(2)]
    kernel = et.kernel(_chain)
    want = [kernel(*arg) for arg in args]
    got: list = [None, None]

    def run(i: int) -> None:
        for _ in range(3):
            got[i] = kernel(*args[i])

    threads = [threading.Thread(target=run, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for g, w in zip(got, want, strict=True):
        np.testing.assert_array_equal(g, w)
    out = np.empty((1024, 32), np.float32)
    assert kernel(*args[0], out=out) is out
    np.testing.assert_array_equal(out, want[0])
