"""The cluster a stack would have, as Kubernetes objects: nodes, ResourceSlices, the charts' plugin DaemonSets.

Everything here is built from the library's own models, the same ones the simulator and the policy pack read:

- Nodes: one per pool node, named, labelled and tainted as :class:`simulator.cluster.ClusterBuilder` builds
  them (the cloud profile's labels and taints, :mod:`gpu_fungibility.dra_wiring`), with capacity and
  allocatable from the capacity model (:func:`gpu_fungibility.sizing.node_room`) and a Ready condition.
- ResourceSlices: the devices the pinned driver publishes on that node (:func:`gpu_fungibility.devices.published`).
- The DeviceClasses the driver charts install (:data:`gpu_fungibility.device_selectors.DRIVER_DEVICE_CLASS_SELECTORS`).
- The charts' node-level plugins (NVIDIA DRA kubelet plugin, TPU DRA kubelet plugin, NVIDIA device plugin, and
  on GKE the default device plugin GKE runs on GPU nodes) as minimal DaemonSets that carry exactly the
  placement the chart model derives from the pinned charts and the stack's values
  (:class:`policies.charts.DriverRelease`), so the real DaemonSet controller decides where each runs.
- A DaemonSet standing for the cloud's own per-node pods, requesting ``system_pods_reserve``, and plugin pods
  requesting the room the library keeps for them (:data:`gpu_fungibility.sizing.DAEMON_SET_ROOM`): the room
  a serving pod finds on a node is then the room the simulator assumes.
"""

from __future__ import annotations

import base64
import copy
from dataclasses import dataclass, field
from typing import Any

from gpu_fungibility import clouds, devices, sizing, wiring_keys
from gpu_fungibility.device_selectors import DRIVER_DEVICE_CLASS_SELECTORS

from offline_plan.cloud_parts import cloud_part, registered_parts
from simulator.cluster import ClusterBuilder, SimNode

#: The image every stand-in pod names; nothing pulls it (there is no kubelet).
PAUSE_IMAGE = "registry.k8s.io/pause:3.10"
#: The kubelet's default ``--max-pods`` (kubernetes.io/docs/reference/command-line-tools-reference/kubelet).
MAX_PODS = 110
#: A plugin DaemonSet's kind -> the labels its chart puts on the pod template (verify.checks.plugin_kind reads them).
NVIDIA_DRA, TPU_DRA, DEVICE_PLUGIN, GKE_DEVICE_PLUGIN = (
    "NVIDIA DRA kubelet plugin", "TPU DRA kubelet plugin", "NVIDIA device plugin", "GKE default device plugin")
DRA_PLUGINS = (NVIDIA_DRA, TPU_DRA)
DEVICE_PLUGINS = (DEVICE_PLUGIN, GKE_DEVICE_PLUGIN)
#: Which plugin a DaemonSet is, written on the DaemonSet itself so the observation never guesses.
PLUGIN_ANNOTATION = "rehearse.gpu-fungibility/plugin"
CLOUD_PODS = "cloud-system-pods"
#: The area of a cloud's share of the rehearsal (``rehearse/gke.py``): ``cloud_plugins()`` (the node-level plugins
#: the cloud runs by itself), ``custom_resource_definitions()`` (CRDs of resources it serves) and ``CRD_NOTE``.
AREA = "rehearse"


def object_ref(api_version: str, kind: str, name: str, namespace: str | None = None) -> dict[str, Any]:
    """A reference for the harness's delete: the contract's flat fields, and ``metadata`` as an object has it."""
    ref: dict[str, Any] = {"apiVersion": api_version, "kind": kind, "name": name,
                           "metadata": {"name": name, **({"namespace": namespace} if namespace else {})}}
    if namespace:
        ref["namespace"] = namespace
    return ref


@dataclass
class PlannedNode:
    """One node of a pool: the Node object and its ResourceSlice (None: no DRA driver publishes there)."""

    pool: str
    index: int
    node: dict[str, Any]
    resource_slices: list[dict[str, Any]]
    sim: SimNode

    @property
    def name(self) -> str:
        return self.node["metadata"]["name"]

    def objects(self) -> list[dict[str, Any]]:
        return [self.node, *self.resource_slices]

    def refs(self) -> list[dict[str, str]]:
        refs = [object_ref("v1", "Node", self.name)]
        refs += [object_ref("resource.k8s.io/v1", "ResourceSlice", s["metadata"]["name"]) for s in self.resource_slices]
        return refs


@dataclass
class Plugin:
    """A node-level plugin DaemonSet and where it came from (a Helm release, or the cloud)."""

    kind: str
    source: str
    daemonset: dict[str, Any]

    @property
    def ref(self) -> str:
        meta = self.daemonset["metadata"]
        return f"DaemonSet/{meta['namespace']}/{meta['name']}"


@dataclass
class NodeFactory:
    """Builds the Node and ResourceSlice objects of a stack's pools (the simulator's nodes, as API objects)."""

    cfg: Any
    nfd_labels_gpus: bool = False
    builder: ClusterBuilder = field(init=False)

    def __post_init__(self) -> None:
        self.builder = ClusterBuilder(self.cfg)

    def node(self, pool: str, index: int) -> PlannedNode:
        sim = self.builder.node(pool, index)
        spec = self.cfg.node_pools[pool]
        family = spec.family or "gpu"
        labels = dict(sim.labels)
        if family == "gpu" and self.nfd_labels_gpus:
            labels["feature.node.kubernetes.io/pci-10de.present"] = "true"
        room = sizing.node_room(self.cfg.cluster.cloud, sim.machine, family, spec.dra)
        capacity, allocatable = (room.capacity, room.allocatable) if room else ((0, 0), (0, 0))
        extended = {}
        if family == "gpu" and not spec.dra:  # the device plugin advertises the GPUs as an extended resource
            extended = {wiring_keys.GPU_TAINT_KEY: str(spec.accelerator.count)}
        node = {
            "apiVersion": "v1", "kind": "Node",
            "metadata": {"name": sim.name, "labels": labels},
            "spec": {"taints": [{"key": t.key, **({"value": t.value} if t.value else {}), "effect": t.effect}
                                for t in sim.taints]},
            "status": {
                "capacity": _resources(capacity, extended),
                "allocatable": _resources(allocatable, extended),
                "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady",
                                "message": "a rehearsal node: Ready without a kubelet"}],
            },
        }
        return PlannedNode(pool, index, node, self.resource_slices(pool, sim), sim)

    def resource_slices(self, pool: str, sim: SimNode) -> list[dict[str, Any]]:
        """The node's ResourceSlices: the library's complete objects where it builds them, else one of the
        simulator's devices (the same :func:`gpu_fungibility.devices.published` entries either way)."""
        spec = self.cfg.node_pools[pool]
        whole = getattr(devices, "node_resource_slices", None)
        if spec.dra and whole is not None:
            return whole(sim.name, spec.accelerator.type, spec.accelerator.count,
                         mig_profiles=self.builder.mig.get(pool), cluster=self.cfg.cluster.name,
                         dynamic_mig=spec.family == "gpu" and self.builder.dynamic_mig)
        found = resource_slice(sim)
        return [found] if found else []


def _resources(amount: tuple[int, int], extended: dict[str, str]) -> dict[str, str]:
    return {"cpu": f"{amount[0]}m", "memory": f"{amount[1]}Mi", "pods": str(MAX_PODS),
            "ephemeral-storage": "100Gi", **extended}


def resource_slice(node: SimNode) -> dict[str, Any] | None:
    """The ResourceSlice the node's DRA driver publishes (one pool per node, as both pinned drivers do)."""
    if not node.devices:
        return None
    driver = node.devices[0].driver
    return {
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
        "metadata": {"name": f"{node.name}-{driver.replace('.', '-')}"},
        "spec": {
            "driver": driver, "nodeName": node.name,
            "pool": {"name": node.name, "generation": 1, "resourceSliceCount": 1},
            "devices": [copy.deepcopy(d.entry) for d in node.devices],
        },
    }


def driver_device_classes(releases: list[Any]) -> list[dict[str, Any]]:
    """The DeviceClasses the driver charts install, with the selectors the library records for them."""
    names: list[str] = []
    for release in releases:
        names += [n for n in release.device_classes() if n not in names]
    return [{"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass",
             "metadata": {"name": name},
             "spec": {"selectors": [{"cel": {"expression": e}} for e in DRIVER_DEVICE_CLASS_SELECTORS[name]]}}
            for name in names if name in DRIVER_DEVICE_CLASS_SELECTORS]


def daemonset(namespace: str, name: str, labels: dict[str, str], kind: str, placement: dict[str, Any],
              requests: tuple[int, int], priority_class: str | None) -> dict[str, Any]:
    """A stand-in DaemonSet of pause pods: the plugin's labels, placement, requests and priority, marked as ``kind``."""
    pod_spec: dict[str, Any] = {
        "containers": [{"name": "plugin", "image": PAUSE_IMAGE,
                        "resources": {"requests": {"cpu": f"{requests[0]}m", "memory": f"{requests[1]}Mi"}}}],
        "terminationGracePeriodSeconds": 0,
        **{k: v for k, v in placement.items() if v},
    }
    if priority_class:
        pod_spec["priorityClassName"] = priority_class
    return {
        "apiVersion": "apps/v1", "kind": "DaemonSet",
        "metadata": {"namespace": namespace, "name": name, "labels": dict(labels),
                     "annotations": {PLUGIN_ANNOTATION: kind}},
        "spec": {"selector": {"matchLabels": dict(labels)},
                 "template": {"metadata": {"labels": dict(labels)}, "spec": pod_spec}},
    }


def _placement(release: Any) -> dict[str, Any]:
    found = release.plugin_placement()
    return {"nodeSelector": dict(found.node_selector), "affinity": copy.deepcopy(found.affinity),
            "tolerations": copy.deepcopy(list(found.tolerations))}


def _priority(release: Any, *path: str) -> str | None:
    value = release._get(*path)  # noqa: SLF001 - the chart model's own reader of effective values
    return str(value) if value else None


def _fullname(release: str, chart: str) -> str:
    """Helm's ``<chart>.fullname``: the release name when it contains the chart's name, else ``release-chart``."""
    return release if chart in release else f"{release}-{chart}"


#: Per chart release kind: the chart, the kubelet plugin DaemonSet's name suffix after the chart's full name, pod
#: labels beyond name and instance, where its priority class value is, the plugin, and the release's predicate
#: for running it (the charts' templates at the pinned tags; verify.checks documents the labels).
_CHART_PLUGINS = (
    ("nvidia-dra", "dra-driver-nvidia-gpu", "-kubelet-plugin", {"dra-driver-nvidia-gpu-component": "kubelet-plugin"},
     ("kubeletPlugin", "priorityClassName"), NVIDIA_DRA, "runs_kubelet_plugin"),
    ("tpu-dra", "dra-driver-google-tpu", "-kubeletplugin", {}, ("kubeletPlugin", "priorityClassName"), TPU_DRA,
     "runs_kubelet_plugin"),
    ("nvidia-device-plugin", "nvidia-device-plugin", "", {}, ("priorityClassName",), DEVICE_PLUGIN,
     "runs_device_plugin"),
)


def plugin_daemonsets(cloud: str, releases: list[Any]) -> list[Plugin]:
    """The node-level plugin DaemonSets the stack's Helm releases (and, on GKE, the cloud) run.

    Names and pod labels follow the charts' templates (verify.checks documents them); the placement is the
    chart model's effective one; requests are the room the library keeps for each plugin.
    """
    found: list[Plugin] = []
    for release in releases:
        for kind, chart, suffix, component, priority, plugin, runs in _CHART_PLUGINS:
            if release.kind != kind or not getattr(release, runs)():
                continue
            labels = {"app.kubernetes.io/name": chart, "app.kubernetes.io/instance": release.name, **component}
            found.append(Plugin(plugin, release.label, daemonset(
                release.namespace, f"{_fullname(release.name, chart)}{suffix}", labels, plugin, _placement(release),
                sizing.DAEMON_SET_ROOM[plugin], _priority(release, *priority))))
    own = getattr(cloud_part(cloud, AREA), "cloud_plugins", None)
    return found + (own() if own is not None else [])


def cloud_pods_daemonset(cloud: str) -> dict[str, Any]:
    """The cloud's own per-node pods (kube-proxy, logging, CSI, ...) as one DaemonSet on every node."""
    reserve = clouds.profile(cloud).system_pods_reserve
    labels = {"app.kubernetes.io/name": CLOUD_PODS}
    return daemonset("kube-system", CLOUD_PODS, labels, "", {"tolerations": [{"operator": "Exists"}]},
                     reserve, "system-node-critical")


def served_crds() -> list[tuple[dict[str, Any], str]]:
    """Every registered cloud's CRDs of the resources it serves, each with the cloud's note on the stand-in."""
    found = []
    for part in registered_parts(AREA):
        for crd in getattr(part, "custom_resource_definitions", list)():
            found.append((crd, getattr(part, "CRD_NOTE", "")))
    return found


def custom_resources(objects: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[str]]:
    """The CRDs for the custom resources among the plan's objects that a cloud serves (GKE's ComputeClass), and the
    clouds' notes on them."""
    used = {(str(o.get("apiVersion", "")).split("/")[0], o.get("kind")) for o in objects}
    crds, notes = [], []
    for crd, note in served_crds():
        if (crd["spec"]["group"], crd["spec"]["names"]["kind"]) in used:
            crds.append(crd)
            if note and note not in notes:
                notes.append(note)
    return crds, notes


def custom_resource_definitions(objects: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The CRDs for the custom resources among the plan's objects that a cloud serves."""
    return custom_resources(objects)[0]


#: Placeholder written for a Secret value the plan shows as ``[secret]`` (the real value is a Pulumi secret).
SECRET_PLACEHOLDER = "rehearsal-placeholder"
_B64_PLACEHOLDER = base64.b64encode(SECRET_PLACEHOLDER.encode()).decode()


def prepared(obj: dict[str, Any]) -> tuple[dict[str, Any], str | None]:
    """The object to apply, and a note when it was changed on the way (a secret's value)."""
    obj = copy.deepcopy(obj)
    note = None
    if obj.get("kind") == "Secret" and obj.get("apiVersion") == "v1":
        hidden = []
        for section, value in (("stringData", SECRET_PLACEHOLDER), ("data", _B64_PLACEHOLDER)):
            values = obj.get(section) or {}
            for key in [k for k, v in values.items() if v == "[secret]"]:
                values[key] = value
                hidden.append(key)
        if hidden:
            note = f"applied with a placeholder for {', '.join(sorted(hidden))} (a Pulumi secret in the plan)"
    return obj, note


#: The API server's answer to a privileged container when it runs with ``--allow-privileged=false``
#: (k8s.io/kubernetes pkg/apis/core/validation: ``field.Forbidden(..., "disallowed by cluster policy")``).
PRIVILEGED_REFUSAL = "securityContext.privileged: Forbidden: disallowed by cluster policy"


def refused_only_for_privileged(error: str) -> bool:
    """Whether every reason of a refusal is the API server's ``--allow-privileged=false``."""
    reasons = [r.strip() for r in error.split("[", 1)[-1].rstrip("]").split(", ")] if "[" in error else [error]
    return bool(reasons) and all(PRIVILEGED_REFUSAL in r for r in reasons)


def without_privileged(obj: dict[str, Any]) -> dict[str, Any]:
    """A copy of a pod-owning object with ``securityContext.privileged`` removed from every container."""
    obj = copy.deepcopy(obj)
    spec = ((obj.get("spec") or {}).get("template") or {}).get("spec") or {}
    for key in ("initContainers", "containers"):
        for container in spec.get(key) or []:
            (container.get("securityContext") or {}).pop("privileged", None)
    return obj


def with_replicas(deployment: dict[str, Any], replicas: int) -> dict[str, Any]:
    obj = copy.deepcopy(deployment)
    obj.setdefault("spec", {})["replicas"] = replicas
    return obj
