"""The code blocks of README.md and docs/*.md run as written, and their links resolve.

README.md's quick start and rules example run by position (first and second ```python block);
each docs/*.md file's blocks run in order in one namespace, as a reader would paste them, and
assert what they show."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
DOCS = sorted((ROOT / "docs").glob("*.md"))


def python_blocks(path: Path = README) -> list[str]:
    return re.findall(r"```python\n(.*?)```", path.read_text(), re.DOTALL)


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


# What each docs file's blocks print, beyond the asserts the blocks make themselves.
PRINTED = {
    "architecture.md": ["'traced', 'optimizer', 'extracted', 'linalg', 'provenance', 'rows-script'"],
    "rules-and-fastmath.md": [" @ (Tensor.arg(\"B\""],
    "accuracy.md": ["float32 sum of 2^20 x 0.1: relative error"],
    "cache.md": ["cache: hit", "stages (loaded from cache)"],
}


@pytest.mark.parametrize("doc", [d for d in DOCS if python_blocks(d)], ids=lambda d: d.name)
def test_docs_code_blocks_run(doc: Path, capsys) -> None:
    namespace: dict = {"__name__": f"docs.{doc.stem}"}
    for i, block in enumerate(python_blocks(doc)):
        exec(compile(block, f"docs/{doc.name}:block-{i + 1}", "exec"), namespace)
    printed = capsys.readouterr().out
    for expected in PRINTED.get(doc.name, []):
        assert expected in printed, f"docs/{doc.name} did not print {expected!r}:\n{printed}"


def test_docs_have_code_blocks_to_run() -> None:
    with_blocks = {d.name for d in DOCS if python_blocks(d)}
    assert set(PRINTED) <= with_blocks
    assert "calling.md" in with_blocks


def test_readme_links_every_docs_file_and_links_resolve() -> None:
    readme = README.read_text()
    for doc in DOCS:
        assert f"](docs/{doc.name}" in readme, f"README.md does not link docs/{doc.name}"
    for page in [README, *DOCS]:
        text = page.read_text()
        for target in re.findall(r"\]\(([^)#\s]+\.md)(?:#([^)\s]+))?\)", text):
            path, anchor = target
            linked = (page.parent / path).resolve()
            assert linked.is_file(), f"{page.name} links {path}, which does not exist"
            if anchor:
                headings = {re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-")
                            for h in re.findall(r"^#+ (.*)$", linked.read_text(), re.MULTILINE)}
                assert anchor in headings, f"{page.name} links {path}#{anchor}, no such heading"
