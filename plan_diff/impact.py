"""What a replaced or deleted cluster, accelerator pool, claim or workload means for running replicas."""

from __future__ import annotations

from typing import Any

from plan_diff.compare import PlanDiff, ResourceChange
from plan_diff.properties import format_path

CLUSTERS = {"gcp:container/cluster:Cluster": "GKE cluster", "aws:eks/cluster:Cluster": "EKS cluster",
            "azure-native:containerservice:ManagedCluster": "AKS cluster"}
POOLS = {"gcp:container/nodePool:NodePool": "node pool", "aws:eks/nodeGroup:NodeGroup": "node group",
         "azure-native:containerservice:AgentPool": "agent pool"}
CLAIM_TEMPLATE = "kubernetes:resource.k8s.io/v1:ResourceClaimTemplate"
CLAIM = "kubernetes:resource.k8s.io/v1:ResourceClaim"
DEPLOYMENT = "kubernetes:apps/v1:Deployment"


def accelerator(type_: str, inputs: dict[str, Any]) -> str | None:
    """"GPU" or "TPU" for a pool that carries accelerators, None for a CPU pool."""
    if type_ == "gcp:container/nodePool:NodePool":
        node_config = inputs.get("nodeConfig") or {}
        labels = node_config.get("labels") or {}
        if str(node_config.get("machineType", "")).startswith("ct") or any("tpu" in k for k in labels):
            return "TPU"
        if node_config.get("guestAccelerators") or any("nvidia.com/gpu" in k for k in labels):
            return "GPU"
    if type_ == "aws:eks/nodeGroup:NodeGroup":
        ami = str(inputs.get("amiType", ""))
        labels = inputs.get("labels") or {}
        if any(word in ami for word in ("NVIDIA", "GPU", "NEURON")) or any("nvidia.com/gpu" in k for k in labels):
            return "GPU"
    if type_ == "azure-native:containerservice:AgentPool":
        labels = inputs.get("nodeLabels") or {}
        if inputs.get("gpuProfile") or any("nvidia.com/gpu" in k for k in labels):
            return "GPU"
    return None


#: GKE node pool fields pulumi-gcp updates in place (not ForceNew: tests/fixtures/terraform_google_container_
#: forcenew.json) by an upgrade that recreates every node: google/container/v1 cluster_service.proto,
#: UpdateNodePoolRequest ``machine_type``, ``disk_type``, ``disk_size_gb`` ("Initiates an upgrade operation that
#: migrates the nodes in the node pool to the specified machine type", googleapis/googleapis cf6f9ee).
GKE_NODE_RECREATING_UPDATES = {("nodeConfig", "machineType"): "machine type", ("nodeConfig", "diskType"): "disk type",
                               ("nodeConfig", "diskSizeGb"): "disk size"}


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
    if change.type != "gcp:container/nodePool:NodePool":
        return None
    kind = accelerator(change.type, change.resource.inputs)
    changed = [GKE_NODE_RECREATING_UPDATES[p.path[:2]] for p in change.properties
               if tuple(p.path[:2]) in GKE_NODE_RECREATING_UPDATES]
    if kind is None or not changed:
        return None
    what = ", ".join(dict.fromkeys(changed))
    return (f"**{kind} node pool `{_object_name(change)}` is updated in place, and GKE replaces every node** (changed: "
            f"{what}): the pool keeps its name, but GKE migrates its nodes to the new {what} with the pool's upgrade "
            "strategy (surge by default), so each GPU node is drained and deleted. The replicas running there are "
            "evicted and stay Pending until new nodes are up, or land on the next pool of their fallback order.")


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
    if type_ in CLUSTERS:
        if change.op == "replace":
            return (f"**{CLUSTERS[type_]} `{name}` is replaced**{_why(change)}: a new cluster is built and the old "
                    "one deleted, with every node, every running replica and every object in it; the API endpoint "
                    "and credentials change. Deletion protection, when on, stops `pulumi up` before the delete.")
        return f"**{CLUSTERS[type_]} `{name}` is deleted**: every workload on it stops."
    if type_ in POOLS:
        kind = accelerator(type_, change.resource.inputs)
        if kind is None:
            return None
        if change.op == "replace":
            return (f"**{kind} {POOLS[type_]} `{name}` is replaced**{_why(change)}: its nodes are drained and "
                    "deleted and new ones created. The replicas running there are evicted and stay Pending until "
                    "the new nodes are up, or land on the next pool of their fallback order that has capacity.")
        return (f"**{kind} {POOLS[type_]} `{name}` is deleted**: its nodes are drained; their replicas move to the "
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
