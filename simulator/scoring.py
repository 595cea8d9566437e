"""kube-scheduler's default-profile scores, for the pods the stacks run.

When several running nodes can take a pod, the scheduler adds up each score plugin's normalised 0-100
score times its weight and binds to the highest total. Among equal totals 1.34's ``selectHost`` picks one at
random; 1.35 and 1.36 pop them from a heap (``schedule_one.go`` ``nodeScoreHeap``, v1.36.3 lines 1088-1091)
whose ``Randomizer`` tie-breaker is set only for nodes an extender scored (line 1043), so the default profile
takes the tied node that comes first in its list of feasible nodes: the scheduler's node list (zones
interleaved, nodes in the order it learned of them), from where its previous search stopped, in the order
its parallel filters finished. The simulator knows none of that, and reports ties as undetermined. This module
mirrors the plugins that decide between the stacks' accelerator nodes, with the arithmetic of Kubernetes'
own code (integer division where Go divides int64s), read in k8s.io/kubernetes at v1.34.4, v1.35.4 and
v1.36.3, pkg/scheduler/:

* ``apis/config/v1/default_plugins.go``: weights TaintToleration 3, NodeAffinity 2, NodeResourcesFit 1,
  PodTopologySpread 2, InterPodAffinity 2, NodeResourcesBalancedAllocation 1, ImageLocality 1; with the
  DynamicResourceAllocation gate (on by default) DynamicResources is added, without a weight and without a
  Score extension in 1.34, with weight 2 from 1.35.
* ``framework/plugins/helper/normalize_score.go`` ``DefaultNormalizeScore``: ``100 * score / max``
  (reversed: ``100 - that``); all zero stays zero (reversed: 100).
* ``nodeaffinity/node_affinity.go``: the weights of the preferred terms a node matches, normalised.
* ``tainttoleration/taint_toleration.go``: the node's ``PreferNoSchedule`` taints that no toleration with
  effect ``PreferNoSchedule`` or empty tolerates, normalised in reverse.
* ``noderesources/least_allocated.go`` (NodeResourcesFit's default ``LeastAllocated`` strategy, cpu and
  memory weight 1 each, ``apis/config/v1/defaults.go``): per resource ``(allocatable - requested) * 100 /
  allocatable``, requested being the node's non-zero requests plus the pod's; the weighted mean.
* ``noderesources/balanced_allocation.go``: ``(1 - std) * 100`` of the cpu and memory fractions
  requested (real requests), std of two being half their difference. To 1.35 that is the score of the node
  with the pod; from 1.36 (``balancedResourceScorer``, v1.36.3 line 204, no feature gate) it is the change the
  pod makes, ``50 + (50 + with - without) / 2``: a pod that evens a node out scores towards 100, one that
  tilts it towards 50. A pod requesting neither cpu nor memory is skipped (``PreScore``: every node 0).
* ``podtopologyspread/scoring.go`` with the system default constraints (``plugin.go``: hostname maxSkew 3,
  zone maxSkew 5, ``ScheduleAnyway``), which apply to pods a Service or ReplicaSet selects, as a
  Deployment's are: per constraint ``count * log(size + 2) + maxSkew - 1``, rounded; normalised as
  ``100 * (max + min - score) / max``.
* ``dynamicresources/dynamicresources.go`` ``computeScore`` (1.35, 1.36): for each claim, ``8 - index`` of
  each ``firstAvailable`` subrequest allocated on the node, summed; normalised.

Left out, because they score every candidate node of these pods alike: InterPodAffinity (the serving pods
carry no pod (anti-)affinity, and the stack runs no pod with terms that select them), VolumeBinding (scores
only with the alpha StorageCapacityScoring gate), PodGroupPodsCount (1.36, alpha gate off), extended
resources in the resource scores (DRA pods request none; DRAExtendedResource is alpha). ImageLocality is
not computed: a node that never ran the serving image scores 0 (the image is far above the 23 MB floor only
where it exists); a node that did may score up to 100, which is kept as an uncertainty (:func:`winners`).
A node's zone is also uncertain where the pool spans zones (the autoscaler and the cloud pick it), so the
zone constraint's share of PodTopologySpread is bounded instead of assumed.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from gpu_fungibility.node_selection import NodeTaint, term_matches, toleration_tolerates

MAX_NODE_SCORE = 100
#: resource.k8s.io ``FirstAvailableDeviceRequestMaxSize``: the DRA score of the first subrequest.
FIRST_AVAILABLE_MAX = 8
HOSTNAME = "kubernetes.io/hostname"
ZONE = "topology.kubernetes.io/zone"
#: podtopologyspread/plugin.go ``systemDefaultConstraints``: (topology key, maxSkew).
SYSTEM_DEFAULT_CONSTRAINTS = ((HOSTNAME, 3), (ZONE, 5))
#: pkg/scheduler/util/pod_resources.go: what a container without requests counts as in NonZeroRequested.
DEFAULT_MILLI_CPU_REQUEST = 100
DEFAULT_MEMORY_REQUEST = 200 * 1024 * 1024

TAINT_TOLERATION, NODE_AFFINITY, RESOURCES_FIT = "TaintToleration", "NodeAffinity", "NodeResourcesFit"
TOPOLOGY_SPREAD, BALANCED, IMAGE_LOCALITY = "PodTopologySpread", "NodeResourcesBalancedAllocation", "ImageLocality"
INTER_POD_AFFINITY, DYNAMIC_RESOURCES = "InterPodAffinity", "DynamicResources"

_BASE_WEIGHTS = {TAINT_TOLERATION: 3, NODE_AFFINITY: 2, RESOURCES_FIT: 1, TOPOLOGY_SPREAD: 2,
                 INTER_POD_AFFINITY: 2, BALANCED: 1, IMAGE_LOCALITY: 1}


@dataclass(frozen=True)
class ScoringProfile:
    """The default profile's score plugins and weights at one Kubernetes minor."""

    minor: tuple[int, int]
    weights: Mapping[str, int]

    @property
    def scores_prioritized_list(self) -> bool:
        return DYNAMIC_RESOURCES in self.weights

    @property
    def balance_change(self) -> bool:
        """Whether NodeResourcesBalancedAllocation scores the change the pod makes to a node's balance (1.36+)
        rather than the balance with the pod."""
        return self.minor >= (1, 36)


def default_profile(version: str) -> ScoringProfile:
    """The default profile at ``"1.34"``, ``"1.35"``, ... (DynamicResources scores from 1.35)."""
    major, minor = (int(x) for x in version.split(".")[:2])
    weights = dict(_BASE_WEIGHTS)
    if (major, minor) >= (1, 35):
        weights[DYNAMIC_RESOURCES] = 2
    return ScoringProfile((major, minor), weights)


# ---- one plugin at a time, as Kubernetes computes it --------------------------------------------------


def default_normalize(scores: Sequence[int], reverse: bool = False) -> list[int]:
    """helper.DefaultNormalizeScore(MaxNodeScore, reverse, scores)."""
    top = max(scores, default=0)
    if top == 0:
        return [MAX_NODE_SCORE if reverse else s for s in scores]
    normalised = [MAX_NODE_SCORE * s // top for s in scores]
    return [MAX_NODE_SCORE - s for s in normalised] if reverse else normalised


def node_affinity_score(preferred: Iterable[tuple[int, Mapping[str, Any]]], labels: Mapping[str, str]) -> int:
    """NodeAffinity's raw score: the weights of the preferred terms the node's labels match."""
    return sum(weight for weight, term in preferred if term_matches(term, labels))


def taint_toleration_score(taints: Iterable[NodeTaint], tolerations: Sequence[Mapping[str, Any]]) -> int:
    """TaintToleration's raw score: PreferNoSchedule taints no PreferNoSchedule (or effect-less) toleration
    tolerates."""
    prefer = [t for t in tolerations if (t.get("effect") or "PreferNoSchedule") == "PreferNoSchedule"]
    return sum(1 for taint in taints if taint.effect == "PreferNoSchedule"
               and not any(toleration_tolerates(t, taint) for t in prefer))


def least_allocated(requested: Sequence[int], allocatable: Sequence[int], weights: Sequence[int] = (1, 1)) -> int:
    """NodeResourcesFit LeastAllocated: the weighted mean of ``(allocatable - requested) * 100 / allocatable``."""
    total = weight_sum = 0
    for req, alloc, weight in zip(requested, allocatable, weights, strict=True):
        if alloc == 0:
            continue
        total += (0 if req > alloc else (alloc - req) * MAX_NODE_SCORE // alloc) * weight
        weight_sum += weight
    return total // weight_sum if weight_sum else 0


def balanced_allocation(requested: Sequence[int], allocatable: Sequence[int],
                        before: Sequence[int] | None = None) -> int:
    """NodeResourcesBalancedAllocation: ``(1 - std) * 100`` of the fractions requested (each at most 1); with
    ``before`` (the node's requests without the pod: Kubernetes 1.36's ``balancedResourceScorer``) the change,
    ``50 + (50 + with - without) / 2``, in Go's integer division (the operand is never negative: each balance
    score is between 50 and 100)."""
    with_pod = balance(requested, allocatable)
    if before is None:
        return with_pod
    return MAX_NODE_SCORE // 2 + (MAX_NODE_SCORE // 2 + with_pod - balance(before, allocatable)) // 2


def balance(requested: Sequence[int], allocatable: Sequence[int]) -> int:
    """``balancedResourceScore``: ``(1 - std) * 100`` of the fractions requested (each at most 1)."""
    fractions = [min(req / alloc, 1.0) for req, alloc in zip(requested, allocatable, strict=True) if alloc]
    std = 0.0
    if len(fractions) == 2:
        std = abs((fractions[0] - fractions[1]) / 2)
    elif len(fractions) > 2:
        mean = sum(fractions) / len(fractions)
        std = math.sqrt(sum((f - mean) ** 2 for f in fractions) / len(fractions))
    return int((1 - std) * MAX_NODE_SCORE)


def dynamic_resources_score(allocated: Iterable[Iterable[int]]) -> int:
    """DynamicResources' raw score: per claim, ``8 - index`` of each firstAvailable subrequest allocated on the
    node, each ``request/subrequest`` once (``exactly`` requests add nothing)."""
    return sum(FIRST_AVAILABLE_MAX - index for claim in allocated for index in claim)


def topology_normalizing_weight(size: int) -> float:
    return math.log(size + 2)


def topology_spread_raw(counts: Sequence[int | None], max_skews: Sequence[int], weights: Sequence[float]) -> int:
    """One node's raw PodTopologySpread score: ``count * weight + maxSkew - 1`` per constraint whose key the
    node carries (``None``: it does not), rounded."""
    score = sum(count * weight + (skew - 1)
                for count, skew, weight in zip(counts, max_skews, weights, strict=True) if count is not None)
    return int(math.floor(score + 0.5))  # Go's math.Round: half away from zero, scores are never negative


def topology_spread_normalize(scores: Sequence[int]) -> list[int]:
    """PodTopologySpread's NormalizeScore: ``100 * (max + min - score) / max`` (all 100 when max is 0)."""
    if not scores:
        return []
    top, bottom = max(scores), min(scores)
    if top == 0:
        return [MAX_NODE_SCORE] * len(scores)
    return [MAX_NODE_SCORE * (top + bottom - s) // top for s in scores]


def topology_spread_scores(nodes: Sequence[Mapping[str, str]], pods_on_node: Sequence[int],
                           pods_in_domain: Mapping[str, Mapping[str, int]],
                           constraints: Sequence[tuple[str, int]] = SYSTEM_DEFAULT_CONSTRAINTS) -> list[int]:
    """Normalised PodTopologySpread scores of the candidate nodes (their labels, and the matching pods on
    each); ``pods_in_domain[key][value]`` counts the matching pods in each domain of the other keys.

    The size behind each constraint's weight: hostname, the candidate nodes; another key, the distinct values
    the candidates carry (nodes without the key are not ignored under system defaulting)."""
    weights = []
    for key, _ in constraints:
        size = len(nodes) if key == HOSTNAME else len({n[key] for n in nodes if key in n})
        weights.append(topology_normalizing_weight(size))
    raw = []
    for labels, own in zip(nodes, pods_on_node, strict=True):
        counts: list[int | None] = []
        for key, _ in constraints:
            if key not in labels:
                counts.append(None)
            elif key == HOSTNAME:
                counts.append(own)
            else:
                counts.append(pods_in_domain.get(key, {}).get(labels[key], 0))
        raw.append(topology_spread_raw(counts, [s for _, s in constraints], weights))
    return topology_spread_normalize(raw)


# ---- a pod against its candidate nodes -----------------------------------------------------------------


@dataclass(frozen=True)
class NodeShape:
    """One machine a node may be: what it offers and what already runs there (millicores, bytes)."""

    allocatable: tuple[int, int]
    requested: tuple[int, int]  # the requests of the pods on it, before this pod
    nonzero_requested: tuple[int, int] | None = None  # containers without requests counted at 100m / 200 MiB

    def scores(self, pod_request: tuple[int, int], balance_change: bool = False) -> tuple[int, int]:
        """(LeastAllocated, BalancedAllocation) with the pod added; ``balance_change``: the latter scores the
        change the pod makes (:attr:`ScoringProfile.balance_change`)."""
        base = self.nonzero_requested or self.requested
        least = least_allocated([base[0] + pod_request[0], base[1] + pod_request[1]], self.allocatable)
        if not any(pod_request):  # a best-effort pod: BalancedAllocation's PreScore skips it, every node 0
            return least, 0
        balanced = balanced_allocation([self.requested[0] + pod_request[0], self.requested[1] + pod_request[1]],
                                       self.allocatable, self.requested if balance_change else None)
        return least, balanced


@dataclass(frozen=True)
class Candidate:
    """A node that passed every filter, as the score plugins see it."""

    key: Any  # the caller's handle
    labels: Mapping[str, str]
    taints: tuple[NodeTaint, ...]
    shapes: tuple[NodeShape, ...]  # every machine the node may be (one when known)
    pods_here: int = 0  # pods of this workload on the node (the spread selector's)
    has_image: bool = False  # it ran the serving image before
    subrequests: tuple[tuple[int, ...], ...] = ()  # per claim: the index of each subrequest allocated here
    count: int = 1  # identical nodes it stands for


@dataclass(frozen=True)
class ScoredPod:
    """What the score plugins read from the pod."""

    request: tuple[int, int]  # millicores, bytes (the containers' sum)
    preferred: tuple[tuple[int, Mapping[str, Any]], ...] = ()
    tolerations: tuple[Mapping[str, Any], ...] = ()
    spread: bool = True  # a Service or ReplicaSet selects it: the system default constraints apply


@dataclass
class Scored:
    """One candidate's weighted plugin scores (``low``/``high`` where a score is uncertain) and total."""

    candidate: Candidate
    plugins: dict[str, tuple[int, int]] = field(default_factory=dict)  # weighted (low, high)

    @property
    def low(self) -> int:
        return sum(lo for lo, _ in self.plugins.values())

    @property
    def high(self) -> int:
        return sum(hi for _, hi in self.plugins.values())


def score(profile: ScoringProfile, pod: ScoredPod, candidates: Sequence[Candidate],
          pods_in_zone: Mapping[str, int] | None = None) -> list[Scored]:
    """Every candidate's weighted scores under ``profile``; ``pods_in_zone`` counts the workload's pods by zone."""
    results = [Scored(c) for c in candidates]
    w = profile.weights

    def put(name: str, values: Sequence[int] | Sequence[tuple[int, int]]) -> None:
        for result, value in zip(results, values, strict=True):
            lo, hi = value if isinstance(value, tuple) else (value, value)
            result.plugins[name] = (lo * w[name], hi * w[name])

    put(TAINT_TOLERATION, default_normalize(
        [taint_toleration_score(c.taints, pod.tolerations) for c in candidates], reverse=True))
    put(NODE_AFFINITY, default_normalize([node_affinity_score(pod.preferred, c.labels) for c in candidates]))
    fit = [[shape.scores(pod.request, profile.balance_change) for shape in c.shapes] for c in candidates]
    put(RESOURCES_FIT, [(min(s[0] for s in f), max(s[0] for s in f)) for f in fit])
    put(BALANCED, [(min(s[1] for s in f), max(s[1] for s in f)) for f in fit])
    put(IMAGE_LOCALITY, [(0, MAX_NODE_SCORE) if c.has_image else 0 for c in candidates])
    put(INTER_POD_AFFINITY, [0] * len(candidates))
    if pod.spread:
        expanded = [c for c in candidates for _ in range(c.count)]  # the hostname weight counts every node
        spread = topology_spread_scores([c.labels for c in expanded], [c.pods_here for c in expanded],
                                        {ZONE: dict(pods_in_zone or {})})
        first = {id(c): s for c, s in zip(expanded, spread, strict=True)}
        put(TOPOLOGY_SPREAD, [first[id(c)] for c in candidates])
    if DYNAMIC_RESOURCES in w:
        put(DYNAMIC_RESOURCES, default_normalize([dynamic_resources_score(c.subrequests) for c in candidates]))
    return results


def zone_spread_bound(pods: int, zones: int) -> int:
    """How far, at most, the zone constraint can move PodTopologySpread's weighted score of one node against
    another when the nodes' zones are not known: ``pods`` of the workload run in ``zones`` possible zones.

    Two nodes' normalised scores differ by ``100 * (s_b - s_a) / max``; a zone count differs by at most
    ``pods``, at weight ``log(zones + 2)``, and ``max`` is at least the smaller raw score plus that difference,
    itself at least the two maxSkew offsets (2 + 4)."""
    if pods <= 0 or zones <= 1:
        return 0
    swing = pods * topology_normalizing_weight(zones)
    floor = sum(skew - 1 for _, skew in SYSTEM_DEFAULT_CONSTRAINTS)
    return math.ceil(MAX_NODE_SCORE * swing / (floor + swing))


def winners(scored: Sequence[Scored], profile: ScoringProfile, zone_bound: int = 0) -> list[Scored]:
    """The candidates the scheduler may bind to: those no other candidate outscores for certain.

    Certain means by more than every uncertainty allows: a candidate's own ranges (its machine, a cached image)
    and ``zone_bound`` (:func:`zone_spread_bound`, weighted by PodTopologySpread's weight) between any two."""
    margin = zone_bound * profile.weights[TOPOLOGY_SPREAD]
    best_low = max((s.low for s in scored), default=0)
    return [s for s in scored if s.high + margin >= best_low]
