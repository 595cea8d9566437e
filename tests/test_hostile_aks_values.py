"""AKS values past AKS's documented limits are config errors naming the key, never accepted silently."""

from __future__ import annotations

from pathlib import Path

import pytest
from gpu_fungibility.clouds.aks import arguments as aks_rules

from offline_plan.run import read_stack_file
from stacks.loader import ConfigError, parse_stack_config
from tests.hostile_inputs import HOSTILE_AKS_VALUES

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("case", sorted(HOSTILE_AKS_VALUES))
def test_an_aks_value_past_its_limit_is_refused(case, tmp_path):
    good, bad, words = HOSTILE_AKS_VALUES[case]
    text = (ROOT / "Pulumi.aks-dev.yaml").read_text()
    assert good in text, f"the shipped aks-dev stack changed: {good!r}"
    (tmp_path / "Pulumi.bad.yaml").write_text(text.replace(good, bad, 1))
    with pytest.raises(ConfigError) as refused:
        parse_stack_config(read_stack_file("bad", tmp_path).namespace_config)
    assert words in str(refused.value), str(refused.value)


def test_the_limits_hold_at_their_edges():
    assert aks_rules.pool_limit_issues({"max_nodes": 1_000, "disk_size_gb": 2_048}) == []
    assert len(aks_rules.pool_limit_issues({"max_nodes": 1_001, "disk_size_gb": 2_049})) == 2
    assert aks_rules.resource_group_name_issues("rg_(prod)-1.a", "rg") == []
    assert aks_rules.resource_group_name_issues("équipe-gpu", "rg") == []  # Unicode letters are allowed
    assert aks_rules.vm_size_issues("Standard_NC24ads_A100_v4", "v") == []
