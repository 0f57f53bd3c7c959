"""Stage-level golden tests, as upstream MLIR's lit tests: each tests/filecheck/<stage>/*.mlir holds
the IR that stage receives, `// RUN:` lines each running that one stage (python -m egglog_tensor.opt)
piped into FileCheck, and the CHECK lines. Substitutions: %python (this interpreter), %FileCheck
(the pip-installed FileCheck), %s (the file). A stage whose output depends on the machine runs once
per named CPU (`--cpu avx512`, `--cpu avx2`) with its own check prefix, whatever the host is."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from egglog_tensor.toolchain import tool_path

FILECHECK_DIR = Path(__file__).parent / "filecheck"
GOLDENS = sorted(FILECHECK_DIR.glob("*/*.mlir"))


def run_lines(path: Path) -> list[str]:
    """The file's RUN commands with their substitutions made (at least one `// RUN:` line per file)."""
    runs = re.findall(r"^// RUN: (.*)$", path.read_text(), re.MULTILINE)
    assert runs, f"{path} has no `// RUN:` line"
    substitutions = {
        "%python": shlex.quote(sys.executable),
        "%FileCheck": shlex.quote(str(tool_path("FileCheck"))),
        "%s": shlex.quote(str(path)),
    }
    return [re.sub("|".join(map(re.escape, substitutions)), lambda m: substitutions[m[0]], run) for run in runs]


def test_every_stage_dir_is_a_stage() -> None:
    from egglog_tensor.lowering.pipelines import pipeline_for, resolve_target

    names = {s.name for name in ("cpu", "cpu-openmp", "rocdl:gfx942", "nvvm:sm_90")
             for s in pipeline_for(resolve_target(name, 4 if name == "cpu-openmp" else None)).stages}
    assert {p.parent.name for p in GOLDENS} <= names


@pytest.mark.parametrize("path", GOLDENS, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_filecheck(path: Path) -> None:
    for command in run_lines(path):
        # (bash's pipefail: an opt error fails the test even where FileCheck would accept its output)
        result = subprocess.run(["bash", "-o", "pipefail", "-c", command], capture_output=True, text=True, cwd=path.parent)
        assert result.returncode == 0, f"{path.relative_to(FILECHECK_DIR)}: {command}\n{result.stderr}"


def opt(*args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "egglog_tensor.opt", *args], input=stdin, capture_output=True, text=True)


def test_opt_lists_the_stages_of_a_target() -> None:
    from egglog_tensor.lowering.pipelines import pipeline_for, resolve_target

    result = opt("--list", "--target", "cpu-openmp", "--threads", "4")
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == [s.name for s in pipeline_for(resolve_target("cpu-openmp", 4)).stages]


@pytest.mark.parametrize(("args", "stdin", "message"), [
    (("--stage", "nope"), "module {}", "unknown stage 'nope' for target 'cpu'; its stages are: rows, strips, tile, bufferize"),
    (("--stage", "tile", "-"), "func.func @f( {", "<stdin>: the MLIR does not parse"),
    (("--stage", "loops", "--print-script"), "module {}", "stage 'loops' builds no transform script"),
    (("--stage", "llvm"), str(FILECHECK_DIR / "tile" / "matmul.mlir"), "failed at stage 'llvm'"),
], ids=["unknown-stage", "parse-error", "no-script", "stage-fails"])
def test_opt_errors_name_the_problem(args: tuple[str, ...], stdin: str, message: str) -> None:
    if stdin.endswith(".mlir"):  # (a file argument: the tile stage's input has linalg.matmul, which llvm cannot lower)
        args, stdin = (*args, stdin), ""
    result = opt(*args, stdin=stdin)
    assert result.returncode == 1 and result.stdout == ""
    assert message in result.stderr and "Traceback" not in result.stderr, result.stderr


def test_opt_prints_a_stage_script() -> None:
    result = opt("--stage", "tile", "--print-script", str(FILECHECK_DIR / "tile" / "matmul.mlir"))
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("module attributes {transform.with_named_sequence}") and "linalg.matmul" in result.stdout
