"""Compile time like a JIT's (issue 26): the structural wins guarded, not wall-clock times (the
benchmark, benchmarks/bench_jit_compile.py, measures those). A second kernel of a process reuses the
rules, their e-graph and their egglog commands; a compile formats no rule text nor term text, collects
no garbage it need not, pretty-prints no literal, parses the optimized LLVM IR only where its code is
made, and translates to LLVM IR without starting mlir-translate."""

from __future__ import annotations

import gc
import gzip
import json
import pickle
import re
import time

import egglog.egraph
import numpy as np
import pytest
from egglog import EGraph
from egglog.egraph_state import EGraphState
from mlir import ir

import egglog_tensor as et
from egglog_tensor import cache, optimize, prebuilt, provenance, rulesets, stages
from egglog_tensor.lowering import llvm
from egglog_tensor.lowering.pipelines import lower_to_llvm_ir
from egglog_tensor.lowering.translate import translate


def gelu(x):
    return 0.5 * x * (1.0 + np.tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)))


def softmax(x):
    e = np.exp(x - np.max(x, axis=-1, keepdims=True))
    return e / np.sum(e, axis=-1, keepdims=True)


def double_transpose(x):
    return (x.T).T * 1.0


X = np.random.default_rng(0).standard_normal((64, 48)).astype(np.float32)


class Counter:
    """Wraps a callable, counting its calls (across threads: the optimizer's run on the egglog thread)."""

    def __init__(self, fn):
        self.fn, self.calls = fn, []

    def __call__(self, *args, **kwargs):
        self.calls.append(args)
        return self.fn(*args, **kwargs)


@pytest.fixture
def warmed():
    """A process that compiled gelu and softmax with the default rules (the base e-graph and commands exist,
    with the rules of their ops and dtypes: prebuilt.Commands.needed)."""
    np.testing.assert_allclose(et.kernel(gelu, cache=False)(X), gelu(X), rtol=2e-6, atol=1e-6)
    np.testing.assert_allclose(et.kernel(softmax, cache=False)(X[:, :40]), softmax(X[:, :40]), rtol=2e-6, atol=1e-7)


def test_second_kernel_builds_no_egraph_and_converts_no_schedule(warmed, monkeypatch):
    bases = {key: base.egraph for key, (_, base) in optimize._BASES.items()}
    made = Counter(EGraph.__init__)
    converted = Counter(EGraphState.run_schedule_to_egg)
    monkeypatch.setattr(EGraph, "__init__", made)
    monkeypatch.setattr(EGraphState, "run_schedule_to_egg", converted)
    np.testing.assert_allclose(et.kernel(softmax, cache=False)(X), softmax(X), rtol=2e-6, atol=1e-7)
    assert made.calls == [] and converted.calls == []
    assert all(optimize._BASES[key][1].egraph is egraph for key, egraph in bases.items())


def test_a_kernel_finds_its_base_pushed_and_pops_it_after_returning(warmed, monkeypatch):
    """egglog's push and pop (~0.1 s) are done on the idle egglog thread, not on a compile's clock."""

    def settled() -> set[str]:
        deadline = time.monotonic() + 30
        while set(optimize._STATES.values()) != {"pushed"} and time.monotonic() < deadline:
            time.sleep(0.01)
        return set(optimize._STATES.values())

    assert settled() == {"pushed"}
    calls: list[str] = []
    for name in ("push", "pop"):
        monkeypatch.setattr(EGraph, name, lambda egraph, fn=getattr(EGraph, name), name=name: (calls.append(name), fn(egraph))[1])
    during: list[list[str]] = []
    optimized = optimize._optimize
    monkeypatch.setattr(optimize, "_optimize", lambda *args: (calls.clear(), optimized(*args), during.append(list(calls)))[1])
    np.testing.assert_allclose(et.kernel(softmax, cache=False)(X), softmax(X), rtol=2e-6, atol=1e-7)
    assert during == [[]]
    assert settled() == {"pushed"} and sorted(calls) == ["pop", "push"]


def test_compile_formats_no_rule_text_until_the_report_is_read(warmed, monkeypatch):
    formatted = Counter(optimize.pretty_decl)
    monkeypatch.setattr(optimize, "pretty_decl", formatted)
    monkeypatch.setattr(egglog.egraph, "pretty_decl", formatted)  # (str() of a schedule or ruleset)
    monkeypatch.setattr(optimize, "_RULES", {})  # (texts made by earlier tests would not be made again)
    k = et.kernel(double_transpose, cache=False)
    np.testing.assert_array_equal(k(X), X)
    assert formatted.calls == []
    report = k.inspect(X).report
    assert any("transpose" in rule for rule, _ in report.matches), str(report)
    assert formatted.calls  # made when read
    copied = pickle.loads(pickle.dumps(report))  # pickled with its texts
    assert [rs.matches for rs in copied.rulesets] == [rs.matches for rs in report.rulesets]
    assert str(copied) == str(report)


def test_compile_collects_garbage_only_after_dropping_an_egraph(warmed, monkeypatch):
    collected = Counter(gc.collect)
    monkeypatch.setattr(gc, "collect", collected)
    np.testing.assert_allclose(et.kernel(softmax, cache=False)(X[:7]), softmax(X[:7]), rtol=2e-6, atol=1e-7)
    assert collected.calls == []


def test_optimized_ir_is_parsed_only_where_code_is_generated(warmed, monkeypatch):
    parsed = Counter(llvm.llvm.parse_assembly)
    monkeypatch.setattr(llvm.llvm, "parse_assembly", parsed)
    x = X[:, :5].copy()
    k = et.kernel(gelu, cache=False)
    np.testing.assert_allclose(k(x), gelu(x), rtol=2e-6, atol=1e-6)
    module = k.inspect(x).module
    texts = [args[0] for args in parsed.calls]
    assert module.llvm_ir in texts  # verified here; the O3 output only in the worker, which generates the code
    assert "vector.body" in module.optimized_ir and module.optimized_ir not in texts


def test_compile_makes_no_term_text_until_read(warmed, monkeypatch):
    printed = Counter(stages.egglog_text)
    monkeypatch.setattr(stages, "egglog_text", printed)
    k = et.kernel(softmax, cache=False)
    np.testing.assert_allclose(k(X), softmax(X), rtol=2e-6, atol=1e-7)
    assert printed.calls == []
    comp = k.inspect(X)
    assert "Program(Vec[Tensor](" in comp.traced_term and "exp(" in comp.extracted_term
    assert len(printed.calls) == 2 and comp.stage("extracted") == comp.extracted_term  # made once each
    assert comp.traced_term == str(k.trace(X).term)


def test_llvm_ir_is_translated_in_the_pipeline_child_as_mlir_translate_does(warmed, monkeypatch):
    tool = Counter(lower_to_llvm_ir)
    monkeypatch.setattr(stages, "lower_to_llvm_ir", tool)
    x = X[:9].copy()
    comp = et.kernel(softmax, cache=False).inspect(x)
    assert tool.calls == []
    last = comp.stages[comp.stages.index("llvm-ir") - 1]
    assert comp.stage("llvm-ir") == lower_to_llvm_ir(comp.stage(last))  # the tool's text, byte for byte


def test_a_module_that_does_not_translate_gives_none_not_a_crash():
    with ir.Context():
        assert translate(ir.Module.parse("module { func.func @f() { return } }")) is None  # func: not LLVM dialect


def test_egraph_size_counts_what_egglog_counts(warmed):
    traced = et.kernel(softmax, cache=False).trace(X)
    ours, egglogs = optimize.rewritten(list(traced.outputs), traced.options.schedule(),
                                       lambda egraph: (optimize.egraph_size(egraph), sum(n for _, n in egraph.all_function_sizes())))
    assert ours == egglogs > len(traced.outputs)


def _matches(report):
    """Each ruleset's rule matches (rules matched equally often come in egglog's hash order: sorted)."""
    return sorted((rs.name, rs.iterations, sorted(rs.matches)) for rs in report.rulesets)


def _builders(report):
    return {op: set(rules) for op, rules in provenance.builders(report).items()}


def _release_bases():
    optimize._EGGLOG_THREAD.run(optimize._release_bases)


def _default_base():
    return optimize._BASES[rulesets.DEFAULT.schedule, True][1]


def test_a_loaded_base_declares_the_rules_its_programs_can_match_and_extracts_as_the_full_base(monkeypatch):
    """The package default's loaded base declares only the rules its programs' constructors can match
    (a tenth of them for gelu: adding a rule to egglog costs ~0.35 ms), more as programs need them, in
    their saved order; the extracted programs, iterations and matches are those of the base with all."""
    monkeypatch.setenv("EGGLOG_TENSOR_CACHE", "0")
    programs = [(gelu, X), (softmax, X), (double_transpose, X), (softmax, X.astype(np.float64))]
    _release_bases()
    got, sizes = [], []
    for fn, x in programs:
        got.append(et.kernel(fn, cache=False).inspect(x))
        sizes.append(_default_base().loaded)
    rules = len(_default_base().commands.rules)  # (not the Commands: its parser e-graph is dropped on the egglog thread)
    assert 0 < len(sizes[0]) < rules / 4
    assert all(a <= b for a, b in zip(sizes, sizes[1:])) and len(sizes[0]) < len(sizes[1]) < len(sizes[3])
    monkeypatch.setattr(prebuilt.Commands, "needed", lambda self, ops: frozenset(self.rules))  # every rule
    _release_bases()
    full = [et.kernel(fn, cache=False).inspect(x) for fn, x in programs]
    assert len(_default_base().loaded) == rules
    for a, b in zip(got, full):
        assert a.extracted_term == b.extracted_term and a.stage("linalg") == b.stage("linalg")
        assert a.report.iterations == b.report.iterations and _matches(a.report) == _matches(b.report)
    _release_bases()


def test_package_default_base_is_loaded_from_saved_commands_without_converting_a_rule(monkeypatch):
    """The package default's base e-graph is saved in the cache dir as egglog commands (prebuilt.py);
    a process without it in memory loads them: egglog-python converts no rule, and the kernel's stages
    and report are those of the base egglog-python builds (the cache off)."""
    monkeypatch.setenv("EGGLOG_TENSOR_CACHE", "0")
    monkeypatch.setattr(prebuilt, "_packaged", lambda name: None)
    _release_bases()
    built = et.kernel(softmax, cache=False).inspect(X)
    assert not optimize._BASES[rulesets.DEFAULT.schedule, True][1].rules  # (built through egglog-python)
    monkeypatch.delenv("EGGLOG_TENSOR_CACHE")
    _release_bases()
    et.kernel(softmax, cache=False).inspect(X)  # records and saves it
    assert prebuilt.saved("DEFAULT") is not None
    _release_bases()
    converted = Counter(EGraphState.command_to_egg)
    monkeypatch.setattr(EGraphState, "command_to_egg", converted)
    loaded = et.kernel(softmax, cache=False).inspect(X)
    assert converted.calls == [] and optimize._BASES[rulesets.DEFAULT.schedule, True][1].rules
    assert loaded.stage("linalg") == built.stage("linalg") and loaded.extracted_term == built.extracted_term
    assert _matches(loaded.report) == _matches(built.report)
    assert str(loaded.report).count("\n") == str(built.report).count("\n")
    assert _builders(loaded.report) == _builders(built.report)  # (explain's rules per op)
    stored = cache.decode_report(json.loads(json.dumps(cache.encode_report(loaded.report))))  # (rules by place)
    assert _matches(stored) == _matches(built.report)


def test_a_saved_base_is_used_only_for_its_sources_and_unmodified_rules(monkeypatch):
    """The saved commands are keyed by the package's sources (and egglog's version, the host's tiling
    rules): other sources find none; a package ruleset holding other rules than its module's is no
    package schedule (its base is built through egglog-python, as the cache key is its full text)."""
    monkeypatch.setattr(prebuilt, "_packaged", lambda name: None)
    _release_bases()
    et.kernel(softmax, cache=False)(X[:3])  # (saved in this test's cache dir)
    assert prebuilt.saved("DEFAULT") is not None and cache.package_schedule_name(rulesets.DEFAULT) == "DEFAULT"
    monkeypatch.setattr(cache, "source_hash", lambda: "edited")
    assert prebuilt.saved("DEFAULT") is None
    monkeypatch.setattr(cache._Registered, "holds", lambda self: False)
    assert cache.package_schedule_name(rulesets.DEFAULT) is None
    assert cache.package_schedule_name(rulesets.DEFAULT + rulesets.FASTMATH) is None


def test_a_saved_base_that_does_not_run_is_built_again(monkeypatch):
    """A saved file with the right key whose commands egglog refuses (edited by hand, a damaged disk):
    the base is built through egglog-python and the kernel compiles and runs as NumPy's."""
    monkeypatch.setattr(prebuilt, "_packaged", lambda name: None)
    _release_bases()
    et.kernel(softmax, cache=False)(X[:3])  # (saved in this test's cache dir)
    data = prebuilt.saved("DEFAULT")
    data["commands"] = ["(this is not egglog"] + data["commands"]
    cache.write_atomic(prebuilt.path("DEFAULT"), json.dumps(data).encode())
    _release_bases()
    got = et.kernel(softmax, cache=False)(X)
    assert not optimize._BASES[rulesets.DEFAULT.schedule, True][1].rules  # (built through egglog-python)
    np.testing.assert_allclose(got, softmax(X), rtol=1e-6)


def test_one_base_serves_every_target_whose_facts_choose_the_tiles(monkeypatch) -> None:
    """The tiling rules are the same for every Target: what they offer is read from facts added with each
    program (rulesets.tiling.target_facts), so kernels for two machines run on the one packaged base (no rule
    converted through egglog-python) and each term's cache tile is one of its own Target's candidates."""
    from egglog_tensor.lowering.policy import ACCUMULATORS
    from egglog_tensor.rulesets.tiling import candidates, matmul_tile, reduction_lanes, target_facts
    from egglog_tensor.target import NAMED

    monkeypatch.setenv("EGGLOG_TENSOR_CACHE", "0")
    _release_bases()
    a = np.ones((1024, 1024), np.float32)
    et.kernel(lambda a: a.sum(axis=0), cache=False).trace(a[:4]).optimize()  # (the base loaded, its declarations converted)
    converted = Counter(EGraphState.command_to_egg)
    tiles = {}
    with monkeypatch.context() as patched:
        patched.setattr(EGraphState, "command_to_egg", converted)
        for name in ("avx2", "avx512"):
            term = et.kernel(lambda a, b: a @ b, target=NAMED[name], cache=False).trace(a, a).optimize().extracted_term
            tiles[name] = tuple(int(t) for t in re.search(r"matmul_tiled\(.*?, Vec\((\d+), (\d+), (\d+)\)\)", term).groups())
    assert converted.calls == [] and _default_base().commands is not None and len(optimize._BASES) == 1
    for name, tile in tiles.items():
        facts = target_facts(NAMED[name])
        assert tile in candidates(4, NAMED[name]) and {v[:3] for r, v in facts if r is matmul_tile} == set(candidates(4, NAMED[name]))
    assert {v[0] for r, v in target_facts(NAMED["avx512"]) if r is reduction_lanes} == {16 * n for n in ACCUMULATORS}
    assert {v[0] for r, v in target_facts(NAMED["avx2"]) if r is reduction_lanes} == {8 * n for n in ACCUMULATORS}


REGENERATE = "stale: python -c 'import egglog_tensor.prebuilt as p; p.write_packaged()' writes it again"


NAMES = ("DEFAULT", "DEFAULT + FASTMATH")


def test_packaged_bases_serve_with_the_cache_off_as_egglog_python_builds(monkeypatch):
    """With the cache off the package default's base is loaded from the base generated into the package
    (prebuilt.py): no rule converted, the kernel's stages and report those of egglog-python's base;
    with its rules' sources edited (`rules_hash`) it is not used."""
    monkeypatch.setenv("EGGLOG_TENSOR_CACHE", "0")
    _release_bases()
    converted = Counter(EGraphState.command_to_egg)
    with monkeypatch.context() as patched:
        patched.setattr(EGraphState, "command_to_egg", converted)
        for fastmath in (False, True):
            loaded = et.kernel(softmax, cache=False, fastmath=fastmath).inspect(X)
            assert "cache: disabled" in str(loaded)
        assert converted.calls == [] and all(base.rules for _, base in optimize._BASES.values())
        patched.setattr(prebuilt, "rules_hash", lambda: "edited")
        assert prebuilt._packaged("DEFAULT") is None and prebuilt._packaged("DEFAULT + FASTMATH") is None
    monkeypatch.setattr(prebuilt, "_packaged", lambda name: None)
    _release_bases()
    built = et.kernel(softmax, cache=False, fastmath=True).inspect(X)
    assert not optimize._BASES[(rulesets.DEFAULT + rulesets.FASTMATH).schedule, True][1].rules  # (egglog-python's)
    assert loaded.stage("linalg") == built.stage("linalg") and loaded.extracted_term == built.extracted_term
    assert loaded.stage("llvm-ir") == built.stage("llvm-ir") and _rule_matches(loaded.report) == _rule_matches(built.report)
    _release_bases()


def _rule_matches(report):
    """Each rule's matches, by the ruleset the report files it under."""
    return sorted((rs.name, match) for rs in report.rulesets for match in rs.matches)


@pytest.mark.parametrize("name", NAMES)
def test_packaged_base_is_current(name):
    """Each packaged base is keyed by the current rules' sources and egglog; a stale one fails here."""
    data = json.loads(gzip.decompress(prebuilt.packaged_path(name).read_bytes()))
    assert data["key"] == prebuilt._key(name, packaged=True), REGENERATE


@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
def test_packaged_base_is_what_recording_makes(name):
    """Recording the base again makes the packaged file's contents (on any kind of CPU: the rules read
    the Target from facts added with each program)."""
    data = json.loads(gzip.decompress(prebuilt.packaged_path(name).read_bytes()))
    made = json.loads(json.dumps(optimize._EGGLOG_THREAD.run(prebuilt.generate, name, optimize._describe)))
    assert made == data, REGENERATE
