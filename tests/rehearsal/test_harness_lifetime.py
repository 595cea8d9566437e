"""The control plane's process: stopped by SIGTERM or a closed stdin, it leaves no files and no process behind."""

from __future__ import annotations

import os
import signal

import pytest

from rehearse.control_plane import Harness, HarnessError
from tests.hang_guard import HANG_GUARD_SECONDS


@pytest.mark.parametrize("how", ["sigterm", "stdin-closed"])
def test_stopping_leaves_nothing_behind(harness, how):
    second = Harness.start(harness.version, binary=harness._proc.args[0])
    workdir = second.kubeconfig.parent
    assert second.kubeconfig.is_file() and workdir.name.startswith("rehearse-harness-")
    try:
        if how == "sigterm":
            os.kill(second._proc.pid, signal.SIGTERM)
        else:
            second._proc.stdin.close()
        second._proc.wait(timeout=HANG_GUARD_SECONDS)
        assert not workdir.exists(), f"{workdir} left behind"  # the process removes it before it exits
        with pytest.raises(ProcessLookupError):
            os.killpg(second._proc.pid, 0)
    finally:
        second.close()


def test_given_workdir_is_kept_with_its_kubeconfig_gone(harness, tmp_path):
    with Harness.start(harness.version, tmp_path / "wd", binary=harness._proc.args[0]) as second:
        assert second.kubeconfig == (tmp_path / "wd" / "kubeconfig")
        assert second.kubeconfig.is_file()
    assert (tmp_path / "wd").is_dir() and not list((tmp_path / "wd").iterdir())
    with pytest.raises(HarnessError, match="closed"):
        second.reset()
