"""The AKS stack under mocks: agent pools, the NVIDIA driver, DRA/device-plugin isolation, the autoscaler's
order, API access, and AKS configs refused with their key paths.

Assertions are on the inputs the mocked engine receives, as ``pulumi preview`` would send them.
"""

from __future__ import annotations

import copy
import dataclasses
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from gpu_fungibility.node_selection import NodeTaint, PodPlacement, evaluate

from offline_plan.run import PlanRun, read_stack_file, run_stack, run_stack_file
from stacks.loader import ConfigError

AGENT_POOL = "azure-native:containerservice:AgentPool"
CLUSTER = "azure-native:containerservice:ManagedCluster"
RELEASE = "kubernetes:helm.sh/v3:Release"
SPOT_TAINT = NodeTaint("kubernetes.azure.com/scalesetpriority", "spot", "NoSchedule")
ROOT = Path(__file__).resolve().parent.parent


def aks_dev_config() -> dict[str, Any]:
    return copy.deepcopy(read_stack_file("aks-dev").namespace_config)


@pytest.fixture(scope="module")
def dev() -> PlanRun:
    return run_stack_file("aks-dev")


def pools(run: PlanRun) -> dict[str, Any]:
    return {r.inputs["agentPoolName"]: r for r in run.of_type(AGENT_POOL)}


def release(run: PlanRun, fragment: str):
    found = [r for r in run.of_type(RELEASE) if fragment in r.inputs["chart"]]
    assert len(found) == 1, [r.urn for r in found]
    return found[0]


def node_of(pool) -> tuple[dict[str, str], list[NodeTaint]]:
    """The labels and taints a node of the pool carries: the pool's own plus what AKS adds."""
    inputs = pool.inputs
    labels = {**dict(inputs.get("nodeLabels") or {}), "kubernetes.azure.com/agentpool": inputs["agentPoolName"],
              "kubernetes.azure.com/accelerator": "nvidia"}
    taints = []
    for text in inputs.get("nodeTaints") or []:
        head, _, effect = text.partition(":")
        key, _, value = head.partition("=")
        taints.append(NodeTaint(key, value, effect))
    if inputs.get("scaleSetPriority") == "Spot":
        labels["kubernetes.azure.com/scalesetpriority"] = "spot"
        taints.append(SPOT_TAINT)
    return labels, taints


def plugin_runs(values: dict[str, Any], pool) -> bool:
    labels, taints = node_of(pool)
    placement = PodPlacement(values.get("nodeSelector") or {}, values.get("affinity"), values.get("tolerations") or [])
    return evaluate(placement, labels, taints).runs


def test_aks_dev_plans_the_cluster_and_every_pool(dev):
    assert len(dev.of_type(CLUSTER)) == 1
    assert set(pools(dev)) == {"a100spot", "a100od", "t4spot", "t4classic"}
    errors = [d.message for d in dev.diagnostics if d.severity == "error"]
    assert errors == []


def test_every_gpu_pool_keeps_the_driver_aks_installs(dev):
    for pool in pools(dev).values():
        assert pool.inputs["gpuProfile"] == {"driver": "Install"}, f"{pool.urn}: DRA needs the host's driver"
        assert "nvidia" not in (pool.inputs.get("gpuProfile") or {}), f"{pool.urn}: no managed GPU stack"


def test_spot_pools_evict_with_delete_at_the_on_demand_price_cap(dev):
    by_name = pools(dev)
    for name in ("a100spot", "t4spot", "t4classic"):
        inputs = by_name[name].inputs
        assert (inputs["scaleSetPriority"], inputs["scaleSetEvictionPolicy"], inputs["spotMaxPrice"]) == \
            ("Spot", "Delete", -1), by_name[name].urn
    on_demand = by_name["a100od"].inputs
    assert on_demand["scaleSetPriority"] == "Regular" and "spotMaxPrice" not in on_demand
    assert on_demand["nodeLabels"]["gpu-fungibility/on-demand-fallback"] == "true"


def test_no_pool_sets_a_label_or_taint_aks_reserves(dev):
    for pool in pools(dev).values():
        keys = [*pool.inputs.get("nodeLabels", {}), *(t.split("=")[0] for t in pool.inputs.get("nodeTaints", []))]
        assert not [k for k in keys if k.startswith("kubernetes.azure.com/")], pool.urn


def test_the_dra_kubelet_plugin_runs_on_every_dra_pool_and_no_device_plugin_does(dev):
    dra = release(dev, "dra-driver-nvidia-gpu").inputs["values"]["kubeletPlugin"]
    device_plugin = release(dev, "nvidia-device-plugin").inputs["values"]
    for name, pool in pools(dev).items():
        is_dra = pool.inputs["nodeLabels"].get("nvidia.com/gpu.dra") == "true"
        assert plugin_runs(dra, pool) is is_dra, f"DRA kubelet plugin on {name}"
        assert plugin_runs(device_plugin, pool) is not is_dra, f"device plugin on {name}"


def test_the_device_plugin_tolerates_aks_spot_taint_on_the_classic_pool(dev):
    tolerations = release(dev, "nvidia-device-plugin").inputs["values"]["tolerations"]
    assert {"key": SPOT_TAINT.key, "operator": "Equal", "value": "spot", "effect": "NoSchedule"} in tolerations


def test_the_managed_autoscaler_follows_the_compute_class_through_the_scale_sets(dev):
    cluster = dev.of_type(CLUSTER)[0].inputs
    assert cluster["autoScalerProfile"]["expander"] == "priority"
    configmaps = [r for r in dev.of_type("kubernetes:core/v1:ConfigMap")
                  if r.inputs["metadata"]["name"] == "cluster-autoscaler-priority-expander"]
    assert len(configmaps) == 1 and configmaps[0].inputs["metadata"]["namespace"] == "kube-system"
    priorities = yaml.safe_load(configmaps[0].inputs["data"]["priorities"])
    ranked = sorted(priorities.items(), reverse=True)
    order = [pool for _, regexes in ranked for regex in regexes
             for pool in ("a100spot", "a100od", "t4spot", "t4classic", "system")
             if re.fullmatch(regex, f"aks-{pool}-12345678-vmss")]
    # the pools no class lists come last: the expander drops a pool its ConfigMap does not match
    assert order == ["a100spot", "a100od", "t4spot", "system", "t4classic"]
    assert ranked[-1] == (1, ["^aks-system-[0-9]+-vmss$", "^aks-t4classic-[0-9]+-vmss$"])


def test_the_cluster_is_reachable_only_from_the_allow_list_with_entra_id_and_workload_identity(dev):
    cluster = dev.of_type(CLUSTER)[0].inputs
    assert cluster["apiServerAccessProfile"] == {"enablePrivateCluster": False, "authorizedIPRanges": ["203.0.113.0/24"]}
    assert cluster["disableLocalAccounts"] is True and cluster["aadProfile"]["enableAzureRBAC"] is True
    assert cluster["oidcIssuerProfile"] == {"enabled": True}
    assert cluster["securityProfile"]["workloadIdentity"] == {"enabled": True}
    assert cluster["identity"] == {"type": "SystemAssigned"}
    assert (cluster["networkProfile"]["networkPlugin"], cluster["networkProfile"]["networkPluginMode"]) == \
        ("azure", "overlay")
    assert cluster["kubernetesVersion"] == "1.35"


def test_a_private_cluster_by_default():
    raw = aks_dev_config()
    raw["cluster"]["controlPlane"] = {}
    run = run_stack(raw, stack="private")
    assert run.of_type(CLUSTER)[0].inputs["apiServerAccessProfile"] == {"enablePrivateCluster": True}


def test_a_dra_pool_at_zero_is_warned_about():
    raw = aks_dev_config()
    raw["nodePools"]["t4spot"]["autoscaling"]["min"] = 0
    run = run_stack(raw, stack="zero")
    assert any(d.message.startswith("nodePools.t4spot.autoscaling.min is 0: on AKS") for d in run.diagnostics)


@pytest.mark.parametrize(("mutate", "path"), [
    (lambda raw: raw["nodePools"].__setitem__("a100-spot", raw["nodePools"].pop("a100spot")),
     r"nodePools\.a100-spot: the AKS pool name 'a100-spot' must be 1-12 lowercase"),
    (lambda raw: raw["nodePools"]["a100spot"].__setitem__("vmSize", "Standard_NC24ads_A100_v9"),
     r"nodePools\.a100spot\.vmSize: unknown GPU VM size 'Standard_NC24ads_A100_v9'"),
    (lambda raw: raw["nodePools"]["a100spot"].__setitem__("accelerator", {"type": "nvidia-a100-80gb", "count": 1}),
     r"nodePools\.a100spot\.accelerator\.type: nvidia-a100-80gb is not offered on AKS: write nvidia-a100-80gb-pcie"),
    (lambda raw: raw["nodePools"]["t4spot"]["accelerator"].__setitem__("count", 2),
     r"nodePools\.t4spot\.accelerator: Standard_NC8as_T4_v3 carries 1 x nvidia-tesla-t4"),
    (lambda raw: raw["nodePools"]["t4spot"].__setitem__("instanceTypes", ["g4dn.xlarge"]),
     r"nodePools\.t4spot\.instanceTypes: instanceTypes is for EKS; on AKS set vmSize"),
    (lambda raw: raw["nodePools"]["t4spot"].__setitem__("labels", {"kubernetes.azure.com/mode": "x"}),
     r"nodePools\.t4spot\.labels\.kubernetes\.azure\.com/mode: AKS reserves this prefix"),
    (lambda raw: raw["cluster"].__setitem__("zones", ["eastus2-1"]),
     r"cluster\.zones\[0\]: 'eastus2-1' is not an Azure availability zone"),
    (lambda raw: raw["cluster"].__setitem__("controlPlane", {"authorizedNetworks": ["203.0.113.0/24"]}),
     r"cluster\.controlPlane\.authorizedNetworks: only apply to a public API server"),
    (lambda raw: raw["cluster"]["network"].__setitem__("existingSubnetId", "subnet-1")
     if "network" in raw["cluster"] else raw["cluster"].__setitem__("network", {"existingSubnetId": "subnet-1"}),
     r"cluster\.network\.existingSubnetId: 'subnet-1' is not a subnet resource id"),
    (lambda raw: raw["cluster"]["controlPlane"].__setitem__("runnerCidrs", ["10.0.240.0/24"]),
     r"cluster\.controlPlane\.runnerCidrs: is for GKE and EKS; a private AKS API server answers inside"),
    (lambda raw: raw["cluster"]["controlPlane"].__setitem__("dnsEndpoint", True),
     r"cluster\.controlPlane\.dnsEndpoint: is for GKE"),
    (lambda raw: raw["nodePools"].__setitem__("system", raw["nodePools"].pop("t4spot")),
     r"nodePools\.system: the name 'system' is taken"),
])
def test_aks_config_problems_name_their_key(mutate, path):
    raw = aks_dev_config()
    mutate(raw)
    with pytest.raises(ConfigError, match=path):
        run_stack(raw, stack="bad")


def _loaded_sdks(stack: str) -> list[str]:
    probe = ("import sys\nfrom offline_plan.run import run_stack_file\n"
             f"run_stack_file({stack!r})\n"
             "print(*(m in sys.modules for m in ('pulumi_gcp', 'pulumi_aws', 'pulumi_azure_native', 'boto3',"
             " 'google.auth', 'azure.identity')))")
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT, check=True)
    return result.stdout.split()[-6:]


@pytest.mark.parametrize(("stack", "expected"), [
    ("dev", ["True", "False", "False", "False", "False", "False"]),
    ("eks-dev", ["False", "True", "False", "False", "False", "False"]),
    ("aks-dev", ["False", "False", "True", "False", "False", "False"]),
])
def test_a_plan_imports_only_its_own_clouds_sdk(stack, expected):
    assert _loaded_sdks(stack) == expected


#: NFD's class-qualified NVIDIA PCI labels (display controller 0302, VGA 0300) beside pci-10de.
NFD_CLASS_LABELS = ("feature.node.kubernetes.io/pci-0302_10de.present", "feature.node.kubernetes.io/pci-0300_10de.present")


@pytest.mark.parametrize("nfd", [False, True], ids=["plain", "nfd-labels-everywhere"])
def test_each_chart_with_its_defaults_places_its_plugin_only_on_its_pools(dev, nfd):
    """The pinned charts' default placement (policies/charts.py) merged with the values the stack sets,
    against AKS's node labels and taints; with NFD's NVIDIA PCI label on every GPU node too."""
    from policies.aks import pool as aks_pool
    from policies.stack_view import Res, StackView, driver_release

    resources = [Res(r.type, r.urn, r.urn.rsplit("::", 1)[1], r.inputs) for r in dev.resources]
    view = StackView(resources)
    pools = [aks_pool(r, nfd) for r in view.of_type("azure-native:containerservice:AgentPool")]
    if nfd:  # every NVIDIA PCI label the 0.4.1 DRA chart's five default node terms look for
        pools = [dataclasses.replace(p, node_labels={**p.node_labels, **{k: "true" for k in NFD_CLASS_LABELS}})
                 if p.family == "gpu" else p for p in pools]
    releases = {driver_release(r).kind: driver_release(r) for r in view.of_type(RELEASE)}
    dra, device_plugin = releases["nvidia-dra"], releases["nvidia-device-plugin"]
    assert len(pools) == 4
    for pool in pools:
        is_dra = pool.labels.get("nvidia.com/gpu.dra") == "true"
        assert evaluate(dra.plugin_placement(), pool.node_labels, pool.taints).runs is is_dra, pool.pool_name
        assert evaluate(device_plugin.plugin_placement(), pool.node_labels, pool.taints).runs is not is_dra, \
            pool.pool_name


def test_the_library_reports_pool_problems_in_its_own_argument_names():
    from gpu_fungibility import AksGpuNodePool

    args = {"cluster_name": "c", "resource_group_name": "rg", "vm_size": "Standard_NC24ads_A100_v4",
            "accelerator_type": "nvidia-a100-80gb-pcie", "pool_name": "A100_spot", "zones": ["4"],
            "labels": {"kubernetes.azure.com/mode": "user"}, "autoscaling": {"min_nodes": 2, "max_nodes": 1}}
    fields = {field for field, _ in AksGpuNodePool.check("a100", args)}
    assert fields == {"pool_name", "zones[0]", "labels.kubernetes.azure.com/mode", "autoscaling.max_nodes"}
    ok = {**args, "pool_name": "a100spot", "zones": ["1"], "labels": {}, "autoscaling": {"min_nodes": 1, "max_nodes": 2}}
    assert AksGpuNodePool.check("a100", ok) == []


def test_scale_set_regexes_match_only_their_own_pool():
    from gpu_fungibility.clouds.aks.node_pools import scale_set_regex

    assert re.fullmatch(scale_set_regex("a100"), "aks-a100-27185104-vmss")
    assert not re.fullmatch(scale_set_regex("a100"), "aks-a100od-27185104-vmss")
    assert not re.fullmatch(scale_set_regex("a100"), "aks-a100-27185104-vmss-extra")


def test_the_plan_summary_sizes_aks_nodes_from_their_vm_size(tmp_path):
    """Standard_NC8as_T4_v3 (8 vCPUs, 56 GiB): capacity 57344 - 57344/64 - 128 = 56320 MiB (55.0 GiB);
    allocatable 56320 - (20 x 110 + 50) - 100 = 53970 MiB (52.7 GiB) and 8000 - 180 millicores."""
    from offline_plan.__main__ import main as plan_main

    assert plan_main(["--stack", "aks-dev", "--out", str(tmp_path)]) == 0
    text = (tmp_path / "aks-dev" / "summary.md").read_text()
    sizes = text[text.index("## Node sizes"):]
    assert ("| vllm-gpu | t4spot | Standard_NC8as_T4_v3 | 8 CPU, 56 GiB | 55.0 GiB | 7.82 CPU, 52.7 GiB "
            "| 0.6 CPU, 1.2 GiB | 6.9 CPU, 49.0 GiB (93% of allocatable memory) |") in sizes
    assert "| vllm-gpu | a100spot | Standard_NC24ads_A100_v4 | 24 CPU, 220 GiB | 216.4 GiB |" in sizes


def test_a_private_api_server_is_warned_about_and_gets_no_authorized_ranges():
    raw = aks_dev_config()
    raw["cluster"]["controlPlane"] = {"publicEndpoint": False}
    run = run_stack(raw, stack="private")
    warnings = [d.message for d in run.diagnostics if d.severity == "warning"]
    assert any("API server is private" in w and "runnerCidrs" in w for w in warnings), warnings
    (cluster,) = run.of_type("azure-native:containerservice:ManagedCluster")
    assert cluster.inputs["apiServerAccessProfile"] == {"enablePrivateCluster": True}
    assert not [d for d in dev_warnings() if "API server is private" in d], "aks-dev's API server is public"


def dev_warnings() -> list[str]:
    return [d.message for d in run_stack_file("aks-dev").diagnostics if d.severity == "warning"]
