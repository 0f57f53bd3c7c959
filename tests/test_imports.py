"""Every module of the package imports first in a fresh process: `import egglog_tensor` imports its public
names on first use (PEP 562), so an import cycle between modules shows only when one of them is imported first."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "egglog_tensor"
MODULES = sorted(".".join(p.relative_to(PACKAGE.parent).with_suffix("").parts).removesuffix(".__init__")
                 for p in PACKAGE.rglob("*.py"))


def test_the_package_imports_without_egglog() -> None:
    """`import egglog_tensor` and the lowering's command line (python -m egglog_tensor.opt) leave egglog unimported."""
    code = ("import sys, egglog_tensor, egglog_tensor.opt; assert 'egglog' not in sys.modules, 'egglog imported'; "
            "assert 'kernel' in dir(egglog_tensor), 'not in dir()'; print(egglog_tensor.kernel)")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0 and "function kernel" in result.stdout, result.stderr


@pytest.mark.slow
@pytest.mark.parametrize("module", MODULES)
def test_each_module_imports_first(module: str) -> None:
    result = subprocess.run([sys.executable, "-c", f"import {module}"], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr[-2000:]
