"""GPU kernels of each kind (elementwise with broadcasting, row reductions, softmax) compiled for
AMD (rocdl:gfx942) and NVIDIA (nvvm:sm_90) without a GPU: the HSACO passes llvm-readelf's checks
(kernel symbols and descriptors, code object v5), ptxas accepts the PTX without spills, and the
outlined kernels run on the CPU over grid x block (lowering/gpu/emulate.py) match NumPy."""

from __future__ import annotations

import re

import numpy as np
import pytest

import egglog_tensor as et
from egglog_tensor.lowering.gpu.emulate import emulate

TARGETS = ("rocdl:gfx942", "nvvm:sm_90")
rng = np.random.default_rng(7)


def broadcast_exp(x, b):
    return np.exp(x) * 0.5 + b


def row_sum(x):
    return x.sum(axis=1)


def softmax(x):
    e = np.exp(x - np.max(x, axis=1, keepdims=True))
    return e / np.sum(e, axis=1, keepdims=True)


X = rng.standard_normal((1000, 300), dtype=np.float32)
# (function, arguments, (grid, block) of each launch: blocks of 256 threads along the innermost parallel
# loop (x), one row per block along y; a reduction over rows of 300 is a block of 256 threads per row)
ROWS = ((1000, 1, 1), (256, 1, 1))
ELEMENTS = ((2, 1000, 1), (256, 1, 1))
KINDS = {"elementwise": (broadcast_exp, (X, rng.standard_normal(300, dtype=np.float32)), [ELEMENTS]),
         "row-sum": (row_sum, (X,), [ROWS]), "softmax": (softmax, (X,), [ROWS])}  # max, sum of exp, divide: one fused row kernel (rows.py)


@pytest.fixture(scope="module", params=[(kind, target) for kind in KINDS for target in TARGETS], ids=lambda p: f"{p[0]}-{p[1]}")
def compiled(request):
    kind, target = request.param
    fn, args, launches = KINDS[kind]
    return et.kernel(fn, target=target).inspect(*args), fn, args, launches


def test_device_code_is_checked(compiled) -> None:
    comp, _, _, launches = compiled
    assert [(k.grid, k.block) for k in comp.facts["device"].kernels] == launches
    check_device_code(comp)


def check_device_code(comp) -> None:
    """The HSACO's symbols, descriptors and code object version, or ptxas's acceptance without spills."""
    kernels, chip = comp.facts["device"].kernels, comp.options.target.cpu
    assert not re.search(r"__nv_|__ocml_", comp.stage("llvm-ir"))  # no device math library needed
    if comp.options.target.name == "rocdl":
        notes = comp.stage("hsaco")
        assert re.search(r"ABI Version:\s+3\b", notes) and "Flags:" in notes and chip in notes
        for k in kernels:
            assert re.search(rf"FUNC .* {k.name}$", notes, re.MULTILINE) and re.search(rf"OBJECT .* {k.name}\.kd$", notes, re.MULTILINE)
            assert re.search(rf"\.name:\s+{k.name}\n", notes)
        assert re.findall(r"\.reqd_workgroup_size:\s*\n\s*- (\d+)", notes) == [str(k.block[0]) for k in reversed(kernels)] or \
            sorted(re.findall(r"\.reqd_workgroup_size:\s*\n\s*- (\d+)", notes)) == sorted(str(k.block[0]) for k in kernels)
    else:
        report = comp.stage("ptxas")
        assert sorted(re.findall(rf"Compiling entry function '(\w+)' for '{chip}'", report)) == sorted(k.name for k in kernels)
        assert report.count("0 bytes spill stores, 0 bytes spill loads") == len(kernels)
        assert f".target {chip}" in comp.stage("asm")


def assert_sums_close(out: np.ndarray, x: np.ndarray, axis: int) -> None:
    """Float sums (one thread per row adds in order, NumPy pairwise) within 2 eps of the sum of
    magnitudes of the exact (float64) sum."""
    exact = x.astype(np.float64).sum(axis=axis)
    bound = 2 * np.finfo(x.dtype).eps * np.abs(x).astype(np.float64).sum(axis=axis)
    assert out.dtype == x.dtype
    assert np.all(np.abs(out - exact) <= bound), np.max(np.abs(out - exact) / bound)


def test_emulated_matches_numpy(compiled) -> None:
    comp, fn, args, _ = compiled
    (out,) = emulate(comp, *args)
    if fn is row_sum:
        assert_sums_close(out, *args, axis=1)
    else:
        np.testing.assert_allclose(out, fn(*args), rtol=2e-6, atol=1e-6)  # (terms up to ~30 cancel in x + b)


CASES = {
    # partial blocks (513 = 2 x 256 + 1), float64 exp inline, a column broadcast
    "float64-broadcast": (lambda x, y: np.exp(x) * y, (rng.standard_normal((37, 513)), rng.standard_normal((37, 1)))),
    "3-d": (lambda x, y: x * y + 1.0, (rng.standard_normal((5, 7, 300)), rng.standard_normal((7, 1)))),
    "int32": (lambda a, b: a + b * 3, (np.arange(1000, dtype=np.int32).reshape(10, 100), np.arange(100, dtype=np.int32))),
    "bool": (lambda a: a > 0, (rng.standard_normal((10, 100)).astype(np.float32),)),
    "tanh": (lambda x: np.tanh(x), (rng.standard_normal((37, 513)).astype(np.float32) * 4,)),
    "column-max": (lambda x: np.max(x, axis=0), (rng.standard_normal((300, 700)).astype(np.float32),)),
    "row-max-nan": (lambda x: np.max(x, axis=1), (np.where(np.arange(64 * 50).reshape(64, 50) % 97 == 0, np.nan, 1.0).astype(np.float32),)),
    "float64-softmax": (softmax, (rng.standard_normal((100, 70)),)),
    "fortran-order-transpose": (lambda x: x.T * 2.0 - 1.0, (np.asfortranarray(rng.standard_normal((50, 70)).astype(np.float32)),)),
    "empty": (lambda x: np.exp(x) + 1.0, (np.ones((0, 5), np.float32),)),
    "negative-axis-keepdims": (lambda x: x - x.mean(axis=-1, keepdims=True), (rng.standard_normal((64, 500)).astype(np.float32),)),
    # tiled matmuls of other forms: integers (the op's own body), a transposed B read through its map
    "int32-matmul": (lambda a, b: a @ b, (rng.integers(-5, 5, (33, 20)).astype(np.int32), rng.integers(-5, 5, (20, 45)).astype(np.int32))),
    "float64-matmul-transposed-b": (lambda a, b: a @ b.T, (rng.standard_normal((70, 40)), rng.standard_normal((90, 40)))),
}


# the default run: these cases on one target each (tanh on nvvm: its abs and copysign as sign-bit ops);
# the slow run: every case on both
QUICK = {"float64-broadcast": TARGETS[0], "tanh": TARGETS[1], "row-max-nan": TARGETS[0], "float64-softmax": TARGETS[1]}
PAIRS = [pytest.param(case, target, marks=() if QUICK.get(case) == target else pytest.mark.slow) for case in CASES for target in TARGETS]


@pytest.mark.parametrize(("case", "target"), PAIRS)
def test_emulated_cases(case: str, target: str) -> None:
    fn, args = CASES[case]
    comp = et.kernel(fn, target=target).inspect(*args)
    (out,) = emulate(comp, *args)
    expected = fn(*args)
    assert out.dtype == expected.dtype
    if out.dtype.kind in "biu":
        np.testing.assert_array_equal(out, expected)
    else:
        np.testing.assert_allclose(out, expected, rtol=2e-6 if out.dtype == np.float32 else 1e-13, atol=1e-7)


@pytest.mark.parametrize("target", [TARGETS[0], pytest.param(TARGETS[1], marks=pytest.mark.slow)])
def test_long_rows_pass_descriptors(target: str) -> None:
    """A blocked sum over rows of 20000 (more than 64 terms per thread of a block) reads strided views of x:
    every kernel then takes memref descriptors."""
    x = rng.standard_normal((8, 20000)).astype(np.float32)
    comp = et.kernel(row_sum, target=target).inspect(x)
    assert comp.facts[comp.options.target.name].bare is False
    assert "noalias" not in comp.stage("llvm-ir")
    (out,) = emulate(comp, x)
    assert_sums_close(out, x, axis=1)


@pytest.mark.slow
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_emulated_sums_at_size(dtype) -> None:
    """Row sums of 2^22 elements: as accurate as the blocked sums of the CPU path (NumPy: pairwise)."""
    x = np.full((2, 2**22), 0.1, dtype)
    comp = et.kernel(row_sum, target="rocdl:gfx942").inspect(x)
    (out,) = emulate(comp, x)
    np.testing.assert_allclose(out, x.astype(np.float64).sum(axis=1), rtol=4 * np.finfo(dtype).eps)


def test_tanh_special_values_on_nvvm() -> None:
    """float32 tanh inline, its abs and copysign PTX instructions (no libdevice call): -0.0, NaN, +-inf, tiny and large values."""
    x = np.array([[-0.0, 0.0, np.nan, np.inf, -np.inf, 1e-30, -1e-30, -5.0, 0.69, 0.71, 9.5, -20.0]], np.float32)
    comp = et.kernel(lambda x: np.tanh(x), target="nvvm:sm_90").inspect(x)
    assert "__nv_" not in comp.stage("nvvm") and "abs.f32" in comp.stage("asm") and "copysign.f32" in comp.stage("asm")
    (out,) = emulate(comp, x)
    expected = np.tanh(x)
    np.testing.assert_array_equal(np.signbit(out), np.signbit(expected))
    np.testing.assert_allclose(out, expected, rtol=2e-7, atol=0)


def layernorm(x):
    return (x - x.mean(axis=1, keepdims=True)) / np.sqrt(x.var(axis=1, keepdims=True) + 1e-5)


def full_sum(x):
    return x.sum()


def full_max(x):
    return x.max()


def dot(a, b):
    return np.sum(a * b)


def row_max(x):
    return np.max(x, axis=1)


def chain_mv(a, b, x):
    return (a @ b) @ x


LONG = np.full((4, 100000), 0.1, np.float32)
RAMP = np.ascontiguousarray(np.broadcast_to(np.sin(np.arange(100000, dtype=np.float32)), (4, 100000)))
MILLION = rng.standard_normal(10**6).astype(np.float32)
# (function, arguments, the kernels' (grid, block): a block of threads per output element, the reduction over its threads)
SPLIT = {
    "long-row-sums": (row_sum, (LONG,), None),
    "long-row-max": (row_max, (RAMP,), [((4, 1, 1), (256, 1, 1))]),
    "partial-block-rows": (row_max, (rng.standard_normal((5, 1001)).astype(np.float32),), [((5, 1, 1), (256, 1, 1))]),
    "rows-of-70": (row_sum, (rng.standard_normal((3, 70)).astype(np.float32),), [((3, 1, 1), (128, 1, 1))]),
    # a reduction to one value: a grid of blocks writing partials, then one block reducing them
    "full-max": (full_max, (MILLION,), [((489, 1, 1), (256, 1, 1)), ((1, 1, 1), (256, 1, 1))]),
    "full-sum": (full_sum, (MILLION,), None),
    "int64-full-sum": (full_sum, (np.arange(10**5, dtype=np.int64) * 7919 % 1000003,), None),
    "dot": (dot, (MILLION, MILLION[::-1].copy()), None),
    # 2-D: the max's first launch cuts the outer loop into 64 chunks; the sum of the two values is a one-thread kernel
    "sum-plus-max-2d": (lambda x: x.sum() + x.max(), (rng.standard_normal((64, 3000)).astype(np.float32),), None),
    # a matvec generalized and split (its fill, before the matmul's kernel, folded in)
    "matvec-after-matmul": (chain_mv, tuple(rng.standard_normal(s).astype(np.float32) for s in ((96, 64), (64, 700), 700)),
                            None),
    "softmax": (softmax, (X,), None),
    "layernorm": (layernorm, (rng.standard_normal((64, 5000)).astype(np.float32),), None),
    # int8 lanes shuffled through an i32 (NVVM shuffles 32-bit values only)
    "int8-row-max": (row_max, (rng.integers(-128, 128, (5, 1001)).astype(np.int8),), [((5, 1, 1), (256, 1, 1))]),
}
QUICK_SPLIT = {"long-row-sums": TARGETS[1], "long-row-max": TARGETS[0], "partial-block-rows": TARGETS[1], "rows-of-70": TARGETS[0],
               "full-max": TARGETS[1], "dot": TARGETS[0], "sum-plus-max-2d": TARGETS[1], "matvec-after-matmul": TARGETS[0], "int64-full-sum": TARGETS[1], "layernorm": TARGETS[0],
               "int8-row-max": TARGETS[1]}
SPLIT_PAIRS = [pytest.param(case, target, marks=() if QUICK_SPLIT.get(case) == target else pytest.mark.slow)
               for case in SPLIT for target in TARGETS]


@pytest.mark.parametrize(("case", "target"), SPLIT_PAIRS)
def test_block_reductions(case: str, target: str) -> None:
    """Reductions split across a block (workgroup memory, barriers) and full reductions in two launches:
    checked device code with workgroup memory in every reduction kernel, emulated, within NumPy's accuracy."""
    fn, args, launches = SPLIT[case]
    comp = et.kernel(fn, target=target).inspect(*args)
    check_device_code(comp)
    if launches is not None:
        assert [(k.grid, k.block) for k in comp.facts["device"].kernels] == launches
    reducing = comp.stage("noalias").count(") workgroup(")  # kernels with workgroup memory: the block reductions
    assert reducing >= 1
    if target.startswith("rocdl"):
        assert len(re.findall(r"group_segment_fixed_size:\s+[1-9]", comp.stage("hsaco"))) == reducing
    else:
        assert comp.stage("ptxas").count("used 1 barriers") == reducing
    (out,) = emulate(comp, *args)
    expected = fn(*args)
    assert out.dtype == expected.dtype and out.shape == expected.shape
    if fn in (row_sum, full_sum, dot) and out.dtype.kind == "f":
        terms = args[0] * args[1] if fn is dot else args[0]
        assert_sums_close(out, terms, axis=-1 if fn is row_sum else None)
    elif fn is chain_mv:  # (sums of 64 and 700 products that cancel: within float32 rounding of the largest)
        np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-6 * np.abs(expected).max())
    elif out.dtype.kind == "f":
        np.testing.assert_allclose(out, expected, rtol=2e-6, atol=1e-6)
    else:
        np.testing.assert_array_equal(out, expected)


def test_short_many_rows_stay_one_thread_per_row() -> None:
    """Rows shorter than a wave, enough of them to fill the device: one thread per row, no workgroup memory."""
    x = rng.standard_normal((40000, 20)).astype(np.float32)
    comp = et.kernel(row_sum, target="rocdl:gfx942").inspect(x)
    assert [(k.grid, k.block) for k in comp.facts["device"].kernels] == [((157, 1, 1), (256, 1, 1))]
    assert "gpu.barrier" not in comp.stage("noalias")
    (out,) = emulate(comp, x)
    assert_sums_close(out, x, axis=1)


def test_emulation_refuses_barriers_in_branches() -> None:
    """A gpu.barrier inside a branch (threads would diverge around it) is refused by the emulation."""
    from egglog_tensor.lowering.gpu.emulate import host_module

    text = """module attributes {gpu.container_module} {
  gpu.module @k { gpu.func @k(%a: memref<4xf32>, %c: i1) kernel attributes {known_block_size = array<i32: 4, 1, 1>, known_grid_size = array<i32: 1, 1, 1>} {
    scf.if %c { gpu.barrier }
    gpu.return } } }"""
    with pytest.raises(et.UnsupportedError, match="gpu.barrier inside a loop or branch"):
        host_module(text, 64)


def test_emulation_refuses_barriers_in_loops_threads_take_differently() -> None:
    """A gpu.barrier in a loop whose bounds differ per thread (threads would wait at different barriers) is refused."""
    from egglog_tensor.lowering.gpu.emulate import host_module

    text = """module attributes {gpu.container_module} {
  gpu.module @k { gpu.func @k(%a: memref<4xf32>) kernel attributes {known_block_size = array<i32: 4, 1, 1>, known_grid_size = array<i32: 1, 1, 1>} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %t = gpu.thread_id x
    scf.for %i = %c0 to %t step %c1 { gpu.barrier }
    gpu.return } } }"""
    with pytest.raises(et.UnsupportedError, match="bounds differ per thread"):
        host_module(text, 64)


def matmul(a, b):
    return a @ b


def matmul_relu(a, b, bias):
    return np.maximum(a @ b + bias, 0.0)


MATMUL_SIZES = ((1, 1, 1), (17, 33, 65), (128, 128, 128), (200, 100, 300))  # (m, n, k): one element, ragged, aligned, ragged k steps
MATMUL_KINDS = ("matmul", "epilogue", "batched")
QUICK_MATMUL = {("matmul", np.float32, (1, 1, 1), TARGETS[0]), ("epilogue", np.float32, (17, 33, 65), TARGETS[0]),
                ("batched", np.float64, (200, 100, 300), TARGETS[1])}
MATMUL_PAIRS = [pytest.param(kind, dtype, size, target, marks=() if (kind, dtype, size, target) in QUICK_MATMUL else pytest.mark.slow,
                             id=f"{kind}-{np.dtype(dtype).name}-{'x'.join(map(str, size))}-{target}")
                for kind in MATMUL_KINDS for dtype in (np.float32, np.float64) for size in MATMUL_SIZES for target in TARGETS]


def _matmul_case(kind: str, dtype, size: tuple[int, int, int]):
    m, n, k = size
    batch = (3,) if kind == "batched" else ()
    a, b = rng.standard_normal((*batch, m, k)).astype(dtype), rng.standard_normal((*batch, k, n)).astype(dtype)
    return (matmul_relu, (a, b, rng.standard_normal(n).astype(dtype))) if kind == "epilogue" else (matmul, (a, b))


@pytest.mark.parametrize(("kind", "dtype", "size", "target"), MATMUL_PAIRS)
def test_tiled_matmul(kind: str, dtype, size: tuple[int, int, int], target: str) -> None:
    """Matmuls tiled through workgroup memory (lowering/gpu/matmul.py): one launch of 256 threads per
    64 x 64 tile of C (the batch on the grid's z), its A and B tiles in workgroup memory between
    barriers; checked device code; emulated, within float rounding of NumPy's product."""
    from egglog_tensor.gpu.tiles import matmul_tiles

    fn, args = _matmul_case(kind, dtype, size)
    comp = et.kernel(fn, target=target).inspect(*args)
    check_device_code(comp)
    m, n, k = size
    tiles = matmul_tiles(comp.options.target.device, np.dtype(dtype).itemsize, size, 3 if kind == "batched" else 1)
    assert (tiles.block_m, tiles.register_m) == (64, 4)  # (these outputs are too small to fill a device with 128 x 128 tiles)
    first = comp.facts["device"].kernels[0]
    assert (first.grid, first.block) == ((-(-n // 64), -(-m // 64), 3 if kind == "batched" else 1), (256, 1, 1))
    shared = tiles.shared_bytes(np.dtype(dtype).itemsize)
    if target.startswith("rocdl"):
        assert f"group_segment_fixed_size: {shared}" in comp.stage("hsaco")
    else:
        assert re.search(rf"used 1 barriers, {shared} bytes smem", comp.stage("ptxas"))
    (out,) = emulate(comp, *args)
    expected = fn(*args)
    assert out.dtype == expected.dtype and out.shape == expected.shape
    scale = np.abs(args[0]) @ np.abs(args[1])  # (each product's magnitudes: the bound of its rounding)
    np.testing.assert_array_less(np.abs(out - expected), 4 * k * np.finfo(dtype).eps * scale + np.finfo(dtype).tiny)


SHUFFLES = """module attributes {gpu.container_module} {
  func.func @kernel(%arg0: memref<64xi32>, %arg1: memref<5x64xi32> {et.output}, %arg2: memref<5x64xi8> {et.output}) attributes {llvm.emit_c_interface} {
    %c1 = arith.constant 1 : index
    %c64 = arith.constant 64 : index
    gpu.launch_func @k::@k blocks in (%c1, %c1, %c1) threads in (%c64, %c1, %c1) args(%arg0 : memref<64xi32>, %arg1 : memref<5x64xi32>, %arg2 : memref<5x64xi8>)
    return
  }
  gpu.module @k {
    gpu.func @k(%in: memref<64xi32>, %out: memref<5x64xi32>, %ok: memref<5x64xi8>) kernel attributes {known_block_size = array<i32: 64, 1, 1>, known_grid_size = array<i32: 1, 1, 1>} {
      %t = gpu.thread_id x
      %v = memref.load %in[%t] : memref<64xi32>
      %w32 = arith.constant 32 : i32
      %w16 = arith.constant 16 : i32
      %o1 = arith.constant 1 : i32
      %o3 = arith.constant 3 : i32
      %o2 = arith.constant 2 : i32
      %o5 = arith.constant 5 : i32
      %o20 = arith.constant 20 : i32
      %r0, %p0 = gpu.shuffle xor %v, %o1, %w32 : i32
      %r1, %p1 = gpu.shuffle down %v, %o3, %w16 : i32
      %r2, %p2 = gpu.shuffle up %v, %o2, %w16 : i32
      %r3, %p3 = gpu.shuffle idx %v, %o5, %w16 : i32
      %r4, %p4 = gpu.shuffle idx %v, %o20, %w16 : i32
      %i0 = arith.constant 0 : index
      %i1 = arith.constant 1 : index
      %i2 = arith.constant 2 : index
      %i3 = arith.constant 3 : index
      %i4 = arith.constant 4 : index
      memref.store %r0, %out[%i0, %t] : memref<5x64xi32>
      memref.store %r1, %out[%i1, %t] : memref<5x64xi32>
      memref.store %r2, %out[%i2, %t] : memref<5x64xi32>
      memref.store %r3, %out[%i3, %t] : memref<5x64xi32>
      memref.store %r4, %out[%i4, %t] : memref<5x64xi32>
      %b0 = arith.extui %p0 : i1 to i8
      %b1 = arith.extui %p1 : i1 to i8
      %b2 = arith.extui %p2 : i1 to i8
      %b3 = arith.extui %p3 : i1 to i8
      %b4 = arith.extui %p4 : i1 to i8
      memref.store %b0, %ok[%i0, %t] : memref<5x64xi8>
      memref.store %b1, %ok[%i1, %t] : memref<5x64xi8>
      memref.store %b2, %ok[%i2, %t] : memref<5x64xi8>
      memref.store %b3, %ok[%i3, %t] : memref<5x64xi8>
      memref.store %b4, %ok[%i4, %t] : memref<5x64xi8>
      gpu.return
    }
  }
}"""


@pytest.mark.parametrize("wave", [32, 64])
def test_emulated_shuffles_follow_the_dialect(wave: int) -> None:
    """gpu.shuffle in the emulation: lane k (its thread's id mod the wave) reads lane k ^ offset, k + offset,
    k - offset or offset of its own wave; valid when k and the source are below the width, else its own value."""
    from egglog_tensor.lowering.gpu.emulate import run_emulated

    values = rng.integers(-1000, 1000, 64).astype(np.int32)
    out, ok = np.zeros((5, 64), np.int32), np.zeros((5, 64), np.int8)
    run_emulated(SHUFFLES, wave, [values], [out, ok])
    lane = np.arange(64) % wave
    base = np.arange(64) - lane
    for row, (source, width) in enumerate([(lane ^ 1, 32), (lane + 3, 16), (lane - 2, 16), (np.full(64, 5), 16), (np.full(64, 20), 16)]):
        valid = (lane < width) & (source >= 0) & (source < width)
        np.testing.assert_array_equal(ok[row], valid, err_msg=f"shuffle {row}")
        np.testing.assert_array_equal(out[row], np.where(valid, values[np.where(valid, base + source, 0)], values), err_msg=f"shuffle {row}")


def test_emulation_refuses_shuffles_wider_than_the_wave() -> None:
    from egglog_tensor.lowering.gpu.emulate import host_module

    with pytest.raises(et.UnsupportedError, match="width must be a constant from 1 to the wave size"):
        host_module(SHUFFLES.replace("%w32 = arith.constant 32", "%w32 = arith.constant 64"), 32)


@pytest.mark.parametrize("target", [*TARGETS, "rocdl:gfx1100"])
def test_block_reductions_shuffle_within_waves(target: str) -> None:
    """A block of 256 threads reduces each wave by log2(wave) shuffles and the waves' values by log2(256 / wave)
    more: 8 lane exchanges (PTX shfl.sync.bfly; AMDGPU ds_swizzle / ds_bpermute / DPP) and one barrier."""
    comp = et.kernel(row_sum, target=target).inspect(X)
    asm = [line.split()[0] for line in comp.stage("asm").splitlines() if line.startswith(("\t", " ")) and line.split()]
    if target.startswith("nvvm"):
        exchanges, barriers = sum(op.startswith("shfl.sync.bfly") for op in asm), asm.count("bar.sync")
    else:
        exchanges = sum(op.startswith(("ds_swizzle", "ds_bpermute")) or "_dpp" in op for op in asm)
        barriers = asm.count("s_barrier")
    assert (exchanges, barriers) == (8, 1)
    (out,) = emulate(comp, X)
    assert_sums_close(out, X, axis=1)


@pytest.mark.parametrize(("target", "size"), [("rocdl:gfx1100", (641, 1025, 37)),
                                              pytest.param("nvvm:sm_90", (961, 1409, 37), marks=pytest.mark.slow)])
def test_wide_matmul_tiles(target: str, size: tuple[int, int, int]) -> None:
    """A float32 output with blocks enough for the device gets 128 x 128 tiles of 8 x 8 registers (the cost
    model's choice: half the global traffic); ragged m, n and k (not multiples of the tiles), no spills
    (ptxas; AMDGPU's scratch and VGPR spill counts), emulated within float rounding of NumPy's product."""
    from egglog_tensor.gpu.tiles import matmul_tiles

    m, n, k = size
    a, b = rng.standard_normal((m, k)).astype(np.float32), rng.standard_normal((k, n)).astype(np.float32)
    comp = et.kernel(matmul, target=target).inspect(a, b)
    tiles = matmul_tiles(comp.options.target.device, 4, size)
    assert (tiles.block_m, tiles.block_n, tiles.register_m, tiles.register_n) == (128, 128, 8, 8)
    assert [(kernel.grid, kernel.block) for kernel in comp.facts["device"].kernels] == [((-(-n // 128), -(-m // 128), 1), (256, 1, 1))]
    check_device_code(comp)
    if target.startswith("rocdl"):
        assert re.search(r"\.vgpr_spill_count:\s+0\b", comp.stage("asm")) and re.search(r"\.private_segment_fixed_size:\s+0\b", comp.stage("asm"))
    else:
        assert "0 bytes spill stores, 0 bytes spill loads" in comp.stage("ptxas")
    (out,) = emulate(comp, a, b)
    scale = np.abs(a) @ np.abs(b)
    np.testing.assert_array_less(np.abs(out - a @ b), 4 * k * np.finfo(np.float32).eps * scale + np.finfo(np.float32).tiny)
