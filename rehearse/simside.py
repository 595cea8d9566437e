"""The simulator's answer for one differential scenario: every way its pods can be placed.

The scenario arrives as plain Kubernetes objects (a *scenario document*, see
:meth:`rehearse.scenarios.Scenario.document`), so a recorded case replays without the generator. The
simulator's own parts decide: pods are read by :func:`simulator.workloads.pod_spec`, DeviceClasses by
:func:`simulator.workloads.device_classes`, nodes are filtered by :func:`simulator.scheduling.node_predicates`,
devices allocated by :class:`simulator.allocator.Allocator`. The pods are placed one at a time in the
scenario's order, as kube-scheduler's default profile filters (``NodeResourcesFit`` before
``DynamicResources``: pkg/scheduler/apis/config/v1/default_plugins.go, v1.35.4): a node whose CPU, memory or
pod count cannot take the pod is never asked for devices.

Where several nodes can take a pod, the choice belongs to the scheduler's scores and, among equal totals, its
tie-break (1.34 samples at random; 1.35 and 1.36 take the tied node first in an order the simulator does not
know, :mod:`simulator.scoring`): the simulator claims no node there and follows every
choice, unless a node scorer (:data:`NodeScorer`) says which nodes score best. The answer is the set of
*layouts* every choice leads to. A layout forgets node names where they cannot matter: nodes of one pool are
identical, so a layout lists, per pool, the sorted contents of its nodes (each pod's group, and per claim
request the subrequest and device names it got), and the groups of the pods left pending.

Shared claims (a pod's ``resourceClaimName``) are allocated once, by the first pod placed with them; a later pod
naming one uses its devices where they are: on the node that holds them, or, for devices of a ResourceSlice
without ``nodeName`` (``allNodes`` or a ``nodeSelector``), on any node those slices select. Such devices are
shared by every node a slice selects, so who holds them is kept for the whole cluster, not per node. Requests
with ``adminAccess`` take no device.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from gpu_fungibility import pod_requests
from gpu_fungibility.dra_cel import CelEvaluationError
from gpu_fungibility.node_selection import NodeTaint, term_matches
from gpu_fungibility.versions import later_all_takes_the_first_alternative

from simulator.allocator import Allocator, ConstraintError, MissingDeviceClass, SearchAbandoned
from simulator.cluster import SimDevice, SimNode
from simulator.dra_features import DraFeatures
from simulator.scheduling import node_predicates
from simulator.workloads import PodSpec, device_classes, pod_spec

#: The most layouts one scenario may have before the simulator stops following choices.
MAX_LAYOUTS = 4096
#: The most orders of a node's device pools the simulator follows. kube-scheduler gathers a node's pools into a
#: Go map and allocates from them in its iteration order (structured.GatherPools, k8s.io/dynamic-resource-allocation
#: v0.35.4), which Go randomises: where devices of two pools (a node's own, a slice without a nodeName) can serve one
#: request, either may come first (seen in the differential run, seed 3802, s0140).
MAX_POOL_ORDERS = 24
POOL_LABEL = "differential.gpu-fungibility.dev/pool"
HOSTNAME = "kubernetes.io/hostname"
ZONE = "topology.kubernetes.io/zone"

Pick = tuple[str, str, str]  # (the pod's claim entry, request or request/subrequest, device name)
Content = tuple[tuple[str, tuple[Pick, ...]], ...]  # a node's pods: (group, picks), sorted
Layout = tuple[tuple[tuple[Content, ...], ...], tuple[str, ...]]  # per pool: node contents sorted; pending groups


ClaimPicks = tuple[tuple[str, str], ...]  # a shared claim's allocation: (request or request/subrequest, device)


@dataclass(frozen=True)
class NodeState:
    used: frozenset[str] = frozenset()  # device names
    cpu_m: int = 0
    memory: int = 0  # bytes
    pods: int = 0
    content: Content = ()
    claims: tuple[tuple[str, ClaimPicks], ...] = ()  # shared claims allocated with devices of this node
    nonzero: tuple[int, int] = (0, 0)  # what NodeResourcesFit's score counts as requested (millicores, bytes)

    def sort_key(self) -> tuple:
        return self.content, tuple(sorted(self.used)), self.cpu_m, self.memory, self.pods, self.claims, self.nonzero


#: Devices without a node (slices with allNodes or a nodeSelector) in use, by uid; shared claims allocated with
#: such devices only: (claim, the pools that may use it, its picks).
Cluster = tuple[frozenset[str], tuple[tuple[str, tuple[int, ...], ClaimPicks], ...]]
#: Per pool its nodes; the groups of pending pods; the groups of those whose last attempt was a scheduling *error*
#: (each also in the pending groups), which kube-scheduler tries again, unlike a pod it found unschedulable; and
#: what the cluster shares.
State = tuple[tuple[tuple[NodeState, ...], ...], tuple[str, ...], tuple[str, ...], Cluster]


@dataclass
class PoolModel:
    name: str
    nodes: list[str]
    node: SimNode  # the first node: every node of the pool is the same but for its name
    cpu_m: int
    memory: int  # bytes
    max_pods: int
    shared: frozenset[str] = frozenset()  # uids of its devices that come from slices without a nodeName
    #: the node with its device pools in every order the allocator may meet them (one when it has one pool)
    orders: tuple[SimNode, ...] = ()


@dataclass(frozen=True)
class Candidate:
    pool: int
    state: NodeState
    picks: tuple  # simulator.allocator.Pick
    count: int = 1  # nodes of the pool in this state
    reused: tuple[tuple[str, str, str], ...] = ()  # (entry, request, device) of shared claims allocated before
    new_claims: tuple[tuple[str, str], ...] = ()  # (shared claim, the pod's entry) this placement allocates


#: Given a pod, the nodes that can take it and the state they are in, the candidates the scheduler's scores put
#: first (all of them when the scorer cannot tell); None stands for "no scorer": every candidate is a possible choice.
NodeScorer = Callable[[PodSpec, Sequence[Candidate], Any], Sequence[Candidate]]


@dataclass
class SimAnswer:
    layouts: set[Layout] = field(default_factory=set)
    problems: dict[str, str] = field(default_factory=dict)  # group -> why every pod of it is pending
    undecided: str | None = None  # the simulator gave up (too many layouts, search abandoned)

    @property
    def determinate(self) -> bool:
        return self.undecided is None and len(self.layouts) == 1


class TooManyLayouts(RuntimeError):
    """The pods can be placed in more ways than the simulator follows (:data:`MAX_LAYOUTS`)."""


class NotEquivalent(ValueError):
    """Nodes of one pool differ in more than their names (the layouts would be wrong)."""


def _node_signature(node: Mapping[str, Any], devices: list[dict]) -> tuple:
    labels = {k: v for k, v in ((node.get("metadata") or {}).get("labels") or {}).items() if k != HOSTNAME}
    spec = node.get("spec") or {}
    status = node.get("status") or {}
    return (sorted(labels.items()), repr(spec.get("taints")), repr(status.get("allocatable")),
            [d["name"] for d in devices])


def _selects(spec: Mapping[str, Any], labels: Mapping[str, str], name: str) -> bool:
    """Whether a ResourceSlice without ``nodeName`` offers its devices to a node."""
    if spec.get("allNodes"):
        return True
    selector = spec.get("nodeSelector")
    return bool(selector) and any(term_matches(t, labels, name) for t in selector.get("nodeSelectorTerms") or ())


def build_pools(document: Mapping[str, Any]) -> list[PoolModel]:
    slices: dict[str, tuple[str, list[dict]]] = {}
    unbound = []  # slices without a nodeName, in the order the allocator meets them (driver, then pool name)
    for s in document["resourceSlices"]:
        spec = s["spec"]
        if spec.get("nodeName"):
            slices[spec["nodeName"]] = (spec["driver"], list(spec.get("devices") or ()))
        else:
            unbound.append(spec)
    unbound.sort(key=lambda spec: (spec["driver"], spec["pool"]["name"]))
    pools: dict[str, list[Mapping[str, Any]]] = {}
    for node in document["nodes"]:
        pools.setdefault(node["metadata"]["labels"][POOL_LABEL], []).append(node)
    out = []
    for name, nodes in pools.items():
        signatures = {repr(_node_signature(n, slices.get(n["metadata"]["name"], ("", []))[1])) for n in nodes}
        signatures = {s + repr([_selects(u, (n["metadata"].get("labels") or {}), n["metadata"]["name"])
                                for u in unbound]) for n in nodes for s in signatures}
        if len(signatures) > 1:
            raise NotEquivalent(f"pool {name}: its nodes differ in more than their names")
        first = nodes[0]
        node_name = first["metadata"]["name"]
        driver, entries = slices.get(node_name, ("", []))
        labels = dict(first["metadata"].get("labels") or {})
        taints = [NodeTaint(t["key"], t.get("value") or "", t.get("effect") or "NoSchedule")
                  for t in (first.get("spec") or {}).get("taints") or ()]
        allocatable = first["status"]["allocatable"]
        devices = [SimDevice.build(node_name, driver, e) for e in entries]
        shared = [SimDevice.build(u["pool"]["name"], u["driver"], e) for u in unbound
                  if _selects(u, labels, node_name) for e in u.get("devices") or ()]
        sim = SimNode(node_name, name, labels, taints, devices + shared)
        # one group per resource pool, not per slice: a pool's counter slice and device slice are one pool
        here = dict.fromkeys(u["pool"]["name"] for u in unbound if _selects(u, labels, node_name) and u.get("devices"))
        groups = [devices] * bool(devices) + [[d for d in shared if d.uid.split("/", 1)[0] == pool] for pool in here]
        orders = tuple(SimNode(node_name, name, labels, taints, [d for g in order for d in g])
                       for order in itertools.islice(itertools.permutations(groups), MAX_POOL_ORDERS))
        out.append(PoolModel(name, [n["metadata"]["name"] for n in nodes], sim,
                             pod_requests.millicores(allocatable["cpu"]),
                             pod_requests.memory_bytes(allocatable["memory"]), int(allocatable.get("pods", 110)),
                             frozenset(d.uid for d in shared), orders or (sim,)))
    return out


def _by_key(objects: Sequence[Mapping[str, Any]]) -> dict[tuple[str, str], Mapping[str, Any]]:
    return {((o["metadata"].get("namespace") or "default"), o["metadata"]["name"]): o for o in objects}


class ScenarioSimulator:
    def __init__(self, document: Mapping[str, Any], scorer: NodeScorer | None = None, minor: str | None = None):
        """``minor``: the Kubernetes version the answer is for (``"1.35"``, ``"v1.36.3"``); None takes the
        allocator of 1.34 and 1.35 (see gpu_fungibility.versions.later_all_takes_the_first_alternative)."""
        self.document = document
        self.pools = build_pools(document)
        classes, problems = device_classes(document["deviceClasses"])
        self.allocator = Allocator(classes, problems, later_all_quirk=later_all_takes_the_first_alternative(minor),
                                   features=DraFeatures.at(minor, document["resourceSlices"]))
        self.scorer = scorer
        self.mixed_claims_error = mixed_claims_score_error(minor)
        templates = _by_key(document["templates"])
        claims = _by_key(document.get("claims") or ())
        self.groups: list[tuple[str, PodSpec, int]] = []
        for group in document["groups"]:
            spec = pod_spec(group["name"], document["namespace"], int(group["replicas"]), group["pod"], templates,
                            claims)
            self.groups.append((group["name"], spec, int(group["replicas"])))

    def start(self) -> State:
        return tuple(tuple(NodeState() for _ in pool.nodes) for pool in self.pools), (), (), (frozenset(), ())

    def run(self) -> SimAnswer:
        answer = SimAnswer()
        states: set[State] = {self.start()}
        try:
            for name, pod, replicas in self.groups:
                if pod.problem:
                    answer.problems[name] = pod.problem
                for _ in range(replicas):
                    states = self.retried({child for state in states for child in self.place(state, name, pod)})
                    if len(states) > MAX_LAYOUTS:
                        answer.undecided = f"more than {MAX_LAYOUTS} ways the pods can be placed"
                        return answer
                states = {state for state in states if not self.retries(state)}
        except (SearchAbandoned, TooManyLayouts) as exc:
            answer.undecided = str(exc)
            return answer
        answer.layouts = {layout_of(state) for state in states}
        return answer

    def retried(self, states: set[State]) -> set[State]:
        """``states`` and every state reached from them by trying pods that met a scheduling error again.

        A pod whose Filter returned an error (an ``All`` request a claim constraint refuses, a CEL runtime error)
        goes to the backoff queue, not to the unschedulable pods, and kube-scheduler pops it from there as soon as
        its active queue is empty (SchedulerPopFromBackoffQ, beta and on since 1.33: pkg/scheduler/backend/queue/
        active_queue.go and scheduling_queue.go, v1.35.4). So such a pod is tried again between any two pods and
        after every wave, and what other pods took meanwhile can change its answer (an ``All`` request over
        devices already taken is simply unsatisfiable, and the next alternative is tried). A wave ends only where
        no such pod can get further (``run`` keeps those states).
        """
        out, todo = set(states), list(states)
        while todo:
            for child in self.retries(todo.pop()):
                if child not in out:
                    out.add(child)
                    todo.append(child)
                    if len(out) > MAX_LAYOUTS:
                        raise TooManyLayouts(f"more than {MAX_LAYOUTS} ways the pods can be placed")
        return out

    def retries(self, state: State) -> list[State]:
        """The states one more attempt at one erroring pod leads to, where that attempt gets further."""
        children = []
        pods = {name: pod for name, pod, _ in self.groups}
        for group in dict.fromkeys(state[2]):
            base = _unpend(state, group)
            try:
                found = self.candidates(base, pods[group])
            except (CelEvaluationError, ConstraintError):
                continue  # the same error again: nothing changes
            except MissingDeviceClass:
                found = []
            if not found:  # unschedulable now: it waits for an event this scenario never makes
                children.append(_pending(base, group))
                continue
            if self.score_errors(pods[group], found):
                continue  # the same error again
            if self.scorer is not None:
                found = list(self.scorer(pods[group], found, base))
            children += [self.commit(base, group, pods[group], c) for c in found]
        return children

    def candidates(self, state: State, pod: PodSpec) -> list[Candidate]:
        """Every distinct node that can take the pod; raises CelEvaluationError / MissingDeviceClass."""
        found = []
        shared_used, cluster_claims = state[3]
        on_nodes = {claim for nodes in state[0] for node in nodes for claim, _ in node.claims}
        anywhere = {claim: (pools, picks) for claim, pools, picks in cluster_claims}
        for p, pool in enumerate(self.pools):
            if node_predicates(pod, pool.node):
                continue
            for node in dict.fromkeys(state[0][p]):  # equal states of one pool are one choice
                if (node.cpu_m + pod.cpu_m > pool.cpu_m or node.memory + pod.memory_bytes > pool.memory
                        or node.pods + 1 > pool.max_pods):
                    continue  # NodeResourcesFit filters before DynamicResources
                here = dict(node.claims)
                reused: list[tuple[str, str, str]] = []
                allocate, new_claims = [], []
                for claim in pod.claims:
                    if not claim.shared:
                        allocate.append(claim)
                    elif claim.source in here:
                        reused += [(claim.entry, label, device) for label, device in here[claim.source]]
                    elif claim.source in anywhere:
                        pools, picks = anywhere[claim.source]
                        if p not in pools:
                            break  # the claim's devices are not offered to this node
                        reused += [(claim.entry, label, device) for label, device in picks]
                    elif claim.source in on_nodes:
                        break  # allocated on another node
                    else:
                        allocate.append(claim)
                        new_claims.append((claim.source, claim.entry))
                else:
                    in_use = frozenset(f"{pool.node.name}/{d}" for d in node.used) | shared_used
                    seen = set()
                    for order in pool.orders:  # which pool's devices come first is the allocator's chance
                        picks = self.allocator.allocate(allocate, order, in_use)
                        key = None if picks is None else tuple(sorted((p.claim, p.alternative.label, p.device.uid)
                                                                     for p in picks))
                        if key is None or key in seen:
                            continue
                        seen.add(key)
                        found.append(Candidate(p, node, tuple(picks), state[0][p].count(node), tuple(reused),
                                               tuple(new_claims)))
        return found

    def commit(self, state: State, group: str, pod: PodSpec, choice: Candidate) -> State:
        pool = self.pools[choice.pool]
        picks = tuple(sorted([(p.claim, p.alternative.label, p.device.name) for p in choice.picks]
                             + list(choice.reused)))
        node = choice.state
        used, shared_used = set(node.used), set(state[3][0])
        for pick in choice.picks:
            if pick.alternative.admin_access:
                continue  # the scheduler's allocated-device tracker skips admin-access results
            if pick.device.uid in pool.shared:
                shared_used.add(pick.device.uid)
            else:
                used.add(pick.device.name)
        node_claims, cluster_claims = list(node.claims), list(state[3][1])
        for claim, entry in choice.new_claims:
            mine = [p for p in choice.picks if p.claim == entry]
            taken = tuple(sorted((p.alternative.label, p.device.name) for p in mine))
            if any(p.device.uid not in pool.shared for p in mine):
                node_claims.append((claim, taken))
            else:  # only devices without a node: any pool offered all of them may use the claim
                uids = {p.device.uid for p in mine}
                pools = tuple(i for i, other in enumerate(self.pools) if uids <= other.shared)
                cluster_claims.append((claim, pools, taken))
        placed = NodeState(frozenset(used), node.cpu_m + pod.cpu_m, node.memory + pod.memory_bytes, node.pods + 1,
                           tuple(sorted((*node.content, (group, picks)))), tuple(sorted(node_claims)),
                           (node.nonzero[0] + pod.nonzero[0], node.nonzero[1] + pod.nonzero[1]))
        nodes = list(state[0][choice.pool])
        nodes[nodes.index(node)] = placed
        pools = list(state[0])
        pools[choice.pool] = tuple(sorted(nodes, key=NodeState.sort_key))
        return tuple(pools), state[1], state[2], (frozenset(shared_used), tuple(sorted(cluster_claims)))

    def place(self, state: State, group: str, pod: PodSpec) -> list[State]:
        if pod.problem:
            return [_pending(state, group)]
        try:
            found = self.candidates(state, pod)
        except (CelEvaluationError, ConstraintError):
            return [_pending(state, group, error=True)]  # the scheduler's Filter errors: tried again later
        except MissingDeviceClass:
            return [_pending(state, group)]  # PreFilter: unschedulable until the class exists
        if not found:
            return [_pending(state, group)]
        if self.score_errors(pod, found):
            return [_pending(state, group, error=True)]
        if self.scorer is not None:
            found = list(self.scorer(pod, found, state))
        return [self.commit(state, group, pod, c) for c in found]

    def score_errors(self, pod: PodSpec, found: Sequence[Candidate]) -> bool:
        """Whether DynamicResources' Score fails for the pod (see :func:`mixed_claims_score_error`): some of its
        claims are allocated already, others are not, and more than one node passed the filters (with one,
        kube-scheduler binds without scoring)."""
        if not self.mixed_claims_error:
            return False
        allocated = {entry for c in found for entry, _, _ in c.reused}
        if not allocated or all(claim.entry in allocated for claim in pod.claims):
            return False
        return sum(c.count for c in {(c.pool, c.state): c for c in found}.values()) > 1


def mixed_claims_score_error(minor: str | None) -> bool:
    """Whether kube-scheduler at ``minor`` fails to score a pod with claims allocated before it and claims to
    allocate: 1.35's DynamicResources ``computeScore`` reads the allocation of claim ``i`` (of all the pod's claims)
    from the results of the claims it allocated in this cycle, and errs "number of allocations N is smaller than
    number of claims" past their end (k8s.io/kubernetes v1.35.4, pkg/scheduler/framework/plugins/dynamicresources/
    dynamicresources.go lines 860-868). The pod meets a scheduling error, is tried again, and stays pending while
    more than one node can take it. 1.34 has no DRA score; 1.36 reads an allocated claim from its status
    (v1.36.3, lines 1101-1125)."""
    if minor is None:
        return False
    return tuple(int(x) for x in str(minor).lstrip("v").split(".")[:2]) == (1, 35)


def _pending(state: State, group: str, *, error: bool = False) -> State:
    return (state[0], tuple(sorted((*state[1], group))), tuple(sorted((*state[2], group))) if error else state[2],
            state[3])


def _unpend(state: State, group: str) -> State:
    """``state`` without one pending, erroring pod of ``group`` (it is being tried again)."""
    pending, errored = list(state[1]), list(state[2])
    pending.remove(group)
    errored.remove(group)
    return state[0], tuple(pending), tuple(errored), state[3]


def _affinity_refuses(pod: PodSpec, pool: PoolModel) -> bool:
    labels = pool.node.labels
    if any(labels.get(k) != v for k, v in pod.node_selector.items()):
        return True
    return pod.affinity_terms is not None and not any(term_matches(t, labels, pool.node.name)
                                                      for t in pod.affinity_terms)


def layout_of(state: State) -> Layout:
    return tuple(tuple(sorted(n.content for n in nodes)) for nodes in state[0]), state[1]


def simulate(document: Mapping[str, Any], scorer: NodeScorer | None = None, kubernetes: str | None = None) -> SimAnswer:
    """The simulator's answer; with ``kubernetes`` (``"v1.35.4"``, ``"1.35"``) and the simulator's node scoring
    (``simulator.scoring``) present, its scores choose among the nodes that can take a pod."""
    simulator = ScenarioSimulator(document, scorer, kubernetes)
    scoring = _scoring_module() if scorer is None and kubernetes else None
    if scoring is not None:
        simulator.scorer = _scorer(simulator, ".".join(kubernetes.lstrip("v").split(".")[:2]), scoring)
    return simulator.run()


def _scoring_module() -> Any:
    """``simulator.scoring`` when it exists with the interface :func:`_scorer` uses, else None."""
    try:
        from simulator import scoring
    except ImportError:
        return None
    needed = ("default_profile", "Candidate", "NodeShape", "ScoredPod", "score", "winners")
    return scoring if all(hasattr(scoring, name) for name in needed) else None


def scored(document: Mapping[str, Any], minor: str, scoring: Any) -> SimAnswer:
    """The answer with a node scorer: ``scoring`` is a module with the interface of ``simulator.scoring``
    (``default_profile``, ``Candidate``, ``NodeShape``, ``ScoredPod``, ``score``, ``winners``)."""
    simulator = ScenarioSimulator(document, minor=minor)
    simulator.scorer = _scorer(simulator, minor, scoring)
    return simulator.run()


def _scorer(simulator: ScenarioSimulator, minor: str, scoring: Any) -> NodeScorer:
    profile = scoring.default_profile(minor)
    kinds = {g["name"]: g.get("kind", "Pod") for g in simulator.document["groups"]}

    def zone_counts(pod: PodSpec, state: State) -> dict[str, int]:
        """The pod's group's pods per zone, on the nodes its nodeSelector and required affinity admit (what
        PodTopologySpread's PreScore counts: podtopologyspread/scoring.go, v1.35.4)."""
        counts: dict[str, int] = {}
        for pool, nodes in zip(simulator.pools, state[0], strict=True):
            zone = pool.node.labels.get(ZONE)
            if zone is None or _affinity_refuses(pod, pool):
                continue
            counts[zone] = counts.get(zone, 0) + sum(g == pod.workload for n in nodes for g, _ in n.content)
        return counts

    def choose(pod: PodSpec, found: Sequence[Candidate], state: State) -> Sequence[Candidate]:
        if len(found) < 2:
            return found
        shaped = []
        for c in found:
            pool = simulator.pools[c.pool]
            ranks = []
            for claim in pod.claims:
                ranks.append(tuple(sorted({(p.alternative.label, p.alternative.rank) for p in c.picks
                                           if p.claim == claim.entry and p.alternative.subrequest is not None})))
            requested = (c.state.cpu_m, c.state.memory)
            # LeastAllocated counts the node's and the pod's non-zero requests (a container without one counts
            # 100m / 200Mi); NodeShape adds the pod's real request to its base, so the base makes up the difference
            nonzero = (c.state.nonzero[0] + pod.nonzero[0] - pod.cpu_m,
                       c.state.nonzero[1] + pod.nonzero[1] - pod.memory_bytes)
            shaped.append(scoring.Candidate(
                key=c, labels=pool.node.labels, taints=tuple(pool.node.taints),
                shapes=(scoring.NodeShape((pool.cpu_m, pool.memory), requested, nonzero),),
                pods_here=sum(1 for group, _ in c.state.content if group == pod.workload),
                subrequests=tuple(tuple(rank for _, rank in claim) for claim in ranks),
                count=c.count))
        spread = kinds.get(pod.workload) == "Deployment"
        request = scoring.ScoredPod((pod.cpu_m, pod.memory_bytes), preferred=tuple(pod.preferred_terms),
                                    tolerations=tuple(pod.tolerations), spread=spread)
        zones = zone_counts(pod, state) if spread else None
        best = scoring.winners(scoring.score(profile, request, shaped, zones), profile)
        return [s.candidate.key for s in best]

    return choose
