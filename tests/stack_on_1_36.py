"""A shipped stack moved to Kubernetes 1.36, with device tolerations on its GPU workload: the copy the 1.36 tests
plan, simulate and rehearse (shared by tests/test_stack_on_1_36.py and tests/rehearsal/test_stack_on_1_36.py)."""

from __future__ import annotations

import shutil
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
#: Not a shipped stack's name, so nothing under build/ of a shipped stack is overwritten.
STACK = "dev-on-1-36"
TOLERATION = {"key": "example.com/maintenance", "operator": "Exists", "effect": "NoSchedule"}


def write(folder: Path, source: str = "dev") -> Path:
    """``folder/Pulumi.<STACK>.yaml``: ``Pulumi.<source>.yaml`` on 1.36, its ``vllm-gpu`` tolerating TOLERATION."""
    text = (ROOT / f"Pulumi.{source}.yaml").read_text()
    assert 'kubernetesVersion: "1.35"' in text and "    vllm-gpu:\n" in text
    text = text.replace('kubernetesVersion: "1.35"', 'kubernetesVersion: "1.36"')
    text = text.replace("    vllm-gpu:\n", "    vllm-gpu:\n      deviceTolerations: [{key: example.com/maintenance, "
                                          "operator: Exists, effect: NoSchedule}]\n", 1)
    (folder / f"Pulumi.{STACK}.yaml").write_text(text)
    shutil.copy(ROOT / "Pulumi.yaml", folder / "Pulumi.yaml")
    return folder
