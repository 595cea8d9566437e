"""The EKS control plane, its system node group and the Kubernetes provider built from it.

Secure by default: the API endpoint is private unless
``cluster.controlPlane.publicEndpoint`` is set, and then only the listed
``authorizedNetworks`` reach it; access is managed with EKS access entries
(``authenticationMode: API``, no aws-auth ConfigMap), with cluster-admin
entries for ``controlPlane.adminPrincipals`` or, by default, the identity that
deploys the stack; Kubernetes secrets are
envelope-encrypted with a KMS key; all control plane logs go to CloudWatch;
an OIDC provider enables IAM roles for service accounts (IRSA).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

import pulumi
import pulumi_aws as aws
import pulumi_kubernetes as k8s

from stacks.config import ClusterConfig, SystemPool

CONTROL_PLANE_LOG_TYPES = ["api", "audit", "authenticator", "controllerManager", "scheduler"]
LOG_RETENTION_DAYS = 90
SYSTEM_NODE_GROUP = "system"
SYSTEM_AMI_TYPE = "AL2023_x86_64_STANDARD"
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


@dataclass
class EksClusterArgs:
    """``config`` is the stack's ``cluster`` block; ``region`` its AWS region (cluster.location)."""

    config: ClusterConfig
    region: str
    subnet_ids: pulumi.Input[list[str]]
    tags: dict[str, str] = field(default_factory=dict)


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


def vpc_config(config: ClusterConfig, subnet_ids: pulumi.Input[list[str]]) -> aws.eks.ClusterVpcConfigArgs:
    """Private endpoint always; public only when asked, and then only for the allow-list."""
    access = config.control_plane
    return aws.eks.ClusterVpcConfigArgs(
        subnet_ids=subnet_ids,
        endpoint_private_access=True,
        endpoint_public_access=access.public_endpoint,
        public_access_cidrs=list(access.authorized_networks) if access.public_endpoint else None,
    )


class EksCluster(pulumi.ComponentResource):
    """``aws.eks.Cluster`` with IAM, KMS, logging, IRSA, a system node group and a Kubernetes provider."""

    cluster: aws.eks.Cluster
    cluster_name: pulumi.Output[str]
    endpoint: pulumi.Output[str]
    oidc_provider_arn: pulumi.Output[str]
    oidc_issuer: pulumi.Output[str]  # without https://, as IAM conditions spell it
    node_role_arn: pulumi.Output[str]
    node_role_attachments: list[aws.iam.RolePolicyAttachment]
    system_node_group: aws.eks.NodeGroup
    kubeconfig: pulumi.Output[str]
    k8s_provider: k8s.Provider

    def __init__(self, name: str, args: EksClusterArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("gpu-fungibility:eks_cluster:EksCluster", name, None, opts)
        cfg = args.config
        child = pulumi.ResourceOptions(parent=self)
        partition = aws.get_partition_output(opts=pulumi.InvokeOptions(parent=self)).partition
        tags = {**cfg.labels, **args.tags}

        role = _service_role(f"{name}-cluster-role", "eks.amazonaws.com", CLUSTER_ROLE_POLICIES, partition, tags, self)
        key = aws.kms.Key(
            f"{name}-secrets-key",
            description=f"Envelope encryption of Kubernetes secrets in EKS cluster {cfg.name}",
            enable_key_rotation=True,
            deletion_window_in_days=30,
            tags=tags,
            opts=child,
        )
        aws.kms.Alias(f"{name}-secrets-key", name=f"alias/{cfg.name}-eks-secrets", target_key_id=key.key_id, opts=child)
        log_group = aws.cloudwatch.LogGroup(
            f"{name}-logs",
            name=f"/aws/eks/{cfg.name}/cluster",
            retention_in_days=LOG_RETENTION_DAYS,
            tags=tags,
            opts=child,
        )
        self.cluster = aws.eks.Cluster(
            f"{name}-eks",
            name=cfg.name,
            version=cfg.minor_version,
            role_arn=role.role.arn,
            vpc_config=vpc_config(cfg, args.subnet_ids),
            access_config=aws.eks.ClusterAccessConfigArgs(
                authentication_mode="API",
                bootstrap_cluster_creator_admin_permissions=False,
            ),
            encryption_config=aws.eks.ClusterEncryptionConfigArgs(
                resources=["secrets"],
                provider=aws.eks.ClusterEncryptionConfigProviderArgs(key_arn=key.arn),
            ),
            enabled_cluster_log_types=CONTROL_PLANE_LOG_TYPES,
            deletion_protection=cfg.deletion_protection,
            tags=tags,
            opts=pulumi.ResourceOptions(parent=self, depends_on=[*role.attachments, log_group]),
        )
        self.cluster_name = self.cluster.name
        self.endpoint = self.cluster.endpoint

        admins = _admin_access(name, self.cluster, list(cfg.control_plane.admin_principals), partition, self)
        issuer_url = self.cluster.identities.apply(lambda ids: ids[0].oidcs[0].issuer)
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
        self.system_node_group = _system_node_group(
            f"{name}-system", cfg.name, cfg.system_pool, self.cluster, node_role, args.subnet_ids, tags, self
        )

        # Everything in-cluster waits for API access and for nodes to run controllers on.
        self.kubeconfig = pulumi.Output.all(
            self.cluster.name,
            self.cluster.endpoint,
            self.cluster.certificate_authority.apply(lambda ca: ca.data),
            self.system_node_group.id,
            *[a.id for a in admins],
        ).apply(lambda a: json.dumps(kubeconfig(a[0], a[1], a[2], args.region)))
        self.k8s_provider = k8s.Provider(f"{name}-k8s", kubeconfig=self.kubeconfig, opts=child)

        self.register_outputs({
            "cluster_name": self.cluster_name,
            "endpoint": self.endpoint,
            "oidc_provider_arn": self.oidc_provider_arn,
            "node_role_arn": self.node_role_arn,
            "kubeconfig": self.kubeconfig,
        })


@dataclass
class _Role:
    role: aws.iam.Role
    attachments: list[aws.iam.RolePolicyAttachment]


def _service_role(
    name: str,
    service: str,
    managed_policies: tuple[str, ...],
    partition: pulumi.Output[str],
    tags: dict[str, str],
    parent: pulumi.Resource,
) -> _Role:
    role = aws.iam.Role(
        name,
        assume_role_policy=assume_role_policy(service),
        tags=tags,
        opts=pulumi.ResourceOptions(parent=parent),
    )
    attachments = [
        aws.iam.RolePolicyAttachment(
            f"{name}-{policy}",
            role=role.name,
            policy_arn=partition.apply(lambda p, policy=policy: f"arn:{p}:iam::aws:policy/{policy}"),
            opts=pulumi.ResourceOptions(parent=parent),
        )
        for policy in managed_policies
    ]
    return _Role(role, attachments)


def _admin_access(
    name: str,
    cluster: aws.eks.Cluster,
    principals: list[str],
    partition: pulumi.Output[str],
    parent: pulumi.Resource,
) -> list[aws.eks.AccessPolicyAssociation]:
    """Cluster-admin access entries: ``adminPrincipals``, or else the IAM principal running the deployment.

    For an assumed-role session the entry is for the role (the session's issuer).
    """
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
            opts=pulumi.ResourceOptions(parent=parent),
        )
        associations.append(aws.eks.AccessPolicyAssociation(
            f"{name}-{role}-admin",
            cluster_name=cluster.name,
            principal_arn=entry.principal_arn,
            policy_arn=policy_arn,
            access_scope=aws.eks.AccessPolicyAssociationAccessScopeArgs(type="cluster"),
            opts=pulumi.ResourceOptions(parent=parent),
        ))
    return associations


def _system_node_group(
    name: str,
    cluster_name: str,
    pool: SystemPool,
    cluster: aws.eks.Cluster,
    node_role: _Role,
    subnet_ids: pulumi.Input[list[str]],
    tags: dict[str, str],
    parent: pulumi.Resource,
) -> aws.eks.NodeGroup:
    """A small on-demand CPU group, untainted, for the DRA controller, the autoscaler and DNS."""
    return aws.eks.NodeGroup(
        name,
        cluster_name=cluster.name,
        node_group_name=f"{cluster_name}-{SYSTEM_NODE_GROUP}",
        node_role_arn=node_role.role.arn,
        subnet_ids=subnet_ids,
        ami_type=SYSTEM_AMI_TYPE,
        capacity_type="ON_DEMAND",
        instance_types=list(pool.instance_types),
        disk_size=pool.disk_size_gb,
        scaling_config=aws.eks.NodeGroupScalingConfigArgs(
            min_size=pool.min, max_size=pool.max, desired_size=pool.min
        ),
        tags=tags,
        opts=pulumi.ResourceOptions(
            parent=parent,
            depends_on=node_role.attachments,
            ignore_changes=["scalingConfig.desiredSize"],
        ),
    )
