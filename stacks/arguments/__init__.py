"""From stack config to component arguments, and from argument names back to config keys.

The library's components take narrow, typed arguments (:mod:`gpu_fungibility`)
and report problems in their own argument names (``autoscaling.max_nodes``).
This package is the one place that knows both sides: each builder returns the
arguments of one component *and* a :class:`KeyPaths` that turns the
component's argument paths back into the config key paths a user edits
(``nodePools.a100.autoscaling.max``). This module builds what every stack has
(drivers, DRA claims, workloads); each cloud's network, cluster, pools and own
components are built by its ``stacks/arguments/<cloud>.py`` on the base in
:mod:`stacks.arguments.cloud`, found through the cloud registry
(:func:`cloud_arguments`).

:func:`argument_issues` runs every component's own check over the arguments
the stack will pass, before anything is registered, so a stack reports every
problem at once with its key path. Values that only exist once a resource is
created (a cluster's name, a role's ARN) are stood in for by
:data:`PENDING`: the checks never look inside them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import gpu_fungibility
from gpu_fungibility import clouds, devices, dra_wiring
from gpu_fungibility.node_selection import NodeTaint, unique_taints

from stacks.arguments.cloud import CloudArguments, for_cloud
from stacks.arguments.planned import (
    CHART_PATHS,
    CLUSTER_PATHS,
    FROM_POOLS,
    PENDING,
    POOL_PATHS,
    Issues,
    KeyPaths,
    Planned,
    camel,
    chart_args,
    component,
)

if TYPE_CHECKING:
    from stacks.config import SharedClaim, StackConfig, Workload

__all__ = ["CHART_PATHS", "CLUSTER_PATHS", "FROM_POOLS", "PENDING", "POOL_PATHS", "CloudArguments", "Issues",
           "KeyPaths", "Planned"]


def cloud_arguments(cfg: StackConfig) -> CloudArguments:
    """The stack's cloud's arguments (``stacks/arguments/<cloud>.py``)."""
    return for_cloud(cfg.cluster.cloud)


# ---- pools ---------------------------------------------------------------------------------

def pool(cfg: StackConfig, pool_name: str) -> Planned:
    """The pool's component on the stack's cloud."""
    return cloud_arguments(cfg).pool(cfg, pool_name)


#: The last configs' pool specs: every workload and driver asks for them (a config is immutable).
_SPECS: dict[int, tuple[StackConfig, dict[str, dra_wiring.PoolSpec]]] = {}


def pool_specs(cfg: StackConfig) -> dict[str, dra_wiring.PoolSpec]:
    """Every pool as the DRA wiring sees it (the cloud's own pool name included), by config name."""
    cached = _SPECS.get(id(cfg))
    if cached is not None and cached[0] is cfg:
        return dict(cached[1])
    specs = {}
    for name in cfg.node_pools:
        planned = pool(cfg, name)
        specs[name] = planned.component.spec(planned.name, planned.args)
    if len(_SPECS) >= 8:
        _SPECS.clear()
    _SPECS[id(cfg)] = (cfg, specs)
    return dict(specs)


def node_taints(cfg: StackConfig, pool_names: list[str]) -> list[NodeTaint]:
    """Every taint on the nodes of these pools (stack-set and cloud-added), first occurrence order."""
    specs = pool_specs(cfg)
    return unique_taints(t for name in pool_names for t in dra_wiring.node_taints(cfg.cluster.cloud, specs[name]))


def taint_dicts(taints: list[NodeTaint]) -> list[dict[str, str]]:
    return [t.as_dict() for t in taints]


def dra_gpu_pools(cfg: StackConfig) -> list[str]:
    return [n for n, p in cfg.node_pools.items() if p.family == "gpu" and p.dra]


def device_plugin_pools(cfg: StackConfig) -> list[str]:
    return [n for n, p in cfg.node_pools.items() if p.family == "gpu" and not p.dra]


def tpu_pools(cfg: StackConfig) -> list[str]:
    return [n for n, p in cfg.node_pools.items() if p.family == "tpu"]


def pools_needing_driver_installer(cfg: StackConfig) -> list[str]:
    """GPU pools whose NVIDIA driver the stack installs (GKE DRA pools: GKE installs none there)."""
    profile = clouds.profile(cfg.cluster.cloud)
    return [n for n, p in cfg.node_pools.items() if p.family == "gpu" and profile.library_installs_gpu_driver(p.dra)]


def nvidia_dra(cfg: StackConfig) -> Planned:
    chart = cfg.drivers.nvidia_dra
    args = {"cloud": cfg.cluster.cloud, "node_taints": taint_dicts(node_taints(cfg, dra_gpu_pools(cfg))),
            **chart_args(chart)}
    return Planned(component("NvidiaDraDriver"), cloud_arguments(cfg).nvidia_dra_name, args, KeyPaths("drivers.nvidiaDra", {
        **CHART_PATHS, "cloud": "/cluster.cloud", "node_taints": FROM_POOLS}))


def tpu_dra(cfg: StackConfig) -> Planned:
    args = {"node_taints": taint_dicts(node_taints(cfg, tpu_pools(cfg))), **chart_args(cfg.drivers.tpu_dra)}
    return Planned(component("TpuDraDriver"), "tpu-dra", args, KeyPaths("drivers.tpuDra", {
        **CHART_PATHS, "node_taints": FROM_POOLS}))


def device_plugin(cfg: StackConfig) -> Planned:
    return Planned(component("NvidiaDevicePlugin"), "nvidia-device-plugin", chart_args(cfg.drivers.nvidia_device_plugin),
                   KeyPaths("drivers.nvidiaDevicePlugin", CHART_PATHS))


def unlisted_pools(cfg: StackConfig) -> list[str]:
    """Pools no compute class lists, in config order."""
    listed = {p for cc in cfg.compute_classes.values() for p in cc.pools}
    return [name for name in cfg.node_pools if name not in listed]


# ---- in the cluster ------------------------------------------------------------------------


def workload_namespaces(cfg: StackConfig) -> list[str]:
    """Every namespace the workloads and shared claims live in, in config order."""
    names = [*(w.namespace for w in cfg.workloads.values()), *(c.namespace for c in cfg.shared_claims.values())]
    return list(dict.fromkeys(names))


def namespace(cfg: StackConfig, name: str, hf_token: Any = None) -> Planned:
    args: dict[str, Any] = {"namespace": name}
    if hf_token is not None:
        args["hf_token"] = hf_token
    users = [f"workloads.{w}.namespace" for w, wl in cfg.workloads.items() if wl.namespace == name]
    users += [f"sharedClaims.{c}.namespace" for c, sc in cfg.shared_claims.items() if sc.namespace == name]
    return Planned(component("WorkloadNamespace"), f"ns-{name}", args, KeyPaths("", {"namespace": "/" + users[0],
                                                                          "hf_token": "/hfToken"}))


def _placement_claim(cfg: StackConfig, target: Workload | SharedClaim, device_class: str | None) -> dict[str, Any]:
    claim: dict[str, Any] = {"namespace": target.namespace}

    def alternative(pool_name: str) -> dict[str, Any]:
        pool = cfg.node_pools[pool_name]
        alt: dict[str, Any] = {"accelerator_type": pool.accelerator.type, "count": pool.accelerator.count}
        if device_class:
            alt["device_class"] = device_class
        return alt

    if target.compute_class:
        claim["alternatives"] = [{"name": p, **alternative(p)} for p in cfg.compute_classes[target.compute_class].pools]
    elif target.pool:
        claim["exactly"] = alternative(target.pool)
    return {**claim, **_tolerations(target)}


def _tolerations(target: Workload | SharedClaim) -> dict[str, Any]:
    """The claim's device tolerations, only where the config sets some (plans without them are unchanged)."""
    if not target.device_tolerations:
        return {}
    return {"tolerations": [t.model_dump(exclude_none=True) for t in target.device_tolerations]}


def _claim_paths(base: str, target: Workload | SharedClaim) -> dict[str, str]:
    group = f"/computeClasses.{target.compute_class}.pools" if target.compute_class else f"/{base}.pool"
    return {"namespace": f"/{base}.namespace", "alternatives": group, "exactly": f"/{base}.pool",
            "mig.slices": f"/{base}.mig", "mig": f"/{base}.mig", "tolerations": f"/{base}.deviceTolerations"}


def dra_claims(cfg: StackConfig) -> Planned:
    """Every DeviceClass, shared claim and claim template of the stack, in one component."""
    device_classes = {
        name: {"driver": dc.driver, **({"min_memory_gi": dc.min_memory_gi} if dc.min_memory_gi else {}),
               "product_names": list(dc.product_names), "architectures": list(dc.architectures),
               "expressions": list(dc.expressions), **({"devices": dc.devices} if dc.devices != "gpu" else {})}
        for name, dc in cfg.device_classes.items()
    }
    table: dict[str, str | None] = {f"device_classes.{n}": f"/deviceClasses.{n}" for n in cfg.device_classes}
    for n in cfg.device_classes:
        table.update({f"device_classes.{n}.{arg}": f"/deviceClasses.{n}.{camel(arg)}"
                      for arg in gpu_fungibility.DeviceClassSpec.__annotations__})
    shared = {}
    for name, claim in cfg.shared_claims.items():
        if not resolvable(cfg, claim):
            continue
        shared[name] = _placement_claim(cfg, claim, claim.device_class)
        for arg, key in _claim_paths(f"sharedClaims.{name}", claim).items():
            table[f"shared_claims.{name}.{arg}"] = key
        table[f"shared_claims.{name}"] = f"/sharedClaims.{name}"
        if claim.device_class:
            count = len(shared[name].get("alternatives") or [None])
            for i in range(count):
                where = f"alternatives[{i}]" if "alternatives" in shared[name] else "exactly"
                table[f"shared_claims.{name}.{where}.device_class"] = f"/sharedClaims.{name}.deviceClass"
    templates = {}
    for name, wl in cfg.workloads.items():
        if wl.shared_claim or not resolvable(cfg, wl):
            continue
        if wl.mig is not None:
            templates[name] = {"namespace": wl.namespace, "mig": {
                "accelerator_type": cfg.node_pools[wl.pool].accelerator.type if wl.pool else "",
                "slices": [{"name": s.name, "profile": s.profile} for s in wl.mig]}, **_tolerations(wl)}
        else:
            templates[name] = _placement_claim(cfg, wl, None)
        for arg, key in _claim_paths(f"workloads.{name}", wl).items():
            table[f"claim_templates.{name}.{arg}"] = key
        table[f"claim_templates.{name}"] = f"/workloads.{name}"
    args = {"device_classes": device_classes, "shared_claims": shared, "claim_templates": templates}
    return Planned(component("DraClaims"), "dra-claims", args, KeyPaths("", table))


def workload_claim(cfg: StackConfig, name: str) -> dict[str, Any]:
    """How the workload's pods reference their claim: its template, or the shared claim it names."""
    from gpu_fungibility.claims import template_name

    wl = cfg.workloads[name]
    return {"claim_name": wl.shared_claim} if wl.shared_claim else {"template_name": template_name(name)}


def workload_pools(cfg: StackConfig, name: str) -> list[str]:
    return cfg.placement_pools(cfg.workloads[name])


def machine_types(cfg: StackConfig, pool_name: str) -> list[str]:
    """The machine type (GKE), instance types (EKS) or VM size (AKS) of a pool."""
    pool = cfg.node_pools[pool_name]
    single = pool.machine_type or pool.vm_size
    return [single] if single else list(pool.instance_types or [])


def pods_per_node(cfg: StackConfig, name: str) -> int:
    """How many serving pods may share one node with this workload's: every pod of a shared claim lands on
    the claim's node; MIG pods take one set of slices of one GPU each."""
    wl = cfg.workloads[name]
    if wl.shared_claim:
        return max(1, sum(w.replicas for w in cfg.workloads.values() if w.shared_claim == wl.shared_claim))
    if wl.mig and wl.pool:
        users = [w for w in cfg.workloads.values() if w.mig and w.pool == wl.pool]
        profiles = [piece.profile for w in users for piece in w.mig or []]
        pool = cfg.node_pools[wl.pool]
        # A layout that does not fit (0 sets) is reported by the rules; size as if one set did.
        sets = max(1, devices.mig_sets_per_gpu(profiles, pool.accelerator.type))
        return pool.accelerator.count * sets * len(users)
    return 1


def workload(cfg: StackConfig, name: str, *, hf_secret_name: str | None = None) -> Planned:
    wl = cfg.workloads[name]
    profile = clouds.profile(cfg.cluster.cloud)
    pools = workload_pools(cfg, name)
    specs = pool_specs(cfg)
    target = cfg.shared_claims[wl.shared_claim] if wl.shared_claim else wl
    args: dict[str, Any] = {
        "namespace": wl.namespace,
        "accelerator_family": cfg.family_of(wl),
        "claim": workload_claim(cfg, name),
        "replicas": wl.replicas,
        "port": wl.port,
        "extra_args": list(wl.extra_args),
        "tolerate_taints": taint_dicts(node_taints(cfg, pools)),
        "service": {"type": wl.service.type, "public": wl.service.public, "port": wl.service.port},
        "cloud": profile.name,
    }
    selector = profile.workload_node_selector([specs[p] for p in pools], target.compute_class)
    if selector:
        args["node_selector"] = selector
    args["pools"] = [{"name": p, "machine_types": machine_types(cfg, p), "spot": cfg.node_pools[p].spot}
                     for p in pools]
    if len(pools) > 1:  # the same one list as the claim's firstAvailable and the autoscaler's order
        args["pool_preference"] = [{"name": p, "node_labels": {profile.node_pool_label: specs[p].name}}
                                   for p in pools]
    args["pods_per_node"] = pods_per_node(cfg, name)
    resources = {k: str(v) for k, v in (("cpu", wl.resources.cpu), ("memory", wl.resources.memory)) if v is not None}
    if resources:
        args["resources"] = resources
    optional = {"model": wl.model, "image": wl.image, "max_model_len": wl.max_model_len,
                "gpu_memory_utilization": wl.gpu_memory_utilization, "hf_secret_name": hf_secret_name}
    args.update({k: v for k, v in optional.items() if v is not None})
    if wl.mig is not None:
        args["mig_servers"] = [{"name": s.name, "model": s.model, "port": s.port, "extra_args": list(s.extra_args)}
                               for s in wl.mig]
    return Planned(component("VllmWorkload"), name, args, KeyPaths(f"workloads.{name}", {
        "mig_servers": "mig", "accelerator_family": "", "tolerate_taints": FROM_POOLS, "claim": "",
        "cloud": "/cluster.cloud", "pools": FROM_POOLS, "pool_preference": FROM_POOLS,
        "pods_per_node": "replicas"}))


# ---- every component of a stack ------------------------------------------------------------


def resolvable(cfg: StackConfig, target: Workload | SharedClaim) -> bool:
    """Whether every pool, compute class and shared claim the target names exists and its pools'
    accelerators are known (the config rules and the pools' checks report what is not)."""
    shared = getattr(target, "shared_claim", None)
    if shared:
        return shared in cfg.shared_claims and resolvable(cfg, cfg.shared_claims[shared])
    if target.compute_class:
        cc = cfg.compute_classes.get(target.compute_class)
        pools = list(cc.pools) if cc is not None else [None]
    else:
        pools = [target.pool]
    # A pool with an unknown accelerator is reported by its own check; what it would serve is not checked twice.
    return all(p in cfg.node_pools and cfg.node_pools[p].accelerator.known for p in pools)


def planned_components(cfg: StackConfig) -> list[Planned]:
    """Every component the stack will create, with plain stand-ins for other resources' outputs.

    A workload or claim that names a pool, compute class or shared claim the config lacks is
    left out: the config rules report the missing name, and the rest is still checked.
    """
    builders = cloud_arguments(cfg).components(cfg)
    if dra_gpu_pools(cfg):
        builders.append(lambda: nvidia_dra(cfg))
    if cfg.workloads or cfg.device_classes or cfg.shared_claims:
        builders += [lambda ns=ns: namespace(cfg, ns) for ns in workload_namespaces(cfg)]
        builders.append(lambda: dra_claims(cfg))
        builders += [lambda w=w: workload(cfg, w) for w, wl in cfg.workloads.items() if resolvable(cfg, wl)]
    planned = []
    for build_one in builders:
        try:
            planned.append(build_one())
        except KeyError:
            continue  # a dangling name the config rules report
    return planned


def argument_issues(cfg: StackConfig) -> Issues:
    """Every component's own check over the arguments the stack passes, in config key paths."""
    issues: Issues = []
    for planned in planned_components(cfg):
        issues += planned.issues()
    return list(dict.fromkeys(issues))


def create(planned: Planned, opts: Any = None) -> Any:
    """Construct the planned component; an argument error is reported as a config error with key paths."""
    from gpu_fungibility.errors import ComponentArgsError

    from stacks.loader import ConfigError

    try:
        return planned.component(planned.name, planned.args, opts=opts)
    except ComponentArgsError as exc:
        raise ConfigError([(planned.paths(path) or "nodePools", message) for path, message in exc.issues]) from None
