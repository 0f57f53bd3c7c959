"""`python -m egglog_tensor inspect`: stages of a file's function from the command line."""

from __future__ import annotations

import html
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from pygments.token import Error

import egglog_tensor as et
from egglog_tensor import highlight
from egglog_tensor.__main__ import main
from egglog_tensor.measure import time_text

SOURCE = textwrap.dedent('''
    import numpy as np
    import egglog_tensor as et

    def softmax(x):
        e = np.exp(x - x.max(axis=1, keepdims=True))
        return e / e.sum(axis=1, keepdims=True)

    def rows(x, n):
        return x.reshape(n, -1).sum(axis=1)

    @et.kernel(target="cpu-openmp", fastmath=True)
    def chain(a, b, v):
        return (a @ b) @ v
''')


@pytest.fixture
def kernels(tmp_path):
    path = tmp_path / "kernels.py"
    path.write_text(SOURCE)
    return str(path)


def test_summary_stage_and_stage_list(kernels, capsys):
    assert main(["inspect", f"{kernels}:softmax", "--arg", "x=64x32:float32"]) == 0
    assert "kernel softmax(x: float32[64,32]) -> float32[64,32]" in capsys.readouterr().out
    assert main(["inspect", f"{kernels}:softmax", "--arg", "x=64x32:float32", "--list-stages"]) == 0
    stages = capsys.readouterr().out.split()
    assert stages[:3] == ["traced", "optimizer", "extracted"] and stages[-1] == "asm" and "linalg" in stages
    assert main(["inspect", f"{kernels}:softmax", "--arg", "x=64x32:float32", "--explain"]) == 0
    assert "Row fusion: " in capsys.readouterr().out
    assert main(["inspect", f"{kernels}:softmax", "--arg", "x=64x32:float32:F", "--stage", "linalg"]) == 0
    linalg = capsys.readouterr().out
    assert "linalg.generic" in linalg and "\x1b[" not in linalg  # (piped: no colour)
    assert "strided<[1, 64]>" in linalg  # Fortran order reached the signature


def test_python_ints_are_static_and_measure_and_all(kernels, capsys, tmp_path):
    assert main(["inspect", f"{kernels}:rows", "--arg", "x=64:float64", "--arg", "n=8", "--measure"]) == 0
    out = capsys.readouterr().out
    assert "rows(x: float64[64], n=8) -> float64[8]" in out and "estimate/measured" in out
    assert main(["inspect", f"{kernels}:rows", "--arg", "x=64:", "--arg", "n=4", "--all", str(tmp_path / "out")]) == 0
    written = sorted(p.name for p in (tmp_path / "out").iterdir())
    assert written[0] == "00-traced.txt" and "summary.txt" in written and any(n.endswith("-asm.txt") for n in written)
    assert "float64[4]" in (tmp_path / "out" / "summary.txt").read_text()


def test_a_decorated_kernel_keeps_its_options_and_colour_is_asked_for(kernels, capsys):
    assert main(["inspect", f"{kernels}:chain", "--arg", "a=8x8:float32", "--arg", "b=8x8:float32", "--arg", "v=8:float32"]) == 0
    assert "target cpu-openmp" in (out := capsys.readouterr().out) and "fastmath=reassoc,nnan,ninf,nsz,arcp,contract,afn" in out
    assert main(["inspect", f"{kernels}:softmax", "--arg", "x=4x4:float32", "--stage", "linalg", "--color", "always"]) == 0
    assert "\x1b[" in capsys.readouterr().out


@pytest.mark.parametrize("argv, message", [
    (["{k}:nope", "--arg", "x=4x4"], "has no function 'nope'"),
    (["{k}", "--arg", "x=4x4"], "expected FILE.py:FUNC"),
    (["/no/such.py:f"], "/no/such.py: no such file"),
    (["{k}:softmax", "--arg", "x=4x4:flt"], "'flt': not a NumPy dtype"),
    (["{k}:softmax", "--arg", "x"], "expected NAME=SPEC"),
    (["{k}:softmax", "--arg", "x=4x4", "--stage", "nope"], "no stage 'nope'; stages are: traced"),
    (["{k}:softmax", "--arg", "x=16:float32"], "axis 1 is out of bounds"),  # the kernel's own error, with its line
])
def test_bad_command_lines_say_what_was_wrong(kernels, capsys, argv, message):
    assert main(["inspect", *(a.format(k=kernels) for a in argv)]) == 2
    assert message in capsys.readouterr().err


def test_the_module_entry_point_runs_it(kernels):
    done = subprocess.run([sys.executable, "-m", "egglog_tensor", "inspect", f"{kernels}:softmax", "--arg", "x=8x8:float32",
                           "--stage", "extracted"], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "Program(Vec" in done.stdout and "\x1b[" not in done.stdout


def test_every_stage_lexes_without_errors():
    """The MLIR lexer accepts every MLIR stage of a real kernel; the other stages have their own lexers."""
    comp = et.kernel(lambda x, y: np.tanh(x @ y).sum(axis=0)).inspect(np.ones((16, 16), np.float32), np.ones((16, 16), np.float32))
    for stage in comp.stages:
        if not stage.startswith("llvm-ir"):  # (Pygments' LLVM lexer lags LLVM 22's syntax; its errors only go uncoloured)
            tokens = list(highlight.lexer_for(stage).get_tokens(comp.stage(stage)))
            assert not [t for t in tokens if t[0] is Error], stage
    assert highlight.html(comp.stage("linalg"), "linalg").count("<span class=") > 50 and ".et-hl" in highlight.style()


def test_notebook_html_highlights_stages_within_its_budget(monkeypatch):
    comp = et.kernel(lambda x: np.exp(x) * 2.0).inspect(np.ones((8, 8), np.float32))
    shown = comp._repr_html_()
    assert shown.count("<details><summary>") == len(comp.stages) and "<style>" in shown
    assert '<span class="nd">' in shown or '<span class="nv">' in shown  # highlighted MLIR
    assert "<svg" in shown and "why: what the optimizer" in shown  # the program drawn, the explanation
    monkeypatch.setattr(highlight, "HTML_BUDGET", 0)
    plain = comp._repr_html_()
    assert plain.count("<details><summary>") == len(comp.stages) and plain.count("<span class=") < 5



def test_notebook_html_tabulates_costs_times_and_rules_fired():
    """The display's tables: the estimated cost traced -> extracted, the measured time once measured, the
    compile stages' times, and each ruleset's rules with how often each matched (display.py)."""
    x = np.ones((64, 32), np.float32)
    kernel = et.kernel(lambda x: np.exp(x - x.max(axis=1, keepdims=True)) / 2.0)
    kernel.measure(x)
    comp = kernel.inspect(x)
    shown = comp._repr_html_()
    report = comp.report
    assert f"{time_text(report.cost_after)}</b> extracted" in shown and f"<td>{comp.timing}</td>" in shown
    assert "optimize" in shown.split("compile time")[1].split("</tr>")[0]
    for rs in report.rulesets:
        rule, n = rs.matches[0]
        assert f'<td class="n">{n}</td><td title="{html.escape(" ".join(rule.split()))}">' in shown, rule
    assert shown.count("<tr><td rowspan=") == len([rs for rs in report.rulesets if rs.matches])
