"""The Cluster Autoscaler's priority expander: one fallback order as priorities over node groups.

Pure (no provider SDK), so the EKS autoscaler release and the AKS managed autoscaler share it. The
expander reads the ConfigMap ``cluster-autoscaler-priority-expander`` in the autoscaler's namespace; its
``priorities`` maps an integer (higher wins) to regexes over node group names
(kubernetes/autoscaler cluster-autoscaler/expander/priority/readme.md).
"""

from collections.abc import Sequence

import yaml

PRIORITY_CONFIGMAP = "cluster-autoscaler-priority-expander"
PRIORITY_STEP = 10
#: Every node group no fallback order lists. The expander keeps only the groups its ConfigMap matches
#: whenever one of them is a candidate (expander/priority/priority.go at cluster-autoscaler-1.35.2: options
#: matching no regex are dropped from the best set), so an unlisted pool (the system pool, a classic
#: device-plugin pool) could never grow while a listed pool could: each is listed at the lowest priority.
UNLISTED_PRIORITY = 1


def expander_priorities(fallback_orders: Sequence[Sequence[str]],
                        other_groups: Sequence[str] = ()) -> dict[int, list[str]]:
    """Priority -> node groups, from each fallback order (higher number = preferred); ``other_groups`` not in
    any order at :data:`UNLISTED_PRIORITY`."""
    priorities: dict[int, list[str]] = {}
    for order in fallback_orders:
        count = len(order)
        for index, group in enumerate(order):
            priorities.setdefault((count - index) * PRIORITY_STEP, []).append(group)
    listed = {group for order in fallback_orders for group in order}
    unlisted = [group for group in dict.fromkeys(other_groups) if group not in listed]
    if unlisted:
        priorities.setdefault(UNLISTED_PRIORITY, []).extend(unlisted)
    return dict(sorted(priorities.items(), reverse=True))


def priorities_document(priorities: dict[int, list[str]], regex_of: dict[str, str]) -> str:
    """The ConfigMap's ``priorities`` text: ``<priority>: [regex, ...]``, highest first."""
    doc = {priority: [regex_of[pool] for pool in pools] for priority, pools in priorities.items()}
    return yaml.safe_dump(doc, sort_keys=False, default_flow_style=False)
