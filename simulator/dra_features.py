"""Partitionable devices (shared counters) and device taints, as Kubernetes' allocator applies them from 1.36.

Both are beta and on by default from Kubernetes 1.36 and alpha, off, before
(:data:`gpu_fungibility.versions.DRA_FEATURE_GATES_ON_FROM`). With a gate off the API server drops the gated
fields, so the allocator of 1.34 and 1.35 sees neither counters nor taints; :class:`DraFeatures` says which
the allocator honours.

What the allocator does with them (k8s.io/dynamic-resource-allocation v0.36.3,
structured/internal/incubating/allocator_incubating.go, ``allocateDevice``; the search runs the ``incubating``
allocator with 1.36's default gates, whose ``SupportedFeatures`` include both):

- **Shared counters** (KEP-4815): a ResourceSlice of a pool publishes ``sharedCounters`` (counter sets, each a
  map of counters to quantities) and the pool's devices, in another slice (the API server refuses both in one),
  each ``consumesCounters`` from named sets. After the in-use check, a device is allocatable only while the
  sum of what the allocated devices of its pool (and the ones this allocation has taken) consume of every
  counter stays within the set's value (``checkAvailableCounters``). Counter sets are per pool: a pool is a
  driver and a pool name (``GatherPools`` always gathers the slices with ``sharedCounters``).
- **Device taints** (DRADeviceTaints): a device's ``taints`` with effect ``NoSchedule`` or ``NoExecute`` must
  each be tolerated by one of the request's (or subrequest's) ``tolerations``; any other effect (``None``) is
  ignored (``taintPreventsAllocation``). A toleration matches as ``resourceclaim.ToleratesTaint`` (v0.36.3,
  resourceclaim/devicetoleration.go): its effect, when set, equals the taint's; its key, when set, equals the
  taint's; operator ``Exists`` matches any value, ``Equal`` (or empty) the same value; another operator nothing.
  A device the taint keeps out is a plain "no" for that device, never an error. DeviceTaintRule objects
  (DRADeviceTaintRules) stay off in 1.36 and are not modelled.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from gpu_fungibility.dra_cel.quantity import Quantity, QuantityError
from gpu_fungibility.versions import dra_feature_enabled

#: (driver, pool name) -> counter set -> counter -> value
CounterSets = dict[tuple[str, str], dict[str, dict[str, Fraction]]]
#: (driver, the prefix of a device's uid: its slice's nodeName, or its pool name for a slice without one) -> pool
DevicePools = dict[tuple[str, str], tuple[str, str]]

#: The taint effects that keep a device from a request that does not tolerate them.
BLOCKING_EFFECTS = ("NoSchedule", "NoExecute")


def _value(raw: Any) -> Fraction:
    try:
        return Quantity.parse(str((raw or {}).get("value", "0"))).value
    except QuantityError:
        return Fraction(0)


@dataclass(frozen=True)
class DraFeatures:
    """What the allocator honours at one Kubernetes minor, and the counter sets the slices publish."""

    partitionable: bool = False
    device_taints: bool = False
    counter_sets: CounterSets = field(default_factory=dict)
    device_pools: DevicePools = field(default_factory=dict)

    @classmethod
    def at(cls, minor: str | tuple[int, int] | None, slices: Iterable[Mapping[str, Any]] = ()) -> DraFeatures:
        """The features of ``minor``'s default gates (None: every gate on), with the counters of ``slices``."""
        features = cls(dra_feature_enabled("DRAPartitionableDevices", minor),
                       dra_feature_enabled("DRADeviceTaints", minor))
        features.add(slices)
        return features

    def add(self, slices: Iterable[Mapping[str, Any]]) -> None:
        """Learn the counter sets of more slices (a node the simulation adds); none where the feature is off,
        as the API server then drops them."""
        if not self.partitionable:
            return
        for s in slices:
            spec = s.get("spec") or {}
            pool = (str(spec.get("driver", "")), str((spec.get("pool") or {}).get("name", "")))
            for counter_set in spec.get("sharedCounters") or ():
                self.counter_sets.setdefault(pool, {})[str(counter_set.get("name", ""))] = {
                    str(name): _value(counter) for name, counter in (counter_set.get("counters") or {}).items()}
            if spec.get("devices"):
                self.device_pools[(pool[0], str(spec.get("nodeName") or pool[1]))] = pool

    def consumption(self, driver: str, uid: str, entry: Mapping[str, Any]) -> dict[tuple, Fraction]:
        """What a device consumes, by (pool, counter set, counter); empty where the feature is off."""
        if not self.partitionable or not entry.get("consumesCounters"):
            return {}
        pool = self.device_pools.get((driver, uid.rsplit("/", 1)[0]), (driver, ""))
        out: dict[tuple, Fraction] = {}
        for consumption in entry.get("consumesCounters") or ():
            for name, counter in (consumption.get("counters") or {}).items():
                out[(pool, str(consumption.get("counterSet", "")), str(name))] = _value(counter)
        return out

    def limit(self, key: tuple) -> Fraction:
        """A counter's value in its set (0 where the pool publishes no such set or counter: nothing fits)."""
        pool, counter_set, counter = key
        return self.counter_sets.get(pool, {}).get(counter_set, {}).get(counter, Fraction(0))

    def taint_blocks(self, entry: Mapping[str, Any], tolerations: Iterable[Iterable[tuple[str, str]]]) -> bool:
        """Whether a device's taints keep it from a request with ``tolerations`` (``Alternative.tolerations``);
        never where the gate is off."""
        if not self.device_taints or not entry.get("taints"):
            return False
        held = [dict(t) for t in tolerations]
        return any(taint.get("effect") in BLOCKING_EFFECTS and not any(tolerates(t, taint) for t in held)
                   for taint in entry.get("taints") or ())


def tolerates(toleration: Mapping[str, Any], taint: Mapping[str, Any]) -> bool:
    """``resourceclaim.ToleratesTaint`` (k8s.io/dynamic-resource-allocation v0.36.3)."""
    effect, key = toleration.get("effect") or "", toleration.get("key") or ""
    if effect and effect != taint.get("effect"):
        return False
    if key and key != taint.get("key"):
        return False
    operator = toleration.get("operator") or "Equal"
    if operator == "Equal":
        return (toleration.get("value") or "") == (taint.get("value") or "")
    return operator == "Exists"
