"""DRA objects: DeviceClasses, shared ResourceClaims and the workloads' claim templates.

The claim specs are built by pure functions from the stack config, so the
one ordered list of a compute class (its ``pools``) is the only input to both
the autoscaler's fallback order and the claim's ``firstAvailable`` list:

- compute class ``C`` with pools ``[p1, p2, ...]`` -> one request whose
  ``firstAvailable`` holds one subrequest per pool, in order: name = the pool,
  ``count`` = the pool's accelerators per node, selector = that pool's
  accelerator (:func:`components.selectors.accelerator_selector`);
- one ``pool`` -> one ``exactly`` request with the same count and selector;
- TPU -> ``deviceClassName: tpu.google.com``, ``allocationMode: All``
  (the TPU driver allocates all chips of a node together);
- MIG -> one ``mig.nvidia.com`` request per slice, selected by profile, and a
  ``matchAttribute: gpu.nvidia.com/parentUUID`` constraint over them all.

:class:`DraClaims` creates the objects; :class:`ClaimRef` tells a workload how
its pods reference their claim.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import pulumi
from pulumi_kubernetes.meta.v1 import ObjectMetaArgs
from pulumi_kubernetes.resource import v1 as resource_v1

from components import selectors
from stacks.config import DeviceClassConfig, SharedClaim, StackConfig, Workload

EXACT_COUNT = "ExactCount"
ALL_DEVICES = "All"
MIG_REQUEST_CLAIM = "mig"

# DeviceClass names are DNS subdomains (RFC 1123).
DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")

Issues = list[tuple[str, str]]


# ---------------------------------------------------------------- pure specs


def family_request_name(family: str) -> str:
    """The request (and pod claim entry) name of a GPU or TPU claim: ``gpu`` / ``tpu``."""
    return family


def default_device_class(family: str) -> str:
    return selectors.TPU_DEVICE_CLASS if family == "tpu" else selectors.GPU_DEVICE_CLASS


def template_name(workload_name: str) -> str:
    """The ResourceClaimTemplate of a workload."""
    return f"{workload_name}-claim"


def _selector(expression: str) -> resource_v1.DeviceSelectorArgs:
    return resource_v1.DeviceSelectorArgs(cel=resource_v1.CELDeviceSelectorArgs(expression=expression))


def _pool_request_fields(cfg: StackConfig, pool_name: str, device_class: str | None) -> dict:
    """What a pool's alternative and its ``exactly`` request share: class, mode, count, selector."""
    pool = cfg.node_pools[pool_name]
    fields = {
        "device_class_name": device_class or default_device_class(pool.family),
        "selectors": [_selector(selectors.accelerator_selector(pool.accelerator.type))],
    }
    if pool.family == "tpu":
        return {**fields, "allocation_mode": ALL_DEVICES}
    return {**fields, "allocation_mode": EXACT_COUNT, "count": pool.accelerator.count}


def pool_subrequest(cfg: StackConfig, pool_name: str, device_class: str | None = None) -> resource_v1.DeviceSubRequestArgs:
    """One ``firstAvailable`` alternative: a whole node's worth of the pool's accelerator."""
    return resource_v1.DeviceSubRequestArgs(name=pool_name, **_pool_request_fields(cfg, pool_name, device_class))


def pool_exact_request(cfg: StackConfig, pool_name: str, device_class: str | None = None) -> resource_v1.ExactDeviceRequestArgs:
    """The ``exactly`` request for one pool (same count and selector as its alternative)."""
    return resource_v1.ExactDeviceRequestArgs(**_pool_request_fields(cfg, pool_name, device_class))


def placement_request(
    cfg: StackConfig, target: Workload | SharedClaim, device_class: str | None = None,
) -> resource_v1.DeviceRequestArgs:
    """The one request of a compute-class or pool claim (a workload or a shared claim)."""
    family = cfg.family_of(target)
    name = family_request_name(family)
    if target.compute_class:
        pools = cfg.placement_pools(target)
        return resource_v1.DeviceRequestArgs(
            name=name, first_available=[pool_subrequest(cfg, p, device_class) for p in pools])
    assert target.pool is not None
    return resource_v1.DeviceRequestArgs(name=name, exactly=pool_exact_request(cfg, target.pool, device_class))


def mig_claim_spec(cfg: StackConfig, workload: Workload) -> resource_v1.ResourceClaimSpecArgs:
    """One ``mig.nvidia.com`` request per slice, all from the same physical GPU."""
    assert workload.pool is not None and workload.mig
    accelerator = cfg.node_pools[workload.pool].accelerator.type
    requests = [
        resource_v1.DeviceRequestArgs(
            name=piece.name,
            exactly=resource_v1.ExactDeviceRequestArgs(
                device_class_name=selectors.MIG_DEVICE_CLASS,
                allocation_mode=EXACT_COUNT,
                count=1,
                selectors=[_selector(selectors.mig_slice_selector(accelerator, piece.profile))],
            ),
        )
        for piece in workload.mig
    ]
    constraints = None
    if len(workload.mig) > 1:
        constraints = [resource_v1.DeviceConstraintArgs(
            requests=[piece.name for piece in workload.mig],
            match_attribute=selectors.MIG_PARENT_ATTRIBUTE,
        )]
    return resource_v1.ResourceClaimSpecArgs(
        devices=resource_v1.DeviceClaimArgs(requests=requests, constraints=constraints))


def workload_claim_spec(cfg: StackConfig, workload_name: str) -> resource_v1.ResourceClaimSpecArgs:
    """The claim each pod of a (non-shared) workload gets from its template."""
    workload = cfg.workloads[workload_name]
    if workload.shared_claim:
        raise ValueError(f"workload {workload_name} uses shared claim {workload.shared_claim}, not a template")
    if workload.mig:
        return mig_claim_spec(cfg, workload)
    return resource_v1.ResourceClaimSpecArgs(
        devices=resource_v1.DeviceClaimArgs(requests=[placement_request(cfg, workload)]))


def shared_claim_spec(cfg: StackConfig, claim_name: str) -> resource_v1.ResourceClaimSpecArgs:
    """A named claim several pods share; an optional stack DeviceClass replaces the driver's."""
    claim = cfg.shared_claims[claim_name]
    return resource_v1.ResourceClaimSpecArgs(
        devices=resource_v1.DeviceClaimArgs(requests=[placement_request(cfg, claim, claim.device_class)]))


def device_class_spec(device_class: DeviceClassConfig) -> resource_v1.DeviceClassSpecArgs:
    expression = selectors.device_class_expression(
        device_class.driver,
        min_memory_gi=device_class.min_memory_gi,
        product_names=list(device_class.product_names),
        architectures=list(device_class.architectures),
        expressions=list(device_class.expressions),
    )
    return resource_v1.DeviceClassSpecArgs(selectors=[_selector(expression)])


# ---------------------------------------------------------------- references


@dataclass(frozen=True)
class ContainerClaim:
    """What one container of a workload binds to: the pod claim entry and, for MIG, its request."""

    container: str | None  # None: the workload's single serving container
    request: str | None


@dataclass(frozen=True)
class ClaimRef:
    """How a workload's pods reference their claim (``spec.resourceClaims`` + container claims)."""

    pod_claim_name: str
    template_name: str | None = None
    claim_name: str | None = None
    containers: tuple[ContainerClaim, ...] = (ContainerClaim(None, None),)
    resource: pulumi.Resource | None = field(default=None, compare=False)


def claim_ref(cfg: StackConfig, workload_name: str, resource: pulumi.Resource | None = None) -> ClaimRef:
    """The reference for a workload: its template, or the shared claim it names."""
    workload = cfg.workloads[workload_name]
    if workload.shared_claim:
        family = cfg.family_of(workload)
        return ClaimRef(pod_claim_name=family_request_name(family), claim_name=workload.shared_claim,
                        resource=resource)
    if workload.mig:
        return ClaimRef(
            pod_claim_name=MIG_REQUEST_CLAIM,
            template_name=template_name(workload_name),
            containers=tuple(ContainerClaim(piece.name, piece.name) for piece in workload.mig),
            resource=resource,
        )
    family = cfg.family_of(workload)
    return ClaimRef(pod_claim_name=family_request_name(family), template_name=template_name(workload_name),
                    resource=resource)


# ---------------------------------------------------------------- validation


def claim_issues(cfg: StackConfig) -> Issues:
    """Problems the config model does not catch but the generated objects would hit.

    (The 8-alternative limit and ``minAcceleratorMemoryGi`` are config-model
    rules in :mod:`stacks.rules`.)
    """
    issues: Issues = []
    for name, device_class in cfg.device_classes.items():
        path = f"deviceClasses.{name}"
        if len(name) > 253 or not DNS_SUBDOMAIN.match(name):
            issues.append((path, "a DeviceClass name is a DNS subdomain: lowercase letters, digits, '-' and '.'"))
        if device_class.driver == selectors.TPU_DRIVER:
            for key, value in (("minMemoryGi", device_class.min_memory_gi),
                               ("productNames", device_class.product_names),
                               ("architectures", device_class.architectures)):
                if value:
                    issues.append((f"{path}.{key}", "the TPU DRA driver publishes no such attribute; "
                                                    "use expressions on tpuGen instead"))
    for name, claim in cfg.shared_claims.items():
        if not claim.device_class or claim.device_class not in cfg.device_classes:
            continue
        pools = [p for p in cfg.placement_pools(claim) if p in cfg.node_pools]
        driver = cfg.device_classes[claim.device_class].driver
        wrong = [p for p in pools if default_device_class(cfg.node_pools[p].family) != driver]
        if wrong:
            issues.append((f"sharedClaims.{name}.deviceClass",
                           f"{claim.device_class} selects {driver} devices, but {', '.join(wrong)} "
                           f"carries another accelerator family"))
    return issues


# ---------------------------------------------------------------- component


@dataclass
class DraClaimsArgs:
    """``config``: the stack config. ``wait_for``: what the claims need first
    (the DRA drivers whose DeviceClasses they name, the namespaces they live in)."""

    config: StackConfig
    wait_for: Sequence[pulumi.Resource] = ()


class DraClaims(pulumi.ComponentResource):
    """The stack's DeviceClasses, shared ResourceClaims and per-workload ResourceClaimTemplates."""

    device_classes: dict[str, resource_v1.DeviceClass]
    shared_claims: dict[str, resource_v1.ResourceClaim]
    claim_templates: dict[str, resource_v1.ResourceClaimTemplate]
    claim_refs: dict[str, ClaimRef]

    def __init__(self, name: str, args: DraClaimsArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("gpu-fungibility:claims:DraClaims", name, None, opts)
        cfg = args.config
        issues = claim_issues(cfg)
        if issues:
            from stacks.loader import ConfigError

            raise ConfigError(issues)
        wait_for = list(args.wait_for)
        self.device_classes = {
            dc_name: _device_class(name, dc_name, dc, self, wait_for)
            for dc_name, dc in cfg.device_classes.items()
        }
        self.shared_claims = _shared_claims(name, cfg, self, wait_for)
        self.claim_templates = {
            wl_name: _claim_template(name, cfg, wl_name, self, wait_for)
            for wl_name, wl in cfg.workloads.items() if not wl.shared_claim
        }
        self.claim_refs = {
            wl_name: claim_ref(
                cfg, wl_name,
                self.shared_claims[wl.shared_claim] if wl.shared_claim else self.claim_templates[wl_name])
            for wl_name, wl in cfg.workloads.items()
        }
        self.register_outputs({
            "deviceClasses": list(self.device_classes),
            "sharedClaims": list(self.shared_claims),
            "claimTemplates": {n: template_name(n) for n in self.claim_templates},
        })


def _classes_of(component: DraClaims, claim: SharedClaim) -> list[pulumi.Resource]:
    return [component.device_classes[claim.device_class]] if claim.device_class else []


def _device_class(prefix: str, dc_name: str, dc: DeviceClassConfig, parent: pulumi.Resource,
                  wait_for: list[pulumi.Resource]) -> resource_v1.DeviceClass:
    return resource_v1.DeviceClass(
        f"{prefix}-deviceclass-{dc_name}",
        metadata=ObjectMetaArgs(name=dc_name, labels=_labels()),
        spec=device_class_spec(dc),
        opts=pulumi.ResourceOptions(parent=parent, depends_on=wait_for),
    )


def _shared_claims(prefix: str, cfg: StackConfig, component: DraClaims,
                   wait_for: list[pulumi.Resource]) -> dict[str, resource_v1.ResourceClaim]:
    claims: dict[str, resource_v1.ResourceClaim] = {}
    for claim_name, claim in cfg.shared_claims.items():
        claims[claim_name] = resource_v1.ResourceClaim(
            f"{prefix}-shared-{claim_name}",
            metadata=ObjectMetaArgs(name=claim_name, namespace=claim.namespace, labels=_labels()),
            spec=shared_claim_spec(cfg, claim_name),
            opts=pulumi.ResourceOptions(parent=component, depends_on=[*wait_for, *_classes_of(component, claim)]),
        )
    return claims


def _claim_template(prefix: str, cfg: StackConfig, wl_name: str, parent: pulumi.Resource,
                    wait_for: list[pulumi.Resource]) -> resource_v1.ResourceClaimTemplate:
    workload = cfg.workloads[wl_name]
    return resource_v1.ResourceClaimTemplate(
        f"{prefix}-template-{wl_name}",
        metadata=ObjectMetaArgs(name=template_name(wl_name), namespace=workload.namespace,
                                labels=_labels(wl_name)),
        spec=resource_v1.ResourceClaimTemplateSpecArgs(
            metadata=ObjectMetaArgs(labels=_labels(wl_name)),
            spec=workload_claim_spec(cfg, wl_name),
        ),
        opts=pulumi.ResourceOptions(parent=parent, depends_on=wait_for),
    )


def _labels(workload_name: str | None = None) -> Mapping[str, str]:
    labels = {"app.kubernetes.io/part-of": "gpu-fungibility", "app.kubernetes.io/managed-by": "pulumi"}
    if workload_name:
        labels["app.kubernetes.io/instance"] = workload_name
    return labels

