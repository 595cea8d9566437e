"""The rehearsal itself: a stack's cluster on the real control plane, phase by phase.

1. **Apply**: the cloud's CRDs (GKE's ComputeClass), the driver charts' DeviceClasses, the plugin DaemonSets,
   every pool at ``autoscaling.min`` nodes with their ResourceSlices, then every object of the plan
   (server-side apply); each refusal names the object and quotes the API server.
2. **Isolation**: where the real DaemonSet controller (and scheduler) put each plugin pod, node by node.
3. **Placement**: each workload's replicas one at a time, in the plan's order (as the simulator places them).
   A replica the scheduler leaves Pending grows a pool the way the cluster autoscaler would: the pools in
   the stack's fallback order, each that may grow (below ``max``, not stocked out, able to scale from zero)
   and whose nodes the pod's selector and tolerations admit, gets one node, and the real scheduler decides
   whether the pod fits there; if not, the node goes and the next pool is tried. Each replica beside the
   simulator's prediction for the same replica count.
4. **make verify** on the real API server (bound pods marked Running through the status subresource, as a
   kubelet would), which must reach the verdict the rehearsal observed.
5. **Spot reclaim**: the first spot pool serving a replica loses that node (its pods with it) and cannot grow
   again; where the replicas go, beside ``simulate(reclaim=[pool])``.
6. **Overcommit**: from a fresh cluster, one workload grows replica by replica until one stays Pending with
   every pool it may use at ``max``; the real FailedScheduling messages against ``make verify``'s patterns
   and the simulator's reason.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gpu_fungibility import clouds

from rehearse import cluster, judge
from rehearse.judge import FAIL, NOTE, OK, Finding, Observed, PhaseResult
from rehearse.scenario import Scenario

#: The most replicas the overcommit phase adds before it gives up looking for the first Pending one.
OVERCOMMIT_LIMIT = 48
INSTANCE_LABEL = "app.kubernetes.io/instance"


@dataclass
class Rehearsal:
    """What one rehearsal observed; :mod:`rehearse.report` presents it."""

    stack: str
    cloud: str
    minor: str
    version: str = ""
    phases: list[PhaseResult] = field(default_factory=list)
    not_applied: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)

    @property
    def findings(self) -> list[Finding]:
        return [f for p in self.phases for f in p.findings]

    @property
    def broken(self) -> bool:
        return any(f.severity == FAIL for f in self.findings)


class Cluster:
    """The rehearsal's view of the cluster it drives: nodes per pool, the autoscaler's moves, the replicas."""

    def __init__(self, scenario: Scenario, harness: Any, log: Callable[[str], None]):
        from simulator.engine import Simulation

        self.s = scenario
        self.h = harness
        self.log = log
        self.factory = scenario.nodes()
        self.sim = Simulation(scenario.cfg, scenario.objects(), ())
        self.pods = {p.workload: p for p in scenario.workloads()}
        self.nodes: dict[str, list[cluster.PlannedNode | None]] = {p.name: [] for p in self.sim.pools}
        self.stocked: set[str] = set()
        self.replicas: dict[str, dict[int, str]] = {}  # workload -> replica -> pod name
        self.profile = clouds.profile(scenario.cloud)

    # ---- objects ----
    def apply(self, objects: list[dict[str, Any]], check: str, names: list[str] | None = None) -> list[Finding]:
        results = self.h.apply(objects) if objects else []
        found = []
        for i, r in enumerate(results):
            name = names[i] if names else r.ref
            if not r.ok:
                found.append(Finding(check, FAIL, f"the API server refused {name}: {r.error}"))
        return found

    def settle(self) -> None:
        self.h.settle(timeout_s=90.0)

    def list(self, *kinds: str) -> dict[str, list[dict[str, Any]]]:
        return self.h.list(*kinds)

    def present(self) -> list[cluster.PlannedNode]:
        return [n for nodes in self.nodes.values() for n in nodes if n is not None]

    def pool_of(self) -> dict[str, str]:
        return {n.name: n.pool for n in self.present()}

    def add_node(self, pool: str) -> tuple[cluster.PlannedNode, list[Finding]]:
        index = len(self.nodes[pool])
        node = self.factory.node(pool, index)
        self.nodes[pool].append(node)
        return node, self.apply(node.objects(), "apply", [f"Node/{node.name}", f"ResourceSlice of {node.name}"])

    def remove_node(self, node: cluster.PlannedNode, lost: bool) -> None:
        """Delete the node, its ResourceSlice and the pods on it; a lost (reclaimed) node keeps its index."""
        self.h.delete(node.refs(), with_pods_on_nodes=True)
        slots = self.nodes[node.pool]
        if lost:
            slots[node.index] = None
        else:
            slots.pop(node.index)

    def running(self, pool: str) -> int:
        return sum(n is not None for n in self.nodes[pool])

    # ---- the workloads ----
    def deployment(self, workload: str, replicas: int) -> dict[str, Any]:
        obj = cluster.with_replicas(self.s.deployment(workload).obj, replicas)
        spec = obj["spec"]["template"]["spec"]
        implied = self.profile.implied_tolerations(spec.get("nodeSelector") or {})
        tolerations = spec.setdefault("tolerations", [])
        tolerations += [t for t in implied if t not in tolerations]
        return obj

    def workload_pods(self, workload: str, items: dict[str, list[dict[str, Any]]]) -> list[dict[str, Any]]:
        pods = [p for p in items["pods"] if (judge.meta(p).get("labels") or {}).get(INSTANCE_LABEL) == workload
                and not judge.meta(p).get("deletionTimestamp") and judge.owner(p)[0] == "ReplicaSet"]
        return sorted(pods, key=lambda p: (judge.meta(p).get("creationTimestamp") or "", judge.meta(p)["name"]))

    def snapshot(self) -> dict[str, list[dict[str, Any]]]:
        return self.list("pods", "resourceclaims")

    def observed(self, workload: str, replica: int, items: dict[str, list[dict[str, Any]]] | None = None) -> Observed:
        items = items or self.snapshot()
        claims = {(judge.meta(c).get("namespace"), judge.meta(c).get("name")): c for c in items["resourceclaims"]}
        name = self.replicas[workload][replica]
        pod = next((p for p in items["pods"] if judge.meta(p).get("name") == name), None)
        if pod is None:
            return Observed(workload, replica, name, "pending", message="the pod is gone")
        return judge.observe(workload, replica, pod, claims, self.pool_of())

    def _new_pods(self, workload: str) -> list[dict[str, Any]]:
        known = set(self.replicas.setdefault(workload, {}).values())
        return [p for p in self.workload_pods(workload, self.snapshot()) if judge.meta(p)["name"] not in known]

    def scale(self, workload: str, replicas: int) -> list[Finding]:
        """Set the Deployment's replicas; the pods it adds become the next replicas, placed like the simulator's."""
        found = self.apply([self.deployment(workload, replicas)], "placement")
        self.settle()
        for pod in self._new_pods(workload):
            index = max(self.replicas[workload], default=0) + 1
            self.replicas[workload][index] = judge.meta(pod)["name"]
            found += self.autoscale(workload, index)
        return found

    def replace_pod(self, workload: str, replica: int) -> None:
        """Delete a Pending replica's pod so the ReplicaSet makes a new one the scheduler tries at once."""
        name = self.replicas[workload][replica]
        namespace = self.pods[workload].namespace
        self.h.delete([cluster.object_ref("v1", "Pod", name, namespace)])
        self.settle()
        new = self._new_pods(workload)
        if new:
            self.replicas[workload][replica] = judge.meta(new[0])["name"]

    def autoscale(self, workload: str, replica: int) -> list[Finding]:
        """Grow a pool for a Pending replica, in the stack's fallback order, as the cluster autoscaler would."""
        found: list[Finding] = []
        if self.observed(workload, replica).status == "scheduled":
            return found
        pod = self.pods[workload]
        for p, pool in enumerate(self.sim.pools):
            if pool.name in self.stocked or self.running(pool.name) >= pool.max:
                continue
            if self.sim._pool_predicates(pod, p):  # noqa: SLF001 - the scheduler's node predicates, on a template
                continue
            if not self.running(pool.name) and pool.config.dra and not self.sim._scales_from_zero(p):  # noqa: SLF001
                continue
            node, refused = self.add_node(pool.name)
            found += refused
            self.settle()
            if self.observed(workload, replica).status != "scheduled":
                self.replace_pod(workload, replica)
            if self.observed(workload, replica).status == "scheduled":
                self.log(f"  autoscaler: {pool.name} +1 node ({node.name}) for {workload} #{replica}")
                return found
            self.remove_node(node, lost=False)
            self.settle()
        return found


def _phase_apply(c: Cluster, result: Rehearsal) -> PhaseResult:
    s = c.s
    phase = PhaseResult("apply")
    crds, notes = cluster.custom_resources(s.objects())
    result.notes.extend(notes)
    phase.findings += c.apply(crds, "apply")
    phase.findings += c.apply(cluster.driver_device_classes(s.releases), "apply")
    phase.findings += c.apply([p.daemonset for p in s.plugins] + [cluster.cloud_pods_daemonset(s.cloud)], "apply")
    for pool in c.sim.pools:  # every pool shows its plugins: an empty pool gets one node until placement starts
        for _ in range(max(pool.min, 1)):
            phase.findings += c.add_node(pool.name)[1]
    by_name = {s.deployment(w).obj["metadata"]["name"]: w for w in c.pods}
    objects, names = [], []
    for m in s.manifests:
        obj, note = cluster.prepared(m.obj)
        if obj.get("kind") == "Deployment" and obj["metadata"]["name"] in by_name:
            obj = c.deployment(by_name[obj["metadata"]["name"]], 0)  # the placement phase scales it
        if note:
            result.not_applied.append(f"{m.ref} ({m.filename}): {note}")
        objects.append(obj)
        names.append(f"{m.ref} ({m.filename})")
    results = c.h.apply(objects)
    refused = []
    for obj, name, r in zip(objects, names, results, strict=False):
        if r.ok:
            continue
        if cluster.refused_only_for_privileged(r.error or ""):
            again = c.h.apply([cluster.without_privileged(obj)])
            if again and again[0].ok:
                result.not_applied.append(
                    f"{name}: applied without `privileged: true`: this control plane's API server runs with "
                    "--allow-privileged=false (its test server's default) and answered: "
                    f"{r.error}; every cloud's API server admits privileged containers")
                continue
        refused.append(Finding("apply", FAIL, f"the API server refused {name}: {r.error}"))
    phase.findings += refused
    applied = len(objects) - len(refused)
    phase.findings.insert(0, Finding("apply", OK if not refused else FAIL,
                                     f"{applied} of {len(objects)} objects of the plan applied server-side"))
    c.settle()
    return phase


def _phase_isolation(c: Cluster) -> PhaseResult:
    items = c.list("pods", "daemonsets")
    placed, unplaced = judge.plugins_by_node(items["pods"], items["daemonsets"])
    return PhaseResult("isolation", findings=judge.isolation(c.present(), c.s.cfg, placed, unplaced))


def _start_at_min(c: Cluster) -> None:
    """Back to every pool at ``autoscaling.min`` (the simulator's start): the isolation phase's extra nodes go."""
    extra = [n for pool in c.sim.pools for n in c.nodes[pool.name][pool.min:] if n is not None]
    for node in reversed(extra):
        c.remove_node(node, lost=False)
    if extra:
        c.settle()


def _simulate(s: Scenario, **kwargs: Any) -> Any:
    from simulator.engine import simulate

    return simulate(s.cfg, s.objects(), **kwargs)


def _compare(c: Cluster, phase: PhaseResult, predicted: Any, keys: list[tuple[str, int]] | None = None) -> None:
    items = c.snapshot()
    for p in predicted.replicas:
        if keys is not None and (p.workload, p.replica) not in keys:
            continue
        if p.replica not in c.replicas.get(p.workload, {}):
            phase.findings.append(Finding(phase.name, FAIL, f"{p.workload} #{p.replica}: the simulator places it "
                                          f"({judge.predicted_text(p)}) but the Deployment made no pod for it"))
            continue
        phase.comparisons.append(judge.compare(c.observed(p.workload, p.replica, items), p))
    phase.findings += judge.comparison_findings(phase.name, phase.comparisons)


def _phase_placement(c: Cluster) -> PhaseResult:
    phase = PhaseResult("placement")
    for workload, pod in c.pods.items():
        for count in range(1, pod.replicas + 1):
            phase.findings += c.scale(workload, count)
    _compare(c, phase, _simulate(c.s))
    observed = [c.observed(w, r) for w in c.replicas for r in c.replicas[w]]
    phase.findings += judge.pending_promise("placement", observed)
    return phase


def mark_running(kubeconfig: Path, pods: list[dict[str, Any]]) -> int:
    """Bound pods Running and Ready through the status subresource, as their kubelet would report them."""
    from kubernetes import client, config

    api = client.CoreV1Api(api_client=config.new_client_from_config(config_file=str(kubeconfig)))
    now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    marked = 0
    for pod in pods:
        if not (pod.get("spec") or {}).get("nodeName") or (pod.get("status") or {}).get("phase") == "Running":
            continue
        conditions = [c for c in (pod.get("status") or {}).get("conditions") or [] if c.get("type") == "PodScheduled"]
        conditions += [{"type": t, "status": "True", "lastTransitionTime": now}
                       for t in ("Initialized", "ContainersReady", "Ready")]
        api.patch_namespaced_pod_status(judge.meta(pod)["name"], judge.meta(pod)["namespace"],
                                        {"status": {"phase": "Running", "conditions": conditions, "startTime": now}})
        marked += 1
    return marked


def run_verify(stack: str, kubeconfig: Path, stack_dir: Path) -> tuple[int, dict[str, Any] | None, str]:
    """``make verify``'s verdict on the rehearsal's cluster, as ``python -m verify --stack S --kubeconfig K --json
    --no-simulate --deadline 60`` gives it: (exit code, the JSON document, the reason when it could not read)."""
    from verify.report import EXIT_UNREADABLE, exit_code, to_json
    from verify.run import VerifyError, verify

    try:
        verdict = verify(stack, stack_dir, kubeconfig=str(kubeconfig), deadline=60.0, simulate=False)
    except VerifyError as exc:
        return EXIT_UNREADABLE, None, f"verify: {exc}"
    except Exception as exc:  # noqa: BLE001 - as make verify: a reason and exit 2, never a traceback
        text = str(exc).splitlines()[0] if str(exc) else ""
        return EXIT_UNREADABLE, None, f"verify: stopped by an unexpected {type(exc).__name__}: {text}"
    document = json.loads(json.dumps(to_json(stack, verdict.view.source, verdict.findings)))
    return exit_code(verdict.findings), document, ""


def _phase_verify(c: Cluster, result: Rehearsal, stack_dir: Path, expect: int, label: str) -> PhaseResult:
    phase = PhaseResult(f"verify ({label})")
    marked = mark_running(Path(c.h.kubeconfig), c.list("pods")["pods"])
    if marked:
        c.settle()
        result.notes.append(f"{marked} bound pod(s) were marked Running and Ready through the status subresource "
                            "before make verify read the cluster (there is no kubelet)")
    code, document, err = run_verify(c.s.stack, Path(c.h.kubeconfig), stack_dir)
    failures = [f.get("message", "") for f in (document or {}).get("findings", []) if f.get("severity") == "failure"]
    said = f"make verify exits {code}" + (f" ({'; '.join(failures[:3])})" if failures else "") + (
        f"; stderr: {err}" if err and code == 2 else "")
    if code == expect:
        phase.findings.append(Finding(phase.name, OK, f"{said}, the verdict the rehearsal observed ({expect})"))
    else:
        phase.findings.append(Finding(phase.name, FAIL, f"{said}; the rehearsal observed {expect}"))
    return phase


def _phase_reclaim(c: Cluster) -> PhaseResult | None:
    phase = PhaseResult("reclaim")
    items = c.snapshot()
    serving: dict[str, list[tuple[str, int]]] = {}
    for workload, replicas in c.replicas.items():
        for replica in replicas:
            o = c.observed(workload, replica, items)
            if o.node:
                serving.setdefault(o.node, []).append((workload, replica))
    for pool in c.sim.pools:
        if not pool.config.spot:
            continue
        nodes = [n for n in c.nodes[pool.name] if n is not None and n.name in serving]
        if nodes:
            break
    else:
        return None
    lost = nodes[0]
    displaced = serving[lost.name]
    c.log(f"  reclaim: {lost.name} (spot pool {pool.name}) is lost with {len(displaced)} replica(s)")
    c.remove_node(lost, lost=True)
    c.stocked.add(pool.name)
    c.settle()
    for workload, replica in sorted(displaced, key=lambda k: (list(c.pods).index(k[0]), k[1])):
        new = c._new_pods(workload)  # noqa: SLF001
        if new:
            c.replicas[workload][replica] = judge.meta(new[0])["name"]
            phase.findings += c.autoscale(workload, replica)
    phase.findings.insert(0, Finding("reclaim", NOTE, f"spot pool {pool.name} lost {lost.name}; it cannot add "
                                     f"nodes again; displaced: {', '.join(f'{w} #{r}' for w, r in displaced)}"))
    _compare(c, phase, _simulate(c.s, reclaim=[pool.name]), displaced)
    return phase


def _phase_overcommit(c: Cluster) -> PhaseResult:
    from verify.placement import advice

    phase = PhaseResult("overcommit")
    workload = next(iter(c.pods))
    count = 0
    pending: Observed | None = None
    while count < OVERCOMMIT_LIMIT:
        count += 1
        phase.findings += c.scale(workload, count)
        o = c.observed(workload, count)
        if o.status != "scheduled":
            pending = o
            break
    if pending is None:
        phase.findings.append(Finding("overcommit", NOTE, f"{workload}: {OVERCOMMIT_LIMIT} replicas all placed; "
                                      "no Pending replica to read"))
        return phase
    predicted = _simulate(c.s, replicas={workload: count})
    c.log(f"  overcommit: {workload} #{count} stays Pending")
    last = predicted.of(workload)[-1]
    comparison = judge.compare(pending, last)
    phase.comparisons.append(comparison)
    phase.findings += judge.comparison_findings("overcommit", [comparison])
    phase.findings += judge.message_findings("overcommit", [pending], advice)
    fix, reason = advice(pending.message or "") or "", str(getattr(last, "reason", "") or "")
    if "resources" in fix and "no capacity" in reason and "insufficient" not in reason:
        phase.findings.append(Finding("overcommit", NOTE, (
            "make verify and the simulator name different causes: the real message leads with CPU/memory "
            "(the scheduler's NodeResourcesFit filter runs before DynamicResources), so make verify advises "
            f"'{fix}', while the simulator's reason is '{reason}'")))
    return phase


def rehearse(scenario: Scenario, harness: Any, stack_dir: Path, *, log: Callable[[str], None] = print,
             phases: tuple[str, ...] = ("apply", "isolation", "placement", "verify", "reclaim", "overcommit")
             ) -> Rehearsal:
    """Run the phases on a started harness; every observation becomes a finding of the result."""
    result = Rehearsal(scenario.stack, scenario.cloud, scenario.minor, getattr(harness, "version", ""))
    result.notes += scenario.notes
    result.notes.append("the charts' plugin DaemonSets are stand-ins carrying the placement the chart model derives "
                        "(nodeSelector, affinity, tolerations) and the room the library keeps for them as requests")
    c = Cluster(scenario, harness, log)

    def timed(name: str, step: Callable[[], PhaseResult | None]) -> None:
        started = time.monotonic()
        log(f"rehearse: {name} ...")
        found = step()
        result.timings[name] = round(time.monotonic() - started, 1)
        if found is not None:
            result.phases.append(found)

    timed("apply", lambda: _phase_apply(c, result))
    if "isolation" in phases:
        timed("isolation", lambda: _phase_isolation(c))
    _start_at_min(c)
    if "placement" in phases:
        timed("placement", lambda: _phase_placement(c))
    if "verify" in phases:
        # make verify sees what a user's cluster shows: the plugins' placement and Pending replicas.
        expect = 1 if any(f.severity == FAIL and (f.check == "isolation" or "is Pending" in f.message)
                          for f in result.findings) else 0
        timed("verify", lambda: _phase_verify(c, result, stack_dir, expect, "as placed"))
    if "reclaim" in phases:
        timed("reclaim", lambda: _phase_reclaim(c))
    if "overcommit" in phases:
        def overcommit() -> PhaseResult:
            harness.reset()
            fresh = Cluster(scenario, harness, log)
            _phase_apply(fresh, Rehearsal(scenario.stack, scenario.cloud, scenario.minor))
            _start_at_min(fresh)
            return _phase_overcommit(fresh)
        timed("overcommit", overcommit)
    return result
