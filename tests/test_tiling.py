"""Tiling and vectorization of contractions (lowering/tiling.py and the pipelines' "tile" stage)."""

from __future__ import annotations

import math
import re
import subprocess
import sys
from dataclasses import replace

import numpy as np
import pytest
from egglog import Vec, i64, rewrite, ruleset

import egglog_tensor as et
from egglog_tensor.errors import CompileError
from egglog_tensor.ir import Tensor
from egglog_tensor.lowering import policy, tiling
from egglog_tensor.lowering.pipelines import resolve_target
from egglog_tensor.target import NAMED, Target, Tuning, read_caches
from egglog_tensor.rulesets import algebra, fusion, layout
from strategies import sweep, threaded

rng = np.random.default_rng(7)
TARGETS = ["cpu", "cpu-openmp"]
CPU_FIRST = sweep(TARGETS, ["cpu"])  # tile choices and scripts: cpu-openmp (the same tiles, threaded) in the slow run


def on_both(cases: list, threaded: list) -> list:
    """(target, case) parameters: every case on cpu; on cpu-openmp (the same tiles, threaded) those in
    `threaded` in the default run, the others in the slow run."""
    return [pytest.param(target, case, marks=() if target == "cpu" or case in threaded else pytest.mark.slow)
            for target in TARGETS for case in cases]
# AVX-512's register width on the host's CPU: the tile policy's choices the tests below name (8 x 32
# register tiles) on any host; LLVM generates code for this machine (wider vectors split in two on AVX2)
WIDE = replace(Target.host(), simd=64)


def wide(name: str) -> Target:
    """The host under pipeline `name` (cpu-openmp on two threads) with 64-byte SIMD registers."""
    return resolve_target(replace(WIDE, name=name, threads=2 if name == "cpu-openmp" else 1))


def _args(shapes, dtype):
    if np.issubdtype(dtype, np.integer):
        return [rng.integers(-9, 10, s).astype(dtype) for s in shapes]
    return [rng.standard_normal(s).astype(dtype) for s in shapes]


def _assert_outputs_close(got, want, rtol: float, atol: float) -> None:
    """A kernel's result (or tuple of results) against NumPy's."""
    for g, w in zip(got if isinstance(got, tuple) else (got,), want if isinstance(want, tuple) else (want,), strict=True):
        np.testing.assert_allclose(g, w, rtol=rtol, atol=atol)


def _check(fn, shapes, dtype, target):
    args = _args(shapes, dtype)
    got, want = et.kernel(fn, target=target)(*args), fn(*args)
    assert got.shape == want.shape and got.dtype == want.dtype
    if np.issubdtype(dtype, np.integer):
        np.testing.assert_array_equal(got, want)
    else:
        tol = 1e-4 if dtype == np.float32 else 1e-10
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol * max(1, shapes[0][-1]))


MATMUL_SHAPES = [  # (m, k, n): tiny, prime, not divisible by any tile, size 0, one full tile + remainder
    (1, 1, 1), (3, 17, 1), (17, 3, 33), (1, 64, 1), (8, 32, 32), (67, 45, 130), (33, 200, 47),
    (0, 4, 3), (5, 0, 3), (4, 3, 0), (264, 193, 140),
    (256, 320, 33), (300, 320, 1), (64, 256, 256),  # packed B panels: a partial last panel, nr = 1, all full
    (300, 512, 32),  # a partial last row block with one B panel per block (failed to bufferize when packed)
    (100, 100, 100), (129, 65, 257), (1000, 72, 200),  # padded to whole register tiles (policy.padded_loops)
]


@pytest.mark.parametrize("dtype", [np.float32, *(pytest.param(d, marks=pytest.mark.slow) for d in (np.float64, np.int32, np.int64))])  # (a sweep)
@pytest.mark.parametrize(("target", "mkn"), on_both(MATMUL_SHAPES, [(17, 3, 33), (0, 4, 3), (264, 193, 140), (300, 512, 32), (129, 65, 257)]),
                         ids=lambda v: "x".join(map(str, v)) if isinstance(v, tuple) else v)
def test_matmul_matches_numpy(target, dtype, mkn) -> None:
    m, k, n = mkn
    _check(lambda a, b: a @ b, [(m, k), (k, n)], dtype, target)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("dtype", [np.float32, pytest.param(np.int64, marks=pytest.mark.slow)])  # (a sweep)
@pytest.mark.parametrize(
    ("name", "fn", "shapes"),
    [
        ("a.T@b", lambda a, b: a.T @ b, [(45, 67), (45, 130)]),
        ("a@b.T", lambda a, b: a @ b.T, [(67, 45), (130, 45)]),
        ("a.T@b.T", lambda a, b: a.T @ b.T, [(19, 37), (40, 19)]),
        ("batch", lambda a, b: a @ b, [(3, 17, 9), (3, 9, 33)]),
        ("matvec", lambda a, b: a @ b, [(37, 70), (70,)]),
        ("matvec-tall", lambda a, b: a @ b, [(300, 3), (3,)]),
        ("matvec-odd", lambda a, b: a @ b, [(203, 301), (301,)]),  # partial row blocks and k steps: peeled
        ("vecmat", lambda a, b: a @ b, [(70,), (70, 37)]),
        ("vecmat-wide", lambda a, b: a @ b, [(5,), (5, 1000)]),
        ("dot", lambda a, b: a @ b, [(77,), (77,)]),
        ("dot-1", lambda a, b: a @ b, [(1,), (1,)]),
        ("mm+bias+relu", lambda a, b, c: np.maximum(a @ b + c, 0), [(67, 45), (45, 130), (130,)]),
        ("chain", lambda a, b, x: (a @ b) @ x, [(20, 30), (30, 17), (17,)]),
    ],
)
def test_contractions_match_numpy(target, dtype, name, fn, shapes) -> None:
    _check(fn, shapes, dtype, target)


def _vecmat_foralls(n: int, k: int, itemsize: int, threads: int) -> list[str]:
    """The thread-level forall of y = x @ A, A k x n, as the tile policy sizes it (`tiling._vecmat`):
    over the S parts of a split k (k blocks of `choose_tiles`, else `_k_split` rows), a thread's
    ceil(S / threads) parts at a time; else over column blocks of y, one per thread, rounded to
    the vector width by `_divisor_tile`. A forall of one iteration folds away: none."""
    tiles = policy.choose_tiles("linalg.vecmat", (n, k), itemsize, Target.host())
    (tk, (nv, kr)) = tiles.tiles[1], tiles.vec
    parallel = n * k >= policy.MIN_WORK
    blocks = k // tk if tk and k % tk == 0 else 1
    parts = tiling._k_split(k, kr, threads) if parallel and blocks == 1 else blocks
    if parts > 1:
        chunk = -(-parts // threads) if parallel else parts
        iterations = -(-parts // chunk)
    else:
        col_blocks = min(threads, max(1, n // nv)) if parallel else 1
        iterations = -(-n // policy.divisor_tile(n, -(-n // col_blocks), nv))
    return [str(iterations)] if iterations > 1 else []


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32])
@pytest.mark.parametrize(("k", "n", "split"), [(512, 300, True), (301, 300, False), (2048, 64, True)],
                         ids=["split", "odd-k", "narrow"])
def test_vecmat_threads_read_whole_rows(dtype, k, n, split) -> None:
    """x @ A on two threads: the rows of A are split among them (one partial y each, summed after:
    each thread streams whole rows), unless k has no split into whole steps of kr rows, when the
    threads take column blocks; one thread reads whole rows too (no forall over column blocks). A k
    of more than 256 rows is summed in blocks of rows (`k_block`), one partial y each, on any
    number of threads."""
    x, a = _args([(k,), (k, n)], dtype)
    tk = policy.choose_tiles("linalg.vecmat", (n, k), np.dtype(dtype).itemsize, Target.host()).tiles[1]
    for threads in (1, 2):
        kernel = et.kernel(lambda x, a: x @ a, target=threaded(threads))
        got, comp = kernel(x, a), kernel.inspect(x, a)
        if np.issubdtype(dtype, np.integer):
            np.testing.assert_array_equal(got, x @ a)
        else:
            tol = 1e-4 if dtype == np.float32 else 1e-10
            np.testing.assert_allclose(got, x @ a, rtol=tol, atol=tol * k)
        tiled = comp.stage("tile")
        assert re.search(r"(vector\.fma|arith\.addi) .*: vector<\d+x", tiled) and "linalg.vecmat" not in tiled
        parts = k // tk if tk and k % tk == 0 else 2 if split and threads == 2 else 0
        partials = re.search(rf"tensor.empty\(\) : tensor<{parts}x{n}x", tiled)  # the blocks' or threads' partial ys
        assert bool(partials) == bool(parts), tiled
        foralls = re.findall(r"scf.forall \(%\w+\) in \((\d+)\)", tiled)
        assert foralls == _vecmat_foralls(n, k, np.dtype(dtype).itemsize, threads), tiled
        if threads == 2:  # split: one row half per thread; else column blocks, more than one
            assert (foralls == ["2"]) if split else (len(foralls) == 1 and int(foralls[0]) > 1), foralls
        if threads == 2:
            assert "omp.wsloop" in comp.stage("openmp")


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("k", [2000, 2048, 100_000])
def test_vecmat_of_one_column_compiles_and_matches(dtype, k) -> None:
    """x @ A[:, :1] (a vecmat of n = 1, as a convolution's one full-overlap output makes): its k is not split
    among threads (a split part's unit n was folded away with the split's, a dot the part's 2-D tiles do not
    fit: the tile stage failed, "too many tiles provided")."""
    x, a = _args([(k,), (k, 3)], dtype)
    for threads in (1, 2):
        got = et.kernel(lambda x, a: x @ a[:, :1], target=threaded(threads))(x, a)
        tol = 1e-4 if dtype == np.float32 else 1e-10
        np.testing.assert_allclose(got, x @ a[:, :1], rtol=tol, atol=tol * np.sqrt(k))


@pytest.mark.parametrize("target", CPU_FIRST)
def test_matvec_full_register_tiles_are_unmasked(target) -> None:
    """A matvec whose k is not a multiple of the partial sums' width, nor m of the row block: the
    full register tiles are peeled from the partial ones, so the hot loop reads A unmasked (a
    masked tile everywhere made the whole loop slower); each row's 64 partial sums are combined
    by one vector.reduction (not 64 scalar extracts and adds)."""
    a, x = _args([(203, 301), (301,)], np.float32)
    kernel = et.kernel(lambda a, x: a @ x, target=wide(target))
    np.testing.assert_allclose(kernel(a, x), a @ x, rtol=1e-4, atol=1e-3)
    tiled = kernel.inspect(a, x).stage("tile")
    unmasked = r"vector.transfer_read %\w+\[[^\]]*\], %\w+ \{in_bounds = \[true, true\]\} : tensor<203x301xf32>, vector<4x64xf32>"
    masked = r"vector.transfer_read %\w+\[[^\]]*\], %\w+, %\w+ \{in_bounds = \[true, true\]\} : tensor<203x301xf32>"
    assert re.search(unmasked, tiled) and re.search(masked, tiled)
    assert re.search(r"vector.reduction <add>, %\w+, %\w+ : vector<64xf32>", tiled) and tiled.count("vector.extract ") < 64


ONE_ROW = {  # issue 22: one row of A and one full step of k plus a partial one (float32 64 < k < 128, float64 32 < k < 64)
    "float32": "a, x = np.ones((1, 100), np.float32), np.ones(100, np.float32); fn = lambda a, x: a @ x",
    "float64": "a, x = np.ones((1, 40)), np.ones(40); fn = lambda a, x: a @ x",
    "transposed": "a, x = np.ones((100, 1), np.float32), np.ones(100, np.float32); fn = lambda a, x: a.T @ x",
    "epilogue": "a, x = np.ones((1, 65), np.float32), np.ones(65, np.float32); fn = lambda a, x: np.tanh(a @ x) + 1",
    "slice": "a, x = np.ones((5, 100), np.float32), np.ones(100, np.float32); fn = lambda a, x: a[:1] @ x",
    "no-rules": "a, x = np.ones((1, 33)), np.ones(33); fn = lambda a, x: a @ x; options = {'rules': None}",
}


@pytest.mark.parametrize("spelling", sweep(ONE_ROW, ["float32", "epilogue", "no-rules"]))
def test_one_row_matvec_compiles(spelling: str) -> None:
    """A one-row matvec (issue 22): the partial sums are narrowed to two full steps of k, so the k loop
    stays (with one, MLIR's vector patterns asserted and aborted the process). In a subprocess, so an
    abort fails this test only."""
    script = f"""import numpy as np, egglog_tensor as et
options = {{}}
{ONE_ROW[spelling]}
for target in ("cpu", "cpu-openmp"):
    np.testing.assert_allclose(et.kernel(fn, target=target, **options)(a, x), fn(a, x), rtol=1e-6)
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, f"exit code {done.returncode}\n{done.stderr[-3000:]}"


BATCH_SHAPES = [  # (batch, m, k, n): tiny, unit m / n / k (left to loops), remainders, one batch, many
    (3, 17, 9, 33), (2, 1, 5, 7), (2, 6, 5, 1), (2, 6, 1, 7), (1, 64, 64, 64), (5, 67, 45, 130),
    (64, 8, 8, 8), (2, 300, 320, 33), (3, 0, 4, 5),
]


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("dtype", [np.float32, *(pytest.param(d, marks=pytest.mark.slow) for d in (np.float64, np.int32))])  # (a sweep)
@pytest.mark.parametrize("bmkn", BATCH_SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_batch_matmul_matches_numpy(target, dtype, bmkn) -> None:
    nb, m, k, n = bmkn
    _check(lambda a, b: a @ b, [(nb, m, k), (nb, k, n)], dtype, target)


@pytest.mark.parametrize("target", CPU_FIRST)
def test_batch_matmul_blocks_are_vectorized_2d_matmuls(target) -> None:
    """Each (batch, m, n) block of a batch_matmul runs the 2-D matmul's loops: register tiles of
    vector FMAs with the accumulator in registers, blocks parallel over the batch too; its cache
    tiles are the optimizer's choice (matmul_tiled on 3-D operands), not the loops' scalar code."""
    a, b = rng.standard_normal((4, 256, 96), np.float32), rng.standard_normal((4, 96, 192), np.float32)
    comp = et.kernel(lambda a, b: a @ b, target=wide(target)).inspect(a, b)
    assert "matmul_tiled" in comp.stage("extracted")
    assert re.search(r"linalg.batch_matmul \{et.tiles = \[1, \d+, \d+, \d+\]", comp.stage("linalg"))
    tiled = comp.stage("tile")
    assert "linalg.batch_matmul" not in tiled and "vector.fma" in tiled and "-> (vector<8x32xf32>)" in tiled
    assert re.search(r"scf.forall \([^)]*\) in \(4[,)]", tiled)  # over the batch (and row / column blocks)
    if target == "cpu-openmp":
        assert "omp.wsloop" in comp.stage("openmp")


def pinned_tiles(*tiles: int):
    """A user's schedule computing every matmul with these cache tiles (the plain form subsumed)."""
    mine = ruleset(name="tiles_" + "_".join(map(str, tiles)))

    @mine.register
    def _(a: Tensor, b: Tensor) -> object:
        yield rewrite(a @ b, subsume=True).to(a.matmul_tiled(b, Vec[i64](*(i64(t) for t in tiles))))

    return algebra + fusion + layout + mine


@pytest.mark.parametrize("target", CPU_FIRST)
def test_pinned_batch_tiles_are_applied(target) -> None:
    a, b = rng.standard_normal((3, 70, 50), np.float32), rng.standard_normal((3, 50, 90), np.float32)
    k = et.kernel(lambda a, b: a @ b, target=target, rules=pinned_tiles(16, 32, 24))
    assert "linalg.batch_matmul {et.tiles = [1, 16, 32, 24]" in k.inspect(a, b).stage("linalg")
    np.testing.assert_allclose(k(a, b), a @ b, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("target", CPU_FIRST)
@pytest.mark.parametrize("tiles", [(5, 7, 3), (1, 1, 1), (5, 64, 3), (16, 7, 64)], ids=lambda t: "x".join(map(str, t)))
@pytest.mark.parametrize("fn", [lambda a, b: a @ b, lambda a, b: np.maximum(a @ b, 0.0)], ids=["matmul", "epilogue"])
def test_pinned_tiles_smaller_than_the_register_tile_shrink_it(fn, tiles, target) -> None:
    """A register tile larger than the cache tile in m and n left a partial register tile in both,
    whose copy bufferized to a memrefCopy runtime call: (5, 7, 3) on 64^3 failed to link. The
    register tile is clipped to the cache tile."""
    a, b = _args([(64, 64), (64, 64)], np.float32)
    k = et.kernel(fn, target=target, rules=pinned_tiles(*tiles))
    mr, nr = policy.register_tile(4, Target.host())
    vec = (min(mr, tiles[0]), min(nr, tiles[1]), 1)
    assert f"et.vec = [{vec[0]}, {vec[1]}, 1]" in k.inspect(a, b).stage("linalg")
    np.testing.assert_allclose(k(a, b), fn(a, b), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("tiles", [(0, 32, 32), (8, 8)])
def test_bad_pinned_tiles_are_a_compile_error(tiles) -> None:
    a = rng.standard_normal((2, 8, 8), np.float32)
    with pytest.raises(CompileError, match=r"matmul_tiled: tiles must be Vec\(TM, TN, TK\), each >= 1"):
        et.kernel(lambda a, b: a @ b, rules=pinned_tiles(*tiles))(a, a)


def test_batch_matmul_with_a_unit_loop_is_left_to_loops() -> None:
    a, b = rng.standard_normal((3, 1, 40), np.float32), rng.standard_normal((3, 40, 50), np.float32)
    comp = et.kernel(lambda a, b: a @ b).inspect(a, b)
    assert "et.tiles" not in comp.stage("linalg") and "vector.fma" not in comp.stage("tile")


def test_tile_stage_tiles_and_vectorizes_the_matmul() -> None:
    a, b = rng.standard_normal((512, 40), np.float32), rng.standard_normal((40, 384), np.float32)
    comp = et.kernel(lambda a, b: a @ b, target=wide("cpu")).inspect(a, b)
    stages = comp.stages
    assert stages.index("tile-script") < stages.index("tile") < stages.index("bufferize")
    assert "linalg.matmul {et.tiles = [" in comp.stage("linalg")
    script = comp.stage("tile-script")
    for op in ("transform.structured.tile_using_forall", "transform.structured.tile_using_for",
               "transform.structured.vectorize", "lower_contraction", "hoist_loop_invariant_subsets"):
        assert op in script
    tiled = comp.stage("tile")
    assert "linalg.matmul" not in tiled and "transform." not in tiled
    assert "scf.forall" in tiled and "scf.for" in tiled and "vector.fma" in tiled
    # the accumulator lives in registers across the k loop: a loop carrying a vector
    assert "-> (vector<8x32xf32>)" in tiled


def test_openmp_parallelizes_the_outer_tile_loop() -> None:
    a, b = rng.standard_normal((512, 64), np.float32), rng.standard_normal((64, 512), np.float32)
    comp = et.kernel(lambda a, b: a @ b, target="cpu-openmp").inspect(a, b)
    assert "scf.forall" in comp.stage("tile")
    assert "scf.parallel" in comp.stage("parallel-loops")
    openmp = comp.stage("openmp")
    assert "omp.parallel" in openmp and "omp.wsloop" in openmp and "vector.fma" in openmp
    cpu = et.kernel(lambda a, b: a @ b, target="cpu").inspect(a, b)
    assert "scf.forall" not in cpu.stage("loops") and "scf.parallel" not in cpu.stage("loops")


@pytest.mark.parametrize("target", CPU_FIRST)
def test_misaligned_matmul_is_padded_to_whole_register_tiles(target) -> None:
    """300 = 37 x 8 + 4 rows: computed on copies of A and C with 4 zero rows more (304 x 300 @ 300 x
    300 into 304 x 300), so every register tile has its 8 rows; the result is C's first 300 rows."""
    a, b = rng.standard_normal((300, 300), np.float32), rng.standard_normal((300, 300), np.float32)
    comp = et.kernel(lambda a, b: a @ b, target=wide(target)).inspect(a, b)
    assert re.search(r"\"linalg.matmul loops \[304, 300, 300\] \(padded\)", comp.stage("tile-script"))  # the note
    assert "vector.fma" in comp.stage("tile") and "tensor<304x300xf32>" in comp.stage("tile")
    assert _buffers(comp).count("304x300") == 2  # A's and C's copies
    np.testing.assert_allclose(et.kernel(lambda a, b: a @ b, target=wide(target))(a, b), a @ b, rtol=1e-4, atol=1e-3)


@pytest.mark.parametrize("dtype", [np.float32, pytest.param(np.int32, marks=pytest.mark.slow)])
def test_padded_matmul_with_b_packed_once(dtype) -> None:
    """1004 rows (125 x 8 + 4), B of 4 MiB (larger than L2): no padded copies; A and B are packed in
    panels, A's pack padding its last register tile of rows (masked reads of 4 rows into 8)."""
    a, b = _args([(1004, 1024), (1024, 1024)], dtype)
    comp = et.kernel(lambda a, b: a @ b, target=wide("cpu-openmp")).inspect(a, b)
    script = comp.stage("tile-script")
    assert "(padded)" not in script and "loops [1004, 1024, 1024]" in script
    if 1024 * 1024 * 4 > Target.host().l2:  # (tiling._b_once)
        assert re.search(r"transform.structured.pack %\w+ packed_sizes = \[8, \d+, \d+\]", script)
        assert re.search(r"memref<\d+x126x\d+x8x", comp.stage("bufferize"))  # A: 1004 rows in 126 panels of 8
    _check(lambda a, b: a @ b, [(1004, 1024), (1024, 1024)], dtype, "cpu-openmp")


@pytest.mark.parametrize("dtype", [np.float32, np.int64])
def test_padding_keeps_inf_and_nan_where_numpy_has_them(dtype) -> None:
    """The padded rows / columns of A and B are zeros: an inf of A times a padded zero of B gives NaN
    only in C's padded part, which is not copied back."""
    a, b = _args([(100, 70), (70, 90)], dtype)
    if dtype == np.float32:
        a[3, 5], a[99, 69], b[69, 89], b[0, 0] = np.inf, -np.inf, np.nan, np.inf
    got = et.kernel(lambda a, b: a @ b)(a, b)
    with np.errstate(invalid="ignore"):
        want = a @ b
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-3)


def test_padding_is_priced_as_the_work_it_adds() -> None:
    from egglog_tensor.cost import tile_slowdown
    aligned = tile_slowdown((1008, 1024, 1024), (504, 512, 256), 4, Target.host())
    assert tile_slowdown((1004, 1024, 1024), (512, 512, 256), 4, Target.host()) == pytest.approx(aligned * 1008 / 1004)
    assert policy.padded_loops("linalg.matmul", (1004, 1000, 1000), (8, 32, 1), Target()) == (1008, 1000, 1000)
    assert policy.padded_loops("linalg.matmul", (1000, 1001, 999), (8, 32, 1), Target()) is None  # rows aligned
    assert policy.padded_loops("linalg.matmul", (17, 3, 33), (8, 32, 1), Target()) is None  # too small to pay
    assert policy.padded_tiles((1004, 1000, 1000), (1008, 1000, 1000), (512, 512, 256), (8, 32, 1)) == (504, 512, 256)


@pytest.mark.parametrize("target", CPU_FIRST)
@pytest.mark.parametrize(("n", "width"), [(200, 8), (100, 4), (140, 12)])
def test_last_column_tile_keeps_its_accumulator_in_registers(target, n, width) -> None:
    """200 = 6 x 32 + 8 columns in one column block: the last register tile of columns is vectorized
    8 wide (not masked to 32), so its accumulator is a loop-carried vector like the full tiles'."""
    a, b = rng.standard_normal((96, 64), np.float32), rng.standard_normal((64, n), np.float32)
    comp = et.kernel(lambda a, b: a @ b, target=wide(target)).inspect(a, b)
    assert f"-> (vector<8x{width}xf32>)" in comp.stage("tile") and "-> (vector<8x32xf32>)" in comp.stage("tile")
    assert "et.rem" in comp.stage("tile-script")
    np.testing.assert_allclose(et.kernel(lambda a, b: a @ b, target=wide(target))(a, b), a @ b, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("target", CPU_FIRST)
@pytest.mark.parametrize(("n", "tn", "width"), [(80, 40, 8), (1000, 500, None), (96, 48, 16)])
def test_last_column_tile_width_is_that_of_each_column_block(target, n, tn, width) -> None:
    """With several full column blocks, the last register tile of columns of each is TN % nr wide, not
    n % nr: 80 = 2 x 40 columns, 40 = 32 + 8 (n % nr = 16); 500 = 15 x 32 + 20 keeps its mask (n % nr
    = 8 failed to vectorize a 20-wide tile); 48 = 32 + 16 (n % nr = 0: the column loop was not even
    peeled, every tile masked)."""
    target = _forced_tiles((16, tn, 64), target, pad_min_work=NEVER)
    a, b = rng.standard_normal((48, 128), np.float32), rng.standard_normal((128, n), np.float32)
    kernel = et.kernel(lambda a, b: a @ b, target=target)
    np.testing.assert_allclose(kernel(a, b), a @ b, rtol=1e-4, atol=1e-4)
    comp = kernel.inspect(a, b)
    assert ("et.rem" in comp.stage("tile-script")) == (width is not None)
    if width is not None:
        assert f"-> (vector<8x{width}xf32>)" in comp.stage("tile")


def test_last_column_tile_wider_than_a_vector_stays_masked() -> None:
    """116 = 3 x 32 + 20: a 20-wide tile would be split and spilled by LLVM; it keeps its mask."""
    a, b = rng.standard_normal((96, 64), np.float32), rng.standard_normal((64, 116), np.float32)
    comp = et.kernel(lambda a, b: a @ b, target=wide("cpu")).inspect(a, b)
    assert "et.rem" not in comp.stage("tile-script") and "vector<8x20xf32>" not in comp.stage("tile")
    np.testing.assert_allclose(et.kernel(lambda a, b: a @ b, target=wide("cpu"))(a, b), a @ b, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("target", CPU_FIRST)
@pytest.mark.parametrize(("shapes", "tile"), [(((2, 16, 256), (2, 256, 16)), "4x16"), (((2, 9, 300), (2, 300, 20)), "3x4")])
def test_last_row_tile_keeps_its_accumulator_in_registers(target, shapes, tile) -> None:
    """AVX2's 6-row register tiles in 16-row blocks: the last tile of 4 rows is vectorized 4 high (not
    masked to 6); in 9 x 20 blocks, the last tiles are 3 x 16, 6 x 4 and 3 x 4. So its accumulator is a loop-carried vector restarted every k step like the full
    tiles' (masked, it summed a chunk of k in one chain: float32 k = 2^16 was off by 7e-4). Lowered
    for the named AVX2 CPU (any host); the host's own code is checked against NumPy."""
    a, b = (rng.standard_normal(s).astype(np.float32) for s in shapes)
    avx2 = resolve_target(replace(NAMED["avx2"], name=target, threads=2 if target == "cpu-openmp" else 1))
    tiled = et.kernel(lambda a, b: a @ b, target=avx2).lower(a, b).as_text("tile")
    assert f"-> (vector<{tile}xf32>)" in tiled and "-> (vector<6x" in tiled
    assert "vector.create_mask" not in tiled and "vector.constant_mask" not in tiled
    np.testing.assert_allclose(et.kernel(lambda a, b: a @ b, target=target)(a, b), a @ b, rtol=1e-4, atol=1e-4)


def test_remainder_tiles_are_masked_not_scalar() -> None:
    """Below `Tuning.pad_min_work` a misaligned matmul keeps its remainder tiles, vectorized with masks."""
    a, b = rng.standard_normal((67, 20), np.float32), rng.standard_normal((20, 130), np.float32)
    tiled = et.kernel(lambda a, b: a @ b).inspect(a, b).stage("tile")
    assert ("vector.create_mask" in tiled or "vector.constant_mask" in tiled) and "linalg.matmul" not in tiled


CACHES = [Target(l1=48 * 1024, l2=2 * 1024**2, simd=64), Target(l1=32 * 1024, l2=256 * 1024, simd=32),
          Target()]


@pytest.mark.parametrize("caches", CACHES, ids=lambda c: f"L1={c.l1 // 1024}K,L2={c.l2 // 1024}K,simd={c.simd}")
@pytest.mark.parametrize("itemsize", [4, 8])
@pytest.mark.parametrize("size", [256, 1000, 1024, 2048, 4099])
def test_tile_chooser_fits_the_caches(caches, itemsize, size) -> None:
    t = policy.choose_tiles("linalg.matmul", (size, size, size), itemsize, caches)
    tm, tn, tk = t.tiles
    mr, nr, kr = t.vec
    lanes = caches.simd // itemsize
    assert kr == 1 and nr % lanes == 0 and nr == 2 * lanes
    assert mr * nr // lanes + nr // lanes + 1 <= (32 if caches.simd >= 64 else 16)  # registers
    assert tm % mr == 0 and tn % nr == 0
    l1, l2 = policy.footprint("linalg.matmul", t, itemsize)
    assert l1 <= caches.l1 and l2 <= caches.l2


def test_tile_chooser_small_and_divisible_extents() -> None:
    caches = CACHES[0]
    assert policy.choose_tiles("linalg.matmul", (3, 1, 17), 4, caches).vec == (3, 1, 1)
    assert policy.choose_tiles("linalg.matmul", (3, 1, 17), 4, caches).tiles == (3, 1, 17)
    tm, tn, _ = policy.choose_tiles("linalg.matmul", (1024, 1024, 1024), 4, caches).tiles
    assert 1024 % tm == 0 and 1024 % tn == 0
    assert policy.choose_tiles("linalg.batch_matmul", (4, 64, 64, 64), 4, caches).tiles[0] == 1


def test_target_caches_read_sysfs_with_fallbacks(tmp_path) -> None:
    (tmp_path / "index0").mkdir()
    for name, text in {"type": "Data", "level": "1", "size": "48K", "coherency_line_size": "64", "ways_of_associativity": "12"}.items():
        (tmp_path / "index0" / name).write_text(text + "\n")
    (tmp_path / "index2").mkdir()
    for name, text in {"type": "Unified", "level": "2", "size": "2048K", "coherency_line_size": "64", "ways_of_associativity": "16"}.items():
        (tmp_path / "index2" / name).write_text(text + "\n")
    (tmp_path / "index3").mkdir()
    for name, text in {"type": "Unified", "level": "3", "size": "98304K", "coherency_line_size": "64", "ways_of_associativity": "12"}.items():
        (tmp_path / "index3" / name).write_text(text + "\n")
    found = read_caches(Target(), str(tmp_path))
    assert (found.l1, found.l2, found.l2_ways, found.l3) == (48 * 1024, 2 * 1024**2, 16, 96 * 1024**2)
    missing = read_caches(Target(), str(tmp_path / "nope"))
    fallback = Target()
    assert (missing.l1, missing.l2, missing.l2_ways, missing.l3) == (fallback.l1, fallback.l2, fallback.l2_ways, fallback.l3)


def _bias_relu(a, b, c):
    return np.maximum(a @ b + c, 0.0)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("mkn", [(264, 193, 140), (67, 45, 130), (300, 64, 260), (1100, 48, 600), (1, 5, 1), (0, 4, 3)],
                         ids=lambda s: "x".join(map(str, s)))
def test_matmul_epilogue_runs_per_output_block(mkn, target: str) -> None:
    """Bias + activation run on each output block of the tiled matmul, inside its loop: the tile
    stage tiles the epilogue and fuses the matmul and its zero fill into it (fuse_into_containing_op)."""
    m, k, n = mkn
    shapes = [(m, k), (k, n), (n,)]
    _check(_bias_relu, shapes, np.float32, target)
    comp = et.kernel(_bias_relu, target=target).inspect(*_args(shapes, np.float32))
    found = re.search(r"et\.tiles = \[(\d+), (\d+), \d+\]", comp.stage("linalg"))
    if found and math.ceil(m / int(found[1])) * math.ceil(n / int(found[2])) > 1:  # (one block: the loop folds away)
        assert "fuse_into_containing_op" in comp.stage("tile-script")
        tiled = comp.stage("tile")
        loop = tiled.index("scf.forall (")
        assert loop < tiled.index("linalg.fill") and loop < tiled.index("linalg.generic"), tiled


@pytest.mark.parametrize("fn", [
    lambda a, b, c: (np.maximum(a @ b + c, 0.0), a @ b),  # the matmul is also an output: no epilogue
    lambda a, b, c: (a @ b).T + c,  # read transposed: not element for element
    lambda a, b, c: np.sum(a @ b + c, axis=1),  # a reduction, not an elementwise epilogue
], ids=["shared", "transposed", "reduced"])
@pytest.mark.parametrize("target", CPU_FIRST)
def test_matmul_without_a_fusable_epilogue(fn, target: str) -> None:
    a, b, c = _args([(96, 80), (80, 96), (96,)], np.float32)
    _assert_outputs_close(et.kernel(fn, target=target)(a, b, c), fn(a, b, c), rtol=1e-4, atol=1e-3)


# Packed blocks (lowering/tiling.py `packing`, `_matmul_family`): forced cache tiles (TM, TN, TK) and
# a small cache (L1 4 KiB, L2 16 KiB with 4 ways: rows 1 KiB apart crowd their sets) so each case
# takes its path on any host. (m, k, n), tiles, and the buffers the tile stage packs into ("P": all
# of B packed once up front, panel-major; the C block then is (TM, TN / nr, nr)).
# (the host's CPU and features: LLVM generates code for this machine, only the caches and SIMD width differ)
SMALL = replace(Target.host(), l1=4096, l2=16384, line=64, simd=64, l2_ways=4)
PACKED = [
    # A and B packed once, in panels (k1 x m1 x TK x mr, k1 x n1 x TK x nr), C accumulated in (TM / mr,
    # TN / nr, mr, nr) blocks (`packing` still names the B-only scheme's copies)
    ((48, 256, 256), (16, 64, 64), {"A": "16x64", "C": "16x2x32", "P": None}, ("4x6x64x8", "4x8x64x32", "2x2x8x32")),
    # rows of a block not a multiple of mr: a peeled remainder register tile in each packed block
    ((60, 256, 256), (20, 64, 64), {"A": "20x64", "C": "20x2x32", "P": None}, None),
    # n not a multiple of nr: B read in place (peeled, masked); C rows 1088 bytes apart do not crowd
    ((32, 256, 272), (16, 68, 64), {"A": "16x64"}, None),
    # a partial last row block (m % TM) of a partial register tile (m % mr): in panels, A's last panel
    # padded (7 of 8 rows); the last block's buffer is (1 x 2 x 8 x 32), allocated with its size
    ((50, 256, 256), (16, 64, 64), {"P": None}, ("4x7x64x8", "4x8x64x32")),
    # ... with one B panel per block (a packed micro-panel failed to bufferize here)
    ((50, 256, 256), (16, 32, 64), {"P": None}, None),
    # a partial last column block (n % TN, n % nr == 0): in panels (blocks of B-only packing would
    # read A and B in place: packed, they failed to bufferize)
    ((48, 256, 224), (16, 64, 64), {}, ("4x6x64x8", "4x7x64x32")),
    # k not a multiple of TK: panels in k steps of 50 (`panel_k`)
    ((48, 200, 256), (16, 64, 64), {"P": None}, ("4x6x50x8", "4x8x50x32", "2x2x8x32")),
    # one k step; rows 768 bytes apart: in panels all the same
    ((48, 64, 256), (16, 64, 64), {"P": None}, ("1x6x64x8", "1x8x64x32", "2x2x8x32")),
    ((48, 192, 192), (16, 64, 64), {"P": None}, ("3x6x64x8", "3x6x64x32", "2x2x8x32")),
    # one row block: B's micro-panels copied in the n loop, each once
    ((16, 256, 256), (16, 64, 64), {"A": "16x64", "C": "16x64", "B": "64x32"}, None),
    # B fits L2 (16 KiB): micro-panels copied from L2, no pass over B up front
    ((48, 64, 64), (16, 64, 64), {"B": "64x32"}, None),
]


def on(machine: Target, name: str) -> Target:
    """`machine` under the pipeline `name` (cpu-openmp on two threads)."""
    return resolve_target(replace(machine, name=name, threads=2))


NEVER = 2**62  # a Tuning threshold no matmul reaches
FORCED = (16, 64, 64)  # cache tiles the tests below force on 2-D matmuls


def _forced_tiles(tiles: tuple[int, int, int], name: str, machine: Target = SMALL, **settings: int) -> Target:
    """`machine` under pipeline `name` (SMALL: the register tile of a 64-byte SIMD machine, 8 x 32 for
    4-byte elements), its matmuls given cache tiles `tiles` and the tile policy's other `settings`
    (`et.Tuning`; pad_min_work=NEVER: misaligned shapes keep their partial blocks and remainder tiles)."""
    return on(replace(machine, tuning=Tuning(matmul_tiles=tiles, **settings)), name)


def _allocs(tiled: str) -> list[str]:
    """The shapes of the buffers the tile stage allocates (bufferize_to_allocation), sorted."""
    return sorted(part.split(">")[0].rsplit("x", 1)[0] for part in tiled.split("memref.alloc() : memref<")[1:])


def _buffers(comp: et.Compilation) -> list[str]:
    """The shapes of the buffers allocated after bufferization, the ones each call lends too
    (lowering/workspace.py: from 128 KiB), sorted."""
    allocs = re.findall(r"memref\.alloc\(\) \{alignment = \d+ : i64\} : memref<([\dx]+)x[a-z]\w*>", comp.stage("bufferize"))
    return sorted(allocs + ["x".join(map(str, shape)) for shape, _ in comp.workspace])


@pytest.mark.parametrize("dtype", [np.float32, *(pytest.param(d, marks=pytest.mark.slow) for d in (np.float64, np.int32))])  # (a sweep)
@pytest.mark.parametrize(("target", "case"), on_both(list(range(len(PACKED))), [0, 3]),
                         ids=lambda v: v if isinstance(v, str) else "{}x{}x{}-{}".format(*PACKED[v][0], PACKED[v][1][1]))
def test_packed_blocks_match_numpy(target, dtype, case) -> None:
    mkn, tiles, packed, panels = PACKED[case]
    m, k, n = mkn
    target = _forced_tiles(tiles, target, pad_min_work=NEVER)
    _check(lambda a, b: a @ b, [(m, k), (k, n)], dtype, target)
    if np.dtype(dtype).itemsize != 4:  # B panels TK x 16 (nr is two vectors), other strides: only the numbers are checked
        return
    assert policy.packing((m, n, k), tiles, (8, 32, 1), 4, SMALL) == set(packed)
    comp = et.kernel(lambda a, b: a @ b, target=target).inspect(*_args([(m, k), (k, n)], dtype))
    tiled = comp.stage("tile")
    if panels:  # the packs are transposes into tensors bufferization allocates, C's block too: no copy
        assert _allocs(tiled) == [] and "linalg.copy" not in comp.stage("bufferize")
        assert _buffers(comp) == sorted(panels)
        return
    blocks = sorted(v for v in packed.values() if v)
    assert _allocs(tiled) == blocks
    # the C block is also copied back; with B packed once, the reshaped C is "copied" onto itself
    assert tiled.count("linalg.copy") == len(blocks) + ("C" in packed) + ("P" in packed)
    assert ("linalg.transpose" in comp.stage("tile-script")) == ("P" in packed)
    if "P" in packed:  # in place: the only copies left are those of the blocks
        assert comp.stage("bufferize").count("linalg.copy") == len(blocks) + ("C" in packed)
        assert "tensor<" + f"{n // 32}x{k}x32" in tiled  # B, panel-major


def test_packing_where_rows_crowd_the_caches() -> None:
    """On the reference machine (48 KiB 12-way L1, 2 MiB 16-way L2), 256^3 tiles: the A and C
    blocks are packed at 2048 (256 rows 8 KiB apart fill all 16 ways of their L2 sets), not at
    1024 (half the ways); nothing at 1000 (no packed B either: 1000 is not a multiple of nr). B is
    packed once up front when it does not fit L2 and several row blocks read it."""
    caches = Target(l1=48 * 1024, l2=2 * 1024**2, simd=64, l2_ways=16)
    tiles, vec = (256, 256, 256), (8, 32, 1)
    assert policy.packing((1024,) * 3, tiles, vec, 4, target=caches) == {"P"}
    assert policy.packing((2048,) * 3, tiles, vec, 4, target=caches) == {"A", "P", "C"}
    assert policy.packing((2048,) * 3, tiles, vec, 4, epilogue=True, target=caches, prepack=False) == {"A", "B"}  # bias, relu
    assert policy.packing((2048,) * 3, tiles, vec, 4, epilogue=True, target=caches) == {"A", "P"}  # a matvec's block
    assert policy.packing((2048,) * 3, tiles, vec, 4, target=caches, prepack=False) == {"A", "B", "C"}  # a batch_matmul block
    assert policy.packing((1000,) * 3, (200, 200, 200), vec, 4, target=caches) == set()
    assert policy.packing((2048, 2048, 256), tiles, vec, 4, target=caches) == {"B"}  # B (2 MiB) fits L2
    assert policy.packing((512,) * 3, tiles, vec, 4, target=caches) == {"B"}  # (1 MiB)
    assert policy.packing((256, 2048, 2048), tiles, vec, 4, target=caches) == {"A", "B", "C"}  # one row block


@pytest.mark.parametrize("target", CPU_FIRST)
def test_packed_blocks_order(tmp_path, target) -> None:
    """The C block is copied in before the k loop and out after it, the A block at each k step
    before the n loop, each B panel in the n loop before the m register loop (one row block: B's
    panels are copied once each)."""
    from test_golden import filecheck

    target = _forced_tiles((16, 128, 64), target, pad_min_work=NEVER)
    a, b = _args([(16, 256), (256, 256)], np.float32)
    tiled = et.kernel(lambda a, b: a @ b, target=target).inspect(a, b).stage("tile")
    filecheck(tiled, """
CHECK: scf.forall
CHECK: memref.alloc() : memref<16x128xf32>
CHECK: linalg.copy {{.*}} outs(%{{.*}} : memref<16x128xf32>)
CHECK: scf.for {{.*}} -> (tensor<16x128xf32>)
CHECK: memref.alloc() : memref<16x64xf32>
CHECK: linalg.copy {{.*}} outs(%{{.*}} : memref<16x64xf32>)
CHECK: scf.for {{.*}} -> (tensor<16x128xf32>)
CHECK: memref.alloc() : memref<64x32xf32>
CHECK: linalg.copy {{.*}} outs(%{{.*}} : memref<64x32xf32>)
CHECK: scf.for {{.*}} -> (tensor<16x32xf32>)
CHECK: scf.for {{.*}} -> (vector<8x32xf32>)
CHECK: vector.fma
CHECK: linalg.copy ins(%{{.*}} : tensor<16x128xf32>) outs(%{{.*}} : tensor<16x128xf32>)
CHECK: scf.forall.in_parallel
""", tmp_path)


@pytest.mark.parametrize("target", CPU_FIRST)
def test_panel_gemm_order(tmp_path, target) -> None:
    """Several row blocks: A packed once into (k / TK, m / mr, TK, mr) by row blocks, 16 k steps of
    mr rows transposed as vectors, a panel of rows across all k steps, and B into (k / TK, n / nr, TK,
    nr) by column blocks, nr-wide rows copied as vectors, a row across all column panels; then the
    output blocks: each a zero-filled (TN / nr, TM / mr, mr, nr) tensor (a column panel's register
    tiles one after the other), the k loop, a column panel, a row panel (its accumulators start from
    zero at each k step, C read and added once after it: lowering/accumulate.py), 8 k steps of FMAs
    reading both panels in place; then the block unpacked into C register tile by register tile. No
    copy and no fill of C, no buffer of C's size."""
    from test_golden import filecheck

    target = _forced_tiles((16, 128, 64), target, pad_min_work=NEVER)
    a, b = _args([(48, 256), (256, 256)], np.float32)
    comp = et.kernel(lambda a, b: a @ b, target=target).inspect(a, b)
    filecheck(comp.stage("tile"), """
CHECK: scf.forall (%{{.*}}) in (3) shared_outs(%{{.*}}) -> (tensor<4x6x64x8xf32>)
CHECK: tensor.expand_shape {{.*}} into tensor<2x8x4x64xf32>
CHECK: scf.for %{{.*}} = %c0 to %c2 step %c1 {{.*}} -> (tensor<4x2x64x8xf32>)
CHECK-NEXT: scf.for %{{.*}} = %c0 to %c4 step %c1 {{.*}} -> (tensor<4x2x64x8xf32>)
CHECK-NEXT: scf.for %{{.*}} = %c0 to %c64 step %c16
CHECK-NEXT: vector.transfer_read {{.*}} vector<8x1x16xf32>
CHECK: vector.transfer_write {{.*}} : vector<16x8xf32>, tensor<4x2x64x8xf32>
CHECK: scf.forall (%{{.*}}) in (2) shared_outs(%{{.*}}) -> (tensor<4x8x64x32xf32>)
CHECK: scf.for %{{.*}} = %c0 to %c4 step %c1 {{.*}} -> (tensor<4x4x64x32xf32>)
CHECK-NEXT: scf.for %{{.*}} = %c0 to %c64 step %c1 {{.*}} -> (tensor<4x4x64x32xf32>)
CHECK-NEXT: scf.for %{{.*}} = %c0 to %c4 step %c1 {{.*}} -> (tensor<4x4x64x32xf32>)
CHECK-NEXT: vector.transfer_read {{.*}} vector<32xf32>
CHECK-NEXT: vector.transfer_write {{.*}} tensor<4x4x64x32xf32>
CHECK: scf.forall (%{{.*}}, %{{.*}}) in (3, 2) shared_outs(%{{.*}}) -> (tensor<48x256xf32>)
CHECK: linalg.fill {{.*}} -> tensor<4x2x8x32xf32>
CHECK: scf.for %{{.*}} = %c0 to %c4 step %c1 {{.*}} -> (tensor<4x2x8x32xf32>)
CHECK: scf.for %{{.*}} = %c0 to %c4 step %c1 {{.*}} -> (tensor<4x2x8x32xf32>)
CHECK: scf.for %{{.*}} = %c0 to %c2 step %c1 {{.*}} -> (tensor<1x2x8x32xf32>)
CHECK-NEXT: %[[ZERO:.*]] = arith.constant dense<0.000000e+00> : vector<8x32xf32>
CHECK-NEXT: %[[SUM:.*]] = scf.for %{{.*}} = %c0 to %c64 step %c8 iter_args(%{{.*}} = %[[ZERO]]) -> (vector<8x32xf32>)
CHECK: vector.transfer_read {{.*}} : tensor<4x6x64x8xf32>, vector<8x8xf32>
CHECK: vector.transfer_read {{.*}} : tensor<4x8x64x32xf32>, vector<8x32xf32>
CHECK-COUNT-64: vector.fma
CHECK: %[[C:.*]] = vector.transfer_read {{.*}} : tensor<1x2x8x32xf32>, vector<8x32xf32>
CHECK-NEXT: %[[NEW:.*]] = arith.addf %[[C]], %[[SUM]] : vector<8x32xf32>
CHECK-NEXT: vector.transfer_write %[[NEW]], {{.*}} : vector<8x32xf32>, tensor<1x2x8x32xf32>
CHECK: scf.for %{{.*}} = %c0 to %c16 step %c8 {{.*}} -> (tensor<16x128xf32>)
CHECK: scf.for %{{.*}} = %c0 to %c128 step %c32 {{.*}} -> (tensor<16x128xf32>)
CHECK: vector.transfer_read {{.*}} : tensor<4x2x8x32xf32>, vector<8x32xf32>
CHECK-NEXT: vector.transfer_write {{.*}} : vector<8x32xf32>, tensor<16x128xf32>
CHECK: scf.forall.in_parallel
CHECK-NOT: linalg.fill
CHECK-NOT: linalg.copy
CHECK: return
""", tmp_path)


@pytest.mark.parametrize(("target", "mkn"), on_both([(48, 256, 256), (60, 200, 192)], [(60, 200, 192)]),
                         ids=lambda v: "x".join(map(str, v)) if isinstance(v, tuple) else v)
def test_b_packed_once_with_an_epilogue_and_a_second_matmul(target, mkn) -> None:
    """B packed once where it pays and micro-panels copied under an epilogue, in one kernel: the
    bias + relu matmul keeps its per-block path, the plain one (same tiles) packs B once."""
    m, k, n = mkn
    target = _forced_tiles((16, 64, 64), target, pad_min_work=NEVER)
    fn = lambda a, b, c: (np.maximum(a @ b + c, 0.0), (a * 2.0) @ b)  # noqa: E731
    args = _args([(m, k), (k, n), (n,)], np.float32)
    got, want = et.kernel(fn, target=target)(*args), fn(*args)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-4 * k)
    assert "linalg.transpose" in et.kernel(fn, target=target).inspect(*args).stage("tile-script")


@pytest.mark.parametrize("target", CPU_FIRST)
def test_b_packed_once_for_a_temporary_product_too(target) -> None:
    """A temporary product ((a @ b) @ d) packs B once like a product written to the output (both
    buffers are lent by the caller when large: tests/test_workspace.py); in one kernel with two such
    matmuls with the same tiles, each packs its own B."""
    target = _forced_tiles(FORCED, target)
    a, b, c, d = _args([(48, 256), (256, 256), (256, 256), (256, 8)], np.float32)
    chain = lambda a, b, d: (a @ b) @ d  # noqa: E731
    np.testing.assert_allclose(et.kernel(chain, target=target)(a, b, d), chain(a, b, d), rtol=1e-4, atol=1e-2)
    assert "linalg.transpose" in et.kernel(chain, target=target).inspect(a, b, d).stage("tile-script")
    both = lambda a, b, c, d: (a @ b, (a @ c) @ d)  # noqa: E731
    _assert_outputs_close(et.kernel(both, target=target)(a, b, c, d), both(a, b, c, d), rtol=1e-4, atol=1e-2)
    comp = et.kernel(both, target=target).inspect(a, b, c, d)
    assert comp.stage("tile-script").count("transform.structured.pack ") == 2  # each matched alone, by its et.id
    assert "64x32" not in _allocs(comp.stage("tile"))  # no per-panel copy of B left


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize(("mkn", "tiles", "allocs", "buffers"), [
    # A and B packed once in panels; each (2 x 2 register tiles) block accumulates, then is unpacked
    # into a block-sized buffer that the epilogue reads; no copy
    ((48, 256, 256), (16, 64, 64), [], ["16x64", "2x2x8x32", "4x6x64x8", "4x8x64x32"]),
    # a TM of 20 rows (not whole register tiles): the A block and B micro-panels are packed inside the
    # fused output block, which is a block-sized buffer already (no C copy)
    ((60, 256, 256), (20, 64, 64), ["20x64", "64x32"], ["20x64"]),
], ids=["panels", "blocks"])
def test_packed_operands_under_an_epilogue(target, mkn, tiles, allocs, buffers) -> None:
    """mm + bias + relu: the matmul computed block by block in the epilogue's loop, its operands packed."""
    m, k, n = mkn
    target = _forced_tiles(tiles, target, pad_min_work=NEVER)
    shapes = [(m, k), (k, n), (n,)]
    _check(_bias_relu, shapes, np.float32, target)
    comp = et.kernel(_bias_relu, target=target).inspect(*_args(shapes, np.float32))
    assert _allocs(comp.stage("tile")) == allocs
    assert _buffers(comp) == buffers
    assert comp.stage("bufferize").count("linalg.copy") == len(allocs)


def _chain_mv(a, b, x):
    return (a @ b) @ x


@pytest.mark.parametrize("dtype", [np.int32, *(pytest.param(d, marks=pytest.mark.slow) for d in (np.float32, np.float64))])  # (int32: the chain that aborted)
@pytest.mark.parametrize(("mkn", "tiles"), [
    ((96, 128, 160), (16, 32, 96)),  # one register tile of columns per block (int32 chain: aborted in MLIR)
    ((64, 96, 160), (16, 32, 96)),  # ... with whole k steps (failed to link: memrefCopy)
    ((48, 128, 64), (32, 128, 32)),  # a partial last row block (failed to vectorize; chain: memrefCopy)
    ((48, 200, 256), (16, 64, 64)),  # a partial last k step of TK: panels in k steps of 50
], ids=["tn-nr-partial-k", "tn-nr", "partial-row-block", "panel-k"])
def test_packed_b_tilings_at_the_edges_match_numpy(dtype, mkn, tiles) -> None:
    """Tilings at the edges of the panel path (`policy.packs_panels`), with B packed once: GEMM, epilogue and
    matvec epilogue compile and match NumPy (exactly, on small integers)."""
    m, k, n = mkn
    target = _forced_tiles(tiles, "cpu")
    rng = np.random.default_rng(0)
    a, b, c = (rng.integers(-3, 4, shape).astype(dtype) for shape in ((m, k), (k, n), (n,)))
    for fn in (lambda a, b, c: a @ b, _bias_relu, _chain_mv):
        np.testing.assert_array_equal(et.kernel(fn, target=target)(a, b, c), fn(a, b, c).astype(dtype))


@pytest.mark.parametrize("dtype", sweep([np.float32, np.float64, np.int32], [np.float32]))
@pytest.mark.parametrize(("target", "mkn", "step"), [
    ("cpu", (50, 100, 70), 50),  # rows and columns not whole register tiles; k in whole steps of 50
    pytest.param("cpu", (61, 127, 250), 64, marks=pytest.mark.slow),  # ... and k padded to two steps of 64 (default: threaded)
    pytest.param("cpu", (96, 255, 90), 64, marks=pytest.mark.slow),  # whole row blocks, a partial column block; k padded to four steps of 64
    pytest.param("cpu-openmp", (50, 100, 70), 50, marks=pytest.mark.slow),
    ("cpu-openmp", (61, 127, 250), 64),
    pytest.param("cpu-openmp", (96, 255, 90), 64, marks=pytest.mark.slow),
], ids=["rows-cols", "rows-cols-k", "cols-k", "rows-cols-openmp", "rows-cols-k-openmp", "cols-k-openmp"])
def test_panels_at_any_size_match_numpy(target, dtype, mkn, step) -> None:
    """A and B are packed in panels whatever m, n and k: the packs pad A's last register tile of rows,
    B's last of columns and both's last k step with zeros (`panel_k`; masked vector reads), and the
    blocks at the edges are partial (C's unpack masked). GEMM and bias + relu match NumPy exactly (small
    integers); a matvec epilogue keeps its blocks whole (no panels here) and matches too. An inf in A's
    last column and a NaN in B's last row give NaN exactly where NumPy has it: the padding adds 0 * 0."""
    m, k, n = mkn
    target = _forced_tiles(FORCED, target)
    rng = np.random.default_rng(0)
    a, b, c = (rng.integers(-3, 4, shape).astype(dtype) for shape in ((m, k), (k, n), (n,)))
    for fn in (lambda a, b, c: a @ b, _bias_relu, _chain_mv):
        np.testing.assert_array_equal(et.kernel(fn, target=target)(a, b, c), fn(a, b, c).astype(dtype))
    nr = 64 // np.dtype(dtype).itemsize * 2
    script = et.kernel(lambda a, b: a @ b, target=target).inspect(a, b).stage("tile-script")
    assert f"packed_sizes = [8, {nr}, {step}]" in script and "(padded)" not in script
    assert re.search(rf"vectorize %\w+ vector_sizes \[1, 1, {step}, 8\]", script)  # A's pack pads: masked
    if dtype == np.float32:
        a[3, -1], b[-1, 5], b[-1, 6] = np.inf, np.nan, 0.0
        with np.errstate(invalid="ignore"):
            want = a @ b
        got = et.kernel(lambda a, b: a @ b, target=target)(a, b)
        np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
        np.testing.assert_array_equal(got[np.isfinite(want)], want[np.isfinite(want)])


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize(("mkn", "dtype"), [
    ((264, 193, 140), np.float32), ((67, 45, 130), np.float64), ((300, 64, 260), np.int32), ((1, 5, 1), np.float32),
    ((0, 4, 3), np.float32), ((5, 0, 3), np.float32), ((4, 3, 0), np.float32),
], ids=lambda v: "x".join(map(str, v)) if isinstance(v, tuple) else np.dtype(v).name)
def test_matvec_of_a_product_reduces_each_block(mkn, dtype, target: str) -> None:
    """(a @ b) @ x: each output block of the product is reduced into y while it is in cache (the
    matvec is tiled by row blocks and column blocks, the matmul and its zero fill fused into that
    loop), for any shape, partial blocks included."""
    m, k, n = mkn
    a, b, x = _args([(m, k), (k, n), (n,)], dtype)
    got, want = et.kernel(_chain_mv, target=target)(a, b, x), (a.astype(np.float64) @ b) @ x
    assert got.shape == (m,) and got.dtype == dtype
    if np.issubdtype(dtype, np.integer):
        np.testing.assert_array_equal(got, want.astype(dtype))
    else:
        tol = 1e-4 if dtype == np.float32 else 1e-10
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol * max(1.0, float(np.abs(a).sum(1).max(initial=0)
                                                                            * np.abs(b).sum(1).max(initial=0) * np.abs(x).max(initial=0))))


BIG_L2 = replace(Target.host(), l1=4096, l2=2**20, line=64, simd=64, l2_ways=4)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize(("caches", "panels", "fused", "buffers", "loops"), [
    # B (256 KiB) does not fit L2: packed once (4 k steps x 8 panels of 64 x 32), and A too (4 k steps
    # x 6 panels of 64 x 8); the product's blocks are 2 x 2 register tiles, the matvec packed like the
    # product (y as 6 x 8)
    (SMALL, True, r'transform.cast %\w+ : !transform.op<"linalg.generic">', ["2x2x8x32", "4x6x64x8", "4x8x64x32", "6x8"], [("3", "", ""), ("", "8", "2"), ("", "4", "1")]),
    # no panels (a smaller matmul, `Tuning.panel_min_work`) and B fits L2: its micro-panels are copied in each
    # block; A is read in place
    (BIG_L2, False, r'transform.structured.match ops\{\["linalg.matmul"\]\} attributes \{et.id = 0 ', ["16x64", "64x32"], [("3", "", ""), ("", "256", "64"), ("", "256", "64")]),
], ids=["B-packed-once", "B-panels"])
def test_matvec_of_a_product_never_stores_the_product(target, caches, panels, fused, buffers, loops) -> None:
    """Forced tiles (16, 64, 64) on (48 x 256) @ (256 x 256) @ x: three row blocks (the parallel
    loop), four column blocks inside each, each a 16 x 64 buffer filled with zeros, computed over four
    k steps and reduced into y; no buffer of the whole product (B's pack, 256 KiB, is lent by the caller). The
    register tiles read A's panels (`policy.packs_panels`) or its rows in place (a large L2)."""
    target = _forced_tiles(FORCED, target, caches, **({} if panels else {"panel_min_work": NEVER}))
    a, b, x = _args([(48, 256), (256, 256), (256,)], np.float32)
    kernel = et.kernel(_chain_mv, target=target)
    np.testing.assert_allclose(kernel(a, b, x), (a.astype(np.float64) @ b) @ x, rtol=1e-4, atol=1e-3)
    comp = kernel.inspect(a, b, x)
    # (`fused`: how the handle fused first into the matvec's loop is made: the packed generic, or the matmul)
    script = comp.stage("tile-script")
    handle = re.search(r"fuse_into_containing_op (%\w+) into", script)[1]
    assert re.search(rf"{handle} = {fused}", script)
    bufferized = comp.stage("bufferize")
    allocs = re.findall(r"memref\.alloc\(\) (?:\{[^}]*\} )?: memref<([\dx]+)x", bufferized)
    assert sorted(allocs + ["x".join(map(str, shape)) for shape, _ in comp.workspace]) == buffers
    assert all(shape[-2:] != (48, 256) for shape, _ in comp.workspace)
    found = re.findall(r"scf\.forall \(%\w+\) in \((\d+)\)|scf\.for %\w+ = %c0 to %c(\d+) step %c(\d+)", bufferized)
    start = len(found) - 1 - found[::-1].index(("3", "", ""))  # (the packs of A and B, split over threads, come first)
    assert found[start:start + 3] == loops, found  # row blocks, column blocks, k steps


@pytest.mark.parametrize("fn", [
    lambda a, b, x: ((a @ b) @ x, a @ b),  # the product is also an output
    lambda a, b, x: x[:96] @ (a @ b),  # a vecmat reads it by columns
    lambda a, b, x: (a @ b).T @ x[:96],  # read transposed
], ids=["shared", "vecmat", "transposed"])
@pytest.mark.parametrize("target", CPU_FIRST)
def test_product_read_otherwise_is_stored(fn, target: str) -> None:
    a, b, x = _args([(96, 80), (80, 112), (112,)], np.float32)
    _assert_outputs_close(et.kernel(fn, target=target)(a, b, x), fn(a, b, x), rtol=1e-4, atol=1e-3)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("dtype", sweep([np.float32, np.float64, np.int32], [np.float32]))
@pytest.mark.parametrize(("mkn", "panels"), [
    ((40, 256, 256), False),  # a partial last row block of whole register tiles: B is packed
    ((50, 256, 256), False),  # rows not a multiple of mr: A is not packed, B is
    ((48, 200, 256), True),  # a partial last k step of TK: panels in k steps of 50 (`panel_k`)
], ids=["partial-row-block", "rows-not-whole-tiles", "partial-k-step"])
def test_matvec_epilogue_with_packed_operands_matches_numpy(target, dtype, mkn, panels) -> None:
    m, k, n = mkn
    target = _forced_tiles(FORCED, target)
    a, b, x = _args([(m, k), (k, n), (n,)], dtype)
    kernel = et.kernel(_chain_mv, target=target)
    got, want = kernel(a, b, x), (a.astype(np.float64) @ b) @ x
    if np.issubdtype(dtype, np.integer):
        np.testing.assert_array_equal(got, want.astype(dtype))
    else:
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-3)
    script = kernel.inspect(a, b, x).stage("tile-script")
    matvec = re.search(r"(%\w+) = transform.get_consumers_of_result", script)[1]  # the matmul's only user
    assert f"transform.structured.pack {matvec} " in script and bool(re.search(r"packed_sizes = \[8, \d+, \d+\]", script)) == panels
