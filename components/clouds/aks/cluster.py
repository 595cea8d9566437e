"""The AKS cluster: control plane, system pool, identities, and the Kubernetes provider built from it.

Secure by default: the API server is private unless ``public_endpoint`` is set, and then only the listed
``authorized_networks`` reach it (``apiServerAccessProfile.authorizedIPRanges``); Microsoft Entra ID with
Azure RBAC authenticates users and local accounts are disabled, so the kubeconfig carries no credentials
(it runs ``kubelogin``); the cluster has a system-assigned managed identity, the OIDC issuer and workload
identity (learn.microsoft.com/azure/aks/workload-identity-overview); Azure CNI Overlay puts pods on a
private overlay range. The managed cluster autoscaler uses the priority expander, which reads the
``cluster-autoscaler-priority-expander`` ConfigMap in kube-system (learn.microsoft.com/azure/aks/
cluster-autoscaler, "expander"; :class:`AksAutoscalerPriorities`).
"""

import base64
import ipaddress
from typing import TYPE_CHECKING, Any, NotRequired, TypedDict

import pulumi
import pulumi_kubernetes as k8s

from ... import argument_rules as rules
from ...base import Issues
from ...cluster_base import ClusterArgs, ManagedCluster, control_plane_issues
from ...versions import DEFAULT_KUBERNETES_VERSION, minor_version
from . import arguments as aks_rules
from .system_pool import SYSTEM_POOL

if TYPE_CHECKING:
    from pulumi_azure_native import containerservice as cs

DEFAULT_SYSTEM_VM_SIZE = "Standard_D4ds_v5"
#: Azure CNI Overlay's pod range and the service range (private, outside the default 10.0.0.0/16 VNet).
DEFAULT_POD_CIDR = "10.244.0.0/16"
DEFAULT_SERVICE_CIDR = "10.245.0.0/16"
#: The managed autoscaler's expander: priority, with the ConfigMap of :mod:`components.clouds.aks.autoscaler`.
EXPANDER = "priority"


class AksSystemPool(TypedDict):
    """The cluster's system pool: controllers (DRA controller, DNS, metrics) on regular VMs."""

    vm_size: NotRequired[str]
    """The VM size (default ``Standard_D4ds_v5``)."""
    min_nodes: NotRequired[int]
    """Minimum nodes (default 1)."""
    max_nodes: NotRequired[int]
    """Maximum nodes (default 3)."""
    disk_size_gb: NotRequired[int]
    """OS disk size (default 100)."""


class AksClusterArgs(ClusterArgs):
    """An AKS cluster; its name is also its DNS prefix."""

    resource_group_name: pulumi.Input[str]
    """The resource group the cluster lives in."""
    location: str
    """The Azure region."""
    node_subnet_id: pulumi.Input[str]
    """The subnet of the nodes (``AksNetwork.node_subnet_id``)."""
    zones: NotRequired[list[str]]
    """Availability zones of the system pool (``["1", "2", "3"]``; default: none, regional)."""
    admin_group_object_ids: NotRequired[list[str]]
    """Microsoft Entra group object ids given cluster-admin (default none: grant Azure RBAC roles instead)."""
    pod_cidr: NotRequired[str]
    """The pods' overlay range (default ``10.244.0.0/16``)."""
    service_cidr: NotRequired[str]
    """The Services' range (default ``10.245.0.0/16``)."""
    tags: NotRequired[dict[str, str]]
    """Azure tags on the cluster."""
    system_pool: NotRequired[AksSystemPool]
    """The system pool."""


#: learn.microsoft.com/azure/aks/private-clusters: a private cluster's API server has a private endpoint in the
#: cluster's virtual network and no public address.
PRIVATE_API_SERVER = (
    "the API server is private (public_endpoint false; cluster.controlPlane.publicEndpoint): `pulumi up` reaches "
    "it only from inside the cluster's virtual network (or a network peered with it). Run it there and list "
    "that range in the policy rule control-plane-reachable's runnerCidrs config, or set public_endpoint with "
    "authorized_networks; without either the rule refuses this plan.")


def cluster_issues(args: AksClusterArgs) -> Issues:
    """Problems with the cluster settings, in argument names."""
    issues = control_plane_issues(args)
    if not args.get("public_endpoint") and args.get("authorized_networks"):
        issues.append(("authorized_networks", "only apply to a public API server (public_endpoint: true); a private "
                                              "cluster's API server has no public address to restrict"))
    for key, default in (("pod_cidr", DEFAULT_POD_CIDR), ("service_cidr", DEFAULT_SERVICE_CIDR)):
        try:
            ipaddress.ip_network(args.get(key, default), strict=True)
        except ValueError as exc:
            issues.append((key, f"{args.get(key)!r} is not a CIDR block ({exc})"))
    for i, zone in enumerate(args.get("zones") or []):
        if zone not in ("1", "2", "3"):
            issues.append((f"zones[{i}]", f"{zone!r} is not an Azure availability zone (\"1\", \"2\" or \"3\")"))
    issues += rules.non_empty_issues(args, "location", "Azure region")
    system_pool = args.get("system_pool") or {}
    issues += aks_rules.resource_group_name_issues(args.get("resource_group_name"), "resource_group_name")
    issues += aks_rules.pool_limit_issues(system_pool, "system_pool.")
    if "vm_size" in system_pool:
        issues += aks_rules.vm_size_issues(system_pool["vm_size"], "system_pool.vm_size")
    return issues + rules.system_pool_issues(system_pool, "system_pool")


def dns_service_ip(service_cidr: str) -> str:
    """The cluster DNS address: the tenth address of the service range, as AKS's own default."""
    return str(ipaddress.ip_network(service_cidr, strict=True)[10])


def api_server_access(args: AksClusterArgs) -> "cs.ManagedClusterAPIServerAccessProfileArgs":
    """Private API server, or a public one limited to the allow-list."""
    from pulumi_azure_native import containerservice as cs

    if args.get("public_endpoint"):
        return cs.ManagedClusterAPIServerAccessProfileArgs(
            enable_private_cluster=False, authorized_ip_ranges=list(args.get("authorized_networks") or []))
    return cs.ManagedClusterAPIServerAccessProfileArgs(enable_private_cluster=True)


def system_pool_profile(args: AksClusterArgs) -> "cs.ManagedClusterAgentPoolProfileArgs":
    from pulumi_azure_native import containerservice as cs

    pool = args.get("system_pool") or {}
    low, high = pool.get("min_nodes", 1), pool.get("max_nodes", 3)
    return cs.ManagedClusterAgentPoolProfileArgs(
        name=SYSTEM_POOL,
        mode="System",
        vm_size=pool.get("vm_size", DEFAULT_SYSTEM_VM_SIZE),
        count=low,
        min_count=low,
        max_count=high,
        enable_auto_scaling=True,
        os_type="Linux",
        os_sku="Ubuntu",
        os_disk_size_gb=pool.get("disk_size_gb", 100),
        vnet_subnet_id=args["node_subnet_id"],
        availability_zones=list(args.get("zones") or []) or None,
        enable_node_public_ip=False,
        orchestrator_version=minor_version(args.get("kubernetes_version", DEFAULT_KUBERNETES_VERSION)),
    )


def decoded_kubeconfig(credentials: Any) -> str:
    """The first kubeconfig of ``listManagedClusterUserCredentials`` (base64 in the API), as text."""
    value = credentials.kubeconfigs[0].value
    return base64.b64decode(value).decode()


class AksCluster(ManagedCluster):
    """An AKS cluster with Entra ID auth, workload identity, a system pool and a Kubernetes provider."""

    RULES = staticmethod(cluster_issues)

    resource_group_name: pulumi.Output[str]
    """The resource group the cluster lives in."""
    node_resource_group: pulumi.Output[str]
    """The resource group AKS keeps the nodes' scale sets in."""
    oidc_issuer_url: pulumi.Output[str]
    """The OIDC issuer, for workload identity federated credentials."""
    kubelet_identity_object_id: pulumi.Output[str]
    """The nodes' managed identity (grant it image pull rights)."""
    system_pool_name: str
    """The system pool's name (controllers are pinned to it)."""
    kubeconfig: pulumi.Output[str]
    """A kubeconfig that authenticates with ``kubelogin`` (no credentials inside)."""

    def __init__(self, name: str, args: AksClusterArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__(name, args, opts)

    def build(self, name: str, args: AksClusterArgs) -> None:
        from pulumi_azure_native import containerservice as cs

        service_cidr = args.get("service_cidr", DEFAULT_SERVICE_CIDR)
        cluster = cs.ManagedCluster(
            f"{name}-aks",
            resource_name_=args["name"],
            resource_group_name=args["resource_group_name"],
            location=args["location"],
            dns_prefix=args["name"],
            kubernetes_version=minor_version(args.get("kubernetes_version", DEFAULT_KUBERNETES_VERSION)),
            identity=cs.ManagedClusterIdentityArgs(type="SystemAssigned"),
            sku=cs.ManagedClusterSKUArgs(name="Base", tier="Standard"),
            enable_rbac=True,
            disable_local_accounts=True,
            aad_profile=cs.ManagedClusterAADProfileArgs(
                managed=True, enable_azure_rbac=True,
                admin_group_object_ids=list(args.get("admin_group_object_ids") or []) or None),
            oidc_issuer_profile=cs.ManagedClusterOIDCIssuerProfileArgs(enabled=True),
            security_profile=cs.ManagedClusterSecurityProfileArgs(
                workload_identity=cs.ManagedClusterSecurityProfileWorkloadIdentityArgs(enabled=True)),
            network_profile=cs.ContainerServiceNetworkProfileArgs(
                network_plugin="azure", network_plugin_mode="overlay", network_policy="azure",
                load_balancer_sku="standard", outbound_type="loadBalancer",
                pod_cidr=args.get("pod_cidr", DEFAULT_POD_CIDR), service_cidr=service_cidr,
                dns_service_ip=dns_service_ip(service_cidr)),
            api_server_access_profile=api_server_access(args),
            auto_scaler_profile=cs.ManagedClusterPropertiesAutoScalerProfileArgs(expander=EXPANDER),
            auto_upgrade_profile=cs.ManagedClusterAutoUpgradeProfileArgs(
                upgrade_channel="patch", node_os_upgrade_channel="NodeImage"),
            agent_pool_profiles=[system_pool_profile(args)],
            tags=dict(args.get("tags") or {}),
            # GPU pools are their own AgentPool resources; the autoscaler moves the system pool's count.
            opts=self.child(ignore_changes=["agentPoolProfiles[0].count"]),
        )
        if not args.get("public_endpoint"):
            pulumi.log.warn(PRIVATE_API_SERVER, resource=self)
        self.cluster_name = cluster.name
        self.resource_group_name = pulumi.Output.from_input(args["resource_group_name"])
        self.node_resource_group = cluster.node_resource_group
        self.oidc_issuer_url = cluster.oidc_issuer_profile.apply(lambda p: (p.issuer_url if p else "") or "")
        self.kubelet_identity_object_id = cluster.identity_profile.apply(
            lambda ids: (ids or {}).get("kubeletidentity").object_id if (ids or {}).get("kubeletidentity") else "")
        self.system_pool_name = SYSTEM_POOL
        credentials = cs.list_managed_cluster_user_credentials_output(
            resource_group_name=args["resource_group_name"], resource_name=cluster.name, format="exec",
            opts=pulumi.InvokeOutputOptions(parent=self))
        self.kubeconfig = pulumi.Output.secret(credentials.apply(decoded_kubeconfig))
        # The credentials invoke does not carry the cluster as a dependency: the provider names it, so that
        # it waits for the cluster and the pack's control-plane-reachable rule sees which cluster it talks to.
        self.kubernetes_provider = k8s.Provider(f"{name}-k8s", kubeconfig=self.kubeconfig,
                                                opts=self.child(depends_on=[cluster]))
