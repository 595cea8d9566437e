"""Tests that run Pulumi's own CLI and engine (built from Go modules): `make test-preview`, never `make test`.

Without Go they skip on a workstation; under CI (tests/ci.py) a missing toolchain or a failed build fails them.
The CLI and the kubernetes provider are built (first use: minutes, cached in .engine-cache/) once per session.
"""

from __future__ import annotations

import pytest

from pulumi_engine import build
from tests.ci import unavailable


@pytest.fixture(scope="session")
def engine_tools() -> build.Tools:
    try:
        return build.ensure_tools()
    except build.EngineUnavailable as exc:
        unavailable(f"the real Pulumi engine is not available: {exc}")
