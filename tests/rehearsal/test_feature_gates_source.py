"""The DRA feature-gate table (gpu_fungibility.versions) against the pinned Kubernetes' own kube_features.go.

It reads k8s.io/kubernetes at each pinned patch from the Go module cache, which `make rehearse-compile` fills
(CI runs it first); without the file it skips on a workstation and fails under CI (tests/ci.py).
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest
from gpu_fungibility.versions import DRA_FEATURE_GATES_ON_FROM, dra_feature_enabled

from tests.ci import unavailable

ROOT = Path(__file__).resolve().parents[2]
PINNED = json.loads((ROOT / "rehearse" / "harness" / "versions.json").read_text())


def _module_cache() -> Path:
    return Path(os.environ.get("GOMODCACHE") or Path(os.environ.get("GOPATH") or Path.home() / "go") / "pkg" / "mod")


def _default_at(source: str, gate: str, minor: tuple[int, int]) -> bool:
    """The gate's default at ``minor`` from kube_features.go's versioned spec list (the last entry not after it)."""
    block = re.search(rf"^\t{gate}: {{\n(.*?)^\t}},", source, re.M | re.S)
    assert block, gate
    default = False
    for major, minor_, value in re.findall(r'MustParse\("(\d+)\.(\d+)"\), Default: (true|false)', block.group(1)):
        if (int(major), int(minor_)) <= minor:
            default = value == "true"
    return default


@pytest.mark.parametrize("minor", sorted(PINNED))
def test_the_gate_table_is_what_the_pinned_kubernetes_says(minor):
    """Each gate's default at each pinned patch, as kube_features.go's versioned spec list says."""
    source = _module_cache() / f"k8s.io/kubernetes@{PINNED[minor]}/pkg/features/kube_features.go"
    if not source.is_file():
        unavailable(f"{source} is not in this machine's Go module cache (make rehearse-compile fills it)")
    text = source.read_text()
    key = tuple(int(x) for x in minor.split("."))
    for gate in DRA_FEATURE_GATES_ON_FROM:
        assert dra_feature_enabled(gate, minor) is _default_at(text, gate, key), (gate, minor)
