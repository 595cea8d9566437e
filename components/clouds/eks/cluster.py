"""The EKS control plane, its system node group and the Kubernetes provider built from it.

Secure by default: the API endpoint is private unless
``cluster.controlPlane.publicEndpoint`` is set, and then only the listed
``authorizedNetworks`` reach it; access is managed with EKS access entries
(``authenticationMode: API``, no aws-auth ConfigMap), with cluster-admin
entries for ``controlPlane.adminPrincipals`` or, by default, the identity that
deploys the stack; Kubernetes secrets are
envelope-encrypted with a KMS key; all control plane logs go to CloudWatch;
an OIDC provider enables IAM roles for service accounts (IRSA).

A private-only endpoint answers inside the VPC alone, and the cluster security
group EKS creates admits only itself: ``runner_cidrs`` names the ranges in the
VPC that ``pulumi up`` runs from, and each gets an HTTPS ingress rule on that
group, so the Kubernetes provider can reach the API.
"""

import json
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, NotRequired, TypedDict

import pulumi
import pulumi_kubernetes as k8s

from ... import argument_rules as rules
from ...base import Issues, LibraryComponent
from ...cluster_base import ClusterArgs, ManagedCluster, control_plane_issues
from ...versions import DEFAULT_KUBERNETES_VERSION, minor_version
from .system_pool import SYSTEM_NODE_GROUP

if TYPE_CHECKING:
    import pulumi_aws as aws

CONTROL_PLANE_LOG_TYPES = ["api", "audit", "authenticator", "controllerManager", "scheduler"]
LOG_RETENTION_DAYS = 90
SYSTEM_AMI_TYPE = "AL2023_x86_64_STANDARD"
DEFAULT_SYSTEM_INSTANCE_TYPES = ("m6i.large",)
CLUSTER_ROLE_POLICIES = ("AmazonEKSClusterPolicy",)
#: The node role's managed policies. The VPC CNI runs with the node role (the
#: self-managed add-on EKS bootstraps), hence AmazonEKS_CNI_Policy here.
NODE_ROLE_POLICIES = (
    "AmazonEKSWorkerNodePolicy",
    "AmazonEC2ContainerRegistryReadOnly",
    "AmazonEKS_CNI_Policy",
)
CLUSTER_ADMIN_ACCESS_POLICY = "AmazonEKSClusterAdminPolicy"
KUBECONFIG_EXEC_API = "client.authentication.k8s.io/v1beta1"


IAM_PRINCIPAL_ARN = re.compile(r"arn:aws[a-z-]*:iam::\d{12}:(role|user)/[\w+=,.@/-]+")
#: The API server's port; the ingress rules for ``runner_cidrs`` open it and nothing else.
API_PORT = 443
#: Description of those rules: the policy pack's ``control-plane-reachable`` rule reads it.
RUNNER_RULE_DESCRIPTION = "pulumi up runner: Kubernetes API"
PRIVATE_WITHOUT_RUNNER = (
    "the API endpoint is private only and no runner_cidrs (cluster.controlPlane.runnerCidrs) are given: "
    "`pulumi up` reaches it only from inside the VPC through a security group rule this stack does not make. "
    "List the ranges in the VPC that run `pulumi up`, or set public_endpoint with authorized_networks; the "
    "policy rule control-plane-reachable refuses this plan.")


class EksSystemNodeGroup(TypedDict):
    """The cluster's small on-demand CPU node group for controllers (DRA controller, autoscaler, DNS)."""

    instance_types: NotRequired[list[str]]
    """EC2 instance types (default ``m6i.large``)."""
    min_nodes: NotRequired[int]
    """Minimum nodes (default 1)."""
    max_nodes: NotRequired[int]
    """Maximum nodes (default 3)."""
    disk_size_gb: NotRequired[int]
    """Root volume size (default 100)."""


class EksClusterArgs(ClusterArgs):
    """An EKS cluster."""

    region: str
    """The AWS region (for the kubeconfig's ``aws eks get-token``)."""
    subnet_ids: pulumi.Input[list[str]]
    """Private subnets in two or more zones (``EksNetwork.private_subnet_ids``)."""
    runner_cidrs: NotRequired[list[str]]
    """Ranges in the VPC or a network connected to it (peering, Transit Gateway, VPN) that ``pulumi up`` runs
    from: each may reach the API on 443. Without them a
    private-only endpoint (``public_endpoint`` false) gets a warning, and the policy pack refuses the plan."""
    admin_principals: NotRequired[list[str]]
    """IAM role/user ARNs given cluster-admin access entries (default: the identity that deploys)."""
    deletion_protection: NotRequired[bool]
    """Refuse to delete the cluster (default true)."""
    support_type: NotRequired[str]
    """``STANDARD`` (default) or ``EXTENDED``: what EKS does when the minor leaves standard support.
    STANDARD upgrades the cluster then; EXTENDED keeps the minor for 12 more months at $0.60 per cluster hour
    instead of $0.10 (EKS pricing). EKS's own default, when ``upgradePolicy`` is unset, is EXTENDED."""
    tags: NotRequired[dict[str, str]]
    """AWS tags on everything built."""
    system_node_group: NotRequired[EksSystemNodeGroup]
    """The CPU system node group."""


#: EKS ``upgradePolicy.supportType`` values (EKS API UpgradePolicyRequest).
SUPPORT_TYPES = ("STANDARD", "EXTENDED")


def cluster_issues(args: EksClusterArgs) -> Issues:
    """Problems with the cluster settings, in argument names."""
    issues = control_plane_issues(args, ("authorized_networks", "runner_cidrs"))
    if args.get("support_type", "STANDARD") not in SUPPORT_TYPES:
        issues.append(("support_type", f"{args.get('support_type')!r} is not one of {', '.join(SUPPORT_TYPES)}"))
    principals = list(args.get("admin_principals") or [])
    for i, arn in enumerate(principals):
        if not IAM_PRINCIPAL_ARN.fullmatch(arn):
            issues.append((f"admin_principals[{i}]", f"{arn!r} is not an IAM role or user ARN such as "
                                                     "arn:aws:iam::123456789012:role/platform-admins"))
    if len(set(principals)) != len(principals):
        issues.append(("admin_principals", "an ARN is listed twice"))
    issues += rules.non_empty_issues(args, "region", "AWS region")
    return issues + rules.system_pool_issues(args.get("system_node_group") or {}, "system_node_group")


def assume_role_policy(service: str) -> str:
    return json.dumps({
        "Version": "2012-10-17",
        "Statement": [{
            "Effect": "Allow",
            "Principal": {"Service": service},
            "Action": "sts:AssumeRole",
        }],
    })


def kubeconfig(cluster_name: str, endpoint: str, ca_data: str, region: str) -> dict:
    """A kubeconfig that authenticates with ``aws eks get-token`` (no credentials inside)."""
    return {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": cluster_name, "cluster": {"server": endpoint, "certificate-authority-data": ca_data}}],
        "contexts": [{"name": cluster_name, "context": {"cluster": cluster_name, "user": cluster_name}}],
        "current-context": cluster_name,
        "users": [{
            "name": cluster_name,
            "user": {
                "exec": {
                    "apiVersion": KUBECONFIG_EXEC_API,
                    "command": "aws",
                    "args": ["eks", "get-token", "--cluster-name", cluster_name, "--region", region,
                             "--output", "json"],
                    "interactiveMode": "Never",
                },
            },
        }],
    }


def vpc_config(args: EksClusterArgs) -> "aws.eks.ClusterVpcConfigArgs":
    """Private endpoint always; public only when asked, and then only for the allow-list."""
    import pulumi_aws as aws

    public = bool(args.get("public_endpoint", False))
    return aws.eks.ClusterVpcConfigArgs(
        subnet_ids=args["subnet_ids"],
        endpoint_private_access=True,
        endpoint_public_access=public,
        public_access_cidrs=list(args.get("authorized_networks") or []) if public else None,
    )


class EksCluster(ManagedCluster):
    """An EKS cluster with IAM, KMS, logging, IRSA, a system node group and a Kubernetes provider."""

    LEGACY_TYPE = "gpu-fungibility:eks_cluster:EksCluster"
    RULES = staticmethod(cluster_issues)

    endpoint: pulumi.Output[str]
    """The API endpoint."""
    oidc_provider_arn: pulumi.Output[str]
    """The IAM OIDC provider for IAM roles for service accounts (IRSA)."""
    oidc_issuer: pulumi.Output[str]
    """The OIDC issuer without ``https://``, as IAM trust conditions spell it."""
    node_role_arn: pulumi.Output[str]
    """The IAM role of the nodes: pass it to the GPU node groups."""
    node_role_attachments: "list[aws.iam.RolePolicyAttachment]"
    """The node role's policy attachments: node groups wait for them."""
    system_node_group_name: str
    """The system node group's name (controllers are pinned to it)."""
    kubeconfig: pulumi.Output[str]
    """A kubeconfig that authenticates with ``aws eks get-token`` (no credentials inside)."""

    def __init__(self, name: str, args: EksClusterArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__(name, args, opts)

    def build(self, name: str, args: EksClusterArgs) -> None:
        import pulumi_aws as aws

        cluster_name = args["name"]
        child = self.child()
        partition = aws.get_partition_output(opts=pulumi.InvokeOptions(parent=self)).partition
        tags = dict(args.get("tags") or {})

        role = _service_role(f"{name}-cluster-role", "eks.amazonaws.com", CLUSTER_ROLE_POLICIES, partition, tags, self)
        key = aws.kms.Key(
            f"{name}-secrets-key",
            description=f"Envelope encryption of Kubernetes secrets in EKS cluster {cluster_name}",
            enable_key_rotation=True,
            deletion_window_in_days=30,
            tags=tags,
            opts=child,
        )
        aws.kms.Alias(f"{name}-secrets-key", name=f"alias/{cluster_name}-eks-secrets", target_key_id=key.key_id,
                      opts=child)
        log_group = aws.cloudwatch.LogGroup(
            f"{name}-logs",
            name=f"/aws/eks/{cluster_name}/cluster",
            retention_in_days=LOG_RETENTION_DAYS,
            tags=tags,
            opts=child,
        )
        cluster = aws.eks.Cluster(
            f"{name}-eks",
            name=cluster_name,
            version=minor_version(args.get("kubernetes_version", DEFAULT_KUBERNETES_VERSION)),
            role_arn=role.role.arn,
            vpc_config=vpc_config(args),
            access_config=aws.eks.ClusterAccessConfigArgs(
                authentication_mode="API",
                bootstrap_cluster_creator_admin_permissions=False,
            ),
            encryption_config=aws.eks.ClusterEncryptionConfigArgs(
                resources=["secrets"],
                provider=aws.eks.ClusterEncryptionConfigProviderArgs(key_arn=key.arn),
            ),
            enabled_cluster_log_types=CONTROL_PLANE_LOG_TYPES,
            deletion_protection=args.get("deletion_protection", True),
            upgrade_policy=aws.eks.ClusterUpgradePolicyArgs(support_type=args.get("support_type", "STANDARD")),
            tags=tags,
            opts=self.child(depends_on=[*role.attachments, log_group]),
        )
        self.cluster_name = cluster.name
        self.endpoint = cluster.endpoint
        runner_rules = _runner_access(name, cluster, list(args.get("runner_cidrs") or []), tags, self)
        if not args.get("public_endpoint") and not runner_rules:
            pulumi.log.warn(PRIVATE_WITHOUT_RUNNER, resource=self)

        admins = _admin_access(name, cluster, list(args.get("admin_principals") or []), partition, self)
        issuer_url = cluster.identities.apply(lambda ids: ids[0].oidcs[0].issuer)
        oidc = aws.iam.OpenIdConnectProvider(
            f"{name}-oidc",
            url=issuer_url,
            client_id_lists=["sts.amazonaws.com"],
            tags=tags,
            opts=child,
        )
        self.oidc_provider_arn = oidc.arn
        self.oidc_issuer = issuer_url.apply(lambda url: url.removeprefix("https://"))

        node_role = _service_role(f"{name}-node-role", "ec2.amazonaws.com", NODE_ROLE_POLICIES, partition, tags, self)
        self.node_role_arn = node_role.role.arn
        self.node_role_attachments = node_role.attachments
        self.system_node_group_name = f"{cluster_name}-{SYSTEM_NODE_GROUP}"
        system_node_group = _system_node_group(
            f"{name}-system", self.system_node_group_name, args.get("system_node_group") or {}, cluster, node_role,
            args["subnet_ids"], tags, self)

        # Everything in-cluster waits for API access and for nodes to run controllers on.
        region = args["region"]
        self.kubeconfig = pulumi.Output.all(
            cluster.name,
            cluster.endpoint,
            cluster.certificate_authority.apply(lambda ca: ca.data),
            system_node_group.id,
            *[a.id for a in admins],
            *[r.id for r in runner_rules],
        ).apply(lambda a: json.dumps(kubeconfig(a[0], a[1], a[2], region)))
        self.kubernetes_provider = k8s.Provider(f"{name}-k8s", kubeconfig=self.kubeconfig, opts=child)


@dataclass
class _Role:
    role: "aws.iam.Role"
    attachments: "list[aws.iam.RolePolicyAttachment]"


def _service_role(
    name: str,
    service: str,
    managed_policies: tuple[str, ...],
    partition: pulumi.Output[str],
    tags: dict[str, str],
    parent: LibraryComponent,
) -> _Role:
    import pulumi_aws as aws

    role = aws.iam.Role(
        name,
        assume_role_policy=assume_role_policy(service),
        tags=tags,
        opts=parent.child(),
    )
    attachments = [
        aws.iam.RolePolicyAttachment(
            f"{name}-{policy}",
            role=role.name,
            policy_arn=partition.apply(lambda p, policy=policy: f"arn:{p}:iam::aws:policy/{policy}"),
            opts=parent.child(),
        )
        for policy in managed_policies
    ]
    return _Role(role, attachments)


def _admin_access(
    name: str,
    cluster: "aws.eks.Cluster",
    principals: list[str],
    partition: pulumi.Output[str],
    parent: LibraryComponent,
) -> "list[aws.eks.AccessPolicyAssociation]":
    """Cluster-admin access entries: ``adminPrincipals``, or else the IAM principal running the deployment.

    For an assumed-role session the entry is for the role (the session's issuer).
    """
    import pulumi_aws as aws

    if principals:
        targets: list[tuple[str, pulumi.Input[str]]] = [(f"admin-{i}", arn) for i, arn in enumerate(principals)]
    else:
        invoke = pulumi.InvokeOptions(parent=parent)
        caller = aws.get_caller_identity_output(opts=invoke)
        targets = [("deployer", aws.iam.get_session_context_output(arn=caller.arn, opts=invoke).issuer_arn)]
    policy_arn = partition.apply(lambda p: f"arn:{p}:eks::aws:cluster-access-policy/{CLUSTER_ADMIN_ACCESS_POLICY}")
    associations = []
    for role, principal in targets:
        entry = aws.eks.AccessEntry(
            f"{name}-{role}",
            cluster_name=cluster.name,
            principal_arn=principal,
            type="STANDARD",
            opts=parent.child(),
        )
        associations.append(aws.eks.AccessPolicyAssociation(
            f"{name}-{role}-admin",
            cluster_name=cluster.name,
            principal_arn=entry.principal_arn,
            policy_arn=policy_arn,
            access_scope=aws.eks.AccessPolicyAssociationAccessScopeArgs(type="cluster"),
            opts=parent.child(),
        ))
    return associations


def _runner_access(
    name: str,
    cluster: "aws.eks.Cluster",
    runner_cidrs: list[str],
    tags: dict[str, str],
    parent: LibraryComponent,
) -> "list[aws.vpc.SecurityGroupIngressRule]":
    """HTTPS from each runner range to the cluster security group (the API's private endpoint)."""
    import pulumi_aws as aws

    group = cluster.vpc_config.apply(lambda vpc: vpc.cluster_security_group_id)
    return [
        aws.vpc.SecurityGroupIngressRule(
            f"{name}-runner-{i}",
            security_group_id=group,
            cidr_ipv4=cidr,
            ip_protocol="tcp",
            from_port=API_PORT,
            to_port=API_PORT,
            description=RUNNER_RULE_DESCRIPTION,
            tags=tags,
            opts=parent.child(),
        )
        for i, cidr in enumerate(runner_cidrs)
    ]


def _system_node_group(
    name: str,
    node_group_name: str,
    pool: EksSystemNodeGroup,
    cluster: "aws.eks.Cluster",
    node_role: _Role,
    subnet_ids: pulumi.Input[list[str]],
    tags: dict[str, str],
    parent: LibraryComponent,
) -> "aws.eks.NodeGroup":
    """A small on-demand CPU group, untainted, for the DRA controller, the autoscaler and DNS."""
    import pulumi_aws as aws

    return aws.eks.NodeGroup(
        name,
        cluster_name=cluster.name,
        node_group_name=node_group_name,
        node_role_arn=node_role.role.arn,
        subnet_ids=subnet_ids,
        ami_type=SYSTEM_AMI_TYPE,
        capacity_type="ON_DEMAND",
        instance_types=list(pool.get("instance_types", DEFAULT_SYSTEM_INSTANCE_TYPES)),
        disk_size=pool.get("disk_size_gb", 100),
        scaling_config=aws.eks.NodeGroupScalingConfigArgs(
            min_size=pool.get("min_nodes", 1), max_size=pool.get("max_nodes", 3), desired_size=pool.get("min_nodes", 1)
        ),
        tags=tags,
        opts=parent.child(depends_on=node_role.attachments, ignore_changes=["scalingConfig.desiredSize"]),
    )
