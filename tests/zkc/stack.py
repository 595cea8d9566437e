"""ZKC's composition (the ``stacks`` part of its profile): cluster, pools, the NVIDIA DRA driver, then the
shared DRA objects and workloads."""

from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from stacks import arguments as build
from stacks.arguments import create

from .arguments import ARGUMENTS


def compose(loaded: Any) -> None:
    from stacks.in_cluster import deploy_dra_and_workloads

    cfg = loaded.config
    cluster = create(ARGUMENTS.cluster(cfg))
    provider = k8s.Provider("zkc-k8s", kubeconfig=cluster.kubeconfig)
    pools = [create(ARGUMENTS.pool(cfg, name, cluster=cluster.cluster_name)) for name in cfg.node_pools]
    on_k8s = pulumi.ResourceOptions(providers=[provider])
    drivers = [create(build.nvidia_dra(cfg), opts=on_k8s)] if build.dra_gpu_pools(cfg) else []
    deploy_dra_and_workloads(loaded, provider, depends_on=[*drivers, *pools])
    pulumi.export("cloud", "zkc")
    pulumi.export("clusterName", cluster.cluster_name)
