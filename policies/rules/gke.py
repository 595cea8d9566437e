"""GKE-specific rules (stack): the NVIDIA driver on DRA pools, critical-priority quotas.

``gke-dra-driver-install``: a GKE DRA pool must disable GKE's driver
installation (``gpuDriverVersion: INSTALLATION_DISABLED``, seed 000), and the
stack must then install the driver itself with an installer DaemonSet that
actually runs on the pool's nodes.

``gke-critical-priority-quota``: GKE admits ``system-node-critical`` /
``system-cluster-critical`` pods outside ``kube-system`` only when a
ResourceQuota in their namespace scopes that priority class; a driver release
either sets ``priorityClassName: ""`` (seed 000) or ships the quota (seed 004).
The same holds for any workload object of the stack with such a priority class.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from gpu_fungibility import clouds
from gpu_fungibility.node_selection import PodPlacement, evaluate
from pulumi_policy import ReportViolation, StackValidationArgs

from ..stack_view import StackView, dig
from .common import containers, pod_spec

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
    installers = [r for r in view.kubernetes() if _is_driver_installer(r)]  # YAML groups and DaemonSets
    for pool in view.pools:
        if not clouds.profile(pool.cloud).library_installs_gpu_driver(dra=True) or not pool.nvidia_dra_labelled:
            continue
        if pool.gpu_driver_version != INSTALLATION_DISABLED:
            report_violation(
                f"{pool.title} is a DRA pool but GKE's driver installation is not disabled "
                f"(gpuDriverInstallationConfig.gpuDriverVersion is {pool.gpu_driver_version or 'not set'}); "
                f"set it to {INSTALLATION_DISABLED} and install the driver for the DRA driver's nvidiaDriverRoot.",
                pool.urn,
            )
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
            verdicts = []
            for ds in daemonsets:
                spec = pod_spec(ds) or {}
                placement = PodPlacement(spec.get("nodeSelector") or {}, spec.get("affinity"),
                                         list(spec.get("tolerations") or []))
                verdicts.append((ds.k8s_name, evaluate(placement, pool.node_labels, pool.taints)))
            if not any(v.runs for _, v in verdicts):
                why = "; ".join(f"{name}: {', '.join(v.reasons)}" for name, v in verdicts)
                report_violation(
                    f"{pool.title}: the NVIDIA driver installer will not run on its nodes ({why}).", pool.urn)


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
    quotas = view.k8s("ResourceQuota")
    for release in view.releases:
        if release.namespace == "kube-system":
            continue
        in_namespace = [q for q in quotas if q.k8s_namespace == release.namespace]
        for key, priority_class in release.critical_pods():
            if not any(_quota_admits(q.props, priority_class) for q in in_namespace):
                report_violation(
                    f"{release.label}: {key} is {priority_class} in namespace {release.namespace}; GKE refuses "
                    "such pods outside kube-system without a ResourceQuota scoped to that PriorityClass. "
                    f"Set {key} to \"\" or create the quota in {release.namespace}.",
                    release.urn,
                )
    for res in view.kubernetes():
        spec = pod_spec(res)
        priority_class = str((spec or {}).get("priorityClassName") or "")
        namespace = res.k8s_namespace
        if not priority_class.startswith("system-") or namespace == "kube-system":
            continue
        if not any(_quota_admits(q.props, priority_class) for q in quotas if q.k8s_namespace == namespace):
            report_violation(
                f"{res.kind} {namespace}/{res.k8s_name} uses priorityClassName {priority_class} outside kube-system "
                "without a ResourceQuota scoped to that PriorityClass; GKE refuses its pods.",
                res.urn,
            )
