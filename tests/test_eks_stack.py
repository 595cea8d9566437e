"""The EKS stack under mocks: node groups, DRA/device-plugin isolation, autoscaler order, access, network.

Assertions are on the inputs the mocked engine receives, as ``pulumi preview``
would send them. Three plans per module: the shipped eks-dev stack, the same
stack with the fallback order reversed, and a minimal all-DRA stack with
every default left alone.
"""

from __future__ import annotations

import copy
import json
import re
from typing import Any

import pytest
import yaml
from gpu_fungibility.autoscaler_priorities import UNLISTED_PRIORITY
from gpu_fungibility.node_selection import CLOUD_EFFECTS, NodeTaint, PodPlacement, evaluate

from offline_plan import eks as eks_mocks
from offline_plan import mocks
from offline_plan.run import PlanRun, read_stack_file, run_stack, run_stack_file
from stacks.loader import ConfigError

NODE_GROUP = "aws:eks/nodeGroup:NodeGroup"
RELEASE = "kubernetes:helm.sh/v3:Release"
ASG_TAG = "aws:autoscaling/tag:Tag"
UUID = "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0"
DRA_LABELS = {"nvidia.com/gpu.present": "true", "nvidia.com/gpu.dra": "true"}
GPU_TAINT = [{"key": "nvidia.com/gpu", "value": "true", "effect": "NO_SCHEDULE"}]


def eks_dev_config() -> dict[str, Any]:
    return copy.deepcopy(read_stack_file("eks-dev").namespace_config)


MINIMAL = {
    "cluster": {"cloud": "eks", "name": "mini", "location": "us-east-1", "zones": ["us-east-1a", "us-east-1b"],
                # a private-only endpoint: `pulumi up` runs from this subnet of the VPC (10.0.0.0/16)
                "controlPlane": {"runnerCidrs": ["10.0.250.0/24"]}},
    "nodePools": {
        "h100": {"instanceTypes": ["p5.48xlarge"], "accelerator": {"type": "nvidia-h100-80gb", "count": 8},
                 "spot": False, "onDemandFallback": True, "autoscaling": {"min": 1, "max": 1}},
        "l4": {"instanceTypes": ["g6.12xlarge"], "accelerator": {"type": "nvidia-l4", "count": 4},
               "autoscaling": {"min": 0, "max": 3}, "zones": ["us-east-1b"]},
    },
    "computeClasses": {"big-first": {"pools": ["h100", "l4"]}},
}


@pytest.fixture(scope="module")
def dev() -> PlanRun:
    return run_stack_file("eks-dev")


@pytest.fixture(scope="module")
def reordered() -> PlanRun:
    raw = eks_dev_config()
    raw["computeClasses"]["vllm-gpu-eks"]["pools"].reverse()
    return run_stack(raw, stack="reordered")


@pytest.fixture(scope="module")
def minimal() -> PlanRun:
    return run_stack(copy.deepcopy(MINIMAL), stack="minimal")


# ---- helpers -------------------------------------------------------------------------------

def node_groups(run: PlanRun) -> dict[str, Any]:
    """GPU node groups keyed by pool (the system group excluded)."""
    cluster = run.config.cluster.name
    return {
        r.inputs["nodeGroupName"].removeprefix(f"{cluster}-"): r
        for r in run.of_type(NODE_GROUP) if r.inputs["nodeGroupName"] != f"{cluster}-system"
    }


def release(run: PlanRun, chart_fragment: str):
    found = [r for r in run.of_type(RELEASE) if chart_fragment in r.inputs["chart"]]
    assert len(found) == 1, f"expected one {chart_fragment} release, found {[r.urn for r in found]}"
    return found[0]


def selects(pod: dict[str, Any], labels: dict[str, str], taints: list[NodeTaint]) -> bool:
    """Whether a DaemonSet pod with these nodeSelector/affinity/tolerations runs on the node (scheduler rules)."""
    placement = PodPlacement(pod.get("nodeSelector") or {}, pod.get("affinity"), pod.get("tolerations") or [])
    return evaluate(placement, labels, taints).runs


def k8s_node(ng) -> tuple[dict[str, str], list[NodeTaint]]:
    """A node of the group as Kubernetes sees it: the labels/taints sent to EKS plus EKS's own labels."""
    labels = {**ng.inputs.get("labels", {}), "eks.amazonaws.com/nodegroup": ng.inputs["nodeGroupName"]}
    taints = [NodeTaint(t["key"], t.get("value", ""), CLOUD_EFFECTS[t["effect"]]) for t in ng.inputs.get("taints", [])]
    return labels, taints


def asg_name(ng) -> str:
    return f"eks-{ng.inputs['nodeGroupName']}-{UUID}"


def priority_order(run: PlanRun) -> list[str]:
    """Pools from highest to lowest autoscaler priority, by matching each regex against real-shaped ASG names."""
    cm = run.named(f"{run.config.cluster.name}-autoscaler-priorities")
    doc = yaml.safe_load(cm.inputs["data"]["priorities"])
    groups = node_groups(run)
    order = []
    for priority in sorted(doc, reverse=True):
        if priority == UNLISTED_PRIORITY:
            continue  # the system group and groups no class lists (tests/test_cloud_autoscalers.py)
        for regex in doc[priority]:
            hits = [pool for pool, ng in groups.items() if re.search(regex, asg_name(ng))]
            assert len(hits) == 1, f"{cm.urn}: regex {regex} matches {hits}, not exactly one node group"
            order.extend(hits)
    return order


# ---- node groups ---------------------------------------------------------------------------

def test_dev_node_groups_carry_exactly_the_dra_wiring(dev):
    groups = node_groups(dev)
    assert set(groups) == {"l40s", "a10g-4x", "t4-classic"}
    expected = {
        "l40s": (["g6e.xlarge"], "SPOT", DRA_LABELS, (1, 2), 300),
        "a10g-4x": (["g5.12xlarge", "g5.24xlarge"], "SPOT", DRA_LABELS, (1, 2), 300),
        "t4-classic": (["g4dn.xlarge"], "SPOT", {"nvidia.com/gpu.present": "true"}, (0, 1), 200),
    }
    for pool, (types, capacity, labels, (low, high), disk) in expected.items():
        ng = groups[pool]
        assert ng.inputs["amiType"] == "AL2023_x86_64_NVIDIA", ng.urn
        assert ng.inputs["capacityType"] == capacity, ng.urn
        assert ng.inputs["instanceTypes"] == types, ng.urn
        assert ng.inputs["labels"] == labels, ng.urn
        assert ng.inputs["taints"] == GPU_TAINT, ng.urn
        assert ng.inputs["scalingConfig"] == {"minSize": low, "maxSize": high, "desiredSize": low}, ng.urn
        assert ng.inputs["diskSize"] == disk, ng.urn
        assert ng.inputs["nodeGroupName"] == f"gpu-fungibility-eks-{pool}", ng.urn


def test_on_demand_pool_and_pool_zones(minimal):
    groups = node_groups(minimal)
    assert groups["h100"].inputs["capacityType"] == "ON_DEMAND", groups["h100"].urn
    assert groups["l4"].inputs["capacityType"] == "SPOT", groups["l4"].urn
    assert groups["h100"].inputs["subnetIds"] == [
        "mini-network-private-us-east-1a-id", "mini-network-private-us-east-1b-id"], groups["h100"].urn
    assert groups["l4"].inputs["subnetIds"] == ["mini-network-private-us-east-1b-id"], groups["l4"].urn


def test_asg_node_template_tags_describe_labels_and_taints(dev):
    tags_by_asg: dict[str, dict[str, str]] = {}
    for tag in dev.of_type(ASG_TAG):
        assert tag.inputs["tag"]["propagateAtLaunch"] is False, tag.urn
        tags_by_asg.setdefault(tag.inputs["autoscalingGroupName"], {})[tag.inputs["tag"]["key"]] = \
            tag.inputs["tag"]["value"]
    prefix = "k8s.io/cluster-autoscaler/node-template/"
    for ng in node_groups(dev).values():
        mocked_asg = eks_mocks.node_group(ng.name, ng.inputs)["resources"][0]["autoscalingGroups"][0]["name"]
        expected = {f"{prefix}label/{k}": v for k, v in ng.inputs["labels"].items()}
        expected[f"{prefix}taint/nvidia.com/gpu"] = "true:NoSchedule"
        assert tags_by_asg.get(mocked_asg) == expected, f"{ng.urn}: ASG {mocked_asg} tags"


# ---- plugins: device plugin and DRA kubelet plugin never share a node ---------------------

def test_device_plugin_runs_only_on_classic_groups(dev):
    plugin = release(dev, "nvidia-device-plugin")
    assert plugin.inputs["version"] == dev.config.drivers.nvidia_device_plugin.version, plugin.urn
    values = plugin.inputs["values"]
    terms = values["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
    assert len(terms) == 3, plugin.urn
    for term in terms:
        assert {"key": "nvidia.com/gpu.dra", "operator": "NotIn", "values": ["true"]} in term["matchExpressions"]
    for pool, ng in node_groups(dev).items():
        labels, taints = k8s_node(ng)
        wanted = pool == "t4-classic"
        assert selects(values, labels, taints) is wanted, f"{plugin.urn} on {ng.urn}: expected {wanted}"


def test_dra_kubelet_plugin_runs_only_on_dra_groups(dev):
    driver = release(dev, "dra-driver-nvidia-gpu")
    values = driver.inputs["values"]
    assert values["gpuResourcesEnabledOverride"] is True, driver.urn
    plugin = values["kubeletPlugin"]
    for pool, ng in node_groups(dev).items():
        labels, taints = k8s_node(ng)
        wanted = pool != "t4-classic"
        assert selects(plugin, labels, taints) is wanted, f"{driver.urn} kubelet plugin on {ng.urn}"


def test_dra_namespace_has_seed_004_resource_quota(dev):
    driver = release(dev, "dra-driver-nvidia-gpu")
    quotas = [q for q in dev.of_type("kubernetes:core/v1:ResourceQuota")
              if q.inputs["metadata"]["namespace"] == driver.inputs["namespace"]]
    assert len(quotas) == 1, f"{driver.urn}: quotas in its namespace: {[q.urn for q in quotas]}"
    spec = quotas[0].inputs["spec"]
    assert spec["hard"] == {"pods": "100"}, quotas[0].urn
    assert spec["scopeSelector"]["matchExpressions"] == [{
        "scopeName": "PriorityClass", "operator": "In",
        "values": ["system-node-critical", "system-cluster-critical"]}], quotas[0].urn


def test_no_device_plugin_when_every_group_is_dra(minimal):
    charts = [r.inputs["chart"] for r in minimal.of_type(RELEASE)]
    assert not any("device-plugin" in c for c in charts), charts
    assert any("dra-driver-nvidia-gpu" in c for c in charts), charts


def test_device_plugin_values_that_admit_dra_nodes_are_refused():
    raw = eks_dev_config()
    raw["drivers"] = {"nvidiaDevicePlugin": {
        "chart": "nvidia-device-plugin", "repo": "https://nvidia.github.io/k8s-device-plugin",
        "version": "0.20.0", "namespace": "nvidia-device-plugin",
        "values": {"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [{"matchExpressions": [
                {"key": "nvidia.com/gpu.present", "operator": "In", "values": ["true"]}]}]}}}},
    }}
    with pytest.raises(ConfigError, match=r"drivers\.nvidiaDevicePlugin\.values\.affinity.*nodeSelectorTerms\[0\]"):
        run_stack(raw, stack="bad-plugin")


# ---- fallback order: the autoscaler's priority expander -----------------------------------

def test_autoscaler_priorities_follow_the_compute_class(dev, reordered):
    assert priority_order(dev) == ["l40s", "a10g-4x"]
    assert priority_order(reordered) == ["a10g-4x", "l40s"]


def test_priority_regexes_need_the_whole_asg_name(dev):
    cm = dev.named("gpu-fungibility-eks-autoscaler-priorities")
    regexes = [r for rs in yaml.safe_load(cm.inputs["data"]["priorities"]).values() for r in rs]
    for regex in regexes:
        assert not re.search(regex, f"eks-gpu-fungibility-eks-l40s-extra-{UUID}"), f"{cm.urn}: {regex}"
        assert not re.search(regex, "eks-gpu-fungibility-eks-l40s"), f"{cm.urn}: {regex}"


def test_autoscaler_release_discovers_this_cluster_with_irsa(dev):
    ca = release(dev, "cluster-autoscaler")
    values = ca.inputs["values"]
    assert ca.inputs["version"] == dev.config.drivers.cluster_autoscaler.version, ca.urn
    assert ca.inputs["namespace"] == "kube-system", ca.urn
    assert values["autoDiscovery"] == {"clusterName": "gpu-fungibility-eks"}, ca.urn
    assert values["awsRegion"] == "us-west-2", ca.urn
    assert values["extraArgs"]["expander"] == "priority", ca.urn
    assert values["extraArgs"]["enable-dynamic-resource-allocation"] == "true", ca.urn
    assert values["image"]["tag"] == "v1.35.2", ca.urn
    role = dev.named("gpu-fungibility-eks-autoscaler-role")
    assert values["rbac"]["serviceAccount"]["annotations"]["eks.amazonaws.com/role-arn"].endswith(
        "role/gpu-fungibility-eks-autoscaler-role"), ca.urn
    trust = json.loads(role.inputs["assumeRolePolicy"])["Statement"][0]
    assert trust["Action"] == "sts:AssumeRoleWithWebIdentity", role.urn
    assert "system:serviceaccount:kube-system:cluster-autoscaler" in trust["Condition"]["StringEquals"].values()
    cm = dev.named("gpu-fungibility-eks-autoscaler-priorities")
    assert cm.urn in ca.dependencies, f"{ca.urn} must wait for {cm.urn}"


def test_autoscaler_may_read_the_dra_objects_it_simulates(dev):
    """--enable-dynamic-resource-allocation lists and watches DeviceClasses, ResourceSlices and ResourceClaims;
    the chart's own ClusterRole grants nothing in resource.k8s.io, so the informers would never sync."""
    ca = release(dev, "cluster-autoscaler")
    sa = ca.inputs["values"]["rbac"]["serviceAccount"]["name"]
    bindings = [b for b in dev.of_type("kubernetes:rbac.authorization.k8s.io/v1:ClusterRoleBinding")
                if {"kind": "ServiceAccount", "name": sa, "namespace": ca.inputs["namespace"]} in b.inputs["subjects"]]
    assert len(bindings) == 1, f"{ca.urn}: no ClusterRoleBinding for kube-system/{sa}"
    binding = bindings[0]
    roles = [r for r in dev.of_type("kubernetes:rbac.authorization.k8s.io/v1:ClusterRole")
             if r.inputs["metadata"]["name"] == binding.inputs["roleRef"]["name"]]
    assert len(roles) == 1, binding.urn
    granted = {(res, verb) for rule in roles[0].inputs["rules"] if "resource.k8s.io" in rule["apiGroups"]
               for res in rule["resources"] for verb in rule["verbs"]}
    for res in ("deviceclasses", "resourceslices", "resourceclaims"):
        for verb in ("get", "list", "watch"):
            assert (res, verb) in granted, f"{roles[0].urn}: {verb} {res} missing"
    assert binding.urn in ca.dependencies, f"{ca.urn} must wait for {binding.urn}"


def test_autoscaler_may_only_scale_this_clusters_groups(dev):
    policy = json.loads(dev.named("gpu-fungibility-eks-autoscaler-policy").inputs["policy"])
    writes = [s for s in policy["Statement"] if "autoscaling:SetDesiredCapacity" in s["Action"]]
    assert len(writes) == 1
    assert writes[0]["Condition"] == {
        "StringEquals": {"aws:ResourceTag/k8s.io/cluster-autoscaler/gpu-fungibility-eks": "owned"}}
    assert all(not a.startswith(("iam:", "ec2:Run", "ec2:Terminate")) for s in policy["Statement"]
               for a in s["Action"])


# ---- cluster, access, providers ------------------------------------------------------------

def test_every_kubernetes_object_uses_the_cluster_provider(dev):
    provider = dev.named("gpu-fungibility-eks-k8s")
    k8s = [r for r in dev.resources if r.type.startswith("kubernetes:")]
    assert k8s
    for r in k8s:
        assert r.provider.startswith(provider.urn + "::"), f"{r.urn} uses {r.provider!r}"
    kubeconfig = json.loads(provider.inputs["kubeconfig"])
    exec_ = kubeconfig["users"][0]["user"]["exec"]
    assert exec_["command"] == "aws" and exec_["args"][:2] == ["eks", "get-token"], provider.urn
    assert "token" not in kubeconfig["users"][0]["user"], provider.urn


def test_every_aws_resource_uses_the_region_provider(dev):
    provider = dev.named("aws")
    assert provider.inputs["region"] == "us-west-2"
    for r in dev.resources:
        if r.type.startswith("aws:"):
            assert r.provider.startswith(provider.urn + "::"), f"{r.urn} uses {r.provider!r}"


def test_control_plane_is_private_by_default(minimal):
    (cluster,) = minimal.of_type("aws:eks/cluster:Cluster")
    vpc = cluster.inputs["vpcConfig"]
    assert vpc["endpointPublicAccess"] is False and vpc["endpointPrivateAccess"] is True, cluster.urn
    assert "publicAccessCidrs" not in vpc, cluster.urn
    (rule,) = minimal.of_type("aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule")
    assert rule.inputs["cidrIpv4"] == "10.0.250.0/24", rule.urn
    assert (rule.inputs["fromPort"], rule.inputs["toPort"], rule.inputs["ipProtocol"]) == (443, 443, "tcp"), rule.urn
    assert rule.inputs["securityGroupId"] == f"sg-{mocks.short_hash(cluster.name)}", rule.urn
    provider = minimal.named("mini-k8s")
    assert rule.urn in provider.dependencies, "the provider waits until the runner may reach the API"


def test_public_endpoint_only_for_the_allow_list(dev):
    (cluster,) = dev.of_type("aws:eks/cluster:Cluster")
    vpc = cluster.inputs["vpcConfig"]
    assert vpc["endpointPublicAccess"] is True, cluster.urn
    assert vpc["publicAccessCidrs"] == ["203.0.113.0/24"], cluster.urn


def test_cluster_is_hardened(dev):
    (cluster,) = dev.of_type("aws:eks/cluster:Cluster")
    inputs = cluster.inputs
    assert inputs["version"] == "1.35", cluster.urn
    assert inputs["accessConfig"] == {"authenticationMode": "API",
                                      "bootstrapClusterCreatorAdminPermissions": False}, cluster.urn
    assert inputs["encryptionConfig"]["resources"] == ["secrets"], cluster.urn
    assert inputs["encryptionConfig"]["provider"]["keyArn"].startswith("arn:aws:kms:"), cluster.urn
    assert set(inputs["enabledClusterLogTypes"]) == {"api", "audit", "authenticator", "controllerManager",
                                                     "scheduler"}, cluster.urn
    role_arn = inputs["roleArn"]
    attached = [a.inputs["policyArn"] for a in dev.of_type("aws:iam/rolePolicyAttachment:RolePolicyAttachment")
                if a.inputs["role"] == role_arn.rsplit("/", 1)[1]]
    assert attached == ["arn:aws:iam::aws:policy/AmazonEKSClusterPolicy"], cluster.urn
    admin = dev.named("gpu-fungibility-eks-deployer-admin")
    assert admin.inputs["policyArn"].endswith(":cluster-access-policy/AmazonEKSClusterAdminPolicy"), admin.urn
    assert admin.inputs["principalArn"] == f"arn:aws:iam::{mocks.ACCOUNT}:user/offline", admin.urn


def test_admin_principals_replace_the_deployer_entry():
    raw = copy.deepcopy(MINIMAL)
    admins = ["arn:aws:iam::111122223333:role/ci-deployer", "arn:aws:iam::111122223333:role/platform-admins"]
    raw["cluster"]["controlPlane"]["adminPrincipals"] = admins
    run = run_stack(raw, stack="admins")
    entries = run.of_type("aws:eks/accessEntry:AccessEntry")
    assert sorted(e.inputs["principalArn"] for e in entries) == admins, [e.urn for e in entries]
    associations = run.of_type("aws:eks/accessPolicyAssociation:AccessPolicyAssociation")
    assert sorted(a.inputs["principalArn"] for a in associations) == admins
    provider = run.named("mini-k8s")
    for a in associations:
        assert a.urn in provider.dependencies, f"{provider.urn} must wait for {a.urn}"


def test_system_node_group_is_small_cpu_and_untainted(dev):
    ng = dev.named("gpu-fungibility-eks-system")
    assert ng.inputs["amiType"] == "AL2023_x86_64_STANDARD", ng.urn
    assert ng.inputs["instanceTypes"] == ["m6i.large"], ng.urn
    assert ng.inputs["scalingConfig"] == {"minSize": 2, "maxSize": 3, "desiredSize": 2}, ng.urn
    assert "taints" not in ng.inputs, ng.urn


# ---- network -------------------------------------------------------------------------------

def test_subnets_are_tagged_for_eks(dev):
    subnets = dev.of_type("aws:ec2/subnet:Subnet")
    private = [s for s in subnets if "-private-" in s.name]
    public = [s for s in subnets if "-public-" in s.name]
    assert sorted(s.inputs["availabilityZone"] for s in private) == ["us-west-2a", "us-west-2b", "us-west-2c"]
    for s in private:
        assert s.inputs["tags"]["kubernetes.io/role/internal-elb"] == "1", s.urn
        assert s.inputs["tags"]["kubernetes.io/cluster/gpu-fungibility-eks"] == "shared", s.urn
        assert s.inputs["mapPublicIpOnLaunch"] is False, s.urn
    for s in public:
        assert s.inputs["tags"]["kubernetes.io/role/elb"] == "1", s.urn
    (cluster,) = dev.of_type("aws:eks/cluster:Cluster")
    assert sorted(cluster.inputs["vpcConfig"]["subnetIds"]) == sorted(f"{s.name}-id" for s in private)
    assert len(dev.of_type("aws:ec2/natGateway:NatGateway")) == 1


def test_cluster_and_its_nodes_wait_for_nat_egress(dev):
    cluster = dev.named(dev.config.cluster.name)
    assert cluster.type == "gpu-fungibility:index:EksCluster"
    egress = [*dev.of_type("aws:ec2/natGateway:NatGateway"), *(
        a for a in dev.of_type("aws:ec2/routeTableAssociation:RouteTableAssociation") if "-private-" in a.name)]
    assert len(egress) == 1 + len(dev.config.cluster.zones)
    for res in egress:
        assert res.urn in cluster.dependencies, f"{cluster.urn} (and so its node groups) must wait for {res.urn}"


def test_existing_subnets_build_no_network():
    raw = copy.deepcopy(MINIMAL)
    raw["cluster"]["network"] = {"existingSubnetIds": ["subnet-aaa", "subnet-bbb"]}
    del raw["nodePools"]["l4"]["zones"]
    run = run_stack(raw, stack="existing")
    assert not run.of_type("aws:ec2/vpc:Vpc") and not run.of_type("aws:ec2/subnet:Subnet")
    (cluster,) = run.of_type("aws:eks/cluster:Cluster")
    assert cluster.inputs["vpcConfig"]["subnetIds"] == ["subnet-aaa", "subnet-bbb"], cluster.urn
    for ng in node_groups(run).values():
        assert ng.inputs["subnetIds"] == ["subnet-aaa", "subnet-bbb"], ng.urn


# ---- config problems the EKS composition reports -------------------------------------------

def rename_pool(raw: dict[str, Any], old: str, new: str) -> None:
    raw["nodePools"][new] = raw["nodePools"].pop(old)
    for cc in raw["computeClasses"].values():
        cc["pools"] = [new if p == old else p for p in cc["pools"]]


def zones_outside_region(raw: dict[str, Any]) -> None:
    raw["cluster"]["zones"] = ["us-west-2a"]
    del raw["nodePools"]["l4"]["zones"]


def name_too_long(raw: dict[str, Any]) -> None:
    raw["cluster"]["name"] = "c" * 40
    rename_pool(raw, "l4", "a-very-long-pool-name-for-this-cluster")


@pytest.mark.parametrize("mutate, path", [
    (lambda raw: rename_pool(raw, "l4", "system"), r"nodePools\.system: the name 'system' is taken"),
    (zones_outside_region, r"cluster\.zones\[0\]: us-west-2a is not an availability zone of region us-east-1"),
    (name_too_long, r"nodePools\.a-very-long-pool-name-for-this-cluster: the EKS node group name"),
    (lambda raw: raw["cluster"].__setitem__("network", {"existingSubnetIds": ["subnet-a"]}),
     r"nodePools\.l4\.zones: per-pool zones need the network"),
    (lambda raw: raw["cluster"].__setitem__("zones", ["us-east-1b"]),
     r"cluster\.zones: EKS needs at least 2 availability zones of us-east-1"),
    (lambda raw: raw["cluster"].__setitem__("network", {"existingSubnetIds": ["subnet-a", "subnet-a"]}),
     r"cluster\.network\.existingSubnetIds: EKS needs subnets in at least 2 availability zones"),
])
def test_eks_specific_config_problems_name_their_key(mutate, path):
    raw = copy.deepcopy(MINIMAL)
    mutate(raw)
    with pytest.raises(ConfigError, match=path):
        run_stack(raw, stack="bad")


def test_eks_dev_plans_cleanly(dev):
    problems = [d.message for d in dev.diagnostics if d.severity == "error" or "hfToken" not in d.message]
    # The one expected warning: a10g-4x deliberately mixes two sizes of 4 x A10G instance.
    assert [p for p in problems if not p.startswith("nodePools.a10g-4x.instanceTypes mixes machine sizes")] == []
    assert any("g5.12xlarge (48 vCPUs, 192 GiB), g5.24xlarge (96 vCPUs, 384 GiB)" in p for p in problems)
    assert dev.of_type("aws:eks/cluster:Cluster") and len(node_groups(dev)) == 3
