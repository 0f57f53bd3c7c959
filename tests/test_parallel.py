"""cpu-openmp: each linalg op split into one chunk per thread (lowering/parallel.py), inner loops vectorized.

Numerics against NumPy for 1, 2 and 3 threads (elementwise, broadcasts, strided inputs, row /
column / full reductions of every dtype, including empty, unit and odd sizes), and the structure
of the lowered code: one parallel loop per op whose body is a sequential scf.for nest, and vector
registers (and libmvec calls) in the assembly.
"""

from __future__ import annotations

import re
from dataclasses import replace

import numpy as np
import pytest

import egglog_tensor as et
from egglog_tensor.lowering import payload
from egglog_tensor.lowering.stages import parallel
from egglog_tensor.lowering.pipelines import pipeline_for, resolve_target
from egglog_tensor.target import Target, default_threads
from strategies import covering, sweep, threaded

rng = np.random.default_rng(11)
DTYPES = ["float32", "float64", "int32", "int64", "bool"]
THREADS = [1, 2, 3]
UNEVEN = sweep(THREADS, [1, 3])  # one thread, and an uneven split; two threads in the slow run
REDUCTIONS = {"sum": np.sum, "max": np.max, "min": np.min, "prod": np.prod, "mean": np.mean}
# Large enough to be split (more than parallel.MIN_WORK iterations), odd so chunks are uneven.
BIG = [(301, 257), (3, 40001), (40001, 3)]
EDGE = [(0, 5), (1, 1), (1, 7), (5, 1), (7, 0)]


def kern(fn, threads):
    return et.kernel(fn, target=threaded(threads))


def data(shape, dtype, op=None):
    if dtype == "bool":
        return rng.random(shape) < (0.999 if op in ("prod", "min") else 0.5)
    if dtype.startswith("int"):
        return rng.integers(-1000, 1000, shape).astype(dtype)
    if op == "prod":  # near 1: no overflow to inf or underflow to 0 over 10^5 factors
        return (1 + 1e-3 * rng.standard_normal(shape)).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


def close(got, want, x, op, axis) -> None:
    """Exact for integers and bools; floats: reductions are reassociated (NumPy's order is pairwise)."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape and got.dtype == want.dtype, (got.shape, want.shape, got.dtype, want.dtype)
    if got.dtype.kind != "f" or op in ("max", "min"):
        np.testing.assert_array_equal(got, want)
        return
    eps = np.finfo(got.dtype).eps
    if op == "prod":
        np.testing.assert_allclose(got, want, rtol=2e4 * eps)
        return
    mag = np.sum(np.abs(x.astype(np.float64)), axis=axis)
    if op == "mean":
        mag = mag / max(1, x.size if axis is None else x.shape[axis])
    assert np.all(np.abs(got.astype(np.float64) - want) <= 1e3 * eps * mag + 1e-30), (op, axis)


# --- elementwise ---------------------------------------------------------------------------------
def ew_chain(A, b):
    return np.exp(np.maximum(A + b, 0.0)) * 0.5 + A


@pytest.mark.parametrize("threads", UNEVEN)
@pytest.mark.parametrize("shape", [(257, 301), (100003,), (3, 40001), (5, 4, 3001)])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_elementwise_and_broadcast(threads, shape, dtype) -> None:
    A = rng.standard_normal(shape).astype(dtype)
    b = rng.standard_normal(shape[-1]).astype(dtype)
    got = kern(ew_chain, threads)(A, b)
    scale = np.exp(np.maximum(A + b, 0.0)) * 0.5 + np.abs(A)  # the sum cancels: ULPs of its terms
    assert np.all(np.abs(got - ew_chain(A, b)) <= 8 * np.finfo(dtype).eps * scale)


@pytest.mark.parametrize("threads", UNEVEN)
@pytest.mark.parametrize("dtype", DTYPES)
def test_elementwise_dtypes(threads, dtype) -> None:
    a, b = data((211, 307), dtype), data((211, 307), dtype)
    fn = (lambda a, b: np.logical_xor(a, b)) if dtype == "bool" else (lambda a, b: a * b - b)
    np.testing.assert_array_equal(kern(fn, threads)(a, b), fn(a, b))


@pytest.mark.parametrize("threads", UNEVEN)
def test_strided_inputs(threads) -> None:
    base = rng.standard_normal((700, 900)).astype(np.float32)
    views = [base[::2, ::3], base.T, base[1:-1, 5:], np.asfortranarray(base)]
    for v in views:
        k = kern(lambda a: np.tanh(a) * 2.0 + a, threads)
        np.testing.assert_allclose(k(v), np.tanh(v) * 2.0 + v, rtol=1e-6, atol=1e-6)
        r = kern(lambda a: np.sum(a, axis=1), threads)(v)
        close(r, np.sum(v, axis=1), v, "sum", 1)
        f = kern(lambda a: np.sum(a), threads)(v)
        close(f, np.sum(v), v, "sum", None)


# --- reductions ----------------------------------------------------------------------------------
def reduce_along(op, axis):
    return lambda a: REDUCTIONS[op](a, axis=axis)


def three_ways(op):
    red = REDUCTIONS[op]
    return lambda a: (red(a, axis=0), red(a, axis=1), red(a))


@pytest.mark.parametrize(*covering(op=list(REDUCTIONS), dtype=DTYPES))
def test_reductions_split(op, dtype) -> None:
    """Row (split over rows), column (split over columns) and full reductions (split reduction), 3
    threads: each of the three is split three ways (an scf.forall of 3 in the `parallel` stage; a bool
    max/min too: any/all combine the stored bytes with maxui/minui), and computes NumPy's result."""
    fn = three_ways(op)
    k = kern(fn, 3)
    for shape in BIG:
        a = data(shape, dtype, op)
        foralls = re.findall(r"scf\.forall \([^)]*\) in \(([^)]*)\)", k.inspect(a).stage("parallel"))
        assert set(foralls) == {"3"} and len(foralls) >= 3, (shape, foralls)
        for got, want, axis in zip(k(a), fn(a), (0, 1, None), strict=True):
            close(got, want, a, op, axis)


@pytest.mark.parametrize("threads", THREADS)
@pytest.mark.parametrize("op", ["sum", "max", "mean"])
def test_reductions_per_thread_count(threads, op) -> None:
    fn = three_ways(op)
    a = data((301, 257), "float32", op)
    for got, want, axis in zip(kern(fn, threads)(a), fn(a), (0, 1, None), strict=True):
        close(got, want, a, op, axis)
    v = data(100003, "float64", op)
    close(kern(lambda v: REDUCTIONS[op](v), threads)(v), REDUCTIONS[op](v), v, op, None)


@pytest.mark.filterwarnings("ignore:Mean of empty slice")
@pytest.mark.filterwarnings("ignore:invalid value encountered")
@pytest.mark.parametrize("op", list(REDUCTIONS))
@pytest.mark.parametrize("dtype", ["float32", *(pytest.param(d, marks=pytest.mark.slow) for d in ("int32", "bool"))])  # (a sweep)
def test_reductions_edge_sizes(op, dtype) -> None:
    for shape in EDGE:
        a = data(shape, dtype, op)
        for axis in (0, 1, None):
            n = a.size if axis is None else a.shape[axis]
            if n == 0 and op in ("max", "min"):
                continue  # NumPy raises: tested in test_errors
            with np.errstate(all="ignore"):
                want = REDUCTIONS[op](a, axis=axis)
            got = kern(reduce_along(op, axis), 2)(a)
            if op == "mean" and n == 0:
                assert np.all(np.isnan(got)) and np.shape(got) == np.shape(want)
                continue
            close(got, want, a, op, axis)


# --- structure of the lowered code ---------------------------------------------------------------
def _omp_bodies(text: str) -> list[str]:
    """The text of each omp.parallel region (up to its omp.terminator)."""
    return re.findall(r"omp\.parallel.*?omp\.terminator", text, re.S)


def test_openmp_stage_keeps_inner_loops_sequential() -> None:
    A, b = rng.standard_normal((512, 640), np.float32), rng.standard_normal(640, np.float32)
    comp = kern(ew_chain, 2).inspect(A, b)
    assert "tile_using_forall" in comp.stage("parallel-script") and "num_threads [2, 0]" in comp.stage("parallel-script")
    openmp = comp.stage("openmp")
    bodies = _omp_bodies(openmp)
    assert len(bodies) == 1 and "num_threads(" in bodies[0]
    assert "scf.for" in bodies[0] and "collapse" not in bodies[0]
    assert re.search(r"omp\.loop_nest \(%\w+\) :", bodies[0])  # one parallel index: the chunk


def test_full_reduction_is_split_over_threads() -> None:
    """A float sum is blocked (lowering/blocking.py): its row sums are split over rows; a full
    integer sum, one generic, is split into one partial result per thread."""
    a, b = rng.standard_normal((1024, 512), np.float32), rng.standard_normal((1024, 512), np.float32)
    comp = kern(lambda a, b: np.sum(a * b), 2).inspect(a, b)
    assert "num_threads [2, 0]" in comp.stage("parallel-script")
    i = rng.integers(-9, 9, (1024, 512), np.int32)
    assert "tile_reduction_using_forall" in kern(lambda i: np.sum(i), 2).inspect(i).stage("parallel-script")
    bodies = _omp_bodies(comp.stage("openmp"))
    assert len(bodies) == 1 and "scf.for" in bodies[0]
    assert "fastmath<reassoc>" in comp.stage("openmp")  # partial sums may be kept in vectors


def test_row_reduction_is_split_over_rows() -> None:
    x = rng.standard_normal((4096, 64), np.float32)
    script = kern(lambda x: np.max(x, axis=1), 2).inspect(x).stage("parallel-script")
    assert "tile_using_forall" in script and "num_threads [2, 0]" in script


def test_small_ops_stay_sequential() -> None:
    a = rng.standard_normal((16, 16), np.float32)
    comp = kern(lambda a: a + 1.0, 2).inspect(a)
    assert "parallel-script" not in comp.stages and "omp.parallel" not in comp.stage("openmp")


def _region(asm: str) -> str:
    """The assembly of the outlined parallel region(s)."""
    parts = re.split(r"^(?=[A-Za-z_][\w.$]*:$)", asm, flags=re.M)  # function labels, not .LBB ones
    return "\n".join(p for p in parts if "omp_par" in p.split("\n", 1)[0])


def test_asm_of_parallel_region_uses_vector_registers() -> None:
    A, b = rng.standard_normal((512, 640), np.float32), rng.standard_normal(640, np.float32)
    comp = kern(ew_chain, 2).inspect(A, b)
    region = _region(comp.stage("asm"))
    assert region, "no outlined omp region in the assembly"
    assert re.search(r"\b(v(add|mul|max)ps)\b.*%[xyz]mm", region) and re.search(r"%(ymm|zmm)\d+", region)
    # float32 exp is inline (lowering/stages/math.py): vector FMAs in the region, no libm/libmvec call
    assert re.search(r"vfmadd\d+ps\s.*%[yz]mm", region) and "expf" not in comp.stage("asm")
    plain = kern(lambda a: a + 1.0, 2).inspect(A)
    assert re.search(r"vaddps\s.*%[yz]mm", _region(plain.stage("asm")))


# --- options -------------------------------------------------------------------------------------
def test_threads_option_is_compiled_in_and_keyed() -> None:
    assert kern(ew_chain, 3).options.target.threads == 3 and kern(ew_chain, 2).options != kern(ew_chain, 3).options
    assert et.kernel(ew_chain, target="cpu", threads=3).options.target.threads == 1  # no effect on cpu
    two, three = resolve_target("cpu-openmp", 2), resolve_target("cpu-openmp", 3)
    assert pipeline_for(two) is pipeline_for(resolve_target("cpu-openmp", 2)) and pipeline_for(two) is not pipeline_for(three)
    assert "num-threads=3" in str([s.passes for s in pipeline_for(three).stages])
    with pytest.raises(ValueError, match="threads"):
        et.kernel(ew_chain, threads=0)


def test_default_threads_and_target(monkeypatch) -> None:
    monkeypatch.setenv("OMP_NUM_THREADS", "3")
    assert default_threads() == 3
    assert et.kernel(ew_chain).options.target == resolve_target("cpu-openmp", 3) == replace(Target.host(), name="cpu-openmp", threads=3,
                                                                                                         machine=et.Machine().for_threads(3))
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    assert et.kernel(ew_chain).options.target.name == "cpu"
    monkeypatch.delenv("OMP_NUM_THREADS")
    monkeypatch.setattr("os.sched_getaffinity", lambda pid: {0, 1, 2, 3})
    assert default_threads() == 4


def test_choose_split_dimension() -> None:
    from mlir import ir

    with ir.Context():
        m = ir.Module.parse("""
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
#col = affine_map<(d0, d1) -> (d1)>
func.func @f(%a: tensor<3x40001xf32>, %r: tensor<3xf32>, %c: tensor<40001xf32>) -> (tensor<3xf32>, tensor<40001xf32>) {
  %0 = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]} ins(%a : tensor<3x40001xf32>) outs(%r : tensor<3xf32>) {
  ^bb0(%x: f32, %o: f32):
    %s = arith.addf %o, %x : f32
    linalg.yield %s : f32
  } -> tensor<3xf32>
  %1 = linalg.generic {indexing_maps = [#id, #col], iterator_types = ["reduction", "parallel"]} ins(%a : tensor<3x40001xf32>) outs(%c : tensor<40001xf32>) {
  ^bb0(%x: f32, %o: f32):
    %s = arith.addf %o, %x : f32
    linalg.yield %s : f32
  } -> tensor<40001xf32>
  return %0, %1 : tensor<3xf32>, tensor<40001xf32>
}""")
        rows, cols = payload.linalg_ops(m)
        two, one = resolve_target("cpu-openmp", 2), resolve_target("cpu-openmp", 1)
        assert parallel.choose(rows, two).num_threads == (2, 0)  # 3 rows: uneven but the only parallel loop
        assert parallel.choose(cols, two).num_threads == (0, 2)
        assert parallel.choose(cols, one) is None


def _region_threads(openmp: str) -> set[int]:
    """The thread counts the `openmp` stage's parallel regions ask for."""
    constants = dict(re.findall(r"(%\w+) = llvm\.mlir\.constant\((\d+) : i32\)", openmp))
    return {int(constants[v]) for v in re.findall(r"omp\.parallel num_threads\((%\w+) : i32\)", openmp)}


def test_a_program_priced_below_the_serial_bound_runs_on_one_thread() -> None:
    """A cpu-openmp program the cost model prices under Tuning.serial_below_ns runs on one thread (beside
    NumPy's OpenBLAS calls a 2-thread split of it ran 5x slower: lowering/policy.py); explain says so; with
    the bound at 0 the same program is split, and a program priced above it keeps its threads."""
    A, B = rng.standard_normal((128, 64), np.float32), rng.standard_normal((64, 96), np.float32)
    c = rng.standard_normal(96, np.float32)
    layer = lambda A, B, c: np.maximum(A @ B + c, 0.0)  # noqa: E731
    small = et.kernel(layer, target="cpu-openmp", threads=2)
    np.testing.assert_allclose(small(A, B, c), layer(A, B, c), rtol=1e-5, atol=1e-5)
    comp = small.inspect(A, B, c)
    assert comp.report.cost_after < comp.options.target.tuning.serial_below_ns
    assert _region_threads(comp.stage("openmp")) == {1} and "runs on one thread" in comp.explain()
    assert _region_threads(kern(layer, 2).inspect(A, B, c).stage("openmp")) == {2}
    big = rng.standard_normal((512, 640), np.float32)
    comp = et.kernel(lambda a: np.exp(a) * 2.0, target="cpu-openmp", threads=2).inspect(big)
    assert comp.report.cost_after >= comp.options.target.tuning.serial_below_ns and _region_threads(comp.stage("openmp")) == {2}
