"""GKE's rules: the pack's policies only GKE has (the NVIDIA driver on DRA pools, critical-priority quotas),
and GKE's answers to the shared rules (the compute class's order, :mod:`.gke_compute_class`; the control
plane's endpoints, :mod:`.gke_endpoint`).

``gke-dra-driver-install``: a GKE DRA pool must disable GKE's driver
installation (``gpuDriverVersion: INSTALLATION_DISABLED``, seed 000), and the
stack must then install the driver itself with an installer DaemonSet that
actually runs on the pool's nodes.

GKE also refuses MIG, GPU time-sharing and MPS on DRA pools (GKE "Prepare GKE infrastructure for DRA
workloads", Limitations): a claim for ``mig.nvidia.com`` devices, or a DRA pool with ``gpuSharingConfig`` or
``gpuPartitionSize``, fails ``gke-dra-driver-install`` too.

``gke-critical-priority-quota``: GKE admits ``system-node-critical`` /
``system-cluster-critical`` pods outside ``kube-system`` only when a
ResourceQuota in their namespace scopes that priority class; a driver release
either sets ``priorityClassName: ""`` (seed 000) or ships the quota (seed 004).
The same holds for any workload object of the stack with such a priority class.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from gpu_fungibility import clouds
from gpu_fungibility.node_selection import PodPlacement, evaluate
from pulumi_policy import (
    EnforcementLevel,
    ReportViolation,
    ResourceValidationArgs,
    StackValidationArgs,
    StackValidationPolicy,
)

from ..stack_view import HELM_RELEASE, WORKLOAD_KINDS, Pool, StackView, dig
from ..unknowns import Pending, has_unknown, is_unknown
from . import gke_compute_class
from .common import containers, pod_spec
from .gke_endpoint import ENDPOINT_FIX, ENDPOINT_SETTINGS, reach_inputs, unknown_reach_inputs, unreachable

INSTALLATION_DISABLED = "INSTALLATION_DISABLED"
_INSTALLER_MARKERS = ("nvidia-driver-installer", "nvidia-installer")


def _is_driver_installer(res: Any) -> bool:
    if res.type.startswith("kubernetes:yaml"):
        sources = " ".join(str(v) for v in (res.props.get("file"), res.props.get("files"), res.props.get("url")))
        return any(m in sources for m in _INSTALLER_MARKERS)
    if res.kind != "DaemonSet" and not res.type.endswith(":DaemonSet"):
        return False
    spec = pod_spec(res) or {}
    images = " ".join(str(c.get("image") or "") for c in containers(spec))
    return any(m in res.k8s_name or m in images for m in _INSTALLER_MARKERS)


def validate_gke_dra_driver_install(args: StackValidationArgs, report_violation: ReportViolation) -> None:
    view = StackView.from_policy_resources(args.resources)
    pending = Pending()
    installers = [r for r in view.kubernetes() if _is_driver_installer(r)]  # YAML groups and DaemonSets
    # An installer may be among the DaemonSets and YAML groups not known yet.
    unknown = [r for r in view.unknown_of("DaemonSet") + [r for t in view.types() if t.startswith("kubernetes:yaml")
                                                           for r in view.of_type(t) if r.opaque]]
    # A DaemonSet whose name or images are unknown may be an installer too.
    unknown += [r for r in view.k8s("DaemonSet") if not _is_driver_installer(r) and has_unknown(
        [dig(r.props, "metadata", "name"), [c.get("image") for c in containers(pod_spec(r) or {})],
         dig(r.props, "spec", "template")])]
    for pool in view.pools:
        if not clouds.profile(pool.cloud).library_installs_gpu_driver(dra=True) or not pool.nvidia_dra_labelled:
            continue
        if is_unknown(pool.gpu_driver_version):
            pending.add("gpuDriverInstallationConfig.gpuDriverVersion", pool.title)
            continue
        if pool.gpu_driver_version != INSTALLATION_DISABLED:
            report_violation(
                f"{pool.title} is a DRA pool but GKE's driver installation is not disabled "
                f"(gpuDriverInstallationConfig.gpuDriverVersion is {pool.gpu_driver_version or 'not set'}); "
                f"set it to {INSTALLATION_DISABLED} and install the driver for the DRA driver's nvidiaDriverRoot.",
                pool.urn,
            )
            continue
        if unknown and pool.gpu_driver_version == INSTALLATION_DISABLED:
            placed = [r for r in installers if not r.type.startswith("kubernetes:yaml")]
            if not any(_runs_on(ds, pool) for ds in placed):
                view.note_unknown(pending, "DaemonSet")
                for res in unknown:
                    if not res.opaque:
                        pending.add("its name, images or pod template (an NVIDIA driver installer or not)",
                                    f"{res.title} ({res.urn})")
                pending.add("whether an NVIDIA driver installer runs on its nodes", pool.title)
                continue
        if not installers:
            report_violation(
                f"{pool.title} disables GKE's driver installation but the stack installs no NVIDIA driver "
                "installer DaemonSet: its nodes would have no GPU driver.",
                pool.urn,
            )
            continue
        daemonsets = [r for r in installers if not r.type.startswith("kubernetes:yaml")]
        if daemonsets and len(daemonsets) == len(installers):
            if any(_placement_unknown(ds) for ds in daemonsets):
                pending.add("the installer DaemonSet's placement", pool.title)
                continue
            verdicts = [(ds.k8s_name, _verdict(ds, pool)) for ds in daemonsets]
            if not any(v.runs for _, v in verdicts):
                why = "; ".join(f"{name}: {', '.join(v.reasons)}" for name, v in verdicts)
                report_violation(
                    f"{pool.title}: the NVIDIA driver installer will not run on its nodes ({why}).", pool.urn)
    _no_gpu_sharing_with_dra(view, report_violation, pending)
    pending.finish()


def _placement_unknown(daemonset: Any) -> bool:
    spec = pod_spec(daemonset)
    if spec is None:
        return has_unknown(daemonset.props.get("spec"))
    return has_unknown([spec.get("nodeSelector"), spec.get("affinity"), spec.get("tolerations")])


def _verdict(daemonset: Any, pool: Any) -> Any:
    spec = pod_spec(daemonset) or {}
    placement = PodPlacement(spec.get("nodeSelector") or {}, spec.get("affinity"), list(spec.get("tolerations") or []))
    return evaluate(placement, pool.node_labels, pool.taints)


def _runs_on(daemonset: Any, pool: Any) -> bool:
    return not _placement_unknown(daemonset) and _verdict(daemonset, pool).runs


MIG_DEVICE_CLASS = "mig.nvidia.com"


def _requested_classes(claim: Any) -> set[str]:
    spec = claim.props.get("spec") or {}
    if claim.kind == "ResourceClaimTemplate":
        spec = spec.get("spec") or {}
    classes = set()
    for request in dig(spec, "devices", "requests", default=[]) or []:
        for choice in [request.get("exactly") or {}, *(request.get("firstAvailable") or [])]:
            if choice.get("deviceClassName"):
                classes.add(str(choice["deviceClassName"]))
    return classes


#: The clause that admits MIG slices in a DeviceClass's CEL (``device.attributes["gpu.nvidia.com"].type == 'mig'``,
#: gpu_fungibility.device_selectors.mig_slice): a class carrying it reaches MIG devices, whatever its name.
_MIG_TYPE_CLAUSE = re.compile(r"""\.type\s*==\s*['"]mig['"]""")


def _mig_classes(view: StackView, pending: Pending) -> set[str]:
    """The driver's ``mig.nvidia.com`` and every DeviceClass of the stack whose CEL admits MIG slices."""
    classes = {MIG_DEVICE_CLASS}
    for device_class in view.k8s("DeviceClass"):
        selectors = dig(device_class.props, "spec", "selectors", default=[])
        if has_unknown(selectors):
            pending.add("its selectors (whether it reaches MIG devices)", device_class.title)
            continue
        if any(_MIG_TYPE_CLAUSE.search(str(dig(s, "cel", "expression", default="")))
               for s in selectors or [] if isinstance(s, Mapping)):
            classes.add(device_class.k8s_name)
    return classes


def _no_gpu_sharing_with_dra(view: StackView, report_violation: ReportViolation, pending: Pending) -> None:
    """GKE refuses MIG, time-sharing and MPS with DRA: a claim that can reach MIG devices (through the driver's
    class or any DeviceClass admitting MIG slices) or a sharing setting on a DRA pool fails."""
    dra_pools = [p for p in view.pools if p.nvidia_dra_labelled and clouds.profile(p.cloud).dra_gpu_sharing_refused]
    if not dra_pools:
        return
    why = clouds.profile(dra_pools[0].cloud).dra_gpu_sharing_refused
    view.note_unknown(pending, "ResourceClaimTemplate", "ResourceClaim", "DeviceClass")
    mig_classes = _mig_classes(view, pending)
    for claim in [*view.k8s("ResourceClaimTemplate"), *view.k8s("ResourceClaim")]:
        if has_unknown(claim.props.get("spec")):
            pending.add("the device classes it requests", f"{claim.title} ({claim.urn})")
            continue
        reached = sorted(mig_classes & _requested_classes(claim))
        if reached:
            through = "" if reached == [MIG_DEVICE_CLASS] else f" (DeviceClass {', '.join(reached)} admits MIG slices)"
            report_violation(f"{claim.kind} {claim.k8s_name} asks for MIG devices{through} on a GKE DRA "
                             f"cluster: {why}.", claim.urn)
    props_of = {r.urn: r.props for r in view.resources}
    for pool in dra_pools:
        accelerators = dig(props_of.get(pool.urn) or {}, "nodeConfig", "guestAccelerators", default=[]) or []
        if any(isinstance(a, Mapping) and (a.get("gpuSharingConfig") or a.get("gpuPartitionSize"))
               for a in accelerators):
            report_violation(f"{pool.title} is a DRA pool with GPU sharing or partitioning set: {why}.", pool.urn)


def _quota_admits(quota: Mapping[str, Any], priority_class: str) -> bool:
    spec = quota.get("spec") or {}
    hard = spec.get("hard") or {}
    if str(hard.get("pods", "1")).strip() in ("0", "0.0"):
        return False
    for expression in dig(spec, "scopeSelector", "matchExpressions", default=[]) or []:
        if expression.get("scopeName") != "PriorityClass":
            continue
        operator = expression.get("operator")
        if operator == "Exists" or (operator == "In" and priority_class in (expression.get("values") or [])):
            return True
    return False


def validate_gke_critical_priority_quota(args: StackValidationArgs, report_violation: ReportViolation) -> None:
    view = StackView.from_policy_resources(args.resources)
    if view.cloud is None or not clouds.profile(view.cloud).critical_pods_need_quota:
        return
    pending = Pending()
    view.note_unknown(pending, HELM_RELEASE, *WORKLOAD_KINDS)
    quotas = view.k8s("ResourceQuota")
    # A quota not known yet (or in a namespace not known yet) may be the one that admits a pod.
    namespace_of = {q.urn: view.namespace_of(q) for q in quotas}
    quotas_pending = view.note_unknown(pending, "ResourceQuota") or any(
        is_unknown(namespace_of[q.urn]) or has_unknown(q.props.get("spec")) for q in quotas)
    for release in view.releases:
        if release.namespace == "kube-system":
            continue
        in_namespace = [q for q in quotas if namespace_of[q.urn] == release.namespace
                        and not is_unknown(release.namespace)]
        for key, priority_class in release.critical_pods():
            if any(_quota_admits(q.props, priority_class) for q in in_namespace):
                continue
            if is_unknown(release.namespace) or quotas_pending:
                pending.add(f"the namespace of its {priority_class} pods ({key}) and the quotas there",
                            release.label)
                continue
            report_violation(
                f"{release.label}: {key} is {priority_class} in namespace {release.namespace}; GKE refuses "
                "such pods outside kube-system without a ResourceQuota scoped to that PriorityClass. "
                f"Set {key} to \"\" or create the quota in {release.namespace}.",
                release.urn,
            )
    for res in view.kubernetes():
        spec = pod_spec(res)
        priority_class = str((spec or {}).get("priorityClassName") or "")
        namespace = view.namespace_of(res)
        if is_unknown(priority_class):
            pending.add("priorityClassName", f"{res.title} ({res.urn})")
            continue
        if not priority_class.startswith("system-") or namespace == "kube-system":
            continue
        if not any(_quota_admits(q.props, priority_class) for q in quotas
                   if namespace_of[q.urn] == namespace and not is_unknown(namespace)):
            if is_unknown(namespace) or quotas_pending:
                pending.add(f"the namespace of its {priority_class} pods and the quotas there", res.title)
                continue
            report_violation(
                f"{res.kind} {namespace}/{res.k8s_name} uses priorityClassName {priority_class} outside kube-system "
                "without a ResourceQuota scoped to that PriorityClass; GKE refuses its pods.",
                res.urn,
            )
    pending.finish()


POLICIES = [
    StackValidationPolicy(
        name="gke-dra-driver-install",
        description="GKE DRA pools disable GKE's driver installation, the stack installs the driver itself, and "
                    "no MIG, time-sharing or MPS is asked of them (GKE refuses those with DRA).",
        validate=validate_gke_dra_driver_install,
        enforcement_level=EnforcementLevel.MANDATORY,
    ),
    StackValidationPolicy(
        name="gke-critical-priority-quota",
        description="On GKE, driver pods with a system-* priority class have a ResourceQuota admitting them.",
        validate=validate_gke_critical_priority_quota,
        enforcement_level=EnforcementLevel.MANDATORY,
    ),
]

#: The name of a pool's autoscaling group, as the priority expander would match it: GKE orders pools by
#: compute class instead.
SCALING_GROUP_NAME = None
autoscaler_order_checks = gke_compute_class.check_order
__all__ = ["ENDPOINT_FIX", "ENDPOINT_SETTINGS", "POLICIES", "SCALING_GROUP_NAME", "autoscaler_order_checks",
           "cluster_advisories", "dra_pool_problems", "reach_inputs", "unknown_reach_inputs", "unreachable",
           "validate_gke_critical_priority_quota", "validate_gke_dra_driver_install"]


def dra_pool_problems(pool: Pool) -> list[str]:
    """What only GKE refuses of a DRA-labelled pool (``dra-pool-served``): nothing beyond
    ``gke-dra-driver-install``."""
    return []


def cluster_advisories(args: ResourceValidationArgs, props: Mapping[str, Any]) -> list[str]:
    """Advisories only GKE has about a cluster (``kubernetes-version-advisories``): none."""
    return []
