"""A GKE custom ComputeClass (``cloud.google.com/v1``) over existing node pools (seed 000).

``priorities`` holds one ``{nodepools: [<pool>]}`` entry per pool, in the order
of ``computeClasses.<class>.pools`` - the same order the workloads' claims list
their ``firstAvailable`` alternatives. The node pool names are the NodePool
resources' ``name`` outputs, so a class can only name pools the stack built.
Node pool auto-creation stays off: GKE cannot auto-create DRA node pools.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from stacks.config import ComputeClass

API_VERSION = "cloud.google.com/v1"
KIND = "ComputeClass"


def compute_class_spec(compute_class: ComputeClass, node_pool_names: Sequence[str]) -> dict[str, Any]:
    """The ComputeClass ``spec``: priorities in the given order, plus the optional policies that are set."""
    spec: dict[str, Any] = {
        "priorities": [{"nodepools": [pool]} for pool in node_pool_names],
        "nodePoolAutoCreation": {"enabled": False},
    }
    if compute_class.consolidation_delay_minutes is not None:
        spec["autoscalingPolicy"] = {"consolidationDelayMinutes": compute_class.consolidation_delay_minutes}
    if compute_class.when_unsatisfiable:
        spec["whenUnsatisfiable"] = compute_class.when_unsatisfiable
    if compute_class.active_migration is not None:
        spec["activeMigration"] = {"optimizeRulePriority": compute_class.active_migration.optimize_rule_priority}
    return spec


@dataclass(frozen=True)
class GkeComputeClassArgs:
    """``node_pool_names``: the GKE node pool names, in ``config.pools`` order."""

    class_name: str
    config: ComputeClass
    node_pool_names: Sequence[pulumi.Input[str]]


class GkeComputeClass(pulumi.ComponentResource):
    """One ComputeClass custom resource (cluster-scoped; provider via ``opts``)."""

    resource: k8s.apiextensions.CustomResource

    def __init__(self, name: str, args: GkeComputeClassArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("gpu-fungibility:compute_class:GkeComputeClass", name, None, opts)
        if len(args.node_pool_names) != len(args.config.pools):
            from stacks.loader import ConfigError

            raise ConfigError([(f"computeClasses.{args.class_name}.pools",
                                f"{len(args.config.pools)} pools listed but {len(args.node_pool_names)} node pools given")])
        spec = pulumi.Output.all(*args.node_pool_names).apply(lambda names: compute_class_spec(args.config, names))
        self.resource = k8s.apiextensions.CustomResource(
            f"{name}-computeclass",
            api_version=API_VERSION,
            kind=KIND,
            metadata=k8s.meta.v1.ObjectMetaArgs(name=args.class_name),
            spec=spec,
            opts=pulumi.ResourceOptions(parent=self),
        )
        self.register_outputs({"name": args.class_name})
