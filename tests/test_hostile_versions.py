"""A cluster minor newer than kubernetes-validate's schemas: an honest warning and the newest schemas."""

from __future__ import annotations

from pathlib import Path

import pytest

from offline_plan.__main__ import main as plan_main
from simulator.__main__ import main as simulator_main
from tests.hostile_inputs import NEWER_KUBERNETES_MINORS

ROOT = Path(__file__).resolve().parent.parent


def _stack(tmp_path: Path, version: str) -> Path:
    lines = (ROOT / "Pulumi.dev.yaml").read_text().splitlines(keepends=True)
    [index] = [i for i, line in enumerate(lines) if line.startswith("    kubernetesVersion:")]
    lines[index] = f'    kubernetesVersion: "{version}"\n'
    (tmp_path / "Pulumi.newer.yaml").write_text("".join(lines))
    return tmp_path


@pytest.mark.parametrize("version", NEWER_KUBERNETES_MINORS)
def test_a_newer_minor_plans_with_a_warning(version, tmp_path, capsys):
    stack_dir = _stack(tmp_path, version)
    code = plan_main(["--stack", "newer", "--stack-dir", str(stack_dir), "--out", str(tmp_path / "build"),
                      "--no-policy", "--no-simulate"])
    err = capsys.readouterr().err
    assert code == 0, err
    assert f"kubernetesVersion {version} is newer than the schemas" in err and "validated against 1." in err
    assert (tmp_path / "build" / "newer" / "plan.json").is_file()


def test_a_newer_minor_simulates(tmp_path, capsys):
    assert simulator_main(["--stack", "newer", "--stack-dir", str(_stack(tmp_path, "1.38")), "--replicas", "2"]) == 0
    assert "Traceback" not in capsys.readouterr().err
