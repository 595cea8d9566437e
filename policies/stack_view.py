"""Read a stack's resources the way the rules need them.

The engine hands a policy each resource's properties (camelCase, as the
provider schema spells them) behind a proxy that raises on values unknown
during preview. :func:`plain` turns them into plain dicts (unknowns become
``"[unknown]"``) so that a rule never stops on an unrelated unknown value;
:mod:`policies.unknowns` says how a rule tests them. A resource whose
properties are unknown as a whole (:attr:`Res.opaque`) is left out of
:meth:`StackView.k8s`, :meth:`StackView.kubernetes` and
:attr:`StackView.releases`; :meth:`StackView.note_unknown` names such
resources to a rule's :class:`~policies.unknowns.Pending`, and
:attr:`StackView.unknown_releases` holds the Helm releases whose chart is not
known yet, so no rule reads them as absent.

:class:`Pool` is one accelerator node pool (GKE ``NodePool`` / EKS
``NodeGroup``) with the labels and taints its nodes will carry: the ones the
stack sets plus the ones the cloud adds (GKE labels GPU nodes with the
accelerator and taints them ``nvidia.com/gpu=present:NoSchedule``; TPU nodes
likewise with ``google.com/tpu``; EKS labels every node with its node group and
capacity type; AKS labels every node with its agent pool, GPU nodes
``kubernetes.azure.com/accelerator=nvidia``, and labels and taints Spot nodes
``kubernetes.azure.com/scalesetpriority=spot``).
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from gpu_fungibility.node_selection import NodeTaint as Taint
from gpu_fungibility.node_selection import taint_from_api
from pulumi_policy.proxy import (
    UNKNOWN_OBJECT_VALUE,
    UNKNOWN_STRING_VALUE,
    UnknownValueError,
    _DictProxy,
    _is_unknown,
    _ListProxy,
)

from . import facts
from .charts import DriverRelease, chart_kind, coalesce, defaults_for
from .runtime import shared
from .unknowns import (
    SENTINELS,
    UNKNOWN,
    Pending,
    dig_known,
    has_unknown,
    is_unknown,
    outputs_unknown,
    unknown_paths,
)

GKE_CLUSTER = "gcp:container/cluster:Cluster"
GKE_NODE_POOL = "gcp:container/nodePool:NodePool"
EKS_CLUSTER = "aws:eks/cluster:Cluster"
EKS_NODE_GROUP = "aws:eks/nodeGroup:NodeGroup"
AKS_CLUSTER = "azure-native:containerservice:ManagedCluster"
AKS_AGENT_POOL = "azure-native:containerservice:AgentPool"
HELM_RELEASE = "kubernetes:helm.sh/v3:Release"
K8S_PREFIX = "kubernetes:"

WORKLOAD_KINDS = ("Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "Job", "CronJob", "Pod")

Family = Literal["gpu", "tpu", "cpu"]


def plain(value: Any) -> Any:
    """Properties as plain Python values; preview-unknown values become ``"[unknown]"``.

    Decoded properties are dicts, lists, strings, floats, booleans and None (or proxies over them), so those
    are told apart by their exact type first; anything else takes the general path.
    """
    kind = type(value)
    if kind is dict:
        return {k: plain(v) for k, v in value.items()}
    if kind is list:
        return [plain(v) for v in value]
    if kind is str:
        return UNKNOWN if value in _UNKNOWN_VALUES else value
    if kind is float:
        return int(value) if value.is_integer() else value
    if kind is bool or value is None:
        return value
    if isinstance(value, (_DictProxy, _ListProxy)):
        return plain(value["__target"])
    if isinstance(value, Mapping):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if _is_unknown(value):
        return UNKNOWN
    return value


#: The runtime's sentinels for values unknown during a preview (what ``_is_unknown`` tests).
_UNKNOWN_VALUES = SENTINELS


def require_known(res: Res, *path: str) -> None:
    """Raise the policy SDK's UnknownValueError when a value a placement decision needs is unknown.

    The engine then reports "can't run policy ... during preview" (advisory) instead of a guess.
    """
    node: Any = res.props
    for depth, key in enumerate(path):
        if not isinstance(node, Mapping) or key not in node:
            return
        node = node[key]
        if node == UNKNOWN:
            raise UnknownValueError(UNKNOWN_OBJECT_VALUE, [res.name, *path[:depth + 1]])
    inner = next(unknown_paths(node), None)  # a label's value, one taint's key: as unknown as the whole
    if inner is not None:
        raise UnknownValueError(UNKNOWN_STRING_VALUE, [res.name, *path, *inner.replace("[", ".").replace("]", "")
                                                       .split(".")])


def dig(node: Any, *path: str | int, default: Any = None) -> Any:
    """``node[path[0]][path[1]]...`` or ``default`` when any step is missing."""
    for key in path:
        if isinstance(key, int):
            if not isinstance(node, list) or key >= len(node):
                return default
        elif not isinstance(node, Mapping) or key not in node:
            return default
        node = node[key]
    return default if node is None else node


@dataclass(frozen=True)
class Res:
    """One resource: type, URN, name, plain properties, and the URNs each property was computed from."""

    type: str
    urn: str
    name: str
    props: dict[str, Any]
    property_dependencies: dict[str, tuple[str, ...]] = field(default_factory=dict, compare=False)

    @property
    def kind(self) -> str:
        kind = self.props.get("kind")
        if is_unknown(kind):  # a Kubernetes object's kind is its type's
            return self.type.rsplit(":", 1)[-1]
        return str(kind or "")

    @property
    def k8s_name(self) -> str:
        """``metadata.name`` (:data:`UNKNOWN` while the preview cannot know it; the resource's name when unset)."""
        known_, name = dig_known(self.props, "metadata", "name")
        return str(name or self.name) if known_ else UNKNOWN

    @property
    def k8s_namespace(self) -> str:
        known_, namespace = dig_known(self.props, "metadata", "namespace")
        return str(namespace or "default") if known_ else UNKNOWN

    @property
    def opaque(self) -> bool:
        """Every property unknown: the engine's empty outputs of a resource whose provider is not configured."""
        return outputs_unknown(self.props, self.type)

    @property
    def title(self) -> str:
        kind = self.kind or self.type.rsplit(":", 1)[-1]
        return f"{kind} {self.name if self.opaque else self.k8s_name}"


def res_of(resource: Any) -> Res:
    """A :class:`Res` from a ``PolicyResource`` or ``ResourceValidationArgs``."""
    dependencies = getattr(resource, "property_dependencies", None) or {}
    return Res(resource.resource_type, resource.urn, resource.name, shared(plain, resource.props),
               {str(k): tuple(str(getattr(d, "urn", d)) for d in v or []) for k, v in dependencies.items()})


# ---- pools ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Pool:
    urn: str
    resource_name: str
    pool_name: str  # the node pool / node group name the cloud knows
    cloud: Literal["gke", "eks", "aks"]
    family: Family
    labels: dict[str, str]  # what the stack sets
    node_labels: dict[str, str]  # every label a node ends up with
    taints: tuple[Taint, ...]  # every taint a node ends up with
    spot: bool
    min_size: int | None
    accelerator_type: str | None
    accelerator_count: int
    gpu_driver_version: str | None = None  # GKE gpuDriverInstallationConfig.gpuDriverVersion
    ami_type: str | None = None  # EKS; on AKS, Aks.MANAGED_GPU_STACK for a pool with AKS's managed GPU stack
    resource_labels: dict[str, str] = field(default_factory=dict)  # GKE resourceLabels / EKS tags
    machine_types: tuple[str, ...] = ()  # GKE nodeConfig.machineType / EKS instanceTypes / AKS vmSize

    @property
    def title(self) -> str:
        return f"pool {self.pool_name}"

    @property
    def nvidia_dra_labelled(self) -> bool:
        """Labelled for the NVIDIA DRA driver (seed 000 on GKE, seed 004 on EKS)."""
        return self.family == "gpu" and (
            self.labels.get(facts.GPU_DRA) == "true" or self.labels.get(facts.GKE_GPU_DRA_DRIVER) == "true")

    @property
    def tpu_dra_labelled(self) -> bool:
        return self.family == "tpu" and self.labels.get(facts.GKE_TPU_DRA_DRIVER) == "true"


def _str_map(raw: Any) -> dict[str, str]:
    if not isinstance(raw, Mapping):
        return {}
    return {str(k): str(v).lower() if isinstance(v, bool) else str(v) for k, v in raw.items()}


def _mapping(raw: Any) -> Mapping[str, Any]:
    """An object, or an empty one for an absent or unknown value (a size read from it is then None: not known)."""
    return raw if isinstance(raw, Mapping) else {}


def _int_or_none(raw: Any) -> int | None:
    try:
        return int(raw)
    except (TypeError, ValueError):
        return None


def gke_pool(res: Res, nfd_labels_gpus: bool = False) -> Pool:
    for field_ in ("labels", "taints", "guestAccelerators", "machineType", "spot", "preemptible"):
        require_known(res, "nodeConfig", field_)
    require_known(res, "name")
    node_config = res.props.get("nodeConfig") or {}
    machine_type = str(node_config.get("machineType") or "")
    accelerators = [a for a in (node_config.get("guestAccelerators") or []) if isinstance(a, Mapping)]
    shape = facts.gke_machine_shape(machine_type)
    accelerator_type = str(accelerators[0].get("type")) if accelerators else (shape.accelerator if shape else None)
    count = _int_or_none(accelerators[0].get("count")) if accelerators else (shape.count if shape else 0)
    family: Family = "cpu"
    if (accelerator_type or "").startswith("tpu-") or machine_type.startswith(facts.TPU_MACHINE_PREFIXES):
        family = "tpu"
    elif accelerator_type:
        family = "gpu"
    pool_name = str(res.props.get("name") or res.name)
    spot = bool(node_config.get("spot")) or bool(node_config.get("preemptible"))
    labels = _str_map(node_config.get("labels"))
    added: dict[str, str] = {facts.GKE_NODEPOOL: pool_name}
    if spot:
        added[facts.GKE_SPOT] = "true"
    taints = [taint_from_api(t) for t in node_config.get("taints") or [] if isinstance(t, Mapping)]
    if family == "gpu":
        added[facts.GKE_ACCELERATOR] = str(accelerator_type)
        taints.append(Taint(facts.GPU_TAINT_KEY, "present", "NoSchedule"))
        if nfd_labels_gpus:
            added[facts.NFD_NVIDIA_PCI] = "true"
    elif family == "tpu":
        added[facts.GKE_TPU_ACCELERATOR] = str(accelerator_type or "")
        if shape and shape.topology:
            added[facts.GKE_TPU_TOPOLOGY] = shape.topology
        taints.append(Taint(facts.TPU_TAINT_KEY, "present", "NoSchedule"))
    driver = dig(accelerators, 0, "gpuDriverInstallationConfig", "gpuDriverVersion") if accelerators else None
    autoscaling = _mapping(res.props.get("autoscaling"))
    min_size = _int_or_none(autoscaling.get("minNodeCount", autoscaling.get("totalMinNodeCount")))
    return Pool(
        urn=res.urn, resource_name=res.name, pool_name=pool_name, cloud="gke", family=family,
        labels=labels, node_labels={**added, **labels}, taints=tuple(taints), spot=spot, min_size=min_size,
        accelerator_type=accelerator_type, accelerator_count=count or 0,
        gpu_driver_version=str(driver) if driver else None,
        resource_labels=_str_map(node_config.get("resourceLabels")),
        machine_types=(machine_type,) if machine_type else (),
    )


def eks_pool(res: Res, nfd_labels_gpus: bool = False) -> Pool:
    for field_ in ("labels", "taints", "amiType", "instanceTypes", "nodeGroupName", "capacityType"):
        require_known(res, field_)
    props = res.props
    ami_type = str(props.get("amiType") or "")
    instance_types = [str(t) for t in props.get("instanceTypes") or []]
    shape = next((s for s in map(facts.eks_instance_shape, instance_types) if s), None)
    family: Family = "gpu" if (shape or "NVIDIA" in ami_type.upper()) else "cpu"
    pool_name = str(props.get("nodeGroupName") or res.name)
    spot = str(props.get("capacityType") or "ON_DEMAND").upper() == "SPOT"
    labels = _str_map(props.get("labels"))
    added = {facts.EKS_NODEGROUP: pool_name, facts.EKS_CAPACITY_TYPE: "SPOT" if spot else "ON_DEMAND"}
    if family == "gpu" and nfd_labels_gpus:
        added[facts.NFD_NVIDIA_PCI] = "true"
    taints = tuple(taint_from_api(t) for t in props.get("taints") or [] if isinstance(t, Mapping))
    scaling = _mapping(props.get("scalingConfig"))
    return Pool(
        urn=res.urn, resource_name=res.name, pool_name=pool_name, cloud="eks", family=family,
        labels=labels, node_labels={**added, **labels}, taints=taints, spot=spot,
        min_size=_int_or_none(scaling.get("minSize")),
        accelerator_type=shape.accelerator if shape else None, accelerator_count=shape.count if shape else 0,
        ami_type=ami_type or None, resource_labels=_str_map(props.get("tags")), machine_types=tuple(instance_types),
    )


def _aks_taint(text: str) -> Taint:
    """``key=value:Effect`` (AKS's spelling) as a taint."""
    head, _, effect = text.partition(":")
    key, _, value = head.partition("=")
    return Taint(key, value, effect or "NoSchedule")


def aks_pool(res: Res, nfd_labels_gpus: bool = False) -> Pool:
    for field_ in ("nodeLabels", "nodeTaints", "vmSize", "agentPoolName", "scaleSetPriority"):
        require_known(res, field_)
    props = res.props
    vm_size = str(props.get("vmSize") or "")
    shape = facts.aks_vm_size_shape(vm_size)
    family: Family = "gpu" if shape else "cpu"
    pool_name = str(props.get("agentPoolName") or res.name)
    spot = str(props.get("scaleSetPriority") or "Regular") == "Spot"
    labels = _str_map(props.get("nodeLabels"))
    taints = [_aks_taint(str(t)) for t in props.get("nodeTaints") or [] if isinstance(t, str)]
    added: dict[str, str] = {facts.AKS_AGENTPOOL: pool_name}
    if spot:
        added[facts.AKS_SCALESET_PRIORITY] = "spot"
        if Taint(facts.AKS_SCALESET_PRIORITY, "spot", "NoSchedule") not in taints:  # the pool may carry it already
            taints.append(Taint(facts.AKS_SCALESET_PRIORITY, "spot", "NoSchedule"))
    if family == "gpu":
        added[facts.AKS_ACCELERATOR] = "nvidia"
        if nfd_labels_gpus:
            added[facts.NFD_NVIDIA_PCI] = "true"
    managed = (str(dig(props, "gpuProfile", "nvidia", "managementMode", default="")) == "Managed"
               or str(_str_map(props.get("tags")).get("EnableManagedGPUExperience", "")).lower() == "true")
    driver = dig(props, "gpuProfile", "driver")
    return Pool(
        urn=res.urn, resource_name=res.name, pool_name=pool_name, cloud="aks", family=family,
        labels=labels, node_labels={**added, **labels}, taints=tuple(taints), spot=spot,
        min_size=_int_or_none(props.get("minCount")),
        accelerator_type=shape.accelerator if shape else None, accelerator_count=shape.count if shape else 0,
        gpu_driver_version=str(driver) if driver else None,
        ami_type=facts.AKS_MANAGED_GPU_STACK if managed else None, resource_labels=_str_map(props.get("tags")),
        machine_types=(vm_size,) if vm_size else (),
    )


def driver_release(res: Res) -> DriverRelease:
    chart = str(res.props.get("chart") or "")
    kind = chart_kind(chart)
    if kind != "other":
        for path in (("chart",), ("values",), ("values", "kubeletPlugin"), ("values", "kubeletPlugin", "affinity"),
                     ("values", "kubeletPlugin", "tolerations"), ("values", "kubeletPlugin", "nodeSelector"),
                     ("values", "affinity"), ("values", "tolerations"), ("values", "nodeSelector")):
            require_known(res, *path)
    values = res.props.get("values") if isinstance(res.props.get("values"), Mapping) else {}
    return DriverRelease(
        urn=res.urn, name=str(res.props.get("name") or res.name), kind=kind, chart=chart,
        version=str(res.props.get("version") or ""), namespace=str(res.props.get("namespace") or "default"),
        values=coalesce(defaults_for(kind), values),
    )


# ---- the whole stack -------------------------------------------------------------------


class StackView:
    """Typed access to the resources of one stack.

    Resources are indexed by type once; a resource's properties are made plain (:func:`plain`) the first
    time a rule asks for its type, so types no rule reads cost nothing, and every lookup a rule repeats
    per workload or pool (a type, a kind, a named claim, the cloud) is a dictionary access: a rule's time
    grows with the stack's size, not with its square.
    """

    def __init__(self, resources: Iterable[Res]):
        self._init([(r.type, r) for r in resources])

    @classmethod
    def from_policy_resources(cls, resources: Iterable[Any]) -> StackView:
        """The view of a stack policy's resources; within one analyzer call, one view per list (the runtime
        hands every stack policy the same list, see runtime.py), so the stack is indexed and made plain once."""
        return shared(cls._of_policy_resources, resources)

    @classmethod
    def _of_policy_resources(cls, resources: Iterable[Any]) -> StackView:
        view = cls.__new__(cls)
        view._init([(r.resource_type, r) for r in resources])
        return view

    def _init(self, typed: list[tuple[str, Any]]) -> None:
        self._raw: dict[str, list[tuple[int, Any]]] = {}
        for index, (type_, item) in enumerate(typed):
            self._raw.setdefault(type_, []).append((index, item))
        self._plain: dict[str, list[tuple[int, Res]]] = {}
        self._kinds: dict[str, list[Res]] = {}
        self._named: dict[tuple[str, str, str], list[Res]] = {}
        self._named_kinds: set[str] = set()
        helm = self.of_type(HELM_RELEASE)
        #: Helm releases whose chart is unknown (every property, or the chart reference), and driver releases
        #: with an unknown value: which driver they install, or where its plugins run, is not known yet.
        self.unknown_releases = [r for r in helm if r.opaque or is_unknown(r.props.get("chart")) or (
            chart_kind(str(r.props.get("chart") or "")) != "other" and has_unknown(r.props.get("values")))]
        unknown = {r.urn for r in self.unknown_releases}
        self.releases = [self._resolved(driver_release(r), r) for r in helm if r.urn not in unknown]
        nfd = any(r.labels_gpu_nodes_with_nfd() for r in self.releases)
        self.pools = [gke_pool(r, nfd) for r in self.of_type(GKE_NODE_POOL)] + [
            eks_pool(r, nfd) for r in self.of_type(EKS_NODE_GROUP)] + [
            aks_pool(r, nfd) for r in self.of_type(AKS_AGENT_POOL)]

    def _indexed(self, type_: str) -> list[tuple[int, Res]]:
        found = self._plain.get(type_)
        if found is None:
            found = [(i, r if isinstance(r, Res) else res_of(r)) for i, r in self._raw.get(type_, [])]
            self._plain[type_] = found
        return found

    def _merged(self, types: Iterable[str]) -> list[Res]:
        """The resources of several types, in stack order."""
        return [r for _, r in sorted((pair for t in types for pair in self._indexed(t)), key=lambda pair: pair[0])]

    @property
    def resources(self) -> list[Res]:
        """Every resource, in stack order (makes every resource plain: rules use :meth:`of_type` or :meth:`k8s`)."""
        return self._merged(list(self._raw))

    def namespace_of(self, res: Res, *path: str) -> str:
        """The namespace at ``path`` of ``res`` (default ``metadata.namespace``; a release's ``namespace``), known
        from the Namespace it was taken from when the preview cannot know the value itself.

        A value computed from one Namespace resource (the property's dependencies name just that one) is that
        Namespace's name, and a Namespace is called what its ``metadata.name`` says (Kubernetes never renames an
        object; Pulumi makes up a name only when none is given): so the name its known inputs carry is the value,
        before the Namespace exists. Otherwise :data:`UNKNOWN` stays."""
        path = path or ("metadata", "namespace")
        known_, value = dig_known(res.props, *path)
        if known_:
            return str(value or "default")
        sources = [r for urn in res.property_dependencies.get(path[0], ()) for r in self._by_urn(urn)]
        namespaces = [r for r in sources if r.type.endswith(":Namespace") and r.type.startswith(K8S_PREFIX)]
        if len(namespaces) == 1 and len(sources) == 1:
            name = dig(namespaces[0].props, "metadata", "name")
            if isinstance(name, str) and name and not is_unknown(name):
                return name
        return UNKNOWN

    def _by_urn(self, urn: str) -> list[Res]:
        if not hasattr(self, "_urns"):
            self._urns = {r.urn: r for r in self.resources}
        found = self._urns.get(urn)
        return [found] if found is not None else []

    def _resolved(self, release: DriverRelease, res: Res) -> DriverRelease:
        if not is_unknown(release.namespace):
            return release
        return dataclasses.replace(release, namespace=self.namespace_of(res, "namespace"))

    def types(self) -> list[str]:
        """Every resource type of the stack."""
        return list(self._raw)

    def of_type(self, type_: str) -> list[Res]:
        return [r for _, r in self._indexed(type_)]

    def kubernetes(self) -> list[Res]:
        """Every Kubernetes object (any kind, Helm releases and YAML groups included) whose properties are known,
        in stack order."""
        return [r for r in self._merged([t for t in self._raw if t.startswith(K8S_PREFIX)]) if not r.opaque]

    def _of_kind(self, kind: str) -> list[Res]:
        if kind not in self._kinds:
            self._kinds[kind] = self._merged([t for t in self._raw if t.startswith(K8S_PREFIX)
                                              and t.endswith(f":{kind}") and not t.startswith("kubernetes:helm")])
        return self._kinds[kind]

    def k8s(self, kind: str) -> list[Res]:
        """Kubernetes objects of a kind (any API version), e.g. ``"Deployment"``, whose properties are known."""
        return [r for r in self._of_kind(kind) if not r.opaque]

    def unknown_of(self, *kinds: str) -> list[Res]:
        """The resources of these Kubernetes kinds (``"Deployment"``) or types (``"kubernetes:helm.sh/v3:Release"``)
        whose properties are unknown as a whole."""
        found: list[Res] = []
        for kind in kinds:
            if kind == HELM_RELEASE:
                found += self.unknown_releases
            else:
                found += [r for r in (self.of_type(kind) if ":" in kind else self._of_kind(kind)) if r.opaque]
        return found

    def note_unknown(self, pending: Pending, *kinds: str) -> bool:
        """Name to ``pending`` every resource of these kinds or types whose properties (or chart) are unknown;
        whether there was one. A rule whose verdict such a resource could change calls it."""
        found = self.unknown_of(*kinds)
        unnamed = [r for kind in kinds if ":" not in kind for r in self.k8s(kind)
                   if is_unknown(r.k8s_name) or is_unknown(self.namespace_of(r))]
        for res in unnamed:
            pending.add("its name or namespace", f"{res.title} ({res.urn})")
        for res in found:
            if res.opaque:
                pending.add_outputs(res.title, res.urn)
            elif is_unknown(res.props.get("chart")):
                pending.add("the chart (which driver it installs, and where)", f"{res.title} ({res.urn})")
            else:
                paths = [f"values.{p}" if p != "." else "values" for p in unknown_paths(res.props.get("values"))]
                pending.add(f"{', '.join(paths)} (where its plugins run)", f"{res.title} ({res.urn})")
        return bool(found or unnamed)

    def k8s_named(self, kind: str, namespace: str, name: str) -> list[Res]:
        """The objects of a kind with this namespace and name (claims a pod spec refers to)."""
        if kind not in self._named_kinds:
            self._named_kinds.add(kind)
            for res in self.k8s(kind):
                key = (kind, self.namespace_of(res), res.k8s_name)
                if not (is_unknown(key[1]) or is_unknown(key[2])):  # see note_unknown
                    self._named.setdefault(key, []).append(res)
        return self._named.get((kind, namespace, name), [])

    @functools.cached_property
    def cloud(self) -> Literal["gke", "eks", "aks"] | None:
        if self._raw.get(GKE_CLUSTER) or self._raw.get(GKE_NODE_POOL):
            return "gke"
        if self._raw.get(EKS_CLUSTER) or self._raw.get(EKS_NODE_GROUP):
            return "eks"
        if self._raw.get(AKS_CLUSTER) or self._raw.get(AKS_AGENT_POOL):
            return "aks"
        return None

    def releases_of(self, kind: str) -> list[DriverRelease]:
        return [r for r in self.releases if r.kind == kind]

    def accelerator_pools(self) -> list[Pool]:
        return [p for p in self.pools if p.family in ("gpu", "tpu")]
