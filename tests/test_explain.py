"""comp.explain(): the decisions of a compilation in sentences, each backed by a stage."""

from __future__ import annotations

import re

import numpy as np

import egglog_tensor as et

rng = np.random.default_rng(0)


def _explained(fn, *args, **options) -> tuple[str, et.Compilation]:
    comp = et.kernel(fn, **options).inspect(*args)
    text = comp.explain()
    for line in text.splitlines():  # every sentence names stages that exist
        stages = re.fullmatch(r".*\[([\w, -]+)\]", line)
        assert stages, line
        assert all(s.strip() in comp.stages for s in stages[1].split(",")), line
    return text, comp


def test_softmax_row_fusion_and_shared_exp():
    text, comp = _explained(lambda x: np.exp(x - x.max(axis=1, keepdims=True)) / np.exp(x - x.max(axis=1, keepdims=True)).sum(axis=1, keepdims=True),
                            rng.standard_normal((512, 256), np.float32), target="cpu")
    rows = int(re.search(r"et\.rows = array<i64: (\d+)>", comp.stage("linalg"))[1])
    assert f"over 512 rows run as one loop over blocks of {rows} rows" in text
    assert "exp (512x256 float32) is computed once" in text and "as a block in cache inside the row loop" in text
    assert "exp is computed with inline polynomial code" in text
    assert "threads" not in text  # (one thread: no parallel regions to speak of)


def test_matmul_tiles_and_fused_epilogue():
    a, b, c = rng.standard_normal((256, 256), np.float32), rng.standard_normal((256, 256), np.float32), rng.standard_normal(256, np.float32)
    text, comp = _explained(lambda a, b, c: np.maximum(a @ b + c, 0.0), a, b, c, target="cpu-openmp", threads=2)
    tiles = re.search(r"et\.tiles = \[(\d+), (\d+), (\d+)\]", comp.stage("linalg")).groups()
    assert f"TM, TN, TK = {', '.join(tiles)}" in text
    assert "Fused, with no buffer of their own: 2 elementwise ops (add, maximum)" in text
    assert "split across 2 threads" in text


def test_broadcast_operand_materialized_and_unoptimized_program():
    x, b = rng.standard_normal((64, 1024), np.float32), rng.standard_normal(1024, np.float32)
    text, _ = _explained(lambda x, b: x * np.tanh(b) + np.exp(b), x, b)
    assert "tanh (1024 float32) is computed once and stored in a buffer of its own (4 KiB)" in text
    assert "recomputing it for each of the 65,536 elements it is broadcast to" in text
    text, _ = _explained(lambda x, b: x * np.tanh(b) + np.exp(b), x, b, rules=None)
    assert "is computed once" not in text and "compiled as traced" in text


def test_diff_of_two_stages_and_of_two_schedules():
    x, b = rng.standard_normal((64, 1024), np.float32), rng.standard_normal(1024, np.float32)
    fn = lambda x, b: x * np.exp(b)  # noqa: E731
    comp = et.kernel(fn).inspect(x, b)
    stages = comp.diff("linalg", "math")
    assert stages.startswith("--- <lambda>: linalg\n+++ <lambda>: math\n")
    assert "-" + next(line for line in comp.stage("linalg").splitlines() if "math.exp" in line) + "\n" in stages  # exp inlined
    assert comp.diff("linalg") == ""  # (a stage against itself)
    schedules = comp.diff("extracted", other=et.kernel(fn, rules=None).inspect(x, b)).splitlines()
    assert schedules[1] == "+++ <lambda>: extracted (other)"
    assert any(line.startswith("-") and "materialize(exp(" in line for line in schedules)  # the default stores exp(b) once
