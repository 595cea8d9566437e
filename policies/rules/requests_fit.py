"""``serving-requests-fit-nodes`` (stack, mandatory): a serving pod fits one node of every pool it can land on.

A pod that asks for more CPU or memory than a node offers stays Pending ("Insufficient memory"), and the
autoscaler, which builds its idea of a new node the same way, never adds one for it; ``pulumi up`` still
succeeds. The node's room is the library's model (:func:`gpu_fungibility.sizing.node_room`, shared with
the serving defaults and the simulator): the capacity the node reports (the machine's nominal memory less
the kernel's share), less the cloud's reservations and eviction threshold, less what the cloud's system
pods and the stack's DaemonSets take. Checked for pods that use DRA claims, on every accelerator pool
their placement admits; a machine the catalog does not know is skipped.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from gpu_fungibility import sizing
from gpu_fungibility.node_selection import evaluate
from pulumi_policy import ReportViolation, StackValidationArgs

from ..stack_view import WORKLOAD_KINDS, Pool, StackView
from ..unknowns import Pending, has_unknown
from .common import note_unknown_pod_specs, pod_placement, workloads


def _pod_requests(spec: Mapping[str, Any]) -> tuple[int, int]:
    """Millicores and MiB the pod's containers request together (unreadable quantities count as zero)."""
    cpu = memory = 0
    for container in spec.get("containers") or []:
        requests = dict(((container or {}).get("resources") or {}).get("requests") or {})
        for key, parse in (("cpu", sizing.parse_cpu), ("memory", sizing.parse_memory)):
            try:
                amount = parse(str(requests[key])) if requests.get(key) is not None else 0
            except ValueError:
                amount = 0
            if key == "cpu":
                cpu += amount
            else:
                memory += amount
    return cpu, memory


def _dra(pool: Pool) -> bool:
    return pool.nvidia_dra_labelled or pool.tpu_dra_labelled


def _gib(mib: int) -> str:
    return f"{mib / 1024:.1f} GiB"


def fit_problems(view: StackView, pending: Pending | None = None) -> list[tuple[str, str | None]]:
    """``(message, urn of the workload)`` for each serving pod that fits no node of a pool it can land on
    (``pending``: names the workloads whose requests or placement are not known yet, left out)."""
    problems: list[tuple[str, str | None]] = []
    if view.cloud is None:
        return problems
    if pending is not None:
        view.note_unknown(pending, *WORKLOAD_KINDS)
        note_unknown_pod_specs(view, pending)
    for workload, spec in workloads(view):
        if workload.kind == "DaemonSet" or not spec.get("resourceClaims"):
            continue
        if pending is not None and has_unknown([spec.get(k) for k in ("containers", "nodeSelector", "affinity",
                                                                      "tolerations")]):
            pending.add("its pods' requests or placement", f"{workload.title} ({workload.urn})")
            continue
        cpu, memory = _pod_requests(spec)
        placement = pod_placement(spec, view.cloud)
        for pool in view.accelerator_pools():
            if not evaluate(placement, pool.node_labels, pool.taints).runs:
                continue
            for machine in pool.machine_types:
                room = sizing.node_room(view.cloud, machine, pool.family, _dra(pool))
                if room is None:
                    continue
                short = []
                if cpu > room.free[0]:
                    short.append(f"{sizing.format_cpu(cpu)} CPU (a node offers {sizing.format_cpu(room.free[0])})")
                if memory > room.free[1]:
                    short.append(f"{sizing.format_memory(memory)} memory (a node offers {_gib(room.free[1])}: "
                                 f"{_gib(room.allocatable[1])} allocatable of {_gib(room.capacity[1])} capacity, "
                                 f"less {_gib(room.reserved[1])} for system pods and DaemonSets)")
                if short:
                    problems.append((
                        f"{workload.kind} {workload.k8s_name} requests {' and '.join(short)} per pod, more than one "
                        f"{machine} node of {pool.title} has: the pod stays Pending there and the autoscaler never "
                        "adds a node for it. Lower the requests (or leave them to the defaults).", workload.urn))
    return problems


def validate_serving_requests_fit_nodes(args: StackValidationArgs, report_violation: ReportViolation) -> None:
    pending = Pending()
    for message, urn in fit_problems(StackView.from_policy_resources(args.resources), pending):
        report_violation(message, urn)
    pending.finish()
