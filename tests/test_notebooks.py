"""Every notebook's code cells run in order without error (no Jupyter needed: cells are exec'd)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

NOTEBOOKS = sorted((Path(__file__).resolve().parent.parent / "notebooks").glob("*.ipynb"))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_runs(path: Path) -> None:
    cells = json.loads(path.read_text())["cells"]
    namespace: dict = {}
    code = [c for c in cells if c["cell_type"] == "code"]
    assert code, f"{path} has no code cells"
    for i, cell in enumerate(code):
        exec(compile("".join(cell["source"]), f"{path.name}[cell {i}]", "exec"), namespace)


def test_there_are_notebooks() -> None:
    assert NOTEBOOKS
