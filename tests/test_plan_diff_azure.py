"""The azure-native replacement rules: every path is a real input of the installed SDK, and the aks-dev plan
diffed against itself with a changed VM size, node label or pool count comes out as the provider decides."""

from __future__ import annotations

import copy
import importlib
import json
import re
import sys
from pathlib import Path

import pytest

from offline_plan.planjson import plan_document
from offline_plan.run import run_stack_file
from plan_diff import aks as aks_diff
from plan_diff import eks as eks_diff
from plan_diff import gke as gke_diff
from plan_diff import impact, rules
from plan_diff.compare import compare
from tests.test_plan_diff_rules import _walk

#: type -> (package, resource class); the Args class is the one beside the resource class (the network
#: package has nested ``SubnetArgs``/``VirtualNetworkArgs`` input types, so there it is ``<Resource>InitArgs``).
ARGS = {
    "azure-native:containerservice:ManagedCluster": ("pulumi_azure_native.containerservice", "ManagedCluster"),
    "azure-native:containerservice:AgentPool": ("pulumi_azure_native.containerservice", "AgentPool"),
    "azure-native:network:VirtualNetwork": ("pulumi_azure_native.network", "VirtualNetwork"),
    "azure-native:network:Subnet": ("pulumi_azure_native.network", "Subnet"),
    "azure-native:resources:ResourceGroup": ("pulumi_azure_native.resources", "ResourceGroup"),
}


@pytest.mark.parametrize("type_", sorted(ARGS))
def test_every_azure_rule_path_exists_in_the_sdk(type_):
    package, resource = ARGS[type_]
    resource_class = getattr(importlib.import_module(package), resource)
    module = sys.modules[resource_class.__module__]
    cls = getattr(module, f"{resource}InitArgs", None) or getattr(module, f"{resource}Args")
    table = rules.rules_for(type_, {})
    assert table, type_
    for rule in table:
        _walk(package, cls, rule.path)


def test_the_aks_tables_sit_beside_gke_and_eks_and_name_the_provider_version_read():
    lock = (Path(__file__).resolve().parent.parent / "requirements.txt").read_text()
    pinned = re.search(r"^pulumi-azure-native==(\S+)", lock, re.MULTILINE).group(1)
    assert set(aks_diff.REPLACEMENT_RULES) == set(ARGS)
    assert not set(aks_diff.REPLACEMENT_RULES) & (set(gke_diff.REPLACEMENT_RULES) | set(eks_diff.REPLACEMENT_RULES))
    for type_, table in aks_diff.REPLACEMENT_RULES.items():
        assert rules.rules_for(type_, {}) is table
        for rule in table:
            assert "read at" in rule.source or "read in its" in rule.source, rule.source
            assert f"pulumi-azure-native {pinned}" in rule.source, rule.source


@pytest.fixture(scope="module")
def aks_plan() -> str:
    return json.dumps(plan_document(run_stack_file("aks-dev")))


def _pool(document: dict, name: str) -> dict:
    return next(s["newState"] for s in document["steps"]
                if s["newState"]["type"] == "azure-native:containerservice:AgentPool"
                and s["newState"]["inputs"]["agentPoolName"] == name)


def _change(old: dict, new: dict, name: str):
    diff = compare(old, new)
    urn = _pool(new, name)["urn"]
    return next(c for c in diff.changes if c.urn == urn), diff


def test_a_new_vm_size_replaces_the_agent_pool_and_warns(aks_plan):
    old, new = json.loads(aks_plan), json.loads(aks_plan)
    _pool(new, "a100spot")["inputs"]["vmSize"] = "Standard_NC48ads_A100_v4"
    change, diff = _change(old, new, "a100spot")
    assert change.op == "replace"
    assert any("replaced" in message for urn, message in impact.warnings(diff) if urn == change.urn)


def test_labels_and_counts_update_an_agent_pool_in_place(aks_plan):
    old, new = json.loads(aks_plan), json.loads(aks_plan)
    pool = _pool(new, "t4spot")
    pool["inputs"]["nodeLabels"] = {**pool["inputs"]["nodeLabels"], "team": "serving"}
    pool["inputs"]["maxCount"] = 3
    change, _ = _change(old, new, "t4spot")
    assert change.op == "update"


def test_a_network_profile_change_replaces_the_cluster(aks_plan):
    old, new = json.loads(aks_plan), copy.deepcopy(json.loads(aks_plan))
    cluster = next(s["newState"] for s in new["steps"]
                   if s["newState"]["type"] == "azure-native:containerservice:ManagedCluster")
    cluster["inputs"]["networkProfile"]["podCidr"] = "10.250.0.0/16"
    diff = compare(old, new)
    assert next(c for c in diff.changes if c.urn == cluster["urn"]).op == "replace"
