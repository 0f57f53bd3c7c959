"""The provenance stage: each emitted op with the user's source lines, through rewriting."""

from __future__ import annotations

import inspect
import re

import numpy as np
import pytest

import egglog_tensor as et
from egglog_tensor.graph import Builder
from egglog_tensor.provenance import located

from test_tiling import pinned_tiles


def layer(x, b):
    y = x * np.tanh(b)
    z = y + np.exp(b)
    return np.maximum(z, 0.0)


def chain(A, B, v):
    return (A @ B) @ v


def _line(fn, text: str) -> int:
    lines, first = inspect.getsourcelines(fn)
    return first + next(i for i, line in enumerate(lines) if text in line)


def test_each_op_names_the_line_that_made_it():
    comp = et.kernel(layer, target="cpu").inspect(np.ones((512, 32), np.float32), np.ones(32, np.float32))
    assert comp.stages[comp.stages.index("linalg") + 1] == "provenance"
    text = comp.stage("provenance")
    tanh, out = _line(layer, "np.tanh"), _line(layer, "np.maximum")
    assert f"linalg.generic           <- test_provenance.py:{tanh}: y = x * np.tanh(b)\n" in text  # tanh(b), materialized
    # the output's loop: its inputs were rewritten (tanh(b) and exp(b) materialized), so the optimizer made it anew
    assert text.endswith(f"linalg.generic           <- test_provenance.py:{out}: return np.maximum(z, 0.0) "
                         "[rewritten by the optimizer: rules materialize]")  # (the rule group that builds materialize nodes)
    assert "(no source line)" not in text


def test_a_reordered_product_keeps_its_line():
    v = np.ones(64, np.float32)
    comp = et.kernel(chain, target="cpu", fastmath=True).inspect(np.ones((64, 64), np.float32), np.ones((64, 64), np.float32), v)
    rows = [r for r in comp.stage("provenance").splitlines() if r.startswith("linalg.matvec")]
    assert len(rows) == 2 and all(r.endswith(f":{_line(chain, '@')}: return (A @ B) @ v [rewritten by the optimizer: rules reassociation]")
                                  for r in rows)
    assert '"rewritten by rules reassociation"' in comp.stage("debug-info")  # the location, through the pipeline
    assert "compute values the optimizer made, not in the traced program; the rules that matched and build them: " \
           "reassociation (candidates" in comp.explain()


def test_located_matches_through_rewriting():
    b = Builder()
    x = b.make("arg", (), ("x", (4,), "float32", "C"))
    e = b.make("exp", (x,))
    out = b.make("add", (e, e))
    where = located([out], {e: ("f.py", 2), out: ("f.py", 3)}, [b.make("add", (b.make("materialize", (e,)), e))])
    by_op = {w.rewritten: w.lines for w in where.values()}
    assert sorted(by_op[False]) == [("f.py", 2)]  # x and exp: as traced (x takes its reader's line)
    assert by_op[True] == frozenset({("f.py", 2), ("f.py", 3)}) or by_op[True] == frozenset({("f.py", 3)})


def softmax(x):
    e = np.exp(x - np.max(x, axis=-1, keepdims=True))
    return e / np.sum(e, axis=-1, keepdims=True)


@pytest.mark.parametrize("target", ["cpu", "cpu-openmp"])
def test_source_lines_reach_the_llvm_ir_and_the_assembly(target):
    x = np.random.default_rng(0).standard_normal((64, 100), dtype=np.float32)
    f = et.kernel(softmax, target=target)
    comp = f.inspect(x)
    llvm_ir, asm = comp.stage("llvm-ir"), comp.stage("asm")
    assert re.search(r'!DIFile\(filename: "test_provenance.py", directory: "[^"]*tests"\)', llvm_ir)
    lines = {int(n) for n in re.findall(r"!DILocation\(line: (\d+)", llvm_ir)}
    assert {_line(softmax, "np.exp"), _line(softmax, "return")} <= lines  # the ops' lines, through the pipeline
    assert re.search(rf"!DISubprogram\(name: \"kernel\".*line: {softmax.__code__.co_firstlineno}\b", llvm_ir)  # its def line
    assert re.search(r'\.file\s+\d+ "[^"]*tests" "test_provenance.py"', asm)
    assert re.search(rf"\.loc\s+\d+ {_line(softmax, 'np.exp')} ", asm)
    e = np.exp(x - x.max(-1, keepdims=True))
    np.testing.assert_allclose(f(x), e / e.sum(-1, keepdims=True), rtol=1e-5)  # MCJIT loads code with line tables


def product(a, b):
    c = a + 1.0
    return c @ b


def test_an_error_in_emission_names_the_users_line():
    """A user's rule pinning tiles no matmul can take: the error raised emitting the product names its line."""
    a = np.ones((2, 8, 8), np.float32)
    with pytest.raises(et.CompileError, match=r"matmul_tiled: tiles must be") as raised:
        et.kernel(product, rules=pinned_tiles(0, 32, 32), target="cpu").inspect(a, a)
    line = _line(product, "c @ b")
    assert f"\n  at {__file__}:{line}: return c @ b" in str(raised.value)
    assert raised.value.lines == [(__file__, line)]


def test_an_error_in_a_lowering_stage_names_the_users_line():
    """The gpu-tile stage refuses a reversed view (linalg's GPU tiling takes no negative map
    coefficient): its message names the line that read it (the op's MLIR location)."""
    def total(x):
        y = np.exp(x)
        return y[::-1] + 1

    with pytest.raises(et.UnsupportedError, match="reversed view") as raised:
        et.kernel(total, target="nvvm:sm_90").inspect(np.ones((64, 64), np.float32))
    assert f"\n  at {__file__}:{_line(total, 'y[::-1]')}: return y[::-1] + 1" in str(raised.value)


@pytest.mark.parametrize("passes, says", [
    (("func.func(arith-emulate-wide-int{widest-int-supported=16})",), "failed to legalize operation 'arith.muli'"),
    (("convert-func-to-llvm",), "ops left after the last stage"),
])
def test_an_mlir_pass_failure_names_the_users_line(monkeypatch, passes, says):
    """A pass that fails on an op (MLIR's diagnostic locates it), and a pipeline that leaves ops unlowered:
    the CompileError names the user's line of those ops, read from their MLIR locations."""
    from egglog_tensor import stages
    from egglog_tensor.lowering.pipelines import Pipeline
    from egglog_tensor.lowering.stages import Passes

    def squares(x):
        return x * x + 3

    monkeypatch.setattr(stages, "pipeline_for", lambda target: Pipeline("broken", (Passes("wide-int", passes),)))
    with pytest.raises(et.CompileError, match=re.escape(says)) as raised:
        et.kernel(squares, target="cpu").inspect(np.ones((8, 8), np.int64))
    line = _line(squares, "x * x + 3")
    assert f"{__file__}:{line}: return x * x + 3" in str(raised.value).rsplit("\n  at ", 1)[1]
    assert (__file__, line) in raised.value.lines


def test_a_users_rule_is_named_by_its_ruleset():
    a = np.ones((2, 16, 16), np.float32)
    comp = et.kernel(product, rules=pinned_tiles(8, 8, 8), target="cpu").inspect(a, a)
    assert "matmul_tiled(" in comp.extracted_term
    rows = [r for r in comp.stage("provenance").splitlines() if r.endswith("]") and ": return c @ b" in r]
    assert rows and all("[rewritten by the optimizer: rules " in r and "tiles_8_8_8" in r for r in rows), comp.stage("provenance")
