"""Node-level rules, each with hand-built StackValidationArgs and a collecting report_violation:
dra-device-plugin-isolation, dra-pool-served, gke-dra-driver-install, gke-critical-priority-quota."""

import pytest

from policies.rules.gke import validate_gke_critical_priority_quota, validate_gke_dra_driver_install
from policies.rules.placement import validate_device_plugin_isolation, validate_dra_pool_served
from tests.policy_fixtures import R, eks_group, eks_stack, find, gke_gpu_pool, gke_stack, run_stack_rule

DRA = "nvidia-dra"


def kubelet_plugin(stack):
    return find(stack, DRA).props["values"]["kubeletPlugin"]


@pytest.mark.parametrize("stack", [gke_stack, eks_stack])
@pytest.mark.parametrize("rule", [validate_device_plugin_isolation, validate_dra_pool_served,
                                  validate_gke_dra_driver_install, validate_gke_critical_priority_quota])
def test_seed_shaped_stacks_pass(stack, rule):
    assert run_stack_rule(rule, stack()).violations == []


# ---- dra-device-plugin-isolation ---------------------------------------------------------


def test_gke_default_device_plugin_on_a_dra_pool():
    stack = gke_stack()
    pool = find(stack, "a100-40gb-pool")
    del pool.props["nodeConfig"]["labels"]["gke-no-default-nvidia-gpu-device-plugin"]
    found = run_stack_rule(validate_device_plugin_isolation, stack)
    assert found.violations == [(found.messages[0], pool.urn)]
    assert "pool a100-40gb" in found.messages[0]
    assert "GKE's default NVIDIA device plugin" in found.messages[0]
    assert "dra-driver-nvidia-gpu" in found.messages[0]


def test_chart_default_dra_affinity_reaches_a_classic_gke_pool():
    """A non-DRA GPU pool labelled gpu.present, with the DRA chart's broad default affinity."""
    stack = gke_stack()
    classic = gke_gpu_pool("l4-classic", "g2-standard-8", "nvidia-l4", 1, spot=True, minimum=0)
    classic.props["nodeConfig"]["labels"] = {"nvidia.com/gpu.present": "true"}
    classic.props["nodeConfig"]["taints"] = []
    stack.append(classic)
    values = kubelet_plugin(stack)
    del values["affinity"]  # chart default: any node with nvidia.com/gpu.present=true
    found = run_stack_rule(validate_device_plugin_isolation, stack)
    assert [u for _, u in found.violations] == [classic.urn]
    values["affinity"] = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchExpressions": [{"key": "nvidia.com/gpu.dra", "operator": "In", "values": ["true"]}]}]}}}
    assert run_stack_rule(validate_device_plugin_isolation, stack).violations == []


def test_device_plugin_release_with_chart_default_affinity_on_eks():
    stack = eks_stack()
    find(stack, "device-plugin").props["values"] = {}
    found = run_stack_rule(validate_device_plugin_isolation, stack)
    urns = sorted(u for _, u in found.violations)
    assert urns == sorted([find(stack, "a100-group").urn, find(stack, "l4-group").urn])
    assert all("Helm release nvidia-device-plugin" in m for m in found.messages)


def test_device_plugin_affinity_admitting_dra_nodes():
    stack = eks_stack()
    terms = find(stack, "device-plugin").props["values"]["affinity"]["nodeAffinity"][
        "requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
    terms[2]["matchExpressions"] = terms[2]["matchExpressions"][:1]  # forgot the gpu.dra exclusion in one term
    assert len(run_stack_rule(validate_device_plugin_isolation, stack).violations) == 2


def test_bottlerocket_nvidia_ami_brings_its_own_device_plugin():
    stack = eks_stack()
    stack.append(eks_group("h100", "p5.48xlarge", dra=True, ami="BOTTLEROCKET_x86_64_NVIDIA"))
    found = run_stack_rule(validate_device_plugin_isolation, stack)
    assert len(found.violations) == 1 and "BOTTLEROCKET_x86_64_NVIDIA" in found.messages[0]


def test_device_plugin_gfd_labels_make_the_dra_default_affinity_reach_every_gpu_node():
    stack = eks_stack()
    find(stack, "device-plugin").props["values"]["gfd"] = {"enabled": True}
    values = find(stack, DRA).props["values"]["kubeletPlugin"]
    del values["affinity"]
    found = run_stack_rule(validate_device_plugin_isolation, stack)
    assert [u for _, u in found.violations] == [find(stack, "t4-classic-group").urn]


def test_tpu_dra_plugin_beside_gkes_tpu_device_plugin():
    stack = gke_stack()
    tpu_pool = find(stack, "tpu-v6e-pool")
    tpu_pool.props["nodeConfig"]["labels"] = {}
    find(stack, "tpu-dra").props["values"]["kubeletPlugin"]["affinity"] = {
        "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchExpressions": [{"key": "cloud.google.com/gke-tpu-accelerator", "operator": "Exists"}]}]}}}
    found = run_stack_rule(validate_device_plugin_isolation, stack)
    assert [u for _, u in found.violations] == [tpu_pool.urn]
    assert "GKE's default TPU device plugin" in found.messages[0]


# ---- dra-pool-served -------------------------------------------------------------------------


def test_dra_plugin_not_tolerating_the_compute_class_taint():
    stack = gke_stack()
    tolerations = kubelet_plugin(stack)["tolerations"]
    tolerations[:] = [t for t in tolerations if t["key"] != "cloud.google.com/compute-class"]
    found = run_stack_rule(validate_dra_pool_served, stack)
    assert sorted(u for _, u in found.violations) == sorted(
        [find(stack, "a100-80gb-pool").urn, find(stack, "a100-40gb-pool").urn])
    assert "does not tolerate cloud.google.com/compute-class=vllm-gpu-ccc:NoSchedule" in found.messages[0]
    assert "pend forever" in found.messages[0]


def test_dra_plugin_affinity_missing_the_pool_label():
    stack = eks_stack()
    find(stack, "l4-group").props["labels"].pop("nvidia.com/gpu.dra")
    find(stack, "l4-group").props["labels"]["cloud.google.com/gke-nvidia-gpu-dra-driver"] = "true"
    found = run_stack_rule(validate_dra_pool_served, stack)
    assert [u for _, u in found.violations] == [find(stack, "l4-group").urn]
    assert "nvidia.com/gpu.dra In [true]" in found.messages[0]


def test_no_dra_release_at_all():
    stack = [r for r in gke_stack() if r.name != DRA]
    found = run_stack_rule(validate_dra_pool_served, stack)
    assert len(found.violations) == 2
    assert all("installs no NVIDIA GPU DRA driver release" in m for m in found.messages)


def test_gpus_disabled_in_the_dra_release():
    stack = gke_stack()
    find(stack, DRA).props["values"]["resources"]["gpus"] = {"enabled": False}
    found = run_stack_rule(validate_dra_pool_served, stack)
    assert len(found.violations) == 2 and "resources.gpus.enabled" in found.messages[0]


def test_tpu_pool_not_tolerated_by_the_tpu_driver():
    stack = gke_stack()
    find(stack, "tpu-dra").props["values"]["kubeletPlugin"]["tolerations"] = []
    found = run_stack_rule(validate_dra_pool_served, stack)
    assert [u for _, u in found.violations] == [find(stack, "tpu-v6e-pool").urn]
    assert "google.com/tpu=present:NoSchedule" in found.messages[0]


def test_gke_pool_with_no_plugin_at_all():
    stack = gke_stack()
    orphan = gke_gpu_pool("t4", "n1-standard-8", "nvidia-tesla-t4", 1, spot=True, minimum=0)
    orphan.props["nodeConfig"]["labels"] = {"gke-no-default-nvidia-gpu-device-plugin": "true"}
    stack.append(orphan)
    found = run_stack_rule(validate_dra_pool_served, stack)
    assert [u for _, u in found.violations] == [orphan.urn]
    assert "GPUs can never be used" in found.messages[0]


# ---- gke-dra-driver-install ------------------------------------------------------------------


@pytest.mark.parametrize("version", ["DEFAULT", "LATEST", None])
def test_gke_driver_installation_not_disabled(version):
    stack = gke_stack()
    accelerator = find(stack, "a100-80gb-pool").props["nodeConfig"]["guestAccelerators"][0]
    if version is None:
        del accelerator["gpuDriverInstallationConfig"]
    else:
        accelerator["gpuDriverInstallationConfig"]["gpuDriverVersion"] = version
    found = run_stack_rule(validate_gke_dra_driver_install, stack)
    assert [u for _, u in found.violations] == [find(stack, "a100-80gb-pool").urn]
    assert f"is {version or 'not set'}" in found.messages[0]


def test_disabled_installation_without_an_installer():
    stack = [r for r in gke_stack() if r.name != "nvidia-driver-installer"]
    found = run_stack_rule(validate_gke_dra_driver_install, stack)
    assert len(found.violations) == 2 and "no NVIDIA driver installer" in found.messages[0]


def test_installer_that_does_not_reach_the_pools():
    stack = gke_stack()
    spec = find(stack, "nvidia-driver-installer").props["spec"]["template"]["spec"]
    spec["tolerations"] = [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]
    found = run_stack_rule(validate_gke_dra_driver_install, stack)
    assert len(found.violations) == 2
    assert "will not run on its nodes" in found.messages[0] and "compute-class" in found.messages[0]


# ---- gke-critical-priority-quota ---------------------------------------------------------------

QUOTA = R("kubernetes:core/v1:ResourceQuota", "critical-quota", {
    "apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": "critical-pods", "namespace": "dra-driver-nvidia-gpu"},
    "spec": {"hard": {"pods": "100"}, "scopeSelector": {"matchExpressions": [
        {"operator": "In", "scopeName": "PriorityClass", "values": ["system-node-critical", "system-cluster-critical"]}]}}})


def test_chart_default_priority_without_quota_on_gke():
    stack = gke_stack()
    del kubelet_plugin(stack)["priorityClassName"]
    found = run_stack_rule(validate_gke_critical_priority_quota, stack)
    assert [u for _, u in found.violations] == [find(stack, DRA).urn]
    assert "kubeletPlugin.priorityClassName is system-node-critical" in found.messages[0]
    assert run_stack_rule(validate_gke_critical_priority_quota, [*stack, QUOTA]).violations == []


def test_quota_in_another_namespace_or_for_another_class_does_not_count():
    stack = gke_stack()
    del kubelet_plugin(stack)["priorityClassName"]
    elsewhere = R(QUOTA.type, "q2", {**QUOTA.props, "metadata": {"name": "q", "namespace": "default"}})
    other_class = R(QUOTA.type, "q3", {**QUOTA.props, "spec": {"scopeSelector": {"matchExpressions": [
        {"operator": "In", "scopeName": "PriorityClass", "values": ["system-cluster-critical"]}]}}})
    zero_pods = R(QUOTA.type, "q4", {**QUOTA.props, "spec": {**QUOTA.props["spec"], "hard": {"pods": "0"}}})
    assert len(run_stack_rule(validate_gke_critical_priority_quota,
                              [*stack, elsewhere, other_class, zero_pods]).violations) == 1


def test_compute_domains_bring_a_critical_controller():
    stack = gke_stack()
    find(stack, DRA).props["values"]["resources"]["computeDomains"]["enabled"] = True
    found = run_stack_rule(validate_gke_critical_priority_quota, stack)
    assert len(found.violations) == 1 and "controller.priorityClassName" in found.messages[0]


def test_critical_workload_object_outside_kube_system():
    stack = gke_stack()
    find(stack, "vllm-gpu").props["spec"]["template"]["spec"]["priorityClassName"] = "system-cluster-critical"
    found = run_stack_rule(validate_gke_critical_priority_quota, stack)
    assert [u for _, u in found.violations] == [find(stack, "vllm-gpu").urn]


def test_eks_needs_no_quota():
    stack = [r for r in eks_stack() if r.name != "nvidia-quota"]
    assert run_stack_rule(validate_gke_critical_priority_quota, stack).violations == []


def test_values_unknown_during_preview_are_never_guessed():
    """A real preview sends unknown sentinels. A leaf the rules do not need is read as "[unknown]"; a
    placement input that is unknown raises the SDK's UnknownValueError, which the engine reports as
    "can't run policy during preview" instead of a verdict built on a guess."""
    from pulumi_policy.proxy import UNKNOWN_OBJECT_VALUE, UNKNOWN_STRING_VALUE, UnknownValueError

    stack = gke_stack()
    find(stack, "nvidia-dra").props["namespace"] = UNKNOWN_STRING_VALUE
    find(stack, "cluster").props["location"] = UNKNOWN_STRING_VALUE
    for rule in (validate_device_plugin_isolation, validate_dra_pool_served, validate_gke_dra_driver_install,
                 validate_gke_critical_priority_quota):
        assert run_stack_rule(rule, stack).violations == []
    find(stack, "tpu-dra").props["values"] = UNKNOWN_OBJECT_VALUE
    with pytest.raises(UnknownValueError) as unknown:
        run_stack_rule(validate_dra_pool_served, stack)
    assert "not judged until known: values (where its plugins run) of Release tpu-dra" in unknown.value.message
