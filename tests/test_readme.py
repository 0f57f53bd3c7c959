"""The README's code blocks run as written."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np

README = Path(__file__).resolve().parent.parent / "README.md"


def python_blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", README.read_text(), re.DOTALL)


def test_quick_start_runs_and_shows_stages(capsys) -> None:
    quick_start = python_blocks()[0]
    namespace: dict = {}
    exec(compile(quick_start, "README.md:quick-start", "exec"), namespace)
    printed = capsys.readouterr().out
    assert "kernel f(A: float32[64,32]" in printed
    assert "linalg.matmul" in printed and "linalg.generic" in printed
    comp = namespace["comp"]
    assert comp.stages[:4] == ["traced", "optimizer", "extracted", "linalg"]
    assert comp.stages[-3:] == ["llvm-ir", "llvm-ir-optimized", "asm"]


def test_custom_rules_example_runs_and_fires() -> None:
    quick_start, rules_example = python_blocks()[:2]
    namespace: dict = {}
    exec(compile(quick_start, "README.md:quick-start", "exec"), namespace)
    exec(compile(rules_example, "README.md:rules", "exec"), namespace)
    g = namespace["g"]
    x = np.linspace(-3, 3, 7, dtype=np.float32)
    np.testing.assert_array_equal(g(x), x * 2.0)
    report = g.inspect(x).report
    assert any("Tensor.const(2.0, dt)" in rule and n == 1 for rule, n in report.matches)
