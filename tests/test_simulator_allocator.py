"""The allocator's search is bounded the way Kubernetes' is: hard but valid claims are answered in few steps.

Each case asserts the answer and the work the search did (candidate steps,
upstream's ``NumAllocateOneInvocations``), never wall time: timings are printed
by ``bench/bench_simulator.py``. Without the device-limit pruning every case
below runs past the simulator's step bound (the 32 + 16 case tries every
32 of 64 devices before its 16-device alternative).
"""

from __future__ import annotations

import copy
import functools

import pytest

from simulator.allocator import MAX_SEARCH_STEPS, Allocator, SearchAbandoned
from simulator.cluster import SimDevice, SimNode
from simulator.workloads import MAX_DEVICES_PER_CLAIM, ClaimSpec, claim_spec, device_classes

#: Far below the bound and far above what the pruned searches below need (tens to a few hundred steps).
FEW_STEPS = 2_000


def gpu_node(devices: int, name: str = "node-0") -> SimNode:
    entries = [{"name": f"gpu-{i}", "attributes": {"type": {"string": "gpu"}, "index": {"int": i}}}
               for i in range(devices)]
    return SimNode(name, "pool", {}, [], [SimDevice.build(name, "gpu.nvidia.com", e) for e in entries])


def first_available(name: str, *counts: int) -> dict:
    return {"name": name, "firstAvailable": [
        {"name": f"n{count}", "deviceClassName": "gpu.nvidia.com", "count": count} for count in counts]}


def exactly(name: str, count: int) -> dict:
    return {"name": name, "exactly": {"deviceClassName": "gpu.nvidia.com", "count": count}}


def claim(entry: str, *requests: dict) -> ClaimSpec:
    return claim_spec(entry, f"template default/{entry}", False, {"requests": list(requests)})


def allocate(claims: list[ClaimSpec], node: SimNode) -> tuple[dict[str, int] | None, int]:
    """(devices per request/subrequest label, steps taken)."""
    allocator = Allocator(device_classes([])[0])
    picks = allocator.allocate(claims, node)
    if picks is None:
        return None, allocator.steps
    counts: dict[str, int] = {}
    for pick in picks:
        label = f"{pick.claim}:{pick.alternative.label}"
        counts[label] = counts.get(label, 0) + 1
    return counts, allocator.steps


def test_two_requests_of_32_or_16_devices_get_16_each_at_once():
    """Kubernetes answers this claim with 16 + 16: 32 + anything breaks the 32-device claim limit."""
    counts, steps = allocate([claim("c", first_available("a", 32, 16), first_available("b", 32, 16))],
                             gpu_node(64))
    assert counts == {"c:a/n16": 16, "c:b/n16": 16}
    assert steps < FEW_STEPS


def test_three_requests_fall_back_together_until_they_fit_the_limit():
    counts, steps = allocate([claim("c", *(first_available(r, 32, 8) for r in "abc"))], gpu_node(64))
    assert counts == {"c:a/n8": 8, "c:b/n8": 8, "c:c/n8": 8}
    assert steps < FEW_STEPS


def test_an_exact_request_leaves_room_only_for_the_smaller_alternative():
    counts, steps = allocate([claim("c", exactly("base", 24), first_available("extra", 16, 8))], gpu_node(64))
    assert counts == {"c:base": 24, "c:extra/n8": 8}
    assert steps < FEW_STEPS


def test_the_limit_is_per_claim():
    """Two claims of a pod each get their own 32 devices: the pruning never crosses a claim."""
    counts, steps = allocate([claim("first", first_available("a", 32, 16)),
                              claim("second", first_available("a", 32, 16))], gpu_node(64))
    assert counts == {"first:a/n32": 32, "second:a/n32": 32}
    assert steps < FEW_STEPS


def test_the_first_solution_is_unchanged_where_the_limit_is_not_reached():
    counts, _ = allocate([claim("c", first_available("a", 8, 4), first_available("b", 8, 4))], gpu_node(12))
    assert counts == {"c:a/n8": 8, "c:b/n4": 4}


def test_an_all_request_past_the_limit_fails_on_that_node():
    all_devices = {"name": "all", "exactly": {"deviceClassName": "gpu.nvidia.com", "allocationMode": "All"}}
    counts, steps = allocate([claim("c", all_devices)], gpu_node(MAX_DEVICES_PER_CLAIM + 1))
    assert counts is None and steps < FEW_STEPS
    counts, _ = allocate([claim("c", all_devices)], gpu_node(MAX_DEVICES_PER_CLAIM))
    assert counts == {"c:all": MAX_DEVICES_PER_CLAIM}


def test_a_search_kubernetes_cannot_finish_either_is_abandoned_at_the_bound():
    """32 of 48 devices for the first claim leave 16 for a second claim of 32: what fails there is the
    node's device count, not the claim limit, so (as upstream) nothing prunes the C(48, 32) ways to pick
    the first claim's devices; kube-scheduler gives up at its Filter timeout, the simulator at its bound."""
    claims = [claim("first", first_available("a", 32, 16)), claim("second", exactly("b", 32))]
    with pytest.raises(SearchAbandoned, match="node-0 found no answer within") as caught:
        Allocator(device_classes([])[0], max_steps=5_000).allocate(claims, gpu_node(48))
    assert caught.value.steps == 5_000
    assert MAX_SEARCH_STEPS >= 100 * FEW_STEPS


def test_an_abandoned_search_leaves_the_replica_pending_with_the_reason(monkeypatch):
    """In a simulation, a search past the bound is reported, never taken for "no devices here"."""
    from simulator import PENDING, engine, simulate
    from stacks.loader import parse_stack_config
    from tests.test_simulator import GKE_DEV, gpu_objects

    monkeypatch.setattr(engine, "Allocator", functools.partial(Allocator, max_steps=1))
    (only,) = simulate(parse_stack_config(copy.deepcopy(GKE_DEV)), gpu_objects()).of("vllm-gpu")
    assert only.status == PENDING
    assert "found no answer within 1 steps" in only.reason and "filterTimeout" in only.reason
