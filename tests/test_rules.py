"""Every rewrite rule, both sides evaluated on random data, and each one found and chosen by extraction.

Exact rules must agree bit for bit (NaN positions and signed zeros included; integer rules on
wrapping int32/int64 data). Contractions sum the same products in a possibly different order:
rtol 1e-5 (float64). Fast-math rules: rtol 1e-9 on finite float64 inputs away from overflow.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import egglog_tensor as et
from egglog_tensor.rulesets import DEFAULT, FASTMATH, algebra, algebra_fastmath, fusion, layout
from egglog_tensor.rulesets.groups import GROUPS, group_of
from egglog_tensor.target import Target

HOST = Target.host()


@dataclass(frozen=True)
class Case:
    """One rule: lhs and rhs as NumPy functions, argument shapes, the group (rulesets/groups.py) whose
    rules must fire."""

    name: str
    lhs: Callable[..., Any]
    rhs: Callable[..., Any]
    shapes: tuple[tuple[int, ...], ...]
    group: str
    rtol: float = 0.0  # 0: bit-for-bit
    fastmath: bool = False
    positive: bool = False  # inputs drawn > 0 (domain-restricted rules)
    dtype: str = "float64"  # of every argument
    chosen: bool = True  # extraction picks a rewritten term (False: the cost model keeps the lhs at these shapes)


C = Case
EXACT = [
    C("double_transpose", lambda a: a.T.T, lambda a: a, ((3, 4),), "transpose"),
    C("transpose3", lambda a: np.transpose(np.transpose(a, (1, 2, 0)), (2, 0, 1)), lambda a: a, ((2, 3, 4),), "transpose"),
    C("times_one", lambda a: a * 1.0, lambda a: a, ((5,),), "identity"),
    C("one_times", lambda a: 1.0 * a, lambda a: a, ((5,),), "identity"),
    C("div_one", lambda a: a / 1.0, lambda a: a, ((5,),), "identity"),
    C("plus_neg_zero", lambda a: a + -0.0, lambda a: a, ((5,),), "identity"),
    C("minus_zero", lambda a: a - 0.0, lambda a: a, ((5,),), "identity"),
    C("neg_neg", lambda a: -(-a), lambda a: a, ((5,),), "identity"),
    C("square", lambda a: np.square(a), lambda a: a * a, ((6,),), "power", chosen=False),
    C("div_pow2", lambda a: a / 4.0, lambda a: a * 0.25, ((6,),), "exact-division"),
    C("div_neg_half", lambda a: a / -0.5, lambda a: a * -2.0, ((6,),), "exact-division"),
    C("transpose_unary", lambda a: np.exp(a).T, lambda a: np.exp(a.T), ((3, 4),), "transpose-sinking", chosen=False),
    C("transpose_binary", lambda a, b: (a - b).T, lambda a, b: a.T - b.T, ((3, 4), (3, 4)), "transpose-sinking", chosen=False),
    C("transpose_const", lambda a: (a * 3.0).T, lambda a: a.T * 3.0, ((3, 4),), "transpose-sinking", chosen=False),
    C("power_zero", lambda a: a**0, lambda a: np.where(a == a, 1.0, 1.0), ((6,),), "power"),
    C("int_power_one", lambda a: a**1, lambda a: a, ((6,),), "power", dtype="int64"),
    C("int_power5", lambda a: a**5, lambda a: np.square(np.square(a)) * a, ((6,),), "integer-power", dtype="int64"),
    C("int32_power8", lambda a: a**8, lambda a: np.square(np.square(np.square(a))), ((6,),), "integer-power", dtype="int32"),
    C("int_self_difference", lambda a: a - a, lambda a: a * 0, ((2, 3),), "integer-collapse", dtype="int64"),
    C("int_broadcast_sum", lambda a: np.sum(np.broadcast_to(a, (4, 5)), axis=0), lambda a: a * 4, ((5,),), "integer-collapse", dtype="int64"),
    C("int32_broadcast_sum", lambda a: np.sum(np.broadcast_to(a, (4, 5))), lambda a: np.sum(a.astype(np.int64) * 4), ((5,),), "integer-collapse", dtype="int32"),
    C("int_unit_axis_sum", lambda a: np.sum(np.broadcast_to(a[:, None], (5, 3)), axis=1), lambda a: a * 3, ((5,),), "integer-collapse", dtype="int64"),
]
CONTRACTIONS = [
    C("transpose_matmul", lambda a, b: (a @ b).T, lambda a, b: b.T @ a.T, ((3, 4), (4, 5)), "transpose-sinking", rtol=1e-5, chosen=False),
    C("sum_as_matvec", lambda a, x: np.sum(a * x, axis=1), lambda a, x: a @ x, ((6, 7), (7,)), "contraction", rtol=1e-5),
    C("sum_as_dot", lambda a, b: np.sum(a * b), lambda a, b: a @ b, ((9,), (9,)), "contraction", rtol=1e-5),
    C("trace_as_sum", lambda a, b: np.trace(a @ b.T), lambda a, b: np.sum(a * b), ((5, 3), (5, 3)), "contraction", rtol=1e-5),
    C("diagonal_as_rowsum", lambda a, b: np.diagonal(a @ b), lambda a, b: np.sum(a * b.T, axis=1), ((4, 6), (6, 4)), "contraction", rtol=1e-5),
]
FAST = [
    C("matrix_chain", lambda a, b, x: (a @ b) @ x, lambda a, b, x: a @ (b @ x), ((8, 8), (8, 8), (8,)), "reassociation", rtol=1e-9, fastmath=True),
    C("distribute_matmul", lambda a, b, c: a @ b + a @ c, lambda a, b, c: a @ (b + c), ((4, 5), (5, 3), (5, 3)), "reassociation", rtol=1e-9, fastmath=True),
    C("distribute_mul", lambda a, b, c: a * b + a * c, lambda a, b, c: a * (b + c), ((7,), (7,), (7,)), "reassociation", rtol=1e-9, fastmath=True),
    C("log_exp", lambda a: np.log(np.exp(a)), lambda a: a, ((6,),), "domain-restricted", rtol=1e-9, fastmath=True),
    C("exp_log", lambda a: np.exp(np.log(a)), lambda a: a, ((6,),), "domain-restricted", rtol=1e-9, fastmath=True, positive=True),
    C("exp_sum", lambda a, b: np.exp(a) * np.exp(b), lambda a, b: np.exp(a + b), ((6,), (6,)), "domain-restricted", rtol=1e-9, fastmath=True),
    C("reciprocal_mul", lambda a: a / 3.0, lambda a: a * (1.0 / 3.0), ((6,),), "reciprocal", rtol=1e-9, fastmath=True, chosen=False),
    C("const_factors", lambda a: (a * 3.0) * 5.0, lambda a: a * 15.0, ((6,),), "constant-reassociation", rtol=1e-9, fastmath=True, chosen=False),
    C("self_difference", lambda a: a - a, lambda a: a * 0.0, ((2, 3),), "float-collapse", rtol=1e-9, fastmath=True),
    C("broadcast_sum", lambda a: np.sum(np.broadcast_to(a, (4, 5)), axis=0), lambda a: a * 4.0, ((5,),), "broadcast-sum", rtol=1e-9, fastmath=True),
    C("broadcast_sum_units", lambda a: np.sum(np.broadcast_to(a[:, None], (2, 5, 3)), axis=(0, 2)), lambda a: a * 6.0, ((5,),), "broadcast-sum", rtol=1e-9, fastmath=True),
    C("broadcast_sum_0d", lambda a: np.sum(np.broadcast_to(a, (3, 4))), lambda a: a * 12.0, ((),), "broadcast-sum", rtol=1e-9, fastmath=True),
    C("power_squaring", lambda a: a**5, lambda a: np.square(np.square(a)) * a, ((6,),), "float-power", rtol=1e-9, fastmath=True),
    C("power_negative", lambda a: a**-3, lambda a: 1.0 / (np.square(a) * a), ((6,),), "float-power", rtol=1e-9, fastmath=True),
    C("power_quotient", lambda a: a**6 / a**4, lambda a: a * a, ((6,),), "power-quotient", rtol=1e-9, fastmath=True, positive=True),
    C("power_over_square", lambda a: a**5 / np.square(a), lambda a: a**3, ((6,),), "power-quotient", rtol=1e-9, fastmath=True, positive=True),
]
ALL = EXACT + CONTRACTIONS + FAST


def _data(case: Case) -> st.SearchStrategy:
    if case.dtype != "float64":  # the whole range: integer rules must hold under wraparound
        return st.tuples(*(hnp.arrays(case.dtype, s) for s in case.shapes))
    floats = st.floats(0.01 if case.positive else -20.0, 20.0, allow_nan=False, allow_infinity=False)
    if case.rtol == 0.0:  # exact rules must hold on the whole IEEE domain
        floats = floats | st.sampled_from([0.0, -0.0, np.inf, -np.inf, np.nan, 5e-324, -1e308, 1e308])
    return st.tuples(*(hnp.arrays(np.float64, s, elements=floats) for s in case.shapes))


def _args(case: Case) -> list[np.ndarray]:
    """Fixed moderate arguments for a case (0-d ones stay arrays)."""
    rng = np.random.default_rng(7)
    if case.dtype != "float64":
        return [rng.integers(-50, 50, s).astype(case.dtype) for s in case.shapes]
    return [np.asarray(rng.uniform(0.1 if case.positive else -2, 2, s)) for s in case.shapes]


def _same(got: Any, want: Any, rtol: float, nan_sign: bool = True) -> None:
    """Equal to rtol (0: bit for bit, signed zeros and, if nan_sign, the signs of NaNs included)."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape and got.dtype == want.dtype
    if rtol == 0.0:
        signed = np.ones(want.shape, bool) if nan_sign else ~np.isnan(want)
        assert np.array_equal(got, want, equal_nan=True) and np.array_equal(np.signbit(got)[signed], np.signbit(want)[signed])
    else:
        np.testing.assert_allclose(got, want, rtol=rtol, atol=1e-9)

def _fired(case: Case, report: Any) -> int:
    """How often the rules of the case's group matched."""
    return report.groups.get(case.group, 0)


def _term(text: str) -> str:
    """A printed term without the element sort of its vectors (the traced term spells
    `Vec[i64](3, 4)`, the extracted one `Vec(3, 4)`)."""
    return re.sub(r"Vec\[\w+\]\(", "Vec(", text)


@pytest.mark.parametrize("case", ALL, ids=lambda c: c.name)
def test_both_sides_agree(case: Case) -> None:
    """The rule fires on the lhs and rewrites it: extraction picks a term other than the traced
    one (unless the case says the cost model keeps the lhs), and that kernel computes what the compiled lhs and the compiled rhs (no rules: the rule's
    two sides) compute, on random data, and what NumPy does on moderate data."""
    k = et.kernel(case.lhs, fastmath=case.fastmath)
    args = _args(case)
    comp = k.inspect(*args)
    assert _fired(case, comp.report), f"{case.group!r} not among {comp.report.groups}"
    assert (_term(comp.extracted_term) != _term(comp.traced_term)) == case.chosen, comp.extracted_term
    _same(k(*args), case.lhs(*args), case.rtol)
    lhs, rhs = et.kernel(case.lhs, rules=None), et.kernel(case.rhs, rules=None)

    @settings(max_examples=30, deadline=None)
    @given(_data(case))
    def check(args: tuple[np.ndarray, ...]) -> None:
        with np.errstate(all="ignore"):
            want = lhs(*args)
            _same(rhs(*args), want, case.rtol)
            _same(k(*args), want, case.rtol)

    check()


@pytest.mark.parametrize("case", ALL, ids=lambda c: c.name)
def test_rule_fires_and_result_is_right(case: Case) -> None:
    """With the rules on, a rule of the case's group matches and is reported under the group's name,
    and the kernel still computes the lhs."""
    k = et.kernel(case.lhs, fastmath=case.fastmath)
    args = _args(case)
    comp = k.inspect(*args)
    assert _fired(case, comp.report), f"{case.group!r} not among {comp.report.groups}"
    _same(k(*args), case.lhs(*args), case.rtol)


def test_a_group_is_a_ruleset_of_its_own() -> None:
    """x / 8.0 = x * 0.125 is the "exact-division" group's: run alone it matches (reported under its
    name), the other exact groups together never rewrite the division, and the default schedule's
    multiply comes from it."""
    x = np.linspace(-3.0, 3.0, 1000)  # (long enough that a multiply is cheaper than a division)
    alone = et.kernel(lambda x: x / 8.0, rules=GROUPS["exact-division"], cache=False).inspect(x)
    assert list(alone.report.groups) == ["exact-division"], alone.report
    algebra_fastmath.__egg_decls__  # runs its rule generators
    inexact = {group_of(rule) for rule in algebra_fastmath.__egg_ruleset__.rules} | {"exact-division"}
    others = [rules for name, rules in GROUPS.items() if name not in inexact]
    without = et.kernel(lambda x: x / 8.0, rules=sum(others[1:], others[0]), cache=False).inspect(x)
    assert "/ Tensor.const(8.0" in without.extracted_term and "exact-division" not in without.report.groups
    assert "* Tensor.const(0.125" in et.kernel(lambda x: x / 8.0, cache=False).inspect(x).extracted_term


def test_every_rule_of_the_public_rulesets_is_in_a_group() -> None:
    """`algebra`, `algebra_fastmath`, `fusion` and `layout` run exactly their groups' rules: each rule
    they hold is in a group, so the report names a group for every rule they fire."""
    for parent in (algebra, algebra_fastmath, fusion, layout):
        parent.__egg_decls__  # runs the rule generators
        rules = parent.__egg_ruleset__.rules
        assert rules and all(group_of(rule) for rule in rules), parent
    assert set(GROUPS) >= {"transpose", "contraction", "constant-folding", "power", "materialize", "row-major-operands"}


def test_fastmath_rules_do_not_run_by_default() -> None:
    a, b, x = (np.ones((8, 8)), np.ones((8, 8)), np.ones(8))
    comp = et.kernel(lambda a, b, x: (a @ b) @ x).inspect(a, b, x)
    assert "reassociation" not in comp.report.groups
    assert "FASTMATH" not in repr(DEFAULT) and FASTMATH is not DEFAULT


@pytest.mark.parametrize(("n", "width", "reordered"), [(512, 1, True), (64, 512, False)])
def test_matrix_chain_is_chosen_by_shape(n: int, width: int, reordered: bool) -> None:
    a = np.ones((n, n), np.float32)
    x = np.ones((n, width), np.float32) if width > 1 else np.ones(n, np.float32)
    comp = et.kernel(lambda a, b, x: (a @ b) @ x, fastmath=True).inspect(a, a, x)
    (root,) = comp.outputs
    assert (root.inputs[1].op == "matmul") == reordered, comp.extracted_term
    assert comp.report.cost_after <= comp.report.cost_before


@pytest.mark.parametrize(
    ("fn", "shapes", "present", "absent"),
    [
        (lambda a, b: np.trace(a @ b.T), ((64, 32), (64, 32)), "sum", "@"),
        (lambda a, b: np.diagonal(a @ b), ((512, 32), (32, 512)), "sum", "@"),
        (lambda a, x: np.sum(a * x, axis=1), ((64, 32), (32,)), "@", "sum"),
    ],
)
def test_contractions_are_chosen(fn, shapes, present: str, absent: str) -> None:
    args = [np.ones(s) for s in shapes]
    comp = et.kernel(fn).inspect(*args)
    body = comp.extracted_term
    assert present in body and absent not in body, body
    np.testing.assert_allclose(et.kernel(fn)(*args), fn(*args))


@pytest.mark.parametrize(
    ("rows", "copied"),
    [(512, True), (4, False)],
)
def test_layout_copies_a_transposed_matmul_operand_when_it_pays(rows: int, copied: bool) -> None:
    """A @ B.T: copying B.T into a row-major buffer is O(nk); it pays only when A has many rows."""
    a, b = np.ones((rows, 512), np.float32), np.ones((512, 512), np.float32)
    k = et.kernel(lambda a, b: a @ b.T)
    comp = k.inspect(a, b)
    assert ("materialize(" in comp.extracted_term) == copied, comp.extracted_term
    a2, b2 = np.random.default_rng(3).standard_normal((2, rows, 512)).astype(np.float32)[0], np.random.default_rng(4).standard_normal((512, 512)).astype(np.float32)
    np.testing.assert_allclose(k(a2, b2), a2 @ b2.T, rtol=1e-4, atol=1e-3)


@pytest.mark.parametrize(("rows", "copied"), [(512, True), (4, False)])
@pytest.mark.parametrize("target", ["cpu", "cpu-openmp"])
def test_layout_copies_a_fortran_ordered_matmul_operand_when_it_pays(rows: int, copied: bool, target: str) -> None:
    """A Fortran-ordered B (a `.T` passed in) is read strided by the matmul; copied row-major
    (memref.transpose + linalg.transpose) when A has enough rows to pay for the copy. B is also
    read elementwise, so its buffer is seen both ways in one kernel."""
    rng = np.random.default_rng(5)
    a = rng.standard_normal((rows, 384)).astype(np.float32)
    b = np.asfortranarray(rng.standard_normal((384, 384)).astype(np.float32))
    fn = lambda a, b: a @ b + b[0]  # noqa: E731
    k = et.kernel(fn, target=target)
    comp = k.inspect(a, b)
    assert ("materialize(Tensor.arg(\"b\"" in comp.extracted_term) == copied, comp.extracted_term
    assert ("linalg.transpose" in comp.stage("linalg")) == copied
    np.testing.assert_allclose(k(a, b), fn(a, b), rtol=1e-4, atol=1e-3)
    np.testing.assert_allclose(k(b[:rows], b), fn(b[:rows], b), rtol=1e-4, atol=1e-3)  # A strided too: another signature


def test_tiling_candidates_are_priced_by_shape() -> None:
    """A tile that divides its loop beats one that leaves a remainder; the choice reaches the MLIR."""
    from egglog_tensor.cost import tile_slowdown
    from egglog_tensor.rulesets.tiling import candidates

    assert tile_slowdown((512, 512, 512), (128, 128, 192), 4, HOST) < tile_slowdown((600, 600, 512), (128, 128, 192), 4, HOST)
    assert candidates(4, HOST) and all(tk * 4 > 0 for _, _, tk in candidates(4, HOST))
    a = np.random.default_rng(8).standard_normal((200, 200)).astype(np.float32)
    k = et.kernel(lambda a, b: a @ b)
    comp = k.inspect(a, a)
    if "matmul_tiled" in comp.extracted_term:
        tiles = comp.outputs[0].attrs[0]
        fitted = [min(t, 200) for t in tiles]
        assert f"et.tiles = [{fitted[0]}, {fitted[1]}, {fitted[2]}]" in comp.stage("linalg")
    assert "et.tiles" in comp.stage("linalg")
    np.testing.assert_allclose(k(a, a), a @ a, rtol=1e-4, atol=1e-3)


@pytest.mark.parametrize(
    ("fn", "dtype", "fastmath", "present", "absent"),
    [
        (lambda x: x**4, "float64", True, "square(square(", "**"),
        (lambda x: x**4, "float64", False, "**", "square"),
        (lambda x: x**-6, "float32", True, "reciprocal(square(square(", "**"),
        (lambda x: x**7, "int64", False, "square(square(", "**"),
        (lambda x: x**6 / x**4, "float64", True, "square(", "**"),
        (lambda x: x**7.5, "float64", True, "**", "square"),  # not an integer exponent
        (lambda x: x - x, "int64", False, "broadcast_to", " - "),
        (lambda x: x - x, "float64", False, " - ", "broadcast_to"),
        (lambda x: x - x, "float64", True, "broadcast_to", " - "),
        (lambda x: np.sum(np.broadcast_to(x, (256, 4096)), axis=0), "int32", False, "* Tensor.const(256.0", "sum"),
        (lambda x: np.sum(np.broadcast_to(x, (256, 4096)), axis=0), "float32", False, "sum", "Tensor.const(256.0"),
        (lambda x: np.sum(np.broadcast_to(x, (256, 4096)), axis=0), "float32", True, "* Tensor.const(256.0", "sum"),
    ],
)
def test_power_and_collapse_rules_are_chosen(fn, dtype: str, fastmath: bool, present: str, absent: str) -> None:
    """Cheaper by the cost model (pow is transcendental; a multiply reads x once, a sum reads the
    whole broadcast): chosen when the rule may run, never otherwise."""
    x = np.random.default_rng(5).uniform(0.5, 1.5, 4096).astype(dtype)
    k = et.kernel(fn, fastmath=fastmath)
    comp = k.inspect(x)
    body = comp.extracted_term
    assert present in body and absent not in body, body
    assert comp.report.cost_after <= comp.report.cost_before
    with np.errstate(all="ignore"):
        np.testing.assert_allclose(k(x), fn(x), rtol=1e-5 if dtype == "float32" else 1e-12)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize(("p", "rhs"), [(0.0, lambda a: np.ones_like(a)), (1.0, lambda a: a)])
def test_pow_of_zero_and_one_is_exact(dtype: str, p: float, rhs: Callable[[np.ndarray], np.ndarray]) -> None:
    """x**0 -> 1 and x**1 -> x are exact: pow itself (a run-time exponent, so no rule and no
    constant folding) returns exactly these on the whole IEEE domain, up to the sign of a NaN,
    which IEEE 754 leaves unspecified for pow (glibc's pow(-nan, 1) is +nan)."""
    k = et.kernel(lambda a, p: a**p, rules=None)

    @settings(max_examples=30, deadline=None)
    @given(hnp.arrays(dtype, (7,)))  # every float of the dtype: NaN, inf, signed zeros, subnormals
    def check(a: np.ndarray) -> None:
        _same(k(a, np.asarray(p, dtype)), rhs(a), 0.0, nan_sign=False)

    check()


def test_power_rules_stay_bounded() -> None:
    """Expansion stops at MAX_EXPONENT and needs at most log2 of it steps: large and fractional
    exponents stay pow, the e-graph stays small and the run saturates. (x**63 may stay pow: the
    cost model charges a fused kernel one read of x per occurrence, six here.)"""
    x = np.random.default_rng(6).uniform(0.5, 1.5, 64)
    fn = lambda x: x**64 + x**63 + x**-64 + x**65 + x**1e9 + x**7.5 + x**40 / x**-24  # noqa: E731
    comp = et.kernel(fn, fastmath=True).inspect(x)
    assert comp.report.stop_reason == "saturated" and comp.report.enodes < 1500, comp.report
    body = comp.extracted_term
    assert "Tensor.const(65.0" in body and "Tensor.const(1000000000.0" in body and "Tensor.const(7.5" in body
    assert "Tensor.const(64.0" not in body and "Tensor.const(-64.0" not in body and "Tensor.const(40.0" not in body, body
    with np.errstate(over="ignore"):  # x**1e9 is inf for x > 1, in both
        np.testing.assert_allclose(et.kernel(fn, fastmath=True)(x), fn(x), rtol=1e-12)
