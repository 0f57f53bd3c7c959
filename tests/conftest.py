"""Test configuration: tests/ importable (tests/strategies.py) and hypothesis profiles.

Every distinct kernel signature costs a compile, so examples are few and there is no deadline.
HYPOTHESIS_PROFILE=thorough runs more examples per test.
"""

from __future__ import annotations

import os
import sys

import pytest
from hypothesis import HealthCheck, settings

sys.path.insert(0, os.path.dirname(__file__))


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
)
settings.register_profile("thorough", parent=settings.get_profile("default"), max_examples=100)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))
