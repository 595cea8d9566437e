"""Rules that span several config keys.

Each check returns ``(key path, message)`` pairs so that every problem is
reported at once, with the full path a user can search for in their YAML.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from components import catalog

if TYPE_CHECKING:
    from stacks.config import NodePool, StackConfig

Issues = list[tuple[str, str]]


def cross_field_issues(cfg: StackConfig) -> Issues:
    issues: Issues = []
    for check in (_pool_shapes, _compute_classes, _device_classes, _shared_claims, _workloads):
        issues.extend(check(cfg))
    return issues


def config_warnings(cfg: StackConfig) -> list[str]:
    """Legal but risky settings, shown as warnings in previews and the plan."""
    warnings: list[str] = []
    if cfg.cluster.cloud == "eks":
        for name, pool in cfg.node_pools.items():
            if pool.dra and pool.family == "gpu" and pool.autoscaling.min == 0:
                warnings.append(
                    f"nodePools.{name}.autoscaling.min is 0: on EKS the Cluster Autoscaler cannot model DRA "
                    "devices, so this DRA node group will not scale up from zero for pending claims. "
                    "Keep min >= 1 for a pool that must serve claims."
                )
        for name, cc in cfg.compute_classes.items():
            if cc.consolidation_delay_minutes is not None or cc.active_migration or cc.when_unsatisfiable:
                warnings.append(
                    f"computeClasses.{name}: consolidationDelayMinutes, whenUnsatisfiable and activeMigration "
                    "are GKE ComputeClass settings and are ignored on EKS"
                )
    for cidr in cfg.cluster.control_plane.authorized_networks:
        if cidr in ("0.0.0.0/0", "::/0"):
            warnings.append(
                f"cluster.controlPlane.authorizedNetworks contains {cidr}: the API endpoint is open to the internet"
            )
    for name, pool in cfg.node_pools.items():
        if not pool.spot and not pool.on_demand_fallback:
            warnings.append(
                f"nodePools.{name} is on-demand (spot: false); set onDemandFallback: true if that is deliberate"
            )
    return warnings


def _pool_shapes(cfg: StackConfig) -> Issues:
    issues: Issues = []
    cloud = cfg.cluster.cloud
    for name, pool in cfg.node_pools.items():
        path = f"nodePools.{name}"
        model = pool.accelerator.model
        if cloud not in model.clouds:
            issues.append((f"{path}.accelerator.type", f"{model.type} is not offered on {cloud}"))
        if pool.on_demand_fallback and pool.spot:
            issues.append((f"{path}.onDemandFallback", "onDemandFallback: true needs spot: false"))
        if pool.zones:
            unknown = [z for z in pool.zones if z not in cfg.cluster.zones]
            if unknown:
                issues.append((f"{path}.zones", f"{', '.join(unknown)} not in cluster.zones {cfg.cluster.zones}"))
        if cloud == "gke":
            issues.extend(_gke_pool_shape(path, pool))
        else:
            issues.extend(_eks_pool_shape(path, pool))
        if pool.family == "tpu" and not pool.dra:
            issues.append((f"{path}.dra", "TPU pools are always DRA pools here; remove dra: false"))
    return issues


def _gke_pool_shape(path: str, pool: NodePool) -> Issues:
    if pool.instance_types is not None:
        return [(f"{path}.instanceTypes", "instanceTypes is for EKS; on GKE set machineType")]
    if not pool.machine_type:
        return [(f"{path}.machineType", "required on GKE (e.g. a2-ultragpu-1g)")]
    acc = pool.accelerator
    shape = catalog.gke_machine_shape(pool.machine_type)
    if shape:
        if shape.accelerator != acc.type or shape.count != acc.count:
            return [(
                f"{path}.accelerator",
                f"{pool.machine_type} carries {shape.count} x {shape.accelerator}, "
                f"not {acc.count} x {acc.type}",
            )]
        if acc.topology and shape.topology and acc.topology != shape.topology:
            return [(f"{path}.accelerator.topology", f"{pool.machine_type} has topology {shape.topology}")]
        return []
    attachable = catalog.gke_attachable(pool.machine_type)
    if attachable and attachable[0] == acc.type:
        if acc.count not in attachable[1]:
            return [(f"{path}.accelerator.count", f"{acc.type} attaches in counts of {attachable[1]}")]
        return []
    known = sorted(s for s, m in catalog.GKE_MACHINES.items() if m.accelerator == acc.type)
    hint = f"machine types for {acc.type}: {', '.join(known)}" if known else "see the accelerator catalog"
    return [(f"{path}.machineType", f"{pool.machine_type!r} is not a known machine for {acc.type}; {hint}")]


def _eks_pool_shape(path: str, pool: NodePool) -> Issues:
    if pool.machine_type is not None:
        return [(f"{path}.machineType", "machineType is for GKE; on EKS set instanceTypes")]
    if not pool.instance_types:
        return [(f"{path}.instanceTypes", "required on EKS: one or more instance types (e.g. [g6e.xlarge])")]
    if pool.family == "tpu":
        return [(f"{path}.accelerator.type", "TPUs are only available on GKE")]
    issues: Issues = []
    acc = pool.accelerator
    for i, itype in enumerate(pool.instance_types):
        shape = catalog.eks_instance_shape(itype)
        if shape is None:
            known = sorted(s for s, m in catalog.EKS_INSTANCES.items() if m.accelerator == acc.type)
            issues.append((f"{path}.instanceTypes[{i}]",
                           f"unknown GPU instance type {itype!r}; for {acc.type}: {', '.join(known) or 'none'}"))
        elif shape.accelerator != acc.type or shape.count != acc.count:
            issues.append((f"{path}.instanceTypes[{i}]",
                           f"{itype} carries {shape.count} x {shape.accelerator}, but the pool declares "
                           f"{acc.count} x {acc.type}; all instance types of a group must match"))
    return issues


def _compute_classes(cfg: StackConfig) -> Issues:
    from stacks.config import MAX_FIRST_AVAILABLE

    issues: Issues = []
    owner: dict[str, str] = {}
    for name, cc in cfg.compute_classes.items():
        path = f"computeClasses.{name}"
        if len(cc.pools) > MAX_FIRST_AVAILABLE:
            issues.append((f"{path}.pools", f"{len(cc.pools)} pools; DRA firstAvailable allows at most "
                                            f"{MAX_FIRST_AVAILABLE} alternatives"))
        if len(set(cc.pools)) != len(cc.pools):
            issues.append((f"{path}.pools", "a pool is listed twice"))
        families = set()
        for i, pool_name in enumerate(cc.pools):
            pool = cfg.node_pools.get(pool_name)
            if pool is None:
                issues.append((f"{path}.pools[{i}]", f"no node pool named {pool_name!r} "
                                                     f"(nodePools has: {', '.join(cfg.node_pools) or 'none'})"))
                continue
            families.add(pool.family)
            if not pool.dra:
                issues.append((f"{path}.pools[{i}]", f"{pool_name} has dra: false; compute classes order DRA pools"))
            if pool_name in owner and owner[pool_name] != name:
                issues.append((f"{path}.pools[{i}]", f"{pool_name} already belongs to compute class "
                                                     f"{owner[pool_name]}; a pool carries one class label"))
            owner.setdefault(pool_name, name)
        if len(families) > 1:
            issues.append((f"{path}.pools", "mixes GPU and TPU pools; a class holds one accelerator family"))
    return issues


def _device_classes(cfg: StackConfig) -> Issues:
    return [(f"deviceClasses.{n}", f"{n} is created by a DRA driver; choose another name")
            for n in cfg.device_classes if n in catalog.DRIVER_DEVICE_CLASSES]


def _placement(cfg: StackConfig, path: str, compute_class: str | None, pool: str | None) -> Issues:
    if compute_class and compute_class not in cfg.compute_classes:
        return [(f"{path}.computeClass", f"no compute class named {compute_class!r} "
                                         f"(computeClasses has: {', '.join(cfg.compute_classes) or 'none'})")]
    if pool and pool not in cfg.node_pools:
        return [(f"{path}.pool", f"no node pool named {pool!r} (nodePools has: {', '.join(cfg.node_pools) or 'none'})")]
    if pool and not cfg.node_pools[pool].dra:
        return [(f"{path}.pool", f"{pool} has dra: false; DRA claims need a DRA pool")]
    return []


def _shared_claims(cfg: StackConfig) -> Issues:
    issues: Issues = []
    for name, claim in cfg.shared_claims.items():
        path = f"sharedClaims.{name}"
        issues.extend(_placement(cfg, path, claim.compute_class, claim.pool))
        if claim.device_class and claim.device_class not in cfg.device_classes:
            issues.append((f"{path}.deviceClass", f"no deviceClasses entry named {claim.device_class!r}"))
    return issues


def _workloads(cfg: StackConfig) -> Issues:
    issues: Issues = []
    for name, wl in cfg.workloads.items():
        path = f"workloads.{name}"
        placement = _placement(cfg, path, wl.compute_class, wl.pool)
        issues.extend(placement)
        if wl.shared_claim:
            claim = cfg.shared_claims.get(wl.shared_claim)
            if claim is None:
                issues.append((f"{path}.sharedClaim", f"no sharedClaims entry named {wl.shared_claim!r}"))
                continue
            if claim.namespace != wl.namespace:
                issues.append((f"{path}.namespace", f"must equal sharedClaims.{wl.shared_claim}.namespace "
                                                    f"({claim.namespace}): a claim is shared within a namespace"))
        if placement or (wl.shared_claim and not cfg.shared_claims.get(wl.shared_claim)):
            continue
        pools = cfg.placement_pools(wl)
        if wl.min_accelerator_memory_gi:
            for i, pool_name in enumerate(pools):
                pool = cfg.node_pools[pool_name]
                total = _memory_gi(pool) * pool.accelerator.count
                if total < wl.min_accelerator_memory_gi:
                    where = (f"computeClasses.{wl.compute_class}.pools[{i}]" if wl.compute_class
                             else f"{path}.pool")
                    issues.append((f"{path}.minAcceleratorMemoryGi",
                                   f"alternative {pool_name} ({where}) offers {total} GiB "
                                   f"({pool.accelerator.count} x {pool.accelerator.type}), "
                                   f"below the required {wl.min_accelerator_memory_gi} GiB"))
        if wl.mig is None and not wl.model:
            issues.append((f"{path}.model", "required: the Hugging Face model id to serve"))
        if wl.mig is not None and wl.model:
            issues.append((f"{path}.model", "a mig workload serves one model per slice: set mig[].model "
                                            "and remove model"))
        if wl.mig is not None:
            issues.extend(_mig(cfg, path, wl))
        if wl.gpu_memory_utilization and cfg.family_of(wl) != "gpu":
            issues.append((f"{path}.gpuMemoryUtilization", "only applies to GPU workloads"))
    return issues


def _memory_gi(pool: NodePool) -> int:
    model = pool.accelerator.model
    return model.memory_gib if isinstance(model, catalog.GpuModel) else model.hbm_gib_per_chip


def _mig(cfg: StackConfig, path: str, wl) -> Issues:
    pool = cfg.node_pools[wl.pool]
    model = pool.accelerator.model
    if not isinstance(model, catalog.GpuModel) or not model.mig_profiles:
        return [(f"{path}.mig", f"{pool.accelerator.type} does not support MIG")]
    issues: Issues = []
    if not wl.mig:
        issues.append((f"{path}.mig", "list at least one slice"))
    names = [s.name for s in wl.mig]
    if len(set(names)) != len(names):
        issues.append((f"{path}.mig", "slice names must be unique"))
    for i, piece in enumerate(wl.mig):
        if piece.profile not in model.mig_profiles:
            issues.append((f"{path}.mig[{i}].profile",
                           f"{piece.profile!r} is not a MIG profile of {model.type}; "
                           f"accepted: {', '.join(model.mig_profiles)}"))
    return issues
