"""Shared helpers of the numeric tests: hypothesis strategies for shapes, dtypes, data and memory
layouts, and `check`, which compiles a NumPy function with `@kernel` and compares it with NumPy.

Data comes from a drawn seed through NumPy's generator (fast, and easy to shape per op: positive
only, with zeros, with NaN/inf, small integers...), layouts from real views of real buffers.
"""

from __future__ import annotations

import itertools
import math
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pytest
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import egglog_tensor as et

FLOATS = ("float32", "float64")
INTS = ("int32", "int64")
NUMERIC = FLOATS + INTS
ALL_DTYPES = NUMERIC + ("bool",)
LAYOUTS = ("C", "F", "strided", "negative")


def threaded(threads: int) -> Any:
    """The cpu-openmp Target on `threads` threads that splits a program however small (Tuning.serial_below_ns=0:
    for tests of the splits themselves; by default a program priced under 20 us runs on one thread)."""
    from dataclasses import replace

    from egglog_tensor.lowering.pipelines import resolve_target

    target = resolve_target("cpu-openmp", threads)
    return replace(target, tuning=replace(target.tuning, serial_below_ns=0))


def sweep(values: Any, default: Any) -> list[Any]:
    """`values` as pytest parameters, those not in `default` marked slow: the default run covers a sweep's
    main cases, the slow run (.ci/run) all of them."""
    return [v if v in default else pytest.param(v, marks=pytest.mark.slow) for v in values]


def covering(**axes: Sequence[Any]) -> tuple[str, list[Any]]:
    """parametrize's (names, cases) for every combination of the axes' values, all but a covering few marked slow:
    the default run takes case k = (each axis's value k mod its length) for k below the longest axis's length,
    which holds every value of every axis once; the slow run (.ci/run) takes the rest."""
    names, values = list(axes), [list(v) for v in axes.values()]
    kept = {tuple(v[k % len(v)] for v in values) for k in range(max(map(len, values)))}
    cases = [c if c in kept else pytest.param(*c, marks=pytest.mark.slow) for c in itertools.product(*values)]
    return ",".join(names), cases

# --- shapes ---------------------------------------------------------------------------------


def shapes(min_dims: int = 0, max_dims: int = 3, min_side: int = 0, max_side: int = 5) -> st.SearchStrategy:
    """Array shapes, size-0 and size-1 dims included unless min_side says otherwise."""
    return hnp.array_shapes(min_dims=min_dims, max_dims=max_dims, min_side=min_side, max_side=max_side)


def broadcast_pairs(min_dims: int = 0, max_dims: int = 3, min_side: int = 0, max_side: int = 4) -> st.SearchStrategy:
    """Pairs of shapes that broadcast together (NumPy's rules), as ((shape_a, shape_b), result)."""
    return hnp.mutually_broadcastable_shapes(
        num_shapes=2, min_dims=min_dims, max_dims=max_dims, min_side=min_side, max_side=max_side
    ).map(lambda b: (b.input_shapes, b.result_shape))


def dtypes(choices: tuple[str, ...] = ALL_DTYPES) -> st.SearchStrategy:
    return st.sampled_from(choices)


layouts = st.sampled_from(LAYOUTS)

# --- data -----------------------------------------------------------------------------------


def make_array(seed: int, dtype: str, shape: tuple[int, ...], *, lo: float = -10, hi: float = 10,
               special: bool = False, zeros: bool = True, integral: bool = False) -> np.ndarray:
    """Random C-ordered data of `dtype` in [lo, hi]; floats may hold exact zeros (both signs),
    integral values (ties for max/min, exact floor division) and, when `special`, NaN and +-inf.
    zeros=False: no float zeros at all."""
    rng = np.random.default_rng(seed)
    if dtype == "bool":
        return rng.random(shape) < 0.5
    if dtype in INTS:
        a = rng.integers(int(math.ceil(lo)), int(math.floor(hi)) + 1, size=shape)
        return a.astype(dtype)
    a = rng.uniform(lo, hi, size=shape)
    if integral:
        a = np.round(a)
    else:
        mask = rng.random(shape) < 0.2  # some integral values: ties, exact quotients
        a = np.where(mask, np.round(a), a)
    if zeros and lo <= 0 <= hi:
        a = np.where(rng.random(shape) < 0.1, np.where(rng.random(shape) < 0.5, 0.0, -0.0), a)
    elif not zeros:
        a = np.where(a == 0, 1.0, a)  # no zeros at all (rounding makes some)
    if special:
        pick = rng.random(shape)
        a = np.where(pick < 0.05, np.nan, a)
        a = np.where((pick >= 0.05) & (pick < 0.08), np.inf, a)
        a = np.where((pick >= 0.08) & (pick < 0.11), -np.inf, a)
    return np.array(a, dtype=dtype, order="C")  # (np.ascontiguousarray would make 0-d arrays 1-d)


def with_layout(a: np.ndarray, layout: str) -> np.ndarray:
    """The same values as `a`, in Fortran order, as a step-2 strided view, or with negative strides."""
    if a.ndim == 0 or layout == "C":
        return np.array(a, order="C")
    if layout == "F":
        return np.asfortranarray(a)
    every = (slice(None, None, 2),) * a.ndim
    if layout == "strided":
        buf = np.zeros(tuple(2 * d for d in a.shape), dtype=a.dtype)
        buf[every] = a
        out = buf[every]
    elif layout == "negative":
        rev = (slice(None, None, -1),) * a.ndim
        out = np.ascontiguousarray(a[rev])[rev]
    else:
        raise ValueError(layout)
    assert out.tobytes() == a.tobytes()  # (the same bits: NaN, -0.0, and bfloat16, which array_equal's equal_nan rejects)
    return out


@st.composite
def arrays(draw: st.DrawFn, dtype: str | st.SearchStrategy, shape: tuple[int, ...] | st.SearchStrategy | None = None,
           *, layout: str | st.SearchStrategy | None = "C", **kw: Any) -> np.ndarray:
    """An array of `dtype` (a name or a strategy) and `shape` (default: any shape) in a layout
    (default C; pass `layouts` to draw one). Keyword arguments go to make_array."""
    if isinstance(dtype, st.SearchStrategy):
        dtype = draw(dtype)
    if shape is None:
        shape = shapes()
    if isinstance(shape, st.SearchStrategy):
        shape = draw(shape)
    if isinstance(layout, st.SearchStrategy):
        layout = draw(layout)
    seed = draw(st.integers(0, 2**32 - 1))
    return with_layout(make_array(seed, dtype, tuple(shape), **kw), layout or "C")


seeds = st.integers(0, 2**32 - 1)

# --- comparing a kernel with NumPy --------------------------------------------------------------

_KERNELS: dict[Callable[..., Any], et.Kernel] = {}
DEFAULT_RTOL = {"float32": 1e-5, "float64": 1e-12}
DEFAULT_ATOL = {"float32": 1e-6, "float64": 1e-13}


def kernel_of(fn: Callable[..., Any]) -> et.Kernel:
    """One Kernel per function object, so a test's repeated signatures compile once."""
    k = _KERNELS.get(fn)
    if k is None:
        k = _KERNELS[fn] = et.kernel(fn)
    return k


def reference(fn: Callable[..., Any], *args: Any) -> Any:
    """fn run eagerly by NumPy, with its floating-point warnings silenced (0/0, log(-1), int // 0)."""
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)
        return fn(*args)


def check(fn: Callable[..., Any], *args: Any, rtol: float | None = None, atol: float | None = None,
          signed_zeros: bool = True) -> Any:
    """Compile `fn`, call it on `args`, and compare with NumPy running `fn(*args)`.

    Same structure (tuple or not; NumPy scalar for 0-d results), same dtype and shape, NaN and
    +-inf in the same places, equal integers and bools, floats within rtol/atol (defaults per
    dtype), and, with `signed_zeros`, zeros of the same sign. Also checks that the kernel did
    not write to its arguments. Returns the kernel's result.
    """
    want = reference(fn, *args)
    before = [np.array(a, copy=True) if isinstance(a, np.ndarray) else None for a in args]
    got = kernel_of(fn)(*args)
    for a, b in zip(args, before, strict=True):
        if b is not None:
            assert np.array_equal(a, b, equal_nan=b.dtype.kind == "f"), "the kernel modified an argument"
    if isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want), f"expected a {len(want)}-tuple, got {type(got).__name__}"
        for i, (g, w) in enumerate(zip(got, want, strict=True)):
            compare(g, w, rtol, atol, signed_zeros, f"output {i}")
    else:
        compare(got, want, rtol, atol, signed_zeros, "result")
    return got


def compare(got: Any, want: Any, rtol: float | None, atol: float | None, signed_zeros: bool, what: str) -> None:
    if isinstance(want, np.ndarray) and want.ndim:
        assert isinstance(got, np.ndarray), f"{what}: expected an ndarray, got {type(got).__name__} {got!r}"
    elif isinstance(want, np.ndarray):
        # NumPy gives 0-d arrays for some 0-d views (a[..., 0], squeeze); kernels return scalars for all 0-d results
        assert isinstance(got, np.generic), f"{what}: expected a NumPy scalar, got {type(got).__name__} {got!r}"
    else:
        assert isinstance(want, np.generic), f"reference returned {type(want).__name__}"
        assert isinstance(got, np.generic), f"{what}: expected a NumPy scalar, got {type(got).__name__} {got!r}"
    g, w = np.asarray(got), np.asarray(want)
    assert g.dtype == w.dtype, f"{what}: dtype {g.dtype}, NumPy gives {w.dtype}"
    assert g.shape == w.shape, f"{what}: shape {g.shape}, NumPy gives {w.shape}"
    if w.dtype.kind != "f":
        if not np.array_equal(g, w):
            bad = np.argwhere(g != w)[:5].tolist()
            raise AssertionError(f"{what}: values differ at {bad}:\n got  {g[tuple(np.transpose(bad))]}\n want {w[tuple(np.transpose(bad))]}\n full got {g}\n full want {w}")
        return
    name = w.dtype.name
    rtol = DEFAULT_RTOL[name] if rtol is None else rtol
    atol = DEFAULT_ATOL[name] if atol is None else atol
    for label, mask in (("NaN", np.isnan), ("+inf", np.isposinf), ("-inf", np.isneginf)):
        gm, wm = mask(g), mask(w)
        assert np.array_equal(gm, wm), f"{what}: {label} positions differ: got {np.argwhere(gm).tolist()[:5]}, want {np.argwhere(wm).tolist()[:5]}\n got {g}\n want {w}"
    finite = np.isfinite(w)
    np.testing.assert_allclose(g[finite], w[finite], rtol=rtol, atol=atol, err_msg=f"{what} (finite values)")
    if signed_zeros:
        zero = w == 0
        assert np.array_equal(np.signbit(g[zero]), np.signbit(w[zero])), f"{what}: signs of zeros differ\n got {g}\n want {w}"
