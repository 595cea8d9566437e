"""The GKE cluster: control plane, node identity, a small system pool, and the Kubernetes provider.

Secure defaults: the default node pool is removed (created with one node and
deleted, as GKE requires a pool at creation), nodes run as a least-privilege
service account instead of the Compute Engine default one, Workload Identity
and the GKE metadata server, shielded nodes with secure boot, private nodes
and a private or allow-listed control-plane endpoint, deletion protection.

The Kubernetes provider is built from the cluster's endpoint and CA and
authenticates with ``gke-gcloud-auth-plugin`` (no static credentials in state).
Every in-cluster resource of the stack uses it.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

import pulumi
import pulumi_gcp as gcp
import pulumi_kubernetes as k8s

from components.gke_pools import CLOUD_PLATFORM_SCOPE, initial_nodes_per_zone, secure_node_config
from stacks.config import ClusterConfig

#: Roles of the node service account: GKE's minimal node role, plus image pulls from Artifact Registry.
NODE_ROLES = {
    "default-node": "roles/container.defaultNodeServiceAccount",
    "ar-reader": "roles/artifactregistry.reader",
}
SYSTEM_POOL = "system"
AUTH_PLUGIN = "gke-gcloud-auth-plugin"
#: GCP resource labels (``cluster.labels`` on the cluster and every node pool): lowercase keys that start
#: with a letter, lowercase values, letters, digits, '_' and '-', at most 63 characters, at most 64 labels.
GCP_LABEL_KEY = re.compile(r"^[a-z][a-z0-9_-]{0,62}$")
GCP_LABEL_VALUE = re.compile(r"^[a-z0-9_-]{0,63}$")
MAX_GCP_LABELS = 64


def node_account_id(cluster_name: str) -> str:
    """A service account id (6-30 characters) derived from the cluster name."""
    return f"{cluster_name[:23].rstrip('-')}-nodes"


def kubeconfig(cluster_name: str, endpoint: str, ca_certificate: str) -> str:
    """A kubeconfig for the cluster that authenticates through ``gke-gcloud-auth-plugin``."""
    return json.dumps({
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": cluster_name, "cluster": {
            "server": f"https://{endpoint}", "certificate-authority-data": ca_certificate}}],
        "users": [{"name": cluster_name, "user": {"exec": {
            "apiVersion": "client.authentication.k8s.io/v1beta1",
            "command": AUTH_PLUGIN,
            "provideClusterInfo": True,
            "interactiveMode": "Never",
            "installHint": "Install gke-gcloud-auth-plugin: gcloud components install gke-gcloud-auth-plugin",
        }}}],
        "contexts": [{"name": cluster_name, "context": {"cluster": cluster_name, "user": cluster_name}}],
        "current-context": cluster_name,
    }, indent=2)


def node_locations(cluster: ClusterConfig) -> list[str]:
    """Zones for nodes besides the cluster's own zone (zonal cluster) or all zones (regional)."""
    return [z for z in cluster.zones if z != cluster.location]


@dataclass(frozen=True)
class GkeClusterArgs:
    """The cluster settings, where it lives, and its network.

    ``pods_range_name``/``services_range_name``: secondary ranges of the subnet;
    when None, GKE creates them from ``network.podsCidr``/``servicesCidr``.
    """

    config: ClusterConfig
    project: pulumi.Input[str]
    network: pulumi.Input[str]
    subnetwork: pulumi.Input[str]
    pods_range_name: str | None = None
    services_range_name: str | None = None


class GkeCluster(pulumi.ComponentResource):
    """A GKE Standard cluster with a system pool, exposing a Kubernetes provider for it."""

    cluster: gcp.container.Cluster
    cluster_name: pulumi.Output[str]
    endpoint: pulumi.Output[str]
    kubeconfig: pulumi.Output[str]  # a secret
    provider: k8s.Provider
    node_service_account_email: pulumi.Output[str]
    system_pool: gcp.container.NodePool

    def __init__(self, name: str, args: GkeClusterArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("gpu-fungibility:gke_cluster:GkeCluster", name, None, opts)
        _validate(args.config)
        account, bindings = _node_identity(self, name, args)
        self.node_service_account_email = account.email
        self.cluster = _cluster(self, name, args, account.email, bindings)
        self.cluster_name = self.cluster.name
        self.endpoint = self.cluster.endpoint
        self.system_pool = _system_pool(self, name, args, self.cluster.name, account.email)
        self.kubeconfig = pulumi.Output.secret(pulumi.Output.all(
            self.cluster.name, self.cluster.endpoint, self.cluster.master_auth.cluster_ca_certificate,
        ).apply(lambda v: kubeconfig(v[0], v[1], v[2] or "")))
        self.provider = k8s.Provider(
            f"{name}-k8s",
            k8s.ProviderArgs(kubeconfig=self.kubeconfig, enable_server_side_apply=True),
            opts=pulumi.ResourceOptions(parent=self),
        )
        self.register_outputs({
            "clusterName": self.cluster_name,
            "endpoint": self.endpoint,
            "kubeconfig": self.kubeconfig,
            "nodeServiceAccount": self.node_service_account_email,
        })


def cluster_issues(cluster: ClusterConfig) -> list[tuple[str, str]]:
    """GKE-specific problems with the cluster settings, each with its key path."""
    issues = []
    if cluster.cloud != "gke":
        issues.append(("cluster.cloud", "GkeCluster needs cloud: gke"))
    if cluster.release_channel == "UNSPECIFIED":
        issues.append(("cluster.releaseChannel", "choose RAPID, REGULAR, STABLE or EXTENDED: nodes must auto-upgrade"))
    if not cluster.private_nodes and not cluster.control_plane.public_endpoint:
        issues.append(("cluster.privateNodes", "a private control-plane endpoint needs private nodes; keep "
                                               "privateNodes: true, or set controlPlane.publicEndpoint: true "
                                               "with authorizedNetworks"))
    issues += gcp_label_issues(cluster.labels)
    return issues


def gcp_label_issues(labels: dict[str, str]) -> list[tuple[str, str]]:
    """``cluster.labels`` GCP would refuse as resource labels, each with its key path."""
    issues = []
    if len(labels) > MAX_GCP_LABELS:
        issues.append(("cluster.labels", f"{len(labels)} labels; GCP allows at most {MAX_GCP_LABELS}"))
    for key, value in labels.items():
        if not GCP_LABEL_KEY.match(key):
            issues.append((f"cluster.labels.{key}", "a GCP label key is lowercase letters, digits, '_' and '-', "
                                                   "starts with a letter, at most 63 characters"))
        if not GCP_LABEL_VALUE.match(value):
            issues.append((f"cluster.labels.{key}", f"{value!r}: a GCP label value is lowercase letters, digits, "
                                                   "'_' and '-', at most 63 characters"))
    return issues


def _validate(cluster: ClusterConfig) -> None:
    issues = cluster_issues(cluster)
    if issues:
        from stacks.loader import ConfigError

        raise ConfigError(issues)


def _node_identity(parent: pulumi.Resource, name: str, args: GkeClusterArgs):
    child = pulumi.ResourceOptions(parent=parent)
    account = gcp.serviceaccount.Account(
        f"{name}-nodes-sa",
        gcp.serviceaccount.AccountArgs(
            account_id=node_account_id(args.config.name),
            display_name=f"GKE nodes of {args.config.name}",
            project=args.project,
        ),
        opts=child,
    )
    bindings = [
        gcp.projects.IAMMember(
            f"{name}-nodes-{role_name}",
            gcp.projects.IAMMemberArgs(
                project=args.project,
                role=role,
                member=account.email.apply(lambda email: f"serviceAccount:{email}"),
            ),
            opts=child,
        )
        for role_name, role in NODE_ROLES.items()
    ]
    return account, bindings


def _control_plane(cfg: ClusterConfig):
    access = cfg.control_plane
    private = gcp.container.ClusterPrivateClusterConfigArgs(
        enable_private_nodes=cfg.private_nodes,
        enable_private_endpoint=not access.public_endpoint,
    )
    authorized = gcp.container.ClusterMasterAuthorizedNetworksConfigArgs(
        cidr_blocks=[gcp.container.ClusterMasterAuthorizedNetworksConfigCidrBlockArgs(
            cidr_block=cidr, display_name=f"authorized-{i}") for i, cidr in enumerate(access.authorized_networks)],
        gcp_public_cidrs_access_enabled=False,
    )
    return private, authorized


def _cluster(parent, name: str, args: GkeClusterArgs, node_account: pulumi.Output[str], bindings):
    cfg = args.config
    private, authorized = _control_plane(cfg)
    if args.pods_range_name and args.services_range_name:
        ip_allocation = gcp.container.ClusterIpAllocationPolicyArgs(
            cluster_secondary_range_name=args.pods_range_name,
            services_secondary_range_name=args.services_range_name,
        )
    else:
        ip_allocation = gcp.container.ClusterIpAllocationPolicyArgs(
            cluster_ipv4_cidr_block=cfg.network.pods_cidr,
            services_ipv4_cidr_block=cfg.network.services_cidr,
        )
    return gcp.container.Cluster(
        f"{name}-cluster",
        gcp.container.ClusterArgs(
            name=cfg.name,
            location=cfg.location,
            project=args.project,
            node_locations=node_locations(cfg) or None,
            min_master_version=cfg.kubernetes_version,
            release_channel=gcp.container.ClusterReleaseChannelArgs(channel=cfg.release_channel),
            deletion_protection=cfg.deletion_protection,
            # GKE needs a pool at creation: one node, removed right after; real pools are separate resources.
            remove_default_node_pool=True,
            initial_node_count=1,
            node_config=gcp.container.ClusterNodeConfigArgs(
                service_account=node_account,
                oauth_scopes=[CLOUD_PLATFORM_SCOPE],
                shielded_instance_config=gcp.container.ClusterNodeConfigShieldedInstanceConfigArgs(
                    enable_secure_boot=True, enable_integrity_monitoring=True),
                workload_metadata_config=gcp.container.ClusterNodeConfigWorkloadMetadataConfigArgs(
                    mode="GKE_METADATA"),
            ),
            network=args.network,
            subnetwork=args.subnetwork,
            networking_mode="VPC_NATIVE",
            ip_allocation_policy=ip_allocation,
            private_cluster_config=private,
            master_authorized_networks_config=authorized,
            workload_identity_config=gcp.container.ClusterWorkloadIdentityConfigArgs(
                workload_pool=pulumi.Output.from_input(args.project).apply(lambda p: f"{p}.svc.id.goog")),
            enable_shielded_nodes=True,
            datapath_provider="ADVANCED_DATAPATH",  # Dataplane V2: NetworkPolicy enforcement
            resource_labels=dict(cfg.labels) or None,
        ),
        opts=pulumi.ResourceOptions(
            parent=parent,
            depends_on=bindings,
            # The default pool is deleted after creation; its settings are not drift.
            ignore_changes=["nodeConfig", "initialNodeCount"],
        ),
    )


def _system_pool(parent, name: str, args: GkeClusterArgs, cluster_name: pulumi.Output[str],
                 node_account: pulumi.Output[str]) -> gcp.container.NodePool:
    cfg = args.config
    pool = cfg.system_pool
    return gcp.container.NodePool(
        f"{name}-system",
        gcp.container.NodePoolArgs(
            name=SYSTEM_POOL,
            cluster=cluster_name,
            location=cfg.location,
            project=args.project,
            node_locations=cfg.zones,
            initial_node_count=initial_nodes_per_zone(pool.min, pool.max, len(cfg.zones)),
            autoscaling=gcp.container.NodePoolAutoscalingArgs(
                total_min_node_count=pool.min, total_max_node_count=pool.max, location_policy="BALANCED"),
            management=gcp.container.NodePoolManagementArgs(auto_repair=True, auto_upgrade=True),
            node_config=secure_node_config(
                machine_type=pool.machine_type,
                disk_size_gb=pool.disk_size_gb,
                service_account=node_account,
                resource_labels=dict(cfg.labels),
            ),
        ),
        opts=pulumi.ResourceOptions(parent=parent, ignore_changes=["initialNodeCount"]),
    )
