"""What a workload's claims can reach (stack rules).

``dra-reachable-pools-served``: every pool a workload's claim can land on -
the pool a ``firstAvailable`` alternative is named after, and every pool its
pods' placement admits where an alternative's selectors match what the pool's
nodes would publish - runs the DRA kubelet plugin of its family and no device
plugin, whatever labels it carries. A TPU
pool without ``cloud.google.com/gke-tpu-dra-driver=true`` passes the
label-driven rules, yet GKE's own TPU device plugin takes its chips and the
claim can never be allocated there.

``claim-alternative-satisfiable``: each claim alternative can be satisfied on
the pool it stands for (the pool it is named after; for an ``exactly``
request, the one pool its pods can run on): its device class's and its own
CEL selectors, evaluated by the DRA CEL engine against the devices one node of
that pool publishes (:mod:`gpu_fungibility.devices`: product name, memory,
architecture, driver version as the catalog records them), match at least
``count`` devices (one for ``All``). And, on a cluster of Kubernetes 1.34 or
1.35, no ``All`` alternative after the first of its ``firstAvailable`` list:
their scheduler allocates such an alternative with the first one's selectors
from its second device on (``versions.later_all_takes_the_first_alternative``),
so it never gets that pool's devices as asked.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from gpu_fungibility import device_selectors, devices, dra_cel
from gpu_fungibility.catalog import GPUS
from gpu_fungibility.node_selection import evaluate
from gpu_fungibility.versions import later_all_takes_the_first_alternative
from pulumi_policy import ReportViolation, StackValidationArgs

from .. import cloud_parts
from ..stack_view import HELM_RELEASE, WORKLOAD_KINDS, Pool, Res, StackView, dig
from ..unknowns import UNKNOWN, Pending, has_unknown, is_unknown
from .common import claim_requests, claims_of, note_unknown_pod_specs, pod_placement, pool_for, workloads
from .placement import plugins_on
from .support import cluster_minor

_DRIVER_FAMILY = {device_selectors.NVIDIA_DRIVER: "gpu", device_selectors.TPU_DRIVER: "tpu"}


@dataclass(frozen=True)
class Alternative:
    """One way a claim request can be satisfied, and where."""

    workload: Res | None
    claim: Res
    label: str  # ``request/subrequest`` or ``request``
    body: Mapping[str, Any]  # the subrequest or ``exactly``
    pool: Pool
    named: bool  # the alternative is named after the pool (else the pods' placement reaches it)
    rank: int = 0  # its place in the request's firstAvailable list


def class_selectors(view: StackView) -> dict[str, list[str]]:
    """DeviceClass name -> its CEL selectors (the drivers' classes and the stack's)."""
    classes = {name: list(exprs) for name, exprs in device_selectors.DRIVER_DEVICE_CLASS_SELECTORS.items()}
    for device_class in view.k8s("DeviceClass"):
        selectors = dig(device_class.props, "spec", "selectors", default=[]) or []
        if is_unknown(selectors) or is_unknown(device_class.props.get("spec")):
            classes[device_class.k8s_name] = [UNKNOWN]  # not "no selector": see validate_alternatives_satisfiable
            continue
        classes[device_class.k8s_name] = [str(dig(s, "cel", "expression", default=""))
                                          for s in selectors if isinstance(s, Mapping)]
    return classes


def _family(device_class: str, classes: Mapping[str, list[str]]) -> str | None:
    """``gpu`` or ``tpu``: which driver's devices a class selects (from its selectors' driver check)."""
    for driver, family in _DRIVER_FAMILY.items():
        if device_class.endswith(driver) or any(f"'{driver}'" in e for e in classes.get(device_class, [])):
            return family
    return None


def _bodies(request: Mapping[str, Any]) -> list[tuple[str, Mapping[str, Any], bool]]:
    """``(label, body, is a firstAvailable subrequest)`` for each alternative of a request."""
    name = str(request.get("name") or "<unnamed>")
    if request.get("firstAvailable") is not None:
        return [(f"{name}/{s.get('name')}", s, True) for s in request["firstAvailable"] or [] if isinstance(s, Mapping)]
    body = request.get("exactly") if isinstance(request.get("exactly"), Mapping) else request
    return [(name, body, False)]


#: What a claim's reach is read from: workloads, their claims, the device classes the claims name.
CLAIM_KINDS = (*WORKLOAD_KINDS, "ResourceClaimTemplate", "ResourceClaim", "DeviceClass")
_PLACEMENT_KEYS = ("nodeSelector", "affinity", "tolerations", "resourceClaims")


def _requests(view: StackView, pending: Pending | None = None) \
        -> Iterator[tuple[Res, Res, Mapping[str, Any], list[Pool]]]:
    """``(workload, claim, request, accelerator pools its pods' placement admits)`` for every claim request.

    With ``pending``: the workloads whose placement, and the claims whose requests, hold a value unknown during
    the preview are named to it and left out (and so are the resources of :data:`CLAIM_KINDS` unknown whole).
    """
    if pending is not None:
        view.note_unknown(pending, *CLAIM_KINDS)
        note_unknown_pod_specs(view, pending)
    for workload, spec in workloads(view):
        if pending is not None and (has_unknown({k: spec.get(k) for k in _PLACEMENT_KEYS})
                                    or is_unknown(view.namespace_of(workload))):
            pending.add("its pods' placement or claims", f"{workload.title} ({workload.urn})")
            continue
        placement = pod_placement(spec, view.cloud)
        admitted = [p for p in view.accelerator_pools() if evaluate(placement, p.node_labels, p.taints).runs]
        for claim in claims_of(view, workload, spec):
            if pending is not None and has_unknown(claim_requests(claim)):
                pending.add("its device requests", f"{claim.title} ({claim.urn})")
                continue
            for request in claim_requests(claim):
                yield workload, claim, request, admitted


def _named(view: StackView, workload: Res, claim: Res, request: Mapping[str, Any]) -> list[Alternative]:
    found = []
    for rank, (label, body, subrequest) in enumerate(_bodies(request)):
        pool = pool_for(label.rsplit("/", 1)[-1], view.pools) if subrequest else None
        if pool is not None and pool.family in ("gpu", "tpu"):
            found.append(Alternative(workload, claim, label, body, pool, named=True, rank=rank))
    return found


def alternatives(view: StackView, pending: Pending | None = None) -> Iterator[Alternative]:
    """Every (claim alternative, pool it can land on): the pool it is named after, and every pool the pods'
    placement admits whose would-be devices the alternative matches (``pending``: see :func:`_requests`)."""
    classes = class_selectors(view)
    for workload, claim, request, admitted in _requests(view, pending):
        named = _named(view, workload, claim, request)
        yield from named
        seen = {a.pool.urn for a in named}
        for pool in admitted:
            if pool.urn in seen:
                continue
            for label, body, _ in _bodies(request):
                if (_matching(body, pool, classes) or (0, 0))[0] > 0:
                    seen.add(pool.urn)
                    yield Alternative(workload, claim, label, body, pool, named=False)
                    break


def validate_reachable_pools_served(args: StackValidationArgs, report_violation: ReportViolation) -> None:
    """Every pool a claim can land on runs its family's DRA kubelet plugin and no device plugin."""
    view = StackView.from_policy_resources(args.resources)
    pending = Pending()
    unknown_releases = bool(view.unknown_of(HELM_RELEASE))
    reported: set[tuple[str, str]] = set()
    served: dict[str, Any] = {}  # pool URN -> the plugins on it
    for alt in alternatives(view, pending):
        key = (alt.workload.urn if alt.workload else alt.claim.urn, alt.pool.urn)
        if key in reported:
            continue
        if alt.pool.urn not in served:
            served[alt.pool.urn] = plugins_on(alt.pool, view)
        found = served[alt.pool.urn]
        if found.dra_plugins and not found.device_plugins:
            continue
        if not found.dra_plugins and unknown_releases:  # the release that would serve it is not known yet
            view.note_unknown(pending, HELM_RELEASE)
            pending.add(f"which plugins run where claim alternative {alt.label} can land", alt.pool.title)
            continue
        reported.add(key)
        driver = "NVIDIA GPU" if alt.pool.family == "gpu" else "TPU"
        plugins = " and ".join(found.device_plugins)
        if found.dra_plugins:
            problem = f"{plugins} runs there too, so two plugins would manage the same devices"
        else:
            why = ("the stack installs no such driver" if not found.dra_verdicts else
                   "; ".join(f"{n}: {', '.join(v.reasons)}" for n, v in sorted(found.dra_verdicts.items())))
            problem = f"the {driver} DRA kubelet plugin does not run there ({why})"
            problem += f" and {plugins} takes its devices" if plugins else ""
            problem += ", so the claim can never be allocated there"
        how = "is named after" if alt.named else "can land on (the pods' placement admits)"
        where = f"{alt.workload.kind} {alt.workload.k8s_name}" if alt.workload else alt.claim.k8s_name
        report_violation(
            f"{where}: claim alternative {alt.label} of {alt.claim.kind} {alt.claim.k8s_name} {how} "
            f"{alt.pool.title}, but {problem}. Every pool a claim can reach must run its family's DRA kubelet "
            "plugin and no device plugin.",
            alt.pool.urn,
        )
    pending.finish()


# ---- claim-alternative-satisfiable ---------------------------------------------------------------


@functools.lru_cache(maxsize=1024)
def _published(accelerator_type: str, count: int, mig: bool) -> tuple[dra_cel.Device, ...] | None:
    """The devices one node with ``count`` of this accelerator publishes; MIG: one slice of every profile per GPU."""
    gpu = GPUS.get(accelerator_type)
    try:
        # One slice of every profile per GPU: what each kind of slice looks like, not a layout that must fit.
        driver, entries = devices.published("policy", "node", accelerator_type, count,
                                            every_mig_profile=bool(mig and gpu is not None and gpu.mig_profiles))
    except ValueError:
        return None
    return tuple(dra_cel.Device.from_slice_device(driver, e) for e in entries)


@functools.lru_cache(maxsize=4096)
def _count_matching(expressions: tuple[str, ...], accelerator_type: str, count: int,
                    mig: bool) -> tuple[int, int] | None:
    published = _published(accelerator_type, count, mig)
    if published is None:
        return None
    try:
        programs = [dra_cel.compile_expression(e) for e in expressions]
    except dra_cel.CelCompileError:
        return None  # claim-shape reports an invalid selector; one this engine lacks cannot be judged
    return sum(all(dra_cel.matches(p, d) for p in programs) for d in published), len(published)


def _matching(body: Mapping[str, Any], pool: Pool, classes: Mapping[str, list[str]]) -> tuple[int, int] | None:
    """``(matching, published)`` devices of one node of the pool for the alternative (None: cannot judge).

    Raises :class:`dra_cel.CelEvaluationError` when a selector fails at runtime on those devices.
    """
    device_class = str(body.get("deviceClassName") or "")
    if device_class not in classes or not pool.accelerator_type or pool.accelerator_count < 1:
        return None
    own = [str(dig(s, "cel", "expression", default="")) for s in body.get("selectors") or [] if isinstance(s, Mapping)]
    mig = device_class == device_selectors.MIG_DEVICE_CLASS or any("'mig'" in e for e in classes[device_class])
    return _count_matching((*classes[device_class], *own), pool.accelerator_type, pool.accelerator_count, mig)


def _stands_for(view: StackView, pending: Pending | None = None) -> Iterator[Alternative]:
    """Named alternatives, and ``exactly`` requests whose pods can run on exactly one pool of their family."""
    classes = class_selectors(view)
    for workload, claim, request, admitted in _requests(view, pending):
        named = _named(view, workload, claim, request)
        yield from named
        bodies = _bodies(request)
        if named or len(bodies) != 1 or bodies[0][2]:
            continue
        label, body, _ = bodies[0]
        family = _family(str(body.get("deviceClassName") or ""), classes)
        candidates = [p for p in admitted if p.family == family]
        if len(candidates) == 1:
            yield Alternative(workload, claim, label, body, candidates[0], named=False)


def _cluster_minor(view: StackView) -> str | None:
    """The Kubernetes minor the stack's cluster runs, when the stack has one cluster whose version is known."""
    found = {cluster_minor(r.type, r.props) for t in cloud_parts.cluster_types() for r in view.of_type(t)}
    found.discard(None)
    return next(iter(found))[1] if len(found) == 1 else None


def validate_alternatives_satisfiable(args: StackValidationArgs, report_violation: ReportViolation) -> None:
    """Each claim alternative's selectors match enough devices of the pool it stands for."""
    view = StackView.from_policy_resources(args.resources)
    pending = Pending()
    classes = class_selectors(view)
    minor = _cluster_minor(view)
    for alt in _stands_for(view, pending):
        mode = str(alt.body.get("allocationMode") or "ExactCount")
        if mode not in ("ExactCount", "All"):
            continue  # claim-shape reports it
        if mode == "All" and alt.rank > 0 and minor and later_all_takes_the_first_alternative(minor):
            where = f"{alt.workload.kind} {alt.workload.k8s_name}: " if alt.workload else ""
            report_violation(
                f"{where}claim alternative {alt.label} of {alt.claim.kind} {alt.claim.k8s_name} asks for all devices "
                f"(allocationMode All) and is not the first of its firstAvailable list: Kubernetes {minor}'s "
                "scheduler takes its first device, then carries on with the first alternative's selectors "
                "(k8s.io/dynamic-resource-allocation v0.35.4 drops the subrequest index; 1.36 passes it on), so it "
                f"never gets the devices of {alt.pool.title} as asked. Give that pool a claim (and compute class) "
                "of its own, list it first, or run Kubernetes 1.36 or later.",
                alt.claim.urn,
            )
            continue
        wanted = int(alt.body.get("count") or 1) if mode == "ExactCount" else 1
        if any(is_unknown(e) for e in classes.get(str(alt.body.get("deviceClassName") or ""), [])):
            pending.add(f"the selectors of device class {alt.body.get('deviceClassName')}", alt.claim.title)
            continue
        try:
            judged = _matching(alt.body, alt.pool, classes)
        except dra_cel.CelEvaluationError as exc:
            report_violation(
                f"{alt.claim.kind} {alt.claim.k8s_name}: claim alternative {alt.label} fails on the devices of "
                f"{alt.pool.title} with a CEL runtime error ({exc.detail} in {exc.expression!r}): the scheduler "
                "aborts allocation for it", alt.claim.urn)
            continue
        if judged is None or judged[0] >= wanted:
            continue
        matching, published = judged
        own = [str(dig(s, "cel", "expression", default="")) for s in alt.body.get("selectors") or []
               if isinstance(s, Mapping)]
        where = f"{alt.workload.kind} {alt.workload.k8s_name}: " if alt.workload else ""
        need = f"{wanted}" if mode == "ExactCount" else "at least one (allocationMode All)"
        report_violation(
            f"{where}claim alternative {alt.label} of {alt.claim.kind} {alt.claim.k8s_name} stands for "
            f"{alt.pool.title}, but its selectors (device class {alt.body.get('deviceClassName')}"
            f"{', ' + ' && '.join(repr(e) for e in own) if own else ''}) match {matching} of the {published} "
            f"devices a node of it publishes ({alt.pool.accelerator_count} x {alt.pool.accelerator_type}); "
            f"it needs {need}, so that alternative can never be allocated there.",
            alt.claim.urn,
        )
    pending.finish()
