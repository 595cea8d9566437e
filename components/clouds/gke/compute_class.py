"""A GKE custom ComputeClass (``cloud.google.com/v1``) over existing node pools (seed 000).

``priorities`` holds one ``{nodepools: [<pool>]}`` entry per node pool, in the
order given - the same order a workload's claim lists its ``firstAvailable``
alternatives. Pass the node pools' ``node_pool_name`` outputs, so a class can
only name pools that exist. Node pool auto-creation stays off: GKE cannot
auto-create DRA node pools.
"""

from collections.abc import Sequence
from typing import Any, NotRequired, TypedDict

import pulumi
import pulumi_kubernetes as k8s

from ...base import Issues, LibraryComponent
from ...node_selection import label_value_problem

API_VERSION = "cloud.google.com/v1"
KIND = "ComputeClass"
WHEN_UNSATISFIABLE = ("ScaleUpAnyway", "DoNotScaleUp")
MAX_PRIORITIES = 8  # one per firstAvailable alternative, and DRA allows at most 8


class GkeComputeClassArgs(TypedDict):
    """An ordered fallback list of GKE node pools."""

    node_pools: list[pulumi.Input[str]]
    """The node pools in priority order, most preferred first (their ``node_pool_name`` outputs)."""
    class_name: NotRequired[str]
    """The ComputeClass's name (default: the component's name); pools and pods refer to it."""
    consolidation_delay_minutes: NotRequired[int]
    """How long an underused node waits before GKE consolidates it."""
    when_unsatisfiable: NotRequired[str]
    """``ScaleUpAnyway`` or ``DoNotScaleUp`` when no priority can be satisfied."""
    optimize_rule_priority: NotRequired[bool]
    """Active migration: move pods back to more preferred pools when they have room (set to emit it)."""


def compute_class_spec(node_pool_names: Sequence[str], *, consolidation_delay_minutes: int | None = None,
                       when_unsatisfiable: str | None = None,
                       optimize_rule_priority: bool | None = None) -> dict[str, Any]:
    """The ComputeClass ``spec``: priorities in the given order, plus the optional policies that are set."""
    spec: dict[str, Any] = {
        "priorities": [{"nodepools": [pool]} for pool in node_pool_names],
        "nodePoolAutoCreation": {"enabled": False},
    }
    if consolidation_delay_minutes is not None:
        spec["autoscalingPolicy"] = {"consolidationDelayMinutes": consolidation_delay_minutes}
    if when_unsatisfiable:
        spec["whenUnsatisfiable"] = when_unsatisfiable
    if optimize_rule_priority is not None:
        spec["activeMigration"] = {"optimizeRulePriority": optimize_rule_priority}
    return spec


def compute_class_issues(args: GkeComputeClassArgs, class_name: str) -> Issues:
    issues: Issues = []
    pools = args.get("node_pools") or []
    if not pools:
        issues.append(("node_pools", "list at least one node pool"))
    if len(pools) > MAX_PRIORITIES:
        issues.append(("node_pools", f"{len(pools)} node pools; a claim can follow at most {MAX_PRIORITIES}"))
    plain = [p for p in pools if isinstance(p, str)]
    if len(set(plain)) != len(plain):
        issues.append(("node_pools", "a node pool is listed twice"))
    problem = label_value_problem(class_name)
    if problem:
        issues.append(("class_name", f"the name is a node label value: {problem}"))
    if args.get("when_unsatisfiable") not in (None, *WHEN_UNSATISFIABLE):
        issues.append(("when_unsatisfiable", f"{args.get('when_unsatisfiable')!r} is not one of "
                                             f"{', '.join(WHEN_UNSATISFIABLE)}"))
    if (args.get("consolidation_delay_minutes") or 0) < 0:
        issues.append(("consolidation_delay_minutes", "must be 0 or more"))
    return issues


class GkeComputeClass(LibraryComponent):
    """One GKE ComputeClass custom resource (cluster-scoped; provider via ``opts``)."""

    LEGACY_TYPE = "gpu-fungibility:compute_class:GkeComputeClass"

    class_name: str
    """The ComputeClass's name: pods select it with ``cloud.google.com/compute-class``."""

    @classmethod
    def issues(cls, name: str, args: Any) -> Issues:
        return compute_class_issues(args, args.get("class_name") or name)

    def __init__(self, name: str, args: GkeComputeClassArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__(name, opts)
        class_name = args.get("class_name") or name
        self.fail_on(self.check(name, args))
        spec = pulumi.Output.all(*args["node_pools"]).apply(lambda names: compute_class_spec(
            names,
            consolidation_delay_minutes=args.get("consolidation_delay_minutes"),
            when_unsatisfiable=args.get("when_unsatisfiable"),
            optimize_rule_priority=args.get("optimize_rule_priority"),
        ))
        k8s.apiextensions.CustomResource(
            f"{name}-computeclass",
            api_version=API_VERSION,
            kind=KIND,
            metadata=k8s.meta.v1.ObjectMetaArgs(name=class_name),
            spec=spec,
            opts=self.child(),
        )
        self.class_name = class_name
        self.register()
