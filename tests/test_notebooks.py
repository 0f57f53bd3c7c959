"""Every notebook runs top to bottom in a Jupyter kernel (nbclient, ipykernel: the dev extra)."""

from __future__ import annotations

import os
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

NOTEBOOKS = sorted((Path(__file__).resolve().parent.parent / "notebooks").glob("*.ipynb"))


@pytest.mark.slow
@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_runs(path: Path, monkeypatch) -> None:
    monkeypatch.setenv("EGGLOG_TENSOR_PROGRESS", "0")
    notebook = nbformat.read(path, as_version=4)
    assert any(c.cell_type == "code" for c in notebook.cells), f"{path} has no code cells"
    NotebookClient(notebook, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}}).execute()
    errors = [o for c in notebook.cells if c.cell_type == "code" for o in c.outputs if o.output_type == "error"]
    assert not errors, errors  # (execute raises on the first error already; this guards allow-errors metadata)


def test_the_notebooks_are_there_and_saved_with_their_outputs() -> None:
    names = [p.stem for p in NOTEBOOKS]
    assert names[0] == "01-quickstart" and {"02-rulesets", "03-stages", "04-benchmarks", "05-gpu"} <= set(names)
    for path in NOTEBOOKS:
        code = [c for c in nbformat.read(path, as_version=4).cells if c.cell_type == "code"]
        assert all(c.execution_count for c in code), f"{path.name}: save it executed (outputs are part of the docs)"
        assert os.path.getsize(path) < 1_000_000, f"{path.name}: keep notebooks light"
