"""The cluster as ``make verify`` sees it: a typed, read-only view built from Kubernetes objects.

The objects come from a snapshot file (the JSON ``List`` that ``kubectl get nodes,pods,daemonsets,
deployments,resourceslices,deviceclasses,resourceclaims,resourceclaimtemplates,events -A -o json``
prints) or from the live API (:mod:`verify.live`); both end in :func:`build_view`.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from fractions import Fraction
from pathlib import Path
from typing import Any

from gpu_fungibility.pod_requests import Requests, combine

import input_files

#: A snapshot larger than this is refused: the objects of a cluster of a few hundred nodes fit well under it.

KINDS = ("Node", "Pod", "DaemonSet", "Deployment", "ResourceSlice", "DeviceClass", "ResourceClaim",
         "ResourceClaimTemplate", "Event")


class ReadError(Exception):
    """The cluster (or the snapshot) cannot be read; the message says why. Exit code 2."""


class Malformed(ValueError):
    """One field of one object breaks the API's own rules; ``field`` is its path in the object."""

    def __init__(self, field: str, problem: str):
        self.field, self.problem = field, problem
        super().__init__(f"{field}: {problem}")


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
    order: datetime | None  # series.lastObservedTime / lastTimestamp / eventTime / creationTimestamp


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
        """The node's active pods (indexed once: checks over 10,000 nodes never scan every pod per node)."""
        return self._index("_pods_by_node", lambda: [(p.node, p) for p in self.pods if p.active]).get(node, [])

    def slices_of(self, node: str) -> list[Slice]:
        return self._index("_slices_by_node", lambda: [(s.node, s) for s in self.slices]).get(node, [])

    def events_of(self, namespace: str, kind: str, name: str) -> list[Event]:
        return self._index("_events_by_object", lambda: [((e.namespace, e.kind, e.name), e)
                                                          for e in self.events]).get((namespace, kind, name), [])

    def _index(self, attribute: str, pairs: Any) -> dict[Any, list[Any]]:
        found = self.__dict__.get(attribute)
        if found is None:
            found = {}
            for key, value in pairs():
                found.setdefault(key, []).append(value)
            self.__dict__[attribute] = found
        return found


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
    """Sort objects by kind into a :class:`View`; objects of other kinds are ignored, malformed ones refused
    naming the object and the field (the API server's own limits: label syntax, quantities, 128 devices per
    ResourceSlice, RFC 3339 times), and an object listed twice refused naming both places."""
    view = View(unread=dict(unread or {}), source=source)
    seen: dict[tuple[str, str, str], int] = {}
    for index, item in enumerate(items):
        if not isinstance(item, dict):
            raise ReadError(f"{source}: items[{index}] is not an object")
        kind = item.get("kind")
        if kind not in KINDS:
            continue
        meta = item.get("metadata")
        name = meta.get("name") if isinstance(meta, dict) else None
        namespace = meta.get("namespace") if isinstance(meta, dict) else None
        what = f"{kind} {namespace + '/' if isinstance(namespace, str) and namespace else ''}" \
               f"{name if isinstance(name, str) else '?'}"
        try:
            _add(view, kind, item)
        except Malformed as exc:
            raise ReadError(f"{source}: items[{index}] ({what}) is malformed: {exc}") from None
        except (AttributeError, TypeError, ValueError, KeyError) as exc:
            raise ReadError(f"{source}: items[{index}] ({what}) is malformed: {exc}") from None
        key = (kind, str(namespace or ""), str(name))
        if key in seen and kind != "Event":
            raise ReadError(f"{source}: {what} is listed twice (items[{seen[key]}] and items[{index}]); "
                            "a snapshot or an answer lists each object once")
        seen[key] = index
    return view


# ---- fields, checked as the API server checks them -------------------------------------------------------

#: Label keys and values (k8s.io/apimachinery pkg/api/validate/content/kube.go at v0.35.4: ``labelKeyFmt``,
#: ``LabelValueMaxLength`` 63; a key's optional prefix is a DNS-1123 subdomain of at most 253 characters).
_LABEL_NAME = re.compile(r"[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?")
_DNS_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
LABEL_VALUE_MAX, LABEL_NAME_MAX, SUBDOMAIN_MAX = 63, 63, 253
#: Devices in one ResourceSlice (k8s.io/api resource/v1 types.go at v0.35.4, ``ResourceSliceMaxDevices``).
MAX_DEVICES_PER_SLICE = 128
#: An object's name (a DNS-1123 subdomain at most; Kubernetes refuses longer ones).
NAME_MAX = 253
#: Deployment spec.replicas is an int32 (k8s.io/api apps/v1 types.go).
INT32_MAX = 2**31 - 1
#: RFC 3339 as Kubernetes writes times (metav1.Time: seconds; metav1.MicroTime: microseconds).
_RFC3339 = re.compile(r"\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d{1,9})?([Zz]|[+-]\d{2}:\d{2})")


def _mapping(value: Any, field: str) -> Mapping[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise Malformed(field, f"is a {type(value).__name__}, not an object")
    return value


def _sequence(value: Any, field: str) -> list[Any]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise Malformed(field, f"is a {type(value).__name__}, not a list")
    return value


def _text(value: Any, field: str, *, limit: int = 1 << 20) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        raise Malformed(field, f"is a {type(value).__name__}, not a string")
    if len(value) > limit:
        raise Malformed(field, f"is {len(value)} characters; at most {limit}")
    return value


def _label_key_problem(key: str) -> str | None:
    prefix, _, name = key.rpartition("/")
    if "/" in prefix or ("/" in key and not prefix):
        return "is not a label key (an optional DNS prefix, '/', a name)"
    if prefix and (len(prefix) > SUBDOMAIN_MAX or not _DNS_SUBDOMAIN.fullmatch(prefix)):
        return f"has the prefix {prefix!r}, not a DNS subdomain of at most {SUBDOMAIN_MAX} characters"
    if len(name) > LABEL_NAME_MAX or not _LABEL_NAME.fullmatch(name):
        return (f"has the name {name!r}: at most {LABEL_NAME_MAX} letters, digits, '-', '_' or '.', starting and "
                "ending with a letter or digit")
    return None


def _labels(obj: Mapping[str, Any], field: str = "metadata.labels") -> dict[str, str]:
    labels = _mapping(_mapping(obj.get("metadata"), "metadata").get("labels"), field)
    for key, value in labels.items():
        if not isinstance(value, str):
            raise Malformed(f"{field}[{key!r}]", f"is a {type(value).__name__}, not a string")
        problem = _label_problem(key, value)
        if problem:
            raise Malformed(f"{field}[{key!r}]", problem)
    return dict(labels)


@functools.lru_cache(maxsize=65536)
def _label_problem(key: str, value: str) -> str | None:
    """Why ``key: value`` is no label (cached: a cluster repeats the same labels on every node and pod)."""
    problem = _label_key_problem(key)
    if problem:
        return problem
    if value and (len(value) > LABEL_VALUE_MAX or not _LABEL_NAME.fullmatch(value)):
        return (f"{value[:80]!r} is not a label value (at most {LABEL_VALUE_MAX} letters, digits, '-', '_' or '.', "
                "starting and ending with a letter or digit)")
    return None


def quantity(value: Any, field: str) -> Fraction:
    """A non-negative Kubernetes quantity (``"0"``, ``"7500m"``, ``"64Gi"``) within int64, as a number."""
    from gpu_fungibility.dra_cel.quantity import INT64_MAX

    if isinstance(value, bool) or not isinstance(value, (str, int)):
        raise Malformed(field, f"is {type(value).__name__} {str(value)[:40]}, not a quantity such as \"8\" or "
                               "\"64Gi\"")
    amount = _parse_quantity(str(value)[:64])
    if isinstance(amount, str):
        raise Malformed(field, f"{str(value)[:40]!r} is not a Kubernetes quantity ({amount})")
    if amount < 0:
        raise Malformed(field, f"{value!r} is negative")
    if amount * 1000 > INT64_MAX:
        raise Malformed(field, f"{str(value)[:40]!r} is larger than a Kubernetes quantity holds")
    return amount


@functools.lru_cache(maxsize=4096)
def _parse_quantity(text: str) -> Fraction | str:
    """The quantity's value, or why it is none (cached: a cluster repeats the same few quantities)."""
    from gpu_fungibility.dra_cel.quantity import Quantity, QuantityError

    try:
        return Quantity.parse(text).value
    except QuantityError as exc:
        return str(exc)


def timestamp(value: Any, field: str) -> datetime | None:
    """An RFC 3339 time as Kubernetes writes it (``2026-01-02T03:04:05Z``), aware; None when absent."""
    if value in (None, ""):
        return None
    if not isinstance(value, str) or not _RFC3339.fullmatch(value):
        raise Malformed(field, f"{str(value)[:40]!r} is not an RFC 3339 time (e.g. 2026-01-02T03:04:05Z)")
    text = value.upper().replace("Z", "+00:00")
    whole, _, rest = text.partition(".")
    if rest:  # Python takes at most microseconds
        digits = re.match(r"\d*", rest).group(0)
        text = f"{whole}.{(digits + '000000')[:6]}{rest[len(digits):]}"
    try:
        return datetime.fromisoformat(text)
    except ValueError:
        raise Malformed(field, f"{value!r} is not a valid time") from None


def _name(meta: Mapping[str, Any], kind: str) -> tuple[str, str]:
    name = _text(meta.get("name"), "metadata.name", limit=NAME_MAX)
    if not name:
        raise Malformed("metadata.name", f"is missing: every {kind} has a name")
    return name, _text(meta.get("namespace"), "metadata.namespace", limit=63)


def _cpu_memory(resources: Any, field: str) -> tuple[int, int]:
    resources = _mapping(resources, field)
    cpu, memory = resources.get("cpu"), resources.get("memory")
    return (_millicores(cpu, f"{field}.cpu") if cpu not in (None, "") else 0,
            _mib(memory, f"{field}.memory") if memory not in (None, "") else 0)


def _millicores(value: Any, field: str) -> int:
    """A CPU quantity in millicores, rounded up to a millicore as the API server does."""
    cached = _CPU.get(value) if isinstance(value, str) else None
    if cached is None:
        cached = -int(-quantity(value, field) * 1000 // 1)
        if isinstance(value, str) and len(_CPU) < 65536:
            _CPU[value] = cached
    return cached


def _mib(value: Any, field: str) -> int:
    """A memory quantity in MiB, rounded down."""
    cached = _MEMORY.get(value) if isinstance(value, str) else None
    if cached is None:
        cached = int(quantity(value, field) / 2**20)
        if isinstance(value, str) and len(_MEMORY) < 65536:
            _MEMORY[value] = cached
    return cached


_CPU: dict[str, int] = {}
_MEMORY: dict[str, int] = {}


def pod_requests(spec: Mapping[str, Any], field: str = "spec") -> tuple[int, int]:
    """The scheduler's effective requests (millicores, MiB rounded down from the exact bytes), as
    :func:`gpu_fungibility.pod_requests.combine` computes them: the containers' and sidecars' sum, or the largest
    init step if larger. A live pod's requests are already defaulted from its limits by the API server."""
    def requests(key: str) -> list[tuple[Requests, bool]]:
        found = []
        for i, container in enumerate(_sequence(spec.get(key), f"{field}.{key}")):
            container = _mapping(container, f"{field}.{key}[{i}]")
            resources = _mapping(container.get("resources"), f"{field}.{key}[{i}].resources")
            where = f"{field}.{key}[{i}].resources.requests"
            raw = _mapping(resources.get("requests"), where)
            cpu, memory = raw.get("cpu"), raw.get("memory")
            found.append((Requests(_millicores(cpu, f"{where}.cpu") if cpu not in (None, "") else 0,
                                   _bytes(memory, f"{where}.memory") if memory not in (None, "") else 0),
                          container.get("restartPolicy") == "Always"))
        return found

    total = combine([r for r, _ in requests("containers")], requests("initContainers"))
    return total.cpu_m, total.memory // 2**20


def _bytes(value: Any, field: str) -> int:
    """A memory quantity in bytes, rounded up as ``Quantity.Value`` does."""
    return -int(-quantity(value, field) // 1)


def _claim_spec(claim: Mapping[str, Any], field: str) -> Mapping[str, Any]:
    """A claim spec's requests in the shapes the checks read (resource.k8s.io/v1 DeviceRequest)."""
    requests = _sequence(_mapping(claim.get("devices"), f"{field}.devices").get("requests"), f"{field}.devices.requests")
    for i, request in enumerate(requests):
        where = f"{field}.devices.requests[{i}]"
        request = _mapping(request, where)
        _text(request.get("name"), f"{where}.name", limit=NAME_MAX)
        bodies = [(f"{where}.exactly", _mapping(request.get("exactly"), f"{where}.exactly"))]
        bodies += [(f"{where}.firstAvailable[{j}]", _mapping(sub, f"{where}.firstAvailable[{j}]"))
                   for j, sub in enumerate(_sequence(request.get("firstAvailable"), f"{where}.firstAvailable"))]
        for body_field, body in [(where, request), *bodies]:
            _text(body.get("deviceClassName"), f"{body_field}.deviceClassName", limit=NAME_MAX)
            _text(body.get("allocationMode"), f"{body_field}.allocationMode", limit=64)
            count = body.get("count", 1)
            if isinstance(count, bool) or not isinstance(count, int) or not 0 <= count <= INT32_MAX:
                raise Malformed(f"{body_field}.count", f"{str(count)[:40]!r} is not a device count")
            for k, selector in enumerate(_sequence(body.get("selectors"), f"{body_field}.selectors")):
                cel = _mapping(_mapping(selector, f"{body_field}.selectors[{k}]").get("cel"),
                               f"{body_field}.selectors[{k}].cel")
                _text(cel.get("expression"), f"{body_field}.selectors[{k}].cel.expression")
    return claim


def _add(view: View, kind: str, item: Mapping[str, Any]) -> None:
    meta = _mapping(item.get("metadata"), "metadata")
    name, namespace = _name(meta, kind)
    spec, status = _mapping(item.get("spec"), "spec"), _mapping(item.get("status"), "status")
    if kind == "Node":
        capacity = _mapping(status.get("capacity"), "status.capacity")
        view.nodes.append(Node(name, _labels(item), _cpu_memory(status.get("allocatable"), "status.allocatable"),
                               {str(k): str(v) for k, v in capacity.items()}))
    elif kind == "Pod":
        owners = []
        for i, ref in enumerate(_sequence(meta.get("ownerReferences"), "metadata.ownerReferences")):
            ref = _mapping(ref, f"metadata.ownerReferences[{i}]")
            if ref.get("controller") is True:
                owners.append((_text(ref.get("kind"), f"metadata.ownerReferences[{i}].kind"),
                               _text(ref.get("name"), f"metadata.ownerReferences[{i}].name")))
        claims = {}
        for i, c in enumerate(_sequence(status.get("resourceClaimStatuses"), "status.resourceClaimStatuses")):
            c = _mapping(c, f"status.resourceClaimStatuses[{i}]")
            claims[_text(c.get("name"), f"status.resourceClaimStatuses[{i}].name")] = _text(
                c.get("resourceClaimName"), f"status.resourceClaimStatuses[{i}].resourceClaimName")
        templates = {}
        for i, c in enumerate(_sequence(spec.get("resourceClaims"), "spec.resourceClaims")):
            c = _mapping(c, f"spec.resourceClaims[{i}]")
            template = _text(c.get("resourceClaimTemplateName"), f"spec.resourceClaims[{i}].resourceClaimTemplateName")
            if template:
                templates[_text(c.get("name"), f"spec.resourceClaims[{i}].name")] = template
        view.pods.append(Pod(namespace, name, _text(spec.get("nodeName"), "spec.nodeName", limit=NAME_MAX),
                             _text(status.get("phase"), "status.phase", limit=64), _labels(item),
                             owners[0] if owners else ("", ""), pod_requests(spec), claims, templates))
    elif kind == "DaemonSet":
        template = _mapping(spec.get("template"), "spec.template")
        view.daemonsets.append(DaemonSet(namespace, name, _labels(item),
                                         pod_requests(_mapping(template.get("spec"), "spec.template.spec"),
                                                      "spec.template.spec")))
    elif kind == "Deployment":
        template = _mapping(spec.get("template"), "spec.template")
        for i, claim in enumerate(_sequence(_mapping(template.get("spec"), "spec.template.spec").get(
                "resourceClaims"), "spec.template.spec.resourceClaims")):
            claim = _mapping(claim, f"spec.template.spec.resourceClaims[{i}]")
            _text(claim.get("resourceClaimTemplateName"),
                  f"spec.template.spec.resourceClaims[{i}].resourceClaimTemplateName", limit=NAME_MAX)
        replicas = spec.get("replicas", 1)
        if isinstance(replicas, bool) or not isinstance(replicas, int) or not 0 <= replicas <= INT32_MAX:
            raise Malformed("spec.replicas", f"{str(replicas)[:40]!r} is not a replica count (0 to {INT32_MAX}, "
                                             "an int32)")
        view.deployments.append(Deployment(namespace, name, _labels(item), replicas,
                                           _mapping(spec.get("template"), "spec.template")))
    elif kind == "ResourceSlice":
        devices = _sequence(spec.get("devices"), "spec.devices")
        if len(devices) > MAX_DEVICES_PER_SLICE:
            raise Malformed("spec.devices", f"lists {len(devices)} devices; the API allows at most "
                                            f"{MAX_DEVICES_PER_SLICE} per ResourceSlice")
        for i, device in enumerate(devices):
            device = _mapping(device, f"spec.devices[{i}]")
            for part in ("attributes", "capacity"):
                for key, value in _mapping(device.get(part), f"spec.devices[{i}].{part}").items():
                    _mapping(value, f"spec.devices[{i}].{part}[{key!r}]")
        view.slices.append(Slice(name, _text(spec.get("nodeName"), "spec.nodeName", limit=NAME_MAX),
                                 _text(spec.get("driver"), "spec.driver", limit=NAME_MAX), tuple(devices)))
    elif kind == "DeviceClass":
        selectors = []
        for i, selector in enumerate(_sequence(spec.get("selectors"), "spec.selectors")):
            cel = _mapping(_mapping(selector, f"spec.selectors[{i}]").get("cel"), f"spec.selectors[{i}].cel")
            if cel:
                selectors.append(_text(cel.get("expression"), f"spec.selectors[{i}].cel.expression"))
        view.device_classes[name] = selectors
    elif kind == "ResourceClaim":
        allocation = _mapping(status.get("allocation"), "status.allocation")
        devices = _mapping(allocation.get("devices"), "status.allocation.devices")
        results = _sequence(devices.get("results"), "status.allocation.devices.results")
        for i, result in enumerate(results):
            _mapping(result, f"status.allocation.devices.results[{i}]")
        view.claims[(namespace, name)] = Claim(namespace, name, tuple(results))
    elif kind == "ResourceClaimTemplate":
        view.claim_templates[(namespace, name)] = _claim_spec(_mapping(spec.get("spec"), "spec.spec"), "spec.spec")
    elif kind == "Event":
        involved_field = "involvedObject" if item.get("involvedObject") is not None else "regarding"
        involved = _mapping(item.get(involved_field), involved_field)
        # A repeated event (events.k8s.io/v1, as the scheduler records them) keeps its first time in eventTime
        # and its newest in series.lastObservedTime; core/v1 ones in lastTimestamp.
        series = _mapping(item.get("series"), "series")
        order = None
        for field_name, value in (("series.lastObservedTime", series.get("lastObservedTime")),
                                  ("lastTimestamp", item.get("lastTimestamp")), ("eventTime", item.get("eventTime")),
                                  ("metadata.creationTimestamp", meta.get("creationTimestamp"))):
            parsed = timestamp(value, field_name)
            if order is None and parsed is not None:
                order = parsed
        message = item.get("message") if item.get("message") is not None else item.get("note")
        view.events.append(Event(namespace, _text(involved.get("kind"), f"{involved_field}.kind", limit=64),
                                 _text(involved.get("name"), f"{involved_field}.name", limit=NAME_MAX),
                                 _text(item.get("reason"), "reason", limit=128),
                                 _text(message, "message"), order))
