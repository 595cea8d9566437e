"""The Cluster Autoscaler's priority expander, where a cloud's pool order lives in it (EKS, AKS).

The order lives in the ConfigMap ``cluster-autoscaler-priority-expander``
(``data.priorities``): each claim alternative's node group must match a
priority regex, and the alternatives' priorities must strictly decrease
(first alternative = highest priority). A cloud whose autoscaler reads it
calls :func:`check_order` from its ``autoscaler_order_checks``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

import yaml
from pulumi_policy import ReportViolation

from .. import cloud_parts
from ..stack_view import HELM_RELEASE, Pool, Res, StackView, dig
from ..unknowns import Pending, dig_known, has_unknown
from .common import claim_alternatives, claim_requests, claims_of, pool_for, workloads

PRIORITY_EXPANDER_CONFIGMAP = "cluster-autoscaler-priority-expander"


def expander_priorities(configmap: Res) -> list[tuple[int, str]] | str:
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


def node_group_priority(pool: Pool, priorities: list[tuple[int, str]]) -> int | None:
    """The highest priority whose regex matches the node group: its name, or the name of the scaling group the
    cloud makes of it (the pool's cloud's ``SCALING_GROUP_NAME``, an example of the cloud's pattern)."""
    scaling_group = cloud_parts.part(pool.cloud, "rules").SCALING_GROUP_NAME
    candidates = (pool.pool_name, *((scaling_group.format(pool=pool.pool_name),) if scaling_group else ()))
    matched = []
    for value, pattern in priorities:
        try:
            if any(re.search(pattern, c) for c in candidates):
                matched.append(value)
        except re.error:
            continue
    return max(matched) if matched else None


def check_order(view: StackView, report_violation: ReportViolation, pending: Pending) -> None:
    """The Cluster Autoscaler release uses the priority expander, and each claim's alternatives have strictly
    decreasing priorities in its ConfigMap."""
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
                priorities = expander_priorities(configmaps[0])
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
                    ranked.append((alternative, node_group_priority(pool, priorities)))
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
