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
  its devices serve every pod that references it);
- one claim holds at most 32 devices (``AllocationResultsMaxSize``): an
  ``All`` request that would take more fails on that node, as upstream's
  ``errAllocationResultMaxSizeExceeded`` does.

Selector results are cached per expression and the device values it reads
(:meth:`dra_cel.Device.fingerprint`): CEL is pure, so identical GPUs on
different nodes share one evaluation.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from gpu_fungibility.dra_cel import CelEvaluationError, Program, matches

from simulator.cluster import SimDevice, SimNode
from simulator.workloads import MAX_DEVICES_PER_CLAIM, Alternative, ClaimSpec, Constraint


class MissingDeviceClass(LookupError):
    """A request names a DeviceClass that does not exist."""


@dataclass(frozen=True)
class Pick:
    claim: str  # the pod's claim entry name
    alternative: Alternative
    device: SimDevice


class Allocator:
    def __init__(self, classes: Mapping[str, tuple[Program, ...]], problems: Mapping[str, str] | None = None):
        self.classes = classes
        self.problems = problems or {}  # DeviceClasses in the objects whose selectors do not compile
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
        """The devices for every claim on this node, next to the devices ``in_use``, or None."""
        steps = [(claim, request) for claim in claims for request in claim.requests]
        search = _Search(self, node, steps, in_use)
        return search.picks if search.run(0) else None


class _Search:
    def __init__(self, allocator: Allocator, node: SimNode, steps: list, in_use: frozenset[str]):
        self.allocator = allocator
        self.node = node
        self.steps = steps
        self.in_use = in_use
        self.used: set[str] = set()
        self.per_claim: dict[int, int] = {}  # claim id -> devices picked
        self.picks: list[Pick] = []
        self.values: dict[tuple[int, int], object] = {}  # (claim id, constraint index) -> attribute value

    def run(self, index: int) -> bool:
        if index == len(self.steps):
            return True
        claim, request = self.steps[index]
        for alternative in request.alternatives:
            if alternative.mode == "All":
                if self._take_all(claim, alternative, index):
                    return True
            elif self._choose(claim, alternative, index, 0, alternative.count):
                return True
        return False

    def _free(self, device: SimDevice) -> bool:
        return device.uid not in self.in_use and device.uid not in self.used

    def _choose(self, claim: ClaimSpec, alternative: Alternative, index: int, start: int, remaining: int) -> bool:
        if remaining == 0:
            return self.run(index + 1)
        devices = self.node.devices
        if len(devices) - len(self.in_use) - len(self.used) < remaining:
            return False
        for position in range(start, len(devices)):
            device = devices[position]
            if not self._free(device) or not self.allocator.selects(alternative, device):
                continue
            undo = self._add(claim, alternative, device)
            if undo is None:
                continue
            if self._choose(claim, alternative, index, position + 1, remaining - 1):
                return True
            undo()
        return False

    def _take_all(self, claim: ClaimSpec, alternative: Alternative, index: int) -> bool:
        matching = [d for d in self.node.devices if self.allocator.selects(alternative, d)]
        if not matching or not all(self._free(d) for d in matching):
            return False
        undos = []
        for device in matching:
            undo = self._add(claim, alternative, device)
            if undo is None:
                for u in reversed(undos):
                    u()
                return False
            undos.append(undo)
        if self.run(index + 1):
            return True
        for u in reversed(undos):
            u()
        return False

    def _add(self, claim: ClaimSpec, alternative: Alternative, device: SimDevice):
        """Take the device if the claim's constraints allow; returns an undo callable or None."""
        set_here: list[tuple[int, int]] = []
        for i, constraint in enumerate(claim.constraints):
            if not constraint.applies(alternative):
                continue
            value = _attribute(device, constraint)
            key = (id(claim), i)
            if value is None:
                self._forget(set_here)
                return None
            if key not in self.values:
                self.values[key] = value
                set_here.append(key)
            elif not _same(self.values[key], value):
                self._forget(set_here)
                return None
        if self.per_claim.get(id(claim), 0) >= MAX_DEVICES_PER_CLAIM:
            self._forget(set_here)
            return None
        self.per_claim[id(claim)] = self.per_claim.get(id(claim), 0) + 1
        self.used.add(device.uid)
        self.picks.append(Pick(claim.entry, alternative, device))

        def undo() -> None:
            self.picks.pop()
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
