"""The vLLM workload: namespace + Hugging Face token Secret, Deployment, Service, PDB.

One unmodified Deployment runs on whatever its claim is given: its pods
reference the claim (``spec.resourceClaims`` + container
``resources.claims``), are steered to the pools the claim can use (GKE:
the compute class or node pool label; EKS: the stack's DRA pool labels) and tolerate
exactly those pools' taints (:func:`components.dra_wiring.node_taints`). The
start-up command (:mod:`components.entrypoint`) counts the devices it got and
sets ``--tensor-parallel-size``.

Secure defaults: the token only ever travels as a Pulumi secret into a
Kubernetes Secret read with ``secretKeyRef``; no service-account token;
no privilege escalation, all capabilities dropped, ``RuntimeDefault``
seccomp; the Service is ClusterIP unless a load balancer is asked for, and
that one is internal unless ``service.public`` says otherwise.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pulumi
from pulumi_kubernetes.apps import v1 as apps_v1
from pulumi_kubernetes.core import v1 as core_v1
from pulumi_kubernetes.meta.v1 import LabelSelectorArgs, ObjectMetaArgs
from pulumi_kubernetes.policy import v1 as policy_v1

from components import dra_wiring, entrypoint
from components.claims import ClaimRef
from stacks.config import DEFAULT_GPU_IMAGE, DEFAULT_TPU_IMAGE, ServiceConfig, StackConfig, Workload

SKIP_AWAIT = "pulumi.com/skipAwait"
HF_SECRET_NAME = "hf-token"
HF_SECRET_KEY = "hf_api_token"  # the key seeds 000 and 003 use
HEALTH_PATH = "/health"
SHM_VOLUME = "dshm"
MAIN_CONTAINER = "vllm"
#: Model download and load take minutes: the startup probe allows an hour.
STARTUP_PERIOD_SECONDS = 10
STARTUP_FAILURE_THRESHOLD = 360
PROGRESS_DEADLINE_SECONDS = 3600
#: Namespaces Kubernetes owns; the stack creates its workload namespaces itself.
RESERVED_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease")

GKE_LB_TYPE = "networking.gke.io/load-balancer-type"
AWS_LB_TYPE = "service.beta.kubernetes.io/aws-load-balancer-type"
AWS_LB_SCHEME = "service.beta.kubernetes.io/aws-load-balancer-scheme"
AWS_LB_INTERNAL = "service.beta.kubernetes.io/aws-load-balancer-internal"

Issues = list[tuple[str, str]]


# ---------------------------------------------------------------- pure helpers


def selector_labels(workload_name: str) -> dict[str, str]:
    return {"app.kubernetes.io/name": "vllm", "app.kubernetes.io/instance": workload_name}


def workload_labels(workload_name: str) -> dict[str, str]:
    return {**selector_labels(workload_name), "app.kubernetes.io/part-of": "gpu-fungibility",
            "app.kubernetes.io/managed-by": "pulumi"}


def image_of(cfg: StackConfig, workload: Workload) -> str:
    if workload.image:
        return workload.image
    return DEFAULT_TPU_IMAGE if cfg.family_of(workload) == "tpu" else DEFAULT_GPU_IMAGE


def placement_target(cfg: StackConfig, workload: Workload):
    """What decides placement: the workload itself, or the shared claim it uses."""
    return cfg.shared_claims[workload.shared_claim] if workload.shared_claim else workload


def node_placement(cfg: StackConfig, workload: Workload) -> dict[str, str] | None:
    """The ``nodeSelector`` steering pods (and the autoscaler) to the claim's pools.

    GKE: ``cloud.google.com/compute-class`` for a compute class (seed 000),
    ``cloud.google.com/gke-nodepool`` for one pool. EKS: the labels the stack
    itself sets on every pool the claim can use (``nvidia.com/gpu.dra=true``
    and shared user labels), which keep pods and the Cluster Autoscaler off
    CPU and device-plugin groups. Values come from :mod:`components.dra_wiring`.
    """
    target = placement_target(cfg, workload)
    pools = cfg.placement_pools(workload)
    if cfg.cluster.cloud == "gke":
        key = dra_wiring.GKE_COMPUTE_CLASS if target.compute_class else dra_wiring.GKE_NODEPOOL
        return {key: dra_wiring.node_labels(cfg, pools[0])[key]}
    common = dict(dra_wiring.pool_labels(cfg, pools[0]))
    for pool in pools[1:]:
        labels = dra_wiring.pool_labels(cfg, pool)
        common = {k: v for k, v in common.items() if labels.get(k) == v}
    return common or None


def toleration_keys(cfg: StackConfig, workload: Workload) -> list[tuple[str, str]]:
    """``(key, effect)`` of every taint on the nodes of the pools the claim can use, in order."""
    seen: list[tuple[str, str]] = []
    for pool in cfg.placement_pools(workload):
        for taint in dra_wiring.node_taints(cfg, pool):
            if (taint.key, taint.effect) not in seen:
                seen.append((taint.key, taint.effect))
    return seen


def tolerations(cfg: StackConfig, workload: Workload) -> list[core_v1.TolerationArgs]:
    return [core_v1.TolerationArgs(key=key, operator="Exists", effect=effect)
            for key, effect in toleration_keys(cfg, workload)]


def service_annotations(cloud: str, service: ServiceConfig) -> dict[str, str]:
    """Internal load balancer annotations unless ``public``; none for ClusterIP.

    EKS: ``aws-load-balancer-type: nlb`` with ``aws-load-balancer-scheme``
    (read by the AWS Load Balancer Controller) and, for internal ones,
    ``aws-load-balancer-internal`` (read by the cloud provider's own controller).
    """
    if service.type != "LoadBalancer":
        return {}
    if cloud == "gke":
        return {} if service.public else {GKE_LB_TYPE: "Internal"}
    if service.public:
        return {AWS_LB_TYPE: "nlb", AWS_LB_SCHEME: "internet-facing"}
    return {AWS_LB_TYPE: "nlb", AWS_LB_SCHEME: "internal", AWS_LB_INTERNAL: "true"}


@dataclass(frozen=True)
class ServedPort:
    """One vLLM server of the pod: its container, port name and port."""

    container: str
    port_name: str
    port: int


def served_ports(workload: Workload) -> list[ServedPort]:
    if workload.mig:
        return [ServedPort(piece.name, f"http-{i}", piece.port) for i, piece in enumerate(workload.mig)]
    return [ServedPort(MAIN_CONTAINER, "http", workload.port)]


def _probe(port_name: str, *, period: int, failures: int) -> core_v1.ProbeArgs:
    return core_v1.ProbeArgs(
        http_get=core_v1.HTTPGetActionArgs(path=HEALTH_PATH, port=port_name),
        period_seconds=period, failure_threshold=failures, timeout_seconds=5)


def _container(
    *, name: str, family: str, image: str, args: list[str], served: ServedPort,
    pod_claim: str, request: str | None, secret_name: str,
) -> core_v1.ContainerArgs:
    command, container_args = entrypoint.container_command(family, args)
    return core_v1.ContainerArgs(
        name=name,
        image=image,
        command=command,
        args=container_args,
        env=[core_v1.EnvVarArgs(name="HF_TOKEN", value_from=core_v1.EnvVarSourceArgs(
            secret_key_ref=core_v1.SecretKeySelectorArgs(name=secret_name, key=HF_SECRET_KEY)))],
        ports=[core_v1.ContainerPortArgs(name=served.port_name, container_port=served.port, protocol="TCP")],
        resources=core_v1.ResourceRequirementsArgs(claims=[core_v1.ResourceClaimArgs(name=pod_claim, request=request)]),
        startup_probe=_probe(served.port_name, period=STARTUP_PERIOD_SECONDS, failures=STARTUP_FAILURE_THRESHOLD),
        readiness_probe=_probe(served.port_name, period=10, failures=3),
        volume_mounts=[core_v1.VolumeMountArgs(name=SHM_VOLUME, mount_path="/dev/shm")],
        security_context=core_v1.SecurityContextArgs(
            allow_privilege_escalation=False,
            capabilities=core_v1.CapabilitiesArgs(drop=["ALL"]),
        ),
    )


def containers(cfg: StackConfig, workload: Workload, claim: ClaimRef, secret_name: str) -> list[core_v1.ContainerArgs]:
    """One serving container, or one per MIG slice bound to its own request."""
    family = cfg.family_of(workload)
    image = image_of(cfg, workload)
    ports = {p.container: p for p in served_ports(workload)}
    if workload.mig:
        requests = {c.container: c.request for c in claim.containers}
        return [
            _container(
                name=piece.name, family=family, image=image, served=ports[piece.name],
                args=entrypoint.server_args(
                    model=piece.model, port=piece.port, max_model_len=workload.max_model_len,
                    gpu_memory_utilization=workload.gpu_memory_utilization, extra_args=list(piece.extra_args)),
                pod_claim=claim.pod_claim_name, request=requests[piece.name], secret_name=secret_name,
            )
            for piece in workload.mig
        ]
    args = entrypoint.server_args(
        model=workload.model, port=workload.port, max_model_len=workload.max_model_len,
        gpu_memory_utilization=workload.gpu_memory_utilization, extra_args=list(workload.extra_args))
    return [_container(name=MAIN_CONTAINER, family=family, image=image, args=args, served=ports[MAIN_CONTAINER],
                       pod_claim=claim.pod_claim_name, request=None, secret_name=secret_name)]


def pod_spec(cfg: StackConfig, workload: Workload, claim: ClaimRef, secret_name: str) -> core_v1.PodSpecArgs:
    return core_v1.PodSpecArgs(
        automount_service_account_token=False,
        # Service links would put e.g. VLLM_PORT=tcp://... into the environment, which vLLM reads as its own.
        enable_service_links=False,
        security_context=core_v1.PodSecurityContextArgs(
            seccomp_profile=core_v1.SeccompProfileArgs(type="RuntimeDefault")),
        node_selector=node_placement(cfg, workload),
        tolerations=tolerations(cfg, workload),
        resource_claims=[core_v1.PodResourceClaimArgs(
            name=claim.pod_claim_name,
            resource_claim_template_name=claim.template_name,
            resource_claim_name=claim.claim_name,
        )],
        containers=containers(cfg, workload, claim, secret_name),
        volumes=[core_v1.VolumeArgs(name=SHM_VOLUME, empty_dir=core_v1.EmptyDirVolumeSourceArgs(medium="Memory"))],
    )


def workload_issues(cfg: StackConfig) -> Issues:
    """Problems with workloads the config model leaves to the objects built here."""
    issues: Issues = []
    for name, workload in cfg.workloads.items():
        path = f"workloads.{name}"
        for i, arg in enumerate(workload.extra_args):
            if entrypoint.conflicting_flags([arg]):
                issues.append((f"{path}.extraArgs[{i}]", f"{arg!r} is set by the workload itself "
                                                         f"(managed: {', '.join(entrypoint.MANAGED_FLAGS)})"))
        if workload.namespace in RESERVED_NAMESPACES:
            issues.append((f"{path}.namespace", f"{workload.namespace} belongs to Kubernetes; "
                                                "workloads get a namespace the stack creates (default: inference)"))
        for i, piece in enumerate(workload.mig or []):
            for j, arg in enumerate(piece.extra_args):
                if entrypoint.conflicting_flags([arg]):
                    issues.append((f"{path}.mig[{i}].extraArgs[{j}]", f"{arg!r} is set by the workload itself"))
        ports = [p.port for p in served_ports(workload)]
        if len(set(ports)) != len(ports):
            issues.append((f"{path}.mig", "each slice serves on its own port; ports must differ"))
    for name, claim in cfg.shared_claims.items():
        if claim.namespace in RESERVED_NAMESPACES:
            issues.append((f"sharedClaims.{name}.namespace", f"{claim.namespace} belongs to Kubernetes"))
    return issues


def workload_namespaces(cfg: StackConfig) -> list[str]:
    """Every namespace the workloads and shared claims live in, in config order."""
    names: list[str] = []
    for ns in [*(w.namespace for w in cfg.workloads.values()), *(c.namespace for c in cfg.shared_claims.values())]:
        if ns not in names:
            names.append(ns)
    return names


# ---------------------------------------------------------------- components


@dataclass
class WorkloadNamespaceArgs:
    """``namespace``: its name. ``hf_token``: the Pulumi secret; None creates no token Secret."""

    namespace: str
    hf_token: pulumi.Input[str] | None = None


class WorkloadNamespace(pulumi.ComponentResource):
    """A namespace for inference workloads and the Hugging Face token Secret in it.

    Pod Security admission enforces the ``baseline`` level there (vLLM images
    run as root, which ``restricted`` refuses).
    """

    namespace: core_v1.Namespace
    hf_secret: core_v1.Secret | None
    hf_secret_name: str

    def __init__(self, name: str, args: WorkloadNamespaceArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("gpu-fungibility:workload:WorkloadNamespace", name, None, opts)
        labels = {"app.kubernetes.io/part-of": "gpu-fungibility", "app.kubernetes.io/managed-by": "pulumi",
                  "pod-security.kubernetes.io/enforce": "baseline"}
        self.namespace = core_v1.Namespace(
            f"{name}-namespace",
            metadata=ObjectMetaArgs(name=args.namespace, labels=labels),
            opts=pulumi.ResourceOptions(parent=self),
        )
        self.hf_secret_name = HF_SECRET_NAME
        self.hf_secret = None
        if args.hf_token is not None:
            self.hf_secret = core_v1.Secret(
                f"{name}-hf-token",
                metadata=ObjectMetaArgs(name=HF_SECRET_NAME, namespace=args.namespace,
                                        labels={"app.kubernetes.io/part-of": "gpu-fungibility"}),
                type="Opaque",
                string_data={HF_SECRET_KEY: pulumi.Output.secret(args.hf_token)},
                opts=pulumi.ResourceOptions(parent=self, depends_on=[self.namespace]),
            )
        self.register_outputs({"namespace": args.namespace, "hfSecretName": self.hf_secret_name})


@dataclass
class VllmWorkloadArgs:
    """``config`` and ``workload_name`` select the workload; ``claim`` is how its pods
    reference their claim (from :class:`components.claims.DraClaims`);
    ``hf_secret_name`` the token Secret in its namespace; ``wait_for`` what must exist first."""

    config: StackConfig
    workload_name: str
    claim: ClaimRef
    hf_secret_name: str = HF_SECRET_NAME
    wait_for: Sequence[pulumi.Resource] = ()


class VllmWorkload(pulumi.ComponentResource):
    """A vLLM Deployment on DRA-claimed accelerators, its Service and (replicas > 1) its PDB."""

    deployment: apps_v1.Deployment
    service: core_v1.Service
    pdb: policy_v1.PodDisruptionBudget | None
    service_name: str

    def __init__(self, name: str, args: VllmWorkloadArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("gpu-fungibility:workload:VllmWorkload", name, None, opts)
        cfg = args.config
        if args.workload_name not in cfg.workloads:
            raise ValueError(f"no workload named {args.workload_name!r} in the stack config")
        issues = [i for i in workload_issues(cfg) if i[0].startswith(f"workloads.{args.workload_name}.")]
        if issues:
            from stacks.loader import ConfigError

            raise ConfigError(issues)
        workload = cfg.workloads[args.workload_name]
        wait_for = [*args.wait_for, *([args.claim.resource] if args.claim.resource else [])]
        self.deployment = _deployment(name, cfg, args.workload_name, args, self, wait_for)
        self.service = _service(name, cfg, args.workload_name, self, list(args.wait_for))
        self.service_name = args.workload_name
        self.pdb = _pdb(name, args.workload_name, workload, self, list(args.wait_for)) if workload.replicas > 1 else None
        self.register_outputs({
            "deployment": args.workload_name,
            "namespace": workload.namespace,
            "service": self.service_name,
        })


def _deployment(prefix: str, cfg: StackConfig, wl_name: str, args: VllmWorkloadArgs, parent: pulumi.Resource,
                wait_for: list[pulumi.Resource]) -> apps_v1.Deployment:
    workload = cfg.workloads[wl_name]
    return apps_v1.Deployment(
        f"{prefix}-deployment",
        metadata=ObjectMetaArgs(
            name=wl_name, namespace=workload.namespace, labels=workload_labels(wl_name),
            # A pod may wait for a node to scale up and then download a model: `pulumi up` does not block on it.
            annotations={SKIP_AWAIT: "true"},
        ),
        spec=apps_v1.DeploymentSpecArgs(
            replicas=workload.replicas,
            progress_deadline_seconds=PROGRESS_DEADLINE_SECONDS,
            selector=LabelSelectorArgs(match_labels=selector_labels(wl_name)),
            template=core_v1.PodTemplateSpecArgs(
                metadata=ObjectMetaArgs(labels=workload_labels(wl_name)),
                spec=pod_spec(cfg, workload, args.claim, args.hf_secret_name),
            ),
        ),
        opts=pulumi.ResourceOptions(parent=parent, depends_on=wait_for),
    )


def _service(prefix: str, cfg: StackConfig, wl_name: str, parent: pulumi.Resource,
             wait_for: list[pulumi.Resource]) -> core_v1.Service:
    workload = cfg.workloads[wl_name]
    service = workload.service
    if workload.mig:
        ports = [core_v1.ServicePortArgs(name=p.port_name, port=p.port, target_port=p.port_name, protocol="TCP")
                 for p in served_ports(workload)]
    else:
        ports = [core_v1.ServicePortArgs(name="http", port=service.port, target_port="http", protocol="TCP")]
    # Pulumi waits up to 10 minutes for a Service's endpoints to target a pod; the pods may wait longer
    # for a node to scale up (as the Deployment does), so `pulumi up` does not block on them here either.
    annotations = {SKIP_AWAIT: "true", **service_annotations(cloud=cfg.cluster.cloud, service=service)}
    return core_v1.Service(
        f"{prefix}-service",
        metadata=ObjectMetaArgs(name=wl_name, namespace=workload.namespace, labels=workload_labels(wl_name),
                                annotations=annotations),
        spec=core_v1.ServiceSpecArgs(type=service.type, selector=selector_labels(wl_name), ports=ports),
        opts=pulumi.ResourceOptions(parent=parent, depends_on=wait_for),
    )


def _pdb(prefix: str, wl_name: str, workload: Workload, parent: pulumi.Resource,
         wait_for: list[pulumi.Resource]) -> policy_v1.PodDisruptionBudget:
    return policy_v1.PodDisruptionBudget(
        f"{prefix}-pdb",
        metadata=ObjectMetaArgs(name=wl_name, namespace=workload.namespace, labels=workload_labels(wl_name)),
        spec=policy_v1.PodDisruptionBudgetSpecArgs(
            max_unavailable=1, selector=LabelSelectorArgs(match_labels=selector_labels(wl_name))),
        opts=pulumi.ResourceOptions(parent=parent, depends_on=wait_for),
    )
