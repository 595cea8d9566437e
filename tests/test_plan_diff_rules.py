"""Every GKE/EKS replacement rule names a property the installed Pulumi SDK really has, at that path."""

from __future__ import annotations

import importlib
import inspect
import json
import re
from pathlib import Path

import pytest

from plan_diff import rules
from plan_diff.planning import SECRET_DIGEST_ENV
from plan_diff.properties import format_path, parse_path

ARGS = {
    "gcp:container/nodePool:NodePool": ("pulumi_gcp.container", "NodePoolArgs"),
    "gcp:container/cluster:Cluster": ("pulumi_gcp.container", "ClusterArgs"),
    "aws:eks/nodeGroup:NodeGroup": ("pulumi_aws.eks", "NodeGroupArgs"),
    "aws:eks/cluster:Cluster": ("pulumi_aws.eks", "ClusterArgs"),
}


def _properties(cls: type) -> dict[str, property]:
    return {getattr(v.fget, "_pulumi_name", name): v for name, v in inspect.getmembers(cls)
            if isinstance(v, property)}


def _walk(package: str, cls: type, path: tuple) -> None:
    inputs = importlib.import_module(f"{package}._inputs")
    for depth, element in enumerate(path):
        if element == "*":
            continue
        props = _properties(cls)
        assert element in props, f"{format_path(path[:depth + 1])}: no such input on {cls.__name__}"
        if depth + 1 < len(path):
            nested = re.search(r"'?(\w+Args)'?", str(inspect.signature(props[element].fget).return_annotation))
            assert nested, f"{format_path(path[:depth + 1])} is not an object"
            cls = getattr(inputs, nested.group(1))


@pytest.mark.parametrize("type_", sorted(ARGS))
def test_every_rule_path_exists_in_the_sdk(type_):
    package, args = ARGS[type_]
    cls = getattr(importlib.import_module(package), args)
    table = rules.rules_for(type_, {})
    assert table, type_
    for rule in table:
        _walk(package, cls, rule.path)


def test_kubernetes_identity_and_kind_rules():
    template = rules.rules_for("kubernetes:resource.k8s.io/v1:ResourceClaimTemplate", {})
    assert {format_path(r.path) for r in template} == {"metadata.name", "metadata.namespace", "spec"}
    deployment = {format_path(r.path) for r in rules.rules_for("kubernetes:apps/v1:Deployment", {})}
    assert "spec.selector" in deployment and "spec.template" not in deployment
    assert {format_path(r.path) for r in rules.rules_for("kubernetes:helm.sh/v3:Release", {})} == {"name", "namespace"}
    assert rules.rules_for("gcp:compute/network:Network", {}) is None


def test_the_plan_reads_the_variable_the_diff_sets():
    from offline_plan.run import SECRET_DIGEST_ENV as read_by_plan

    assert SECRET_DIGEST_ENV == read_by_plan


# ---- the GKE tables against the Terraform schemas the pinned pulumi-gcp bridges ----------------------

FORCENEW = Path(__file__).parent / "fixtures" / "terraform_google_container_forcenew.json"
#: Terraform names the bridge pluralises (lists without MaxItems 1)
_RENAMED = {"guest_accelerator": "guestAccelerators", "node_pool": "nodePools", "node_affinity": "nodeAffinities"}


def _pulumi_name(tf_name: str) -> str:
    if tf_name in _RENAMED:
        return _RENAMED[tf_name]
    head, *rest = tf_name.split("_")
    return head + "".join(part.capitalize() for part in rest)


def _recorded(section: str, prefix: str = "") -> set[tuple[str, str]]:
    """(Pulumi path, kind) of every ForceNew attribute not already inside a ``within`` one."""
    entries = json.loads(FORCENEW.read_text())[section]
    within = [p for p, kind in entries.items() if kind == "within"]
    kept = {p: kind for p, kind in entries.items()
            if not any(p.startswith(f"{w}.") for w in within)}
    return {(prefix + ".".join(_pulumi_name(part) for part in p.split(".")), kind) for p, kind in kept.items()}


@pytest.mark.parametrize(("type_", "section"), [("gcp:container/nodePool:NodePool", "node_pool"),
                                                ("gcp:container/cluster:Cluster", "cluster")])
def test_gke_tables_hold_exactly_the_recorded_forcenew_attributes(type_, section):
    """Both directions: every ForceNew attribute has its rule, and every rule is a ForceNew attribute."""
    expected = _recorded(section) | _recorded("node_config", "nodeConfig.")
    table = {(format_path(r.path), r.kind) for r in rules.rules_for(type_, {})}
    assert table - expected == set(), "rules the Terraform schema does not have"
    assert expected - table == set(), "ForceNew attributes without a rule"


def _replaces(type_: str, old: dict, new: dict, path: str):
    return rules.replacing_rule(rules.rules_for(type_, new), parse_path(path), old, new)


CLUSTER = "gcp:container/cluster:Cluster"
NODE_POOL = "gcp:container/nodePool:NodePool"


def test_private_nodes_update_in_place_since_terraform_google_7_13():
    old = {"privateClusterConfig": {"enablePrivateNodes": False, "masterIpv4CidrBlock": "172.16.0.0/28"}}
    new = {"privateClusterConfig": {"enablePrivateNodes": True, "masterIpv4CidrBlock": "172.16.0.0/28"}}
    assert _replaces(CLUSTER, old, new, "privateClusterConfig.enablePrivateNodes") is None
    moved = {"privateClusterConfig": {"enablePrivateNodes": True, "masterIpv4CidrBlock": "172.16.0.16/28"}}
    assert _replaces(CLUSTER, new, moved, "privateClusterConfig.masterIpv4CidrBlock") is not None


def test_attributes_added_to_the_tables_replace():
    assert _replaces(CLUSTER, {"description": "a"}, {"description": "b"}, "description") is not None
    assert _replaces(CLUSTER, {}, {"dataplaneOptimizationMode": "X"}, "dataplaneOptimizationMode") is not None
    old = {"nodeConfig": {"machineType": "g2-standard-8"}}
    new = {"nodeConfig": {"machineType": "g2-standard-8", "flexStart": True}}
    assert _replaces(NODE_POOL, old, new, "nodeConfig.flexStart") is not None
    assert _replaces(NODE_POOL, {"networkConfig": {"subnetwork": "a"}}, {"networkConfig": {"subnetwork": "b"}},
                     "networkConfig.subnetwork") is not None


def test_fields_of_a_forcenew_block_update_in_place_unless_the_block_comes_or_goes():
    old = {"nodeConfig": {"sandboxConfig": {"sandboxType": "gvisor"}}}
    new = {"nodeConfig": {"sandboxConfig": {"sandboxType": "other"}}}
    assert _replaces(NODE_POOL, old, new, "nodeConfig.sandboxConfig.sandboxType") is None
    assert _replaces(NODE_POOL, old, {"nodeConfig": {}}, "nodeConfig.sandboxConfig") is not None
    overprovision = {"networkConfig": {"podCidrOverprovisionConfig": {"disabled": True}}}
    enabled = {"networkConfig": {"podCidrOverprovisionConfig": {"disabled": False}}}
    assert _replaces(NODE_POOL, overprovision, enabled, "networkConfig.podCidrOverprovisionConfig.disabled") is None


@pytest.mark.parametrize("type_", [*sorted(ARGS), "kubernetes:apps/v1:Deployment", "kubernetes:helm.sh/v3:Release",
                                   "kubernetes:resource.k8s.io/v1:ResourceClaimTemplate"])
def test_every_table_names_the_version_it_was_read_at(type_):
    for rule in rules.rules_for(type_, {}):
        assert "read at" in rule.source or "read in its" in rule.source, rule.source


def test_inputs_no_source_shows_are_named_and_exist_in_the_sdk():
    """pulumi-aws 7.51 has EKS inputs newer than any terraform-provider-aws source read: noted, never judged."""
    for type_, paths in rules.unread_inputs().items():
        package, args = ARGS[type_]
        for path in paths:
            _walk(package, getattr(importlib.import_module(package), args), path)
    assert rules.unread("aws:eks/nodeGroup:NodeGroup", parse_path("warmPoolConfig.minSize"))
    assert not rules.unread("aws:eks/nodeGroup:NodeGroup", parse_path("scalingConfig.maxSize"))


def test_a_change_to_an_unread_input_is_an_update_with_a_note():
    from plan_diff.compare import Resource, _compare_resource

    def group(warm: int) -> Resource:
        return Resource(urn="urn:pulumi:s::p::aws:eks/nodeGroup:NodeGroup::g", type="aws:eks/nodeGroup:NodeGroup",
                        custom=True, parent="", inputs={"warmPoolConfig": {"minSize": warm}})

    change, _ = _compare_resource(group(0), group(1), {})
    assert change.op == "update"
    assert any("warmPoolConfig.minSize" in note and "may replace" in note for note in change.notes)
