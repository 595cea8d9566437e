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
compute class's pools, in order, and its pods can run on each of them. On GKE the class is the pod's
``cloud.google.com/compute-class`` nodeSelector and its order the ComputeClass
``priorities[].nodepools``: the ``firstAvailable`` subrequest names must equal
that list. On EKS the order lives in the Cluster Autoscaler priority expander
ConfigMap (``cluster-autoscaler-priority-expander``, ``data.priorities``): each
alternative's node group must match a priority regex, and the alternatives'
priorities must strictly decrease (first alternative = highest priority).
On both clouds, the pool of every alternative must admit the workload's pods
(nodeSelector, required affinity, tolerations; GKE adds the compute-class
toleration to pods selecting a class), and a claim without named alternatives
must fit at least one pool of its device family.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

import yaml
from gpu_fungibility import clouds, mig_geometry
from gpu_fungibility.catalog import GPUS
from gpu_fungibility.device_selectors import MIG_DEVICE_CLASS, MIG_PARENT_ATTRIBUTE
from gpu_fungibility.node_selection import evaluate
from pulumi_policy import ReportViolation, StackValidationArgs

from .. import facts
from ..cel import compile_error
from ..stack_view import AKS_CLUSTER, HELM_RELEASE, WORKLOAD_KINDS, Pool, Res, StackView, dig
from ..unknowns import Pending, dig_known, has_unknown, is_unknown, unknown_paths
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
PRIORITY_EXPANDER_CONFIGMAP = "cluster-autoscaler-priority-expander"


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


def _compute_class_of(spec: Mapping[str, Any]) -> str | None:
    """The compute class a pod spec selects (callers check its placement is known first)."""
    selected = dig(spec, "nodeSelector", facts.GKE_COMPUTE_CLASS)
    if selected:
        return str(selected)
    terms = dig(spec, "affinity", "nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution",
                "nodeSelectorTerms", default=[]) or []
    for term in terms if isinstance(terms, list) else []:
        for expression in (term if isinstance(term, Mapping) else {}).get("matchExpressions") or []:
            if not isinstance(expression, Mapping):
                continue
            values = expression.get("values") or []
            if expression.get("key") == facts.GKE_COMPUTE_CLASS and expression.get("operator") == "In" \
                    and len(values) == 1:
                return str(values[0])
    return None


def _gke_checks(view: StackView, report_violation: ReportViolation, pending: Pending) -> None:
    classes = {c.k8s_name: c for c in view.k8s("ComputeClass")}
    classes_unknown = view.note_unknown(pending, "ComputeClass")
    for compute_class in view.k8s("ComputeClass"):
        if is_unknown(dig(compute_class.props, "metadata", "name")) or is_unknown(compute_class.props.get("metadata")):
            pending.add("its name", f"{compute_class.title} ({compute_class.urn})")
            classes_unknown = True
    pool_names = {p.pool_name for p in view.pools}
    for name, compute_class in list(classes.items()):
        if has_unknown(compute_class.props.get("spec")):
            pending.add("its priorities", f"{compute_class.title} ({compute_class.urn})")
            continue
        for pool in _class_pools(compute_class):
            if pool not in pool_names:
                report_violation(f"ComputeClass {name} lists node pool {pool}, which the stack does not create",
                                 compute_class.urn)
    for workload, spec in workloads(view):
        class_name = _compute_class_of(spec)
        if class_name and is_unknown(class_name) or has_unknown([spec.get("nodeSelector"), spec.get("affinity")]):
            pending.add("the compute class its pods select", f"{workload.title} ({workload.urn})")
            continue
        if not class_name:
            continue
        compute_class = classes.get(class_name)
        if compute_class is None and classes_unknown:
            pending.add(f"whether compute class {class_name} exists", f"{workload.title} ({workload.urn})")
            continue
        if compute_class is None:
            report_violation(f"{workload.kind} {workload.k8s_name} selects compute class {class_name}, which the "
                             "stack does not create", workload.urn)
            continue
        if has_unknown(compute_class.props.get("spec")):
            continue
        expected = _class_pools(compute_class)
        for claim in claims_of(view, workload, spec):
            if has_unknown(claim_requests(claim)):
                pending.add("its device requests", f"{claim.title} ({claim.urn})")
                continue
            for request, names in claim_alternatives(claim):
                if names == expected or (not names and len(expected) <= 1):
                    continue
                got = names or ["a single `exactly` alternative"]
                report_violation(
                    f"{workload.kind} {workload.k8s_name}: {claim.kind} {claim.k8s_name} request {request} tries "
                    f"[{', '.join(got)}] but compute class {class_name} scales up [{', '.join(expected)}]; the claim's "
                    "firstAvailable alternatives must be the class's pools in the same order",
                    workload.urn,
                )


def _class_pools(compute_class: Res) -> list[str]:
    return [str(p) for priority in dig(compute_class.props, "spec", "priorities", default=[]) or []
            if isinstance(priority, Mapping) for p in priority.get("nodepools") or []]


def _expander_priorities(configmap: Res) -> list[tuple[int, str]] | str:
    """[(priority, regex)] from the ConfigMap's ``data.priorities``, or an error message."""
    text = dig(configmap.props, "data", "priorities")
    try:
        parsed = yaml.safe_load(text) if isinstance(text, str) else text
    except yaml.YAMLError as exc:
        return f"data.priorities is not YAML ({exc.__class__.__name__})"
    if not isinstance(parsed, Mapping):
        return "data.priorities is not a mapping of priority -> [node group regex]"
    pairs: list[tuple[int, str]] = []
    for priority, patterns in parsed.items():
        try:
            value = int(priority)
        except (TypeError, ValueError):
            return f"priority {priority!r} is not an integer"
        for pattern in patterns if isinstance(patterns, list) else [patterns]:
            pairs.append((value, str(pattern)))
    return pairs


def _node_group_priority(pool: Pool, priorities: list[tuple[int, str]]) -> int | None:
    """The highest priority whose regex matches the node group (its name or its managed ASG name)."""
    # The names a node group goes by: the pool's own, an EKS managed group's ASG, an AKS pool's scale set.
    candidates = (pool.pool_name, f"eks-{pool.pool_name}-00000000-0000-0000-0000-000000000000",
                  f"aks-{pool.pool_name}-12345678-vmss")
    matched = []
    for value, pattern in priorities:
        try:
            if any(re.search(pattern, c) for c in candidates):
                matched.append(value)
        except re.error:
            continue
    return max(matched) if matched else None


def _eks_checks(view: StackView, report_violation: ReportViolation, pending: Pending) -> None:
    configmaps = [c for c in view.k8s("ConfigMap") if c.k8s_name == PRIORITY_EXPANDER_CONFIGMAP]
    configmaps_unknown = view.note_unknown(pending, "ConfigMap") or any(
        has_unknown([c.props.get("metadata"), dig(c.props, "metadata", "name")]) for c in view.k8s("ConfigMap"))
    view.note_unknown(pending, HELM_RELEASE)
    for release in view.of_type("kubernetes:helm.sh/v3:Release"):
        if str(release.props.get("chart") or "").rstrip("/").rsplit("/", 1)[-1] == "cluster-autoscaler":
            expander = str(dig(release.props, "values", "extraArgs", "expander", default=""))
            if not dig_known(release.props, "values", "extraArgs", "expander")[0]:
                pending.add("values.extraArgs.expander", f"{release.title} ({release.urn})")
            elif "priority" not in expander:
                report_violation("the Cluster Autoscaler release does not use the priority expander "
                                 "(values.extraArgs.expander: priority), so node groups scale up in no set order",
                                 release.urn)
    gpu_pools = [p for p in view.pools if p.family == "gpu"]
    if configmaps and has_unknown(configmaps[0].props.get("data")):
        pending.add("data.priorities", f"{configmaps[0].title} ({configmaps[0].urn})")
        return
    for workload, spec in workloads(view):
        for claim in claims_of(view, workload, spec):
            if has_unknown(claim_requests(claim)):
                pending.add("its device requests", f"{claim.title} ({claim.urn})")
                continue
            for request, names in claim_alternatives(claim):
                if len(names) < 2:
                    continue
                where = f"{workload.kind} {workload.k8s_name}: {claim.kind} {claim.k8s_name} request {request}"
                if not configmaps and configmaps_unknown:
                    pending.add(f"whether the {PRIORITY_EXPANDER_CONFIGMAP} ConfigMap exists",
                                f"{workload.title} ({workload.urn})")
                    continue
                if not configmaps:
                    report_violation(f"{where} has {len(names)} alternatives but the stack has no "
                                     f"{PRIORITY_EXPANDER_CONFIGMAP} ConfigMap, so the autoscaler does not follow "
                                     "that order", workload.urn)
                    continue
                priorities = _expander_priorities(configmaps[0])
                if isinstance(priorities, str):
                    report_violation(f"{PRIORITY_EXPANDER_CONFIGMAP}: {priorities}", configmaps[0].urn)
                    continue
                ranked: list[tuple[str, int | None]] = []
                for alternative in names:
                    pool = pool_for(alternative, gpu_pools)
                    if pool is None:
                        report_violation(f"{where}: alternative {alternative} names no node group in the stack",
                                         workload.urn)
                        ranked = []
                        break
                    ranked.append((alternative, _node_group_priority(pool, priorities)))
                missing = [a for a, p in ranked if p is None]
                if missing:
                    report_violation(f"{where}: node group(s) of {', '.join(missing)} match no regex in "
                                     f"{PRIORITY_EXPANDER_CONFIGMAP}", workload.urn)
                    continue
                values = [p for _, p in ranked]
                if ranked and any(a <= b for a, b in zip(values, values[1:], strict=False)):
                    order = ", ".join(f"{a} (priority {p})" for a, p in ranked)
                    report_violation(f"{where}: alternatives [{order}] do not have strictly decreasing autoscaler "
                                     "priorities, so scale-up order and claim order differ", workload.urn)


def _aks_checks(view: StackView, report_violation: ReportViolation, pending: Pending) -> None:
    """AKS's managed autoscaler: the cluster's autoscaler profile uses the priority expander, then the same
    ConfigMap checks as on EKS (its node groups are the pools' scale sets)."""
    for cluster in view.of_type(AKS_CLUSTER):
        expander = str(dig(cluster.props, "autoScalerProfile", "expander", default=""))
        if not dig_known(cluster.props, "autoScalerProfile", "expander")[0]:
            pending.add("autoScalerProfile.expander", f"the AKS cluster ({cluster.urn})")
        elif expander != "priority":
            report_violation("the AKS cluster's autoscaler profile does not use the priority expander "
                             "(autoScalerProfile.expander: priority), so pools scale up in no set order", cluster.urn)
    _eks_checks(view, report_violation, pending)


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
    checks = {"eks": _eks_checks, "gke": _gke_checks, "aks": _aks_checks}
    if view.cloud is not None:
        checks[clouds.profile(view.cloud).name](view, report_violation, pending)
    _admission_checks(view, report_violation, pending)
    pending.finish()

