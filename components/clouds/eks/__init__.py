"""EKS: Amazon Elastic Kubernetes Service's profile (managed node groups, priority expander)."""

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from ... import catalog, node_capacity, zones
from ... import wiring_keys as w
from ...node_selection import NodeTaint
from .. import CloudProfile, CpuMemory, Issues, cpu_reserved_millicores, machines_hint, register
from . import calendar as calendar_rows
from . import capacity as capacity_model
from . import machines as machine_table
from . import regions as zone_data

if TYPE_CHECKING:
    from ...wiring_keys import PoolSpec

AWS_LB_TYPE = "service.beta.kubernetes.io/aws-load-balancer-type"
AWS_LB_SCHEME = "service.beta.kubernetes.io/aws-load-balancer-scheme"
AWS_LB_INTERNAL = "service.beta.kubernetes.io/aws-load-balancer-internal"


class Eks(CloudProfile):
    name, title = "eks", "EKS"
    families = ("gpu",)
    fallback_mechanism = "Cluster Autoscaler priority expander"
    # The upstream autoscaler cannot describe the DRA devices of a node group with no nodes on AWS.
    dra_scales_from_zero = False
    compute_class_on_nodes = False
    nvidia_driver_root = None  # the AL2023 NVIDIA AMI has the driver on the host
    critical_pods_need_quota = False
    nvidia_dra_quota_by_default = True  # seed 004 creates the quota on EKS
    pool_machine_argument = "instance_types"
    # docs.aws.amazon.com/eks/latest/userguide/managed-node-groups.html: managed node groups label their nodes.
    node_pool_label = "eks.amazonaws.com/nodegroup"
    cluster_type, pool_type = "aws:eks/cluster:Cluster", "aws:eks/nodeGroup:NodeGroup"
    # docs.aws.amazon.com/AWSEC2/latest/UserGuide/spot-instance-termination-notices.html: a two-minute
    # interruption notice. The node group drains the node after the notice reaches the cluster; 30 s of the
    # two minutes are left for that and for the node's own shutdown.
    spot_notice_seconds = 120
    spot_pod_grace_seconds = 90
    #: Pods per node when the catalog does not know the instance (Kubernetes' default maxPods).
    DEFAULT_MAX_PODS = 110
    machines = machine_table.MACHINES
    support_calendar = calendar_rows.CALENDAR
    library_components = {"EksNetwork": "clouds.eks.network", "EksCluster": "clouds.eks.cluster",
                          "EksGpuNodeGroup": "clouds.eks.node_groups",
                          "ClusterAutoscaler": "clouds.eks.cluster_autoscaler"}
    library_args = {"EksNetworkArgs": "clouds.eks.network", "EksClusterArgs": "clouds.eks.cluster",
                    "EksSystemNodeGroup": "clouds.eks.cluster", "EksGpuNodeGroupArgs": "clouds.eks.node_groups",
                    "ClusterAutoscalerArgs": "clouds.eks.cluster_autoscaler"}

    def capacity(self, host: catalog.HostShape) -> CpuMemory:
        # A share fitted below public measurements (capacity.kernel_reserved_mib).
        nominal = host.memory_gib * node_capacity.MIB_PER_GIB
        return host.vcpus * 1000, int(nominal - capacity_model.kernel_reserved_mib(nominal))

    def kube_reserved(self, host: catalog.HostShape) -> CpuMemory:
        # AL2023 nodeadm: 11 MiB x maxPods + 255 MiB (capacity.kube_reserved_mib). maxPods is the
        # VPC CNI's ENI figure nodeadm computes; a lower maxPods (a kubelet override, a cap) reserves less,
        # so the estimate then errs low.
        max_pods = host.max_pods or self.DEFAULT_MAX_PODS
        return cpu_reserved_millicores(host.vcpus), capacity_model.kube_reserved_mib(max_pods)

    #: EKS AMI types whose nodes run the NVIDIA device plugin as a host service.
    AMIS_WITH_DEVICE_PLUGIN = ("BOTTLEROCKET_x86_64_NVIDIA", "BOTTLEROCKET_ARM_64_NVIDIA")

    def stack_taints(self, pool: "PoolSpec") -> list[NodeTaint]:
        return [NodeTaint(w.GPU_TAINT_KEY, "true", "NoSchedule")] if pool.family == "gpu" else []

    def added_labels(self, pool: "PoolSpec") -> dict[str, str]:
        return {w.EKS_NODEGROUP: pool.name, w.EKS_CAPACITY_TYPE: "SPOT" if pool.spot else "ON_DEMAND"}

    def added_taints(self, pool: "PoolSpec") -> list[NodeTaint]:
        return []

    def load_balancer_annotations(self, public: bool) -> dict[str, str]:
        # ``aws-load-balancer-type``/``-scheme`` are read by the AWS Load Balancer Controller,
        # ``aws-load-balancer-internal`` by the cloud provider's own service controller.
        if public:
            return {AWS_LB_TYPE: "nlb", AWS_LB_SCHEME: "internet-facing"}
        return {AWS_LB_TYPE: "nlb", AWS_LB_SCHEME: "internal", AWS_LB_INTERNAL: "true"}

    def built_in_device_plugins(self, family: str, node_labels: Mapping[str, str],
                                image_type: str | None = None) -> list[str]:
        if family == "gpu" and image_type in self.AMIS_WITH_DEVICE_PLUGIN:
            return [f"the NVIDIA device plugin built into {image_type} nodes"]
        return []

    def zone_findings(self, location: str, zoned: "zones.Zoned",
                      pools: "zones.PoolZones") -> tuple[Issues, list[str]]:
        return zone_data.ec2_findings(location, zoned, pools)

    def pool_shape_issues(self, family: str, accelerator_type: str, accelerator_count: int,
                          machine_types: Sequence[str], topology: str | None = None) -> Issues:
        if family not in self.families:
            return [("accelerator_type", "TPUs are only available on GKE")]
        if not machine_types:
            return [("instance_types", "required on EKS: one or more instance types; "
                                       f"{machines_hint(self.machines, accelerator_type, accelerator_count)}")]
        issues: Issues = []
        for i, itype in enumerate(machine_types):
            shape = self.machine_shape(itype)
            if shape is None:
                known = catalog.natural_sorted(s for s, m in self.machines.items() if m.accelerator == accelerator_type)
                issues.append((f"instance_types[{i}]", f"unknown GPU instance type {itype!r}; for "
                                                       f"{accelerator_type}: {', '.join(known) or 'none'}"))
            elif shape.accelerator != accelerator_type or shape.count != accelerator_count:
                issues.append((f"instance_types[{i}]",
                               f"{itype} carries {shape.count} x {shape.accelerator}, but the pool declares "
                               f"{accelerator_count} x {accelerator_type}; all instance types of a group must match; "
                               f"{machines_hint(self.machines, accelerator_type, accelerator_count)}"))
        return issues


PROFILE = register(Eks())
