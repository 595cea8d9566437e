"""DRA objects: DeviceClasses, shared ResourceClaims and ResourceClaimTemplates.

A claim is described by what would satisfy it, not by CEL: each alternative
names a catalog accelerator and how many of it a replica needs, and the
library writes the selector (:mod:`components.device_selectors`), the device class
and the allocation mode:

- ``alternatives`` -> one request whose ``firstAvailable`` holds one
  subrequest per alternative, in order (the scheduler takes the first it can
  satisfy): for a fallback order such as a GKE ComputeClass's pools, pass one
  alternative per pool, in the same order;
- ``exactly`` -> one ``exactly`` request;
- TPUs -> ``allocationMode: All`` (the TPU driver allocates all chips of a node
  together); GPUs -> ``ExactCount`` with the alternative's ``count``;
- ``mig`` -> one ``mig.nvidia.com`` request per slice, selected by profile, and
  a ``matchAttribute: gpu.nvidia.com/parentUUID`` constraint over them all.
"""

import re
from collections.abc import Mapping, Sequence
from typing import Any, NotRequired, TypedDict

import pulumi
from pulumi_kubernetes.meta.v1 import ObjectMetaArgs
from pulumi_kubernetes.resource import v1 as resource_v1

from . import catalog, device_selectors, devices, mig_geometry
from .argument_rules import at_least, device_count_issues
from .base import RESERVED_NAMESPACES, Issues, LibraryComponent
from .node_selection import is_dns_subdomain

EXACT_COUNT = "ExactCount"
ALL_DEVICES = "All"
MIG_REQUEST_CLAIM = "mig"
MAX_ALTERNATIVES = 8  # DRA's limit on firstAvailable subrequests
MAX_TOLERATIONS = 16  # resource.k8s.io/v1 DeviceRequest/DeviceSubRequest: "The maximum number of tolerations is 16"
TOLERATION_FIELDS = ("key", "operator", "value", "effect")
DRIVERS = (device_selectors.NVIDIA_DRIVER, device_selectors.TPU_DRIVER)
#: What an NVIDIA DeviceClass admits: whole GPUs or MIG slices.
DEVICE_KINDS = ("gpu", "mig")


_DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$")


class DeviceAlternative(TypedDict):
    """One way to satisfy a device request: ``count`` devices of one catalog accelerator on one node."""

    accelerator_type: str
    """The catalog accelerator (``nvidia-a100-80gb``, ``tpu-v6e-slice``, ...): the selector matches it alone."""
    name: NotRequired[str]
    """The subrequest's name (required among ``alternatives``; a pool's name reads well in status)."""
    count: NotRequired[int]
    """GPUs per claim (default 1). TPUs are allocated a whole node at a time."""
    device_class: NotRequired[str]
    """A DeviceClass to use instead of the driver's (``gpu.nvidia.com`` / ``tpu.google.com``)."""


class MigSliceRequest(TypedDict):
    """One MIG slice a pod needs (one request of the claim)."""

    name: str
    """The request's name; the container bound to this slice names it."""
    profile: str
    """The MIG profile, e.g. ``3g.40gb`` (checked against the accelerator)."""


class MigDevices(TypedDict):
    """MIG slices that must all come from the same physical GPU."""

    accelerator_type: str
    """The GPU the slices are cut from (catalog type with MIG profiles)."""
    slices: list[MigSliceRequest]
    """The slices, one request each."""


class DeviceToleration(TypedDict):
    """A toleration of device taints, given to every request of a claim (``resource.k8s.io/v1``
    ``DeviceToleration``). Kubernetes honours it from 1.36 (DRADeviceTaints, beta and on by default; before, the
    API server drops it, and device taints with it)."""

    key: NotRequired[str]
    """The taint key it matches; unset (with ``operator: Exists``): every key."""
    operator: NotRequired[str]
    """``Equal`` (default: the taint's value equals ``value``) or ``Exists`` (any value)."""
    value: NotRequired[str]
    """The taint value for ``Equal``."""
    effect: NotRequired[str]
    """``NoSchedule`` or ``NoExecute``; unset: both."""


class DeviceClaim(TypedDict):
    """What one claim asks for: a fallback list, one fixed alternative, or MIG slices."""

    namespace: str
    """The namespace the claim (or template) lives in."""
    alternatives: NotRequired[list[DeviceAlternative]]
    """``firstAvailable`` alternatives in preference order (1 to 8)."""
    exactly: NotRequired[DeviceAlternative]
    """A single fixed alternative (an ``exactly`` request)."""
    mig: NotRequired[MigDevices]
    """MIG slices on one GPU."""
    request_name: NotRequired[str]
    """The request's name (default: ``gpu`` or ``tpu``, the alternatives' accelerator family)."""
    tolerations: NotRequired[list[DeviceToleration]]
    """Device tolerations for every request and ``firstAvailable`` alternative of the claim (none by default)."""


class DeviceClassSpec(TypedDict):
    """A DeviceClass: the devices of one driver that pass every given filter."""

    driver: NotRequired[str]
    """``gpu.nvidia.com`` (default) or ``tpu.google.com``."""
    min_memory_gi: NotRequired[int]
    """GPUs: at least this much device memory."""
    product_names: NotRequired[list[str]]
    """GPUs: one of these NVML product names."""
    architectures: NotRequired[list[str]]
    """GPUs: one of these architectures."""
    expressions: NotRequired[list[str]]
    """Extra CEL expressions, ANDed."""
    devices: NotRequired[str]
    """NVIDIA: ``gpu`` (default, whole GPUs) or ``mig`` (MIG slices; ``min_memory_gi`` is then the slice's
    real memory, which is below the profile name's figure: no H100 ``1g.10gb`` has 10 GiB)."""


class DraClaimsArgs(TypedDict):
    """The DRA objects of a set of workloads."""

    device_classes: NotRequired[dict[str, DeviceClassSpec]]
    """DeviceClasses to create, by name."""
    shared_claims: NotRequired[dict[str, DeviceClaim]]
    """ResourceClaims several pods share, by name."""
    claim_templates: NotRequired[dict[str, DeviceClaim]]
    """ResourceClaimTemplates (one claim per pod), keyed by the workload that uses each; the template is
    named ``<key>-claim``."""


# ---------------------------------------------------------------- pure specs


def family_of(accelerator_type: str) -> str:
    model = catalog.accelerator(accelerator_type)
    if model is None:
        raise ValueError(f"unknown accelerator type {accelerator_type!r}")
    return model.family


def default_device_class(family: str) -> str:
    return device_selectors.TPU_DEVICE_CLASS if family == "tpu" else device_selectors.GPU_DEVICE_CLASS


def template_name(key: str) -> str:
    """The ResourceClaimTemplate of a workload."""
    return f"{key}-claim"


def _selector(expression: str) -> resource_v1.DeviceSelectorArgs:
    return resource_v1.DeviceSelectorArgs(cel=resource_v1.CELDeviceSelectorArgs(expression=expression))


def _request_fields(alternative: Mapping[str, Any]) -> dict[str, Any]:
    """What an alternative and an ``exactly`` request share: class, mode, count, selector."""
    accelerator = str(alternative["accelerator_type"])
    family = family_of(accelerator)
    fields = {
        "device_class_name": alternative.get("device_class") or default_device_class(family),
        "selectors": [_selector(device_selectors.accelerator_selector(accelerator))],
    }
    if family == "tpu":
        return {**fields, "allocation_mode": ALL_DEVICES}
    return {**fields, "allocation_mode": EXACT_COUNT, "count": int(alternative.get("count", 1))}


def _tolerations(claim: Mapping[str, Any]) -> dict[str, Any]:
    """The ``tolerations`` field of each request of the claim, or nothing (plans without it are unchanged)."""
    tolerations = claim.get("tolerations") or []
    if not tolerations:
        return {}
    return {"tolerations": [resource_v1.DeviceTolerationArgs(**{k: str(t[k]) for k in TOLERATION_FIELDS if t.get(k)})
                            for t in tolerations]}


def request_name_of(claim: Mapping[str, Any]) -> str:
    if claim.get("request_name"):
        return str(claim["request_name"])
    first = (claim.get("alternatives") or [claim.get("exactly")])[0]
    return family_of(str(first["accelerator_type"]))


def device_request(claim: Mapping[str, Any]) -> resource_v1.DeviceRequestArgs:
    """The one request of an ``alternatives`` or ``exactly`` claim."""
    name = request_name_of(claim)
    if claim.get("alternatives"):
        return resource_v1.DeviceRequestArgs(name=name, first_available=[
            resource_v1.DeviceSubRequestArgs(name=str(alt["name"]), **_request_fields(alt), **_tolerations(claim))
            for alt in claim["alternatives"]])
    return resource_v1.DeviceRequestArgs(name=name, exactly=resource_v1.ExactDeviceRequestArgs(
        **_request_fields(claim["exactly"]), **_tolerations(claim)))


def mig_requests(mig: Mapping[str, Any], tolerations: Mapping[str, Any] | None = None
                 ) -> tuple[list[resource_v1.DeviceRequestArgs], list | None]:
    """One ``mig.nvidia.com`` request per slice, all from the same physical GPU."""
    accelerator = str(mig["accelerator_type"])
    requests = [
        resource_v1.DeviceRequestArgs(
            name=str(piece["name"]),
            exactly=resource_v1.ExactDeviceRequestArgs(
                device_class_name=device_selectors.MIG_DEVICE_CLASS,
                allocation_mode=EXACT_COUNT,
                count=1,
                selectors=[_selector(device_selectors.mig_slice_selector(accelerator, str(piece["profile"])))],
                **(tolerations or {}),
            ),
        )
        for piece in mig["slices"]
    ]
    constraints = None
    if len(mig["slices"]) > 1:
        constraints = [resource_v1.DeviceConstraintArgs(
            requests=[str(piece["name"]) for piece in mig["slices"]],
            match_attribute=device_selectors.MIG_PARENT_ATTRIBUTE,
        )]
    return requests, constraints


def claim_spec(claim: Mapping[str, Any]) -> resource_v1.ResourceClaimSpecArgs:
    """The ``spec`` of a claim (a template's ``spec.spec``)."""
    if claim.get("mig"):
        requests, constraints = mig_requests(claim["mig"], _tolerations(claim))
        return resource_v1.ResourceClaimSpecArgs(
            devices=resource_v1.DeviceClaimArgs(requests=requests, constraints=constraints))
    return resource_v1.ResourceClaimSpecArgs(devices=resource_v1.DeviceClaimArgs(requests=[device_request(claim)]))


def device_class_spec(spec: Mapping[str, Any]) -> resource_v1.DeviceClassSpecArgs:
    expression = device_selectors.device_class_expression(
        spec.get("driver", device_selectors.NVIDIA_DRIVER),
        min_memory_gi=spec.get("min_memory_gi"),
        product_names=list(spec.get("product_names") or []),
        architectures=list(spec.get("architectures") or []),
        expressions=list(spec.get("expressions") or []),
        devices=str(spec.get("devices") or "gpu"),
    )
    return resource_v1.DeviceClassSpecArgs(selectors=[_selector(expression)])


# ---------------------------------------------------------------- checks


def _alternative_issues(alt: Mapping[str, Any], path: str, classes: Mapping[str, Any],
                        named: bool) -> Issues:
    accelerator = str(alt.get("accelerator_type", ""))
    model = catalog.accelerator(accelerator)
    if model is None:
        return [(f"{path}.accelerator_type", f"unknown accelerator type {accelerator!r}; known: "
                                             f"{', '.join(catalog.known_accelerator_types())}")]
    issues: Issues = []
    if named and not alt.get("name"):
        issues.append((f"{path}.name", "required: each firstAvailable alternative is named"))
    if alt.get("name") and not _DNS_LABEL.match(str(alt["name"])):
        issues.append((f"{path}.name", f"{alt['name']!r} is not a DNS label"))
    issues += device_count_issues(alt.get("count", 1), f"{path}.count")
    device_class = alt.get("device_class")
    if device_class in classes:
        driver = classes[device_class].get("driver", device_selectors.NVIDIA_DRIVER)
        wanted = device_selectors.TPU_DRIVER if model.family == "tpu" else device_selectors.NVIDIA_DRIVER
        if driver != wanted:
            issues.append((f"{path}.device_class", f"{device_class} selects {driver} devices, but "
                                                   f"{alt.get('name') or accelerator} is a {model.family.upper()} "
                                                   f"({accelerator})"))
    return issues


def toleration_issues(tolerations: Any, path: str) -> Issues:
    """What the API server refuses in a request's tolerations (k8s.io/kubernetes v1.36.3
    pkg/apis/resource/validation ``validateDeviceToleration``: at most 16; operator ``Equal`` or ``Exists``, and
    ``Exists`` takes no value), plus an effect other than ``NoSchedule``/``NoExecute``: the API server also
    accepts ``None``, but a ``None`` taint never keeps a device out, so tolerating it is a mistake."""
    if not tolerations:
        return []
    if not isinstance(tolerations, list):
        return [(path, "a list of tolerations (key, operator, value, effect)")]
    issues: Issues = []
    if len(tolerations) > MAX_TOLERATIONS:
        issues.append((path, f"{len(tolerations)} tolerations; a request allows at most {MAX_TOLERATIONS}"))
    for i, t in enumerate(tolerations):
        where = f"{path}[{i}]"
        if not isinstance(t, Mapping) or set(t) - set(TOLERATION_FIELDS):
            issues.append((where, f"a toleration has only {', '.join(TOLERATION_FIELDS)}"))
            continue
        operator = t.get("operator") or "Equal"
        if operator not in ("Equal", "Exists"):
            issues.append((f"{where}.operator", f"{operator!r}: Equal or Exists"))
        if operator == "Exists" and t.get("value"):
            issues.append((f"{where}.value", "must be empty with operator Exists"))
        if t.get("effect") and t["effect"] not in ("NoSchedule", "NoExecute"):
            issues.append((f"{where}.effect", f"{t['effect']!r}: NoSchedule or NoExecute (or unset: both)"))
    return issues


def device_claim_issues(claim: Mapping[str, Any], path: str, classes: Mapping[str, Any]) -> Issues:
    """Problems with one claim, in argument names under ``path``."""
    chosen = [k for k in ("alternatives", "exactly", "mig") if claim.get(k)]
    if len(chosen) != 1:
        return [(path, f"set exactly one of alternatives, exactly or mig (found {', '.join(chosen) or 'none'})")]
    if not _DNS_LABEL.match(str(claim.get("namespace", ""))):
        return [(f"{path}.namespace", f"{claim.get('namespace')!r} is not a namespace name")]
    if claim.get("namespace") in RESERVED_NAMESPACES:
        return [(f"{path}.namespace", f"{claim['namespace']} belongs to Kubernetes")]
    tolerations = toleration_issues(claim.get("tolerations"), f"{path}.tolerations")
    if tolerations:
        return tolerations
    if claim.get("mig"):
        return mig_issues(claim["mig"], f"{path}.mig")
    if claim.get("exactly"):
        return _alternative_issues(claim["exactly"], f"{path}.exactly", classes, named=False)
    alternatives = claim["alternatives"]
    issues: Issues = []
    if len(alternatives) > MAX_ALTERNATIVES:
        issues.append((f"{path}.alternatives", f"{len(alternatives)} alternatives; DRA firstAvailable allows at "
                                               f"most {MAX_ALTERNATIVES}"))
    names = [a.get("name") for a in alternatives]
    if len(set(names)) != len(names):
        issues.append((f"{path}.alternatives", "alternative names must be unique"))
    for i, alt in enumerate(alternatives):
        issues += _alternative_issues(alt, f"{path}.alternatives[{i}]", classes, named=True)
    families = {m.family for a in alternatives if (m := catalog.accelerator(str(a.get("accelerator_type", ""))))}
    if len(families) > 1:
        issues.append((f"{path}.alternatives", "mixes GPU and TPU alternatives; a request holds one family"))
    return issues


def mig_issues(mig: Mapping[str, Any], path: str) -> Issues:
    model = catalog.GPUS.get(str(mig.get("accelerator_type", "")))
    if model is None or not model.mig_profiles:
        return [(f"{path}.accelerator_type", f"{mig.get('accelerator_type')} does not support MIG")]
    slices = mig.get("slices") or []
    issues: Issues = []
    if not slices:
        issues.append((f"{path}.slices", "list at least one slice"))
    names = [s.get("name") for s in slices]
    if len(set(names)) != len(names):
        issues.append((f"{path}.slices", "slice names must be unique"))
    for i, piece in enumerate(slices):
        if piece.get("profile") not in model.mig_profiles:
            issues.append((f"{path}.slices[{i}].profile",
                           f"{piece.get('profile')!r} is not a MIG profile of {model.type}; "
                           f"accepted: {', '.join(model.mig_profiles)}"))
    if slices and not issues:  # every slice comes from one GPU (matchAttribute parentUUID)
        problem = mig_geometry.layout_problem(model.type, [str(piece["profile"]) for piece in slices])
        if problem:
            issues.append((f"{path}.slices", problem))
    return issues


def device_class_issues(name: str, spec: Mapping[str, Any], path: str) -> Issues:
    issues: Issues = []
    if not is_dns_subdomain(name):
        issues.append((path, "a DeviceClass name is a DNS subdomain: lowercase letters, digits, '-' and '.'"))
    if name in catalog.DRIVER_DEVICE_CLASSES:
        issues.append((path, f"{name} is created by a DRA driver; choose another name"))
    issues += [(f"{path}.{key}", message) for key, message in at_least(spec, "min_memory_gi", 1, " GiB")]
    driver = spec.get("driver", device_selectors.NVIDIA_DRIVER)
    if driver not in DRIVERS:
        issues.append((f"{path}.driver", f"{driver!r} is not one of {', '.join(DRIVERS)}"))
    if driver == device_selectors.TPU_DRIVER:
        for key in ("min_memory_gi", "product_names", "architectures"):
            if spec.get(key):
                issues.append((f"{path}.{key}", "the TPU DRA driver publishes no such attribute; "
                                                "use expressions on tpuGen instead"))
    kind = spec.get("devices", "gpu")
    if kind not in DEVICE_KINDS:
        issues.append((f"{path}.devices", f"{kind!r} is not one of {', '.join(DEVICE_KINDS)}"))
    elif kind == "mig" and driver != device_selectors.NVIDIA_DRIVER:
        issues.append((f"{path}.devices", f"MIG slices are {device_selectors.NVIDIA_DRIVER} devices, not {driver}"))
    elif kind == "mig" and isinstance(spec.get("min_memory_gi"), int) and spec["min_memory_gi"] >= 1:
        gpus = devices.mig_gpus(list(spec.get("product_names") or []), list(spec.get("architectures") or []))
        if not devices.mig_slices_with(spec["min_memory_gi"], gpus):
            largest = max((p.memory_mib for g in gpus for p in mig_geometry.profiles_of(g).values()), default=0)
            issues.append((f"{path}.min_memory_gi",
                           f"no MIG slice of {', '.join(gpus) or 'any catalog GPU the filters admit'} has "
                           f"{spec['min_memory_gi']} GiB of memory (largest: {largest} MiB, as NVML reports "
                           "it); the class would select nothing"))
    return issues


def claims_issues(args: DraClaimsArgs) -> Issues:
    """Every problem with the DRA objects, in argument names."""
    classes = args.get("device_classes") or {}
    issues: Issues = []
    for name, spec in classes.items():
        issues += device_class_issues(name, spec, f"device_classes.{name}")
    for group in ("shared_claims", "claim_templates"):
        for key, claim in (args.get(group) or {}).items():
            issues += device_claim_issues(claim, f"{group}.{key}", classes)
    return issues


# ---------------------------------------------------------------- component


#: ResourceClaim and ResourceClaimTemplate specs are immutable (kubernetes/kubernetes
#: pkg/apis/resource/validation/validation.go: ValidateResourceClaimUpdate and
#: ValidateResourceClaimTemplateUpdate refuse any spec change), and pulumi-kubernetes does not list
#: them among the kinds it replaces on a spec change (provider/pkg/provider/diff.go), so an in-place
#: update would be refused by the API server. A changed spec replaces the object instead; the old one
#: goes first because the name stays the same.
IMMUTABLE_SPEC = {"replace_on_changes": ["spec"], "delete_before_replace": True}


def _labels(instance: str | None = None) -> dict[str, str]:
    labels = {"app.kubernetes.io/part-of": "gpu-fungibility", "app.kubernetes.io/managed-by": "pulumi"}
    if instance:
        labels["app.kubernetes.io/instance"] = instance
    return labels


class DraClaims(LibraryComponent):
    """DeviceClasses, shared ResourceClaims and per-workload ResourceClaimTemplates (provider via ``opts``).

    Make it depend on the DRA drivers (whose DeviceClasses the claims name) and on the namespaces the
    claims live in: its children wait for them.
    """

    LEGACY_TYPE = "gpu-fungibility:claims:DraClaims"

    device_class_names: list[str]
    """The DeviceClasses created."""
    shared_claim_names: list[str]
    """The shared ResourceClaims created."""
    claim_template_names: dict[str, str]
    """Each ResourceClaimTemplate's name, by the workload key it was given under."""

    @classmethod
    def issues(cls, name: str, args: Any) -> Issues:
        return claims_issues(args)

    def __init__(self, name: str, args: DraClaimsArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__(name, opts)
        self.fail_on(self.check(name, args))
        self._resources: dict[tuple[str, str], pulumi.Resource] = {}
        classes = {}
        for class_name, spec in (args.get("device_classes") or {}).items():
            classes[class_name] = resource_v1.DeviceClass(
                f"{name}-deviceclass-{class_name}",
                metadata=ObjectMetaArgs(name=class_name, labels=_labels()),
                spec=device_class_spec(spec),
                opts=self.child(),
            )
        for claim_name, claim in (args.get("shared_claims") or {}).items():
            self._resources[("claim", claim_name)] = resource_v1.ResourceClaim(
                f"{name}-shared-{claim_name}",
                metadata=ObjectMetaArgs(name=claim_name, namespace=claim["namespace"], labels=_labels()),
                spec=claim_spec(claim),
                opts=self.child(depends_on=self._classes_used(claim, classes), **IMMUTABLE_SPEC),
            )
        for key, claim in (args.get("claim_templates") or {}).items():
            self._resources[("template", key)] = resource_v1.ResourceClaimTemplate(
                f"{name}-template-{key}",
                metadata=ObjectMetaArgs(name=template_name(key), namespace=claim["namespace"], labels=_labels(key)),
                spec=resource_v1.ResourceClaimTemplateSpecArgs(
                    metadata=ObjectMetaArgs(labels=_labels(key)),
                    spec=claim_spec(claim),
                ),
                opts=self.child(depends_on=self._classes_used(claim, classes), **IMMUTABLE_SPEC),
            )
        self.device_class_names = list(classes)
        self.shared_claim_names = list(args.get("shared_claims") or {})
        self.claim_template_names = {key: template_name(key) for key in args.get("claim_templates") or {}}
        self.register()

    @staticmethod
    def _classes_used(claim: Mapping[str, Any], classes: Mapping[str, pulumi.Resource]) -> list[pulumi.Resource]:
        alternatives: Sequence[Mapping[str, Any]] = claim.get("alternatives") or (
            [claim["exactly"]] if claim.get("exactly") else [])
        used = dict.fromkeys(a.get("device_class") for a in alternatives)
        return [classes[c] for c in used if c in classes]

    def template(self, key: str) -> pulumi.Resource:
        """The ResourceClaimTemplate created under ``key`` (for ``depends_on``)."""
        return self._resources[("template", key)]

    def shared_claim(self, name: str) -> pulumi.Resource:
        """The shared ResourceClaim ``name`` (for ``depends_on``)."""
        return self._resources[("claim", name)]
