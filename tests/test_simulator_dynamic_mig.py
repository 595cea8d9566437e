"""A stack whose NVIDIA driver runs with DynamicMIG: its GPUs publish partitionable MIG devices, which the
simulator allocates within their shared counters on Kubernetes 1.36 and, as the API server drops the counters
with DRAPartitionableDevices off, as independent devices on 1.35.
"""

import copy

from simulator import PENDING, SCHEDULED, simulate
from simulator.cluster import ClusterBuilder, dynamic_mig_on
from stacks.loader import parse_stack_config

RAW = {
    "cluster": {"cloud": "gke", "name": "dyn", "location": "us-central1", "zones": ["us-central1-c"],
                "kubernetesVersion": "1.36"},
    "nodePools": {"h100": {"machineType": "a3-highgpu-1g", "accelerator": {"type": "nvidia-h100-80gb", "count": 1},
                           "autoscaling": {"min": 1, "max": 1}}},
    "drivers": {"nvidiaDra": {"chart": "oci://registry.k8s.io/dra-driver-nvidia/charts/dra-driver-nvidia-gpu",
                              "version": "0.4.1", "namespace": "dra-driver-nvidia-gpu",
                              "values": {"featureGates": {"DynamicMIG": True}}}},
}


def _cfg(minor: str, dynamic: bool = True):
    raw = copy.deepcopy(RAW)
    raw["cluster"]["kubernetesVersion"] = minor
    if not dynamic:
        del raw["drivers"]
    return parse_stack_config(raw)


def _objects(profiles: str, replicas: int) -> list[dict]:
    """A Deployment whose every replica claims one MIG device of one of ``profiles`` (comma-separated)."""
    wanted = ", ".join(f"'{p}'" for p in profiles.split(","))
    template = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
                "metadata": {"name": "slice", "namespace": "default"},
                "spec": {"spec": {"devices": {"requests": [{"name": "slice", "exactly": {
                    "deviceClassName": "mig.nvidia.com", "selectors": [
                        {"cel": {"expression": f"device.attributes['gpu.nvidia.com'].profile in [{wanted}]"}}]}}]}}}}
    pod = {"tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
           "resourceClaims": [{"name": "slice", "resourceClaimTemplateName": "slice"}],
           "containers": [{"name": "app", "image": "vllm/vllm-openai:v0.11.0", "resources": {"claims": [
               {"name": "slice"}]}}]}
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment",
                  "metadata": {"name": "app", "namespace": "default", "labels": {"app.kubernetes.io/instance": "app"}},
                  "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": "app"}},
                           "template": {"metadata": {"labels": {"app": "app"}}, "spec": pod}}}
    return [template, deployment]


def test_the_gate_is_read_from_the_stacks_driver_values():
    assert dynamic_mig_on(_cfg("1.36"))
    assert not dynamic_mig_on(_cfg("1.36", dynamic=False))
    node = ClusterBuilder(_cfg("1.36")).node("h100", 0)
    assert len(node.devices) == 26  # the GPU and 25 profile placements
    assert all(d.entry.get("consumesCounters") for d in node.devices)


def test_on_1_36_a_slice_overlapping_an_allocated_one_is_refused():
    # 3g.40gb at 0 and at 4 take all eight memory slices: the 4g.40gb (slices 0-3) is left without counters
    placed = simulate(_cfg("1.36"), _objects("3g.40gb,4g.40gb", 3)).of("app")
    assert [r.status for r in placed] == [SCHEDULED, SCHEDULED, PENDING]
    assert [r.devices for r in placed[:2]] == [("gpu-0-mig-3g40gb-9-0",), ("gpu-0-mig-3g40gb-9-4",)]
    # seven 1g.10gb fit the GPU's counters; with them the whole GPU does not
    placed = simulate(_cfg("1.36"), _objects("1g.10gb", 8)).of("app")
    assert [r.status for r in placed] == [SCHEDULED] * 7 + [PENDING]
    assert len({r.devices for r in placed[:7]}) == 7


def test_before_1_36_the_counters_are_dropped_and_overlapping_slices_are_handed_out():
    # what 1.35's scheduler does with the driver's slices: the 4g.40gb overlaps the first 3g.40gb, and the
    # kubelet plugin would then fail to create it
    placed = simulate(_cfg("1.35"), _objects("3g.40gb,4g.40gb", 3)).of("app")
    assert [r.status for r in placed] == [SCHEDULED] * 3
    assert placed[2].devices == ("gpu-0-mig-4g40gb-5-0",)


def test_the_rehearsal_publishes_the_same_dynamic_slices_as_the_simulator():
    from rehearse.cluster import NodeFactory

    planned = NodeFactory(_cfg("1.36")).node("h100", 0)
    published = [entry for s in planned.resource_slices for entry in s["spec"].get("devices") or ()]
    assert len(published) == 26
    assert any(s["spec"].get("sharedCounters") for s in planned.resource_slices)
    assert [d["name"] for d in published] == [d.entry["name"] for d in planned.sim.devices]
