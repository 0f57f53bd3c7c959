"""The optimizer: rules fire and are reported, limits stop rewriting visibly, extraction follows the cost model."""

from __future__ import annotations

import math
import timeit

from dataclasses import replace

import numpy as np
import pytest
from egglog import back_off, rewrite, ruleset, run

import egglog_tensor as et
from egglog_tensor.cost import TensorCostModel, node_time
from egglog_tensor.target import Target
from egglog_tensor.graph import Builder
from egglog_tensor.ir import Tensor
import egglog_tensor.optimize as optimize_module
from egglog_tensor.extract import ExtractionError
from egglog_tensor.optimize import optimize
from egglog_tensor.rulesets import DEFAULT
from egglog_tensor.spec import spec_of
from egglog_tensor.termtext import listing
from egglog_tensor.tracing import trace_function

rng = np.random.default_rng(1)


def traced(fn, *args):
    names = [f"a{i}" for i in range(len(args))]
    outs, _ = trace_function(fn, names, [spec_of(a, n) for a, n in zip(args, names)])
    return outs


def test_double_transpose_and_unit_factor_disappear() -> None:
    A = rng.standard_normal((5, 7))
    k = et.kernel(lambda A: A.T.T * 1.0)
    comp = k.inspect(A)
    assert "transpose" not in comp.extracted_term and "Tensor.const(1.0" not in comp.extracted_term
    assert comp.report.cost_after < comp.report.cost_before
    assert {"transpose", "identity"} <= set(comp.report.groups), comp.report
    np.testing.assert_array_equal(k(A), A)


def test_rank3_transposes_compose() -> None:
    A = rng.standard_normal((2, 3, 4))
    k = et.kernel(lambda A: np.transpose(np.transpose(A, (1, 2, 0)), (2, 0, 1)) + 1.0)
    assert "transpose" not in k.inspect(A).extracted_term
    np.testing.assert_array_equal(k(A), A + 1.0)


def test_float64_folding_keeps_the_sign_of_zero() -> None:
    x = np.array([-0.0, 0.0, 1.0])
    k = et.kernel(lambda x: x + (np.float64(-1.0) * np.float64(0.0)))  # NumPy folds to -0.0 eagerly
    np.testing.assert_array_equal(np.signbit(k(x)), np.signbit(k.fn(x)))
    s = np.float64(0.0)
    k2 = et.kernel(lambda x, s: x + (s * -1.0))  # traced: s * -1.0 is -0.0 at run time
    np.testing.assert_array_equal(np.signbit(k2(x, s)), np.signbit(k2.fn(x, s)))


def test_float64_constant_folding() -> None:
    x = rng.standard_normal(4)
    k = et.kernel(lambda x, s: x * (s * 2.0 + 1.0))
    comp = k.inspect(x, np.float64(3.0))
    np.testing.assert_array_equal(k(x, np.float64(3.0)), x * 7.0)
    k2 = et.kernel(lambda x: x + (np.float64(2.0) * np.float64(3.0) - 1.0) * (x * 0 + np.float64(1.5)))
    np.testing.assert_array_equal(k2(x), k2.fn(x))
    assert comp.report.stop_reason == "saturated"


def test_plus_zero_is_not_rewritten_because_of_signed_zero() -> None:
    x = np.array([-0.0, 1.0, np.nan, -np.inf], np.float32)
    k = et.kernel(lambda x: x + 0.0)
    assert "Tensor.const(0.0" in k.inspect(x).extracted_term
    got = k(x)
    assert np.signbit(got[0]) == np.signbit(x[0] + np.float32(0.0))  # +0.0, not -0.0
    k2 = et.kernel(lambda x: x + -0.0)
    assert "-Tensor.const(0.0" in k2.inspect(x).traced_term
    assert "const" not in k2.inspect(x).extracted_term
    assert np.signbit(k2(x)[0])


def test_fastmath_rules_only_with_fastmath() -> None:
    x = rng.standard_normal(8)
    exact = et.kernel(lambda x: x / 3.0)
    fast = et.kernel(lambda x: x / 3.0, fastmath=True)
    assert not any("algebra_fastmath" in exact.inspect(x).report.schedule for _ in [0])
    assert "algebra_fastmath" in fast.inspect(x).report.schedule
    assert "reciprocal" in fast.inspect(x).report.groups
    np.testing.assert_array_equal(exact(x), x / 3.0)
    np.testing.assert_allclose(fast(x), x / 3.0, rtol=1e-15)


def test_no_rules() -> None:
    x = rng.standard_normal(3)
    comp = et.kernel(lambda x: x.T.T, rules=None).inspect(x)
    assert comp.report.iterations == 0 and comp.report.schedule == "none"


commute = ruleset(name="commute")


@commute.register
def _commute(a: Tensor, b: Tensor) -> object:
    yield rewrite(a + b).to(b + a)
    yield rewrite((a + b) + Tensor.const(0.5, et.ir.DType.float64)).to(a + (b + Tensor.const(0.5, et.ir.DType.float64)))


@pytest.mark.parametrize(
    ("limits", "reason"),
    [(et.Limits(iterations=1), "iteration limit"), (et.Limits(enodes=10), "e-node limit"), (et.Limits(seconds=0.0), "time limit")],
)
def test_limits_are_reported_and_the_program_stays_correct(limits, reason) -> None:
    xs = [rng.standard_normal(16) for _ in range(4)]
    k = et.kernel(lambda a, b, c, d: ((a + b) + (c + d)) + 0.5, rules=commute, limits=limits)
    comp = k.inspect(*xs)
    assert comp.report.stop_reason == reason and comp.report.hit_limit
    assert reason in str(comp)
    np.testing.assert_allclose(k(*xs), ((xs[0] + xs[1]) + (xs[2] + xs[3])) + 0.5, rtol=1e-15)


def test_schedules_compose() -> None:
    xs = [rng.standard_normal(16) for _ in range(2)]
    k = et.kernel(lambda a, b: (a + b).T.T, rules=DEFAULT + commute.saturate())
    comp = k.inspect(*xs)
    assert comp.report.stop_reason == "saturated"
    np.testing.assert_array_equal(k(*xs), xs[0] + xs[1])


matmul_assoc = ruleset(name="matmul_assoc")


@matmul_assoc.register
def _assoc(a: Tensor, b: Tensor, c: Tensor) -> object:
    yield rewrite((a @ b) @ c).to(a @ (b @ c))
    yield rewrite(a @ (b @ c)).to((a @ b) @ c)


@pytest.mark.parametrize(("n", "m", "expect_right"), [(2048, 1, True), (8, 2048, False)])
def test_extraction_follows_shapes(n: int, m: int, expect_right: bool) -> None:
    """(A@B)@x vs A@(B@x): the cheaper association by shape is extracted, both ways."""
    A = np.empty((n, n), np.float32)
    x = np.empty((n, m), np.float32)
    outs = traced(lambda A, B, x: (A @ B) @ x, A, A, x)
    nodes, report = optimize(outs, matmul_assoc, et.Limits(), TensorCostModel(Target.host()))
    (root,) = nodes
    right = root.inputs[1].op == "matmul"
    assert right == expect_right, listing(nodes)
    assert report.cost_after <= report.cost_before


def test_cost_model_prices_matmul_by_shape() -> None:
    b = Builder()
    big = b.make("arg", (), ("A", (2048, 2048), "float32", "C"))
    vec = b.make("arg", (), ("x", (2048,), "float32", "C"))
    mm = b.make("matmul", (big, big))
    mv = b.make("matmul", (big, vec))
    host = Target.host()
    assert node_time("matmul", (big, big), mm, host) > 50 * node_time("matmul", (big, vec), mv, host)
    # the model prices with its target's machine numbers: a machine with twice the GEMM rate halves
    # the big matmul's time, which is bound by its flops
    assert TensorCostModel(host).machine is host.machine == et.Machine()
    twice = replace(host, machine=et.Machine(gemm_gflops=2 * host.machine.gemm_gflops))
    assert node_time("matmul", (big, big), mm, twice) == pytest.approx(node_time("matmul", (big, big), mm, host) / 2, rel=0.01)


def test_a_long_matrix_chain_saturates_small() -> None:
    """Reassociating a chain of 12 small matmuls (fastmath) enumerates its O(n^3) associations, and
    tiling offers each product only the candidates that stay distinct once clipped to its loops
    (a 4..64-sized product gets one): the run saturates with a small e-graph and the result is
    the chain's."""
    dims = rng.integers(4, 64, 13)
    ms = [rng.standard_normal((int(dims[i]), int(dims[i + 1]))).astype(np.float32) for i in range(12)]
    names = [f"m{i}" for i in range(12)]
    scope: dict = {}
    exec(f"def chain({', '.join(names)}):\n    return {' @ '.join(names)}", scope)
    k = et.kernel(scope["chain"], fastmath=True, target="cpu")
    comp = k.inspect(*ms)
    assert comp.report.stop_reason == "saturated" and comp.report.enodes < 5000, str(comp.report)
    tiled = comp.report.groups["tiling"]  # the tiling ruleset: only matmul tiles here (no reduction, no row loop)
    # 286 product nodes (a sub-chain and where it splits), each matched again when its class merges:
    # a few matches each, where every candidate would be 80 each
    assert 0 < tiled < 4 * math.comb(13, 3), tiled
    expected = ms[0].astype(np.float64)
    for m in ms[1:]:
        expected = expected @ m
    np.testing.assert_allclose(k(*ms), expected, rtol=1e-3, atol=1e-3 * np.abs(expected).max())


def test_a_failed_extraction_compiles_the_traced_program_and_says_so(monkeypatch) -> None:
    """If the extraction finds no program (egglog_tensor/extract.py: no acyclic term of the tensor
    language, or its limit hit first), the kernel still works: the traced program is compiled, a
    warning and the report say why, and nothing is stored in the on-disk cache (a later run optimizes again)."""
    real, calls = optimize_module.extract, []

    def extract(*args, **kwargs):
        calls.append(1)
        if len(calls) == 2:  # the first extraction reads back the traced program, the second is the result
            raise ExtractionError("no acyclic program in the tensor language for the outputs")
        return real(*args, **kwargs)

    monkeypatch.setattr(optimize_module, "extract", extract)
    x = rng.standard_normal((8, 8)).astype(np.float32)
    k = et.kernel(lambda x: x.T.T * 1.0, target="cpu")
    with pytest.warns(UserWarning, match="extraction found no program .*acyclic.*compiled unoptimized"):
        comp = k.inspect(x)
    assert "transpose" in comp.extracted_term and comp.report.cost_after == comp.report.cost_before
    assert "EXTRACTION FAILED" in str(comp) and comp.cache == "disabled"
    np.testing.assert_array_equal(k(x), x)
    monkeypatch.setattr(optimize_module, "extract", real)
    again = et.kernel(lambda x: x.T.T * 1.0, target="cpu").inspect(x)
    assert again.cache == "miss-stored" and "transpose" not in again.extracted_term


ac = ruleset(name="ac")


@ac.register
def _ac(a: Tensor, b: Tensor, c: Tensor) -> object:
    yield rewrite(a + b).to(b + a)
    yield rewrite((a + b) + c).to(a + (b + c))


def test_associativity_and_commutativity_under_back_off_stay_bounded() -> None:
    """A user's AC rules on a 10-term sum would fill the e-graph (every bracketing and order: the
    e-node limit, ~126k e-nodes after ~12 s here); run under egglog's back-off scheduler, which bans
    a rule for a while once it matches too often, they stay small and the program stays correct."""
    names = [f"x{i}" for i in range(10)]
    scope: dict = {}
    exec(f"def total({', '.join(names)}):\n    return {' + '.join(names)}", scope)
    xs = [rng.standard_normal(16) for _ in names]
    k = et.kernel(scope["total"], rules=DEFAULT + run(ac, scheduler=back_off(match_limit=200, ban_length=2)))
    comp = k.inspect(*xs)
    assert comp.report.enodes < 5000 and any(rs.name == "ac" for rs in comp.report.rulesets), str(comp.report)
    np.testing.assert_allclose(k(*xs), sum(xs), rtol=1e-12)


def _named_ruleset(with_rule: bool):
    """A ruleset called "cell" (as a notebook cell defines it), with or without exp(log(x)) -> x."""
    cell = ruleset(name="cell")
    if with_rule:

        @cell.register
        def _(x: Tensor) -> object:
            yield rewrite(et.ir.exp(et.ir.log(x))).to(x)

    return cell


def test_a_ruleset_redefined_under_its_name_takes_effect() -> None:
    """The optimizer keeps an e-graph per schedule with its rules declared; a ruleset defined again
    under the same name with other rules (a notebook cell run again) must run its new rules only."""
    x = np.linspace(0.5, 2.0, 16)
    terms = []
    for with_rule in (True, False, True):
        comp = et.kernel(lambda x: np.exp(np.log(x)), rules=_named_ruleset(with_rule), cache=False).inspect(x)
        terms.append("exp(" in comp.extracted_term)
    assert terms == [False, True, False]


def test_machine_numbers_steer_the_cost_model_and_key_the_cache() -> None:
    """With the default machine a transposed matmul operand is copied row-major first (a strided B
    is priced 1.6x slower, and a 256^3 matmul is dearer than the copy); a machine where it is not slower keeps the strided read. Each machine is
    its own on-disk cache entry."""
    a = rng.standard_normal((256, 256)).astype(np.float32)
    plain = et.kernel(lambda a, b: a @ b.T).inspect(a, a)
    flat = et.Machine(gemm_strided_b_slowdown=1.0)
    k = et.kernel(lambda a, b: a @ b.T, machine=flat)
    other = k.inspect(a, a)
    assert "materialize(" in plain.extracted_term and "materialize(" not in other.extracted_term
    assert (plain.cache, other.cache) == ("miss-stored", "miss-stored")
    assert et.kernel(lambda a, b: a @ b.T, machine=flat).inspect(a, a).cache == "hit"
    np.testing.assert_allclose(k(a, a), a.astype(np.float64) @ a.T, rtol=1e-4, atol=1e-3)
    with pytest.raises(ValueError, match="machine must be an egglog_tensor.Machine, got dict"):
        et.kernel(lambda a: a, machine={"bandwidth_gbs": 10})


def _best_seconds(fn) -> float:
    """Fastest of 5 timed calls after a warm-up (timed here, not with egglog_tensor's helper)."""
    fn()
    return min(timeit.repeat(fn, number=1, repeat=5))


@pytest.mark.slow  # (times the machine: ~20 s)
def test_machine_measure() -> None:
    """measure() gets this machine's copy bandwidth and GEMM rate right (within a factor of 4 of
    the test's own timing of one np.copyto and one float32 NumPy matmul: shared CI cores are noisy),
    and applies overrides, to measured numbers too."""
    m = et.Machine.measure(threads=1, kernel_overhead_ns=800.0, gflops=123.0)
    assert m.kernel_overhead_ns == 800.0 and m.gflops == 123.0
    src = np.ones(2**24, np.float32)  # 64 MiB, well past the caches
    dst = np.empty_like(src)
    bandwidth = 2 * src.nbytes / _best_seconds(lambda: np.copyto(dst, src)) / 1e9
    a = np.ones((1024, 1024), np.float32)
    gemm = 2 * 1024**3 / _best_seconds(lambda: a @ a) / 1e9
    assert bandwidth / 4 < m.bandwidth_gbs < bandwidth * 4, (m.bandwidth_gbs, bandwidth)
    assert gemm / 4 < m.gemm_gflops < gemm * 4, (m.gemm_gflops, gemm)
    fixed = et.Machine.measure(threads=1, bandwidth_gbs=7.0, gemm_gflops=9.0)
    assert (fixed.bandwidth_gbs, fixed.gemm_gflops) == (7.0, 9.0)


def test_a_rule_is_reported_under_the_ruleset_its_schedule_runs() -> None:
    """A fast-math group's rule is filed under the group where a schedule runs the group alone, and
    under `algebra_fastmath` where the default fast-math schedule runs it, in either order (the report
    once kept the first ruleset seen in the process: the default schedule then named the group)."""
    from egglog_tensor.rulesets import FASTMATH
    from egglog_tensor.rulesets.groups import GROUPS

    alone, default = GROUPS["broadcast-sum"].__egg_decls__, (DEFAULT + FASTMATH).__egg_decls__
    (held,) = (d for ident, d in alone._rulesets.items() if ident.name.endswith("broadcast-sum"))
    rule = held.rules[0]
    assert optimize_module._owner(alone, rule) == "broadcast-sum"
    assert optimize_module._owner(default, rule) == "algebra_fastmath"


swap_factors = ruleset(name="swap_factors")


@swap_factors.register
def _swap_factors(a: Tensor, b: Tensor) -> object:
    yield rewrite(a @ b).to(b @ a)  # unsound: (3, 4) @ (4, 5) becomes the undefined (4, 5) @ (3, 4)


def test_a_rule_making_ill_shaped_terms_is_named_and_its_terms_are_left_out() -> None:
    """A user's rule without a shape condition puts terms NumPy defines no shapes for into the e-graph: the
    extraction leaves them out (the program stays the traced one's value) and a warning says so, with the
    shape error of the first, rather than the compile failing with a shape error from the cost model."""
    a, b = rng.standard_normal((3, 4)), rng.standard_normal((4, 5))
    with pytest.warns(UserWarning, match=r"whose shapes NumPy does not define \(first: matmul: inner dimensions differ"):
        got = et.kernel(lambda a, b: a @ b, rules=DEFAULT + swap_factors, cache=False)(a, b)
    np.testing.assert_allclose(got, a @ b, rtol=1e-12)
