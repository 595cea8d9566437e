"""The differential run: generated scenarios placed by the real kube-scheduler and by the simulator, compared.

``python -m rehearse.differential --seed N --count 500 [--minor 1.35] [--family F ...] [--json]``

Each scenario (:mod:`rehearse.scenarios`) is applied to Kubernetes' own control plane through the harness
(:mod:`rehearse.control_plane`): its Nodes, ResourceSlices, DeviceClasses and ResourceClaimTemplates first, then its
pod groups one after the other, each applied and settled before the next, so the scheduler meets the pods in
the order the simulator places them. Many scenarios share one API server (they cannot see each other's nodes:
:data:`rehearse.scenarios.SCENARIO_LABEL`); the cluster is reset between batches. What the real scheduler
did is read back: each pod's ``spec.nodeName`` and, per claim, ``status.allocation.devices.results`` (request or
subrequest, device).

The simulator's answer (:mod:`rehearse.simside`) is the set of layouts it considers possible. The scenario
agrees when the real layout is one of them and, where both sides say why a group's pods stay pending, the
reasons are of one class (:func:`reason_class`: devices, CPU/memory, affinity/taints); it is *determinate* when
the simulator claims exactly one layout. A scenario the simulator declares undetermined is counted apart, never
as an agreement; one where kube-scheduler placed no pod at all is an agreement only on "nothing fits", so the
report gives the *non-trivial* agreements (kube-scheduler placed at least one pod) beside the total. A run
holds to :data:`CAPS` (:meth:`Report.cap_violations`), and every scenario that disagreed in its batch and was
placed again alone is listed. Every
disagreement is printed with its scenario; ``--record DIR`` writes each one as a regression fixture (the
scenario's objects and the real scheduler's answer), which ``tests/test_differential_replay.py`` replays
against the simulator without Go.
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rehearse import scenarios as gen
from rehearse.simside import Layout, Pick, SimAnswer, simulate

DEFAULT_SEED = 20260
DEFAULT_COUNT = 500
DEFAULT_MINOR = "1.35"
BATCH = 25  # at 125 a batch's unschedulable pods kept status writes going past the settle timeout
#: How long nothing may change before a wave counts as placed: longer than the scheduler's first backoff (1 s), so a
#: pod tried before its ResourceClaim existed is tried again before the next wave arrives.
QUIET_MS = 1200
#: Why a scenario with a pod whose claim statuses flapped is not judged. The resourceclaim controller of Kubernetes
#: 1.34 to 1.36 applies a pod's status.resourceClaimStatuses with only the entries it added in that sync, and
#: server-side apply drops the rest: a pod with two or more ResourceClaimTemplates can flip between partial lists in
#: a hot loop, and kube-scheduler refuses the pod whenever it reads a partial list. Whether it starts depends on timing,
#: so the outcome is Kubernetes' bug, not a placement the simulator could be held to (kubernetes/kubernetes#138407,
#: fixed by #138408 in 1.37; v1.34.4, v1.35.4 and v1.36.3 still have it). The library's workloads use one claim.
FLAPPING = ("its claim statuses flapped (kubernetes/kubernetes#138407: the resourceclaim controller before 1.37 "
            "drops entries of pods with two or more claim templates), and kube-scheduler refuses a pod whose list "
            "it reads partial")
#: The longest wait for the cluster objects to go quiet before the first pods (the scheduler's informers must have
#: every ResourceSlice); past it the pods are applied anyway.
OBJECTS_SETTLE_S = 20.0
#: A scenario that disagreed in its batch is placed again alone, with this pause after its objects settle: in a
#: batch of hundreds of ResourceSlices on a loaded machine the scheduler was seen to place a pod before it had a
#: node's slice (seed 20260, s0245: alone, kube-scheduler answers as the simulator does).
ALONE_PAUSE_S = 3.0
#: How long pods that name a refused claim template are left before they are read back (they never change).
UNCLAIMED_WAIT_S = 1.0
#: What a run must hold to, as shares of the scenarios compared: at most 2% not judged (an upstream bug decided
#: them, see FLAPPING), at least 70% determinate (the simulator claims exactly one layout).
CAPS = {"notJudgedAtMost": 0.02, "determinateAtLeast": 0.70}

#: The classes of a pending pod's reason: kube-scheduler's FailedScheduling message names each node's reason
#: (plugins NodeResourcesFit, DynamicResources, NodeAffinity, TaintToleration, InterPodAffinity: the messages of
#: k8s.io/kubernetes pkg/scheduler/framework/plugins at v1.35.4), the simulator a group's problem in its own words.
REASON_CLASSES = {
    "devices": ("cannot allocate all claims", "resourceclaim", "claim", "device", "allocator"),
    "cpu/memory": ("insufficient cpu", "insufficient memory", "insufficient ephemeral-storage", "too many pods",
                   "resource requests"),
    "affinity/taints": ("affinity", "selector", "taint", "toleration"),
}


def reason_class(text: str | None) -> set[str]:
    """The classes (:data:`REASON_CLASSES`) a pending reason names; empty when it names none or there is none."""
    low = (text or "").lower()
    return {name for name, needles in REASON_CLASSES.items() if any(needle in low for needle in needles)}


# ---- what the real scheduler did ----------------------------------------------------------------------


def observe(document: Mapping[str, Any], pods: Iterable[Mapping[str, Any]],
            claims: Iterable[Mapping[str, Any]], flapping: Iterable[str] = ()) -> dict[str, Any]:
    """The real scheduler's answer for one scenario, from the pods and claims the API server lists; ``flapping``:
    pods ("namespace/name") whose claim statuses the resourceclaim controller kept rewriting (see FLAPPING)."""
    flapping = set(flapping)
    groups = {g["name"] for g in document["groups"]}
    by_claim = {(c["metadata"].get("namespace"), c["metadata"]["name"]): c for c in claims}
    answer = []
    for pod in pods:
        meta = pod.get("metadata") or {}
        group = (meta.get("labels") or {}).get(gen.GROUP_LABEL)
        if group not in groups:
            continue
        node = (pod.get("spec") or {}).get("nodeName") or None
        picks: list[list[str]] = []
        reason = None
        if node:
            for entry, claim_name in _claims_of(pod):
                claim = by_claim.get((meta.get("namespace"), claim_name))
                allocation = ((claim or {}).get("status") or {}).get("allocation") or {}
                for result in (allocation.get("devices") or {}).get("results") or ():
                    picks.append([entry, result["request"], result["device"]])
        else:
            for condition in (pod.get("status") or {}).get("conditions") or ():
                if condition.get("type") == "PodScheduled":
                    reason = f"{condition.get('reason')}: {condition.get('message', '')}"[:300]
        entry = {"group": group, "node": node, "picks": sorted(picks), "reason": reason}
        if f"{meta.get('namespace')}/{meta.get('name')}" in flapping:
            entry["flapping"] = True
        answer.append(entry)
    answer.sort(key=lambda p: (p["group"], p["node"] or "", p["picks"]))
    return {"pods": answer}


def _claims_of(pod: Mapping[str, Any]) -> list[tuple[str, str | None]]:
    """(the pod's claim entry, the ResourceClaim's name) for every claim the pod uses: a claim it names
    (``resourceClaimName``, shared) directly, a template's claim through ``status.resourceClaimStatuses``."""
    statuses = {s.get("name"): s.get("resourceClaimName")
                for s in (pod.get("status") or {}).get("resourceClaimStatuses") or ()}
    out = []
    for ref in (pod.get("spec") or {}).get("resourceClaims") or ():
        out.append((ref.get("name"), ref.get("resourceClaimName") or statuses.pop(ref.get("name"), None)))
    return out + [(name, claim) for name, claim in statuses.items() if name not in {e for e, _ in out}]


def pool_of_nodes(document: Mapping[str, Any]) -> dict[str, str]:
    return {n["metadata"]["name"]: n["metadata"]["labels"][gen.POOL_LABEL] for n in document["nodes"]}


def real_layout(document: Mapping[str, Any], observed: Mapping[str, Any]) -> Layout:
    """The observed placement in the simulator's terms (node names forgotten within a pool)."""
    pools = pool_of_nodes(document)
    order = list(dict.fromkeys(pools.values()))
    contents: dict[str, list[tuple[str, tuple[Pick, ...]]]] = {name: [] for name in pools}
    pending = []
    for pod in observed["pods"]:
        if pod["node"] is None:
            pending.append(pod["group"])
            continue
        contents.setdefault(pod["node"], []).append((pod["group"], tuple(sorted(tuple(p) for p in pod["picks"]))))
    per_pool: dict[str, list] = {p: [] for p in order}
    for node, content in contents.items():
        per_pool.setdefault(pools.get(node, f"?{node}"), []).append(tuple(sorted(content)))
    return (tuple(tuple(sorted(per_pool[p])) for p in per_pool), tuple(sorted(pending)))


# ---- the comparison -----------------------------------------------------------------------------------


@dataclass
class Verdict:
    name: str
    agrees: bool
    determinate: bool
    undecided: str | None = None
    detail: str = ""
    groups_differing: list[str] = field(default_factory=list)
    pods: int = 0
    pods_agreeing: int = 0  # real pods whose outcome is one the simulator gives a pod of its group
    #: why the real answer is no judgement of the simulator (an upstream bug decided it), or None
    unjudged: str | None = None
    placed: int = 0  # pods kube-scheduler placed: 0 makes an agreement trivial ("nothing fits" on both sides)
    #: per group pending on both sides with a reason: (the real reason's classes, the simulator's), sorted
    reasons: dict[str, tuple[list[str], list[str]]] = field(default_factory=dict)


def _pod_outcomes(layout: Layout, pools: Sequence[str]) -> Counter:
    """Per-pod outcomes of a layout: (group, pool or None, picks)."""
    counts: Counter = Counter()
    for pool, nodes in zip(pools, layout[0], strict=False):
        for content in nodes:
            for group, picks in content:
                counts[(group, pool, picks)] += 1
    for group in layout[1]:
        counts[(group, None, ())] += 1
    return counts


def _describe(outcome: tuple) -> str:
    group, pool, picks = outcome
    if pool is None:
        return f"{group}: not scheduled"
    devices = ", ".join(f"{claim}:{request}={device}" for claim, request, device in picks) or "no devices"
    return f"{group}: {pool} [{devices}]"


def compare(document: Mapping[str, Any], observed: Mapping[str, Any], answer: SimAnswer) -> Verdict:
    name = document["name"]
    flapped = sorted({pod["group"] for pod in observed["pods"] if pod.get("flapping")})
    if flapped:
        return Verdict(name, True, False, unjudged=FLAPPING,
                       detail=f"not judged: {', '.join(flapped)}: {FLAPPING}")
    if answer.undecided:
        return Verdict(name, True, False, undecided=answer.undecided,
                       detail=f"the simulator declares it undetermined: {answer.undecided}")
    real = real_layout(document, observed)
    pods = len(observed["pods"])
    placed = sum(pod["node"] is not None for pod in observed["pods"])
    reasons = _pending_reasons(observed, answer)
    if real in answer.layouts:
        other = {group: pair for group, pair in reasons.items() if not set(pair[0]) & set(pair[1])}
        if other:
            return Verdict(name, False, answer.determinate, pods=pods, placed=placed, reasons=reasons,
                           groups_differing=sorted(other),
                           detail="\n".join(f"{group}: kube-scheduler keeps it pending for {', '.join(real) or '?'}"
                                            f", the simulator for {', '.join(sim) or '?'} ({answer.problems[group]})"
                                            for group, (real, sim) in sorted(other.items())))
        return Verdict(name, True, answer.determinate, pods=pods, pods_agreeing=pods, placed=placed,
                       reasons=reasons)
    pools = list(dict.fromkeys(pool_of_nodes(document).values()))
    real_pods = _pod_outcomes(real, pools)
    possible = [_pod_outcomes(layout, pools) for layout in answer.layouts]
    anywhere = set().union(*possible) if possible else set()
    differing = sorted({o[0] for o in real_pods if all(p[o] != real_pods[o] for p in possible)}
                       | {o[0] for p in possible for o in p if p[o] != real_pods.get(o, 0)})
    lines = [f"real scheduler: {'; '.join(f'{n} x {_describe(o)}' for o, n in sorted(real_pods.items(), key=str))}"]
    for i, p in enumerate(sorted(possible, key=str)[:4]):
        lines.append(f"simulator{f' (way {i + 1} of {len(possible)})' if len(possible) > 1 else ''}: "
                     f"{'; '.join(f'{n} x {_describe(o)}' for o, n in sorted(p.items(), key=str))}")
    return Verdict(name, False, answer.determinate, detail="\n".join(lines),
                   groups_differing=[g for g in differing if any(o[0] == g for o in real_pods)], pods=pods,
                   pods_agreeing=sum(n for o, n in real_pods.items() if o in anywhere), placed=placed,
                   reasons=reasons)


def _pending_reasons(observed: Mapping[str, Any], answer: SimAnswer) -> dict[str, tuple[list[str], list[str]]]:
    """Groups pending on both sides where both reasons name a class (:func:`reason_class`): both classes."""
    out = {}
    for pod in observed["pods"]:
        group = pod["group"]
        if pod["node"] is None and group not in out:
            real, sim = reason_class(pod.get("reason")), reason_class(answer.problems.get(group))
            if real and sim:
                out[group] = (sorted(real), sorted(sim))
    return out


# ---- the run ------------------------------------------------------------------------------------------


@dataclass
class Case:
    document: dict[str, Any]
    answer: SimAnswer
    observed: dict[str, Any] | None = None
    verdict: Verdict | None = None
    apply_errors: list[str] = field(default_factory=list)

    def unexpected_apply_errors(self) -> list[str]:
        """What the API server refused that the scenario did not mean it to, and what it accepted that the scenario
        meant it to refuse (``meantToBeRefused``: the admission family's claim templates)."""
        meant = set(self.document.get("meantToBeRefused") or ())
        refused = {error.split(": ", 1)[0] for error in self.apply_errors}
        found = [error for error in self.apply_errors if error.split(": ", 1)[0] not in meant]
        if self.observed is not None:
            found += [f"{ref}: accepted, though the API server is expected to refuse it" for ref in sorted(meant - refused)]
        return found


@dataclass
class Report:
    seed: int
    minor: str
    version: str
    cases: list[Case]
    seconds: float
    simulator_seconds: float
    failures: list[str] = field(default_factory=list)  # batches the control plane could not place
    #: scenarios that disagreed in their batch and were placed again alone: True when the answer alone agrees
    rechecked: dict[str, bool] = field(default_factory=dict)
    #: batches the control plane failed on as a whole, with its error; their scenarios were placed one at a time
    split: dict[str, str] = field(default_factory=dict)

    @property
    def compared(self) -> list[Case]:
        return [c for c in self.cases if c.verdict is not None]

    @property
    def disagreements(self) -> list[Case]:
        return [c for c in self.compared if not c.verdict.agrees]

    @property
    def unjudged(self) -> list[Case]:
        """Compared scenarios an upstream bug decided (see FLAPPING): they neither agree nor disagree."""
        return [c for c in self.compared if c.verdict.unjudged]

    @property
    def judged(self) -> list[Case]:
        return [c for c in self.compared if not c.verdict.unjudged]

    @property
    def agreement_rate(self) -> float:
        judged = self.judged
        return len(self.agreeing) / len(judged) if judged else 0.0

    @property
    def undetermined(self) -> list[Case]:
        """Judged scenarios the simulator declared undetermined: neither an agreement nor a disagreement."""
        return [c for c in self.judged if c.verdict.undecided]

    @property
    def agreeing(self) -> list[Case]:
        """Judged scenarios whose real answer is among the simulator's (undetermined ones not counted)."""
        return [c for c in self.judged if c.verdict.agrees and not c.verdict.undecided]

    @property
    def nontrivial(self) -> list[Case]:
        """Judged scenarios where kube-scheduler placed at least one pod."""
        return [c for c in self.judged if c.verdict.placed]

    def reasons_compared(self) -> tuple[int, int]:
        """(groups pending on both sides with a reason, those whose reasons share a class)."""
        pairs = [pair for c in self.judged for pair in c.verdict.reasons.values()]
        return len(pairs), sum(bool(set(real) & set(sim)) for real, sim in pairs)

    def cap_violations(self) -> list[str]:
        """The :data:`CAPS` this run breaks, each saying by how much (none for a run that compared nothing)."""
        compared = len(self.compared)
        if not compared:
            return []
        out = []
        if len(self.unjudged) > CAPS["notJudgedAtMost"] * compared:
            out.append(f"{len(self.unjudged)} of {compared} scenarios not judged, more than "
                       f"{CAPS['notJudgedAtMost']:.0%}")
        if self.determinate < CAPS["determinateAtLeast"] * compared:
            out.append(f"{self.determinate} of {compared} scenarios determinate, fewer than "
                       f"{CAPS['determinateAtLeast']:.0%}")
        return out

    @property
    def determinate(self) -> int:
        return sum(c.verdict.determinate for c in self.compared)

    def pods_agreeing(self) -> int:
        return sum(c.verdict.pods_agreeing for c in self.compared)

    def pods(self) -> tuple[int, int]:
        total = placed = 0
        for case in self.compared:
            for pod in case.observed["pods"]:
                total += 1
                placed += pod["node"] is not None
        return total, placed

    def by_family(self) -> dict[str, dict[str, int]]:
        """Per family of scenario (:data:`rehearse.scenarios.FAMILIES`): scenarios judged, agreeing, determinate,
        not judged."""
        out: dict[str, dict[str, int]] = {}
        for case in self.compared:
            row = out.setdefault(case.document.get("family", "base"),
                                 {"judged": 0, "agreeing": 0, "determinate": 0, "notJudged": 0})
            if case.verdict.unjudged:
                row["notJudged"] += 1
                continue
            row["judged"] += 1
            row["agreeing"] += case.verdict.agrees
            row["determinate"] += case.verdict.determinate
        return dict(sorted(out.items()))

    def to_json(self) -> dict[str, Any]:
        total, placed = self.pods()
        return {
            "seed": self.seed, "scenarios": len(self.cases), "compared": len(self.compared),
            "kubernetes": self.version, "minor": self.minor,
            "agreementRate": round(self.agreement_rate, 4),
            "agreeing": len(self.agreeing),
            "nontrivial": len(self.nontrivial),
            "nontrivialAgreeing": sum(c in self.agreeing for c in self.nontrivial),
            "undetermined": [c.document["name"] for c in self.undetermined],
            "pendingReasons": dict(zip(("compared", "sameClass"), self.reasons_compared(), strict=True)),
            "caps": CAPS, "capViolations": self.cap_violations(),
            "notJudged": {c.document["name"]: c.verdict.detail for c in self.unjudged},
            "determinate": self.determinate,
            "byFamily": self.by_family(),
            "determinateDisagreements": sum(c.verdict.determinate for c in self.disagreements),
            "pods": total, "podsScheduled": placed, "podsAgreeing": self.pods_agreeing(),
            "seconds": round(self.seconds, 2), "scenariosPerSecond": round(len(self.compared) / self.seconds, 2)
            if self.seconds else None,
            "simulatorSeconds": round(self.simulator_seconds, 2),
            "disagreements": [{"scenario": c.document["name"], "description": c.document["description"],
                               "determinate": c.verdict.determinate, "groups": c.verdict.groups_differing,
                               "detail": c.verdict.detail} for c in self.disagreements],
            "applyErrors": {c.document["name"]: c.unexpected_apply_errors() for c in self.cases
                            if c.unexpected_apply_errors()},
            "refusedAsMeant": {c.document["name"]: c.apply_errors for c in self.cases
                               if c.apply_errors and not c.unexpected_apply_errors()},
            "failures": self.failures,
            "batchesPlacedOneByOne": self.split,
            "placedAgainAlone": self.rechecked,
        }

    def render(self) -> str:
        total, placed = self.pods()
        lines = [
            f"differential run: seed {self.seed}, {len(self.cases)} scenarios, kube-scheduler {self.version}",
            f"  compared:     {len(self.compared)} scenarios, {total} pods ({placed} scheduled by kube-scheduler; "
            f"{self.pods_agreeing()} with an outcome the simulator allows)",
            f"  agreement:    {self.agreement_rate:.2%} ({len(self.agreeing)} of {len(self.judged)}); non-trivial "
            f"(kube-scheduler placed a pod): {sum(c in self.agreeing for c in self.nontrivial)} of "
            f"{len(self.nontrivial)}; determinate: {self.determinate}"
            + (f"; undetermined (counted neither way): {len(self.undetermined)}" if self.undetermined else ""),
            "  pending reasons: {} groups pending on both sides with a reason, {} of the same class".format(
                *self.reasons_compared()),
            f"  placed again alone: {len(self.rechecked)} ({', '.join(self.rechecked)})" if self.rechecked else "",
            f"  not judged:   {len(self.unjudged)} ({', '.join(c.document['name'] for c in self.unjudged)}): a pod's "
            "claim statuses flapped (kubernetes/kubernetes#138407)" if self.unjudged else "",
            f"  speed:        {len(self.compared) / self.seconds:.1f} scenarios/s "
            f"({self.seconds:.1f} s; the simulator's share {self.simulator_seconds:.1f} s)" if self.seconds else "",
        ]
        lines += [f"  {family + ':':<19} {row['agreeing']} of {row['judged']} agree; {row['determinate']} determinate"
                  + (f"; {row['notJudged']} not judged" if row["notJudged"] else "")
                  for family, row in self.by_family().items()]
        lines += [f"  batch {label} did not complete together ({error}); its scenarios were placed one at a time"
                  for label, error in self.split.items()]
        lines += [f"  NOT COMPARED {failure}" for failure in self.failures]
        lines += [f"  CAP BROKEN: {violation}" for violation in self.cap_violations()]
        lines += [f"  {name}: disagreed in its batch, {'agrees' if ok else 'disagrees'} placed alone"
                  for name, ok in self.rechecked.items()]
        for case in self.disagreements:
            kind = "DETERMINATE " if case.verdict.determinate else ""
            lines.append(f"{kind}DISAGREEMENT {case.document['description']}")
            lines += [f"    {line}" for line in case.verdict.detail.splitlines()]
        return "\n".join(line for line in lines if line)


def simulate_all(documents: Sequence[dict[str, Any]], kubernetes: str | None = None) -> list[Case]:
    return [Case(d, simulate(d, kubernetes=kubernetes)) for d in documents]


def _base_objects() -> list[dict[str, Any]]:
    # the admin-access label lets the admin-access family's claims in (the API server refuses them elsewhere)
    return [{"apiVersion": "v1", "kind": "Namespace", "metadata": {
        "name": gen.NAMESPACE, "labels": {gen.ADMIN_ACCESS_LABEL: "true"}}}, *gen.driver_device_classes()]


def run_batch(harness: Any, batch: Sequence[gen.Scenario], cases: Mapping[str, Case], *, reset: bool = True,
              settle_timeout: float = 180.0, quiet_ms: int = QUIET_MS, pause_s: float = 0.0) -> None:
    """Apply one batch of scenarios to a running control plane, wave by wave, and read the answers back."""
    if reset:
        harness.reset()
    objects: list[dict[str, Any]] = _base_objects()
    owners: dict[str, str] = {}
    for sc in batch:
        for obj in sc.objects():
            owners[_ref(obj)] = sc.name
            objects.append(obj)
    _apply(harness, objects, owners, cases)
    # The scheduler must see every node's ResourceSlice before the first pod: a pod scheduled earlier would meet
    # a node without devices (seen in the first 500-scenario run: an allocator error turned into a placement).
    try:
        harness.settle(timeout_s=OBJECTS_SETTLE_S, quiet_ms=quiet_ms)
    except Exception as exc:  # noqa: BLE001 - a busy control plane may not go quiet; the wait was the point
        if type(exc).__name__ != "HarnessTimeout":
            raise
    time.sleep(pause_s)
    refused = {error.split(": ", 1)[0] for sc in batch for error in cases[sc.name].apply_errors}
    unclaimed = []
    for wave in range(max(len(sc.groups) for sc in batch)):
        pods = []
        for sc in batch:
            if wave < len(sc.groups):
                for obj in sc.group_objects(sc.groups[wave]):
                    owners[_ref(obj)] = sc.name
                    (unclaimed if _claims_refused(obj, refused) else pods).append(obj)
        _apply(harness, pods, owners, cases)
        harness.settle(timeout_s=settle_timeout, quiet_ms=quiet_ms)
    if unclaimed:
        # Pods whose claim template or claim the API server refused are never scheduled, and never marked so (no
        # PodScheduled condition: the resourceclaim controller cannot make their claims), so no settle would end
        # with them; they take nothing, so they are applied last and read back as they are, Pending.
        _apply(harness, unclaimed, owners, cases)
        time.sleep(UNCLAIMED_WAIT_S)
    listed = harness.list("pods", "resourceclaims")
    pods_by: dict[str, list] = {}
    for pod in listed.get("pods", []):
        group = ((pod.get("metadata") or {}).get("labels") or {}).get(gen.GROUP_LABEL, "")
        pods_by.setdefault(group.split("-")[0], []).append(pod)
    for sc in batch:
        case = cases[sc.name]
        case.observed = observe(case.document, pods_by.get(sc.name, []), listed.get("resourceclaims", []),
                                getattr(harness, "flapping", ()))
        case.verdict = compare(case.document, case.observed, case.answer)


def _claims_refused(obj: Mapping[str, Any], refused: set[str]) -> bool:
    """Whether a pod (or a Deployment's pods) names a claim template or claim the API server refused."""
    spec = obj.get("spec") or {}
    pod = (spec.get("template") or {}).get("spec") or spec if obj.get("kind") == "Deployment" else spec
    namespace = (obj.get("metadata") or {}).get("namespace") or "default"
    for ref in pod.get("resourceClaims") or ():
        if ref.get("resourceClaimTemplateName") and \
                f"ResourceClaimTemplate/{namespace}/{ref['resourceClaimTemplateName']}" in refused:
            return True
        if ref.get("resourceClaimName") and f"ResourceClaim/{namespace}/{ref['resourceClaimName']}" in refused:
            return True
    return False


def _ref(obj: Mapping[str, Any]) -> str:
    meta = obj.get("metadata") or {}
    return "/".join(x for x in (obj.get("kind"), meta.get("namespace"), meta.get("name")) if x)


def _apply(harness: Any, objects: list[dict[str, Any]], owners: Mapping[str, str],
           cases: Mapping[str, Case]) -> None:
    for result in harness.apply(objects):
        if not result.ok:
            owner = owners.get(result.ref) or next((o for r, o in owners.items() if r.endswith(result.ref)), None)
            if owner in cases:
                cases[owner].apply_errors.append(f"{result.ref}: {result.error}")
            else:
                raise RuntimeError(f"the API server refused {result.ref}: {result.error}")


def scenarios_of(seed: int, count: int, families: Sequence[str] = ()) -> list[gen.Scenario]:
    """Scenarios 0 to ``count - 1`` of ``seed``; with ``families``, scenario ``i`` is forced to the family
    ``families[i % len(families)]`` (a run of the families one minor changed), else each draws its own."""
    if not families:
        return gen.generate(seed, count)
    unknown = sorted(set(families) - set(gen.FAMILIES))
    if unknown:
        raise ValueError(f"unknown families {unknown}; known: {', '.join(gen.FAMILIES)}")
    return [gen.scenario(seed, i, families[i % len(families)]) for i in range(count)]


def run(seed: int, count: int, minor: str = DEFAULT_MINOR, batch: int = BATCH, progress=print,
        start: Callable[[], Any] | None = None, families: Sequence[str] = ()) -> Report:
    """Generate, simulate, and have the real scheduler place ``count`` scenarios (``families``: see
    :func:`scenarios_of`).

    Each batch gets a fresh control plane (``start``, by default the harness at ``minor``): starting one takes a
    few seconds, less than deleting a batch's hundreds of objects, and no batch can see another's leftovers. A
    batch the control plane fails on is reported as not compared, and the run goes on.
    """
    scenarios = scenarios_of(seed, count, families)
    started = time.monotonic()
    cases = {c.document["name"]: c for c in simulate_all([sc.document() for sc in scenarios], minor)}
    simulator_seconds = time.monotonic() - started
    if start is None:
        from rehearse.control_plane import Harness, ensure_built
        ensure_built(minor, progress=progress)

        def start():
            return Harness.start(minor)
    version = minor
    failures: list[str] = []
    started = time.monotonic()
    split: dict[str, str] = {}
    for i in range(0, len(scenarios), batch):
        chunk = scenarios[i:i + batch]
        harness = start()
        try:
            version = getattr(harness, "version", version)
            run_batch(harness, chunk, cases, reset=False)
        except Exception as exc:  # noqa: BLE001 - the batch is placed again, a scenario at a time
            label = f"{chunk[0].name}..{chunk[-1].name}"
            split[label] = f"{type(exc).__name__}: {exc}"
            progress(f"  batch {label} failed ({exc}); placing its scenarios one at a time")
            failures += _one_by_one(chunk, cases, start, progress)
        finally:
            harness.close()
        progress(f"  {min(i + batch, len(scenarios))}/{len(scenarios)} scenarios placed by kube-scheduler")
    seconds = time.monotonic() - started + simulator_seconds
    report = Report(seed, minor, version, list(cases.values()), seconds, simulator_seconds, failures, split=split)
    for case in report.disagreements:  # a batch's answer, checked alone before it counts against the simulator
        alone = next(sc for sc in scenarios if sc.name == case.document["name"])
        first = case.observed
        harness = start()
        try:
            run_batch(harness, [alone], cases, reset=False, pause_s=ALONE_PAUSE_S)
        except Exception as exc:  # noqa: BLE001 - the batch's answer stands
            progress(f"  {alone.name} alone: {exc}")
            continue
        finally:
            harness.close()
        report.rechecked[alone.name] = case.verdict.agrees
        progress(f"  {alone.name} placed alone: {'agrees' if case.verdict.agrees else 'still disagrees'}")
        if not case.verdict.agrees:
            case.observed = first  # keep what the batch saw too
            case.verdict = compare(case.document, first, case.answer)
    return report


def _one_by_one(chunk: Sequence[gen.Scenario], cases: Mapping[str, Case], start: Callable[[], Any],
                progress) -> list[str]:
    """Place each scenario of a failed batch alone on a fresh control plane.

    A batch shares one API server among tens of scenarios; when it does not go quiet, the scenarios alone tell a
    control plane that was too busy from one scenario that never settles. Only the latter is a failure.
    """
    failures = []
    for sc in chunk:
        case = cases[sc.name]
        case.observed = case.verdict = None
        case.apply_errors.clear()
        harness = start()
        try:
            run_batch(harness, [sc], cases, reset=False)
        except Exception as exc:  # noqa: BLE001 - reported, the others go on
            case.observed = case.verdict = None
            failures.append(f"scenario {sc.name}: {type(exc).__name__}: {exc}")
            progress(f"  {sc.name} alone failed: {exc}")
        finally:
            harness.close()
    return failures


def fixture(case: Case, report: Report) -> dict[str, Any]:
    """A regression case: the scenario's objects and what the real scheduler did with them."""
    return {"kubernetes": report.version, "seed": report.seed, "document": case.document,
            "observed": case.observed, "applyErrors": case.apply_errors}


def record(report: Report, directory: Path) -> list[Path]:
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for case in report.disagreements:
        path = directory / f"seed{report.seed}-{case.document['name']}.json"
        path.write_text(json.dumps(fixture(case, report), indent=1, sort_keys=True) + "\n")
        written.append(path)
    return written


def save(report: Report, path: Path) -> None:
    """Every scenario's objects and the real scheduler's answer, gzipped: the whole run, replayable without Go."""
    data = {"kubernetes": report.version, "seed": report.seed, "count": len(report.cases),
            "cases": [{"document": c.document, "observed": c.observed, "applyErrors": c.apply_errors}
                      for c in report.cases if c.observed is not None]}
    path.parent.mkdir(parents=True, exist_ok=True)
    with gzip.open(path, "wt", encoding="utf-8", compresslevel=9) as out:
        json.dump(data, out, sort_keys=True, separators=(",", ":"))


def replay(run: Mapping[str, Any]) -> Report:
    """A saved run's real answers against the simulator as it is now (the speed is the simulator's alone)."""
    started = time.monotonic()
    cases = []
    for saved in run["cases"]:
        case = Case(saved["document"], simulate(saved["document"], kubernetes=run["kubernetes"]), saved["observed"], None,
                    list(saved.get("applyErrors") or ()))
        case.verdict = compare(case.document, case.observed, case.answer)
        cases.append(case)
    seconds = time.monotonic() - started
    return Report(run["seed"], "", run["kubernetes"], cases, seconds, seconds)


def load(path: Path) -> dict[str, Any]:
    with gzip.open(path, "rt", encoding="utf-8") as source:
        return json.load(source)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m rehearse.differential", description=__doc__.split("\n")[0])
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    parser.add_argument("--count", type=int, default=DEFAULT_COUNT)
    parser.add_argument("--minor", default=DEFAULT_MINOR, help="Kubernetes minor of the control plane (1.35)")
    parser.add_argument("--batch", type=int, default=BATCH, help="scenarios per API server reset")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--record", type=Path, help="write each disagreement as a regression fixture here")
    parser.add_argument("--save", type=Path, help="write every scenario and the real answer here (.json.gz)")
    parser.add_argument("--simulate-only", action="store_true", help="the simulator's side only (no Go needed)")
    parser.add_argument("--replay", type=Path, help="judge the simulator against a saved run (no Go needed)")
    parser.add_argument("--family", action="append", default=[], choices=list(gen.FAMILIES),
                        help="force every scenario to this family (repeat to alternate between several)")
    args = parser.parse_args(argv)
    if args.replay:
        report = replay(load(args.replay))
        print(json.dumps(report.to_json(), indent=1) if args.json else report.render())
        return 1 if report.disagreements else 0
    log = (lambda *a: print(*a, file=sys.stderr)) if args.json else print
    forced = f" of the families {', '.join(args.family)}" if args.family else ""
    log(f"differential run: seed {args.seed}, {args.count} scenarios{forced}")
    if args.simulate_only:
        started = time.monotonic()
        cases = simulate_all([sc.document() for sc in scenarios_of(args.seed, args.count, args.family)],
                             args.minor)
        seconds = time.monotonic() - started
        determinate = sum(c.answer.determinate for c in cases)
        summary = {"seed": args.seed, "scenarios": len(cases), "determinate": determinate,
                   "undecided": sum(c.answer.undecided is not None for c in cases),
                   "seconds": round(seconds, 2), "scenariosPerSecond": round(len(cases) / seconds, 1)}
        print(json.dumps(summary) if args.json else
              f"simulator only: {len(cases)} scenarios, {determinate} determinate, {len(cases) / seconds:.1f}/s")
        return 0
    try:
        report = run(args.seed, args.count, args.minor, args.batch, progress=log, families=args.family)
    except Exception as exc:  # the harness's own errors say what to do
        if type(exc).__name__ in ("HarnessUnavailable", "HarnessError", "HarnessTimeout"):
            print(f"cannot run the differential test: {exc}", file=sys.stderr)
            return 2
        raise
    if args.record:
        for path in record(report, args.record):
            log(f"recorded {path}")
    if args.save:
        save(report, args.save)
        log(f"saved {args.save}")
    print(json.dumps(report.to_json(), indent=1) if args.json else report.render())
    if report.disagreements:
        return 1
    return 2 if report.failures else 0


if __name__ == "__main__":
    sys.exit(main())
