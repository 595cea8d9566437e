"""Which node-level plugins run on each accelerator pool (stack rules).

``dra-device-plugin-isolation``: the NVIDIA device plugin and the NVIDIA DRA
kubelet plugin must never run on the same node (both would advertise and
prepare the same GPUs). ``dra-pool-served``: a pool labelled for DRA must be
selected *and* tolerated by its DRA kubelet plugin, or every claim on it pends.

Both decide it the way Kubernetes would, from each pool's node labels and
taints (:mod:`policies.stack_view`) against each plugin's effective placement
(:mod:`policies.charts`, :mod:`policies.k8s_scheduling`). A Helm release whose
chart is not known yet (a first preview that never saw its inputs) could add
a plugin anywhere: what it could change is not judged until it is known.
"""

from __future__ import annotations

from dataclasses import dataclass

from gpu_fungibility import clouds
from gpu_fungibility.node_selection import Verdict, evaluate
from pulumi_policy import ReportViolation, StackValidationArgs

from .. import cloud_parts, facts
from ..charts import DriverRelease
from ..stack_view import HELM_RELEASE, Pool, StackView
from ..unknowns import Pending


@dataclass(frozen=True)
class PoolPlugins:
    pool: Pool
    device_plugins: list[str]  # descriptions of every device plugin that runs there
    dra_plugins: list[DriverRelease]  # DRA releases whose kubelet plugin runs there
    dra_verdicts: dict[str, Verdict]  # release name -> verdict, for every DRA release of the pool's family


def _dra_kind(pool: Pool) -> str:
    """The DRA driver chart that serves an accelerator pool's family."""
    return {"gpu": "nvidia-dra", "tpu": "tpu-dra"}.get(pool.family, "none")


def plugins_on(pool: Pool, view: StackView) -> PoolPlugins:
    """Every device plugin and DRA kubelet plugin that would run on the pool's nodes."""
    device_plugins: list[str] = []
    device_plugins += clouds.profile(pool.cloud).built_in_device_plugins(pool.family, pool.node_labels,
                                                                          pool.ami_type)
    if pool.family == "gpu":
        for release in view.releases_of("nvidia-device-plugin"):
            if release.runs_device_plugin() and evaluate(release.plugin_placement(), pool.node_labels, pool.taints).runs:
                device_plugins.append(release.label)
    verdicts: dict[str, Verdict] = {}
    dra_plugins: list[DriverRelease] = []
    for release in view.releases_of(_dra_kind(pool)):
        if not release.runs_kubelet_plugin():
            verdicts[release.name] = Verdict(False, ("its kubelet plugin is disabled (resources.gpus.enabled)",))
            continue
        verdict = evaluate(release.plugin_placement(), pool.node_labels, pool.taints)
        verdicts[release.name] = verdict
        if verdict.runs:
            dra_plugins.append(release)
    return PoolPlugins(pool, device_plugins, dra_plugins, verdicts)


def validate_device_plugin_isolation(args: StackValidationArgs, report_violation: ReportViolation) -> None:
    """No accelerator pool runs both a device plugin and a DRA kubelet plugin."""
    view = StackView.from_policy_resources(args.resources)
    pending = Pending()
    if view.accelerator_pools():
        view.note_unknown(pending, HELM_RELEASE)  # a release whose chart is unknown may run a plugin anywhere
    for pool in view.accelerator_pools():
        found = plugins_on(pool, view)
        if found.device_plugins and found.dra_plugins:
            dra = ", ".join(f"the DRA kubelet plugin of {r.label}" for r in found.dra_plugins)
            report_violation(
                f"{pool.title}: {dra} and {' and '.join(found.device_plugins)} would both run on its nodes "
                "and manage the same devices. Keep the device plugin off DRA pools "
                f"({facts.GKE_NO_DEFAULT_DEVICE_PLUGIN}=true on GKE, a device-plugin affinity excluding "
                f"{facts.GPU_DRA}=true) or keep the DRA plugin off this pool.",
                pool.urn,
            )
    pending.finish()


def validate_dra_pool_served(args: StackValidationArgs, report_violation: ReportViolation) -> None:
    """Every DRA-labelled pool is selected and tolerated by its DRA kubelet plugin."""
    view = StackView.from_policy_resources(args.resources)
    pending = Pending()
    unknown_releases = view.unknown_of(HELM_RELEASE)
    for pool in view.accelerator_pools():
        found = plugins_on(pool, view)
        dra_labelled = pool.nvidia_dra_labelled or pool.tpu_dra_labelled
        opt_out = clouds.profile(pool.cloud).default_device_plugin_opt_out if pool.family == "gpu" else None
        unused = bool(opt_out and pool.node_labels.get(opt_out) == "true" and not found.dra_plugins
                      and not found.device_plugins)
        if ((dra_labelled and not found.dra_plugins) or unused) and unknown_releases:
            view.note_unknown(pending, HELM_RELEASE)  # one of them may be the plugin that serves it
            pending.add("which plugins run on its nodes", pool.title)
        elif dra_labelled and not found.dra_plugins:
            driver = "NVIDIA GPU" if pool.family == "gpu" else "TPU"
            if not found.dra_verdicts:
                why = f"the stack installs no {driver} DRA driver release"
            else:
                why = "; ".join(f"{name}: {', '.join(v.reasons)}" for name, v in sorted(found.dra_verdicts.items()))
            report_violation(
                f"{pool.title} is labelled for DRA but the {driver} DRA kubelet plugin will not run on its nodes "
                f"({why}), so claims for its devices would pend forever.",
                pool.urn,
            )
        elif unused:
            report_violation(
                f"{pool.title} disables GKE's default device plugin ({facts.GKE_NO_DEFAULT_DEVICE_PLUGIN}=true) "
                "but neither a DRA kubelet plugin nor a device plugin runs on its nodes: its GPUs can never be used.",
                pool.urn,
            )
        for problem in cloud_parts.part(pool.cloud, "rules").dra_pool_problems(pool):
            report_violation(problem, pool.urn)
    pending.finish()
