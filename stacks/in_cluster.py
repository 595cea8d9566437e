"""What runs inside the cluster on either cloud: DRA objects and the workloads.

Order: workload namespaces (with the Hugging Face token Secret), then the DRA
objects (DeviceClasses, shared claims, claim templates) once the drivers and
compute classes in ``depends_on`` exist, then one vLLM workload per config
entry. The same code serves GKE and EKS; the differences (node labels, taints,
load balancer annotations) come from the config's ``cluster.cloud``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pulumi

from components.claims import DraClaims, DraClaimsArgs, claim_issues
from components.workload import (
    VllmWorkload,
    VllmWorkloadArgs,
    WorkloadNamespace,
    WorkloadNamespaceArgs,
    workload_issues,
    workload_namespaces,
)
from stacks.config import StackConfig

if TYPE_CHECKING:
    from stacks.loader import LoadedStack


def in_cluster_issues(cfg: StackConfig) -> list[tuple[str, str]]:
    """Every problem the in-cluster objects would hit, with its key path."""
    return [*claim_issues(cfg), *workload_issues(cfg)]


def deploy_dra_and_workloads(
    loaded: LoadedStack,
    k8s_provider: pulumi.ProviderResource,
    depends_on: list[pulumi.Resource],
) -> list[pulumi.Resource]:
    """DeviceClasses, claims and vLLM workloads, after ``depends_on`` (drivers, compute classes).

    Raises ConfigError naming every problem before any resource is created.
    Returns the components it created (none when the config has nothing to deploy).
    """
    from stacks.loader import ConfigError

    cfg = loaded.config
    issues = in_cluster_issues(cfg)
    if issues:
        raise ConfigError(issues)
    if not (cfg.workloads or cfg.device_classes or cfg.shared_claims):
        return []

    namespaces = {
        ns: WorkloadNamespace(
            f"ns-{ns}",
            WorkloadNamespaceArgs(namespace=ns, hf_token=loaded.hf_token),
            opts=pulumi.ResourceOptions(providers=[k8s_provider], depends_on=depends_on),
        )
        for ns in workload_namespaces(cfg)
    }
    claims = DraClaims(
        "dra-claims",
        DraClaimsArgs(config=cfg, wait_for=[*depends_on, *(n.namespace for n in namespaces.values())]),
        opts=pulumi.ResourceOptions(providers=[k8s_provider]),
    )
    workloads = []
    for wl_name, workload in cfg.workloads.items():
        namespace = namespaces[workload.namespace]
        secret = [namespace.hf_secret] if namespace.hf_secret is not None else []
        workloads.append(VllmWorkload(
            wl_name,
            VllmWorkloadArgs(
                config=cfg,
                workload_name=wl_name,
                claim=claims.claim_refs[wl_name],
                hf_secret_name=namespace.hf_secret_name,
                wait_for=[*depends_on, namespace.namespace, *secret],
            ),
            opts=pulumi.ResourceOptions(providers=[k8s_provider]),
        ))
    return [*namespaces.values(), claims, *workloads]
