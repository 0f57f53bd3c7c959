"""Fast-math flags like LLVM's (issue 26): `fastmath=` takes True or some of "reassoc", "nnan",
"ninf", "nsz", "arcp", "contract", "afn"; each inexact rule group runs only when its flags are
allowed, the emitted float arithmetic carries exactly the allowed flags, the flags key the cache,
a fast-math extraction is never costlier than the default's, and matrix chains come out in the
dynamic program's order under "reassoc" alone."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from test_einsum_order import CHAINS, extracted_tree
from test_golden import filecheck
from fuzz_programs import Program, programs

import egglog_tensor as et
from egglog_tensor import cache
from egglog_tensor.compiler import Options
from egglog_tensor.fastmath import ALL, FLAGS, NONE, fastmath_flags
from egglog_tensor.optimize import Limits
from egglog_tensor.rulesets import DEFAULT, FASTMATH, algebra, algebra_fastmath, fastmath_groups, fastmath_rules, fusion, layout
from egglog_tensor.rulesets.groups import NEEDS, group_of
from egglog_tensor.target import Target

sys.path.insert(0, str(Path(__file__).parents[1] / "benchmarks"))
import run as bench  # noqa: E402  (benchmarks/run.py: the reference workloads)

rng = np.random.default_rng(26)


@pytest.mark.parametrize(("given_", "expected"), [
    (True, set(FLAGS)), (False, set()), (None, set()), ("fast", set(FLAGS)), ("reassoc", {"reassoc"}),
    ("reassoc,nsz", {"reassoc", "nsz"}), ("nnan ninf", {"nnan", "ninf"}), ({"afn", "arcp"}, {"afn", "arcp"}),
    (["contract"], {"contract"}), ((), set()),
])
def test_flags_are_read_like_llvms(given_: Any, expected: set[str]) -> None:
    assert fastmath_flags(given_) == expected
    assert Options(DEFAULT, given_, Target.host(), Limits()).fastmath == expected  # Options normalizes too


@pytest.mark.parametrize("bad", ["reasoc", "reassoc,fastest", {"nnan", "NaN"}, 3])
def test_an_unknown_flag_is_a_clear_error(bad: Any) -> None:
    with pytest.raises(et.OptionError, match="reassoc, nnan, ninf, nsz, arcp, contract, afn"):
        et.kernel(lambda x: x, fastmath=bad)


def test_every_inexact_group_names_its_flags() -> None:
    """Every group of FASTMATH needs at least one known flag, no exact group needs any, and the flag
    sets select: all of them run FASTMATH itself, none no fast-math rules at all."""
    algebra_fastmath.__egg_decls__  # runs the rule generators
    assert {group_of(rule) for rule in algebra_fastmath.__egg_ruleset__.rules} == set(NEEDS)
    assert all(needs and needs <= set(FLAGS) for needs in NEEDS.values())
    for exact in (algebra, fusion, layout):
        exact.__egg_decls__
        assert not {group_of(rule) for rule in exact.__egg_ruleset__.rules} & set(NEEDS)
    assert fastmath_rules(ALL) is FASTMATH and fastmath_rules(NONE) is None
    assert fastmath_rules(frozenset({"contract"})) is None  # (no rule needs contract: it is for LLVM)
    assert NEEDS["reassociation"] == {"reassoc"} and NEEDS["zero-product"] == {"nnan", "ninf", "nsz"}


def _groups(fn: Any, args: tuple[np.ndarray, ...], flags: Any) -> dict[str, int]:
    return et.kernel(fn, fastmath=flags, cache=False).trace(*args).optimize().report.groups


def test_a_group_is_selected_only_when_all_its_flags_are_allowed() -> None:
    for name, needs in NEEDS.items():
        assert name in fastmath_groups(needs) and name in fastmath_groups(ALL)
        assert all(name not in fastmath_groups(ALL - {flag}) for flag in needs), name


X = np.linspace(-3.0, 3.0, 64)
GATED = [  # (a program, its arguments, the group that rewrites it)
    (lambda a, b, x: (a @ b) @ x, (np.ones((64, 64)), np.ones((64, 64)), np.ones(64)), "reassociation"),
    (lambda x: x * 0.0, (X,), "zero-product"),
]


@pytest.mark.parametrize(("fn", "args", "group"), GATED, ids=[g for *_, g in GATED])
def test_a_group_runs_only_when_all_its_flags_are_allowed(fn: Any, args: tuple, group: str) -> None:
    assert group in _groups(fn, args, NEEDS[group])
    assert group not in _groups(fn, args, set(FLAGS) - {sorted(NEEDS[group])[-1]})  # all flags but one it needs


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_results_under_some_flags_match_numpy(dtype: type) -> None:
    a, b = (rng.standard_normal((48, 40)).astype(dtype) for _ in range(2))
    x = rng.standard_normal(48).astype(dtype)
    tol = {np.float32: 2e-5, np.float64: 1e-12}[dtype]
    chain = et.kernel(lambda a, b, x: (a @ b.T) @ x, fastmath="reassoc")
    want = (a @ b.T) @ x
    np.testing.assert_allclose(chain(a, b, x), want, rtol=tol, atol=tol * np.abs(want).max())
    soft = et.kernel(bench.softmax, fastmath={"reassoc", "contract", "arcp"})
    np.testing.assert_allclose(soft(a), bench.softmax(a), rtol=tol, atol=tol)
    zero = et.kernel(lambda a: a * 0.0 + 1.0, fastmath="nnan,ninf,nsz")
    np.testing.assert_array_equal(zero(a), a * 0.0 + 1.0)


def test_emitted_float_arithmetic_carries_the_allowed_flags(tmp_path) -> None:
    """fastmath={"nsz", "contract"}: the multiply and add carry those flags, the reduction step
    reassoc as well, compares and max carry none; the flags reach LLVM IR; without fastmath only the
    reduction step has its reassoc."""
    a = np.ones((64, 64), np.float32)
    fn = lambda a, b: np.max(np.where(np.isnan(a), 0.0, a * b + 1.0).sum(axis=1))  # noqa: E731
    comp = et.kernel(fn, fastmath={"nsz", "contract"}, target="cpu").inspect(a, a)
    filecheck(comp.stage("linalg"), """
CHECK: linalg.generic
CHECK: arith.cmpf uno, %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}} : f32
CHECK: arith.mulf %{{.*}}, %{{.*}} fastmath<nsz,contract> : f32
CHECK: arith.addf %{{.*}}, %{{.*}} fastmath<nsz,contract> : f32
CHECK: arith.addf %{{.*}}, %{{.*}} fastmath<reassoc,nsz,contract> : f32
CHECK: arith.maximumf %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}} : f32
""", tmp_path)
    ir = comp.stage("llvm-ir")
    assert "fmul nsz contract" in ir and "fadd reassoc nsz contract" in ir
    exact = et.kernel(fn, target="cpu").inspect(a, a).stage("linalg")
    assert "nsz" not in exact and "fastmath<reassoc>" in exact
    np.testing.assert_array_equal(et.kernel(fn, fastmath={"nsz", "contract"})(a, a), fn(a, a))


@pytest.mark.parametrize(("flags", "approximate"), [("afn", True), pytest.param(True, True, marks=pytest.mark.slow),
                                                    ("reassoc,nnan,ninf,nsz,arcp,contract", False)])
def test_only_afn_approximates_math_functions(flags: Any, approximate: bool) -> None:
    """The rational float32 tanh (lowering/stages/math.py, et.fastmath on the function) needs afn."""
    x = np.linspace(-5, 5, 256, dtype=np.float32)
    comp = et.kernel(lambda x: np.tanh(x), fastmath=flags, target="cpu").inspect(x)
    assert ("et.fastmath" in comp.stage("linalg")) == approximate


def test_the_flags_key_the_cache() -> None:
    """Distinct flag sets are distinct cache keys; the package's rule groups are keyed by name."""
    def options(flags: Any) -> Options:
        return Options(DEFAULT, flags, Target.host(), Limits())

    keys = {cache.make_key(cache.key_inputs("term", ("x",), (), options(f))) for f in (False, True, "reassoc", "reassoc,nsz", "afn")}
    assert len(keys) == 5
    assert cache.package_schedule_text(options(True)) == "egglog_tensor.rulesets: DEFAULT + FASTMATH"
    assert cache.package_schedule_text(options("reassoc")) == ("egglog_tensor.rulesets: DEFAULT + FASTMATH:constant-reassociation"
                                                               " + FASTMATH:reassociation + FASTMATH:broadcast-sum")
    assert cache.package_schedule_text(options("contract")) == "egglog_tensor.rulesets: DEFAULT"


def _costs(fn: Any, args: tuple) -> tuple[float, float]:
    """The estimated cost of the default's and of fastmath=True's extracted program."""
    reports = [et.kernel(fn, fastmath=f, cache=False).trace(*args).optimize().report for f in (False, True)]
    return reports[0].cost_after, reports[1].cost_after


A200 = rng.standard_normal((200, 200))
NEVER_COSTLIER = {  # the issue's trace(A@B) and the softmax that fastmath once extracted costlier
    "trace_ab": (lambda a, b: np.trace(a @ b), (A200, A200)),
    "softmax": (bench.softmax, (np.zeros((512, 128), np.float32),)),
}


@pytest.mark.parametrize("name", NEVER_COSTLIER)
def test_fastmath_never_extracts_a_costlier_program(name: str) -> None:
    default, fast = _costs(*NEVER_COSTLIER[name])
    assert fast <= default


@pytest.mark.slow
@pytest.mark.parametrize("workload", bench.workloads(8), ids=lambda w: w.fn.__name__)
def test_fastmath_is_never_costlier_on_the_benchmark_workloads(workload: Any) -> None:
    default, fast = _costs(workload.fn, workload.make(rng))
    assert fast <= default


@pytest.mark.slow
@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
@given(programs())
def test_fastmath_is_never_costlier_on_fuzzed_programs(program: Program) -> None:
    default, fast = _costs(program.function(), tuple(np.zeros(shape, dtype) for shape, dtype in program.inputs))
    assert fast <= default


def dp_tree(dims: tuple[int, ...]) -> Any:
    """The order with the fewest multiply-adds of the matrix chain with these dimensions (the classic DP)."""
    n = len(dims) - 1
    best: dict[tuple[int, int], tuple[int, Any]] = {(i, i): (0, i) for i in range(n)}
    for length in range(2, n + 1):
        for i in range(n - length + 1):
            j = i + length - 1
            best[i, j] = min(((best[i, k][0] + best[k + 1, j][0] + dims[i] * dims[k + 1] * dims[j + 1],
                               (best[i, k][1], best[k + 1, j][1])) for k in range(i, j)), key=lambda c: c[0])
    return best[0, n - 1][1]


def _written(tree: Any) -> str:
    return f"x{tree}" if isinstance(tree, int) else f"({_written(tree[0])} @ {_written(tree[1])})"


def _chain(n: int, tree: Any = None) -> Any:
    """x0 @ x1 @ ... @ x{n-1}, left to right or in the order `tree`."""
    scope: dict[str, Any] = {}
    body = " @ ".join(f"x{i}" for i in range(n)) if tree is None else _written(tree)
    exec(f"def chain({', '.join(f'x{i}' for i in range(n))}):\n    return {body}", scope)
    return scope["chain"]


def _extracted(fn: Any, dims: tuple[int, ...], **options: Any) -> tuple[Any, float]:
    """The order fastmath="reassoc" extracts for `fn` over the chain (arguments x0, x1, ...) and its
    estimated cost, checked to be found within the default limits."""
    ms = [np.zeros((dims[i], dims[i + 1]), np.float32) for i in range(len(dims) - 1)]
    optimized = et.kernel(fn, cache=False, **options).trace(*ms).optimize()
    assert optimized.report.stop_reason == "saturated", str(optimized.report)
    return extracted_tree(optimized.outputs[0]), optimized.report.cost_after


@pytest.mark.parametrize("name", ["balanced", "inner-first", "five", *(pytest.param(c, marks=pytest.mark.slow) for c in
                                                                    ("right", "left", "inner-last", "three"))])
def test_a_matrix_chain_comes_out_in_the_dp_order_under_reassoc(name: str) -> None:
    """The einsum-order cases (the DP's order at least 1.5x fewer multiply-adds than any other), as `@`."""
    dims, expected = CHAINS[name]
    assert dp_tree(dims) == expected
    assert _extracted(_chain(len(dims) - 1), dims, fastmath="reassoc")[0] == expected


def _no_costlier_than_the_dp_order(fn: Any, dims: tuple[int, ...]) -> None:
    """Under reassoc the chain's extracted order is estimated no costlier than the DP's order as
    written (optimized by the default rules, which keep a written `@` order): on near ties of
    multiply-adds the cost model, which prices thin products and memory traffic too, may take another."""
    tree, cost = _extracted(fn, dims, fastmath="reassoc")
    best = dp_tree(dims)
    written, dp_cost = _extracted(_chain(len(dims) - 1, best), dims)
    assert written == best and cost <= dp_cost * (1 + 1e-9), (tree, best)


@pytest.mark.parametrize("n", [6, pytest.param(10, marks=pytest.mark.slow)])
def test_a_random_matrix_chain_is_no_costlier_than_the_dp_order(n: int) -> None:
    _no_costlier_than_the_dp_order(_chain(n), tuple(int(d) for d in np.random.default_rng(n).integers(2, 300, n + 1)))


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("n", range(3, 11))
def test_random_matrix_chains_are_no_costlier_than_the_dp_order(n: int, seed: int) -> None:
    _no_costlier_than_the_dp_order(_chain(n), tuple(int(d) for d in np.random.default_rng(seed).integers(2, 300, n + 1)))


@pytest.mark.slow
def test_a_chain_of_einsum_and_matmul_is_one_chain() -> None:
    """A 3-operand einsum, @ and a 2-operand einsum in one chain: reordered as one chain (the
    einsum's own order is free anyway), no costlier than the DP's order, and NumPy's result."""
    dims = (20, 300, 10, 300, 20, 300, 5)
    fn = lambda x0, x1, x2, x3, x4, x5: np.einsum("ij,jk,kl->il", x0, x1, x2) @ x3 @ np.einsum("ij,jk->ik", x4, x5)  # noqa: E731
    _no_costlier_than_the_dp_order(fn, dims)
    ms = [rng.standard_normal((dims[i], dims[i + 1])) for i in range(6)]
    want = fn(*ms)
    np.testing.assert_allclose(et.kernel(fn, fastmath="reassoc")(*ms), want, rtol=1e-12, atol=1e-12 * np.abs(want).max())



def test_a_vector_product_squared_compiles_under_reassoc() -> None:
    """The fuzzer's `v = u @ M; v @ v` (u a 2-vector, M 2x1): reassociated into the undefined (1,) @ (2,),
    which failed the compile in the cost model (a vector middle factor contracts different axes)."""

    def fn(u, m):
        v = u @ m
        return v @ v

    u, m = np.array([0.5, -1.5], np.float32), np.array([[3.0], [-5.0]], np.float32)
    np.testing.assert_allclose(et.kernel(fn, cache=False, fastmath="reassoc")(u, m), fn(u, m), rtol=1e-6)


_CHAINS = [  # (A, B, C) of a product chain and its order; B a vector, a stack or a matrix
    *[(shapes, left) for left in (True, False) for shapes in (  # both orders defined, equal in value
        ((2,), (2, 1), (1,)), ((1,), (1, 2), (2, 3)), ((2, 3, 4), (4, 5), (5,)), ((4,), (2, 4, 5), (5, 3)),
        ((3, 4), (2, 4, 5), (5, 6)), ((2, 3, 4), (2, 4, 5), (2, 5, 6)), ((3, 4), (4, 5), (5,)))],
    (((3, 4), (2, 4, 5), (5,)), True),  # (AB)C only: B@C is (2, 4), and (3, 4) @ (2, 4) is undefined
    (((3, 2), (2, 4, 5), (5,)), False),  # A(BC) only: (3, 2) @ (2, 4, 5) is undefined
    (((3, 2), (2, 2, 5), (5,)), True), (((3, 2), (2, 2, 5), (5,)), False),  # both defined: (2, 3) and (3, 2)
]


@pytest.mark.parametrize(("shapes", "left"), _CHAINS, ids=str)
def test_reassociation_keeps_chains_of_vectors_and_stacks_defined(shapes: tuple, left: bool) -> None:
    """A chain reassociates only where both orders are the same product: not with a vector middle factor,
    nor with a stack times a vector (B@C drops the vector's axis: A@(B@C) is then no batch product, and
    may be defined with another shape); each order's value is NumPy's."""

    def fn(a, b, c):
        return (a @ b) @ c if left else a @ (b @ c)

    args = [np.random.default_rng(1).standard_normal(s).astype(np.float32) for s in shapes]
    np.testing.assert_allclose(et.kernel(fn, cache=False, fastmath="reassoc")(*args), fn(*args), rtol=1e-5, atol=1e-5)
