"""Pure building blocks of the EKS components: subnet split, ASG regexes, values, priorities."""

from __future__ import annotations

import ipaddress
import re

import pytest
from gpu_fungibility import dra_wiring
from gpu_fungibility.clouds.eks.cluster import kubeconfig
from gpu_fungibility.clouds.eks.cluster_autoscaler import expander_priorities, image_tag_issues, priorities_document
from gpu_fungibility.clouds.eks.network import plan_subnets
from gpu_fungibility.clouds.eks.node_groups import EksGpuNodeGroup, asg_name_regex, node_template_tags
from gpu_fungibility.device_plugin import device_plugin_values, dra_exclusion_issues
from gpu_fungibility.helm_values import merge

from stacks import arguments, composition_issues
from stacks.arguments.eks import cluster_autoscaler
from stacks.loader import parse_stack_config

UUID = "40bbb26b-8679-eb64-d33a-4ba475413529"


def eks_config(**extra):
    raw = {
        "cluster": {"cloud": "eks", "name": "demo", "location": "us-west-2", "zones": ["us-west-2a"]},
        "nodePools": {
            "a": {"instanceTypes": ["g6e.xlarge"], "accelerator": {"type": "nvidia-l40s"}},
            "b": {"instanceTypes": ["g5.12xlarge"], "accelerator": {"type": "nvidia-a10g", "count": 4}},
            "c": {"instanceTypes": ["g6.xlarge"], "accelerator": {"type": "nvidia-l4"}},
            "t4": {"instanceTypes": ["g4dn.xlarge"], "accelerator": {"type": "nvidia-tesla-t4"}, "dra": False,
                   "taints": [{"key": "team", "value": "ml", "effect": "NoExecute"}], "labels": {"team": "ml"}},
        },
        "computeClasses": {"one": {"pools": ["a", "b"]}, "two": {"pools": ["c"]}},
    }
    raw.update(extra)
    return parse_stack_config(raw, checks=False)


@pytest.mark.parametrize("cidr, zones", [("10.0.0.0/16", ["z1"]), ("10.0.0.0/16", ["z1", "z2", "z3"]),
                                         ("10.20.0.0/20", ["z1", "z2", "z3", "z4", "z5"])])
def test_subnets_fit_the_vpc_and_never_overlap(cidr, zones):
    plans = plan_subnets(cidr, zones)
    assert [p.zone for p in plans] == zones
    vpc = ipaddress.ip_network(cidr)
    nets = [ipaddress.ip_network(c) for p in plans for c in (p.private_cidr, p.public_cidr)]
    assert all(n.subnet_of(vpc) for n in nets)
    assert not any(a.overlaps(b) for i, a in enumerate(nets) for b in nets[i + 1:])
    assert all(ipaddress.ip_network(p.private_cidr).num_addresses > ipaddress.ip_network(p.public_cidr).num_addresses
               or len(zones) == 1 for p in plans)


def test_asg_regex_matches_only_its_own_node_group():
    regex = asg_name_regex("demo-a100")
    assert re.search(regex, f"eks-demo-a100-{UUID}")
    assert not re.search(regex, f"eks-demo-a100-80gb-{UUID}")
    assert not re.search(regex, f"eks-demo-a100-{UUID}-x")
    assert not re.search(regex, f"xeks-demo-a100-{UUID}")
    assert "\\-" not in regex, "no needless escapes in the ConfigMap"


def test_node_template_tags_cover_user_labels_and_taints():
    planned = arguments.cloud_arguments(eks_config()).pool(eks_config(), "t4")
    spec = EksGpuNodeGroup.spec(planned.name, planned.args)
    tags = node_template_tags(dra_wiring.stack_labels("eks", spec), dra_wiring.stack_taints("eks", spec))
    prefix = "k8s.io/cluster-autoscaler/node-template/"
    assert tags == {
        f"{prefix}label/nvidia.com/gpu.present": "true",
        f"{prefix}label/team": "ml",
        f"{prefix}taint/nvidia.com/gpu": "true:NoSchedule",
        f"{prefix}taint/team": "ml:NoExecute",
    }


def test_priorities_per_class_order_merge_across_classes():
    cfg = eks_config()
    priorities = expander_priorities(cluster_autoscaler(cfg).args["fallback_orders"])
    assert priorities == {20: ["demo-a"], 10: ["demo-b", "demo-c"]}
    text = priorities_document(priorities, {"demo-a": "^A$", "demo-b": "^B$", "demo-c": "^C$"})
    assert text == "20:\n- ^A$\n10:\n- ^B$\n- ^C$\n"


def test_unknown_kubernetes_minor_needs_an_explicit_autoscaler_image():
    assert image_tag_issues({}, "1.34") == []
    issues = image_tag_issues({}, "1.37")
    assert issues and issues[0][0] == "values.image.tag"
    assert image_tag_issues({"image": {"tag": "v1.37.0"}}, "1.37") == []
    newer = eks_config(cluster={"cloud": "eks", "name": "demo", "location": "us-west-2", "zones": ["us-west-2a"],
                                "kubernetesVersion": "1.37"})
    assert "drivers.clusterAutoscaler.values.image.tag" in {p for p, _ in composition_issues(newer)}


def test_merge_values_is_helm_like_and_leaves_inputs_alone():
    base = {"a": {"b": 1, "c": [1]}, "d": 1}
    extra = {"a": {"c": [2]}, "e": {"f": 1}}
    assert merge(base, extra) == {"a": {"b": 1, "c": [2]}, "d": 1, "e": {"f": 1}}
    assert base == {"a": {"b": 1, "c": [1]}, "d": 1}


def test_device_plugin_values_keep_extras_and_dra_exclusion():
    values = device_plugin_values({"priorityClassName": "", "nodeSelector": {"pool": "t4"}})
    assert values["priorityClassName"] == "" and values["nodeSelector"] == {"pool": "t4"}
    assert dra_exclusion_issues(values) == []
    no_affinity = {**values, "affinity": None}
    assert dra_exclusion_issues(no_affinity)[0][0] == "values.affinity"
    open_term = {"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [
            {"matchExpressions": [{"key": "nvidia.com/gpu.dra", "operator": "DoesNotExist"}]},
            {"matchExpressions": [{"key": "nvidia.com/gpu.present", "operator": "Exists"}]},
        ]}}}}
    term_path = "values.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[1]"
    assert [p for p, _ in dra_exclusion_issues(open_term)] == [term_path]
    # the stack reports it at the config key the user wrote
    cfg = eks_config(drivers={"nvidiaDevicePlugin": {"chart": "nvidia-device-plugin", "version": "0.20.0",
                                                     "namespace": "nvidia-device-plugin", "values": open_term}})
    assert f"drivers.nvidiaDevicePlugin.{term_path}" in {p for p, _ in composition_issues(cfg)}


def test_kubeconfig_authenticates_with_aws_eks_get_token():
    doc = kubeconfig("demo", "https://x.eks.amazonaws.com", "Q0E=", "us-west-2")
    user = doc["users"][0]["user"]
    assert set(user) == {"exec"}
    assert user["exec"]["args"] == ["eks", "get-token", "--cluster-name", "demo", "--region", "us-west-2",
                                    "--output", "json"]
    assert doc["clusters"][0]["cluster"] == {"server": "https://x.eks.amazonaws.com",
                                             "certificate-authority-data": "Q0E="}
