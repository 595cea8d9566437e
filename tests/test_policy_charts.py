"""Chart defaults and Helm value coalescing: what a driver release runs where values are unset."""

from gpu_fungibility.node_selection import NodeTaint as Taint
from gpu_fungibility.node_selection import evaluate
from gpu_fungibility.tpu_dra import tpu_dra_values

from policies.charts import NVIDIA_DRA_DEFAULTS, chart_kind, coalesce, truthy
from policies.stack_view import Res, driver_release


def release(chart: str, values: dict) -> Res:
    return Res("kubernetes:helm.sh/v3:Release", "urn:pulumi:s::p::kubernetes:helm.sh/v3:Release::r", "r",
               {"chart": chart, "version": "pinned", "namespace": "ns", "values": values})


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
    # dra-driver-nvidia-gpu 0.4.1 values.yaml: NFD's vendor and class-qualified PCI labels, CPU vendor, gpu.present
    assert [t["matchExpressions"][0]["key"] for t in terms] == [
        "feature.node.kubernetes.io/pci-10de.present", "feature.node.kubernetes.io/pci-0302_10de.present",
        "feature.node.kubernetes.io/pci-0300_10de.present", "feature.node.kubernetes.io/cpu-model.vendor_id",
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
    # dra-driver-google-tpu 0.2.0: no affinity, the TPU taint tolerated
    assert tpu.plugin_placement().tolerations == [{"key": "google.com/tpu", "operator": "Exists", "effect": "NoSchedule"}]
    assert tpu.plugin_placement().affinity is None
    assert tpu.device_classes() == ("tpu.google.com",)
    plugin = driver_release(release("nvidia-device-plugin", {}))
    terms = plugin.plugin_placement().affinity["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][
        "nodeSelectorTerms"]
    assert [t["matchExpressions"][0]["key"] for t in terms] == [  # nvidia-device-plugin 0.20.0 values.yaml
        "feature.node.kubernetes.io/pci-10de.present", "feature.node.kubernetes.io/cpu-model.vendor_id",
        "nvidia.com/gpu.present"]
    assert plugin.runs_device_plugin()
    assert {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"} in plugin.plugin_placement().tolerations
    assert not plugin.labels_gpu_nodes_with_nfd()
    assert driver_release(release("nvidia-device-plugin", {"gfd": {"enabled": True}})).labels_gpu_nodes_with_nfd()
    assert not driver_release(release("nvidia-device-plugin", {"devicePlugin": {"enabled": False}})).runs_device_plugin()


def test_truthy_reads_set_strings():
    assert truthy(True) and truthy("true") and truthy("1")
    assert not truthy("false") and not truthy("") and not truthy(None) and not truthy(0)


# ---- where the pinned charts' node-level pods land, from their defaults and from the library's values

GPU_NODE = ({"cloud.google.com/gke-accelerator": "nvidia-l4", "nvidia.com/gpu.present": "true"},
            [Taint("nvidia.com/gpu", "present", "NoSchedule")])
NFD_CLASS_LABELLED_GPU_NODE = ({"feature.node.kubernetes.io/pci-0302_10de.present": "true"},
                               [Taint("nvidia.com/gpu", "present", "NoSchedule")])
PLAIN_NODE = ({"cloud.google.com/gke-nodepool": "system"}, [])
TPU_DRA_NODE = ({"cloud.google.com/gke-tpu-accelerator": "tpu-v6e-slice", "cloud.google.com/gke-tpu-dra-driver": "true"},
                [Taint("google.com/tpu", "present", "NoSchedule")])


def _runs(release_res: Res, node: tuple) -> bool:
    return evaluate(driver_release(release_res).plugin_placement(), *node).runs


def test_nvidia_dra_chart_default_reaches_nodes_nfd_labels_by_pci_class():
    """0.4.x's default affinity has NFD's class-qualified PCI terms: a node labelled only so is selected."""
    defaults = release("dra-driver-nvidia-gpu", {})
    assert _runs(defaults, GPU_NODE) and _runs(defaults, NFD_CLASS_LABELLED_GPU_NODE)
    assert not _runs(defaults, PLAIN_NODE)


def test_tpu_chart_default_runs_everywhere_the_library_values_keep_it_on_tpu_dra_pools():
    """0.2.0 dropped the chart's TPU affinity: without the library's values the plugin lands on every untainted node."""
    defaults = release("dra-driver-google-tpu", {})
    assert _runs(defaults, PLAIN_NODE) and _runs(defaults, TPU_DRA_NODE)
    ours = release("dra-driver-google-tpu", tpu_dra_values([Taint("google.com/tpu", "present", "NoSchedule")]))
    assert _runs(ours, TPU_DRA_NODE)
    assert not _runs(ours, PLAIN_NODE) and not _runs(ours, GPU_NODE)
