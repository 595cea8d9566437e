"""Tests that run Kubernetes' own control plane (the Go harness): `make test-rehearse`, never `make test`.

Without Go they skip on a workstation; under CI (tests/ci.py) a missing toolchain or a failed build fails them.
The control plane is built (first use: minutes) and started once per session; REHEARSE_MINOR picks the
Kubernetes minor (default: the harness' default).
"""

from __future__ import annotations

import os
import sys

import pytest

from rehearse.control_plane import DEFAULT_MINOR, Harness, HarnessError, HarnessUnavailable, ensure_built
from tests.ci import unavailable


@pytest.fixture(scope="session")
def harness():
    minor = os.environ.get("REHEARSE_MINOR", DEFAULT_MINOR)
    try:
        binary = ensure_built(minor, progress=lambda line: print(line, file=sys.stderr, flush=True))
        control_plane = Harness.start(minor, binary=binary)
    except (HarnessUnavailable, HarnessError) as exc:
        unavailable(f"the rehearsal control plane is not available: {exc}")
    with control_plane:
        yield control_plane


@pytest.fixture
def cluster(harness):
    """The session's control plane, emptied before and after the test."""
    harness.reset()
    yield harness
    harness.reset()
