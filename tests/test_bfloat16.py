"""bfloat16 (ml_dtypes') against NumPy with ml_dtypes: stored as bfloat16, each op computed in float32
and rounded to nearest even (NaN kept NaN), as ml_dtypes' loops; sums, products, means, dot and
einsum accumulate in float32 and round once; matmul gives float32, as NumPy's bfloat16 matmul."""

from __future__ import annotations

import os
import subprocess
import sys

import ml_dtypes
import numpy as np
import pytest
from strategies import kernel_of, reference

import egglog_tensor as et

BF16 = ml_dtypes.bfloat16
# NumPy's own runs on NaN, inf and near-overflow data warn (invalid value, overflow): expected here
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")
SPECIAL = [np.nan, -np.nan, np.inf, -np.inf, -0.0, 0.0, 1e-40, -3e38, 3.3e38, 1.0]


def data(shape: tuple[int, ...], seed: int, scale: float = 3.0, special: bool = True) -> np.ndarray:
    """Normal bfloat16 data, its first elements NaN (both signs), +-inf, +-0, a subnormal and near-overflow values."""
    a = (np.random.default_rng(seed).standard_normal(shape) * scale).astype(np.float32)
    if special:
        a.reshape(-1)[: len(SPECIAL)] = SPECIAL
    return a.astype(BF16)


def ulps(got: np.ndarray, expected: np.ndarray) -> np.ndarray:
    """The distance in bfloat16 ULPs of finite values (an order-preserving integer key of the bits)."""
    def key(x: np.ndarray) -> np.ndarray:
        bits = np.asarray(x).view(np.int16).astype(np.int64)
        return np.where(bits < 0, -(bits & 0x7FFF), bits)

    return np.abs(key(got) - key(expected))


def assert_same(got: object, expected: object, max_ulp: int = 0) -> None:
    """The same dtypes and shapes; NaN where NumPy has NaN (either sign: IEEE leaves a NaN result's sign
    open), the other values bit-identical (-0.0 too) or, bfloat16 ones, within max_ulp."""
    got, expected = (g if isinstance(g, tuple) else (g,) for g in (got, expected))
    for i, (g, e) in enumerate(zip(got, expected, strict=True)):
        g, e = np.asarray(g), np.asarray(e)
        assert g.dtype == e.dtype and g.shape == e.shape, f"output {i}: {g.dtype}{g.shape}, NumPy {e.dtype}{e.shape}"
        if g.dtype.kind in "biu":
            np.testing.assert_array_equal(g, e, err_msg=f"output {i}")
            continue
        wide = (g.astype(np.float64), e.astype(np.float64))
        np.testing.assert_array_equal(np.isnan(wide[0]), np.isnan(wide[1]), err_msg=f"output {i}: NaN")
        keep = ~np.isnan(wide[1])
        if max_ulp and g.dtype == BF16:
            assert ulps(g[keep], e[keep]).max(initial=0) <= max_ulp, f"output {i}: {ulps(g[keep], e[keep]).max()} ULP"
        else:
            np.testing.assert_array_equal(g[keep].view(f"u{g.itemsize}"), e[keep].view(f"u{e.itemsize}"), err_msg=f"output {i}")


def _elementwise(a, b):
    return (a + b, a - b, a * b, a / b, a // b, a % b, np.sqrt(np.abs(a)), -a, np.abs(a), np.square(a), a ** 2,
            np.maximum(a, b), np.minimum(a, b), a < b, a == b, np.isnan(a), np.isinf(a), np.signbit(a),
            np.floor(a), np.ceil(a), np.rint(a), np.reciprocal(b), np.where(a > b, a, b),
            a + 1, 3 - a, a * 2.5, a.astype(np.float32) + b, a + b.astype(np.float64))


def test_elementwise_bit_identical() -> None:
    """Each op in float32, rounded to bfloat16 as ml_dtypes: bit-identical, with NaN, +-inf, -0.0,
    subnormals and overflow to inf; mixed with float32/float64 and Python numbers as NumPy promotes."""
    a, b = data((40, 50), seed=1, scale=50), data((40, 50), seed=2)
    assert_same(kernel_of(_elementwise)(a, b), reference(_elementwise, a, b))


def _casts(a, w):
    return (a.astype(np.float32), a.astype(np.float64), a.astype(np.float16), a.astype(bool), w.astype(BF16),
            w.astype(np.float64).astype(BF16), (w * 1e5).astype(np.int32).astype(BF16), a.astype(np.float16).astype(BF16))


def test_casts_round_to_nearest_even() -> None:
    """float32 -> bfloat16 over 2^16 bit patterns (ties both ways, NaN payloads of either sign, the edge of
    overflow): ml_dtypes' bits exactly (a NaN becomes the quiet NaN of its sign); float64 and ints round
    through float32 as ml_dtypes does; every bfloat16 widens exactly."""
    rng = np.random.default_rng(3)
    patterns = rng.integers(0, 2**32, 2**16, dtype=np.uint32)
    patterns[:8] = [0x3F808000, 0x3F818000, 0x7F800001, 0xFFA00001, 0x7F7F8000, 0x7F7FFFFF, 0x00008000, 0x80018000]
    w = patterns.view(np.float32)
    a = np.arange(2**16, dtype=np.uint16).view(BF16)
    with np.errstate(all="ignore"):
        got, expected = kernel_of(_casts)(a, w), reference(_casts, a, w)
    assert_same(got[:1] + got[2:6] + got[7:], expected[:1] + expected[2:6] + expected[7:])
    np.testing.assert_array_equal(got[1].view(np.uint64), expected[1].view(np.uint64))  # NaN payloads widen as they are
    np.testing.assert_array_equal(got[4].view(np.uint16), expected[4].view(np.uint16))  # quiet NaNs with the sign kept
    finite = np.isfinite(w * 1e5) & (np.abs(w * 1e5) < 2**31)
    assert_same(got[6][finite], expected[6][finite])


MATH = {"exp": np.exp, "log": np.log, "sin": np.sin, "cos": np.cos, "tanh": np.tanh, "expm1": np.expm1, "log1p": np.log1p,
        "arctan": np.arctan, "log2": np.log2, "sinh": np.sinh, "cbrt": np.cbrt}


def _math(x):
    return tuple(f(x) for f in MATH.values())


def test_math_over_every_value() -> None:
    """Math functions over every bfloat16: within 1 ULP of ml_dtypes' (float32 results rounded, ours
    from float32 math within a float32 ULP of libm's), NaN where it has NaN."""
    x = np.arange(2**16, dtype=np.uint16).view(BF16)
    got, expected = kernel_of(_math)(x), reference(_math, x)
    for name, g, e in zip(MATH, got, expected, strict=True):
        assert g.dtype == e.dtype == BF16
        np.testing.assert_array_equal(np.isnan(g.astype(np.float32)), np.isnan(e.astype(np.float32)), err_msg=name)
        keep = ~np.isnan(e.astype(np.float32))
        assert ulps(g[keep], e[keep]).max() <= 1, name
        assert np.count_nonzero(ulps(g[keep], e[keep])) <= 64, name


def _reductions(a):
    return a.sum(), a.sum(axis=0), a.sum(axis=1, keepdims=True), a.prod(axis=1), a.mean(), a.mean(axis=0)


def _in_float32(a):
    f = a.astype(np.float32)
    return tuple(r.astype(BF16) for r in (f.sum(), f.sum(axis=0), f.sum(axis=1, keepdims=True), f.prod(axis=1), f.mean(),
                                          f.mean(axis=0)))


def _extremes(a):
    return a.max(), a.max(axis=1), a.min(axis=0), a.argmax(axis=1), np.argmin(a), np.nanmax(a, axis=0)


@pytest.mark.parametrize("special", [False, True])
def test_reductions(special: bool) -> None:
    """sum/prod/mean accumulate in float32 and round once (within 1 ULP of float32 sums rounded: the
    order differs; a bfloat16 running sum of 600 values near 1 stalls at 512); max/min/argmax exact,
    NaN first as NumPy's."""
    a = data((8, 600), seed=4, scale=0.2, special=special) + BF16(1)
    assert_same(kernel_of(_reductions)(a), _in_float32(a), max_ulp=1)
    assert_same(kernel_of(_extremes)(a), reference(_extremes, a))
    if not special:
        assert float(kernel_of(_reductions)(a)[2].min()) > 560  # (NumPy with ml_dtypes sums in bfloat16: 512 each)


def test_contractions() -> None:
    """a @ b is float32 (as NumPy's bfloat16 matmul: the float32 product of the widened operands); np.dot
    and np.einsum are bfloat16, summed in float32 and rounded once; inf and NaN propagate."""
    a, b = data((12, 150), seed=5), data((150, 9), seed=6, special=False)
    fn = lambda a, b: (a @ b, np.dot(a, b), np.dot(a[0], b[:, 1]), np.einsum("ij,jk->ik", a, b), a[None] @ b)  # noqa: E731
    got = kernel_of(fn)(a, b)
    wide = a.astype(np.float32) @ b.astype(np.float32)
    assert [g.dtype for g in got] == [np.float32, BF16, BF16, BF16, np.float32]
    assert (a @ b).dtype == np.float32 and np.dot(a, b).dtype == BF16  # NumPy's own, with ml_dtypes
    np.testing.assert_allclose(got[0], wide, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(got[4][0], wide, rtol=1e-5, atol=1e-5)
    assert_same((got[1], got[3]), (wide.astype(BF16),) * 2, max_ulp=1)
    assert_same(got[1], np.dot(a, b), max_ulp=1)
    assert_same(got[2], np.dot(a[0], b[:, 1]), max_ulp=1)


def test_promotion_as_numpy() -> None:
    """Mixed with int32 or float16 arrays, ufuncs take the loop NumPy resolves (float64, float32)."""
    a, i, h = data((12,), seed=7), np.arange(12, dtype=np.int32), np.linspace(-2, 2, 12, dtype=np.float16)
    fn = lambda a, i, h: (a + i, a * h, np.maximum(a, i))  # noqa: E731
    assert_same(kernel_of(fn)(a, i, h), reference(fn, a, i, h))


def test_no_common_dtype_is_an_unsupported_error() -> None:
    """np.where of bfloat16 and int32 has no common dtype in NumPy (DTypePromotionError): a clear
    UnsupportedError naming both."""
    with pytest.raises(et.UnsupportedError, match="bfloat16.*int32|int32.*bfloat16"):
        et.kernel(lambda a, i: np.where(a > 0, a, i))(data((12,), seed=8), np.arange(12, dtype=np.int32))


def test_results_made_in_bfloat16() -> None:
    """A kernel of float32 arguments makes bfloat16 results (astype with ml_dtypes' type or its name, zeros)."""
    w = np.linspace(-3, 3, 50, dtype=np.float32)
    fn = lambda w: (w.astype(BF16), w.astype("bfloat16") * 2, np.zeros(3, BF16) + 1)  # noqa: E731
    assert_same(kernel_of(fn)(w), reference(fn, w))


def test_bfloat16_by_name_in_fresh_processes_and_from_the_cache(tmp_path) -> None:
    """astype("bfloat16") in code that never imports ml_dtypes: the name is understood (ml_dtypes imported then),
    and a second fresh process loads the compilation from the disk cache with the same bits."""
    code = ("import sys, numpy as np, egglog_tensor as et\n"
            "k = et.kernel(lambda x: (x * 3).astype('bfloat16'))\n"
            "r = k(np.linspace(-1, 1, 7, dtype=np.float32))\n"
            "print(r.dtype, r.view(np.uint16).tolist(), k.compilations[0].cache)")
    env = {**os.environ, "EGGLOG_TENSOR_CACHE_DIR": str(tmp_path)}
    runs = [subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=300, env=env).stdout.split(" ", 1)
            for _ in range(2)]
    expected = (np.linspace(-1, 1, 7, dtype=np.float32) * 3).astype(BF16).view(np.uint16).tolist()
    assert runs[0][0] == runs[1][0] == "bfloat16"
    assert runs[0][1].startswith(str(expected)) and runs[1][1].startswith(str(expected))
    assert runs[1][1].split()[-1] == str(et.cache.HIT) != runs[0][1].split()[-1]


def test_ml_dtypes_is_not_imported_by_egglog_tensor() -> None:
    """ml_dtypes is optional: importing egglog_tensor and compiling float kernels does not import it."""
    code = ("import sys, numpy as np, egglog_tensor as et\n"
            "print(float(et.kernel(lambda x: (x * 2).sum())(np.ones(4, np.float32))))\n"
            "print('ml_dtypes' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=300).stdout
    assert out.split() == ["8.0", "False"]


def test_the_runtime_float_to_bfloat_rounds_as_ml_dtypes() -> None:
    """LLVM's code generator calls __truncsfbf2 for a bfloat value it keeps in a register (a running
    sum, once its buffer came from aligned_alloc: test_reductions); lowering/llvm.py defines it in the
    optimized IR. Over random bit patterns and the special values: ml_dtypes' rounding, NaNs kept NaN."""
    import ctypes

    import llvmlite.binding as llvm

    from egglog_tensor.lowering.llvm import _target_machine, for_codegen
    from egglog_tensor.lowering.pipelines import resolve_target

    ir = for_codegen("""define void @conv(ptr %src, ptr %dst, i64 %n) {
entry:
  br label %loop
loop:
  %i = phi i64 [0, %entry], [%j, %loop]
  %p = getelementptr float, ptr %src, i64 %i
  %x = load float, ptr %p
  %y = call bfloat @__truncsfbf2(float %x)
  %q = getelementptr bfloat, ptr %dst, i64 %i
  store bfloat %y, ptr %q
  %j = add i64 %i, 1
  %c = icmp eq i64 %j, %n
  br i1 %c, label %done, label %loop
done:
  ret void
}
""")
    module = llvm.parse_assembly(ir)
    module.verify()
    engine = llvm.create_mcjit_compiler(module, _target_machine(resolve_target("cpu")))
    engine.finalize_object()
    conv = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64)(engine.get_function_address("conv"))
    bits = np.random.default_rng(5).integers(0, 2**32, 200_000, dtype=np.uint64).astype(np.uint32)
    special = np.array([0, 0x80000000, 0x7F800000, 0xFF800000, 0x7FC00000, 0x7F800001, 0xFFC00001, 1, 0x3F808000,
                        0x3F818000, 0x7F7FFFFF], np.uint32)
    x = np.concatenate([bits, special]).view(np.float32)
    out = np.empty(x.size, np.uint16)
    conv(x.ctypes.data, out.ctypes.data, x.size)
    nan = np.isnan(x)
    with np.errstate(invalid="ignore"):
        want = x.astype(BF16).view(np.uint16)
    np.testing.assert_array_equal(out[~nan], want[~nan])
    assert np.isnan(out[nan].view(BF16).astype(np.float32)).all()


@pytest.mark.parametrize("target", ["cpu", "cpu-openmp"])
@pytest.mark.parametrize("value", [-2.0, 2.0, -0.0, 0.0, np.nan, -np.inf])
def test_sign_bits_of_a_loaded_bfloat_in_scalar_code(target: str, value: float) -> None:
    """The fuzzer's program (a long run, narrow seed 2902): the sign of a bfloat16 loaded once and
    stored twice, in scalar code, made LLVM's code generator abort (a sign-extended bitcast of a
    bfloat load); lowering/llvm.py's `for_codegen` loads the bits as i16."""
    def f(h, b):
        c = np.concatenate([b, b])
        return c, np.copysign(h, c), np.signbit(c)

    h, b = np.array(1.5, np.float16), np.array([value], BF16)
    got = et.kernel(f, cache=False, target=target)(h, b)
    for g, want in zip(got, f(h, b), strict=True):
        assert g.dtype == want.dtype
        np.testing.assert_array_equal(np.asarray(g).view(np.uint8), np.asarray(want).view(np.uint8))
