"""What the simulator schedules, read from the Kubernetes objects a stack generates.

Each Deployment whose pods carry ``resourceClaims`` becomes one
:class:`PodSpec` (all replicas share it). Its claims come from the
ResourceClaimTemplates (one new claim per pod) and ResourceClaims (one claim
shared by every pod that names it) among the objects; DeviceClasses from the
objects are added to the ones the drivers install. Selectors are compiled by
:mod:`dra_cel` here, once: an expression the API server would reject makes
every pod of the workload pending, with the reason.

Both ``resource.k8s.io/v1`` request shapes are read (``exactly`` and
``firstAvailable``), as is the older flat one (``deviceClassName`` on the
request). Numbers may arrive as floats (Pulumi mocks); they are made ints.

What Kubernetes' allocator refuses, the simulator refuses too, with its words
(kubernetes/kubernetes staging/src/k8s.io/dynamic-resource-allocation/
structured/internal/incubating/allocator_incubating.go, ``Allocate`` and
``validateDeviceRequest``): an allocation mode other than ``ExactCount`` or
``All`` (the modes are case-sensitive), a selector without ``cel``, a
constraint without ``matchAttribute``, a request without a device class,
and a claim needing more than ``AllocationResultsMaxSize`` (32) devices. The
pod then stays pending with that reason instead of being "scheduled" with no
devices. A pod's CPU and memory requests are the scheduler's (:mod:`gpu_fungibility.pod_requests`: requests
defaulted from limits, the largest init container, sidecars added, exact bytes).

What the API server refuses in a claim, the simulator refuses too (pkg/apis/resource/validation/validation.go,
v1.35.4): more than 8 ``firstAvailable`` subrequests (``FirstAvailableDeviceRequestMaxSize``) and a constraint
naming a request the claim does not have. A ``count`` of 0 is defaulted to 1 (pkg/apis/resource/v1/defaults.go),
not refused.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from gpu_fungibility import clouds, pod_requests
from gpu_fungibility.dra_cel import CelCompileError, CelUnsupportedError, Program, compile_expression

from simulator.cluster import DRIVER_DEVICE_CLASSES
from stacks.config import StackConfig

INSTANCE_LABEL = "app.kubernetes.io/instance"
#: resource.k8s.io AllocationResultsMaxSize: the most devices one claim's allocation can hold.
MAX_DEVICES_PER_CLAIM = 32
ALLOCATION_MODES = ("ExactCount", "All")
#: resource.k8s.io FirstAvailableDeviceRequestMaxSize: the most subrequests one request may list.
MAX_SUBREQUESTS = 8
MIB = 2 ** 20


class UnsupportedClaim(ValueError):
    """A claim the allocator refuses to handle (its message is the allocator's reason)."""


class NotModelled(ValueError):
    """A claim feature Kubernetes may accept that the simulator does not model."""


@dataclass(frozen=True)
class Alternative:
    """One way to satisfy a request: an ``exactly`` request or one ``firstAvailable`` entry."""

    request: str
    subrequest: str | None
    device_class: str
    selectors: tuple[Program, ...]
    mode: str  # ExactCount | All
    count: int
    rank: int = 0  # position in the request's firstAvailable list
    admin_access: bool = False  # adminAccess: the devices are not taken, in-use ones may be had
    #: the request's device tolerations, each as sorted (field, value) pairs (simulator.dra_features)
    tolerations: tuple[tuple[tuple[str, str], ...], ...] = ()

    @property
    def label(self) -> str:
        return f"{self.request}/{self.subrequest}" if self.subrequest else self.request


@dataclass(frozen=True)
class Request:
    name: str
    alternatives: tuple[Alternative, ...]


@dataclass(frozen=True)
class Constraint:
    requests: tuple[str, ...]  # empty: every request of the claim
    attribute: tuple[str, str]  # (domain, name)

    def applies(self, alternative: Alternative) -> bool:
        return not self.requests or alternative.request in self.requests or alternative.label in self.requests


@dataclass(frozen=True)
class ClaimSpec:
    entry: str  # the pod's resourceClaims[].name
    source: str  # "template ns/name" or "claim ns/name"
    shared: bool
    requests: tuple[Request, ...]
    constraints: tuple[Constraint, ...]

    @property
    def min_devices(self) -> int:
        """The fewest devices an allocation can hold (``All`` counts one until a node is known)."""
        return sum(min(max(a.count, 1) for a in r.alternatives) for r in self.requests if r.alternatives)


@dataclass
class PodSpec:
    """Everything the scheduler needs to know about one workload's pods."""

    workload: str
    namespace: str
    replicas: int
    node_selector: dict[str, str]
    affinity_terms: list[dict] | None  # required nodeSelectorTerms (None: no affinity)
    tolerations: list[dict]
    preferred_terms: list[tuple[int, dict]] = field(default_factory=list)  # (weight, preference) node affinity
    claims: list[ClaimSpec] = field(default_factory=list)
    counted: list[tuple[str, str | None]] = field(default_factory=list)  # container claims (entry, request)
    problem: str | None = None  # why no pod of this workload can schedule
    cpu_m: int = 0  # CPU requests of its containers
    memory_mib: int = 0  # memory requests of its containers (rounded down)
    memory_bytes: int = 0  # memory requests, exact
    nonzero: tuple[int, int] = (0, 0)  # (millicores, bytes) as NodeResourcesFit scores them (missing: 100m/200Mi)


def _int(value: Any, default: int) -> int:
    return default if value is None else int(value)


def _name(obj: Mapping[str, Any]) -> str:
    return str((obj.get("metadata") or {}).get("name", ""))


def _namespace(obj: Mapping[str, Any]) -> str:
    return str((obj.get("metadata") or {}).get("namespace") or "default")


def workload_name(cfg: StackConfig, deployment: Mapping[str, Any]) -> str:
    """The stack workload a Deployment runs (its instance label or its name)."""
    labels = (deployment.get("metadata") or {}).get("labels") or {}
    instance = labels.get(INSTANCE_LABEL)
    if instance in cfg.workloads:
        return str(instance)
    return _name(deployment)


def device_classes(objects: Iterable[Mapping[str, Any]]) -> tuple[dict[str, tuple[Program, ...]], dict[str, str]]:
    """DeviceClass name -> compiled selectors (drivers' and the stack's); plus compile problems by class."""
    classes: dict[str, tuple[Program, ...]] = {
        name: tuple(compile_expression(e) for e in exprs) for name, exprs in DRIVER_DEVICE_CLASSES.items()
    }
    problems: dict[str, str] = {}
    for obj in objects:
        if obj.get("kind") != "DeviceClass":
            continue
        try:
            classes[_name(obj)] = _selectors((obj.get("spec") or {}).get("selectors"))
        except CelUnsupportedError as exc:
            problems[_name(obj)] = f"DeviceClass {_name(obj)} cannot be evaluated by the simulator: {exc}"
        except CelCompileError as exc:
            problems[_name(obj)] = f"DeviceClass {_name(obj)} is invalid: {exc}"
    return classes, problems


def _selectors(raw: Any) -> tuple[Program, ...]:
    programs = []
    for selector in raw or []:
        expression = ((selector or {}).get("cel") or {}).get("expression")
        if expression is not None:
            programs.append(compile_expression(str(expression)))
    return tuple(programs)


def _selectors_of(where: str, raw: Any) -> tuple[Program, ...]:
    for i, selector in enumerate(raw or []):
        if not ((selector or {}).get("cel") or {}).get("expression"):
            raise UnsupportedClaim(f"{where}, selector #{i}: CEL expression empty (unsupported selector type?)")
    return _selectors(raw)


def _alternative(request: str, subrequest: str | None, body: Mapping[str, Any], rank: int = 0) -> Alternative:
    label = f"{request}/{subrequest}" if subrequest else request
    mode = str(body.get("allocationMode") or "ExactCount")
    if mode not in ALLOCATION_MODES:
        raise UnsupportedClaim(f"request {label}: unsupported count mode {mode} "
                               f"(Kubernetes knows {' and '.join(ALLOCATION_MODES)}, spelled exactly so)")
    if not body.get("deviceClassName"):
        raise UnsupportedClaim(f"request {label}: missing device class name (unsupported request type?)")
    count = (_int(body.get("count"), 1) or 1) if mode == "ExactCount" else 0  # 0 is unset: defaulted to 1
    if mode == "ExactCount" and count < 1:
        raise UnsupportedClaim(f"request {label}: count must be greater than zero, got {count}")
    return Alternative(
        request=request,
        subrequest=subrequest,
        device_class=str(body.get("deviceClassName", "")),
        selectors=_selectors_of(f"request {label}", body.get("selectors")),
        mode=mode,
        count=count,
        rank=rank,
        admin_access=bool(body.get("adminAccess")),
        tolerations=_tolerations(body.get("tolerations")),
    )


def _tolerations(raw: Any) -> tuple[tuple[tuple[str, str], ...], ...]:
    """A request's ``tolerations`` (key, operator, value, effect; DRADeviceTaints, on from 1.36)."""
    return tuple(tuple(sorted((k, str(v)) for k, v in (t or {}).items()
                              if k in ("key", "operator", "value", "effect") and v is not None))
                 for t in raw or () if isinstance(t, Mapping))


def _request(raw: Mapping[str, Any]) -> Request:
    name = str(raw.get("name", ""))
    if raw.get("firstAvailable"):
        if len(raw["firstAvailable"]) > MAX_SUBREQUESTS:
            raise UnsupportedClaim(f"request {name}: firstAvailable: Too many: {len(raw['firstAvailable'])}: "
                                   f"must have at most {MAX_SUBREQUESTS} items")
        alternatives = tuple(_alternative(name, str(sub.get("name", "")), sub, rank)
                             for rank, sub in enumerate(raw["firstAvailable"]))
    elif raw.get("exactly"):
        alternatives = (_alternative(name, None, raw["exactly"]),)
    else:
        alternatives = (_alternative(name, None, raw),)
    return Request(name, alternatives)


def _constraint(index: int, raw: Mapping[str, Any]) -> Constraint:
    attribute = raw.get("matchAttribute")
    if raw.get("distinctAttribute"):
        raise NotModelled(f"constraint #{index}: distinctAttribute (alpha, DRAConsumableCapacity)")
    if not attribute:
        raise UnsupportedClaim(f"constraint #{index}: empty constraint (unsupported constraint type?)")
    domain, _, ident = str(attribute).partition("/")
    return Constraint(tuple(str(r) for r in raw.get("requests") or ()), (domain, ident))


def claim_spec(entry: str, source: str, shared: bool, devices: Mapping[str, Any]) -> ClaimSpec:
    """A claim's ``spec.devices`` read into a ClaimSpec (raises UnsupportedClaim, CelCompileError)."""
    requests = tuple(_request(r) for r in devices.get("requests") or ())
    constraints = tuple(_constraint(i, r) for i, r in enumerate(devices.get("constraints") or ()))
    names = {r.name for r in requests} | {a.label for r in requests for a in r.alternatives}
    for i, constraint in enumerate(constraints):
        for name in constraint.requests:
            if name not in names:
                raise UnsupportedClaim(f"constraint #{i}: requests: Invalid value: {name!r}: must be the name of a "
                                       "request in the claim or the name of a request and a subrequest separated "
                                       "by '/'")
    claim = ClaimSpec(entry, source, shared, requests, constraints)
    if claim.min_devices > MAX_DEVICES_PER_CLAIM:
        raise UnsupportedClaim(f"number of requested devices {claim.min_devices} exceeds the claim limit of "
                               f"{MAX_DEVICES_PER_CLAIM}")
    return claim


def _affinity_terms(pod: Mapping[str, Any]) -> list[dict] | None:
    node_affinity = ((pod.get("affinity") or {}).get("nodeAffinity") or {})
    required = node_affinity.get("requiredDuringSchedulingIgnoredDuringExecution")
    if not required:
        return None
    return [dict(t) for t in required.get("nodeSelectorTerms") or ()]


def _preferred_terms(pod: Mapping[str, Any]) -> list[tuple[int, dict]]:
    node_affinity = ((pod.get("affinity") or {}).get("nodeAffinity") or {})
    preferred = node_affinity.get("preferredDuringSchedulingIgnoredDuringExecution") or ()
    return [(_int(t.get("weight"), 0), dict(t.get("preference") or {})) for t in preferred]


def _requests(pod: Mapping[str, Any]) -> tuple[int, int]:
    """``(millicores, bytes)`` the pod requests, as the scheduler computes them."""
    found = pod_requests.pod_requests(pod)
    return found.cpu_m, found.memory


def _counted_claims(pod: Mapping[str, Any]) -> list[tuple[str, str | None]]:
    """The claims the serving container (the first one that uses claims) sees."""
    for container in pod.get("containers") or ():
        claims = ((container.get("resources") or {}).get("claims")) or ()
        if claims:
            return [(str(c.get("name")), c.get("request")) for c in claims]
    return []


def pod_spec(name: str, namespace: str, replicas: int, pod: Mapping[str, Any],
             templates: Mapping[tuple[str, str], Mapping[str, Any]],
             claims: Mapping[tuple[str, str], Mapping[str, Any]],
             implied_tolerations: Iterable[dict] = ()) -> PodSpec:
    """One pod template read into a PodSpec; what makes every such pod pending is its ``problem``.

    ``templates`` and ``claims`` are the ResourceClaimTemplates and ResourceClaims by (namespace, name);
    ``implied_tolerations`` are the ones the cloud adds by itself.
    """
    node_selector = {str(k): str(v) for k, v in (pod.get("nodeSelector") or {}).items()}
    spec = PodSpec(
        workload=name,
        namespace=namespace,
        replicas=replicas,
        node_selector=node_selector,
        affinity_terms=_affinity_terms(pod),
        tolerations=[dict(t) for t in pod.get("tolerations") or ()] + list(implied_tolerations),
        preferred_terms=_preferred_terms(pod),
        counted=_counted_claims(pod),
    )
    try:
        spec.cpu_m, spec.memory_bytes = _requests(pod)
        spec.memory_mib = spec.memory_bytes // MIB
        nonzero = pod_requests.pod_requests(pod, non_zero=True)
        spec.nonzero = (nonzero.cpu_m, nonzero.memory)
    except ValueError as exc:
        spec.problem = f"the API server rejects the pod's resource requests: {exc}"
    for ref in pod.get("resourceClaims") or ():
        entry = str(ref.get("name"))
        try:
            if ref.get("resourceClaimTemplateName"):
                key = (namespace, str(ref["resourceClaimTemplateName"]))
                if key not in templates:
                    spec.problem = f"ResourceClaimTemplate {key[0]}/{key[1]} does not exist"
                    break
                body = ((templates[key].get("spec") or {}).get("spec") or {}).get("devices") or {}
                spec.claims.append(claim_spec(entry, f"template {key[0]}/{key[1]}", False, body))
            elif ref.get("resourceClaimName"):
                key = (namespace, str(ref["resourceClaimName"]))
                if key not in claims:
                    spec.problem = f"ResourceClaim {key[0]}/{key[1]} does not exist"
                    break
                body = (claims[key].get("spec") or {}).get("devices") or {}
                spec.claims.append(claim_spec(entry, f"claim {key[0]}/{key[1]}", True, body))
        except UnsupportedClaim as exc:
            spec.problem = f"the allocator refuses claim {ref.get('name')}: {exc}"
            break
        except NotModelled as exc:
            spec.problem = f"the simulator does not model claim {ref.get('name')}: {exc}"
            break
        except CelUnsupportedError as exc:
            spec.problem = f"the simulator cannot evaluate the claim's selector: {exc}"
            break
        except CelCompileError as exc:
            spec.problem = f"the API server rejects the claim's selector: {exc}"
            break
    return spec


def pod_specs(cfg: StackConfig, objects: list[Mapping[str, Any]],
              replicas: Mapping[str, int] | None = None) -> list[PodSpec]:
    """One PodSpec per Deployment with resource claims, in the order of the objects."""
    templates = {(_namespace(o), _name(o)): o for o in objects if o.get("kind") == "ResourceClaimTemplate"}
    claims = {(_namespace(o), _name(o)): o for o in objects if o.get("kind") == "ResourceClaim"}
    specs: list[PodSpec] = []
    for deployment in objects:
        if deployment.get("kind") != "Deployment":
            continue
        pod = (((deployment.get("spec") or {}).get("template") or {}).get("spec")) or {}
        if not pod.get("resourceClaims"):
            continue
        name = workload_name(cfg, deployment)
        node_selector = {str(k): str(v) for k, v in (pod.get("nodeSelector") or {}).items()}
        count = (replicas or {}).get(name)
        specs.append(pod_spec(
            name, _namespace(deployment),
            _int((deployment.get("spec") or {}).get("replicas"), 1) if count is None else count,
            pod, templates, claims, clouds.profile(cfg.cluster.cloud).implied_tolerations(node_selector)))
    return specs
