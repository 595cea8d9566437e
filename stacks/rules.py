"""Rules that span several config keys.

Each check returns ``(key path, message)`` pairs so that every problem is
reported at once, with the full path a user can search for in their YAML.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from gpu_fungibility import catalog, clouds, devices, mig_geometry, support_calendar
from gpu_fungibility.claims import MAX_ALTERNATIVES
from gpu_fungibility.versions import kubernetes_version_problem, later_all_takes_the_first_alternative

from stacks import zone_rules
from stacks.arguments.cloud import for_cloud, registered
from stacks.arguments.planned import camel
from stacks.model_weight import model_weight_warnings
from stacks.shadowed import shadowing_warnings

if TYPE_CHECKING:
    from stacks.config import NodePool, StackConfig

Issues = list[tuple[str, str]]
#: The pool keys naming its machine(s); each cloud's profile says which one it reads (``pool_machine_argument``).
MACHINE_FIELDS = ("machine_type", "instance_types", "vm_size")


def cross_field_issues(cfg: StackConfig) -> Issues:
    issues: Issues = []
    for check in (_pool_fields, _compute_classes, _shared_claims, _workloads, _shared_mig_pools, _mig_classes,
                  _device_class_cel, zone_rules.zone_issues, _kubernetes_version):
        issues.extend(check(cfg))
    return issues


def config_warnings(cfg: StackConfig) -> list[str]:
    """Legal but risky settings, shown as warnings in previews and the plan."""
    warnings: list[str] = []
    profile = clouds.profile(cfg.cluster.cloud)
    if not profile.dra_scales_from_zero:
        for name, pool in cfg.node_pools.items():
            if pool.dra and pool.family == "gpu" and pool.autoscaling.min == 0:
                warnings.append(
                    f"nodePools.{name}.autoscaling.min is 0: on {profile.title} the Cluster Autoscaler cannot model "
                    "DRA devices, so this DRA node group will not scale up from zero for pending claims. "
                    "Keep min >= 1 for a pool that must serve claims."
                )
    if not profile.dra_grows_past_min:
        for name, pool in cfg.node_pools.items():
            if pool.dra and pool.family == "gpu" and pool.autoscaling.max > pool.autoscaling.min:
                warnings.append(
                    f"nodePools.{name}.autoscaling.max is {pool.autoscaling.max}, above min "
                    f"{pool.autoscaling.min}: {profile.dra_growth_limit} (the pack's aks-dra-pool-size; "
                    f"docs/aks.md). The simulator models {name} at {pool.autoscaling.min} node"
                    f"{'s' if pool.autoscaling.min != 1 else ''}: set max to min and scale it by hand.")
    if not profile.compute_class_on_nodes:
        for name, cc in cfg.compute_classes.items():
            if cc.consolidation_delay_minutes is not None or cc.active_migration or cc.when_unsatisfiable:
                warnings.append(
                    f"computeClasses.{name}: consolidationDelayMinutes, whenUnsatisfiable and activeMigration "
                    f"are GKE ComputeClass settings and are ignored on {profile.title}"
                )
    system = cfg.cluster.system_pool
    system_machine = {"machine_type": ("machineType", [system.machine_type]),
                      "instance_types": ("instanceTypes", system.instance_types),
                      "vm_size": ("vmSize", [system.vm_size])}.get(profile.pool_machine_argument)
    for machine in system_machine[1] if system_machine else []:
        unrecorded = profile.unrecorded_machine(machine)
        if unrecorded:
            warnings.append(f"cluster.systemPool.{system_machine[0]}: {unrecorded}")
    for cidr in cfg.cluster.control_plane.authorized_networks:
        if cidr in ("0.0.0.0/0", "::/0"):
            warnings.append(
                f"cluster.controlPlane.authorizedNetworks contains {cidr}: the API endpoint is open to the internet"
            )
    for name, pool in cfg.node_pools.items():
        shapes = {m: catalog.host_shape(m) for m in pool.instance_types or []}
        sizes = {(h.vcpus, h.memory_gib) for h in shapes.values() if h is not None}
        if len(sizes) > 1:
            listed = ", ".join(f"{m} ({h.vcpus} vCPUs, {h.memory_gib:g} GiB)" for m, h in shapes.items() if h)
            warnings.append(
                f"nodePools.{name}.instanceTypes mixes machine sizes ({listed}): the Cluster Autoscaler assumes "
                "every node of a group has one shape, and serving pods are sized to fit the smallest"
            )
        if not pool.spot and not pool.on_demand_fallback:
            warnings.append(
                f"nodePools.{name} is on-demand (spot: false); set onDemandFallback: true if that is deliberate"
            )
    warnings.extend(_mig_class_warnings(cfg))
    warnings.extend(_gpu_memory_warnings(cfg))
    warnings.extend(_later_tpu_alternative_warnings(cfg))
    warnings.extend(zone_rules.zone_warnings(cfg))
    warnings.extend(model_weight_warnings(cfg))
    warnings.extend(shadowing_warnings(cfg))
    return warnings


def _kubernetes_version(cfg: StackConfig) -> Issues:
    """A minor no cloud offers (``"1.40"``), from the cited calendar (support_calendar.unoffered_minor_problem);
    its format and the 1.34 floor are the cluster components' own check."""
    if kubernetes_version_problem(cfg.cluster.kubernetes_version):
        return []
    problem = support_calendar.unoffered_minor_problem(cfg.cluster.cloud, cfg.cluster.kubernetes_version)
    return [("cluster.kubernetesVersion", problem)] if problem else []


def _pool_fields(cfg: StackConfig) -> Issues:
    """Which of a pool's cloud-specific keys apply, and its zones against the cluster's.

    The pool's shape (machine, accelerator, counts, labels, taints) is the pool
    component's own check, reported with these same key paths.
    """
    issues: Issues = []
    profile = clouds.profile(cfg.cluster.cloud)
    wanted = camel(profile.pool_machine_argument)
    for name, pool in cfg.node_pools.items():
        path = f"nodePools.{name}"
        for argument in MACHINE_FIELDS:
            if argument != profile.pool_machine_argument and getattr(pool, argument) is not None:
                owners = _titles(p for p in map(clouds.profile, clouds.names()) if p.pool_machine_argument == argument)
                issues.append((f"{path}.{camel(argument)}", f"{camel(argument)} is for {owners}; on {profile.title} "
                                                            f"set {wanted}"))
        if pool.zones:
            unknown = [z for z in pool.zones if z not in cfg.cluster.zones]
            if unknown:
                issues.append((f"{path}.zones", f"{', '.join(unknown)} not in cluster.zones {cfg.cluster.zones}"))
    # The keys that bring an existing network are each cloud's own; another cloud's are refused.
    net, own = cfg.cluster.network, for_cloud(cfg.cluster.cloud).network_keys
    for attribute in ("existing_subnet_ids", "existing_subnet_id"):
        key = camel(attribute)
        if getattr(net, attribute) and key not in own:
            owners = _titles(found.profile for found in registered() if key in found.network_keys)
            issues.append((f"cluster.network.{key}", f"is for {owners}; on {profile.title} set {' and '.join(own)}"))
    return issues


def _titles(profiles: Iterable[clouds.CloudProfile]) -> str:
    return " and ".join(p.title for p in profiles) or "no registered cloud"


def _compute_classes(cfg: StackConfig) -> Issues:
    issues: Issues = []
    owner: dict[str, str] = {}
    for name, cc in cfg.compute_classes.items():
        path = f"computeClasses.{name}"
        if len(cc.pools) > MAX_ALTERNATIVES:
            issues.append((f"{path}.pools", f"{len(cc.pools)} pools; DRA firstAvailable allows at most "
                                            f"{MAX_ALTERNATIVES} alternatives"))
        if len(set(cc.pools)) != len(cc.pools):
            issues.append((f"{path}.pools", "a pool is listed twice"))
        families = set()
        for i, pool_name in enumerate(cc.pools):
            pool = cfg.node_pools.get(pool_name)
            if pool is None:
                issues.append((f"{path}.pools[{i}]", f"no node pool named {pool_name!r} "
                                                     f"(nodePools has: {', '.join(cfg.node_pools) or 'none'})"))
                continue
            if pool.family:
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
        if wl.min_accelerator_memory_gi and wl.mig and wl.pool in cfg.node_pools:
            issues.extend(_mig_memory_floor(cfg, name))
        elif wl.min_accelerator_memory_gi:
            for i, pool_name in enumerate(pools):
                pool = cfg.node_pools[pool_name]
                if not pool.accelerator.known:
                    continue  # the pool's own check reports the unknown type
                total = _memory_gi(pool) * pool.accelerator.count
                if total < wl.min_accelerator_memory_gi:
                    where = (f"computeClasses.{wl.compute_class}.pools[{i}]" if wl.compute_class
                             else f"{path}.pool")
                    issues.append((f"{path}.minAcceleratorMemoryGi",
                                   f"alternative {pool_name} ({where}) offers {total} GiB "
                                   f"({pool.accelerator.count} x {pool.accelerator.type}), "
                                   f"below the required {wl.min_accelerator_memory_gi} GiB"))
    return issues


def _memory_gi(pool: NodePool) -> int:
    model = pool.accelerator.model
    return model.memory_gib if isinstance(model, catalog.GpuModel) else model.hbm_gib_per_chip


def _shared_mig_pools(cfg: StackConfig) -> Issues:
    """Every MIG workload on a pool shares each GPU's partition: together their slices must fit one GPU
    (one workload's own slices are its claim's check)."""
    users: dict[str, list[str]] = {}
    for name, wl in cfg.workloads.items():
        if wl.mig and wl.pool in cfg.node_pools:
            users.setdefault(wl.pool, []).append(name)
    issues: Issues = []
    for pool_name, names in users.items():
        if len(names) < 2:
            continue
        accelerator = cfg.node_pools[pool_name].accelerator.type
        layout = [piece.profile for n in names for piece in cfg.workloads[n].mig or []]
        if any(p not in mig_geometry.profiles_of(accelerator) for p in layout):
            continue  # an unknown profile is the claim's own check
        problem = mig_geometry.layout_problem(accelerator, layout)
        if problem:
            issues.append((f"workloads.{names[-1]}.mig", f"the MIG workloads on pool {pool_name} "
                                                         f"({', '.join(names)}) share each GPU: {problem}"))
    return issues


def _mig_memory_floor(cfg: StackConfig, name: str) -> Issues:
    """A MIG workload's memory floor, judged on its slices' real memory (NVML's, below the profile names)."""
    wl = cfg.workloads[name]
    accelerator = cfg.node_pools[wl.pool or ""].accelerator.type
    profiles = mig_geometry.profiles_of(accelerator)
    if not wl.mig or any(piece.profile not in profiles for piece in wl.mig):
        return []  # an unknown profile is the claim's own check
    mib = sum(profiles[piece.profile].memory_mib for piece in wl.mig)
    if mib >= (wl.min_accelerator_memory_gi or 0) * 1024:
        return []
    return [(f"workloads.{name}.minAcceleratorMemoryGi",
             f"its MIG slices ({', '.join(piece.profile for piece in wl.mig)} of {accelerator}) have {mib} MiB "
             f"({mib / 1024:.2f} GiB) as NVML reports them, below the required {wl.min_accelerator_memory_gi} GiB")]


def _stack_mig_slices(cfg: StackConfig) -> dict[str, set[str]]:
    """The MIG profiles the stack's workloads cut each GPU type into."""
    found: dict[str, set[str]] = {}
    for wl in cfg.workloads.values():
        pool = cfg.node_pools.get(wl.pool or "")
        if wl.mig and pool is not None and pool.accelerator.known:
            found.setdefault(pool.accelerator.type, set()).update(piece.profile for piece in wl.mig)
    return found


def _mig_classes(cfg: StackConfig) -> Issues:
    """A MIG device class with a memory floor no slice of the stack's MIG pools reaches selects nothing."""
    issues: Issues = []
    layouts = _stack_mig_slices(cfg)
    for name, dc in cfg.device_classes.items():
        if dc.devices != "mig" or not dc.min_memory_gi:
            continue
        gpus = [g for g in devices.mig_gpus(dc.product_names, dc.architectures) if g in layouts]
        if not gpus:
            continue
        if not any(devices.mig_slices_with(dc.min_memory_gi, [g], sorted(layouts[g])) for g in gpus):
            have = ", ".join(f"{p} of {g} ({mig_geometry.profile(g, p).memory_mib} MiB)"
                             for g in gpus for p in sorted(layouts[g]) if p in mig_geometry.profiles_of(g))
            issues.append((f"deviceClasses.{name}.minMemoryGi",
                           f"no MIG slice this stack cuts has {dc.min_memory_gi} GiB as NVML reports it ({have}): "
                           "the class would select nothing"))
    return issues


def _device_class_cel(cfg: StackConfig) -> Issues:
    """The CEL a DeviceClass's ``expressions`` make, as the API server compiles it: an expression it refuses
    (a type error, ``q.sign()`` as a method, an invalid regex literal, a list literal of two types) is an error
    here, with the compiler's reason; CEL Kubernetes accepts and the simulator cannot evaluate is not."""
    from gpu_fungibility import device_selectors, dra_cel

    issues: Issues = []
    for name, dc in cfg.device_classes.items():
        for i, expression in enumerate(dc.expressions):
            try:
                dra_cel.compile_expression(expression)
                dra_cel.compile_expression(device_selectors.device_class_expression(
                    dc.driver, min_memory_gi=dc.min_memory_gi, product_names=dc.product_names,
                    architectures=dc.architectures, expressions=[expression], devices=dc.devices))
            except dra_cel.CelUnsupportedError:
                continue
            except dra_cel.CelCompileError as exc:
                issues.append((f"deviceClasses.{name}.expressions[{i}]",
                               f"the API server refuses this CEL: {exc.detail.splitlines()[0]}"))
    return issues


def _later_tpu_alternative_warnings(cfg: StackConfig) -> list[str]:
    """A TPU pool after the first of a compute class, on a Kubernetes minor whose allocator never gives it a node.

    A TPU alternative asks for all of a node's chips (``allocationMode: All``); Kubernetes 1.34 and 1.35 allocate
    such an alternative, when it is not the first, with the first alternative's selectors from its second device
    on (``versions.later_all_takes_the_first_alternative``; seen on kube-scheduler v1.34.4 and v1.35.4 by the
    differential run), so the claim stays pending on that pool's nodes.
    """
    minor = cfg.cluster.minor_version
    if not later_all_takes_the_first_alternative(minor):
        return []
    warnings = []
    for name, cc in cfg.compute_classes.items():
        for i, pool_name in enumerate(cc.pools):
            pool = cfg.node_pools.get(pool_name)
            if i > 0 and pool is not None and pool.family == "tpu":
                warnings.append(
                    f"computeClasses.{name}.pools[{i}] ({pool_name}) is a TPU pool after the first: on Kubernetes "
                    f"{minor} the scheduler allocates a TPU alternative that is not its claim's first with the "
                    "first alternative's selectors (fixed in 1.36), so no pod of this class gets a node of "
                    f"{pool_name}. Give {pool_name} a compute class of its own, or run Kubernetes 1.36 or later."
                )
    return warnings


def _gpu_memory_warnings(cfg: StackConfig) -> list[str]:
    """Memory floors on whole GPUs that a GPU's name meets and its NVML total does not.

    A DeviceClass's ``minMemoryGi`` becomes ``memory >= <n>Gi`` on the driver's ``memory`` capacity, NVML's
    total, so on a real cluster it leaves out a GPU sold with that much (H100 80GB: 79.6 GiB). A workload's
    ``minAcceleratorMemoryGi`` is checked on the GPUs' sold memory (a config error below it); when only the
    NVML total falls short, the model gets less than the workload asked for.
    """
    warnings = []
    stack_gpus = {p.accelerator.type for p in cfg.node_pools.values()
                  if p.accelerator.known and isinstance(p.accelerator.model, catalog.GpuModel)}
    for name, dc in cfg.device_classes.items():
        if dc.devices != "gpu" or dc.driver != "gpu.nvidia.com" or not dc.min_memory_gi:
            continue
        trapped = [g for g in devices.gpus_named_above_their_memory(dc.min_memory_gi, dc.product_names,
                                                                    dc.architectures)
                   if not stack_gpus or g.type in stack_gpus]
        if trapped:
            listed = ", ".join(f"{g.product_name} ({g.published_memory_mib} MiB)" for g in trapped)
            warnings.append(f"deviceClasses.{name}.minMemoryGi is {dc.min_memory_gi}: {listed} "
                            f"{'has' if len(trapped) == 1 else 'have'} less than {dc.min_memory_gi} GiB as NVML "
                            "reports it, so this class never selects "
                            f"{'it' if len(trapped) == 1 else 'them'} whatever the name says")
    for name, wl in cfg.workloads.items():
        if not wl.min_accelerator_memory_gi or wl.mig:
            continue
        for pool_name in cfg.placement_pools(wl):
            pool = cfg.node_pools.get(pool_name)
            if pool is None or not pool.accelerator.known or not isinstance(pool.accelerator.model, catalog.GpuModel):
                continue
            model, count = pool.accelerator.model, pool.accelerator.count
            nvml_gib = model.published_memory_mib * count / 1024
            if model.memory_gib * count >= wl.min_accelerator_memory_gi > nvml_gib:
                warnings.append(f"workloads.{name}.minAcceleratorMemoryGi is {wl.min_accelerator_memory_gi}: pool "
                                f"{pool_name} ({count} x {model.product_name}) has {nvml_gib:.2f} GiB as NVML "
                                "reports it; size the model (vLLM's --gpu-memory-utilization, --max-model-len) "
                                "to that")
    return warnings


def _mig_class_warnings(cfg: StackConfig) -> list[str]:
    """Slices a MIG class's memory floor leaves out although their profile name promises that much."""
    warnings = []
    layouts = _stack_mig_slices(cfg)
    for name, dc in cfg.device_classes.items():
        if dc.devices != "mig" or not dc.min_memory_gi:
            continue
        gpus = devices.mig_gpus(dc.product_names, dc.architectures)
        trapped = [(g, p) for g, p in devices.mig_slices_named_above_their_memory(dc.min_memory_gi, gpus)
                   if not layouts or p.name in layouts.get(g, ())]
        if trapped:
            listed = ", ".join(f"{p.name} of {g} ({p.memory_mib} MiB)" for g, p in trapped)
            warnings.append(f"deviceClasses.{name}.minMemoryGi is {dc.min_memory_gi}: {listed} "
                            f"{'has' if len(trapped) == 1 else 'have'} less than {dc.min_memory_gi} GiB as NVML "
                            "reports it, so this class never selects "
                            f"{'it' if len(trapped) == 1 else 'them'} whatever the profile name says")
    return warnings
