"""What a replaced or deleted cluster, accelerator pool, claim or workload means for running replicas.

Which resource types are a cloud's clusters and pools, what it calls them, whether a pool carries accelerators
and which in-place updates recreate its nodes come from that cloud's share of the plan diff (``plan_diff/gke.py``:
``CLUSTERS``, ``POOLS``, ``accelerator``, ``node_recreating_update``).
"""

from __future__ import annotations

from typing import Any

from offline_plan.cloud_parts import registered_parts
from plan_diff.compare import PlanDiff, ResourceChange
from plan_diff.properties import format_path
from plan_diff.rules import AREA

CLAIM_TEMPLATE = "kubernetes:resource.k8s.io/v1:ResourceClaimTemplate"
CLAIM = "kubernetes:resource.k8s.io/v1:ResourceClaim"
DEPLOYMENT = "kubernetes:apps/v1:Deployment"


def clusters() -> dict[str, str]:
    """What each registered cloud calls its cluster, by resource type ("GKE cluster")."""
    return _by_type("CLUSTERS")


def pools() -> dict[str, str]:
    """What each registered cloud calls a pool of nodes, by resource type ("node pool", "node group")."""
    return _by_type("POOLS")


def _by_type(table: str) -> dict[str, str]:
    found: dict[str, str] = {}
    for part in registered_parts(AREA):
        for type_, noun in getattr(part, table, {}).items():
            found.setdefault(type_, noun)
    return found


def accelerator(type_: str, inputs: dict[str, Any]) -> str | None:
    """"GPU" or "TPU" for a pool that carries accelerators, None for a CPU pool (or a type no cloud knows)."""
    for part in registered_parts(AREA):
        if type_ in getattr(part, "POOLS", {}):
            return part.accelerator(type_, inputs)
    return None


def warnings(diff: PlanDiff) -> list[tuple[str, str]]:
    """(URN, message) for every replace or delete that stops or moves running replicas, and every in-place update
    of an accelerator pool that recreates its nodes."""
    out = []
    for change in diff.changes:
        if change.op in ("replace", "delete"):
            message = _message(change)
        elif change.op == "update":
            message = _node_recreating_update(change)
        else:
            message = None
        if message:
            out.append((change.urn, message))
    return out


def _node_recreating_update(change: ResourceChange) -> str | None:
    """A cloud's warning for an in-place update that recreates a pool's nodes (``node_recreating_update``)."""
    for part in registered_parts(AREA):
        judge = getattr(part, "node_recreating_update", None)
        message = judge(change, _object_name(change)) if judge is not None else None
        if message:
            return message
    return None


def _object_name(change: ResourceChange) -> str:
    inputs = change.resource.inputs
    return (inputs.get("metadata") or {}).get("name") or inputs.get("name") or inputs.get(
        "nodeGroupName") or inputs.get("agentPoolName") or inputs.get("resourceName") or change.name


def _why(change: ResourceChange) -> str:
    if change.op != "replace":
        return ""
    paths = ", ".join(f"`{format_path(r.change.path)}`" for r in change.replacements[:3])
    more = f" and {len(change.replacements) - 3} more" if len(change.replacements) > 3 else ""
    return f" (changed: {paths}{more})"


def _message(change: ResourceChange) -> str | None:
    type_, name = change.type, _object_name(change)
    verb = "replaced" if change.op == "replace" else "deleted"
    cluster, pool = clusters().get(type_), pools().get(type_)
    if cluster:
        if change.op == "replace":
            return (f"**{cluster} `{name}` is replaced**{_why(change)}: a new cluster is built and the old "
                    "one deleted, with every node, every running replica and every object in it; the API endpoint "
                    "and credentials change. Deletion protection, when on, stops `pulumi up` before the delete.")
        return f"**{cluster} `{name}` is deleted**: every workload on it stops."
    if pool:
        kind = accelerator(type_, change.resource.inputs)
        if kind is None:
            return None
        if change.op == "replace":
            return (f"**{kind} {pool} `{name}` is replaced**{_why(change)}: its nodes are drained and "
                    "deleted and new ones created. The replicas running there are evicted and stay Pending until "
                    "the new nodes are up, or land on the next pool of their fallback order that has capacity.")
        return (f"**{kind} {pool} `{name}` is deleted**: its nodes are drained; their replicas move to the "
                "remaining pools of their fallback order or stay Pending.")
    if type_ == CLAIM_TEMPLATE:
        if change.op == "replace":
            text = (f"**ResourceClaimTemplate `{name}` is replaced**{_why(change)}: its spec is immutable, so it is "
                    "deleted and created again. Running replicas keep the ResourceClaims already made for them and "
                    "their devices; replicas created afterwards (scale-up, eviction, rollout) get the new "
                    "alternatives, and none can start while the template is missing.")
            if any(r.rule.api_only for r in change.replacements) and not change.resource.replace_on_changes:
                text += (" The resource sets no `replaceOnChanges`: pulumi-kubernetes would try an in-place update "
                         "here, which the API server refuses.")
            return text
        return (f"**ResourceClaimTemplate `{name}` is deleted**: running replicas keep their claims, but no new pod "
                "that refers to it can start.")
    if type_ == CLAIM:
        return (f"**Shared ResourceClaim `{name}` is {verb}**{_why(change)}: pods that share it keep the device "
                "they hold until they restart; the old claim goes away only when no pod uses it.")
    if type_ == DEPLOYMENT and change.op == "replace":
        return (f"**Deployment `{name}` is replaced**{_why(change)}: all of its replicas are deleted and created "
                "again.")
    return None
