"""Generated scheduling scenarios for the differential run: small clusters the real scheduler and the simulator both place.

``generate(seed, count)`` returns ``count`` :class:`Scenario` objects; scenario ``i`` depends only on
``(seed, i)``, so a failing one is rebuilt from the two numbers alone. A scenario is a few pools of identical
nodes (NVIDIA GPUs whole or cut into MIG slices, Google TPU chips, or no accelerator at all), each node with
the ResourceSlice its DRA driver would publish (:func:`gpu_fungibility.devices.published`), and a few pod groups
placed one after the other: a group is one or more identical Pods (or a Deployment) with ResourceClaimTemplates
whose requests use ``exactly`` or ``firstAvailable`` (with counts), CEL selectors on attributes and capacity,
``allocationMode: All``, ``matchAttribute`` constraints; nodeSelector, required node affinity, tolerations
against the pools' taints, and CPU/memory requests that may exhaust a node before its devices are gone.

Scenarios never interact, so many share one API server: each scenario's nodes carry the label
:data:`SCENARIO_LABEL` and its pods select it; its DeviceClasses, claim templates and pods are prefixed with
the scenario's name. Nodes of one pool are identical but for their name (the comparison relies on it).
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field
from typing import Any

from gpu_fungibility import catalog, device_selectors, devices, mig_geometry

SCENARIO_LABEL = "differential.gpu-fungibility.dev/scenario"
POOL_LABEL = "differential.gpu-fungibility.dev/pool"
GROUP_LABEL = "differential.gpu-fungibility.dev/group"
NAMESPACE = "differential"
CLUSTER = "differential"
PAUSE_IMAGE = "registry.k8s.io/pause:3.10"

NVIDIA = device_selectors.NVIDIA_DRIVER
TPU = device_selectors.TPU_DRIVER
WHOLE_GPUS = ("nvidia-tesla-t4", "nvidia-l4", "nvidia-a10g", "nvidia-l40s", "nvidia-a100-80gb", "nvidia-h100-80gb",
              "nvidia-h200-141gb")
MIG_GPUS = ("nvidia-tesla-a100", "nvidia-a100-80gb", "nvidia-h100-80gb", "nvidia-h200-141gb")
TPUS = ("tpu-v5-lite-podslice", "tpu-v6e-slice", "tpu-v5p-slice")
GPU_TAINT = {"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}
TPU_TAINT = {"key": "google.com/tpu", "value": "present", "effect": "NoSchedule"}
ZONE_LABEL = "topology.kubernetes.io/zone"
#: A network-attached device driver whose ResourceSlices carry no nodeName (allNodes or a nodeSelector).
NIC = "nic.differential.gpu-fungibility.dev"
#: The label a namespace needs before its claims may ask for adminAccess (DRAAdminAccess, beta and on in 1.34+;
#: pkg/registry/resource/resourceclaim/strategy.go, v1.35.4).
ADMIN_ACCESS_LABEL = "resource.kubernetes.io/admin-access"
#: The families of scenarios, each adding one kind of case to the base scenario, and how often each is drawn.
FAMILIES = {"base": 3, "shared-claim": 2, "zones": 1, "preferred-affinity": 1, "pod-resources": 2, "cel": 2,
            "admission": 1, "admin-access": 1, "network-slices": 1, "partitionable": 1, "device-taints": 1}


@dataclass
class Pool:
    name: str
    kind: str  # gpu | mig | tpu | cpu
    accelerator: str | None
    count: int  # accelerators per node
    mig: tuple[str, ...]  # the MIG slices each GPU is cut into (kind mig)
    nodes: int
    cpu: int  # allocatable cores
    memory_gi: int
    labels: dict[str, str]
    taints: list[dict[str, str]]


@dataclass
class Group:
    """Identical pods placed together: ``replicas`` bare Pods, or one Deployment of that many replicas."""

    name: str
    kind: str  # Pod | Deployment
    replicas: int
    pod: dict[str, Any]  # the pod spec
    templates: list[dict[str, Any]]  # ResourceClaimTemplates its claims come from


@dataclass
class Scenario:
    seed: int
    index: int
    name: str
    pools: list[Pool]
    groups: list[Group]
    device_classes: list[dict[str, Any]] = field(default_factory=list)  # the scenario's own classes
    family: str = "base"
    claims: list[dict[str, Any]] = field(default_factory=list)  # ResourceClaims pods name (shared claims)
    shared_slices: list[dict[str, Any]] = field(default_factory=list)  # ResourceSlices without a nodeName
    meant_refused: list[str] = field(default_factory=list)  # refs ("Kind/namespace/name") the API server refuses

    def node_names(self, pool: Pool) -> list[str]:
        return [f"{self.name}-{pool.name}-{i}" for i in range(pool.nodes)]

    def nodes(self) -> list[dict[str, Any]]:
        out = []
        for pool in self.pools:
            for name in self.node_names(pool):
                out.append({
                    "apiVersion": "v1", "kind": "Node",
                    "metadata": {"name": name, "labels": {**pool.labels, "kubernetes.io/hostname": name}},
                    "spec": {"taints": [dict(t) for t in pool.taints]} if pool.taints else {},
                    "status": {
                        "capacity": _resources(pool), "allocatable": _resources(pool),
                        "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady",
                                        "message": "kubelet is posting ready status"}],
                    },
                })
        return out

    def published(self, pool: Pool, node: str) -> tuple[str, list[dict[str, Any]]] | None:
        if pool.kind == "cpu":
            return None
        return devices.published(CLUSTER, node, pool.accelerator, pool.count, list(pool.mig) or None)

    def resource_slices(self) -> list[dict[str, Any]]:
        out = []
        for pool in self.pools:
            for node in self.node_names(pool):
                found = self.published(pool, node)
                if not found:
                    continue
                driver, entries = found
                out.append({
                    "apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
                    "metadata": {"name": f"{node}-{driver.split('.')[0]}"},
                    "spec": {"driver": driver, "nodeName": node, "devices": entries,
                             "pool": {"name": node, "generation": 1, "resourceSliceCount": 1}},
                })
        return out + [dict(s) for s in self.shared_slices]

    def templates(self) -> list[dict[str, Any]]:
        return [t for g in self.groups for t in g.templates]

    def group_objects(self, group: Group) -> list[dict[str, Any]]:
        """The group's pods (or Deployment), labelled with the group."""
        labels = {GROUP_LABEL: group.name}
        if group.kind == "Deployment":
            return [{
                "apiVersion": "apps/v1", "kind": "Deployment",
                "metadata": {"name": group.name, "namespace": NAMESPACE},
                "spec": {"replicas": group.replicas, "selector": {"matchLabels": labels},
                         "template": {"metadata": {"labels": labels}, "spec": group.pod}},
            }]
        return [{"apiVersion": "v1", "kind": "Pod",
                 "metadata": {"name": f"{group.name}-{r}", "namespace": NAMESPACE, "labels": labels},
                 "spec": group.pod} for r in range(group.replicas)]

    def objects(self) -> list[dict[str, Any]]:
        """Everything but the pods: nodes, slices, the scenario's DeviceClasses and claim templates."""
        return [*self.nodes(), *self.resource_slices(), *self.device_classes, *self.templates(), *self.claims]

    def document(self) -> dict[str, Any]:
        """The scenario as plain objects: what the simulator reads and a regression fixture records."""
        return {
            "name": self.name, "seed": self.seed, "index": self.index, "namespace": NAMESPACE,
            "family": self.family, "description": self.describe(),
            "nodes": self.nodes(), "resourceSlices": self.resource_slices(),
            "deviceClasses": [*driver_device_classes(), *self.device_classes], "templates": self.templates(),
            "claims": list(self.claims), "meantToBeRefused": list(self.meant_refused),
            "groups": [{"name": g.name, "kind": g.kind, "replicas": g.replicas, "pod": g.pod} for g in self.groups],
        }

    def describe(self) -> str:
        pools = ", ".join(f"{p.name}: {p.nodes} x {p.kind}"
                          + (f" {p.count} x {p.accelerator}" if p.accelerator else "")
                          + (f" MIG {'+'.join(p.mig)}" if p.mig else "") + f" ({p.cpu} cpu, {p.memory_gi}Gi)"
                          for p in self.pools)
        groups = ", ".join(f"{g.name.removeprefix(self.name + '-')} x{g.replicas}" for g in self.groups)
        family = "" if self.family == "base" else f", {self.family}"
        return f"{self.name} (seed {self.seed}, #{self.index}{family}): pools {pools}; groups {groups}"


def _resources(pool: Pool) -> dict[str, str]:
    return {"cpu": str(pool.cpu), "memory": f"{pool.memory_gi}Gi", "pods": "110", "ephemeral-storage": "100Gi"}


def driver_device_classes() -> list[dict[str, Any]]:
    """The DeviceClasses the drivers' charts install, shared by every scenario (the simulator's own table)."""
    return [device_class(name, exprs) for name, exprs in device_selectors.DRIVER_DEVICE_CLASS_SELECTORS.items()]


def device_class(name: str, expressions: list[str]) -> dict[str, Any]:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": name},
            "spec": {"selectors": [{"cel": {"expression": e}} for e in expressions]}}


# ---- the generator ------------------------------------------------------------------------------------


class _Builder:
    def __init__(self, seed: int, index: int):
        self.rng = random.Random(f"differential/{seed}/{index}")
        self.name = f"s{index:04d}"
        self.scenario = Scenario(seed, index, self.name, [], [])

    def pool(self, n: int) -> Pool:
        rng = self.rng
        kind = rng.choices(("gpu", "mig", "tpu", "cpu"), weights=(5, 3, 2, 1))[0]
        accelerator, count, mig = None, 0, ()
        if kind == "gpu":
            accelerator, count = rng.choice(WHOLE_GPUS), rng.choice((1, 1, 2, 4, 8))
        elif kind == "mig":
            accelerator, count = rng.choice(MIG_GPUS), rng.choice((1, 1, 2))
            mig = self.mig_layout(accelerator)
        elif kind == "tpu":
            accelerator, count = rng.choice(TPUS), rng.choice((1, 4, 4, 8))
        cpu = rng.choice((2, 4, 8, 8, 16, 16, 48))
        name = f"p{n}"
        labels = {SCENARIO_LABEL: self.name, POOL_LABEL: name, "kubernetes.io/os": "linux",
                  "kubernetes.io/arch": "amd64"}
        if kind == "tpu":
            labels["cloud.google.com/gke-tpu-accelerator"] = accelerator
        elif accelerator:
            labels["cloud.google.com/gke-accelerator"] = accelerator
        if rng.random() < 0.3:
            labels["spot"] = "true"
        taints = []
        if kind in ("gpu", "mig") and rng.random() < 0.5:
            taints.append(dict(GPU_TAINT))
        if kind == "tpu" and rng.random() < 0.6:
            taints.append(dict(TPU_TAINT))
        if rng.random() < 0.15:
            taints.append({"key": "dedicated", "value": name, "effect": "NoSchedule"})
        if rng.random() < 0.15:
            taints.append({"key": "spot", "value": "true", "effect": "PreferNoSchedule"})
        return Pool(name, kind, accelerator, count, mig, rng.choice((1, 1, 2, 2, 3)), cpu,
                    rng.choice((16, 32, 64, 128)) if cpu > 2 else 4, labels, taints)

    def mig_layout(self, accelerator: str) -> tuple[str, ...]:
        profiles = list(mig_geometry.profiles_of(accelerator))
        for _ in range(20):
            layout = tuple(self.rng.choice(profiles[:5]) for _ in range(self.rng.choice((1, 2, 3))))
            if not mig_geometry.layout_problem(accelerator, layout):
                return layout
        return (profiles[0],)

    # ---- claims ----
    def target(self, pools: list[Pool]) -> Pool:
        accelerated = [p for p in pools if p.kind != "cpu"]
        return self.rng.choice(accelerated) if accelerated and self.rng.random() < 0.9 else self.random_pool()

    def device_request(self, target: Pool, allow_all: bool = True) -> dict[str, Any]:
        """One ``exactly`` body (or subrequest body) for devices like the target pool's: class, selectors, count."""
        rng = self.rng
        body: dict[str, Any] = {}
        selectors: list[str] = []
        if target.kind == "tpu":
            body["deviceClassName"] = device_selectors.TPU_DEVICE_CLASS
            if rng.random() < 0.5:
                selectors.append(device_selectors.tpu_generation_is(target.accelerator))
            if allow_all and rng.random() < 0.5:
                body["allocationMode"] = "All"
            else:
                body["count"] = self.count(target)
        elif target.kind == "mig":
            body["deviceClassName"] = device_selectors.MIG_DEVICE_CLASS
            profile = rng.choice(target.mig)
            roll = rng.random()
            if roll < 0.6:
                selectors.append(device_selectors.mig_profile_is(profile))
            elif roll < 0.8:
                gib = int(re.match(r"\d+", profile.split(".")[1]).group())  # "10gb", "18gb+me"
                selectors.append(device_selectors.memory_at_least(gib))
            if rng.random() < 0.3:
                selectors.append(device_selectors.product_name_is(catalog.GPUS[target.accelerator].product_name))
            body["count"] = rng.choice((1, 1, 1, 2, 3))
        else:
            target = target if target.kind == "gpu" else self.random_pool("gpu")
            custom = rng.random() < 0.2
            body["deviceClassName"] = self.custom_class() if custom else device_selectors.GPU_DEVICE_CLASS
            roll = rng.random()
            model = catalog.GPUS[target.accelerator]
            if roll < 0.45:
                selectors.append(device_selectors.product_name_is(model.product_name))
            elif roll < 0.65:
                gib = rng.choice((16, 24, 40, 80, 100))
                selectors.append(device_selectors.memory_at_least(gib))
            elif roll < 0.75:
                selectors.append(f"device.attributes['{NVIDIA}'].architecture in ['Ampere', 'Hopper']")
            elif roll < 0.82:
                selectors.append(f"device.attributes['{NVIDIA}'].cudaComputeCapability"
                                 ".isGreaterThan(semver('8.0.0'))")
            if allow_all and rng.random() < 0.15:
                body["allocationMode"] = "All"
            else:
                body["count"] = self.count(target)
        if selectors:
            body["selectors"] = [{"cel": {"expression": e}} for e in selectors]
        return body

    def count(self, target: Pool) -> int:
        """Mostly a count the target's nodes can hold, sometimes more than one node has."""
        fitting = [c for c in (1, 2, 4, 8) if c <= max(target.count, 1)]
        return self.rng.choice(fitting * 3 + [1, 2, 4, 8])

    def random_pool(self, kind: str | None = None) -> Pool:
        """A pool that is not in the scenario (what a claim for a missing accelerator asks for)."""
        kind = kind or self.rng.choice(("gpu", "mig", "tpu"))
        accelerator = {"gpu": self.rng.choice(WHOLE_GPUS), "mig": self.rng.choice(MIG_GPUS),
                       "tpu": self.rng.choice(TPUS)}[kind]
        mig = self.mig_layout(accelerator) if kind == "mig" else ()
        return Pool("absent", kind, accelerator, 1, mig, 0, 1, 1, {}, [])

    def custom_class(self) -> str:
        """A DeviceClass of the scenario's own: whole GPUs with at least some memory, or of two generations."""
        name = f"{self.name}-c{len(self.scenario.device_classes)}"
        roll = self.rng.random()
        if roll < 0.5:
            gib = self.rng.choice((20, 40, 80))
            exprs = [device_selectors.driver_is(NVIDIA) + " && " + device_selectors.whole_gpu(),
                     device_selectors.memory_at_least(gib)]
        else:
            exprs = [device_selectors.driver_is(NVIDIA),
                     f"device.attributes['{NVIDIA}'].type == 'gpu' && "
                     f"device.attributes['{NVIDIA}'].productName.startsWith('NVIDIA')"]
        self.scenario.device_classes.append(device_class(name, exprs))
        return name

    def claim(self, group: str, n: int, pools: list[Pool]) -> dict[str, Any]:
        rng = self.rng
        requests = []
        target = self.target(pools)
        for r in range(rng.choice((1, 1, 1, 2))):
            if rng.random() < 0.45:
                subs = [{"name": f"s{k}", **self.device_request(target if rng.random() < 0.6 else self.target(pools))}
                        for k in range(rng.choice((2, 2, 3)))]
                requests.append({"name": f"r{r}", "firstAvailable": subs})
            else:
                requests.append({"name": f"r{r}", "exactly": self.device_request(target)})
        constraints = []
        if rng.random() < 0.3:
            classes = {s.get("deviceClassName") for r in requests
                       for s in (r.get("firstAvailable") or [r.get("exactly") or {}])}
            if classes & {device_selectors.MIG_DEVICE_CLASS}:
                attributes = [f"{NVIDIA}/parentUUID", f"{NVIDIA}/productName", f"{NVIDIA}/parentUUID"]
            elif classes == {device_selectors.TPU_DEVICE_CLASS}:
                attributes = [f"{TPU}/tpuGen"]
            else:
                attributes = [f"{NVIDIA}/productName", "resource.kubernetes.io/pcieRoot", f"{NVIDIA}/architecture"]
            attribute = rng.choice(attributes + [f"{TPU}/tpuGen"] * (rng.random() < 0.1))
            constraint: dict[str, Any] = {"matchAttribute": attribute}
            if len(requests) > 1 and rng.random() < 0.5:
                constraint["requests"] = [requests[0]["name"], requests[1]["name"]]
            constraints.append(constraint)
        devices_spec: dict[str, Any] = {"requests": requests}
        if constraints:
            devices_spec["constraints"] = constraints
        return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
                "metadata": {"name": f"{group}-claim{n}", "namespace": NAMESPACE},
                "spec": {"spec": {"devices": devices_spec}}}

    # ---- pods ----
    def group(self, g: int, pools: list[Pool]) -> Group:
        rng = self.rng
        name = f"{self.name}-g{g}"
        templates = [self.claim(name, n, pools) for n in range(rng.choice((1, 1, 1, 1, 2)))]
        if rng.random() < 0.1:
            templates = []  # a pod without claims: only CPU and memory decide
        pod: dict[str, Any] = {
            "nodeSelector": {SCENARIO_LABEL: self.name},
            "terminationGracePeriodSeconds": 0,
            "containers": [{"name": "main", "image": PAUSE_IMAGE, "resources": {"requests": {
                "cpu": rng.choice(("100m", "250m", "500m", "1", "1", "2", "3", "6", "12")),
                "memory": rng.choice(("64Mi", "256Mi", "1Gi", "1Gi", "4Gi", "12Gi", "24Gi")),
            }}}],
        }
        if templates:
            pod["resourceClaims"] = [{"name": f"c{n}", "resourceClaimTemplateName": t["metadata"]["name"]}
                                     for n, t in enumerate(templates)]
        roll = rng.random()
        if roll < 0.15:
            pod["nodeSelector"][POOL_LABEL] = rng.choice(pools).name
        elif roll < 0.35:
            chosen = sorted({rng.choice(pools).name for _ in range(2)})
            operator = rng.choice(("In", "In", "NotIn"))
            pod["affinity"] = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [{"matchExpressions": [
                    {"key": POOL_LABEL, "operator": operator, "values": chosen}]}]}}}
        tolerations = []
        roll = rng.random()
        if roll < 0.7:
            tolerations += [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"},
                            {"key": "google.com/tpu", "operator": "Exists", "effect": "NoSchedule"}]
        elif roll < 0.8:
            tolerations.append({"operator": "Exists"})
        elif roll < 0.9:
            tolerations.append({"key": "nvidia.com/gpu", "operator": "Equal", "value": "present",
                                "effect": "NoSchedule"})
        if rng.random() < 0.3:
            tolerations.append({"key": "dedicated", "operator": "Exists"})
        if tolerations:
            pod["tolerations"] = tolerations
        kind = "Deployment" if rng.random() < 0.25 else "Pod"
        return Group(name, kind, rng.choice((1, 1, 2, 2, 3, 4)), pod, templates)

    def build(self) -> Scenario:
        pools = [self.pool(n) for n in range(self.rng.choice((1, 2, 2, 3)))]
        while sum(p.nodes for p in pools) > 5:
            pools[-1].nodes -= 1
            if not pools[-1].nodes:
                pools.pop()
        self.scenario.pools = pools
        self.scenario.groups = [self.group(g, pools) for g in range(self.rng.choice((1, 2, 2, 3)))]
        return self.scenario


def scenario(seed: int, index: int, family: str | None = None) -> Scenario:
    """Scenario ``index`` of ``seed``; ``family`` forces one (by default drawn from :data:`FAMILIES`). The base
    scenario comes from its own random stream, so a family only adds to what the base generator makes."""
    built = _Builder(seed, index).build()
    if family is None:
        family = random.Random(f"differential/{seed}/{index}/family").choices(
            list(FAMILIES), weights=list(FAMILIES.values()))[0]
    if family != "base":
        from rehearse import scenario_families
        scenario_families.widen(built, family, random.Random(f"differential/{seed}/{index}/{family}"))
    return built


def generate(seed: int, count: int, start: int = 0) -> list[Scenario]:
    return [scenario(seed, i) for i in range(start, start + count)]
