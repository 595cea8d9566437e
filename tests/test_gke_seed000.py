"""Seed 000 on GKE, under mocks: the exact pools, DRA wiring, drivers and ComputeClass it builds by hand."""

from __future__ import annotations

import pytest

from offline_plan.run import PlanRun, run_stack

SEED_000 = {
    "gcp:project": "demo-project",
    "cluster": {
        "cloud": "gke", "name": "gpu-fungibility", "location": "us-central1", "zones": ["us-central1-c"],
        "kubernetesVersion": "1.34",
    },
    "nodePools": {
        "a100-80gb": {
            "machineType": "a2-ultragpu-1g", "accelerator": {"type": "nvidia-a100-80gb", "count": 1},
            "spot": False, "onDemandFallback": True, "autoscaling": {"min": 1, "max": 2}, "diskSizeGb": 300,
        },
        "a100-40gb": {
            "machineType": "a2-highgpu-2g", "accelerator": {"type": "nvidia-tesla-a100", "count": 2},
            "spot": True, "autoscaling": {"min": 0, "max": 2}, "diskSizeGb": 300,
        },
    },
    "computeClasses": {"vllm-gpu-ccc": {"pools": ["a100-80gb", "a100-40gb"], "consolidationDelayMinutes": 3}},
}

SEED_LABELS = {
    "gke-no-default-nvidia-gpu-device-plugin": "true",
    "nvidia.com/gpu.present": "true",
    "cloud.google.com/compute-class": "vllm-gpu-ccc",
    "cloud.google.com/gke-nvidia-gpu-dra-driver": "true",
    "cloud.google.com/gke-gpu-dra-driver": "true",  # the upstream autoscaler's GCE DRA label
    "nvidia.com/gpu.dra": "true",  # the project's uniform DRA label (both clouds)
}
SEED_TAINT = {"key": "cloud.google.com/compute-class", "value": "vllm-gpu-ccc", "effect": "NO_SCHEDULE"}


@pytest.fixture(scope="module")
def run() -> PlanRun:
    return run_stack(SEED_000)


def pool(run: PlanRun, name: str):
    return run.named(f"{name}-nodepool")


@pytest.mark.parametrize("name,machine,gpu,count,spot,low,high", [
    ("a100-80gb", "a2-ultragpu-1g", "nvidia-a100-80gb", 1, False, 1, 2),
    ("a100-40gb", "a2-highgpu-2g", "nvidia-tesla-a100", 2, True, 0, 2),
])
def test_seed_pools_exactly(run, name, machine, gpu, count, spot, low, high):
    res = pool(run, name)
    inputs, node = res.inputs, res.inputs["nodeConfig"]
    assert inputs["name"] == name, res.urn
    assert inputs["location"] == "us-central1" and inputs["nodeLocations"] == ["us-central1-c"], res.urn
    assert node["machineType"] == machine, res.urn
    assert node["guestAccelerators"] == [{
        "type": gpu, "count": count, "gpuDriverInstallationConfig": {"gpuDriverVersion": "INSTALLATION_DISABLED"},
    }], res.urn
    assert node["spot"] is spot, res.urn
    assert inputs["autoscaling"]["totalMinNodeCount"] == low, res.urn
    assert inputs["autoscaling"]["totalMaxNodeCount"] == high, res.urn
    assert inputs["initialNodeCount"] == low, f"{res.urn}: seed starts with --num-nodes={low}"
    assert node["diskSizeGb"] == 300, res.urn
    marker = {} if spot else {"gpu-fungibility/on-demand-fallback": "true"}  # onDemandFallback: true
    assert node["labels"] == {**SEED_LABELS, **marker}, res.urn
    assert node["taints"] == [SEED_TAINT], res.urn


def test_pools_are_hardened(run):
    account = run.named("gke-nodes-sa")
    for name in ("a100-80gb", "a100-40gb"):
        node = pool(run, name).inputs["nodeConfig"]
        assert node["imageType"] == "COS_CONTAINERD", "the preloaded driver installer is COS-only"
        assert node["shieldedInstanceConfig"] == {"enableSecureBoot": True, "enableIntegrityMonitoring": True}
        assert node["workloadMetadataConfig"] == {"mode": "GKE_METADATA"}
        assert node["serviceAccount"].startswith(account.inputs["accountId"] + "@"), pool(run, name).urn


def test_compute_class_is_the_seed_manifest(run):
    res = run.named("vllm-gpu-ccc-computeclass")
    assert res.type == "kubernetes:cloud.google.com/v1:ComputeClass", res.urn
    assert res.inputs["metadata"] == {"name": "vllm-gpu-ccc"}, res.urn
    spec = res.inputs["spec"]
    assert spec["priorities"] == [{"nodepools": ["a100-80gb"]}, {"nodepools": ["a100-40gb"]}], res.urn
    assert spec["autoscalingPolicy"] == {"consolidationDelayMinutes": 3}, res.urn
    assert "whenUnsatisfiable" not in spec and "activeMigration" not in spec, res.urn


def test_compute_class_names_the_node_pools_the_stack_built(run):
    res = run.named("vllm-gpu-ccc-computeclass")
    named = [p for prio in res.inputs["spec"]["priorities"] for p in prio["nodepools"]]
    built = {r.inputs["name"] for r in run.of_type("gcp:container/nodePool:NodePool")}
    assert set(named) <= built, f"{res.urn} names {named}, stack built {built}"


def test_nvidia_dra_release_gke_values(run):
    res = run.named("nvidia-dra-release")
    assert res.inputs["chart"] == "oci://registry.k8s.io/dra-driver-nvidia/charts/dra-driver-nvidia-gpu", res.urn
    assert res.inputs["version"] == "0.4.1", res.urn
    assert res.inputs["name"] == "dra-driver-nvidia-gpu" and res.inputs["namespace"] == "dra-driver-nvidia-gpu"
    values = res.inputs["values"]
    assert values["nvidiaDriverRoot"] == "/home/kubernetes/bin/nvidia/", res.urn
    assert values["gpuResourcesEnabledOverride"] is True, res.urn
    assert values["resources"]["computeDomains"] == {"enabled": False}, res.urn
    plugin = values["kubeletPlugin"]
    assert plugin["priorityClassName"] == "", res.urn
    assert all("key" in t for t in plugin["tolerations"]), f"{res.urn}: no blanket toleration"
    assert {"key": "cloud.google.com/compute-class", "operator": "Equal", "value": "vllm-gpu-ccc",
            "effect": "NoSchedule"} in plugin["tolerations"], res.urn
    assert {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"} in plugin["tolerations"]
    terms = plugin["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
    assert terms == [{"matchExpressions": [
        {"key": "nvidia.com/gpu.present", "operator": "Exists"},
        {"key": "nvidia.com/gpu.dra", "operator": "In", "values": ["true"]},
    ]}], res.urn
    assert not run.of_type("kubernetes:core/v1:ResourceQuota"), "GKE default: no priority class, so no quota"


def test_kubelet_plugin_tolerates_every_taint_on_the_dra_pools(run):
    from gpu_fungibility import dra_wiring
    from gpu_fungibility.node_selection import toleration_tolerates

    from stacks.arguments import pool_specs

    tolerations = run.named("nvidia-dra-release").inputs["values"]["kubeletPlugin"]["tolerations"]
    specs = pool_specs(run.config)
    for name in ("a100-80gb", "a100-40gb"):
        for taint in dra_wiring.node_taints("gke", specs[name]):
            assert any(toleration_tolerates(t, taint) for t in tolerations), f"{name}: {taint} not tolerated"


def test_driver_installer_serves_exactly_the_dra_pools(run):
    res = run.named("nvidia-driver-installer-daemonset")
    assert res.inputs["metadata"]["namespace"] == "kube-system", res.urn
    spec = res.inputs["spec"]["template"]["spec"]
    exprs = spec["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][
        "nodeSelectorTerms"][0]["matchExpressions"]
    assert {"key": "cloud.google.com/gke-accelerator", "operator": "Exists"} in exprs, res.urn
    assert {"key": "cloud.google.com/gke-nodepool", "operator": "In",
            "values": ["a100-40gb", "a100-80gb"]} in exprs, res.urn  # the pools in the CLI's (sorted) order
    assert all("key" in t for t in spec["tolerations"]), f"{res.urn}: no blanket toleration"
    installer = spec["initContainers"][0]
    assert installer["image"] == "cos-nvidia-installer:fixed" and installer["imagePullPolicy"] == "Never"
    images = [c["image"] for c in spec["initContainers"] + spec["containers"]]
    assert all(":" in i and not i.endswith(":latest") for i in images), images


def test_no_tpu_pool_or_driver_when_none_configured(run):
    assert not run.of_type("gpu-fungibility:index:GkeTpuNodePool")
    assert not run.of_type("gpu-fungibility:index:TpuDraDriver")
    assert "tpu-dra-release" not in {r.name for r in run.resources}


def test_every_kubernetes_resource_uses_the_cluster_provider(run):
    provider = run.named("gke-k8s")
    k8s_resources = [r for r in run.resources if r.type.startswith("kubernetes:")]
    assert k8s_resources
    for res in k8s_resources:
        assert res.provider.startswith(provider.urn + "::"), f"{res.urn} uses {res.provider or 'the default provider'}"


def _depends_on(run: PlanRun, component_name: str, urn: str) -> bool:
    return urn in run.named(component_name).dependencies


def test_drivers_and_classes_wait_for_their_pools(run):
    pools = [pool(run, n).urn for n in ("a100-80gb", "a100-40gb")]
    for component in ("nvidia-driver-installer", "nvidia-dra", "vllm-gpu-ccc"):
        for urn in pools:
            assert _depends_on(run, component, urn), f"{component} does not wait for {urn}"
    installer = run.named("nvidia-driver-installer-daemonset").urn
    assert _depends_on(run, "nvidia-dra", installer), "the DRA driver starts after the driver installer"


def test_pools_belong_to_the_cluster(run):
    cluster = run.named("gke-cluster")
    for name in ("a100-80gb", "a100-40gb"):
        res = pool(run, name)
        assert res.inputs["cluster"] == cluster.inputs["name"], res.urn
        assert cluster.urn in res.dependencies, res.urn
