"""Chart defaults and Helm value coalescing: what a driver release runs where values are unset."""

from policies.charts import NVIDIA_DRA_DEFAULTS, chart_kind, coalesce, truthy
from policies.stack_view import Res, driver_release


def release(chart: str, values: dict) -> Res:
    return Res("kubernetes:helm.sh/v3:Release", "urn:pulumi:s::p::kubernetes:helm.sh/v3:Release::r", "r",
               {"chart": chart, "version": "0.4.0", "namespace": "ns", "values": values})


def test_chart_kinds():
    assert chart_kind("oci://registry.k8s.io/dra-driver-nvidia/charts/dra-driver-nvidia-gpu") == "nvidia-dra"
    assert chart_kind("nvidia/nvidia-dra-driver-gpu") == "nvidia-dra"
    assert chart_kind("oci://registry.k8s.io/dra-driver-google/charts/dra-driver-google-tpu:0.1.0") == "tpu-dra"
    assert chart_kind("nvidia-device-plugin") == "nvidia-device-plugin"
    assert chart_kind("cluster-autoscaler") == "other"


def test_coalesce_merges_maps_replaces_lists_and_null_deletes():
    defaults = {"a": {"b": 1, "c": [1, 2]}, "d": {"e": 1}}
    merged = coalesce(defaults, {"a": {"c": [3]}, "d": None, "f": 2})
    assert merged == {"a": {"b": 1, "c": [3]}, "f": 2}
    assert defaults == {"a": {"b": 1, "c": [1, 2]}, "d": {"e": 1}}  # defaults untouched


def test_empty_affinity_map_keeps_the_chart_default():
    """Helm merges maps: `affinity: {}` does not clear the chart's broad default; only null does."""
    kept = driver_release(release("dra-driver-nvidia-gpu", {"kubeletPlugin": {"affinity": {}}}))
    assert kept.plugin_placement().affinity == NVIDIA_DRA_DEFAULTS["kubeletPlugin"]["affinity"]
    cleared = driver_release(release("dra-driver-nvidia-gpu", {"kubeletPlugin": {"affinity": None}}))
    assert cleared.plugin_placement().affinity is None


def test_nvidia_dra_defaults_when_values_are_empty():
    dra = driver_release(release("dra-driver-nvidia-gpu", {}))
    placement = dra.plugin_placement()
    assert placement.tolerations == [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]
    terms = placement.affinity["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
    assert [t["matchExpressions"][0]["key"] for t in terms] == [
        "feature.node.kubernetes.io/pci-10de.present", "feature.node.kubernetes.io/cpu-model.vendor_id",
        "nvidia.com/gpu.present"]
    assert dra.runs_kubelet_plugin()
    # compute domains default on: kubelet plugin and controller are both system-node-critical
    assert dra.critical_pods() == [("kubeletPlugin.priorityClassName", "system-node-critical"),
                                   ("controller.priorityClassName", "system-node-critical")]
    assert "gpu.nvidia.com" in dra.device_classes() and "mig.nvidia.com" in dra.device_classes()


def test_seed_000_values_clear_the_critical_priority():
    dra = driver_release(release("dra-driver-nvidia-gpu", {
        "resources": {"computeDomains": {"enabled": False}}, "kubeletPlugin": {"priorityClassName": ""}}))
    assert dra.critical_pods() == []
    assert dra.device_classes() == ("gpu.nvidia.com", "mig.nvidia.com", "vfio.gpu.nvidia.com")


def test_gpus_disabled_means_no_kubelet_plugin_and_no_gpu_classes():
    dra = driver_release(release("dra-driver-nvidia-gpu", {"resources": {"gpus": {"enabled": "false"}}}))
    assert not dra.runs_kubelet_plugin()
    assert "gpu.nvidia.com" not in dra.device_classes()


def test_tpu_and_device_plugin_defaults():
    tpu = driver_release(release("dra-driver-google-tpu", {}))
    assert tpu.plugin_placement().tolerations == []
    assert tpu.device_classes() == ("tpu.google.com",)
    plugin = driver_release(release("nvidia-device-plugin", {}))
    assert plugin.runs_device_plugin()
    assert {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"} in plugin.plugin_placement().tolerations
    assert not plugin.labels_gpu_nodes_with_nfd()
    assert driver_release(release("nvidia-device-plugin", {"gfd": {"enabled": True}})).labels_gpu_nodes_with_nfd()
    assert not driver_release(release("nvidia-device-plugin", {"devicePlugin": {"enabled": False}})).runs_device_plugin()


def test_truthy_reads_set_strings():
    assert truthy(True) and truthy("true") and truthy("1")
    assert not truthy("false") and not truthy("") and not truthy(None) and not truthy(0)
