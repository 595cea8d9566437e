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

:class:`Pool` is one node pool of the stack's cloud (its profile's
``pool_type``) with the labels and taints its nodes will carry: the ones the
stack sets plus the ones the cloud adds, as the cloud's module of the pack
reads them (``policies/gke.py``, ``eks.py``, ``aks.py``; see
:mod:`~policies.cloud_parts`).
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from gpu_fungibility import clouds
from gpu_fungibility.node_selection import NodeTaint as Taint
from pulumi_policy.proxy import (
    UNKNOWN_OBJECT_VALUE,
    UNKNOWN_STRING_VALUE,
    UnknownValueError,
    _DictProxy,
    _is_unknown,
    _ListProxy,
)

from . import cloud_parts, facts
from .call_cache import shared
from .charts import DriverRelease, chart_kind, coalesce, defaults_for
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
    cloud: str  # the registered cloud's name
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


def str_map(raw: Any) -> dict[str, str]:
    if not isinstance(raw, Mapping):
        return {}
    return {str(k): str(v).lower() if isinstance(v, bool) else str(v) for k, v in raw.items()}


def object_or_empty(raw: Any) -> Mapping[str, Any]:
    """An object, or an empty one for an absent or unknown value (a size read from it is then None: not known)."""
    return raw if isinstance(raw, Mapping) else {}


def int_or_none(raw: Any) -> int | None:
    try:
        return int(raw)
    except (TypeError, ValueError):
        return None


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
        self.pools = [cloud_parts.part(name).pool(r, nfd) for name in clouds.names()
                      for r in self.of_type(clouds.profile(name).pool_type)]

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
    def cloud(self) -> str | None:
        """The first registered cloud with a cluster or a node pool in the stack."""
        for name in clouds.names():
            found = clouds.profile(name)
            if self._raw.get(found.cluster_type) or self._raw.get(found.pool_type):
                return name
        return None

    def releases_of(self, kind: str) -> list[DriverRelease]:
        return [r for r in self.releases if r.kind == kind]

    def accelerator_pools(self) -> list[Pool]:
        return [p for p in self.pools if p.family in ("gpu", "tpu")]
