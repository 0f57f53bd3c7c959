"""Vectorized math (lowering/stages/vecmath.py, lowering/stages/math.py): accuracy in ULP, special values,
and that loops vectorize.

Each test compiles a real kernel (`et.kernel(lambda x: np.exp(x))`). The reference is the same
function in extended precision (np.longdouble, x87 80-bit) rounded to the result dtype; the ULP
error is the distance between result and reference counted in representable values.
"""

from __future__ import annotations

import re

from dataclasses import replace

import numpy as np
import pytest

import egglog_tensor as et
from egglog_tensor.lowering.stages import math as polymath, vecmath as mathapprox
from egglog_tensor.lowering.pipelines import resolve_target
from egglog_tensor.target import NAMED, Target

OPS = ("exp", "log", "tanh", "sin", "cos")
DTYPES = (np.float32, np.float64)


def ulp_distance(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Number of representable values between a and b (finite, same dtype); -0.0 and 0.0 are 0 apart."""
    ints = {np.float32: np.int32, np.float64: np.int64}[a.dtype.type]

    def ordered(x: np.ndarray) -> np.ndarray:
        i = x.view(ints).astype(np.int64)
        return np.where(i < 0, np.int64(np.iinfo(ints).min) - i, i)

    return np.abs(ordered(a) - ordered(b))


def special_values(dtype: type) -> np.ndarray:
    f = np.finfo(dtype)
    base = np.array(
        [0.0, -0.0, np.inf, -np.inf, np.nan, f.tiny, -f.tiny, f.smallest_subnormal, -f.smallest_subnormal,
         f.max, -f.max, 1.0, -1.0, 0.5, 2.0, np.pi, -np.pi, 1e-30, -1e-30, 1e-8, 7.9, 9.0, 20.0, -20.0,
         88.72, 88.73, -87.33, -103.9, -104.0, 709.78, 709.79, -708.4, -745.1, -746.0,  # exp overflow/subnormal edges
         1e5, 1e6, 1e10, -1e10, 1e20, 1e30, -1e30, 1e300, 8.5e37, 3.3e38],  # huge sin/cos arguments
        dtype=np.float64,
    )
    with np.errstate(over="ignore"):
        base = base.astype(dtype)
        return np.concatenate([base, np.nextafter(base, dtype(np.inf)), np.nextafter(base, dtype(-np.inf))])


def test_inputs(dtype: type, n: int = 1 << 18) -> np.ndarray:
    """Every (2^bits / n)-th bit pattern, random bit patterns, dense sweeps and all special values."""
    uint = {np.float32: np.uint32, np.float64: np.uint64}[dtype]
    bits = 8 * np.dtype(dtype).itemsize
    sweep = (np.arange(n, dtype=np.uint64) << np.uint64(bits - 18)).astype(uint).view(dtype)
    rng = np.random.default_rng(0)
    random_bits = rng.integers(0, np.iinfo(uint).max, n, dtype=uint, endpoint=True).view(dtype)
    dense = [np.linspace(lo, hi, n, dtype=dtype) for lo, hi in ((-750, 750), (-110, 90), (-10, 10), (0, 4), (0.5, 2))]
    return np.concatenate([sweep, random_bits, *dense, special_values(dtype)])


test_inputs.__test__ = False  # a helper, not a test


def run(op: str, x: np.ndarray, target: str = "cpu", fastmath: bool = False) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(kernel result, NumPy's result, extended-precision reference rounded to x's dtype)."""
    k = et.kernel(lambda a: getattr(np, op)(a), target=target, fastmath=fastmath)
    with np.errstate(all="ignore"):
        return k(x), getattr(np, op)(x), getattr(np, op)(x.astype(np.longdouble)).astype(x.dtype)


@pytest.fixture(scope="module", params=DTYPES, ids=lambda d: d.__name__)
def inputs(request: pytest.FixtureRequest) -> np.ndarray:
    return test_inputs(request.param)


def _check_ulp(got: np.ndarray, ref: np.ndarray, x: np.ndarray, bound: int, what: str) -> None:
    finite = np.isfinite(ref) & np.isfinite(got)
    err = ulp_distance(got[finite], ref[finite])
    worst = int(np.argmax(err))
    assert err[worst] <= bound, f"{what}: {err[worst]} ULP at x={x[finite][worst]!r} (bound {bound})"
    # a result is finite exactly where the reference is (no spurious overflow or NaN)
    np.testing.assert_array_equal(np.isfinite(got), np.isfinite(ref))


@pytest.mark.parametrize("op", OPS)
def test_max_ulp_within_stated_bound(op: str, inputs: np.ndarray) -> None:
    got, _, ref = run(op, inputs)
    _check_ulp(got, ref, inputs, mathapprox.MAX_ULP[op, inputs.dtype.name], f"{op} {inputs.dtype}")


def _check_special(op: str, x: np.ndarray, got: np.ndarray, npy: np.ndarray) -> None:
    np.testing.assert_array_equal(np.isnan(got), np.isnan(npy), err_msg=f"NaN positions of {op}")
    exact = ~np.isfinite(npy) | (npy == 0)  # inf, -inf, NaN, +-0.0
    if op == "tanh":
        exact |= np.abs(x) >= 20  # saturates to exactly +-1
    np.testing.assert_array_equal(got[exact], npy[exact], err_msg=f"{op} on {x[exact]}")
    signed = exact & ~np.isnan(npy)  # a NaN's sign is unspecified (IEEE-754 6.3): glibc's AVX2 and AVX-512 vector logs differ
    np.testing.assert_array_equal(np.signbit(got[signed]), np.signbit(npy[signed]), err_msg=f"signs of {op}")


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.__name__)
@pytest.mark.parametrize("op", OPS)
def test_special_values_match_numpy_exactly(op: str, dtype: type) -> None:
    x = special_values(dtype)
    got, npy, _ = run(op, x)
    _check_special(op, x, got, npy)


def test_fastmath_tanh_is_inline_within_its_bound() -> None:
    """Under fastmath, float32 tanh is polymath's rational function: no call, its own ULP bound,
    NumPy's special values; a different function from the exact one (which other tests bound)."""
    x = test_inputs(np.float32)
    got, npy, ref = run("tanh", x, fastmath=True)
    _check_ulp(got, ref, x, polymath.FAST_MAX_ULP["tanh"], "fastmath tanh")
    special = special_values(np.float32)
    _check_special("tanh", special, *run("tanh", special, fastmath=True)[:2])
    fast = et.kernel(lambda a: np.tanh(a), fastmath=True).inspect(x[:4096])
    assert "math.tanh" not in fast.stage("math") and "tanhf" not in fast.stage("llvm-ir-optimized")
    assert "llvm.intr.ldexp" not in fast.stage("math") and "arith.shli" not in fast.stage("math")  # no exp in it
    assert not np.array_equal(got, run("tanh", x)[0])


@pytest.mark.parametrize("target", ["cpu", "cpu-openmp"])
def test_fused_kernels_match_numpy(target: str) -> None:
    rng = np.random.default_rng(1)
    a = rng.standard_normal((67, 45), dtype=np.float32) * 4
    b = rng.standard_normal(45, dtype=np.float32)
    fused = et.kernel(lambda a, b: np.exp(np.maximum(a + b, 0.0)) * 0.5 + a, target=target)
    gelu = et.kernel(lambda x: 0.5 * x * (1 + np.tanh(0.7978846 * (x + 0.044715 * x * x * x))), target=target)
    np.testing.assert_allclose(fused(a, b), np.exp(np.maximum(a + b, 0.0)) * 0.5 + a, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(gelu(a), 0.5 * a * (1 + np.tanh(0.7978846 * (a + 0.044715 * a * a * a))), rtol=1e-5, atol=1e-5)  # 1 + tanh cancels


LIBMVEC = [("log", np.float32), ("sin", np.float32), ("cos", np.float32), ("log", np.float64), ("tanh", np.float64)]


@pytest.mark.parametrize(("op", "dtype"), LIBMVEC, ids=lambda v: getattr(v, "__name__", v))
def test_loop_calls_vector_variant(op: str, dtype: type) -> None:
    """The main loop calls the widest libmvec variant for this CPU; only the remainder calls libm."""
    bits = np.dtype(dtype).itemsize * 8
    (lanes, vector_name), *_ = mathapprox.variants(op + ("f" if bits == 32 else ""), bits, Target.host())
    comp = et.kernel(lambda a: getattr(np, op)(a)).inspect(np.zeros((64, 1000), dtype))
    assert '"vector-function-abi-variant"' in comp.stage("vecmath")
    assert f"llvm.intr.{op}" not in comp.stage("vecmath")
    optimized = comp.stage("llvm-ir-optimized")
    assert re.search(rf"call <{lanes} x {'float' if bits == 32 else 'double'}> @{vector_name}\(", optimized)
    if lanes * bits == 512:
        assert "zmm" in comp.stage("asm")


INLINE = [("exp", np.float32), ("exp", np.float64), ("tanh", np.float32)]


@pytest.mark.parametrize(("op", "dtype"), INLINE, ids=lambda v: getattr(v, "__name__", v))
@pytest.mark.parametrize("name", ["cpu", "cpu-openmp"])
@pytest.mark.parametrize("machine", [m for m, t in NAMED.items() if not t.missing_on(Target.host())])  # (those that run here)
def test_inline_math_is_vector_code(machine: str, name: str, op: str, dtype: type) -> None:
    """exp and float32 tanh are polymath's: the math stage has no math op left, the optimized loop
    calls no libm or libmvec function and computes on vectors as wide as the target's (fused
    multiply-adds); with AVX-512 the scaling by 2^k (tanh's exp too) is one vscalefps/pd per vector."""
    target = resolve_target(replace(NAMED[machine], name=name, threads=2))
    comp = et.kernel(lambda a: getattr(np, op)(a) * 2, target=target).inspect(np.zeros((64, 1000), dtype))
    assert f"math.{op}" in comp.stage("linalg") and f"math.{op}" not in comp.stage("math")
    optimized = comp.stage("llvm-ir-optimized")
    assert not re.search(rf"@_?({op}|{op}f)\b|_ZGV\w*{op}", optimized) and "vector-function-abi-variant" not in comp.stage("vecmath")
    bits = np.dtype(dtype).itemsize * 8
    lanes = max((n for n, _ in mathapprox.variants("exp" + ("f" if bits == 32 else ""), bits, target)), default=256 // bits)
    assert re.search(rf"@llvm\.fma\.v{lanes}f{bits}", optimized)
    suffix = "ps" if bits == 32 else "pd"
    assert bool(re.search(rf"\tvscalef{suffix}\t.*%zmm", comp.stage("asm"))) == target.has("avx512f")


def test_only_code_calling_vector_math_realigns_its_frame() -> None:
    """Vectors live across a libmvec call are spilled to a frame aligned for them (opt -stackrealign);
    kernels without such calls keep the shorter prologue."""
    x = np.zeros((64, 1000), np.float32)
    calling = et.kernel(lambda x: 0.5 * x * (1 + np.sin(0.7978846 * (x + 0.044715 * x * x * x))), target="cpu").inspect(x)
    plain = et.kernel(lambda x: 0.5 * x * (1 + np.tanh(0.7978846 * (x + 0.044715 * x * x * x))), target="cpu").inspect(x)
    assert '"stackrealign"' in calling.stage("llvm-ir-optimized") and '"stackrealign"' not in plain.stage("llvm-ir-optimized")
    assert not mathapprox.variants("sinf", 32, Target.host()) or re.search(r"andq\s+\$-\d+, %rsp", calling.stage("asm"))


LIBM_NAMES = {"arctan2": "atan2", "power": "pow"}


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.__name__)
@pytest.mark.parametrize("op", sorted(LIBM_NAMES))
def test_two_argument_functions_call_vector_variants_within_bound(op: str, dtype: type) -> None:
    """arctan2 and power (`x ** y`) call libmvec's two-argument variants (`vv`); within its 4 ULP of the
    extended-precision reference on a grid of magnitudes and signs, and NumPy's special values exactly."""
    rng = np.random.default_rng(2)
    n = 1 << 16
    x = (np.exp(rng.uniform(-20, 20, n)) * rng.choice([-1.0, 1.0], n)).astype(dtype)
    y = (rng.uniform(-30, 30, n) if op == "power" else np.exp(rng.uniform(-20, 20, n)) * rng.choice([-1.0, 1.0], n)).astype(dtype)
    if op == "power":
        x = np.abs(x)
    k = et.kernel(lambda a, b: getattr(np, op)(a, b))
    with np.errstate(all="ignore"):
        got, ref = k(x, y), getattr(np, op)(x.astype(np.longdouble), y.astype(np.longdouble)).astype(dtype)
    finite = np.isfinite(ref) & np.isfinite(got)
    assert int(ulp_distance(got[finite], ref[finite]).max()) <= mathapprox.MAX_ULP[LIBM_NAMES[op], np.dtype(dtype).name]
    np.testing.assert_array_equal(np.isfinite(got), np.isfinite(ref))
    s = special_values(dtype)[:20]
    a, b = (v.ravel() for v in np.meshgrid(s, s))
    with np.errstate(all="ignore"):
        got, npy = k(a, b), getattr(np, op)(a, b)
    exact = ~np.isfinite(npy) | (npy == 0) | (npy == 1)
    np.testing.assert_array_equal(got[exact], npy[exact], err_msg=f"{op} special values")
    np.testing.assert_array_equal(np.signbit(got[exact]), np.signbit(npy[exact]))
    bits = np.dtype(dtype).itemsize * 8
    (lanes, vector_name), *_ = mathapprox.variants(LIBM_NAMES[op] + ("f" if bits == 32 else ""), bits, Target.host(), 2)
    assert f"@{vector_name}(" in k.inspect(np.zeros((64, 1000), dtype), np.zeros((64, 1000), dtype)).stage("llvm-ir-optimized")
