"""The policy-pack processes a test's own code under test started, and nothing else on the machine.

A test that counted every ``pulumi.policy`` process on the machine would fail whenever another checkout, an
editor's test runner or a CI job beside it runs a pack. This records the processes that
:class:`policy_gate.analyzer.PolicyPackProcess` starts while the test runs, so a test asserts on those alone.
"""

from __future__ import annotations

import subprocess

import pytest


@pytest.fixture()
def started_policy_packs(monkeypatch) -> list[subprocess.Popen]:
    """Every pack process started during the test (including one whose start-up failed)."""
    from policy_gate.analyzer import PolicyPackProcess

    started: list[subprocess.Popen] = []
    original = PolicyPackProcess.__init__

    def recording(self, *args, **kwargs):
        try:
            original(self, *args, **kwargs)
        finally:
            if getattr(self, "process", None) is not None:
                started.append(self.process)

    monkeypatch.setattr(PolicyPackProcess, "__init__", recording)
    return started


def still_running(started: list[subprocess.Popen]) -> list[int]:
    """The pids among ``started`` that the code under test has not stopped and waited for."""
    return [process.pid for process in started if process.returncode is None]
