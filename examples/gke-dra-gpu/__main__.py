"""A GKE cluster serving one model on a DRA GPU pool, straight from the component library.

No stack-config format: every value is an argument of one component. Settings a
user would change per stack come from this project's own config keys
(``pulumi config set gke-dra-gpu:model ...``), with defaults that plan as is.
"""

import pulumi
import pulumi_gcp as gcp
from gpu_fungibility import (
    DraClaims,
    GkeCluster,
    GkeGpuNodePool,
    GkeNetwork,
    NvidiaDraDriver,
    NvidiaDriverInstaller,
    VllmWorkload,
    WorkloadNamespace,
)

config = pulumi.Config()
name = config.get("name") or "dra-demo"
region = config.get("region") or "us-central1"
zone = config.get("zone") or f"{region}-a"
model = config.get("model") or "google/gemma-3-1b-it"
hf_token = config.get_secret("hfToken") or pulumi.Output.secret("set hfToken before pulumi up")
project = gcp.organizations.get_client_config_output().project

network = GkeNetwork("network", {"name": name, "region": region, "project": project})
cluster = GkeCluster("gke", {
    "name": name,
    "location": region,
    "zones": [zone],
    "project": project,
    "network": network.network,
    "subnetwork": network.subnetwork,
    "pods_range_name": network.pods_range_name,
    "services_range_name": network.services_range_name,
    # A public endpoint is an explicit choice; list who may reach it.
    "public_endpoint": True,
    "authorized_networks": [config.get("adminCidr") or "203.0.113.0/24"],
    "deletion_protection": False,
    # The create version (minMasterVersion): a supported minor, since the library's default is the DRA floor, 1.34.
    "kubernetes_version": "1.35",
}, opts=pulumi.ResourceOptions(depends_on=[network]))

# One spot L4 pool wired for DRA: GKE installs neither driver nor device plugin there.
pool = GkeGpuNodePool("l4", {
    "cluster": cluster.cluster_name,
    "location": region,
    "zones": [zone],
    "project": project,
    "service_account": cluster.node_service_account,
    "machine_type": "g2-standard-8",
    "accelerator_type": "nvidia-l4",
    "autoscaling": {"min_nodes": 0, "max_nodes": 2},
})

on_cluster = pulumi.ResourceOptions(providers=[cluster.kubernetes_provider],
                                    depends_on=[cluster.system_pool, pool])
installer = NvidiaDriverInstaller("nvidia-driver-installer", {
    "node_pools": [pool.node_pool_name],
    "node_taints": pool.node_taints,
}, opts=on_cluster)
driver = NvidiaDraDriver("nvidia-dra", {"cloud": "gke", "node_taints": pool.node_taints},
                         opts=pulumi.ResourceOptions.merge(on_cluster, pulumi.ResourceOptions(depends_on=[installer])))

namespace = WorkloadNamespace("ns-inference", {"namespace": "inference", "hf_token": hf_token},
                              opts=pulumi.ResourceOptions(providers=[cluster.kubernetes_provider]))
claims = DraClaims("claims", {
    "claim_templates": {"chat": {"namespace": "inference",
                                 "exactly": {"accelerator_type": "nvidia-l4", "count": 1}}},
}, opts=pulumi.ResourceOptions(providers=[cluster.kubernetes_provider], depends_on=[driver, namespace]))
VllmWorkload("chat", {
    "namespace": "inference",
    "accelerator_family": "gpu",
    "claim": {"template_name": claims.claim_template_names["chat"]},
    "model": model,
    "max_model_len": 8192,
    "node_selector": {"cloud.google.com/gke-nodepool": "l4"},
    "tolerate_taints": pool.node_taints,
    "hf_secret_name": namespace.hf_secret_name,
    # Sizes the container to the g2-standard-8 node and fits its grace period to the spot notice.
    "cloud": "gke",
    "pools": [{"name": "l4", "machine_types": ["g2-standard-8"], "spot": True}],
}, opts=pulumi.ResourceOptions(providers=[cluster.kubernetes_provider], depends_on=[claims, namespace]))

pulumi.export("clusterName", cluster.cluster_name)
pulumi.export("kubeconfig", cluster.kubeconfig)
pulumi.export("nodePool", pool.node_pool_name)
