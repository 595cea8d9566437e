"""Small helpers the rules share: pod specs of workload objects, the claims they use and the pools a claim's
alternatives name, policy config."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from gpu_fungibility import clouds
from gpu_fungibility.node_selection import PodPlacement
from pulumi_policy import ResourceValidationArgs

from ..stack_view import UNKNOWN, WORKLOAD_KINDS, Pool, Res, StackView, dig, plain
from ..unknowns import NotJudged, Pending, dig_known, is_unknown

_POD_SPEC_PATHS = {"Pod": ("spec",), "CronJob": ("spec", "jobTemplate", "spec", "template", "spec")}


def pod_spec_problem(res: Res) -> str | None:
    """Why a workload object's pod spec cannot be read (``spec`` a string, a list...), or None.

    A rule that skipped such an object would pass it unchecked; the pack reports it instead. Values
    unknown during a preview are not a problem.
    """
    kind = res.kind or res.type.rsplit(":", 1)[-1]
    if kind not in WORKLOAD_KINDS:
        return None
    node: Any = res.props
    walked: list[str] = []
    for key in _POD_SPEC_PATHS.get(kind, ("spec", "template", "spec")):
        value = node.get(key) if isinstance(node, Mapping) else None
        walked.append(key)
        if value is None or value == UNKNOWN:
            return None
        if not isinstance(value, Mapping):
            return (f"{'.'.join(walked)} is a {type(value).__name__}, not an object, so its pods cannot be "
                    "checked (nor created by Kubernetes)")
        node = value
    return None


def pod_spec(res: Res) -> dict[str, Any] | None:
    """The pod spec of a workload object (Deployment, StatefulSet, DaemonSet, Job, CronJob, Pod)."""
    kind = res.kind or res.type.rsplit(":", 1)[-1]
    if kind not in WORKLOAD_KINDS:
        return None
    if kind == "Pod":
        spec = dig(res.props, "spec")
    elif kind == "CronJob":
        spec = dig(res.props, "spec", "jobTemplate", "spec", "template", "spec")
    else:
        spec = dig(res.props, "spec", "template", "spec")
    return spec if isinstance(spec, Mapping) else None


def note_unknown_pod_specs(view: StackView, pending: Pending) -> bool:
    """Name to ``pending`` every known workload object whose pod spec (or a step to it) is unknown; whether any."""
    found = False
    for res in view.kubernetes():
        kind = res.kind or res.type.rsplit(":", 1)[-1]
        if kind not in WORKLOAD_KINDS or pod_spec(res) is not None:
            continue
        node: Any = res.props
        for key in _POD_SPEC_PATHS.get(kind, ("spec", "template", "spec")):
            node = node.get(key) if isinstance(node, Mapping) else None
            if is_unknown(node):
                pending.add("its pod spec", f"{res.title} ({res.urn})")
                found = True
                break
    return found


def containers(spec: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """Every container of a pod spec, init containers included."""
    return [c for c in [*(spec.get("initContainers") or []), *(spec.get("containers") or [])]
            if isinstance(c, Mapping)]


def config_list(config: Mapping[str, Any] | None, key: str) -> list[str]:
    value = (config or {}).get(key) or []
    return [str(v) for v in value] if isinstance(value, (list, tuple)) else [str(value)]


def claim_requests(res: Res) -> list[Mapping[str, Any]]:
    """The DeviceRequests of a ResourceClaim (``spec.devices``) or template (``spec.spec.devices``)."""
    path = ("spec", "spec", "devices", "requests") if res.kind == "ResourceClaimTemplate" or res.type.endswith(
        ":ResourceClaimTemplate") else ("spec", "devices", "requests")
    return [r for r in dig(res.props, *path, default=[]) or [] if isinstance(r, Mapping)]


def workloads(view: StackView) -> Iterator[tuple[Res, Mapping[str, Any]]]:
    """Every known workload object of the stack with its pod spec (those whose spec cannot be read are left out)."""
    for res in view.kubernetes():
        if res.type.rsplit(":", 1)[-1] in WORKLOAD_KINDS:
            spec = pod_spec(res)
            if spec is not None:
                yield res, spec


def claims_of(view: StackView, workload: Res, spec: Mapping[str, Any]) -> list[Res]:
    """The claim objects (templates or shared claims) a pod spec references, when the stack creates them."""
    namespace = view.namespace_of(workload)
    found: list[Res] = []
    if is_unknown(namespace) or not isinstance(spec.get("resourceClaims") or [], list):
        return found  # the rules name such a workload as not judged
    for ref in spec.get("resourceClaims") or []:
        if not isinstance(ref, Mapping):
            continue
        if ref.get("resourceClaimTemplateName"):
            kind, name = "ResourceClaimTemplate", ref["resourceClaimTemplateName"]
        elif ref.get("resourceClaimName"):
            kind, name = "ResourceClaim", ref["resourceClaimName"]
        else:
            continue
        found.extend(view.k8s_named(kind, namespace, str(name)))
    return found


def claim_alternatives(claim: Res) -> list[tuple[str, list[str]]]:
    """(request name, [subrequest names]) for each request; ``exactly`` counts as one unnamed alternative."""
    result = []
    for request in claim_requests(claim):
        if request.get("firstAvailable") is not None:
            names = [str(s.get("name")) for s in request["firstAvailable"] or [] if isinstance(s, Mapping)]
        else:
            names = []
        result.append((str(request.get("name") or "<unnamed>"), names))
    return result


def pool_for(alternative: str, pools: list[Pool]) -> Pool | None:
    """The pool a claim alternative stands for: the one it names, else the one pool whose name ends ``-<it>``."""
    exact = [p for p in pools if alternative in (p.pool_name, p.resource_name)]
    if exact:
        return exact[0]
    suffixed = [p for p in pools if p.pool_name.endswith(f"-{alternative}") or p.resource_name.endswith(f"-{alternative}")]
    return suffixed[0] if len(suffixed) == 1 else None


def pod_placement(spec: Mapping[str, Any], cloud: str | None) -> PodPlacement:
    """A workload pod's placement, with the toleration GKE adds to pods that select a compute class."""
    tolerations = [t for t in spec.get("tolerations") or [] if isinstance(t, Mapping)]
    if cloud is not None:
        tolerations += clouds.profile(cloud).implied_tolerations(spec.get("nodeSelector") or {})
    return PodPlacement(spec.get("nodeSelector") or {}, spec.get("affinity"), tolerations, daemon=False)


def require_fields(args: ResourceValidationArgs, paths: tuple[tuple[str, ...], ...]) -> None:
    """NotJudged (advisory) when a value the rule decides on is unknown during the preview."""
    props = plain(args.props)
    for path in paths:
        known, _ = dig_known(props, *path)  # unknown itself, or an object on the way to it
        if not known:
            raise NotJudged([f"{'.'.join(path)} of {args.name} ({args.urn})"])
