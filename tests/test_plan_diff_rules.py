"""Every GKE/EKS replacement rule names a property the installed Pulumi SDK really has, at that path."""

from __future__ import annotations

import importlib
import inspect
import re

import pytest

from plan_diff import rules
from plan_diff.planning import SECRET_DIGEST_ENV
from plan_diff.properties import format_path

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
