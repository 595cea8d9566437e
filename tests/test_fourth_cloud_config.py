"""A cloud registered at runtime is a cloud like the others to the stack program and the preflight.

ZKC (tests/zkc/) registers its profile here, in this process: its stack file parses, its own rules and its
components' checks run, an unknown cloud's message names it among the registered ones, the config reference
lists it, and the preflight, which it has no module for, says so in one line. No shared file names it.
"""

from pathlib import Path

import pytest
from gpu_fungibility import clouds

from offline_plan.run import read_stack_file
from stacks.loader import ConfigError, parse_stack_config

ZKC = Path(__file__).resolve().parent / "zkc"


@pytest.fixture
def zkc():
    from tests import zkc as module

    clouds.register(module.PROFILE)
    yield module
    clouds.PROFILES.pop(module.PROFILE.name, None)


def _raw() -> dict:
    return read_stack_file("zkc-dev", ZKC).namespace_config


def _issues(raw: dict) -> list[tuple[str, str]]:
    with pytest.raises(ConfigError) as refused:
        parse_stack_config(raw)
    return refused.value.issues


def test_its_stack_parses_with_every_check(zkc):
    cfg = parse_stack_config(_raw())
    assert cfg.cluster.cloud == "zkc" and list(cfg.node_pools) == ["h100", "l4"]


def test_its_own_rules_and_its_components_checks_name_their_keys(zkc):
    raw = _raw()
    raw["cluster"]["zones"] = ["zr1-a", "elsewhere-b"]
    raw["nodePools"]["l4"]["instanceTypes"] = ["g6.xlarge"]
    raw["nodePools"]["h100"]["machineType"] = "z1-gpu-1"
    issues = dict(_issues(raw))
    assert issues["cluster.zones[1]"] == "'elsewhere-b' is not a zone of zr1"  # ZKC's own rule
    assert issues["nodePools.l4.instanceTypes"] == "instanceTypes is for EKS; on ZKC set machineType"
    assert "z1-gpu-1 carries 1 x nvidia-l4" in issues["nodePools.h100.accelerator"]  # its pool component's check


def test_an_unknown_cloud_is_refused_naming_every_registered_one(zkc):
    raw = _raw()
    raw["cluster"]["cloud"] = "zkd"
    assert _issues(raw) == [("cluster.cloud", "Input should be 'gke', 'eks', 'aks' or 'zkc'")]


def test_without_it_the_cloud_is_unknown():
    raw = _raw()
    assert _issues(raw) == [("cluster.cloud", "Input should be 'gke', 'eks' or 'aks'")]


def test_the_config_reference_lists_it(zkc):
    from stacks.reference import markdown

    assert "| `cluster.cloud` | gke \\| eks \\| aks \\| zkc | **required** | `gke`, `eks`, `aks` or `zkc` |" in markdown()


def test_the_preflight_says_it_has_none_for_the_cloud(zkc, capsys):
    from preflight.__main__ import main

    assert main(["--stack", "zkc-dev", "--stack-dir", str(ZKC)]) == 2
    assert capsys.readouterr().err == "preflight: no preflight for ZKC stacks yet (cluster.cloud: zkc)\n"
