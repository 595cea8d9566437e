"""What runs inside the cluster on either cloud: DRA objects and the workloads."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pulumi

if TYPE_CHECKING:
    from stacks.loader import LoadedStack


def deploy_dra_and_workloads(
    loaded: LoadedStack,
    k8s_provider: pulumi.ProviderResource,
    depends_on: list[pulumi.Resource],
) -> list[pulumi.Resource]:
    """DeviceClasses, claims and vLLM workloads, after ``depends_on`` (drivers, compute classes)."""
    return []
