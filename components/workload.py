"""The vLLM workload: namespace + Hugging Face token Secret, Deployment, Service, PDB.

One unmodified Deployment runs on whatever its claim is given: its pods
reference the claim (``spec.resourceClaims`` + container ``resources.claims``),
are steered to the pools the claim can use (``node_selector``) and tolerate
exactly those pools' taints (``tolerate_taints``: the pools' ``node_taints``).
Among running nodes of those pools, a weighted preferred node affinity derived
from ``pool_preference`` (the same ordered list as the claim's ``firstAvailable``)
makes the scheduler pick the most preferred pool (:func:`preference_weights`).
The start-up command (:mod:`components.entrypoint`) counts the devices it got
and sets ``--tensor-parallel-size``.

Sized for its nodes (:mod:`gpu_fungibility.sizing`): each serving container
requests CPU and memory (memory is also its limit, /dev/shm included) - by
default its share of the smallest node among ``pools`` once the cloud's
reservations and the library's DaemonSets are taken out. On spot pools the
pods' ``terminationGracePeriodSeconds`` fits the cloud's reclaim notice; vLLM
(the container's PID 1, exec'd by the entrypoint) stops accepting requests as
soon as it gets SIGTERM, and a terminating pod leaves the Service's endpoints.

Secure defaults: the token only ever travels as a Pulumi secret into a
Kubernetes Secret read with ``secretKeyRef``; no service-account token; no
privilege escalation, all capabilities dropped, ``RuntimeDefault`` seccomp; the
Service is ClusterIP unless a load balancer is asked for, and that one is
internal (the cloud profile's annotations) unless ``public`` says otherwise.
"""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NotRequired, TypedDict

import pulumi
from pulumi_kubernetes.apps import v1 as apps_v1
from pulumi_kubernetes.core import v1 as core_v1
from pulumi_kubernetes.meta.v1 import LabelSelectorArgs, ObjectMetaArgs
from pulumi_kubernetes.policy import v1 as policy_v1

from . import clouds, entrypoint, pins, sizing
from .argument_rules import namespace_issues, port_issues, workload_number_issues
from .base import RESERVED_NAMESPACES, Issues, LibraryComponent, resolved
from .errors import UnknownCloudError
from .pool_args import Taint, taint_issues, taints_of

SKIP_AWAIT = "pulumi.com/skipAwait"
HF_SECRET_NAME = "hf-token"
HF_SECRET_KEY = "hf_api_token"  # the key seeds 000 and 003 use
HEALTH_PATH = "/health"
SHM_VOLUME = "dshm"
MAIN_CONTAINER = "vllm"
MIG_POD_CLAIM = "mig"
#: Model download and load take minutes: the startup probe allows an hour.
STARTUP_PERIOD_SECONDS = 10
STARTUP_FAILURE_THRESHOLD = 360
PROGRESS_DEADLINE_SECONDS = 3600
#: Namespaces Kubernetes owns; workloads get a namespace of their own.
SERVICE_TYPES = ("ClusterIP", "LoadBalancer")
FAMILIES = ("gpu", "tpu")


# ---------------------------------------------------------------- arguments


class WorkloadClaim(TypedDict):
    """How the pods reference their devices: a claim template (one claim per pod) or a shared claim."""

    template_name: NotRequired[pulumi.Input[str]]
    """A ResourceClaimTemplate in the workload's namespace (``DraClaims.claim_template_names``)."""
    claim_name: NotRequired[pulumi.Input[str]]
    """A shared ResourceClaim in the workload's namespace."""
    pod_claim_name: NotRequired[str]
    """The pod's ``resourceClaims`` entry (default: ``gpu``/``tpu``, or ``mig`` with MIG servers)."""


class MigServer(TypedDict):
    """One vLLM server of a MIG workload, bound to one MIG slice request of the claim."""

    name: str
    """The container's name and the claim request (slice) it is bound to."""
    model: str
    """The Hugging Face model id it serves."""
    port: int
    """The port it serves on (unique in the pod)."""
    extra_args: NotRequired[list[str]]
    """Extra vLLM arguments."""


class WorkloadService(TypedDict):
    """How the workload is exposed."""

    type: NotRequired[str]
    """``ClusterIP`` (default) or ``LoadBalancer`` (internal unless ``public``)."""
    public: NotRequired[bool]
    """An internet-facing load balancer: an explicit opt-in (default false)."""
    port: NotRequired[int]
    """The Service port (default 8000)."""


class ServingPool(TypedDict):
    """One pool the workload's pods can land on."""

    name: str
    """The pool's name (errors name it)."""
    machine_types: list[str]
    """Its machine type (GKE) or instance types (EKS), as the catalog knows them."""
    spot: NotRequired[bool]
    """Spot capacity (default false): the pods' termination grace period then fits the cloud's reclaim notice."""


class PreferredPool(TypedDict):
    """One pool in the pods' order of preference, named by labels only its nodes carry."""

    name: str
    """The pool's name (errors name it)."""
    node_labels: dict[str, str]
    """Labels every node of the pool carries and no node of the other listed pools (e.g. its node pool label)."""


class ServingResources(TypedDict):
    """CPU and memory of each serving container (Kubernetes quantities)."""

    cpu: NotRequired[str]
    """The CPU request, e.g. ``"8"`` or ``"7500m"`` (default: sized from ``pools``)."""
    memory: NotRequired[str]
    """The memory request and limit, /dev/shm included, e.g. ``"64Gi"`` (default: sized from ``pools``)."""


class VllmWorkloadArgs(TypedDict):
    """A vLLM Deployment whose pods claim accelerators through DRA."""

    namespace: str
    """The namespace (a ``WorkloadNamespace`` holding the token Secret)."""
    accelerator_family: str
    """``gpu`` or ``tpu``: how the entrypoint counts devices, and the default image."""
    claim: WorkloadClaim
    """The claim the pods use."""
    model: NotRequired[str]
    """The Hugging Face model id (required unless ``mig_servers`` name their own)."""
    image: NotRequired[str]
    """The serving image (default: the pinned vLLM GPU or TPU image)."""
    replicas: NotRequired[int]
    """Deployment replicas (default 1); above 1 a PodDisruptionBudget keeps all but one running."""
    port: NotRequired[int]
    """The serving port (default 8000)."""
    max_model_len: NotRequired[int]
    """vLLM ``--max-model-len``."""
    gpu_memory_utilization: NotRequired[float]
    """vLLM ``--gpu-memory-utilization`` (for shared GPUs)."""
    extra_args: NotRequired[list[str]]
    """Extra vLLM arguments (not the ones the workload sets itself)."""
    mig_servers: NotRequired[list[MigServer]]
    """One server per MIG slice instead of one server on whole devices."""
    node_selector: NotRequired[dict[str, str]]
    """The pods' nodeSelector: what steers them (and the autoscaler) to the claim's pools."""
    pool_preference: NotRequired[list[PreferredPool]]
    """The pools the claim can use, most preferred first (the order of its ``firstAvailable``): the pods carry a
    preferred node affinity with a weight per pool derived from this order (:func:`preference_weights`)."""
    tolerate_taints: NotRequired[pulumi.Input[list[Taint]]]
    """The taints of the pools the claim can use (their ``node_taints``): the pods tolerate each key."""
    service: NotRequired[WorkloadService]
    """The Service (default: ClusterIP on port 8000)."""
    cloud: NotRequired[str]
    """``gke`` or ``eks``: which annotations keep a LoadBalancer internal (required for one)."""
    hf_secret_name: NotRequired[str]
    """The Secret holding the Hugging Face token under ``hf_api_token`` (default ``hf-token``)."""
    pools: NotRequired[list[ServingPool]]
    """The pools the pods can land on (needs ``cloud``): containers are sized to fit the smallest of their nodes,
    given ``resources`` are checked against each, and spot pools shorten the termination grace period."""
    resources: NotRequired[ServingResources]
    """CPU and memory of each serving container (default: its share of the smallest node of ``pools``)."""
    pods_per_node: NotRequired[int]
    """How many of these pods share one node (a shared claim's pods, MIG slices of one node; default 1)."""


# ---------------------------------------------------------------- pure helpers

#: A preferred scheduling term's weight is 1 to 100 (k8s.io/api core/v1 ``PreferredSchedulingTerm.weight``).
MAX_TERM_WEIGHT = 100


def preference_weights(count: int) -> list[int]:
    """The preferred-affinity weight of each of ``count`` pools, most preferred first; the last gets none (0).

    kube-scheduler's NodeAffinity score is the sum of the matching terms' weights, normalised so the best
    feasible node gets 100 (pkg/scheduler/framework/plugins/nodeaffinity/node_affinity.go ``Score`` and
    ``NormalizeScore``), and counts twice in the default profile (apis/config/v1/default_plugins.go, weight 2).
    Weights fall geometrically from 100 to 1, so whichever listed pools have room, the best of them outscores
    the next by the largest share of those 200 points integer weights allow: 200 with two pools, 198 with
    three (100, 1, 0), 180 with four (100, 10, 1, 0), at least 100 with eight.
    """
    if count < 2:
        return [0] * count
    steps = count - 2
    weights = [round(MAX_TERM_WEIGHT ** ((steps - i) / steps)) if steps else MAX_TERM_WEIGHT
               for i in range(count - 1)]
    for i in range(1, len(weights)):  # strictly decreasing, never below 1
        weights[i] = max(1, min(weights[i], weights[i - 1] - 1))
    return [*weights, 0]


def preferred_terms(pools: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The pods' ``preferredDuringSchedulingIgnoredDuringExecution`` terms for pools in order of preference."""
    return [{"weight": weight, "preference": {"matchExpressions": [
                {"key": key, "operator": "In", "values": [value]} for key, value in pool["node_labels"].items()]}}
            for pool, weight in zip(pools, preference_weights(len(pools)), strict=True) if weight]


def affinity(args: Mapping[str, Any]) -> core_v1.AffinityArgs | None:
    terms = preferred_terms(args.get("pool_preference") or [])
    if not terms:
        return None
    return core_v1.AffinityArgs(node_affinity=core_v1.NodeAffinityArgs(
        preferred_during_scheduling_ignored_during_execution=[
            core_v1.PreferredSchedulingTermArgs(weight=t["weight"], preference=core_v1.NodeSelectorTermArgs(
                match_expressions=[core_v1.NodeSelectorRequirementArgs(**e)
                                   for e in t["preference"]["matchExpressions"]]))
            for t in terms]))



def selector_labels(workload_name: str) -> dict[str, str]:
    return {"app.kubernetes.io/name": "vllm", "app.kubernetes.io/instance": workload_name}


def workload_labels(workload_name: str) -> dict[str, str]:
    return {**selector_labels(workload_name), "app.kubernetes.io/part-of": "gpu-fungibility",
            "app.kubernetes.io/managed-by": "pulumi"}


def default_image(family: str) -> str:
    return pins.VLLM_TPU_IMAGE if family == "tpu" else pins.VLLM_GPU_IMAGE


def toleration_keys(taints: Sequence[Mapping[str, Any]]) -> list[tuple[str, str]]:
    """``(key, effect)`` of every taint, first occurrence order."""
    return list(dict.fromkeys((t.key, t.effect) for t in taints_of(taints)))


def tolerations(taints: Sequence[Mapping[str, Any]]) -> list[core_v1.TolerationArgs]:
    return [core_v1.TolerationArgs(key=key, operator="Exists", effect=effect) for key, effect in toleration_keys(taints)]


@dataclass(frozen=True)
class ServedPort:
    """One vLLM server of the pod: its container, port name and port."""

    container: str
    port_name: str
    port: int


def served_ports(args: Mapping[str, Any]) -> list[ServedPort]:
    if args.get("mig_servers"):
        return [ServedPort(s["name"], f"http-{i}", int(s["port"])) for i, s in enumerate(args["mig_servers"])]
    return [ServedPort(MAIN_CONTAINER, "http", int(args.get("port", 8000)))]


def pod_claim_name(args: Mapping[str, Any]) -> str:
    claim = args.get("claim") or {}
    if claim.get("pod_claim_name"):
        return str(claim["pod_claim_name"])
    return MIG_POD_CLAIM if args.get("mig_servers") else str(args["accelerator_family"])


def _family(args: Mapping[str, Any]) -> str:
    return str(args.get("accelerator_family"))


def pool_rooms(args: Mapping[str, Any]) -> list[sizing.PoolRoom]:
    """The room on the smallest node of each known pool (pools with an unknown machine are skipped)."""
    pools = args.get("pools") or []
    if not pools:
        return []
    cloud = clouds.profile(args.get("cloud"))
    rooms = [sizing.pool_room(cloud.name, p["name"], list(p.get("machine_types") or []), _family(args))
             for p in pools]
    return [r for r in rooms if r is not None]


def containers_per_node(args: Mapping[str, Any]) -> int:
    """Serving containers on one node: pods per node x servers per pod."""
    return max(int(args.get("pods_per_node", 1)), 1) * len(served_ports(args))


def serving_resources(args: Mapping[str, Any]) -> sizing.ServingResources | None:
    """Each serving container's requests: the given ones, the rest sized from ``pools`` (None: neither)."""
    given = args.get("resources") or {}
    sized = sizing.default_resources(pool_rooms(args), containers_per_node(args))
    cpu = sizing.parse_cpu(given["cpu"]) if given.get("cpu") else (sized.cpu_m if sized else None)
    memory = sizing.parse_memory(given["memory"]) if given.get("memory") else (sized.memory_mib if sized else None)
    if cpu is None or memory is None:
        return None
    return sizing.ServingResources(cpu, memory)


def termination_grace_seconds(args: Mapping[str, Any]) -> int | None:
    """The cloud's spot grace when a pool is spot (None: Kubernetes' default, 30 s)."""
    if not any(p.get("spot") for p in args.get("pools") or []):
        return None
    return clouds.profile(args.get("cloud")).spot_pod_grace_seconds


def resource_requirements(resources: sizing.ServingResources | None, pod_claim: str,
                          request: str | None) -> core_v1.ResourceRequirementsArgs:
    claims = [core_v1.ResourceClaimArgs(name=pod_claim, request=request)]
    if resources is None:
        return core_v1.ResourceRequirementsArgs(claims=claims)
    return core_v1.ResourceRequirementsArgs(claims=claims, requests={"cpu": resources.cpu, "memory": resources.memory},
                                            limits={"memory": resources.memory})


def _probe(port_name: str, *, period: int, failures: int) -> core_v1.ProbeArgs:
    return core_v1.ProbeArgs(
        http_get=core_v1.HTTPGetActionArgs(path=HEALTH_PATH, port=port_name),
        period_seconds=period, failure_threshold=failures, timeout_seconds=5)


def _container(*, name: str, family: str, image: str, args: list[str], served: ServedPort,
               pod_claim: str, request: str | None, secret_name: str,
               resources: sizing.ServingResources | None) -> core_v1.ContainerArgs:
    command, container_args = entrypoint.container_command(family, args)
    return core_v1.ContainerArgs(
        name=name,
        image=image,
        command=command,
        args=container_args,
        env=[core_v1.EnvVarArgs(name="HF_TOKEN", value_from=core_v1.EnvVarSourceArgs(
            secret_key_ref=core_v1.SecretKeySelectorArgs(name=secret_name, key=HF_SECRET_KEY)))],
        ports=[core_v1.ContainerPortArgs(name=served.port_name, container_port=served.port, protocol="TCP")],
        resources=resource_requirements(resources, pod_claim, request),
        startup_probe=_probe(served.port_name, period=STARTUP_PERIOD_SECONDS, failures=STARTUP_FAILURE_THRESHOLD),
        readiness_probe=_probe(served.port_name, period=10, failures=3),
        volume_mounts=[core_v1.VolumeMountArgs(name=SHM_VOLUME, mount_path="/dev/shm")],
        security_context=core_v1.SecurityContextArgs(
            allow_privilege_escalation=False,
            capabilities=core_v1.CapabilitiesArgs(drop=["ALL"]),
        ),
    )


def containers(args: Mapping[str, Any]) -> list[core_v1.ContainerArgs]:
    """One serving container, or one per MIG slice bound to its own request."""
    family = str(args["accelerator_family"])
    image = args.get("image") or default_image(family)
    ports = {p.container: p for p in served_ports(args)}
    secret = args.get("hf_secret_name", HF_SECRET_NAME)
    claim = pod_claim_name(args)
    resources = serving_resources(args)
    common = {"max_model_len": args.get("max_model_len"), "gpu_memory_utilization": args.get("gpu_memory_utilization")}
    if args.get("mig_servers"):
        return [
            _container(name=s["name"], family=family, image=image, served=ports[s["name"]],
                       args=entrypoint.server_args(model=s["model"], port=int(s["port"]),
                                                   extra_args=list(s.get("extra_args") or []), **common),
                       pod_claim=claim, request=s["name"], secret_name=secret, resources=resources)
            for s in args["mig_servers"]
        ]
    server = entrypoint.server_args(model=args["model"], port=int(args.get("port", 8000)),
                                    extra_args=list(args.get("extra_args") or []), **common)
    return [_container(name=MAIN_CONTAINER, family=family, image=image, args=server, served=ports[MAIN_CONTAINER],
                       pod_claim=claim, request=None, secret_name=secret, resources=resources)]


def shm_volume(resources: sizing.ServingResources | None) -> core_v1.VolumeArgs:
    """/dev/shm in memory, its size limit inside each container's memory limit."""
    return core_v1.VolumeArgs(name=SHM_VOLUME, empty_dir=core_v1.EmptyDirVolumeSourceArgs(
        medium="Memory", size_limit=resources.shm if resources else None))


def pod_spec(args: Mapping[str, Any]) -> core_v1.PodSpecArgs:
    claim = args["claim"]
    return core_v1.PodSpecArgs(
        termination_grace_period_seconds=termination_grace_seconds(args),
        automount_service_account_token=False,
        # Service links would put e.g. VLLM_PORT=tcp://... into the environment, which vLLM reads as its own.
        enable_service_links=False,
        security_context=core_v1.PodSecurityContextArgs(
            seccomp_profile=core_v1.SeccompProfileArgs(type="RuntimeDefault")),
        node_selector=dict(args.get("node_selector") or {}) or None,
        affinity=affinity(args),
        tolerations=resolved(args.get("tolerate_taints", []), tolerations),
        resource_claims=[core_v1.PodResourceClaimArgs(
            name=pod_claim_name(args),
            resource_claim_template_name=claim.get("template_name"),
            resource_claim_name=claim.get("claim_name"),
        )],
        containers=containers(args),
        volumes=[shm_volume(serving_resources(args))],
    )


def service_annotations(args: Mapping[str, Any]) -> dict[str, str]:
    """Internal load balancer annotations unless ``public``; none for ClusterIP."""
    service = args.get("service") or {}
    if service.get("type", "ClusterIP") != "LoadBalancer":
        return {}
    return clouds.profile(args.get("cloud")).load_balancer_annotations(bool(service.get("public", False)))


def workload_issues(args: Mapping[str, Any]) -> Issues:
    """Problems with the arguments, in argument names."""
    issues: Issues = []
    family = args.get("accelerator_family")
    if family not in FAMILIES:
        issues.append(("accelerator_family", f"{family!r} is not one of {', '.join(FAMILIES)}"))
    for i, arg in enumerate(args.get("extra_args") or []):
        if entrypoint.conflicting_flags([arg]):
            issues.append((f"extra_args[{i}]", f"{arg!r} is set by the workload itself "
                                               f"(managed: {', '.join(entrypoint.MANAGED_FLAGS)})"))
    if args.get("namespace") in RESERVED_NAMESPACES:
        issues.append(("namespace", f"{args['namespace']} belongs to Kubernetes; give workloads a namespace "
                                    "of their own"))
    issues += namespace_issues(args.get("namespace")) + workload_number_issues(args)
    servers = args.get("mig_servers")
    if servers is None and not args.get("model"):
        issues.append(("model", "required: the Hugging Face model id to serve"))
    if servers is not None and args.get("model"):
        issues.append(("model", "MIG servers serve one model each: give each MIG server its model and remove this one"))
    for i, server in enumerate(servers or []):
        for j, arg in enumerate(server.get("extra_args") or []):
            if entrypoint.conflicting_flags([arg]):
                issues.append((f"mig_servers[{i}].extra_args[{j}]", f"{arg!r} is set by the workload itself"))
    ports = [p.port for p in served_ports(args) if not port_issues(p.port, "")]
    if len(set(ports)) != len(ports):
        issues.append(("mig_servers", "each slice serves on its own port; ports must differ"))
    if args.get("gpu_memory_utilization") is not None and family == "tpu":
        issues.append(("gpu_memory_utilization", "only applies to GPU workloads"))
    claim = args.get("claim") or {}
    if bool(claim.get("template_name")) == bool(claim.get("claim_name")):
        issues.append(("claim", "set exactly one of template_name or claim_name"))
    service = args.get("service") or {}
    if service.get("type", "ClusterIP") not in SERVICE_TYPES:
        issues.append(("service.type", f"{service.get('type')!r} is not one of {', '.join(SERVICE_TYPES)}"))
    elif service.get("public") and service.get("type") != "LoadBalancer":
        issues.append(("service.public", "public only applies to type LoadBalancer"))
    elif service.get("type") == "LoadBalancer":
        try:
            clouds.profile(args.get("cloud"))
        except UnknownCloudError as exc:
            issues.append(("cloud", f"a LoadBalancer needs the cloud to stay internal: {exc.issues[0][1]}"))
    issues += preference_issues(args.get("pool_preference"))
    taints = args.get("tolerate_taints")
    if isinstance(taints, list):
        issues += taint_issues(taints, "tolerate_taints")
    return issues + sizing_issues(args)


def preference_issues(pools: Any) -> Issues:
    """Pools without labels, or listed twice."""
    if pools is None:
        return []
    if not isinstance(pools, list):
        return [("pool_preference", "must be a list of pools, most preferred first")]
    issues: Issues = []
    seen: set[tuple] = set()
    for i, pool in enumerate(pools):
        labels = pool.get("node_labels") if isinstance(pool, Mapping) else None
        if not isinstance(labels, Mapping) or not labels:
            issues.append((f"pool_preference[{i}].node_labels", "required: labels that only this pool's nodes carry"))
            continue
        key = tuple(sorted((str(k), str(v)) for k, v in labels.items()))
        if key in seen:
            issues.append((f"pool_preference[{i}]", f"{pool.get('name')} is listed twice (the same node labels)"))
        seen.add(key)
    return issues


def sizing_issues(args: Mapping[str, Any]) -> Issues:
    """Unreadable or oversized resources, pods per node, and pools without a cloud."""
    issues: Issues = []
    pods_per_node = args.get("pods_per_node", 1)
    if not isinstance(pods_per_node, int) or isinstance(pods_per_node, bool) or pods_per_node < 1:
        return [("pods_per_node", f"must be a whole number, 1 or more, got {pods_per_node!r}")]
    if args.get("pools"):
        try:
            clouds.profile(args.get("cloud"))
        except UnknownCloudError as exc:
            return [("cloud", f"pools are sized with their cloud's reservations: {exc.issues[0][1]}")]
    given = args.get("resources") or {}
    for key, parse in (("cpu", sizing.parse_cpu), ("memory", sizing.parse_memory)):
        if given.get(key) is not None:
            try:
                parse(str(given[key]))
            except ValueError as exc:
                issues.append((f"resources.{key}", str(exc)))
    if issues or _family(args) not in FAMILIES:
        return issues
    resources = serving_resources(args)
    if resources is None:
        return issues
    share = containers_per_node(args)
    return [(f"resources.{what}", message)
            for what, message in sizing.fit_issues(resources, pool_rooms(args), share)]


# ---------------------------------------------------------------- components


class WorkloadNamespaceArgs(TypedDict):
    """A namespace for inference workloads."""

    namespace: str
    """The namespace's name."""
    hf_token: NotRequired[pulumi.Input[str]]
    """The Hugging Face token (a Pulumi secret); stored in the Secret ``hf-token``. Unset: no Secret."""


class WorkloadNamespace(LibraryComponent):
    """A namespace for inference workloads and the Hugging Face token Secret in it.

    Pod Security admission enforces the ``baseline`` level there (vLLM images
    run as root, which ``restricted`` refuses).
    """

    LEGACY_TYPE = "gpu-fungibility:workload:WorkloadNamespace"

    namespace: str
    """The namespace's name."""
    hf_secret_name: str
    """The token Secret's name (``hf-token``)."""

    @classmethod
    def issues(cls, name: str, args: Any) -> Issues:
        if args["namespace"] in RESERVED_NAMESPACES:
            return [("namespace", f"{args['namespace']} belongs to Kubernetes")]
        return []

    def __init__(self, name: str, args: WorkloadNamespaceArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__(name, opts)
        self.fail_on(self.check(name, args))
        labels = {"app.kubernetes.io/part-of": "gpu-fungibility", "app.kubernetes.io/managed-by": "pulumi",
                  "pod-security.kubernetes.io/enforce": "baseline"}
        namespace = core_v1.Namespace(
            f"{name}-namespace",
            metadata=ObjectMetaArgs(name=args["namespace"], labels=labels),
            opts=self.child(),
        )
        if args.get("hf_token") is not None:
            core_v1.Secret(
                f"{name}-hf-token",
                metadata=ObjectMetaArgs(name=HF_SECRET_NAME, namespace=args["namespace"],
                                        labels={"app.kubernetes.io/part-of": "gpu-fungibility"}),
                type="Opaque",
                string_data={HF_SECRET_KEY: pulumi.Output.secret(args["hf_token"])},
                opts=self.child(depends_on=[namespace]),
            )
        self.namespace = args["namespace"]
        self.hf_secret_name = HF_SECRET_NAME
        self.register()


class VllmWorkload(LibraryComponent):
    """A vLLM Deployment on DRA-claimed accelerators, its Service and (replicas > 1) its PDB.

    The Deployment and Service are named after the component. Make it depend on its namespace and claims.
    """

    LEGACY_TYPE = "gpu-fungibility:workload:VllmWorkload"

    deployment: str
    """The Deployment's name."""
    service: str
    """The Service's name."""
    namespace: str
    """The namespace."""

    @classmethod
    def issues(cls, name: str, args: Any) -> Issues:
        return workload_issues(args)

    def __init__(self, name: str, args: VllmWorkloadArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__(name, opts)
        self.fail_on(self.check(name, args))
        namespace, labels = args["namespace"], workload_labels(name)
        apps_v1.Deployment(
            f"{name}-deployment",
            metadata=ObjectMetaArgs(
                name=name, namespace=namespace, labels=labels,
                # A pod may wait for a node to scale up and then download a model: `pulumi up` does not block on it.
                annotations={SKIP_AWAIT: "true"},
            ),
            spec=apps_v1.DeploymentSpecArgs(
                replicas=int(args.get("replicas", 1)),
                progress_deadline_seconds=PROGRESS_DEADLINE_SECONDS,
                selector=LabelSelectorArgs(match_labels=selector_labels(name)),
                template=core_v1.PodTemplateSpecArgs(metadata=ObjectMetaArgs(labels=labels), spec=pod_spec(args)),
            ),
            opts=self.child(),
        )
        service = args.get("service") or {}
        if args.get("mig_servers"):
            ports = [core_v1.ServicePortArgs(name=p.port_name, port=p.port, target_port=p.port_name, protocol="TCP")
                     for p in served_ports(args)]
        else:
            ports = [core_v1.ServicePortArgs(name="http", port=int(service.get("port", 8000)), target_port="http",
                                             protocol="TCP")]
        # Pulumi waits up to 10 minutes for a Service's endpoints to target a pod; the pods may wait longer
        # for a node to scale up (as the Deployment does), so `pulumi up` does not block on them here either.
        core_v1.Service(
            f"{name}-service",
            metadata=ObjectMetaArgs(name=name, namespace=namespace, labels=labels,
                                    annotations={SKIP_AWAIT: "true", **service_annotations(args)}),
            spec=core_v1.ServiceSpecArgs(type=service.get("type", "ClusterIP"), selector=selector_labels(name),
                                         ports=ports),
            opts=self.child(),
        )
        if int(args.get("replicas", 1)) > 1:
            policy_v1.PodDisruptionBudget(
                f"{name}-pdb",
                metadata=ObjectMetaArgs(name=name, namespace=namespace, labels=labels),
                spec=policy_v1.PodDisruptionBudgetSpecArgs(
                    max_unavailable=1, selector=LabelSelectorArgs(match_labels=selector_labels(name))),
                opts=self.child(),
            )
        self.deployment = self.service = name
        self.namespace = namespace
        self.register()
