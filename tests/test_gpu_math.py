"""Math functions and arg-reductions on the GPU targets (rocdl:gfx942, nvvm:sm_90) without a GPU:
each compiles to code the vendor tools accept (no device math library, no spills), and the
outlined kernels run on the CPU (lowering/gpu/emulate.py: the device math as the device computes
it) match NumPy: special values in NumPy's places, ULP bounds on dense sweeps (docs/gpu.md's table),
argmax/argmin's first index on ties and NaN winning, any/all; what a target cannot compile is
refused naming the function and the target."""

from __future__ import annotations

import re

import numpy as np
import pytest
from test_gpu_kernels import TARGETS, check_device_code
from test_numeric_math import SWEEP, _special, _sweep, max_ulp

import egglog_tensor as et
from egglog_tensor.gpu.targets import FLOAT32_MATH
from egglog_tensor.lowering.gpu.devmath import FLOAT32
from egglog_tensor.lowering.gpu.emulate import emulate

# name: (domain of the sweep, max ULP against NumPy in float64 (float32) or long double (float64): float32, float64)
UNARY = {
    "exp": ((-100, 100), 1, 1), "log": ((1e-30, 1e30), 1, 2), "log1p": ((-0.999, 1e6), 1, 3), "expm1": ((-40, 80), 1, 3),
    "log2": ((1e-30, 1e30), 1, 2), "log10": ((1e-30, 1e30), 1, 2), "exp2": ((-140, 127), 1, 1), "sqrt": ((0, 1e10), 0.5, 0.5),
    "sin": ((-1e4, 1e4), 2, 2), "cos": ((-1e4, 1e4), 2, 2), "tan": ((-1e4, 1e4), 1, 3), "arcsin": ((-1, 1), 1, 3),
    "arccos": ((-1, 1), 1, 3), "arctan": ((-1e4, 1e4), 1, 3), "sinh": ((-88, 88), 1, 3), "cosh": ((-88, 88), 1, 2),
    "tanh": ((-20, 20), 1, 3), "arcsinh": ((-1e6, 1e6), 1, 3), "arccosh": ((1, 1e6), 1, 3), "arctanh": ((-1, 1), 1, 3),
    "cbrt": ((-1e6, 1e6), 1, 1),
}
# name: (domain of the first argument, of the second, max ULP: float32, float64); float64 power is refused
BINARY = {"arctan2": ((-1e3, 1e3), (-1e3, 1e3), 1, 3), "hypot": ((-1e10, 1e10), (-1e10, 1e10), 1, 2),
          "power": ((0.01, 30), (-8, 8), 1, None)}
EXACT = ["floor", "ceil", "trunc", "rint", "fabs"]


def _apply(names: list[str], arity: int):
    """One kernel applying np.<name> i to argument(s) i."""
    fns = [getattr(np, name) for name in names]
    return lambda *xs: tuple(f(*xs[arity * i:arity * (i + 1)]) for i, f in enumerate(fns))


def _binary(dtype: str) -> list[str]:
    return [n for n in BINARY if BINARY[n][3 if dtype == "float64" else 2] is not None]


@pytest.mark.slow
@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_math_within_ulp_bounds(target: str, dtype: str) -> None:
    """Every function on a dense sweep of its domain (EGGLOG_TENSOR_ULP_SWEEP points), emulated, within
    its bound of the reference; NaN exactly where the reference's is; the code passes the tools' checks."""
    unary, binary = sorted(UNARY), _binary(dtype)
    xs = [_sweep(*UNARY[n][0], SWEEP, dtype) for n in unary]
    rng = np.random.default_rng(1)
    pairs = [a for n in binary for a in (_sweep(*BINARY[n][0], SWEEP, dtype), rng.permutation(_sweep(*BINARY[n][1], SWEEP, dtype)))]
    comp = et.kernel(lambda *a: _apply(unary, 1)(*a[:len(unary)]) + _apply(binary, 2)(*a[len(unary):]), target=target).inspect(*xs, *pairs)
    check_device_code(comp)
    got = emulate(comp, *xs, *pairs)
    wide = np.float64 if dtype == "float32" else np.longdouble
    column = 1 if dtype == "float32" else 2
    with np.errstate(all="ignore"):
        refs = [getattr(np, n)(x.astype(wide)) for n, x in zip(unary, xs, strict=True)]
        refs += [getattr(np, n)(pairs[2 * i].astype(wide), pairs[2 * i + 1].astype(wide)) for i, n in enumerate(binary)]
    bounds = [UNARY[n][column] for n in unary] + [BINARY[n][column + 1] for n in binary]
    errors = {n: max_ulp(g, r, dtype) for n, g, r in zip(unary + binary, got, refs, strict=True)}
    assert {n: e for n, e, b in zip(errors, errors.values(), bounds, strict=True) if e > b} == {}, errors
    for n, g, r in zip(unary + binary, got, refs, strict=True):
        assert np.array_equal(np.isnan(g), np.isnan(r.astype(dtype))), n


@pytest.mark.parametrize("target", TARGETS)
def test_float32_math_in_float32(target: str) -> None:
    """float32 exp, tanh and log have no float64 instruction (FP64 runs at 1/32-1/64 rate on consumer
    GPUs); sin and cos are float32 below |x| = 105615 and the float64 code beyond (an scf.if): both
    arms emulated against NumPy on points of each side."""
    x = np.concatenate([_sweep(-1e4, 1e4, 2048, "float32"), _sweep(1e5, 1e9, 512, "float32")])
    positive = np.abs(x) + np.float32(1e-30)
    fn = _apply(["exp", "tanh", "log", "sin", "cos"], 1)
    args = (x / np.float32(100), x / np.float32(500), positive, x, x)
    comp = et.kernel(fn, target=target).inspect(*args)
    check_device_code(comp)
    f64 = re.compile(r"\bf64\b")
    math = comp.stage("math")
    assert {name.removeprefix("math.") for name in FLOAT32} | {"exp", "tanh", "sqrt"} == FLOAT32_MATH  # (what the cost model prices so)
    kernels = re.split(r"gpu\.module", math)[1:]  # one kernel per function
    assert len(kernels) == 5 and math.count("scf.if") == 2
    assert sum(bool(f64.search(kernel)) for kernel in kernels) == 2  # only sin's and cos's float64 arms
    with np.errstate(all="ignore"):
        for name, got, arg in zip(["exp", "tanh", "log", "sin", "cos"], emulate(comp, *args), args, strict=True):
            assert max_ulp(got, getattr(np, name)(arg.astype(np.float64)), "float32") <= UNARY[name][1], name


@pytest.mark.slow
@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_math_special_values(target: str, dtype: str) -> None:
    """NaN, +-inf, signed zeros, subnormals, domain edges and huge arguments: NaN, infinities and zeros
    (with their signs) where NumPy has them, other values within 4 ULP; the rounding functions bit-exact.
    sin/cos/tan are NaN from |x| = 2^50 on (not NumPy's: docs/gpu.md)."""
    names = ["log", "log1p", "expm1", "sin", "cos", "tan", "arctan", "arcsin", "cbrt", "sinh", "tanh", "arcsinh", *EXACT]
    x = _special(dtype, 2.0**60, -3.5, 0.49999997)
    comp = et.kernel(_apply(names, 1), target=target).inspect(*[x] * len(names))
    check_device_code(comp)
    got = emulate(comp, *[x] * len(names))
    with np.errstate(all="ignore"):
        for name, g in zip(names, got, strict=True):
            want = getattr(np, name)(x)
            if name in ("sin", "cos", "tan"):
                want = np.where(np.abs(x) < 2.0**50, want, np.nan)
            if name in EXACT:
                assert np.array_equal(g, want, equal_nan=True) and np.array_equal(np.signbit(g), np.signbit(want)), name
                continue
            exact = ~np.isfinite(want) | (want == 0)
            assert np.array_equal(g[exact], want[exact], equal_nan=True), (name, x[exact], g[exact], want[exact])
            assert np.array_equal(np.signbit(g[want == 0]), np.signbit(want[want == 0])), name
            assert max_ulp(g, getattr(np, name)(x.astype(np.longdouble)), dtype) <= 4, name


@pytest.mark.parametrize("target", TARGETS)
def test_power_special_values(target: str) -> None:
    """float32 power: C's special cases (x ** 0, 1 ** y, (-1) ** inf, negative bases with integer and other exponents, zeros, infinities)."""
    values = _special("float32", 3.0, -3.0, 0.25)
    x, y = np.meshgrid(values, values)
    comp = et.kernel(lambda x, y: x ** y, target=target).inspect(x, y)
    (got,) = emulate(comp, x, y)
    with np.errstate(all="ignore"):
        want = np.power(x, y)
    exact = ~np.isfinite(want) | (want == 0)
    signed = ~np.isnan(want)
    assert np.array_equal(got[exact], want[exact], equal_nan=True)
    assert np.array_equal(np.signbit(got[signed & exact]), np.signbit(want[signed & exact]))
    assert np.allclose(got[~exact], want[~exact], rtol=2e-7)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("fn, what", [(lambda x, y: x ** y, "float64 power"), (lambda x, y: np.fmod(x, y), "fmod or a float %")], ids=["power", "fmod"])
def test_unsupported_math_names_function_and_target(target: str, fn, what: str) -> None:
    x = np.linspace(1, 2, 64)
    with pytest.raises(et.UnsupportedError, match=rf"GPU target {target.split(':')[0]}: {what}"):
        et.kernel(fn, target=target).inspect(x, x)


def _ties_and_nans(dtype: str) -> np.ndarray:
    """Rows with repeated maxima and minima (the first index must win), NaNs (the first NaN wins), -0.0 beside 0.0."""
    rng = np.random.default_rng(3)
    x = rng.integers(-3, 4, size=(37, 300)).astype(dtype)
    x[5, [7, 100, 250]] = np.nan
    x[9, :] = 0.0
    x[9, 4] = -0.0
    x[11, 299] = np.nan
    return x


def _arg_reductions(x):
    return np.argmax(x, axis=-1), np.argmin(x, axis=-1), np.argmax(x), np.argmin(x)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("dtype", ["float32", "int32"])
def test_arg_reductions(target: str, dtype: str) -> None:
    """argmax/argmin along the last axis (a thread per row) and flattened (a thread per row, then one
    thread among the rows' bests) equal NumPy's: ties give the first index, NaN wins; the same kernels
    on the NaN-free data too."""
    x = _ties_and_nans(dtype) if dtype == "float32" else np.random.default_rng(4).integers(-3, 4, size=(37, 300)).astype(dtype)
    comp = et.kernel(_arg_reductions, target=target).inspect(x)
    check_device_code(comp)
    assert [(k.grid, k.block) for k in comp.facts["device"].kernels] == [((1, 1, 1), (64, 1, 1))] * 2 + [((1, 1, 1), (64, 1, 1)), ((1, 1, 1), (1, 1, 1))] * 2
    for data in (x, np.nan_to_num(x, nan=1.5)):
        for got, want in zip(emulate(comp, data), _arg_reductions(data), strict=True):
            assert np.array_equal(got, want)


@pytest.mark.parametrize("target", TARGETS)
def test_flat_arg_reductions_of_1d(target: str) -> None:
    """A 1-D argmax as rows of its largest divisor up to its square root (1000: 25 x 40), a thread per
    row then one over the rows; a prime length (997) in one thread; ties and NaN as NumPy."""
    rng = np.random.default_rng(6)
    x, y = rng.integers(-5, 6, 1000).astype(np.float32), rng.integers(-5, 6, 997).astype(np.float32)
    x[[300, 700]] = np.nan

    def fn(x, y):
        return np.argmax(x), np.argmin(y), np.argmax(y)

    comp = et.kernel(fn, target=target).inspect(x, y)
    check_device_code(comp)
    kernels = comp.facts["device"].kernels
    assert kernels[0].block[0] >= 25 and [k.block for k in kernels[1:]] == [(1, 1, 1)] * 3  # 25 rows; then one-thread kernels
    for data in ((x, y), (np.nan_to_num(x), y)):
        assert [int(v) for v in emulate(comp, *data)] == [int(v) for v in fn(*data)]


@pytest.mark.parametrize("target", TARGETS)
def test_any_all(target: str) -> None:
    """np.any / np.all along rows (a thread per row) and over everything (one thread)."""
    x = np.random.default_rng(5).standard_normal((64, 257)).astype(np.float32)

    def fn(x):
        return np.any(x > 2.5, axis=1), np.all(x > -3.5, axis=1), np.any(x > 3.0), np.all(x > -5.0), np.any(x > 50.0)

    comp = et.kernel(fn, target=target).inspect(x)
    check_device_code(comp)
    for got, want in zip(emulate(comp, x), fn(x), strict=True):
        assert np.array_equal(got, want)
