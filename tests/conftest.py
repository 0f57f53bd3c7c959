"""Test configuration: tests/ importable (tests/strategies.py) and hypothesis profiles.

Every distinct kernel signature costs a compile, so examples are few and there is no deadline. The
default profile is derandomized: every run draws the same examples, so a CI run fails only for a
change, never for a new draw. HYPOTHESIS_PROFILE=thorough runs more examples per test, drawn anew.
"""

from __future__ import annotations

import atexit
import os
import shutil
import sys
import tempfile

import pytest
from hypothesis import HealthCheck, settings

sys.path.insert(0, os.path.dirname(__file__))

# The on-disk compilation cache (egglog_tensor/cache.py) never touches ~/.cache from the tests: a
# temporary dir for the session (compiles at collection, subprocesses), and a fresh one per test
# below, so no test sees another's entries.
_SESSION_CACHE = tempfile.mkdtemp(prefix="egglog-tensor-test-cache-")
os.environ["EGGLOG_TENSOR_CACHE_DIR"] = _SESSION_CACHE
atexit.register(shutil.rmtree, _SESSION_CACHE, True)


@pytest.fixture(autouse=True)
def _kernel_cache_dir(tmp_path_factory, monkeypatch):
    """A fresh, empty compilation cache dir for each test."""
    monkeypatch.setenv("EGGLOG_TENSOR_CACHE_DIR", str(tmp_path_factory.mktemp("kernel-cache")))
    monkeypatch.delenv("EGGLOG_TENSOR_CACHE", raising=False)


@pytest.fixture(autouse=True)
def _drop_kernels():
    """Each compiled kernel holds its native code and stages: drop the test's kernels after it."""
    yield
    import strategies

    strategies._KERNELS.clear()

settings.register_profile(
    "default",
    deadline=None,
    max_examples=15,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    print_blob=True,
    derandomize=True,
)
settings.register_profile("thorough", parent=settings.get_profile("default"), max_examples=100, derandomize=False)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))
