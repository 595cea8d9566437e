"""The one way the tests tell CI from a workstation.

``CI`` is set by GitHub Actions (``true``) and most CI systems; ``.ci/run`` sets it itself. Any of the usual
truthy spellings counts (``1``, ``true``, ``yes``, ``on``, any case). On CI a test that needs something
missing (Go, the rehearsal's control plane) fails; on a workstation it skips, saying why.
"""

from __future__ import annotations

import os

import pytest

TRUTHY = frozenset({"1", "true", "yes", "on"})


def in_ci(environ: dict[str, str] | None = None) -> bool:
    return (os.environ if environ is None else environ).get("CI", "").strip().lower() in TRUTHY


def unavailable(reason: str) -> None:
    """Fail under CI, skip elsewhere: what a test does when what it needs is not on this machine."""
    if in_ci():
        pytest.fail(f"CI is set and {reason}", pytrace=False)
    pytest.skip(reason)
