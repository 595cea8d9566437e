"""What runs inside the cluster on either cloud: DRA objects and the workloads.

Order: workload namespaces (with the Hugging Face token Secret), then the DRA
objects (DeviceClasses, shared claims, claim templates) once the drivers and
compute classes in ``depends_on`` exist, then one vLLM workload per config
entry. The same code serves GKE and EKS; the differences (node labels, taints,
load balancer annotations) come from the cloud's profile in the library.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pulumi

from stacks import arguments as build
from stacks.arguments import create

if TYPE_CHECKING:
    from stacks.loader import LoadedStack


def deploy_dra_and_workloads(
    loaded: LoadedStack,
    k8s_provider: pulumi.ProviderResource,
    depends_on: list[pulumi.Resource],
) -> list[pulumi.Resource]:
    """DeviceClasses, claims and vLLM workloads, after ``depends_on`` (drivers, compute classes).

    Returns the components it created (none when the config has nothing to deploy).
    """
    cfg = loaded.config
    if not (cfg.workloads or cfg.device_classes or cfg.shared_claims):
        return []
    on_k8s = pulumi.ResourceOptions(providers=[k8s_provider])

    namespaces = {
        ns: create(build.namespace(cfg, ns, loaded.hf_token),
                   opts=pulumi.ResourceOptions.merge(on_k8s, pulumi.ResourceOptions(depends_on=depends_on)))
        for ns in build.workload_namespaces(cfg)
    }
    claims = create(build.dra_claims(cfg), opts=pulumi.ResourceOptions.merge(on_k8s, pulumi.ResourceOptions(
        depends_on=[*depends_on, *namespaces.values()])))
    workloads = []
    for name, workload in cfg.workloads.items():
        namespace = namespaces[workload.namespace]
        claim = claims.shared_claim(workload.shared_claim) if workload.shared_claim else claims.template(name)
        workloads.append(create(
            build.workload(cfg, name, hf_secret_name=namespace.hf_secret_name),
            # The claim already waits for the drivers and compute classes: so does the workload, through it.
            opts=pulumi.ResourceOptions.merge(on_k8s, pulumi.ResourceOptions(depends_on=[namespace, claim])),
        ))
    return [*namespaces.values(), claims, *workloads]
