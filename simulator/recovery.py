"""What moves a replica off a less preferred pool once a more preferred one has room again.

A preferred node affinity counts only when a pod is scheduled (``IgnoredDuringExecution``): a replica that
landed on a fallback pool because nothing better ran stays there until something recreates it. What can:

* **GKE**: the ComputeClass's active migration (``activeMigration.optimizeRulePriority: true``; GKE's
  "About custom ComputeClasses", section "Active migration",
  docs.cloud.google.com/kubernetes-engine/docs/concepts/about-custom-compute-classes): GKE moves the pods
  of a class to nodes of a higher priority once it can create them, evicting the old pods (their
  PodDisruptionBudget holds). The recreated pod lands on the preferred pool by the same preferred affinity.
  Its limits for GPU, Spot and DRA node pools are the documentation's and are not checked offline.
* **EKS, AKS**: nothing the stack installs. The descheduler's ``RemovePodsViolatingNodeAffinity`` with
  ``preferredDuringSchedulingIgnoredDuringExecution`` is not added: in kubernetes-sigs/descheduler v0.36.0
  (pkg/framework/plugins/removepodsviolatingnodeaffinity/node_affinity.go) it evicts a pod whenever *any*
  ready node has a higher preferred weight than its own and the pod fits *any* node, its current one
  included (pkg/descheduler/node/node.go ``NodeFit`` skips the resource check there and knows no DRA
  claims). A replica on the fallback pool would be evicted at every run while a full or device-less
  preferred node exists, and each eviction reloads the model (docs/workloads.md, "Back to the preferred
  pool").
"""

from __future__ import annotations

from gpu_fungibility import clouds

from stacks.config import StackConfig


def preferred_before(cfg: StackConfig, workload: str, pool: str) -> list[str]:
    """The pools the workload prefers to ``pool`` (empty: it is on its first choice, or has no list)."""
    wl = cfg.workloads.get(workload)
    if wl is None:
        return []
    pools = cfg.placement_pools(wl)
    return pools[:pools.index(pool)] if pool in pools else []


def moves_back(cfg: StackConfig, workload: str, pool: str) -> str | None:
    """What brings a replica on ``pool`` back to a more preferred pool, or that nothing will (None: it is on
    its first choice)."""
    better = preferred_before(cfg, workload, pool)
    if not better:
        return None
    wl = cfg.workloads[workload]
    target = cfg.shared_claims[wl.shared_claim] if wl.shared_claim else wl
    where = " or ".join(better)
    if clouds.profile(cfg.cluster.cloud).compute_class_on_nodes and target.compute_class:
        cc = cfg.compute_classes[target.compute_class]
        key = f"computeClasses.{target.compute_class}.activeMigration.optimizeRulePriority"
        if cc.active_migration is not None and cc.active_migration.optimize_rule_priority:
            return (f"moves back: GKE active migration ({key}) replaces it on {where} once GKE can create "
                    "such nodes")
        return f"nothing moves it back to {where} (set {key}: true)"
    return (f"nothing moves it back to {where}: the preferred affinity counts only at scheduling; it moves "
            "when the pod is recreated (rollout, eviction, node loss)")
