"""What the real control plane decided, read from the API objects, and judged against the promises and the simulator.

Pure functions over the objects the harness lists (dicts as the API returns them): no harness here, so the
comparison is tested without Go.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from rehearse import cluster

OK, FAIL, NOTE = "ok", "FAIL", "note"


@dataclass(frozen=True)
class Finding:
    check: str  # apply | isolation | placement | reclaim | overcommit | verify | scenario
    severity: str  # ok | FAIL | note
    message: str


@dataclass(frozen=True)
class Observed:
    """Where the real scheduler put one replica (or why it did not)."""

    workload: str
    replica: int
    pod: str
    status: str  # scheduled | pending
    node: str | None = None
    pool: str | None = None
    alternatives: tuple[str, ...] = ()
    devices: tuple[str, ...] = ()
    message: str | None = None  # PodScheduled=False message

    @property
    def text(self) -> str:
        if self.status != "scheduled":
            return f"pending: {self.message or 'no scheduler message yet'}"
        return (f"{self.pool} ({self.node}) {'+'.join(self.alternatives) or 'no claim'} "
                f"[{', '.join(self.devices)}]")


@dataclass
class Comparison:
    """One replica, real beside predicted."""

    observed: Observed
    predicted: str
    agrees: bool
    why: str = ""


@dataclass
class PhaseResult:
    """A phase of the rehearsal (nominal placement, reclaim, overcommit): its comparisons and findings."""

    name: str
    comparisons: list[Comparison] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)


# ---- reading the objects ---------------------------------------------------------------------------


def meta(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    return obj.get("metadata") or {}


def owner(obj: Mapping[str, Any]) -> tuple[str, str]:
    for ref in meta(obj).get("ownerReferences") or []:
        if ref.get("controller", True):
            return str(ref.get("kind", "")), str(ref.get("name", ""))
    return "", ""


def scheduling_message(pod: Mapping[str, Any]) -> str | None:
    """The PodScheduled=False message the scheduler wrote on the pod (None: bound or not tried yet)."""
    for condition in (pod.get("status") or {}).get("conditions") or []:
        if condition.get("type") == "PodScheduled" and condition.get("status") == "False":
            return str(condition.get("message") or condition.get("reason") or "")
    return None


def plugins_by_node(pods: Iterable[Mapping[str, Any]], daemonsets: Iterable[Mapping[str, Any]]
                    ) -> tuple[dict[str, dict[str, list[str]]], list[str]]:
    """{node: {plugin kind: [pod refs]}} for bound plugin pods, and the plugin pods nobody could place."""
    kinds = {(meta(d).get("namespace"), meta(d).get("name")): (meta(d).get("annotations") or {}).get(
        cluster.PLUGIN_ANNOTATION, "") for d in daemonsets}
    placed: dict[str, dict[str, list[str]]] = {}
    unplaced: list[str] = []
    for pod in pods:
        owner_kind, owner_name = owner(pod)
        kind = kinds.get((meta(pod).get("namespace"), owner_name)) if owner_kind == "DaemonSet" else None
        if not kind:
            continue
        ref = f"{meta(pod).get('namespace')}/{meta(pod).get('name')}"
        node = (pod.get("spec") or {}).get("nodeName")
        if node:
            placed.setdefault(node, {}).setdefault(kind, []).append(ref)
        else:
            unplaced.append(f"{kind} pod {ref}: {scheduling_message(pod) or 'not scheduled'}")
    return placed, unplaced


def isolation(nodes: Sequence[cluster.PlannedNode], cfg: Any, placed: Mapping[str, Mapping[str, list[str]]],
              unplaced: Sequence[str]) -> list[Finding]:
    """The isolation promise as the DaemonSet controller and the scheduler decided it, node by node."""
    found: list[Finding] = []
    for node in nodes:
        spec = cfg.node_pools[node.pool]
        family = spec.family or "gpu"
        here = placed.get(node.name, {})
        where = f"node {node.name} (pool {node.pool})"
        dra = [k for k in here if k in cluster.DRA_PLUGINS]
        device_plugins = [k for k in here if k in cluster.DEVICE_PLUGINS]
        pods = ", ".join(ref for refs in here.values() for ref in refs)
        if dra and device_plugins:
            found.append(Finding("isolation", FAIL, f"{where} runs the {' and the '.join(device_plugins)} and the "
                                 f"{dra[0]} together ({pods}): both would manage the same devices"))
        elif spec.dra:
            wanted = cluster.TPU_DRA if family == "tpu" else cluster.NVIDIA_DRA
            if wanted not in here:
                found.append(Finding("isolation", FAIL, f"{where} is a DRA pool node but the DaemonSet controller "
                                     f"placed no {wanted} pod there: its devices would never be published"))
            else:
                found.append(Finding("isolation", OK, f"{where}: {wanted} only"))
        elif family == "gpu" and not device_plugins:
            found.append(Finding("isolation", FAIL, f"{where} is a device-plugin GPU node but no device plugin "
                                 "pod runs there: no pod could use its GPUs"))
        else:
            found.append(Finding("isolation", OK, f"{where}: {', '.join(here) or 'no plugin'}"))
    found += [Finding("isolation", NOTE, f"unplaced plugin pod: {text}") for text in unplaced]
    return found


def allocation_results(claim: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    return ((((claim.get("status") or {}).get("allocation") or {}).get("devices") or {}).get("results")) or []


def observe(workload: str, replica: int, pod: Mapping[str, Any], claims: Mapping[tuple[str, str], Mapping[str, Any]],
            pool_of: Mapping[str, str]) -> Observed:
    """One serving pod as the scheduler left it: node, pool, the firstAvailable alternative chosen, devices."""
    namespace, name = meta(pod).get("namespace", ""), meta(pod).get("name", "")
    node = (pod.get("spec") or {}).get("nodeName")
    if not node:
        return Observed(workload, replica, name, "pending", message=scheduling_message(pod))
    statuses = (pod.get("status") or {}).get("resourceClaimStatuses") or []
    several = len((pod.get("spec") or {}).get("resourceClaims") or []) > 1
    alternatives: list[str] = []
    devices: list[str] = []
    for status in statuses:
        claim = claims.get((namespace, status.get("resourceClaimName") or ""))
        for result in allocation_results(claim or {}):
            label = f"{status.get('name')}:{result.get('request')}" if several else str(result.get("request"))
            if label not in alternatives:
                alternatives.append(label)
            devices.append(str(result.get("device")))
    return Observed(workload, replica, name, "scheduled", node, pool_of.get(node), tuple(alternatives),
                    tuple(devices))


# ---- beside the simulator --------------------------------------------------------------------------


def _outcome_text(o: Any) -> str:
    if o.status != "scheduled":
        return f"pending ({o.reason})"
    return f"{o.pool} {'+'.join(o.alternatives)} tp={o.tensor_parallel_size}"


def predicted_text(p: Any) -> str:
    """The simulator's replica, in the words of the report."""
    if p.status == "undetermined":
        return "one of: " + "; ".join(dict.fromkeys(_outcome_text(o) for o in p.outcomes))
    if p.status == "pending":
        return f"pending ({p.reason})"
    return f"{p.pool} ({p.node}) {'+'.join(p.alternatives)} [{', '.join(p.devices)}]"


def _matches(observed: Observed, outcome: Any) -> str | None:
    """None when the real replica is this outcome (as the simulator tells outcomes apart); else the difference."""
    if observed.status != outcome.status:
        return f"the scheduler left it {observed.status}, the simulator says {outcome.status}"
    if observed.status != "scheduled":
        return None
    if observed.pool != outcome.pool:
        return f"pool {observed.pool}, the simulator says {outcome.pool}"
    if tuple(observed.alternatives) != tuple(outcome.alternatives):
        return (f"alternative {'+'.join(observed.alternatives) or 'none'}, the simulator says "
                f"{'+'.join(outcome.alternatives) or 'none'}")
    if len(observed.devices) != len(outcome.devices or ()) and outcome.devices:
        return f"{len(observed.devices)} device(s), the simulator says {len(outcome.devices)}"
    return None


def compare(observed: Observed, predicted: Any) -> Comparison:
    """The real replica against the simulator's; a difference outside its declared undetermined set disagrees.

    Node and device names within one pool are interchangeable, as the simulator's own outcome key says
    (:attr:`simulator.results.Outcome.key`): they are shown, not judged.
    """
    text = predicted_text(predicted)
    if predicted.status == "undetermined":
        if any(_matches(observed, o) is None for o in predicted.outcomes):
            return Comparison(observed, text, True, "inside the simulator's declared outcomes")
        return Comparison(observed, text, False, "outside every outcome the simulator declared")
    why = _matches(observed, predicted)
    if why:
        return Comparison(observed, text, False, why)
    note = ""
    if observed.status == "scheduled" and (observed.node != predicted.node
                                           or sorted(observed.devices) != sorted(predicted.devices)):
        note = "same pool and alternative; other node or devices (interchangeable)"
    return Comparison(observed, text, True, note)


def comparison_findings(phase: str, comparisons: Sequence[Comparison]) -> list[Finding]:
    found = []
    for c in comparisons:
        o = c.observed
        head = f"{o.workload} #{o.replica}: Kubernetes: {o.text}; simulator: {c.predicted}"
        found.append(Finding(phase, OK if c.agrees else FAIL, head + (f" ({c.why})" if c.why else "")))
    return found


def pending_promise(phase: str, observed: Sequence[Observed]) -> list[Finding]:
    """At the stack's own replica counts every replica must be placed: a pending one names its reason."""
    return [Finding(phase, FAIL, f"{o.workload} #{o.replica} ({o.pod}) is Pending at the stack's replica count: "
                    f"{o.message or 'no scheduler message'}") for o in observed if o.status != "scheduled"]


def message_findings(phase: str, observed: Sequence[Observed], advice: Any) -> list[Finding]:
    """The real FailedScheduling messages against the patterns ``make verify`` reads (verify.placement.REASONS)."""
    found = []
    for o in observed:
        if o.status == "scheduled":
            continue
        fix = advice(o.message or "")
        if fix:
            found.append(Finding(phase, OK, f"{o.workload} #{o.replica}: make verify reads the real message "
                                 f"{o.message!r} as a resource reason -> {fix}"))
        else:
            found.append(Finding(phase, FAIL, f"{o.workload} #{o.replica}: make verify matches no pattern in the "
                                 f"real message {o.message!r}: it would report this Pending pod as a mere warning"))
    return found
