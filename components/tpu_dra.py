"""The TPU DRA driver (chart ``dra-driver-google-tpu``, seed 003), for GKE TPU pools.

Seed 003's values: no priority class for the kubelet plugin (GKE refuses
``system-node-critical`` outside kube-system without a quota) and a toleration
for GKE's ``google.com/tpu`` taint. Tolerations for every other taint on the
TPU pools (a compute-class taint, user taints) are added explicitly. The node
affinity is stated too: ``gke-tpu-accelerator`` present and
``gke-tpu-dra-driver=true``, the TPU DRA pools only. Chart 0.1.0 selected those
nodes by default; from 0.2.0 the chart's default is no affinity at all (the
plugin runs on every node and idles where there is no TPU,
kubernetes-sigs/dra-driver-google-tpu v0.2.0 ``values.yaml``), so without this
value every untainted node would run a privileged, host-network pod.
"""

import copy
from collections.abc import Sequence
from typing import Any, NotRequired, TypedDict

import pulumi

from . import helm_values, images, pins
from .base import Issues, LibraryComponent, resolved
from .node_selection import NodeTaint, tolerations_for
from .pool_args import Taint, taint_issues, taints_of
from .releases import chart_issues, helm_release, privileged_namespace
from .wiring_keys import GKE_TPU_ACCELERATOR, GKE_TPU_DRA_DRIVER, TPU_TAINT_KEY

RELEASE_NAME = "dra-driver-google-tpu"
TPU_TOLERATION = {"key": TPU_TAINT_KEY, "operator": "Exists", "effect": "NoSchedule"}
KUBELET_PLUGIN_AFFINITY = {
    "nodeAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [{
                "matchExpressions": [
                    {"key": GKE_TPU_ACCELERATOR, "operator": "Exists"},
                    {"key": GKE_TPU_DRA_DRIVER, "operator": "In", "values": ["true"]},
                ],
            }],
        },
    },
}


def tpu_dra_values(taints: Sequence[NodeTaint], extra: dict[str, Any] | None = None) -> dict[str, Any]:
    values = {
        "kubeletPlugin": {
            "priorityClassName": "",
            "tolerations": tolerations_for(taints, base=[TPU_TOLERATION]),
            "affinity": copy.deepcopy(KUBELET_PLUGIN_AFFINITY),
        },
    }
    return helm_values.merge(values, extra or {})


class TpuDraDriverArgs(TypedDict):
    """The TPU DRA driver release and the TPU pools it serves."""

    node_taints: NotRequired[pulumi.Input[list[Taint]]]
    """Every taint on the nodes of the TPU pools it serves (their ``node_taints`` outputs)."""
    chart: NotRequired[str]
    """The chart reference (default: the pinned ``dra-driver-google-tpu`` OCI chart)."""
    version: NotRequired[str]
    """The exact chart version (default: the pinned one)."""
    repository: NotRequired[str]
    """The chart repository, for a chart that is not an ``oci://`` reference."""
    namespace: NotRequired[str]
    """The namespace the stack creates for the driver (default ``dra-driver-google-tpu``)."""
    values: NotRequired[dict[str, Any]]
    """Chart values merged over the library's (Helm's merge: a null deletes a default)."""


def tpu_driver_issues(args: TpuDraDriverArgs) -> Issues:
    issues = chart_issues(dict(args))
    taints = args.get("node_taints")
    if isinstance(taints, list):
        issues += taint_issues(taints, "node_taints")
    return issues


class TpuDraDriver(LibraryComponent):
    """Namespace and the pinned ``dra-driver-google-tpu`` Helm release (provider via ``opts``)."""

    LEGACY_TYPE = "gpu-fungibility:tpu_dra:TpuDraDriver"

    namespace: pulumi.Output[str]
    """The driver's namespace."""
    release_name: pulumi.Output[str]
    """The Helm release's name."""
    values: pulumi.Output[dict[str, Any]]
    """The values the release was given."""

    @classmethod
    def issues(cls, name: str, args: Any) -> Issues:
        return tpu_driver_issues(args)

    def __init__(self, name: str, args: TpuDraDriverArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__(name, opts)
        self.fail_on(self.check(name, args))
        chart, version = args.get("chart", pins.TPU_DRA_CHART), args.get("version", pins.TPU_DRA_VERSION)
        extra = helm_values.merge(images.chart_image_values(chart, version), args.get("values"))
        values = resolved(args.get("node_taints", []), lambda taints: tpu_dra_values(taints_of(taints), extra))
        namespace = privileged_namespace(self, name, args.get("namespace", pins.TPU_DRA_NAMESPACE))
        release = helm_release(
            self, name, RELEASE_NAME, chart=chart, version=version, repository=args.get("repository"),
            namespace=namespace.metadata.name, values=values, create_namespace=False, allow_null_values=True)
        self.namespace = namespace.metadata.name
        self.release_name = release.name
        self.values = pulumi.Output.from_input(values)
        self.register()
