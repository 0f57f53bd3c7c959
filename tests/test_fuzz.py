"""Differential fuzzing: random NumPy programs (tests/fuzz_programs.py) compiled three ways and
compared with NumPy under the oracle of tests/fuzz_oracle.py.

Configurations: the default rules; every exact ruleset at once (`algebra | fusion | layout |
tiling` in one step instead of DEFAULT's sequence), both held to the exact oracle (bit equality
where IEEE-754 fixes the bits, identical NaN/inf positions, the error bound elsewhere); and
`fastmath=True` on finite data, compared on elements finite in both results. And the default
rules with every output eligible for streaming stores (lowering/nontemporal.py's threshold at 0
bytes), so the versioned loop nests of all program shapes run, in whichever branch each output's
address takes. And scipy.special's functions, a few per parametrized case, among elementwise ops (default rules).

CI runs a fixed (derandomized) set of programs. A long run draws fresh random programs:
`EGGLOG_TENSOR_FUZZ_EXAMPLES=5000 python -m pytest -q -m slow tests/test_fuzz.py` (per test function;
`--hypothesis-seed=N` repeats a run's draw, distinct seeds give chunks of distinct programs).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np
from fuzz_oracle import Approx, Tie, check_result, evaluate
from fuzz_programs import (INDEXED_KINDS, LONG_RUN, NARROW, NEWER_KINDS, SPECIAL_GROUPS, WITH_NARROW, Program, Step, arguments,
                           fuzz_settings, programs, special_kinds)
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

import egglog_tensor as et
from egglog_tensor.lowering.pipelines import resolve_target
from egglog_tensor.rulesets import algebra, fusion, layout, tiling

# minutes long: .ci/run runs it after the default run; a long run's test takes ~1-3 s a program, so its
# timeout (pyproject.toml's 900 s for a whole test) grows with the programs it draws
pytestmark = [pytest.mark.slow, pytest.mark.timeout(900 + 30 * LONG_RUN)]

CONFIGS: dict[str, dict[str, Any]] = {
    "default": {},
    "all-exact": {"rules": algebra | fusion | layout | tiling},
    "fastmath": {"fastmath": True},
    # every output eligible for streaming: no last-level cache (stages.loops.min_bytes is a quarter of L3)
    "streamed": {"cache": False, "target": replace(resolve_target(None), l3=0)},
}


def expected(program: Program, args: list[np.ndarray], fast: bool = False) -> list[Approx]:
    """NumPy's result with its bounds (`fast`: under fast math); data hitting the documented signed-zero
    max/min tie is skipped."""
    try:
        return evaluate(program, args, fast)
    except Tie:
        assume(False)
        raise


def run(program: Program, args: list[np.ndarray], config: str) -> Any:
    """Compile program with one configuration and call it; the arguments must come back untouched."""
    before = [a.copy() for a in args]
    got = et.kernel(program.function(), **CONFIGS[config])(*args)
    for a, b in zip(args, before, strict=True):
        assert np.array_equal(a, b, equal_nan=True), "the kernel wrote to an argument"
    return got


def differential(program: Program, args: list[np.ndarray], configs: tuple[str, ...], fast: bool) -> None:
    want = expected(program, args, fast)
    for config in configs:
        try:
            check_result(run(program, args, config), want, fast=fast)
        except Exception as e:
            raise AssertionError(f"[{config}] {type(e).__name__}: {e}\nprogram:\n{program.source()}\nargs:\n"
                                 + "\n".join(f"  x{i} = np.{a!r}" for i, a in enumerate(args))) from e


@fuzz_settings(110)
@given(program=programs(), data=st.data())
def test_fuzz_exact(program: Program, data: st.DataObject) -> None:
    """Default and all-exact rules against NumPy on data with NaN, inf, signed zeros, denormals, huge values."""
    differential(program, data.draw(arguments(program)), ("default", "all-exact"), fast=False)


@fuzz_settings(40)
@given(program=programs(kinds=NEWER_KINDS, dtypes=WITH_NARROW), data=st.data())
def test_fuzz_newer(program: Program, data: st.DataObject) -> None:
    """Programs mostly of the newer surface (einsum, N-D matmul, statistics, shape functions, gathers,
    arrays made in the kernel, in-place updates, syr2k's shared epilogue), float16 arguments too,
    under the default and all-exact rules."""
    differential(program, data.draw(arguments(program)), ("default", "all-exact"), fast=False)


@fuzz_settings(40)
@given(program=programs(kinds=INDEXED_KINDS), data=st.data())
def test_fuzz_indexed(program: Program, data: st.DataObject) -> None:
    """Arrays made in the kernel from array indices (np.arange or np.linspace along an axis, np.eye; broadcast, with 8 or
    12 rows too) read by scans along each axis, reductions, arg-reductions and sorts, among elementwise glue, under the
    default rules. The kernel computes them from its loops' indices, which blocked and interleaved paths renumber: the
    interleaved row scan gave every block of 4 rows of a broadcast np.arange its first row's values (fixed in 4549dbc;
    with that fix reverted, this test fails)."""
    differential(program, data.draw(arguments(program)), ("default",), fast=False)


@pytest.mark.parametrize("ops", SPECIAL_GROUPS, ids="-".join)
@fuzz_settings(5)
@given(data=st.data())
def test_fuzz_special(ops: tuple[str, ...], data: st.DataObject) -> None:
    """Programs of a few of scipy.special's functions (poles, domain edges and all) among elementwise ops, constants,
    where and reductions, float16 arguments too, under the default rules."""
    program = data.draw(programs(kinds=special_kinds(ops), dtypes=WITH_NARROW))
    differential(program, data.draw(arguments(program)), ("default",), fast=False)


@fuzz_settings(20)
@given(program=programs(dtypes=NARROW), data=st.data())
def test_fuzz_narrow(program: Program, data: st.DataObject) -> None:
    """The mixed pool on float16 and bfloat16 arguments (each op in float32, rounded back) under the default rules."""
    differential(program, data.draw(arguments(program)), ("default",), fast=False)


@fuzz_settings(100)
@given(program=programs(), data=st.data())
def test_fuzz_fastmath(program: Program, data: st.DataObject) -> None:
    """fastmath=True on finite data, compared where both results are finite."""
    differential(program, data.draw(arguments(program, finite=True)), ("fastmath",), fast=True)


@fuzz_settings(60)
@given(program=programs(), data=st.data())
def test_fuzz_streamed(program: Program, data: st.DataObject) -> None:
    """Every output eligible for streaming stores, held to the exact oracle."""
    differential(program, data.draw(arguments(program)), ("streamed",), fast=False)


# --- the oracle itself: it must reject what it is meant to catch ------------------------------

_ORACLE_PROGRAM = Program(
    inputs=(((4,), "float32"), ((4,), "float32")),
    steps=(Step("add", (0, 1)), Step("exp", (2,)), Step("reciprocal", (0,))),
    outputs=(2, 3, 4),
)
_ORACLE_ARGS = [np.array([1.5, -0.0, np.nan, 3e38], np.float32), np.array([0.25, -0.0, 1.0, 3e38], np.float32)]


def _perturbed(k: int, i: Any, value: float, program: Program = _ORACLE_PROGRAM, args: list | None = None) -> tuple:
    """NumPy's results with element i of output k set to `value`, which must change its bits."""
    got = [np.asarray(w.value).copy() for w in evaluate(program, args or _ORACLE_ARGS)]
    before = got[k][i].copy()
    got[k][i] = value
    assert got[k][i].tobytes() != before.tobytes(), f"{value!r} is no perturbation of {before!r}"
    return tuple(got)


def test_oracle_accepts_numpy() -> None:
    """NumPy's own results pass; the same results with one exact element really changed do not,
    and an inexact one (exp) moved by one ULP, within its error bound, still does."""
    expected = evaluate(_ORACLE_PROGRAM, _ORACLE_ARGS)
    check_result(tuple(np.asarray(w.value).copy() for w in expected), expected)
    with pytest.raises(AssertionError, match="differ from NumPy"):
        check_result(_perturbed(0, 0, 2.0), expected)  # 1.5 + 0.25 is exactly 1.75
    one_ulp = np.nextafter(np.exp(np.float32(1.75)), np.float32(np.inf))
    check_result(_perturbed(1, 0, one_ulp), expected)


@pytest.mark.parametrize(
    ("k", "i", "value", "why"),
    [
        (0, 0, np.nextafter(np.float32(1.75), np.float32(2)), "one ULP off an exact sum"),
        (0, 1, 0.0, "+0.0 for an exact -0.0"),
        (0, 2, 1.0, "a finite value for NaN"),
        (0, 3, 3.4e38, "a finite value for an exact overflow to inf"),
        (1, 0, np.exp(np.float32(1.75)) * 1.001, "exp off by 0.1%"),
        (2, 1, np.inf, "+inf for 1/-0.0"),
    ],
)
def test_oracle_rejects(k: int, i: int, value: float, why: str) -> None:
    with pytest.raises(AssertionError, match="differ from NumPy"):
        check_result(_perturbed(k, i, value), evaluate(_ORACLE_PROGRAM, _ORACLE_ARGS))


def test_oracle_skips_signed_zero_ties() -> None:
    tie = Program(inputs=(((2,), "float64"),) * 2, steps=(Step("maximum", (0, 1)),), outputs=(2,))
    with pytest.raises(Tie):
        evaluate(tie, [np.array([0.0, 1.0]), np.array([-0.0, 2.0])])


_NEWER_PROGRAM = Program(
    inputs=(((3, 4), "float64"), ((3, 4), "float32")),
    steps=(Step("einsum", (0, 1), ("ij,ij->i",)), Step("statistic", (1,), ("argmax", 1, False)),
           Step("statistic", (0,), ("var", None, False)), Step("einsum", (1,), ("ij->ji",)),
           Step("gram", (0,)), Step("syr2k", (0, 1, 6), (1.5, -0.5))),
    outputs=(2, 3, 4, 5, 7),
)
_NEWER_ARGS = [np.arange(12.0).reshape(3, 4) / 7, np.array([[1, 5, 5, 2], [0, -1, -3, -1], [9, 8, 7, 6]], np.float32)]


def test_oracle_accepts_numpy_on_the_newer_surface() -> None:
    expected = evaluate(_NEWER_PROGRAM, _NEWER_ARGS)
    check_result(tuple(np.asarray(w.value).copy() for w in expected[:2]) + (expected[2].value[()],)
                 + tuple(np.asarray(w.value).copy() for w in expected[3:]), expected)


@pytest.mark.parametrize(
    ("k", "i", "value", "why"),
    [
        (0, 0, 0.0, "a contraction off"),
        (1, 0, 2.0, "the first of tied maxima's index for the second's"),
        (2, (), 1.01 * np.var(_NEWER_ARGS[0]), "var off by 1%"),
        (3, (1, 0), np.nextafter(np.float32(5), np.float32(6)), "one ULP off a transpose"),
        (4, (2, 2), 0.0, "the masked epilogue off on the diagonal"),
        (4, (0, 2), 1.0, "the epilogue's mask: C above the diagonal"),
    ],
)
def test_oracle_rejects_on_the_newer_surface(k: int, i: Any, value: float, why: str) -> None:
    got = _perturbed(k, i, value, _NEWER_PROGRAM, _NEWER_ARGS)
    got = got[:2] + (got[2][()],) + got[3:]
    with pytest.raises(AssertionError, match="differ from NumPy"):
        check_result(got, evaluate(_NEWER_PROGRAM, _NEWER_ARGS))


_INDEXED_PROGRAM = Program(
    inputs=(((3, 4), "float32"),),
    steps=(Step("indexed", (), ("linspace", (8, 3), 0, "float32")), Step("scan", (1,), ("cumsum", 1)),
           Step("sort", (0,), (1,)), Step("indexed", (), ("eye", (2, 4, 3), -1, "float64"))),
    outputs=(1, 2, 3, 4),
)
_INDEXED_ARGS = [np.array([[1, -0.0, 0.0, -2], [np.nan, 3, 1, 1], [5, -1, np.inf, 0]], np.float32)]


def test_oracle_accepts_numpy_on_indexed_arrays_and_sorts() -> None:
    """Arrays made from array indices, a row scan of one, a sort (NaN last; a zero's sign left open: -0.0 and 0.0 tie)."""
    expected = evaluate(_INDEXED_PROGRAM, _INDEXED_ARGS)
    got = tuple(np.asarray(w.value).copy() for w in expected)
    check_result(got, expected)
    got[2][0, 1:3] = got[2][0, 2:0:-1]  # the tied zeros the other way round
    check_result(got, expected)


@pytest.mark.parametrize(
    ("k", "i", "value", "why"),
    [
        (0, (5, 0), np.linspace(-1, 1, 8, dtype=np.float32)[5] + 1e-5, "linspace 80 ULP off"),
        (1, (5, 2), 3 * np.float32(np.linspace(-1, 1, 8)[4]), "a row scan given its block of 4 rows' first row's values"),
        (2, (0, 0), 1.0, "a sort's order"),
        (2, (1, 3), 3.0, "NaN not sorted last"),
        (3, (1, 1, 0), 0.0, "eye's diagonal"),
    ],
)
def test_oracle_rejects_on_indexed_arrays_and_sorts(k: int, i: Any, value: float, why: str) -> None:
    with pytest.raises(AssertionError, match="differ from NumPy"):
        check_result(_perturbed(k, i, value, _INDEXED_PROGRAM, _INDEXED_ARGS), evaluate(_INDEXED_PROGRAM, _INDEXED_ARGS))


def test_oracle_leaves_a_regrouped_einsums_non_finite_values_open() -> None:
    """A 3-operand einsum's factor may be taken out of its sum (NumPy leaves the order open): with an inf
    among the factors NumPy's inf * 0 = NaN can come out inf. Found by a long run; the kernel's value is
    held to NumPy's where it is finite."""
    x = np.array([[[-8.287017, -5.2637897, 6.0254893, -np.inf], [-0.0, -1.3374612, -0.41897404, -0.0],
                   [5.0, -7.7265596, -2.1754363, 0.33480364]]], np.float32)
    program = Program(inputs=(((1, 3, 4), "float32"),), steps=(Step("einsum", (0, 0, 0), ("...ab,...b,...c",)),),
                      outputs=(1,))
    (want,) = evaluate(program, [x])
    assert np.isnan(want.value[0, 0, 2, 3]) and np.isinf(want.err[0, 0, 2, 3])
    check_result(et.kernel(program.function(), cache=False)(x), [want])


def test_oracle_under_fast_math_leaves_what_reads_a_nan_open() -> None:
    """Under fast math (nnan) the std of an empty slice, NaN, makes a comparison with it undefined: a
    long run's kernel chose neither of np.where's operands there. Exact, the NaN compares false."""
    program = Program(inputs=(((1, 1, 3), "float32"), ((1, 1, 3), "float32")),
                      steps=(Step("getitem", (0,), ((None, 0, slice(2, None), slice(None)),)),
                             Step("statistic", (2,), ("std", None, False)), Step("absolute", (0,)),
                             Step("where", (3, 4, 1, 4), ("less_equal",))),
                      outputs=(5,))
    args = [np.array([[[-0.0, -3.7237146, -7.576058]]], np.float32), np.array([[[1.2749044, -3.7856815, 5.1560397]]], np.float32)]
    (exact,), (fast,) = evaluate(program, args), evaluate(program, args, fast=True)
    assert np.isfinite(exact.err).all() and np.isinf(fast.err).all() and not fast.exact.any()
    check_result(et.kernel(program.function(), cache=False)(*args), [exact])


def test_oracle_under_fast_math_gives_round_with_decimals_an_ulp() -> None:
    """Under fast math (arcp) np.round(x, 2)'s unscaling x / 100 may be x * 0.01: a long run (seed 2902) got
    2.1299999 for NumPy's 2.13. The oracle allows that ULP under fast math only; exact, round is bit for bit."""
    program = Program(inputs=(((4,), "float32"),), steps=(Step("round", (0,), (2,)),), outputs=(1,))
    args = [np.array([2.1327155, 4.589931, 7.1480856, -0.0], np.float32)]
    (exact,), (fast,) = evaluate(program, args), evaluate(program, args, fast=True)
    assert exact.exact.all() and not exact.err.any() and (fast.err > 0).all()
    off = np.nextafter(exact.value, np.float32(np.inf))
    check_result(off, [fast], fast=True)
    with pytest.raises(AssertionError, match="differ from NumPy"):
        check_result(off, [exact])
    check_result(et.kernel(program.function(), cache=False, fastmath=True)(*args), [fast], fast=True)


def test_oracle_leaves_an_einsum_factored_out_of_its_sum_open_on_infs() -> None:
    """'ab,cd->bdc' sums a over the first operand alone: the kernel may sum it first and multiply after (the
    order NumPy leaves open: einsum(optimize=True) does), turning -inf * 3 + -inf * -9.67's NaN into inf
    (a long run, seed 2902). Non-finite values that an inf reaches are left open there, finite ones held."""
    x = np.array([[3.0, -4.6, -np.inf], [-9.67, 6.27, 8.0], [2.0, 4.59, 0.87], [-np.inf, 6.32, -9.95], [7.15, -9.33, 4.59]], np.float32)
    program = Program(inputs=(((5, 3), "float32"),), steps=(Step("einsum", (0, 0), ("ab,cd->bdc",)),), outputs=(1,))
    (want,) = evaluate(program, [x])
    assert np.isnan(want.value).any() and np.isinf(want.err[np.isnan(want.value)]).all()
    assert np.isfinite(want.err[np.isfinite(want.value)]).all()
    check_result(et.kernel(program.function(), cache=False)(x), [want])


def test_oracle_leaves_the_sign_of_a_computed_nan_open_to_copysign() -> None:
    """copysign(x, v) of a NaN v that a product made: NumPy's float16 matmul gave -NaN, the kernel +NaN (a long
    run, narrow seed 3001); IEEE-754 leaves a NaN result's sign open. The sign of a NaN argument, or of its
    exact negation, stays held bit for bit."""
    x = np.array([[3.0, np.nan, -9.18]], np.float16)
    products = Program(inputs=(((1, 3), "float16"),), steps=(
        Step("negative", (0,), ()), Step("products", (0, 1), ("add", False)), Step("copysign", (0, 2), ())), outputs=(3,))
    (open_,) = evaluate(products, [x])
    assert np.isinf(open_.err).all()
    check_result(-open_.value, [open_])
    negated = Program(inputs=(((1, 3), "float16"),), steps=(Step("negative", (0,), ()), Step("copysign", (0, 1), ())), outputs=(2,))
    (held,) = evaluate(negated, [x])
    assert not held.err[np.isfinite(held.value)].any()
    with pytest.raises(AssertionError, match="differ from NumPy"):
        check_result(-held.value, [held])
    check_result(et.kernel(products.function(), cache=False)(x), [open_])


_SPECIAL_PROGRAMS = [
    (Program(inputs=(((6,), "float64"),),
             steps=(Step("gammaln", (0,)), Step("psi", (0,)), Step("multiply_scalar", (0,), (0.1, False)), Step("gammaln", (3,)),
                    Step("gammainc", (0, 3))),
             outputs=(1, 2, 4, 5)),
     [np.array([2.5, -3.0, 1e-320, -10.0, 0.75, np.nan])]),
    (Program(inputs=(((5,), "float64"),),
             steps=(Step("multiply_scalar", (0,), (0.1, False)), Step("erfinv", (1,)), Step("ndtri", (1,)), Step("i0e", (0,)),
                    Step("i1e", (0,)), Step("exp1", (0,)), Step("expi", (1,))),
             outputs=(2, 3, 4, 5, 6, 7)),
     [np.array([10.0, -3.0, 2.5, 0.0, np.nan])]),
]


def test_oracle_bounds_scipy_special() -> None:
    """scipy.special's functions: NumPy's (SciPy's) own results pass, as does libm's finite lgamma of a denormal where
    SciPy's Cephes gives inf, and anything where an inexact argument (0.1 * -10, 0.1 * 10) may sit on a pole of Gamma
    or the end of erfinv's domain; each program compiled as the kernel does passes too."""
    for program, args in _SPECIAL_PROGRAMS:
        expected = evaluate(program, args)
        check_result(tuple(np.asarray(w.value).copy() for w in expected), expected)
        check_result(et.kernel(program.function(), cache=False)(*args), expected)
    (program, args), (program2, args2) = _SPECIAL_PROGRAMS
    expected, expected2 = evaluate(program, args), evaluate(program2, args2)
    assert np.isinf(expected[2].err[3]) and np.isfinite(expected[3].err[3])  # gammaln at a pole; gammainc's x-slope is finite
    check_result(_perturbed(0, 2, 736.8272408909233, program, args), expected)
    check_result(_perturbed(2, 3, 1.0, program, args), expected)
    check_result(_perturbed(0, 0, 5.0, program2, args2), expected2)


@pytest.mark.parametrize(
    ("which", "k", "i", "value", "why"),
    [
        (0, 0, 0, 0.28468287047291926 * (1 + 1e-12), "gammaln off by 1e-12"),
        (0, 0, 1, 1e300, "a finite value for gammaln's inf at a pole"),
        (0, 1, 1, 0.0, "a number for psi's NaN at a pole"),
        (0, 1, 4, -1.0858608797864722 * (1 + 1e-12), "psi off by 1e-12"),
        (0, 3, 4, 0.15104278455571363 * (1 + 1e-12), "gammainc off by 1e-12"),
        (1, 0, 1, -0.27246271 * (1 + 1e-8), "erfinv off"),
        (1, 1, 2, -0.67448975 * (1 + 1e-8), "ndtri off"),
        (1, 2, 0, 0.12783334 * (1 + 1e-8), "i0e off"),
        (1, 3, 1, -0.19682671 * (1 + 1e-8), "i1e off"),
        (1, 4, 1, 0.0, "a number for exp1's NaN below 0"),
        (1, 4, 3, 1e300, "a finite value for exp1's inf at 0"),
        (1, 5, 2, -0.54254326 * (1 + 1e-8), "expi off"),
    ],
)
def test_oracle_rejects_scipy_special(which: int, k: int, i: int, value: float, why: str) -> None:
    program, args = _SPECIAL_PROGRAMS[which]
    with pytest.raises(AssertionError, match="differ from NumPy"):
        check_result(_perturbed(k, i, value, program, args), evaluate(program, args))
