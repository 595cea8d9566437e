"""The NVIDIA device plugin, kept off every DRA node (seed 004).

It serves classic GPU pools (``dra: false``), whose pods request
``nvidia.com/gpu``: the AL2023 NVIDIA AMI ships the driver but no device
plugin. Its node affinity is the chart's own three ways of recognising a GPU
node, each ANDed with ``nvidia.com/gpu.dra NotIn [true]``: the device plugin
and the DRA kubelet plugin must never manage the same GPUs, and the component
refuses values that would let it onto a DRA node.
"""

from typing import Any, NotRequired, TypedDict

import pulumi

from . import helm_values, images, pins, wiring_keys
from .base import Issues, LibraryComponent
from .releases import chart_issues, helm_release, privileged_namespace

RELEASE_NAME = "nvidia-device-plugin"
#: The chart's default GPU-node recognisers (discrete GPU via NFD, Tegra, forced label).
GPU_NODE_EXPRESSIONS: tuple[dict[str, Any], ...] = (
    {"key": wiring_keys.NFD_NVIDIA_PCI, "operator": "In", "values": ["true"]},
    {"key": "feature.node.kubernetes.io/cpu-model.vendor_id", "operator": "In", "values": ["NVIDIA"]},
    {"key": wiring_keys.GPU_PRESENT, "operator": "In", "values": ["true"]},
)
EXCLUDE_DRA_NODES: dict[str, Any] = {"key": wiring_keys.GPU_DRA, "operator": "NotIn", "values": ["true"]}


def device_plugin_values(extra: dict[str, Any] | None = None) -> dict[str, Any]:
    """The chart values: seed 004's affinity and a toleration for the GPU taint, under ``extra``."""
    library = {
        "affinity": {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [
                        {"matchExpressions": [dict(expr), dict(EXCLUDE_DRA_NODES)]} for expr in GPU_NODE_EXPRESSIONS
                    ],
                },
            },
        },
        "tolerations": [{"key": wiring_keys.GPU_TAINT_KEY, "operator": "Exists", "effect": "NoSchedule"}],
    }
    return helm_values.merge(library, extra or {})


def dra_exclusion_issues(values: dict[str, Any]) -> Issues:
    """Problems when the (merged) values would let the device plugin onto a DRA node.

    Every required node-affinity term must exclude ``nvidia.com/gpu.dra=true``
    (``NotIn [true]`` or ``DoesNotExist``), since terms are ORed.
    """
    terms = (
        values.get("affinity", {}) or {}
    ).get("nodeAffinity", {}).get("requiredDuringSchedulingIgnoredDuringExecution", {}).get("nodeSelectorTerms")
    if not terms:
        return [("values.affinity", "the device plugin needs a required node affinity that excludes "
                                    f"{wiring_keys.GPU_DRA}=true; without one it runs on DRA nodes too")]
    issues: Issues = []
    for i, term in enumerate(terms):
        exprs = term.get("matchExpressions") or []
        if not any(_excludes_dra(e) for e in exprs):
            issues.append((
                f"values.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[{i}]",
                f"does not exclude {wiring_keys.GPU_DRA}=true (add {{key: {wiring_keys.GPU_DRA}, operator: NotIn, "
                "values: ['true']}); the device plugin would run beside the DRA kubelet plugin",
            ))
    return issues


def _excludes_dra(expr: dict[str, Any]) -> bool:
    if expr.get("key") != wiring_keys.GPU_DRA:
        return False
    op = expr.get("operator")
    return op == "DoesNotExist" or (op == "NotIn" and "true" in (expr.get("values") or []))


class NvidiaDevicePluginArgs(TypedDict):
    """The NVIDIA device plugin release for classic (non-DRA) GPU pools."""

    chart: NotRequired[str]
    """The chart name (default ``nvidia-device-plugin``)."""
    version: NotRequired[str]
    """The exact chart version (default: the pinned one)."""
    repository: NotRequired[str]
    """The chart repository (default NVIDIA's)."""
    namespace: NotRequired[str]
    """The namespace the stack creates for the plugin (default ``nvidia-device-plugin``)."""
    values: NotRequired[dict[str, Any]]
    """Chart values merged over the library's; refused if they would let the plugin onto a DRA node."""


class NvidiaDevicePlugin(LibraryComponent):
    """Namespace and Helm release of the NVIDIA device plugin, never on a DRA node (provider via ``opts``)."""

    LEGACY_TYPE = "gpu-fungibility:device_plugin:NvidiaDevicePlugin"

    namespace: pulumi.Output[str]
    """The plugin's namespace."""
    release_name: pulumi.Output[str]
    """The Helm release's name."""

    @classmethod
    def issues(cls, name: str, args: Any) -> Issues:
        return chart_issues(dict(args)) + dra_exclusion_issues(device_plugin_values(args.get("values")))

    def __init__(self, name: str, args: NvidiaDevicePluginArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__(name, opts)
        self.fail_on(self.check(name, args))
        namespace = privileged_namespace(self, name, args.get("namespace", pins.NVIDIA_DEVICE_PLUGIN_NAMESPACE))
        chart = args.get("chart", pins.NVIDIA_DEVICE_PLUGIN_CHART)
        version = args.get("version", pins.NVIDIA_DEVICE_PLUGIN_VERSION)
        extra = helm_values.merge(images.chart_image_values(chart, version), args.get("values"))
        release = helm_release(
            self, name, RELEASE_NAME, chart=chart, version=version,
            repository=args.get("repository", pins.NVIDIA_DEVICE_PLUGIN_REPO),
            namespace=namespace.metadata.name, values=device_plugin_values(extra))
        self.namespace = namespace.metadata.name
        self.release_name = release.name
        self.register()
