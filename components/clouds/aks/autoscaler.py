"""The fallback order of AKS's managed cluster autoscaler: the priority expander's ConfigMap.

AKS runs the Cluster Autoscaler itself; the cluster's autoscaler profile sets ``expander: priority``
(:class:`AksCluster`), and the expander reads ``cluster-autoscaler-priority-expander`` in kube-system.
Each compute class's pools become priorities over their scale sets, most preferred highest
(:mod:`components.autoscaler_priorities`); each regex is anchored on both ends
(:func:`components.clouds.aks.node_pools.scale_set_regex`), so ``a100`` never matches ``a100od``.
"""

from collections.abc import Sequence
from typing import Any, NotRequired, TypedDict

import pulumi
import pulumi_kubernetes as k8s

from ...autoscaler_priorities import PRIORITY_CONFIGMAP, expander_priorities, priorities_document
from ...base import Issues, LibraryComponent
from .node_pools import POOL_NAME, scale_set_regex

NAMESPACE = "kube-system"


class AksAutoscalerPrioritiesArgs(TypedDict):
    """Fallback orders over AKS agent pools."""

    fallback_orders: list[list[str]]
    """Agent pool names in fallback order, most preferred first, one list per order."""
    other_pools: NotRequired[list[str]]
    """Every other autoscaled pool (the system pool, classic pools): listed at the lowest priority, or the
    expander would never pick them while a listed pool could grow."""


def priorities_text(fallback_orders: Sequence[Sequence[str]], other_pools: Sequence[str] = ()) -> str:
    regexes = {pool: scale_set_regex(pool) for pool in [*(p for o in fallback_orders for p in o), *other_pools]}
    return priorities_document(expander_priorities(fallback_orders, other_pools), regexes)


class AksAutoscalerPriorities(LibraryComponent):
    """The priority expander's ConfigMap for AKS's managed cluster autoscaler."""

    configmap_name: str
    """The ConfigMap's name (``cluster-autoscaler-priority-expander``)."""

    @classmethod
    def issues(cls, name: str, args: Any) -> Issues:
        issues: Issues = []
        for i, order in enumerate(args.get("fallback_orders") or []):
            for j, pool in enumerate(order):
                if not POOL_NAME.fullmatch(str(pool)):
                    issues.append((f"fallback_orders[{i}][{j}]", f"{pool!r} is not an AKS pool name"))
        for j, pool in enumerate(args.get("other_pools") or []):
            if not POOL_NAME.fullmatch(str(pool)):
                issues.append((f"other_pools[{j}]", f"{pool!r} is not an AKS pool name"))
        return issues

    def __init__(self, name: str, args: AksAutoscalerPrioritiesArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__(name, opts)
        self.fail_on(self.check(name, args))
        k8s.core.v1.ConfigMap(
            f"{name}-priorities",
            metadata=k8s.meta.v1.ObjectMetaArgs(name=PRIORITY_CONFIGMAP, namespace=NAMESPACE),
            data={"priorities": priorities_text(args["fallback_orders"], args.get("other_pools") or [])},
            opts=self.child(),
        )
        self.configmap_name = PRIORITY_CONFIGMAP
        self.register()
