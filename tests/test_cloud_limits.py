"""Each cloud's limits as rules: GPU sharing on GKE DRA pools."""

import copy

import pytest

from policies.rules.gke import validate_gke_dra_driver_install
from tests.policy_fixtures import R, gke_stack, run_stack_rule


def mig_template() -> R:
    return R("kubernetes:resource.k8s.io/v1:ResourceClaimTemplate", "mig-template", {
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
        "metadata": {"name": "mig", "namespace": "inference"},
        "spec": {"spec": {"devices": {"requests": [
            {"name": "slice", "exactly": {"deviceClassName": "mig.nvidia.com", "count": 1}}]}}},
    })


def test_gke_refuses_mig_claims_on_a_dra_cluster():
    found = run_stack_rule(validate_gke_dra_driver_install, [*gke_stack(), mig_template()])
    assert [urn.rsplit("::", 1)[1] for _, urn in found.violations] == ["mig-template"]
    assert "GKE does not support multi-instance GPUs" in found.messages[0]


def test_gke_refuses_gpu_sharing_on_a_dra_pool():
    resources = copy.deepcopy(gke_stack())
    pool = next(r for r in resources if r.type == "gcp:container/nodePool:NodePool"
                and r.props["nodeConfig"].get("labels", {}).get("nvidia.com/gpu.dra") == "true")
    pool.props["nodeConfig"]["guestAccelerators"][0]["gpuSharingConfig"] = {
        "gpuSharingStrategy": "TIME_SHARING", "maxSharedClientsPerGpu": 2}
    found = run_stack_rule(validate_gke_dra_driver_install, resources)
    assert any("GPU sharing or partitioning" in m for m in found.messages), found.messages


def test_the_shipped_gke_stack_fixture_passes():
    assert run_stack_rule(validate_gke_dra_driver_install, gke_stack()).violations == []


# ---- AKS ------------------------------------------------------------------------------------------------

def aks_args(**extra):
    args = {"cluster_name": "c", "resource_group_name": "rg", "vm_size": "Standard_NC24ads_A100_v4",
            "accelerator_type": "nvidia-a100-80gb-pcie", "accelerator_count": 1, "min_nodes": 1, "max_nodes": 1}
    return {**args, **extra}


def aks_issues(**extra):
    from gpu_fungibility.clouds.aks.node_pools import AksGpuNodePool

    return AksGpuNodePool.issues("gpu", aks_args(**extra))


def test_nvads_a10_v5_is_refused_for_dra_and_kept_for_the_device_plugin():
    a10 = {"vm_size": "Standard_NV36ads_A10_v5", "accelerator_type": "nvidia-a10"}
    assert any(field == "vm_size" and "GRID (vGPU)" in message for field, message in aks_issues(**a10))
    assert not any("GRID" in message for _, message in aks_issues(**a10, dra=False))
    assert not any("GRID" in message for _, message in aks_issues())


def test_the_managed_gpu_tag_is_refused_on_dra_pools():
    tagged = {"tags": {"EnableManagedGPUExperience": "true"}}
    assert ("tags.EnableManagedGPUExperience" in {field for field, _ in aks_issues(**tagged)})
    assert "tags.EnableManagedGPUExperience" not in {field for field, _ in aks_issues(**tagged, dra=False)}


def test_the_pack_sees_the_managed_gpu_tag_as_a_device_plugin():
    from policies.aks import pool as aks_pool
    from policies.stack_view import Res

    props = {"agentPoolName": "gpu", "vmSize": "Standard_NC24ads_A100_v4", "tags": {"EnableManagedGPUExperience": "true"}}
    pool = aks_pool(Res("azure-native:containerservice:AgentPool", "urn:x", "gpu", props))
    assert pool.ami_type == "aks-managed-gpu"


@pytest.mark.parametrize("key", ["kubernetes.io/role", "kubernetes.azure.com/mode"])
def test_aks_reserved_prefixes_are_refused(key):
    assert f"labels.{key}" in {field for field, _ in aks_issues(labels={key: "x"})}
    assert "taints[0]" in {field for field, _ in aks_issues(taints=[{"key": key, "value": "x"}])}


def test_spot_pools_ignore_the_label_and_taint_aks_writes_into_them():
    from offline_plan.run import run_stack_file

    run = run_stack_file("aks-dev")
    for pool in run.of_type("azure-native:containerservice:AgentPool"):
        spot = pool.inputs.get("scaleSetPriority") == "Spot"
        keys = [*(pool.inputs.get("nodeLabels") or {}), *(t.split("=")[0] for t in pool.inputs.get("nodeTaints") or [])]
        assert "kubernetes.azure.com/scalesetpriority" not in keys, pool.urn  # a reserved prefix: AKS writes it
        ignored = set(pool.ignore_changes)
        assert ({'nodeLabels["kubernetes.azure.com/scalesetpriority"]', "nodeTaints"} <= ignored) is spot, pool.urn
        assert "count" in ignored, pool.urn


def test_the_a10g_publishes_the_brand_nvml_reports():
    from gpu_fungibility import catalog
    from gpu_fungibility.devices import gpu_attributes

    model = catalog.accelerator("nvidia-a10g")
    assert model.brand == "NvidiaRTX"
    assert gpu_attributes(model)["brand"] == {"string": "NvidiaRTX"}  # what a ResourceSlice device carries
