"""The stack configuration model: the project's user interface.

Config lives in ``Pulumi.<stack>.yaml`` under the ``gpu-fungibility:`` namespace
and is parsed once, by :mod:`stacks.loader`, into these models. Field names are
snake_case in Python and camelCase in YAML (``node_pools`` <-> ``nodePools``).
Every default lives here, on the field. Rules that span fields live in
:mod:`stacks.rules`, which imports this module (never the other way round); the
loader runs them on the parsed model.
"""

from __future__ import annotations

import ipaddress
import re
from typing import Annotated, Literal

from gpu_fungibility import catalog, clouds, pins
from gpu_fungibility.support_calendar import effective_minor
from gpu_fungibility.versions import DEFAULT_KUBERNETES_VERSION, minor_version
from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, field_validator, model_validator
from pydantic.alias_generators import to_camel


def registered_clouds_text(names: tuple[str, ...]) -> str:
    """``'gke', 'eks' or 'aks'``: the registered clouds, as an unknown cloud's message lists them."""
    quoted = [repr(name) for name in names]
    return quoted[0] if len(quoted) == 1 else f"{', '.join(quoted[:-1])} or {quoted[-1]}"


def _registered_cloud(value: object) -> object:
    """A cloud of the registry (:func:`gpu_fungibility.clouds.names`), read when the config is parsed: a cloud
    registered after this module was imported (a fork's, a test's) is accepted like the shipped ones."""
    names = clouds.names()
    if isinstance(value, str) and value in names:
        return value
    raise ValueError(f"Input should be {registered_clouds_text(names)}")


#: ``cluster.cloud``: the name of a registered cloud.
Cloud = Annotated[str, BeforeValidator(_registered_cloud)]
TaintEffect = Literal["NoSchedule", "PreferNoSchedule", "NoExecute"]


#: vLLM images used when a workload sets no ``image``: pinned tags, never ``latest``.
DEFAULT_GPU_IMAGE = pins.VLLM_GPU_IMAGE
DEFAULT_TPU_IMAGE = pins.VLLM_TPU_IMAGE

# RFC 1123 label: what Kubernetes and both clouds accept for names we derive objects from.
DNS_LABEL = re.compile(r"^[a-z]([-a-z0-9]{0,38}[a-z0-9])?$")
NAME_RULE = "lowercase letters, digits and '-', starting with a letter, at most 40 characters"

Name = Annotated[str, Field(pattern=DNS_LABEL.pattern)]
IAM_PRINCIPAL_ARN = re.compile(r"arn:aws[a-z-]*:iam::\d{12}:(role|user)/[\w+=,.@/-]+")


class Model(BaseModel):
    """Base for every config model: camelCase keys, unknown keys refused, immutable."""

    model_config = ConfigDict(
        extra="forbid",
        alias_generator=to_camel,
        populate_by_name=True,
        frozen=True,
        validate_default=True,
    )


class ControlPlaneAccess(Model):
    """Who may reach the Kubernetes API, and how ``pulumi up`` reaches it.

    The IP endpoint is private by default. ``publicEndpoint: true`` needs
    ``authorizedNetworks`` (GKE master authorized networks / EKS ``publicAccessCidrs``).
    ``dnsEndpoint`` (GKE): the Kubernetes provider and the kubeconfig use the
    DNS-based endpoint, authorized by IAM and reachable from anywhere; ``false``
    makes them use the IP endpoint. ``runnerCidrs``: where ``pulumi up`` runs,
    needed when the provider would use a private IP endpoint (GKE
    ``dnsEndpoint: false`` with ``publicEndpoint: false``: refused without it;
    EKS ``publicEndpoint: false``: warned, and the policy pack refuses the plan);
    GKE adds them to the authorized networks, EKS opens 443 to them.
    ``adminPrincipals`` (EKS): IAM role/user ARNs given cluster-admin access
    entries; empty (default) = the identity running the deployment. When set,
    include the identity that runs ``pulumi up`` (e.g. the CI role).
    """

    public_endpoint: bool = False
    authorized_networks: list[str] = []
    dns_endpoint: bool = True  # GKE
    runner_cidrs: list[str] = []
    admin_principals: list[str] = []
    #: AKS: Microsoft Entra group object ids given cluster-admin (empty: grant Azure RBAC roles instead).
    admin_group_object_ids: list[str] = []

    @field_validator("admin_principals")
    @classmethod
    def _iam_arns(cls, value: list[str]) -> list[str]:
        for arn in value:
            if not IAM_PRINCIPAL_ARN.fullmatch(arn):
                raise ValueError(f"{arn!r} is not an IAM role or user ARN such as "
                                 "arn:aws:iam::123456789012:role/platform-admins")
        if len(set(value)) != len(value):
            raise ValueError("an ARN is listed twice")
        return value

    @field_validator("authorized_networks", "runner_cidrs")
    @classmethod
    def _cidrs(cls, value: list[str]) -> list[str]:
        for cidr in value:
            try:
                ipaddress.ip_network(cidr, strict=True)
            except ValueError as exc:
                raise ValueError(f"{cidr!r} is not a CIDR block such as 203.0.113.0/24 ({exc})") from None
        return value
    # publicEndpoint: true needs authorizedNetworks: every cluster component's own check.


class NetworkConfig(Model):
    """The cluster network. A new VPC is built unless existing subnets are named.

    ``cidr``: the VPC (EKS) or node subnet (GKE) range. ``existingSubnetIds``
    (EKS) or ``existingSubnetwork`` (GKE) reuse a network you manage.
    ``natGatewayPerZone`` (EKS): one NAT gateway per zone instead of one shared
    NAT gateway (default false: cheaper, but node egress depends on one zone).
    """

    cidr: str = "10.0.0.0/16"
    existing_subnet_ids: list[str] = []
    nat_gateway_per_zone: bool = False
    existing_network: str | None = None
    existing_subnetwork: str | None = None
    pods_cidr: str = "10.4.0.0/14"  # GKE: Pod IP range (subnet secondary range)
    services_cidr: str = "10.8.0.0/20"  # GKE: Service IP range (subnet secondary range)
    existing_subnet_id: str | None = None  # AKS: the nodes' subnet, by resource id

    @field_validator("cidr", "pods_cidr", "services_cidr")
    @classmethod
    def _cidr(cls, value: str) -> str:
        try:
            net = ipaddress.ip_network(value, strict=True)
        except ValueError as exc:
            raise ValueError(f"{value!r} is not a CIDR block such as 10.0.0.0/16 ({exc})") from None
        if net.prefixlen > 20:
            raise ValueError(f"{value} is too small for a cluster; use a /20 or larger")
        return value

    @model_validator(mode="after")
    def _subnetwork_needs_network(self) -> NetworkConfig:
        if self.existing_subnetwork and not self.existing_network:
            raise ValueError("existingSubnetwork needs existingNetwork (the VPC the subnetwork belongs to)")
        return self


class SystemPool(Model):
    """A small CPU pool for controllers (DRA controller, autoscaler, DNS)."""

    machine_type: str = "e2-standard-4"  # GKE
    instance_types: list[str] = ["m6i.large"]  # EKS
    vm_size: str = "Standard_D4ds_v5"  # AKS
    # min >= 1, max >= 1, min <= max, diskSizeGb >= 20: the cluster components' own check
    # (gpu_fungibility.argument_rules.system_pool_issues), reported here with these key paths.
    min: int = 1
    max: int = 3
    disk_size_gb: int = 100


class ClusterConfig(Model):
    cloud: Cloud
    name: str  # a DNS label of 1-40 characters: the cluster components' check (argument_rules.cluster_name_issues)
    location: str  # not empty: the cluster components' check
    zones: list[str] = Field(min_length=1)
    kubernetes_version: str = DEFAULT_KUBERNETES_VERSION
    release_channel: Literal["RAPID", "REGULAR", "STABLE", "EXTENDED", "UNSPECIFIED"] = "REGULAR"
    eks_support_type: Literal["STANDARD", "EXTENDED"] = "STANDARD"  # EKS upgradePolicy (EksClusterArgs.support_type)
    private_nodes: bool = True
    control_plane: ControlPlaneAccess = ControlPlaneAccess()
    network: NetworkConfig = NetworkConfig()
    system_pool: SystemPool = SystemPool()
    deletion_protection: bool = True
    labels: dict[str, str] = {}
    resource_group: str | None = None  # AKS: an existing resource group (default: one named <name>-rg is built)

    @field_validator("kubernetes_version", mode="before")
    @classmethod
    def _version_is_text(cls, value: object) -> object:
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            raise ValueError(f"YAML read an unquoted version as the number {value!r}: quote it, "
                             "kubernetesVersion: \"1.35\" (unquoted, 1.40 would even read as 1.4)")
        return value

    @property
    def minor_version(self) -> str:
        """The minor the cluster will run (``"1.35"`` for ``"1.35.1-gke.100"``): on GKE in a release channel,
        never below the channel's default minor (``support_calendar.effective_minor``)."""
        return effective_minor(self.cloud, minor_version(self.kubernetes_version), self.release_channel)


class Accelerator(Model):
    """What each node of a pool carries.

    ``type`` is a catalog name (``nvidia-a100-80gb``, ``tpu-v6e-slice``, ...);
    ``count`` devices per node. ``topology`` is for TPU slices (defaults to the
    machine's single-host topology).
    """

    type: str
    count: int = Field(default=1, ge=1, le=16)
    topology: str | None = None

    @property
    def model(self) -> catalog.GpuModel | catalog.TpuModel:
        """The catalog entry. An unknown type is reported by the pool component's own check (with this key
        path), before anything reads it here."""
        found = catalog.accelerator(self.type)
        if found is None:
            raise LookupError(f"unknown accelerator type {self.type!r}")
        return found

    @property
    def known(self) -> bool:
        return catalog.accelerator(self.type) is not None

    @property
    def family(self) -> catalog.Family | None:
        """``gpu`` or ``tpu``; None for a type the catalog does not know (reported by the pool's check)."""
        found = catalog.accelerator(self.type)
        return found.family if found else None


class Taint(Model):
    key: str = Field(min_length=1)
    value: str = ""
    effect: TaintEffect = "NoSchedule"



class DeviceToleration(Model):
    """A toleration of DRA device taints for every request of a claim (Kubernetes honours it from 1.36)."""

    key: str | None = None
    operator: Literal["Equal", "Exists"] = "Equal"
    value: str | None = None
    effect: Literal["NoSchedule", "NoExecute"] | None = None


class Autoscaling(Model):
    min: int = Field(default=0, ge=0)
    max: int = Field(default=1, ge=1)



class NodePool(Model):
    """One accelerator pool (GKE node pool / EKS managed node group).

    ``dra: true`` (default) wires the pool for DRA: the DRA kubelet plugin runs
    there and the device plugin never does. ``dra: false`` makes a classic
    device-plugin GPU pool. ``spot`` defaults to true; an on-demand pool should
    say so with ``onDemandFallback: true``.
    """

    machine_type: str | None = None  # GKE
    instance_types: list[str] | None = None  # EKS
    vm_size: str | None = None  # AKS
    accelerator: Accelerator
    spot: bool = True
    on_demand_fallback: bool = False
    dra: bool = True
    autoscaling: Autoscaling = Autoscaling()
    disk_size_gb: int = 200  # at least 50: the pool component's rule
    zones: list[str] | None = None
    labels: dict[str, str] = {}
    taints: list[Taint] = []

    @property
    def family(self) -> catalog.Family:
        return self.accelerator.family


class ActiveMigration(Model):
    optimize_rule_priority: bool = False


class ComputeClass(Model):
    """An ordered fallback list of pools (most preferred first).

    On GKE it becomes a ComputeClass; on EKS the Cluster Autoscaler's priority
    expander order. Each pool also becomes one ``firstAvailable`` alternative
    of the workloads' claims, in the same order.
    """

    pools: list[str] = Field(min_length=1)
    consolidation_delay_minutes: int | None = Field(default=None, ge=0)
    when_unsatisfiable: Literal["ScaleUpAnyway", "DoNotScaleUp"] | None = None
    active_migration: ActiveMigration | None = None


class ServiceConfig(Model):
    """How a workload is exposed. Cluster-internal unless said otherwise.

    ``type: LoadBalancer`` gets an *internal* load balancer; ``public: true``
    (with LoadBalancer) is the only way to get an internet-facing one.
    """

    type: Literal["ClusterIP", "LoadBalancer"] = "ClusterIP"
    public: bool = False
    port: int = 8000  # 1-65535: the workload component's rule

    @model_validator(mode="after")
    def _public_needs_lb(self) -> ServiceConfig:
        if self.public and self.type != "LoadBalancer":
            raise ValueError("public: true only applies to type: LoadBalancer")
        return self


class MigSlice(Model):
    """One MIG slice of a MIG workload: a request and the container bound to it."""

    name: Name
    profile: str
    model: str
    port: int  # 1-65535: the workload component's rule
    extra_args: list[str] = []


class WorkloadResources(Model):
    """CPU and memory of each serving container (Kubernetes quantities).

    Unset: sized to the smallest node the workload can land on, after what
    the cloud reserves and the stack's DaemonSets (docs/workloads.md).
    ``memory`` is the request and the limit, /dev/shm included.
    """

    cpu: str | None = None
    memory: str | None = None

    @field_validator("cpu", mode="before")
    @classmethod
    def _number_is_a_quantity(cls, value: object) -> object:
        """``cpu: 8`` in YAML is the quantity ``"8"``."""
        return str(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else value


class Workload(Model):
    """A vLLM Deployment whose pods claim accelerators through DRA.

    Placement: exactly one of ``computeClass`` (fungible: one claim alternative
    per pool), ``pool`` (one pool), or ``sharedClaim`` (share a named claim).
    """

    compute_class: str | None = None
    pool: str | None = None
    shared_claim: str | None = None
    model: str | None = Field(default=None, min_length=1)  # required unless mig slices name their own
    image: str | None = None  # default: DEFAULT_GPU_IMAGE / DEFAULT_TPU_IMAGE
    # Ranges of replicas (>= 0), maxModelLen (>= 1), gpuMemoryUtilization ((0, 1]) and the ports (1-65535)
    # are the workload component's rules (gpu_fungibility.argument_rules), reported with these key paths.
    replicas: int = 1
    max_model_len: int | None = None
    gpu_memory_utilization: float | None = None
    min_accelerator_memory_gi: int | None = Field(default=None, ge=1)
    namespace: Name = "inference"
    port: int = 8000
    extra_args: list[str] = []
    service: ServiceConfig = ServiceConfig()
    mig: list[MigSlice] | None = None
    resources: WorkloadResources = WorkloadResources()
    device_tolerations: list[DeviceToleration] = []  # every request of its claim template (1.36: DRADeviceTaints)

    @model_validator(mode="after")
    def _one_placement(self) -> Workload:
        chosen = [k for k, v in (("computeClass", self.compute_class), ("pool", self.pool),
                                 ("sharedClaim", self.shared_claim)) if v]
        if len(chosen) != 1:
            raise ValueError(
                "set exactly one of computeClass, pool or sharedClaim "
                f"(found {', '.join(chosen) if chosen else 'none'})"
            )
        if self.mig is not None and not self.pool:
            raise ValueError("a mig workload runs on one pool: set pool, not computeClass or sharedClaim")
        return self


class DeviceClassConfig(Model):
    """A DeviceClass the stack creates (seed 002's ``high-memory-gpu``)."""

    driver: Literal["gpu.nvidia.com", "tpu.google.com"] = "gpu.nvidia.com"
    min_memory_gi: int | None = None  # >= 1: the claims component's rule
    product_names: list[str] = []
    architectures: list[str] = []
    expressions: list[str] = []  # extra CEL, ANDed
    devices: Literal["gpu", "mig"] = "gpu"  # NVIDIA: whole GPUs, or MIG slices (memory = the slice's, from NVML)


class SharedClaim(Model):
    """A named ResourceClaim several pods (and workloads) share (seed 002, pattern 2)."""

    namespace: Name = "inference"
    compute_class: str | None = None
    pool: str | None = None
    device_class: str | None = None  # a deviceClasses entry; default: the driver's class
    device_tolerations: list[DeviceToleration] = []  # every request of the claim (1.36: DRADeviceTaints)

    @model_validator(mode="after")
    def _one_placement(self) -> SharedClaim:
        if bool(self.compute_class) == bool(self.pool):
            raise ValueError("set exactly one of computeClass or pool")
        return self


class HelmChart(Model):
    """A pinned Helm chart. ``version`` is required: charts are never floating."""

    chart: str
    version: str = Field(min_length=1)
    repo: str | None = None
    namespace: Name
    values: dict = {}  # extra values, merged over the project's


class DriverInstaller(Model):
    """GKE's NVIDIA driver installer for COS (seed 000), pinned images.

    ``installerImage`` is the installer GKE preloads on each COS GPU node to
    match its COS build (never pulled); ``partitionImage`` (MIG partitioning)
    and ``pauseImage`` are pulled, so they are pinned. ``driverVersion``:
    ``default`` or ``latest`` driver branch for the node's COS release.
    """

    installer_image: str = pins.COS_DRIVER_INSTALLER_IMAGE
    partition_image: str = pins.GPU_PARTITION_IMAGE
    pause_image: str = pins.PAUSE_IMAGE
    driver_version: Literal["default", "latest"] = "default"


class DriversConfig(Model):
    """Chart versions and the driver installer, in one place, overridable per stack."""

    nvidia_dra: HelmChart = HelmChart(
        chart=pins.NVIDIA_DRA_CHART, version=pins.NVIDIA_DRA_VERSION, namespace=pins.NVIDIA_DRA_NAMESPACE)
    tpu_dra: HelmChart = HelmChart(
        chart=pins.TPU_DRA_CHART, version=pins.TPU_DRA_VERSION, namespace=pins.TPU_DRA_NAMESPACE)
    nvidia_device_plugin: HelmChart = HelmChart(
        chart=pins.NVIDIA_DEVICE_PLUGIN_CHART, repo=pins.NVIDIA_DEVICE_PLUGIN_REPO,
        version=pins.NVIDIA_DEVICE_PLUGIN_VERSION, namespace=pins.NVIDIA_DEVICE_PLUGIN_NAMESPACE)
    cluster_autoscaler: HelmChart = HelmChart(
        chart=pins.CLUSTER_AUTOSCALER_CHART, repo=pins.CLUSTER_AUTOSCALER_REPO,
        version=pins.CLUSTER_AUTOSCALER_VERSION, namespace=pins.CLUSTER_AUTOSCALER_NAMESPACE)
    nvidia_driver_installer: DriverInstaller = DriverInstaller()


class StackConfig(Model):
    """Everything under ``gpu-fungibility:`` except ``hfToken`` (a secret, see the loader)."""

    cluster: ClusterConfig
    node_pools: dict[Name, NodePool] = {}
    compute_classes: dict[Name, ComputeClass] = {}
    workloads: dict[Name, Workload] = {}
    device_classes: dict[str, DeviceClassConfig] = {}
    shared_claims: dict[Name, SharedClaim] = {}
    drivers: DriversConfig = DriversConfig()


    # ---- derived views used by components, policies and the simulator ----

    def compute_class_of(self, pool_name: str) -> str | None:
        """The compute class a pool belongs to (a pool belongs to at most one)."""
        for class_name, cc in self.compute_classes.items():
            if pool_name in cc.pools:
                return class_name
        return None

    def pools_of(self, family: catalog.Family) -> dict[str, NodePool]:
        return {n: p for n, p in self.node_pools.items() if p.family == family}

    def placement_pools(self, workload: Workload | SharedClaim) -> list[str]:
        """The pools a workload (or shared claim) may use, in preference order."""
        if isinstance(workload, Workload) and workload.shared_claim:
            return self.placement_pools(self.shared_claims[workload.shared_claim])
        if workload.compute_class:
            return list(self.compute_classes[workload.compute_class].pools)
        return [workload.pool] if workload.pool else []

    def family_of(self, workload: Workload | SharedClaim) -> catalog.Family:
        return self.node_pools[self.placement_pools(workload)[0]].family


class ConfigIssues(ValueError):
    """Cross-field problems, each with its full key path; raised from the model validator."""

    def __init__(self, issues: list[tuple[str, str]]):
        self.issues = issues
        super().__init__("; ".join(f"{p}: {m}" for p, m in issues))
