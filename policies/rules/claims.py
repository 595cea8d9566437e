"""DRA claim rules (stack).

``claim-shape``: every DeviceRequest of a ResourceClaim / ResourceClaimTemplate
sets exactly one of ``exactly`` and ``firstAvailable``; ``firstAvailable`` holds
1 to 8 subrequests; every device class it names exists (a DeviceClass in the
stack, or one a driver release in the stack creates); every CEL selector (of
requests and of DeviceClasses) compiles. And what Kubernetes' allocator
refuses (kubernetes/kubernetes staging/src/k8s.io/dynamic-resource-allocation/
structured/internal/incubating/allocator_incubating.go): an allocation mode
other than ``ExactCount``/``All`` (case-sensitive; ``all`` is not ``All``), a
``count`` below one, a selector without ``cel``, a constraint without
``matchAttribute`` (or ``distinctAttribute``), a claim needing more than 32
devices (``AllocationResultsMaxSize``).

``claim-follows-compute-class``: a workload's claim alternatives are its
compute class's pools, in order, and its pods can run on each of them. Where
the order lives is the cloud's (its rules module's ``autoscaler_order_checks``:
GKE's ComputeClass priorities, :mod:`.gke_compute_class`; the Cluster
Autoscaler priority expander on EKS and AKS, :mod:`.priority_expander`). On
every cloud, the pool of every alternative must admit the workload's pods
(nodeSelector, required affinity, tolerations, with those the cloud adds to a
pod, ``CloudProfile.implied_tolerations``), and a claim without named
alternatives must fit at least one pool of its device family.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

from gpu_fungibility import mig_geometry
from gpu_fungibility.catalog import GPUS
from gpu_fungibility.device_selectors import MIG_DEVICE_CLASS, MIG_PARENT_ATTRIBUTE
from gpu_fungibility.node_selection import evaluate
from pulumi_policy import ReportViolation, StackValidationArgs

from .. import cloud_parts
from ..cel import compile_error
from ..stack_view import HELM_RELEASE, WORKLOAD_KINDS, Pool, Res, StackView, dig
from ..unknowns import Pending, has_unknown, unknown_paths
from .common import (
    claim_alternatives,
    claim_requests,
    claims_of,
    note_unknown_pod_specs,
    pod_placement,
    pool_for,
    workloads,
)

MAX_SUBREQUESTS = 8
#: resource.k8s.io AllocationResultsMaxSize: the most devices one claim's allocation holds.
MAX_DEVICES_PER_CLAIM = 32
ALLOCATION_MODES = ("ExactCount", "All")


def _selector_expressions(selectors: Any) -> Iterator[str]:
    for selector in selectors or []:
        if isinstance(selector, Mapping):
            yield str(dig(selector, "cel", "expression", default=""))


def request_problems(request: Mapping[str, Any], known_classes: set[str]) -> list[str]:
    """Everything wrong with one DeviceRequest (empty when it is well-formed)."""
    name = request.get("name") or "<unnamed>"
    problems: list[str] = []
    exactly = request.get("exactly")
    first_available = request.get("firstAvailable")
    if (exactly is None) == (first_available is None):
        which = "both" if exactly is not None else "neither"
        problems.append(f"request {name} sets {which} of exactly/firstAvailable (exactly one is required)")
    alternatives: list[tuple[str, Mapping[str, Any]]] = []
    if isinstance(exactly, Mapping):
        alternatives.append((f"request {name}", exactly))
    if first_available is not None:
        subrequests = [s for s in first_available or [] if isinstance(s, Mapping)]
        if not subrequests:
            problems.append(f"request {name} has an empty firstAvailable list")
        if len(subrequests) > MAX_SUBREQUESTS:
            problems.append(f"request {name} has {len(subrequests)} firstAvailable subrequests; "
                            f"DRA allows at most {MAX_SUBREQUESTS}")
        alternatives.extend((f"request {name}/{s.get('name') or '<unnamed>'}", s) for s in subrequests)
    for where, alternative in alternatives:
        mode = alternative.get("allocationMode") or "ExactCount"
        if mode not in ALLOCATION_MODES:
            problems.append(f"{where}: allocationMode {mode!r} is not one of {', '.join(ALLOCATION_MODES)} "
                            "(case-sensitive): the allocator refuses the claim")
        elif mode == "ExactCount" and _count(alternative) < 1:
            problems.append(f"{where}: count must be 1 or more, got {alternative.get('count')!r}")
        for i, selector in enumerate(alternative.get("selectors") or []):
            if not (isinstance(selector, Mapping) and isinstance(selector.get("cel"), Mapping)):
                problems.append(f"{where}: selector #{i} has no cel expression (the only selector kind Kubernetes "
                                "knows)")
        device_class = alternative.get("deviceClassName")
        if not device_class:
            problems.append(f"{where} names no deviceClassName")
        elif device_class not in known_classes:
            problems.append(f"{where} uses device class {device_class}, which neither the stack nor a driver in it "
                            "creates")
        for expression in _selector_expressions(alternative.get("selectors")):
            error = compile_error(expression)
            if error:
                problems.append(f"{where}: CEL selector {expression!r} does not compile: {error}")
    return problems


def _count(alternative: Mapping[str, Any]) -> int:
    try:
        return int(alternative.get("count", 1))
    except (TypeError, ValueError):
        return 0


def claim_problems(claim: Res) -> list[str]:
    """What the allocator refuses about the claim as a whole: constraints and its size."""
    problems = []
    devices = dig(claim.props, *(("spec", "spec", "devices") if claim.kind == "ResourceClaimTemplate"
                                 or claim.type.endswith(":ResourceClaimTemplate") else ("spec", "devices")),
                  default={}) or {}
    for i, constraint in enumerate(devices.get("constraints") or []):
        if not isinstance(constraint, Mapping) or not (constraint.get("matchAttribute")
                                                       or constraint.get("distinctAttribute")):
            problems.append(f"constraint #{i} sets neither matchAttribute nor distinctAttribute: the allocator "
                            "refuses an empty constraint")
    fewest = 0
    for request in claim_requests(claim):
        bodies = request.get("firstAvailable") or [request.get("exactly") or request]
        counts = [_count(b) if (b.get("allocationMode") or "ExactCount") == "ExactCount" else 1
                  for b in bodies if isinstance(b, Mapping)]
        fewest += min(counts) if counts else 0
    if fewest > MAX_DEVICES_PER_CLAIM:
        problems.append(f"it asks for at least {fewest} devices; one claim holds at most {MAX_DEVICES_PER_CLAIM}")
    return problems + mig_layout_problems(devices)


_PROFILE = re.compile(r"\.profile\s*==\s*['\"]([^'\"]+)['\"]")
_PRODUCT = re.compile(r"productName\s*==\s*['\"]([^'\"]+)['\"]")


def mig_layout_problems(devices: Mapping[str, Any]) -> list[str]:
    """MIG slices a claim takes from one GPU (a ``matchAttribute`` on the parent's UUID) must fit that GPU's
    real slice geometry (:mod:`gpu_fungibility.mig_geometry`): eight 7g.80gb never come from one A100."""
    requests = {str(r.get("name")): r for r in devices.get("requests") or [] if isinstance(r, Mapping)}
    problems = []
    for constraint in devices.get("constraints") or []:
        if not isinstance(constraint, Mapping) or constraint.get("matchAttribute") != MIG_PARENT_ATTRIBUTE:
            continue
        names = constraint.get("requests") or list(requests)
        layout, products = [], set()
        for name in names:
            body = (requests.get(str(name)) or {}).get("exactly") or {}
            if not isinstance(body, Mapping) or body.get("deviceClassName") != MIG_DEVICE_CLASS:
                continue
            text = " ".join(_selector_expressions(body.get("selectors")))
            profile, product = _PROFILE.search(text), _PRODUCT.search(text)
            if profile is None or product is None:
                break  # a selector this check cannot read: judged by the allocator, not here
            layout += [profile.group(1)] * max(_count(body), 1)
            products.add(product.group(1))
        else:
            gpu = next((g.type for g in GPUS.values() if products == {g.product_name}), None)
            problem = mig_geometry.layout_problem(gpu, layout) if gpu and layout else None
            if problem:
                problems.append(f"its MIG requests must come from one GPU (matchAttribute {MIG_PARENT_ATTRIBUTE}), "
                                f"but {problem}")
    return problems


def known_device_classes(view: StackView) -> set[str]:
    classes = {r.k8s_name for r in view.k8s("DeviceClass")}
    for release in view.releases:
        classes.update(release.device_classes())
    return classes


def validate_claim_shape(args: StackValidationArgs, report_violation: ReportViolation) -> None:
    view = StackView.from_policy_resources(args.resources)
    pending = Pending()
    view.note_unknown(pending, "ResourceClaimTemplate", "ResourceClaim")
    # A class a driver release or a DeviceClass not known yet may create: "no one creates it" waits for them.
    classes_pending = view.unknown_of("DeviceClass", HELM_RELEASE)
    known = known_device_classes(view)
    for claim in [*view.k8s("ResourceClaimTemplate"), *view.k8s("ResourceClaim")]:
        unknown = list(unknown_paths(claim.props.get("spec")))
        if unknown:
            pending.add(f"spec.{', spec.'.join(unknown)}", f"{claim.title} ({claim.urn})")
            continue
        problems = [p for request in claim_requests(claim) for p in request_problems(request, known)]
        problems += claim_problems(claim)
        if not claim_requests(claim):
            problems.append("it has no device requests")
        for problem in problems:
            if classes_pending and "neither the stack nor a driver in it creates" in problem:
                view.note_unknown(pending, "DeviceClass", HELM_RELEASE)
                pending.add("whether its device classes exist", f"{claim.title} ({claim.urn})")
                continue
            report_violation(f"{claim.kind or 'claim'} {claim.k8s_name}: {problem}", claim.urn)
    for device_class in view.k8s("DeviceClass"):
        if has_unknown(device_class.props.get("spec")):
            pending.add("its selectors", f"{device_class.title} ({device_class.urn})")
            continue
        for expression in _selector_expressions(dig(device_class.props, "spec", "selectors")):
            error = compile_error(expression)
            if error:
                report_violation(f"DeviceClass {device_class.k8s_name}: CEL selector {expression!r} does not "
                                 f"compile: {error}", device_class.urn)
    pending.finish()


# ---- claim-follows-compute-class -------------------------------------------------------


def _claim_device_classes(claim: Res) -> set[str]:
    classes = set()
    for request in claim_requests(claim):
        for alternative in [request.get("exactly"), *(request.get("firstAvailable") or [])]:
            if isinstance(alternative, Mapping) and alternative.get("deviceClassName"):
                classes.add(str(alternative["deviceClassName"]))
    return classes


def _admission_checks(view: StackView, report_violation: ReportViolation, pending: Pending) -> None:
    """Every pool a claim alternative names admits the workload's pods; some pool admits them at all."""
    for workload, spec in workloads(view):
        claims = claims_of(view, workload, spec)
        if not claims:
            continue
        unknown = has_unknown([spec.get(k) for k in ("nodeSelector", "affinity", "tolerations")])
        if unknown or any(has_unknown(claim_requests(c)) for c in claims):
            pending.add("its pods' placement or its claims' requests", f"{workload.title} ({workload.urn})")
            continue
        placement = pod_placement(spec, view.cloud)
        named: list[tuple[str, Pool]] = []
        for claim in claims:
            for _, names in claim_alternatives(claim):
                named.extend((n, p) for n in names if (p := pool_for(n, view.pools)) is not None)
        where = f"{workload.kind} {workload.k8s_name}"
        for alternative, pool in named:
            verdict = evaluate(placement, pool.node_labels, pool.taints)
            if not verdict.runs:
                report_violation(f"{where}: claim alternative {alternative} is {pool.title}, but the pods cannot run "
                                 f"there ({'; '.join(verdict.reasons)}), so that alternative can never be allocated",
                                 workload.urn)
        if named:
            continue
        families = {"gpu" if c.endswith("nvidia.com") else "tpu" if c.endswith("google.com") else "other"
                    for claim in claims for c in _claim_device_classes(claim)}
        candidates = [p for p in view.accelerator_pools() if p.family in families]
        if candidates and not any(evaluate(placement, p.node_labels, p.taints).runs for p in candidates):
            report_violation(f"{where}: its pods fit none of the pools that can serve its claim "
                             f"({', '.join(p.pool_name for p in candidates)}), so they would pend forever",
                             workload.urn)


def validate_claim_follows_compute_class(args: StackValidationArgs, report_violation: ReportViolation) -> None:
    view = StackView.from_policy_resources(args.resources)
    pending = Pending()
    view.note_unknown(pending, *WORKLOAD_KINDS, "ResourceClaimTemplate", "ResourceClaim")
    note_unknown_pod_specs(view, pending)
    for workload, spec in workloads(view):
        if has_unknown(spec.get("resourceClaims")):
            pending.add("the claims its pods use", f"{workload.title} ({workload.urn})")
    if view.cloud is not None:
        cloud_parts.part(view.cloud, "rules").autoscaler_order_checks(view, report_violation, pending)
    _admission_checks(view, report_violation, pending)
    pending.finish()

