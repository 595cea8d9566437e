"""The cluster as ``make verify`` sees it: a typed, read-only view built from Kubernetes objects.

The objects come from a snapshot file (the JSON ``List`` that ``kubectl get nodes,pods,daemonsets,
deployments,resourceslices,deviceclasses,resourceclaims,resourceclaimtemplates,events -A -o json``
prints) or from the live API (:mod:`verify.live`); both end in :func:`build_view`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gpu_fungibility import sizing

import input_files

#: A snapshot larger than this is refused: the objects of a cluster of a few hundred nodes fit well under it.

KINDS = ("Node", "Pod", "DaemonSet", "Deployment", "ResourceSlice", "DeviceClass", "ResourceClaim",
         "ResourceClaimTemplate", "Event")


class ReadError(Exception):
    """The cluster (or the snapshot) cannot be read; the message says why. Exit code 2."""


@dataclass(frozen=True)
class Node:
    name: str
    labels: Mapping[str, str]
    allocatable: tuple[int, int]  # (millicores, MiB)
    capacity: Mapping[str, str]

    @property
    def instance_type(self) -> str:
        return self.labels.get("node.kubernetes.io/instance-type", "")


@dataclass(frozen=True)
class Pod:
    namespace: str
    name: str
    node: str  # "" while unscheduled
    phase: str
    labels: Mapping[str, str]
    owner: tuple[str, str]  # (kind, name) of the controller, or ("", "")
    requests: tuple[int, int]  # what the scheduler counts: (millicores, MiB)
    claims: Mapping[str, str]  # pod claim name -> ResourceClaim name (status.resourceClaimStatuses)
    template_claims: Mapping[str, str]  # pod claim name -> ResourceClaimTemplate name (spec.resourceClaims)

    @property
    def ref(self) -> str:
        return f"{self.namespace}/{self.name}"

    @property
    def active(self) -> bool:
        return self.phase not in ("Succeeded", "Failed")


@dataclass(frozen=True)
class DaemonSet:
    namespace: str
    name: str
    labels: Mapping[str, str]
    requests: tuple[int, int]  # one pod's requests, from the pod template


@dataclass(frozen=True)
class Deployment:
    namespace: str
    name: str
    labels: Mapping[str, str]
    replicas: int
    template: Mapping[str, Any]  # spec.template


@dataclass(frozen=True)
class Slice:
    name: str
    node: str
    driver: str
    devices: tuple[Mapping[str, Any], ...]  # spec.devices[] entries


@dataclass(frozen=True)
class Claim:
    namespace: str
    name: str
    results: tuple[Mapping[str, Any], ...]  # status.allocation.devices.results[]


@dataclass(frozen=True)
class Event:
    namespace: str
    kind: str  # involvedObject.kind
    name: str  # involvedObject.name
    reason: str
    message: str
    order: str  # lastTimestamp / eventTime / creationTimestamp, for "latest"


@dataclass
class View:
    nodes: list[Node] = field(default_factory=list)
    pods: list[Pod] = field(default_factory=list)
    daemonsets: list[DaemonSet] = field(default_factory=list)
    deployments: list[Deployment] = field(default_factory=list)
    slices: list[Slice] = field(default_factory=list)
    device_classes: dict[str, list[str]] = field(default_factory=dict)  # name -> CEL selectors
    claims: dict[tuple[str, str], Claim] = field(default_factory=dict)
    claim_templates: dict[tuple[str, str], Mapping[str, Any]] = field(default_factory=dict)  # -> spec.spec
    events: list[Event] = field(default_factory=list)
    #: Kinds that could not be read (a partial answer), with why; their checks say "not checked".
    unread: dict[str, str] = field(default_factory=dict)
    source: str = ""

    def pods_on(self, node: str) -> list[Pod]:
        return [p for p in self.pods if p.node == node and p.active]

    def slices_of(self, node: str) -> list[Slice]:
        return [s for s in self.slices if s.node == node]


def read_snapshot(path: Path, limits: input_files.Limits = input_files.SNAPSHOT_JSON) -> View:
    """Read a snapshot file within ``limits`` (size, nesting depth, UTF-8; the same reader as every other
    input file); raises :class:`ReadError` naming the file and the problem."""
    try:
        data = input_files.read_json(path, limits)
    except input_files.InputFileError as exc:
        raise ReadError(f"--snapshot {exc}") from None
    if not isinstance(data, dict) or not isinstance(data.get("items"), list):
        raise ReadError(f"--snapshot {path}: expected the JSON List `kubectl get ... -o json` prints "
                        "(an object with \"items\")")
    try:
        return build_view(data["items"], source=f"snapshot {path}")
    except RecursionError:
        raise ReadError(f"--snapshot {path}: objects nested too deeply") from None


def build_view(items: Iterable[Any], *, source: str, unread: Mapping[str, str] | None = None) -> View:
    """Sort objects by kind into a :class:`View`; objects of other kinds are ignored, malformed ones refused."""
    view = View(unread=dict(unread or {}), source=source)
    for index, item in enumerate(items):
        if not isinstance(item, dict):
            raise ReadError(f"{source}: items[{index}] is not an object")
        kind = item.get("kind")
        if kind not in KINDS:
            continue
        try:
            _add(view, kind, item)
        except (AttributeError, TypeError, ValueError, KeyError) as exc:
            name = _meta(item).get("name", "?") if isinstance(item.get("metadata"), dict) else "?"
            raise ReadError(f"{source}: items[{index}] ({kind} {name}) is malformed: {exc}") from None
    return view


def _meta(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    return obj.get("metadata") or {}


def _labels(obj: Mapping[str, Any]) -> dict[str, str]:
    return dict(_meta(obj).get("labels") or {})


def _cpu_memory(resources: Mapping[str, Any]) -> tuple[int, int]:
    cpu, memory = resources.get("cpu"), resources.get("memory")
    return (sizing.parse_cpu(str(cpu)) if cpu not in (None, "") else 0,
            sizing.parse_memory(str(memory)) if memory not in (None, "") else 0)


def pod_requests(spec: Mapping[str, Any]) -> tuple[int, int]:
    """The scheduler's effective requests: the containers' sum, or the largest init container if larger."""
    containers = [_cpu_memory((c.get("resources") or {}).get("requests") or {}) for c in spec.get("containers") or []]
    inits = [_cpu_memory((c.get("resources") or {}).get("requests") or {}) for c in spec.get("initContainers") or []]
    cpu = sum(c[0] for c in containers)
    memory = sum(c[1] for c in containers)
    return max([cpu, *(i[0] for i in inits)]), max([memory, *(i[1] for i in inits)])


def _add(view: View, kind: str, item: Mapping[str, Any]) -> None:
    meta = _meta(item)
    name, namespace = str(meta.get("name", "")), str(meta.get("namespace", ""))
    spec, status = item.get("spec") or {}, item.get("status") or {}
    if kind == "Node":
        view.nodes.append(Node(name, _labels(item), _cpu_memory(status.get("allocatable") or {}),
                               dict(status.get("capacity") or {})))
    elif kind == "Pod":
        owners = [o for o in meta.get("ownerReferences") or [] if o.get("controller")]
        owner = (str(owners[0].get("kind", "")), str(owners[0].get("name", ""))) if owners else ("", "")
        claims = {str(c.get("name")): str(c.get("resourceClaimName", "")) for c in status.get("resourceClaimStatuses") or []}
        templates = {str(c.get("name")): str(c.get("resourceClaimTemplateName", ""))
                     for c in spec.get("resourceClaims") or [] if c.get("resourceClaimTemplateName")}
        view.pods.append(Pod(namespace, name, str(spec.get("nodeName") or ""), str(status.get("phase", "")),
                             _labels(item), owner, pod_requests(spec), claims, templates))
    elif kind == "DaemonSet":
        template_spec = (spec.get("template") or {}).get("spec") or {}
        view.daemonsets.append(DaemonSet(namespace, name, _labels(item), pod_requests(template_spec)))
    elif kind == "Deployment":
        view.deployments.append(Deployment(namespace, name, _labels(item), int(spec.get("replicas", 1)),
                                           spec.get("template") or {}))
    elif kind == "ResourceSlice":
        view.slices.append(Slice(name, str(spec.get("nodeName") or ""), str(spec.get("driver", "")),
                                 tuple(spec.get("devices") or ())))
    elif kind == "DeviceClass":
        view.device_classes[name] = [str((s.get("cel") or {}).get("expression", ""))
                                     for s in spec.get("selectors") or [] if s.get("cel")]
    elif kind == "ResourceClaim":
        results = ((status.get("allocation") or {}).get("devices") or {}).get("results") or []
        view.claims[(namespace, name)] = Claim(namespace, name, tuple(results))
    elif kind == "ResourceClaimTemplate":
        view.claim_templates[(namespace, name)] = (spec.get("spec") or {})
    elif kind == "Event":
        involved = item.get("involvedObject") or item.get("regarding") or {}
        # A repeated event (events.k8s.io/v1, as the scheduler records them) keeps its first time in eventTime
        # and its newest in series.lastObservedTime; core/v1 ones in lastTimestamp.
        series = item.get("series") if isinstance(item.get("series"), dict) else {}
        order = str(series.get("lastObservedTime") or item.get("lastTimestamp") or item.get("eventTime")
                    or meta.get("creationTimestamp") or "")
        view.events.append(Event(namespace, str(involved.get("kind", "")), str(involved.get("name", "")),
                                 str(item.get("reason", "")), str(item.get("message") or item.get("note") or ""),
                                 order))
