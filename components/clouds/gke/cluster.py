"""The GKE cluster: control plane, node identity, a small system pool, and the Kubernetes provider.

Secure defaults: the default node pool is removed (created with one node and
deleted, as GKE requires a pool at creation), nodes run as a least-privilege
service account instead of the Compute Engine default one, Workload Identity
and the GKE metadata server, shielded nodes with secure boot, private nodes
and a private or allow-listed control-plane endpoint, deletion protection.

The Kubernetes provider and the ``kubeconfig`` output use the DNS-based
control-plane endpoint by default (``dns_endpoint``): a name under ``gke.goog``
that accepts traffic from anywhere and authorizes every request with IAM
(``container.clusters.connect``) before Kubernetes RBAC, so ``pulumi up`` can
reach a cluster whose IP endpoint is private without a bastion or VPN. The
endpoint has a publicly trusted certificate: like ``gcloud container clusters
get-credentials --dns-endpoint`` (google-cloud-sdk,
``lib/googlecloudsdk/api_lib/container/kubeconfig.py``, ``Cluster()`` drops
``certificate-authority-data`` when ``has_dns_endpoint``), the kubeconfig carries
no cluster CA for it. With ``dns_endpoint`` false the provider uses the IP
endpoint and the cluster CA; a private IP endpoint then needs ``runner_cidrs``,
the ranges ``pulumi up`` runs from, which are added to the authorized networks.
Either way the provider authenticates with ``gke-gcloud-auth-plugin`` (no static
credentials in state) and names the cluster in ``clusterIdentifier``: once a
deployed provider carries it, moving between the two endpoints updates the
provider instead of replacing it and every Kubernetes object it manages
(pulumi-kubernetes ``DiffConfig``, since v4.16.0).
"""

import json
from typing import TYPE_CHECKING, Any, NotRequired, TypedDict

import pulumi
import pulumi_kubernetes as k8s

from ... import argument_rules as rules
from ...base import Issues
from ...cluster_base import ClusterArgs, ManagedCluster, control_plane_issues
from ...versions import DEFAULT_KUBERNETES_VERSION
from .labels import gcp_label_issues
from .network import DEFAULT_PODS_CIDR, DEFAULT_SERVICES_CIDR
from .pools import CLOUD_PLATFORM_SCOPE, initial_nodes_per_zone, secure_node_config

if TYPE_CHECKING:
    import pulumi_gcp as gcp

#: Roles of the node service account: GKE's minimal node role, plus image pulls from Artifact Registry.
NODE_ROLES = {
    "default-node": "roles/container.defaultNodeServiceAccount",
    "ar-reader": "roles/artifactregistry.reader",
}
SYSTEM_POOL = "system"
AUTH_PLUGIN = "gke-gcloud-auth-plugin"
RELEASE_CHANNELS = ("RAPID", "REGULAR", "STABLE", "EXTENDED")
#: ``displayName`` prefix of the authorized networks that come from ``runner_cidrs``: the policy pack's
#: ``control-plane-reachable`` rule reads it as a range declared to run ``pulumi up``.
RUNNER_NETWORK_PREFIX = "runner-"


def node_account_id(cluster_name: str) -> str:
    """A service account id (6-30 characters) derived from the cluster name."""
    return f"{cluster_name[:23].rstrip('-')}-nodes"


def kubeconfig(cluster_name: str, endpoint: str, ca_certificate: str | None) -> str:
    """A kubeconfig for the cluster that authenticates through ``gke-gcloud-auth-plugin``.

    ``ca_certificate`` None: the DNS-based endpoint, whose certificate is publicly trusted, so the
    client verifies it against the system roots (as ``get-credentials --dns-endpoint`` writes it).
    """
    server: dict[str, str] = {"server": f"https://{endpoint}"}
    if ca_certificate is not None:
        server["certificate-authority-data"] = ca_certificate
    return json.dumps({
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": cluster_name, "cluster": server}],
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


def cluster_identifier(args: "GkeClusterArgs") -> pulumi.Output[str]:
    """The cluster's resource name: the provider is replaced only when it changes, never for an endpoint move."""
    return pulumi.Output.concat("projects/", args["project"], "/locations/", args["location"],
                                "/clusters/", args["name"])


def authorized_blocks(args: "GkeClusterArgs") -> list[tuple[str, str]]:
    """``(displayName, cidr)`` of the authorized networks: the allow-list, then the runner ranges."""
    return ([(f"authorized-{i}", c) for i, c in enumerate(args.get("authorized_networks", []))]
            + [(f"{RUNNER_NETWORK_PREFIX}{i}", c) for i, c in enumerate(args.get("runner_cidrs", []))])


def endpoints_config(args: "GkeClusterArgs") -> "gcp.container.ClusterControlPlaneEndpointsConfigArgs":
    """The DNS-based endpoint with user traffic allowed when it is on, and refused when it is off.

    Off is said, not left out: an omitted block is "no opinion" to the provider, so a cluster whose DNS endpoint
    once admitted traffic would keep admitting it. terraform-provider-google(-beta) v7.0.0 to v7.45.0
    (``resource_container_cluster.go``): the block has no ForceNew field and a change is sent as
    ``UpdateCluster`` ``desiredControlPlaneEndpointsConfig``, in place.
    """
    import pulumi_gcp as gcp

    return gcp.container.ClusterControlPlaneEndpointsConfigArgs(
        dns_endpoint_config=gcp.container.ClusterControlPlaneEndpointsConfigDnsEndpointConfigArgs(
            allow_external_traffic=bool(args.get("dns_endpoint", True))))


def _dns_endpoint_of(config: Any) -> str:
    dns = getattr(config, "dns_endpoint_config", None) if config is not None else None
    return (getattr(dns, "endpoint", None) or "") if dns is not None else ""


class GkeSystemPool(TypedDict):
    """The cluster's small CPU pool for controllers (DRA controller, DNS)."""

    machine_type: NotRequired[str]
    """Machine type (default ``e2-standard-4``)."""
    min_nodes: NotRequired[int]
    """Minimum nodes in total (default 1)."""
    max_nodes: NotRequired[int]
    """Maximum nodes in total (default 3)."""
    disk_size_gb: NotRequired[int]
    """Boot disk size (default 100)."""


class GkeClusterArgs(ClusterArgs):
    """A GKE Standard cluster. Its ``kubernetes_version`` is the control plane's minimum (the release channel
    upgrades it), and ``authorized_networks`` apply to the control plane's IP endpoint, private or public."""

    location: str
    """A region (regional cluster) or zone (zonal cluster)."""
    zones: list[str]
    """Zones for nodes."""
    project: pulumi.Input[str]
    """The GCP project."""
    network: pulumi.Input[str]
    """The VPC network (``GkeNetwork.network``)."""
    subnetwork: pulumi.Input[str]
    """The node subnetwork (``GkeNetwork.subnetwork``)."""
    pods_range_name: NotRequired[str]
    """The subnet's secondary range for Pods; without it GKE creates one from ``pods_cidr``."""
    services_range_name: NotRequired[str]
    """The subnet's secondary range for Services; without it GKE creates one from ``services_cidr``."""
    pods_cidr: NotRequired[str]
    """The Pod range GKE creates when no range names are given (default ``10.4.0.0/14``)."""
    services_cidr: NotRequired[str]
    """The Service range GKE creates when no range names are given (default ``10.8.0.0/20``)."""
    release_channel: NotRequired[str]
    """``RAPID``, ``REGULAR`` (default), ``STABLE`` or ``EXTENDED``: nodes always auto-upgrade."""
    private_nodes: NotRequired[bool]
    """Nodes without public IPs (default true)."""
    dns_endpoint: NotRequired[bool]
    """Give the Kubernetes provider and the kubeconfig the DNS-based endpoint, IAM-authorized and reachable
    from anywhere (``allowExternalTraffic``), while the IP endpoint keeps ``public_endpoint`` (default true).
    False: they use the IP endpoint."""
    runner_cidrs: NotRequired[list[str]]
    """Where ``pulumi up`` runs (a subnet of this network, a VPN or peered range), added to the authorized
    networks. Required when the provider uses a private IP endpoint (``dns_endpoint`` and ``public_endpoint``
    both false): nothing else could reach it."""
    deletion_protection: NotRequired[bool]
    """Refuse to delete the cluster (default true)."""
    labels: NotRequired[dict[str, str]]
    """GCP resource labels for the cluster and its system pool."""
    system_pool: NotRequired[GkeSystemPool]
    """The CPU system pool."""


def cluster_issues(args: GkeClusterArgs) -> Issues:
    """Problems with the cluster settings, in argument names."""
    issues = control_plane_issues(args, ("authorized_networks", "runner_cidrs"))
    channel = args.get("release_channel", "REGULAR")
    if channel == "UNSPECIFIED":
        issues.append(("release_channel", "choose RAPID, REGULAR, STABLE or EXTENDED: nodes must auto-upgrade"))
    elif channel not in RELEASE_CHANNELS:
        issues.append(("release_channel", f"{channel!r} is not one of {', '.join(RELEASE_CHANNELS)}"))
    if not args.get("private_nodes", True) and not args.get("public_endpoint", False):
        issues.append(("private_nodes", "a private control-plane endpoint needs private nodes; keep "
                                        "private_nodes true, or set public_endpoint with authorized_networks"))
    if not args.get("dns_endpoint", True) and not args.get("public_endpoint", False) and not args.get("runner_cidrs"):
        issues.append(("runner_cidrs", "the Kubernetes provider would use the private IP endpoint, which only "
                                       "authorized networks inside the VPC reach: list the ranges `pulumi up` runs "
                                       "from (a subnet of this network, a VPN or peered range), or keep "
                                       "dns_endpoint true (IAM-authorized, reachable from anywhere)"))
    if not args.get("zones"):
        issues.append(("zones", "list at least one zone"))
    issues += rules.non_empty_issues(args, "location", "region or zone")
    for key in ("pods_cidr", "services_cidr"):
        issues += rules.cluster_cidr_issues(args.get(key), key)
    issues += rules.system_pool_issues(args.get("system_pool", {}), "system_pool")
    return issues + gcp_label_issues(args.get("labels", {}))


class GkeCluster(ManagedCluster):
    """A GKE Standard cluster with a system pool, exposing a Kubernetes provider for it."""

    LEGACY_TYPE = "gpu-fungibility:gke_cluster:GkeCluster"
    RULES = staticmethod(cluster_issues)

    endpoint: pulumi.Output[str]
    """The control plane's IP endpoint (private when ``public_endpoint`` is false)."""
    dns_endpoint: pulumi.Output[str]
    """The control plane's DNS-based endpoint (``gke-...gke.goog``); usable when ``dns_endpoint`` is on."""
    kubeconfig: pulumi.Output[str]
    """A kubeconfig for the endpoint the provider uses (DNS-based by default) that authenticates with
    gke-gcloud-auth-plugin (a secret)."""
    node_service_account: pulumi.Output[str]
    """The email of the nodes' service account: pass it to the node pools."""
    system_pool: "gcp.container.NodePool"
    """The system node pool (accelerator pools' drivers wait for it)."""

    def __init__(self, name: str, args: GkeClusterArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__(name, args, opts)

    def build(self, name: str, args: GkeClusterArgs) -> None:
        account, bindings = self._node_identity(name, args)
        self.node_service_account = account.email
        cluster = self._cluster(name, args, account.email, bindings)
        self.cluster_name = cluster.name
        self.endpoint = cluster.endpoint
        self.dns_endpoint = cluster.control_plane_endpoints_config.apply(_dns_endpoint_of)
        self.system_pool = self._system_pool(name, args, cluster.name, account.email)
        if args.get("dns_endpoint", True):
            config = pulumi.Output.all(cluster.name, self.dns_endpoint).apply(lambda v: kubeconfig(v[0], v[1], None))
        else:
            config = pulumi.Output.all(cluster.name, cluster.endpoint, cluster.master_auth.cluster_ca_certificate,
                                       ).apply(lambda v: kubeconfig(v[0], v[1], v[2] or ""))
        self.kubeconfig = pulumi.Output.secret(config)
        self.kubernetes_provider = k8s.Provider(
            f"{name}-k8s",
            k8s.ProviderArgs(kubeconfig=self.kubeconfig, enable_server_side_apply=True,
                             cluster_identifier=cluster_identifier(args)),
            opts=self.child(),
        )

    def _node_identity(self, name: str, args: GkeClusterArgs):
        import pulumi_gcp as gcp

        account = gcp.serviceaccount.Account(
            f"{name}-nodes-sa",
            gcp.serviceaccount.AccountArgs(
                account_id=node_account_id(args["name"]),
                display_name=f"GKE nodes of {args['name']}",
                project=args["project"],
            ),
            opts=self.child(),
        )
        bindings = [
            gcp.projects.IAMMember(
                f"{name}-nodes-{role_name}",
                gcp.projects.IAMMemberArgs(
                    project=args["project"],
                    role=role,
                    member=account.email.apply(lambda email: f"serviceAccount:{email}"),
                ),
                opts=self.child(),
            )
            for role_name, role in NODE_ROLES.items()
        ]
        return account, bindings

    def _cluster(self, name: str, args: GkeClusterArgs, node_account: pulumi.Output[str], bindings):
        import pulumi_gcp as gcp

        public = args.get("public_endpoint", False)
        if args.get("pods_range_name") and args.get("services_range_name"):
            ip_allocation = gcp.container.ClusterIpAllocationPolicyArgs(
                cluster_secondary_range_name=args["pods_range_name"],
                services_secondary_range_name=args["services_range_name"],
            )
        else:
            ip_allocation = gcp.container.ClusterIpAllocationPolicyArgs(
                cluster_ipv4_cidr_block=args.get("pods_cidr", DEFAULT_PODS_CIDR),
                services_ipv4_cidr_block=args.get("services_cidr", DEFAULT_SERVICES_CIDR),
            )
        node_locations = [z for z in args["zones"] if z != args["location"]]
        return gcp.container.Cluster(
            f"{name}-cluster",
            gcp.container.ClusterArgs(
                name=args["name"],
                location=args["location"],
                project=args["project"],
                node_locations=node_locations or None,
                min_master_version=args.get("kubernetes_version", DEFAULT_KUBERNETES_VERSION),
                release_channel=gcp.container.ClusterReleaseChannelArgs(
                    channel=args.get("release_channel", "REGULAR")),
                deletion_protection=args.get("deletion_protection", True),
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
                network=args["network"],
                subnetwork=args["subnetwork"],
                networking_mode="VPC_NATIVE",
                ip_allocation_policy=ip_allocation,
                private_cluster_config=gcp.container.ClusterPrivateClusterConfigArgs(
                    enable_private_nodes=args.get("private_nodes", True),
                    enable_private_endpoint=not public,
                ),
                master_authorized_networks_config=gcp.container.ClusterMasterAuthorizedNetworksConfigArgs(
                    cidr_blocks=[gcp.container.ClusterMasterAuthorizedNetworksConfigCidrBlockArgs(
                        cidr_block=cidr, display_name=display_name) for display_name, cidr in authorized_blocks(args)],
                    gcp_public_cidrs_access_enabled=False,
                ),
                control_plane_endpoints_config=endpoints_config(args),
                workload_identity_config=gcp.container.ClusterWorkloadIdentityConfigArgs(
                    workload_pool=pulumi.Output.from_input(args["project"]).apply(lambda p: f"{p}.svc.id.goog")),
                enable_shielded_nodes=True,
                datapath_provider="ADVANCED_DATAPATH",  # Dataplane V2: NetworkPolicy enforcement
                resource_labels=dict(args.get("labels", {})) or None,
            ),
            opts=self.child(
                depends_on=bindings,
                # The default pool is deleted after creation; its settings are not drift.
                ignore_changes=["nodeConfig", "initialNodeCount"],
            ),
        )

    def _system_pool(self, name: str, args: GkeClusterArgs, cluster_name: pulumi.Output[str],
                     node_account: pulumi.Output[str]) -> "gcp.container.NodePool":
        import pulumi_gcp as gcp

        pool = args.get("system_pool", {})
        low, high = pool.get("min_nodes", 1), pool.get("max_nodes", 3)
        return gcp.container.NodePool(
            f"{name}-system",
            gcp.container.NodePoolArgs(
                name=SYSTEM_POOL,
                cluster=cluster_name,
                location=args["location"],
                project=args["project"],
                node_locations=args["zones"],
                initial_node_count=initial_nodes_per_zone(low, high, len(args["zones"])),
                autoscaling=gcp.container.NodePoolAutoscalingArgs(
                    total_min_node_count=low, total_max_node_count=high, location_policy="BALANCED"),
                management=gcp.container.NodePoolManagementArgs(auto_repair=True, auto_upgrade=True),
                node_config=secure_node_config(
                    machine_type=pool.get("machine_type", "e2-standard-4"),
                    disk_size_gb=pool.get("disk_size_gb", 100),
                    service_account=node_account,
                    resource_labels=dict(args.get("labels", {})),
                ),
            ),
            opts=self.child(ignore_changes=["initialNodeCount"]),
        )



