"""Structured-parameters allocation of a pod's claims on one node.

The search follows Kubernetes' allocator (k8s.io/dynamic-resource-allocation/structured):

- claims, then requests, in order; each request tries its ``firstAvailable``
  alternatives in order and takes the first that can be satisfied together
  with everything after it (backtracking; on one node the first solution
  wins, as upstream's allocator returns the first it finds);
- ``ExactCount`` picks ``count`` devices, ``All`` takes every matching
  device of the node and fails if one of them is already in use or there is
  none;
- a device matches when every selector of its DeviceClass and of the
  request holds; a selector's runtime error aborts the allocation
  (:class:`dra_cel.CelEvaluationError`), as the scheduler does;
- ``matchAttribute`` constraints: all devices of the constrained requests
  have the same value of the attribute (a device without it cannot be used);
- a device is allocated at most once (a shared claim is allocated once and
  its devices serve every pod that references it), but for a request with
  ``adminAccess``: it may have a device in use and does not take it
  (``allocateDevice`` skips the in-use check for it, and the scheduler's
  allocated-device tracker skips admin-access results);
- before the search, as upstream's ``Allocate`` does, every request and
  subrequest's DeviceClass is looked up (a missing one fails the pod even
  when an earlier alternative would fit) and every ``All`` alternative's
  devices are gathered, its selectors evaluated on every device of the node
  (a CEL error there fails the pod even when an earlier alternative fits);
- for ``ExactCount``, a device in use is skipped before its selectors are
  evaluated ("checking for in use is cheap and thus gets done first",
  upstream's ``allocateOne``), and every free device's selectors are
  evaluated even where too few are free (upstream never counts first), so
  a selector's runtime error on a free device fails the pod although the
  request could never be met;
- one claim holds at most 32 devices (``AllocationResultsMaxSize``), and
  that limit prunes the search the way upstream's does (``allocateOne`` and
  ``errAllocationResultMaxSizeExceeded`` in internal/incubating/
  allocator_incubating.go, from kubernetes/kubernetes#130593, in v1.34):
  before an alternative takes a device, the claim's count plus the
  alternative's count is checked against the limit; when every alternative
  of a request would exceed it, no other choice of *devices* for the
  requests before it can help (only their counts matter), so the search
  goes straight back to the nearest earlier request that has another
  alternative to try (in the same claim: each claim has its own limit).
  Two requests of ``firstAvailable: [32 devices, 16 devices]`` thus come
  out as 16 + 16 after a handful of steps instead of trying every 32 of 64
  devices first;
- devices within one request are tried as combinations, never permutations
  (upstream's ``startLocation``);
- the search is bounded: upstream's scheduler gives up after its Filter
  timeout (``filterTimeout``, 10 s, DRASchedulerFilterTimeout, beta from
  v1.34: kubernetes/kubernetes#132033). The simulator cannot measure Go's
  seconds, so it counts steps (one per candidate tried, as upstream counts
  ``allocateOne`` calls in ``Stats.NumAllocateOneInvocations``) and stops at
  :data:`MAX_SEARCH_STEPS`, raising :class:`SearchAbandoned`: the pod's fate
  on that node is then unknown, and the simulation says so.

Selector results are cached per expression and the device values it reads
(:meth:`dra_cel.Device.fingerprint`): CEL is pure, so identical GPUs on
different nodes share one evaluation.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from gpu_fungibility.dra_cel import CelEvaluationError, Program, matches

from simulator.cluster import SimDevice, SimNode
from simulator.dra_features import DraFeatures
from simulator.workloads import MAX_DEVICES_PER_CLAIM, Alternative, ClaimSpec, Constraint

#: Candidate steps one allocation may take before the simulator stops searching (see SearchAbandoned).
MAX_SEARCH_STEPS = 200_000


class MissingDeviceClass(LookupError):
    """A request names a DeviceClass that does not exist."""


class ConstraintError(RuntimeError):
    """A device an ``All`` request must take breaks a ``matchAttribute`` constraint.

    Kubernetes' allocator returns an error there (``allocateDevice`` with ``must``: "cannot add device ...
    because a claim constraint would not be satisfied"), and the scheduler's DynamicResources Filter turns an
    allocator error into a scheduling error for the whole pod (pkg/scheduler/framework/plugins/
    dynamicresources/dynamicresources.go, v1.35.4): the pod is not scheduled, on any node.
    """

    def __init__(self, claim: str, request: str, device: str):
        super().__init__(f"claim {claim}, request {request}: cannot add device {device} because a claim "
                         "constraint would not be satisfied (an allocationMode All request takes every device)")


class SearchAbandoned(RuntimeError):
    """The search for one node ran past :data:`MAX_SEARCH_STEPS` without an answer."""

    def __init__(self, node: str, steps: int):
        super().__init__(
            f"the DRA allocator's search on {node} found no answer within {steps} steps (the simulator's bound); "
            "kube-scheduler searches for up to its 10 s filterTimeout and may or may not find one: "
            "fewer devices per claim, fewer alternatives or a tighter selector make it decidable")
        self.node = node
        self.steps = steps


@dataclass(frozen=True)
class Pick:
    claim: str  # the pod's claim entry name
    alternative: Alternative
    device: SimDevice


class _Exceeded:
    """The search result "every way on from here exceeds the claim's device limit"."""


#: upstream's errAllocationResultMaxSizeExceeded: falsy for callers that only ask "found or not"
EXCEEDED = _Exceeded()


class Allocator:
    def __init__(self, classes: Mapping[str, tuple[Program, ...]], problems: Mapping[str, str] | None = None,
                 max_steps: int = MAX_SEARCH_STEPS, later_all_quirk: bool = True,
                 features: DraFeatures | None = None):
        self.classes = classes
        #: partitionable devices and device taints, where the minor's gates turn them on (off by default)
        self.features = features or DraFeatures()
        self.problems = problems or {}  # DeviceClasses in the objects whose selectors do not compile
        self.max_steps = max_steps
        #: an ``All`` subrequest after the first goes on with the first's count and selectors (1.34, 1.35)
        self.later_all_quirk = later_all_quirk
        #: candidate steps taken by every allocation so far (upstream: Stats.NumAllocateOneInvocations)
        self.steps = 0
        self._cache: dict[tuple[str, str], bool | CelEvaluationError] = {}

    def selects(self, alternative: Alternative, device: SimDevice) -> bool:
        programs = self.classes.get(alternative.device_class)
        if programs is None:
            raise MissingDeviceClass(self.problems.get(
                alternative.device_class, f"DeviceClass {alternative.device_class} does not exist"))
        for program in (*programs, *alternative.selectors):
            key = (program.expression, device.cel.fingerprint(program) or device.uid)
            result = self._cache.get(key)
            if result is None:
                try:
                    result = matches(program, device.cel)
                except CelEvaluationError as exc:
                    result = exc
                self._cache[key] = result
            if isinstance(result, CelEvaluationError):
                raise result
            if not result:
                return False
        return True

    def allocate(self, claims: list[ClaimSpec], node: SimNode, in_use: frozenset[str] = frozenset()) -> list[Pick] | None:
        """The devices for every claim on this node, next to the devices ``in_use``, or None.

        Raises :class:`SearchAbandoned` past ``max_steps`` candidate steps.
        """
        steps = [(claim, request) for claim in claims for request in claim.requests]
        self.prepare(steps, node)
        search = _Search(self, node, steps, in_use)
        try:
            return search.picks if search.run(0) is True else None
        finally:
            self.steps += search.steps


    def prepare(self, steps: list, node: SimNode) -> None:
        """What upstream's ``Allocate`` does before its search: every class looked up, every ``All``
        alternative's selectors evaluated on every device (raises MissingDeviceClass, CelEvaluationError)."""
        for _, request in steps:
            for alternative in request.alternatives:
                if alternative.device_class not in self.classes:
                    raise MissingDeviceClass(self.problems.get(
                        alternative.device_class, f"DeviceClass {alternative.device_class} does not exist"))
        for _, request in steps:
            for alternative in request.alternatives:
                if alternative.mode == "All":
                    for device in node.devices:
                        self.selects(alternative, device)


class _Search:
    def __init__(self, allocator: Allocator, node: SimNode, steps: list, in_use: frozenset[str]):
        self.allocator = allocator
        self.node = node
        self.plan = steps
        self.in_use = in_use
        self.used: set[str] = set()
        self.per_claim: dict[int, int] = {}  # claim id -> devices picked
        self.picks: list[Pick] = []
        self.values: dict[tuple[int, int], object] = {}  # (claim id, constraint index) -> attribute value
        self.steps = 0
        #: counters consumed, by (pool, counter set, counter): the devices in use, then this search's picks
        self.consumed: dict[tuple, object] = {}
        if allocator.features.partitionable:
            for device in node.devices:
                if device.uid in in_use:
                    for key, amount in self._consumption(device).items():
                        self.consumed[key] = self.consumed.get(key, 0) + amount

    def _consumption(self, device: SimDevice) -> dict:
        return self.allocator.features.consumption(device.driver, device.uid, device.entry)

    def _step(self) -> None:
        self.steps += 1
        if self.steps > self.allocator.max_steps:
            raise SearchAbandoned(self.node.name, self.allocator.max_steps)

    def run(self, index: int) -> bool | _Exceeded:
        """True when steps ``index``.. can all be allocated; EXCEEDED when each way on breaks the limit."""
        self._step()
        if index == len(self.plan):
            return True
        claim, request = self.plan[index]
        all_exceeded = bool(request.alternatives)
        for alternative in request.alternatives:
            if alternative.mode == "All":
                outcome = self._take_all(claim, alternative, index)
            else:
                outcome = self._take_count(claim, alternative, index)
            if outcome is True:
                return True
            if outcome is not EXCEEDED:
                all_exceeded = False
        return EXCEEDED if all_exceeded else False

    def _next(self, index: int) -> bool | _Exceeded:
        """The next request; a later claim's limit is its own, so its EXCEEDED is a plain failure here."""
        outcome = self.run(index + 1)
        if outcome is EXCEEDED and index + 1 < len(self.plan) and self.plan[index + 1][0] is not self.plan[index][0]:
            return False
        return outcome

    def _exceeds(self, claim: ClaimSpec, count: int) -> bool:
        return self.per_claim.get(id(claim), 0) + count > MAX_DEVICES_PER_CLAIM

    def _free(self, device: SimDevice, alternative: Alternative | None = None) -> bool:
        if alternative is not None and alternative.admin_access:
            return True
        return device.uid not in self.in_use and device.uid not in self.used

    def _take_count(self, claim: ClaimSpec, alternative: Alternative, index: int) -> bool | _Exceeded:
        if self._exceeds(claim, alternative.count):
            return EXCEEDED
        return self._choose(claim, alternative, index, 0, alternative.count)

    def _choose(self, claim: ClaimSpec, alternative: Alternative, index: int, start: int,
                remaining: int) -> bool | _Exceeded:
        if remaining == 0:
            return self._next(index)
        devices = self.node.devices
        if not alternative.admin_access and sum(map(self._free, devices)) < remaining:
            for device in devices[start:]:  # upstream evaluates the selectors on its way to finding too few
                if self._free(device):
                    self.allocator.selects(alternative, device)
            return False
        for position in range(start, len(devices)):
            device = devices[position]
            if not self._free(device, alternative) or not self.allocator.selects(alternative, device):
                continue
            self._step()
            undo = self._add(claim, alternative, device)
            if undo is None:
                continue
            outcome = self._choose(claim, alternative, index, position + 1, remaining - 1)
            if outcome is True:
                return True
            undo()
            if outcome is EXCEEDED:
                return EXCEEDED  # other devices give the same count: no way on from this alternative
        return False

    def _take_all(self, claim: ClaimSpec, alternative: Alternative, index: int) -> bool | _Exceeded:
        """``allocationMode: All``: every matching device of the node, taken one by one as upstream does.

        Each device is taken with upstream's ``must``: one already in use fails the alternative, one that breaks a
        ``matchAttribute`` constraint is an error that aborts the allocation (:class:`ConstraintError`).
        """
        matching = self._all(alternative)
        if not matching:
            return False
        if self._exceeds(claim, len(matching)):
            return EXCEEDED
        if alternative.subrequest is not None and alternative.rank > 0 and self.allocator.later_all_quirk:
            return self._take_all_later_subrequest(claim, alternative, matching, index)
        return self._take_each(claim, alternative, matching, index)

    def _all(self, alternative: Alternative) -> list[SimDevice]:
        return [d for d in self.node.devices if self.allocator.selects(alternative, d)]

    def _take_each(self, claim: ClaimSpec, alternative: Alternative, devices: list[SimDevice],
                   index: int) -> bool | _Exceeded:
        undos = []
        for device in devices:
            self._step()
            undo = self._add(claim, alternative, device, must=True) if self._free(device, alternative) else None
            if undo is None:
                for u in reversed(undos):
                    u()
                return False
            undos.append(undo)
        outcome = self._next(index)
        if outcome is True:
            return True
        for u in reversed(undos):
            u()
        return outcome

    def _take_all_later_subrequest(self, claim: ClaimSpec, alternative: Alternative, matching: list[SimDevice],
                                   index: int) -> bool | _Exceeded:
        """An ``All`` subrequest after the first of its ``firstAvailable`` list, as Kubernetes allocates it.

        Kubernetes v1.34.4 and v1.35.4 (not v1.36.3: :func:`later_all_takes_the_first_alternative`) take the
        subrequest's first matching device, then carry on without the
        subrequest's index (``allocateOne``'s ``All`` branch recurses with ``deviceIndices{claimIndex,
        requestIndex, deviceIndex + 1}``: staging/src/k8s.io/dynamic-resource-allocation/structured/internal/
        {stable,incubating,experimental}/allocator_*.go), so the devices after the first are the *first*
        subrequest's: its own matching devices from the second on (``All``), or ``count - 1`` more devices it
        selects (``ExactCount``; none when its count is 1), recorded under its name. The simulator follows the
        scheduler, not the API's documentation, because the scheduler decides where the pod runs.
        """
        first = self.plan[index][1].alternatives[0]
        self._step()
        head = (self._add(claim, alternative, matching[0], must=True) if self._free(matching[0], alternative)
                else None)
        if head is None:
            return False
        if first.mode == "All":
            rest = self._all(first)
            if not rest:
                outcome: bool | _Exceeded = False
            elif len(rest) <= 1:
                outcome = self._next(index)
            elif self._exceeds(claim, len(rest) - 1):
                outcome = EXCEEDED
            else:
                outcome = self._take_each(claim, first, rest[1:], index)
        elif first.count <= 1:
            outcome = self._next(index)
        elif self._exceeds(claim, first.count - 1):
            outcome = EXCEEDED
        else:
            outcome = self._choose(claim, first, index, 0, first.count - 1)
        if outcome is not True:
            head()
        return outcome

    def _add(self, claim: ClaimSpec, alternative: Alternative, device: SimDevice, must: bool = False):
        """Take the device if the claim's constraints allow; returns an undo callable or None.

        ``must`` (every device of an ``All`` request): a constraint the device breaks raises ConstraintError.
        """
        consumes = self._consumption(device)
        features = self.allocator.features
        if any(self.consumed.get(key, 0) + amount > features.limit(key) for key, amount in consumes.items()):
            return None  # upstream's checkAvailableCounters: not enough of a shared counter left
        if features.taint_blocks(device.entry, alternative.tolerations):
            return None  # upstream's taintPreventsAllocation: a plain "no", even for an All request
        set_here: list[tuple[int, int]] = []
        for i, constraint in enumerate(claim.constraints):
            if not constraint.applies(alternative):
                continue
            value = _attribute(device, constraint)
            key = (id(claim), i)
            if value is None or (key in self.values and not _same(self.values[key], value)):
                self._forget(set_here)
                if must:
                    raise ConstraintError(claim.entry, alternative.label, device.name)
                return None
            if key not in self.values:
                self.values[key] = value
                set_here.append(key)
        self.per_claim[id(claim)] = self.per_claim.get(id(claim), 0) + 1
        taken = not alternative.admin_access and device.uid not in self.used
        if taken:
            self.used.add(device.uid)
        self.picks.append(Pick(claim.entry, alternative, device))
        for key, amount in consumes.items():
            self.consumed[key] = self.consumed.get(key, 0) + amount

        def undo() -> None:
            for key, amount in consumes.items():
                self.consumed[key] -= amount
            self.picks.pop()
            if taken:
                self.used.discard(device.uid)
            self.per_claim[id(claim)] -= 1
            self._forget(set_here)

        return undo

    def _forget(self, keys: list[tuple[int, int]]) -> None:
        for key in keys:
            self.values.pop(key, None)


def _same(a: object, b: object) -> bool:
    return type(a) is type(b) and a == b


def _attribute(device: SimDevice, constraint: Constraint) -> object | None:
    domain, name = constraint.attribute
    return device.cel.attributes.get(domain, {}).get(name)
