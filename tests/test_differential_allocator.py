"""Allocator behaviour the differential run found in Kubernetes v1.35.4 (and v1.34.4), held by the simulator.

1. An ``allocationMode: All`` subrequest after the first one of a ``firstAvailable`` list takes its own first
   device, then continues with the *first* subrequest (upstream's ``allocateOne`` recurses without the
   subrequest index): the rest of the devices are the first subrequest's, under its name, or none when its count
   is 1 (tests/fixtures/differential/seed20260-s0099.json is the real scheduler's answer).
2. A device an ``All`` request must take that breaks a ``matchAttribute`` constraint is an allocator error,
   which the scheduler's Filter makes a scheduling error for the pod (``allocateDevice(..., must=true)``).
"""

import pytest
from gpu_fungibility import devices
from gpu_fungibility.versions import later_all_takes_the_first_alternative

from simulator.allocator import Allocator, ConstraintError
from simulator.cluster import SimDevice, SimNode
from simulator.workloads import claim_spec, device_classes

GPU, TPU = "gpu.nvidia.com", "tpu.google.com"


def node(accelerator: str, count: int, mig: list[str] | None = None) -> SimNode:
    driver, entries = devices.published("c", "n0", accelerator, count, mig)
    return SimNode("n0", "p", {}, [], [SimDevice.build("n0", driver, e) for e in entries])


def sub(name: str, device_class: str = GPU, count: int | None = None, selector: str | None = None) -> dict:
    body = {"name": name, "deviceClassName": device_class}
    body.update({"count": count} if count else {"allocationMode": "All"})
    if selector:
        body["selectors"] = [{"cel": {"expression": selector}}]
    return body


def picks(node: SimNode, requests: list[dict], constraints: list[dict] | None = None, minor: str = "1.35"):
    spec = {"requests": requests, **({"constraints": constraints} if constraints else {})}
    allocator = Allocator(device_classes([])[0], later_all_quirk=later_all_takes_the_first_alternative(minor))
    found = allocator.allocate([claim_spec("c0", "template d/t", False, spec)], node)
    return None if found is None else [(p.alternative.label, p.device.name) for p in found]


NONE_MATCHES = "device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('1000Gi')) >= 0"


def test_a_later_all_subrequest_continues_with_the_first_subrequests_count():
    a10g = node("nvidia-a10g", 8)
    # the first alternative wants 8 GPUs no A10G matches: after s1's first device, 7 more of those are needed
    assert picks(a10g, [{"name": "r0", "firstAvailable": [sub("s0", count=8, selector=NONE_MATCHES), sub("s1")]}]) \
        is None
    # with a first alternative of one device, s1 ends after its first device
    assert picks(a10g, [{"name": "r0", "firstAvailable": [sub("s0", count=1, selector=NONE_MATCHES), sub("s1")]}]) \
        == [("r0/s1", "gpu-0")]
    # the first alternative's own devices fill the rest, under its name
    assert picks(a10g, [{"name": "r0", "firstAvailable": [sub("s0", TPU, count=1), sub("s1")]}]) == [("r0/s1", "gpu-0")]


def test_a_later_all_subrequest_after_an_all_subrequest_takes_the_firsts_devices_from_the_second_on():
    l4 = node("nvidia-l4", 4)
    found = picks(l4, [{"name": "r0", "firstAvailable": [
        sub("s0", selector="device.attributes['gpu.nvidia.com'].productName == 'none'"), sub("s1")]}])
    assert found is None  # s0 matches no device: no way on
    found = picks(l4, [{"name": "r0", "firstAvailable": [sub("s0", TPU), sub("s1")]}])
    assert found is None  # the same with another driver's class


def test_the_first_all_subrequest_and_exact_requests_are_unchanged():
    l4 = node("nvidia-l4", 4)
    assert picks(l4, [{"name": "r0", "firstAvailable": [sub("s0"), sub("s1", count=1)]}]) == [
        ("r0/s0", f"gpu-{i}") for i in range(4)]
    assert picks(l4, [{"name": "r0", "exactly": {"deviceClassName": GPU, "allocationMode": "All"}}]) == [
        ("r0", f"gpu-{i}") for i in range(4)]
    assert picks(l4, [{"name": "r0", "firstAvailable": [sub("s0", TPU, count=1), sub("s1", count=2)]}]) == [
        ("r0/s1", "gpu-0"), ("r0/s1", "gpu-1")]


def test_an_all_device_that_breaks_a_constraint_is_an_error_not_a_miss():
    mig = node("nvidia-a100-80gb", 1, ["3g.40gb", "4g.40gb"])  # two slices of different profiles
    same_profile = [{"matchAttribute": "gpu.nvidia.com/profile"}]
    with pytest.raises(ConstraintError, match="cannot add device gpu-0-mig-"):
        picks(mig, [{"name": "r0", "exactly": {"deviceClassName": "mig.nvidia.com", "allocationMode": "All"}}],
              same_profile)
    # an exact count only skips devices that break it
    assert picks(mig, [{"name": "r0", "exactly": {"deviceClassName": "mig.nvidia.com", "count": 2}}],
                 same_profile) is None


def test_a_second_tpu_pool_of_a_compute_class_cannot_be_used_by_its_claim():
    """What it means for a TPU compute class of two pools (each alternative ``All`` chips of one generation, as
    the claims library writes them): on a node of the second pool, the scheduler takes the first chip for the
    second alternative, then looks for the first alternative's chips from the second on, and there are none."""
    from gpu_fungibility import device_selectors

    def tpu(name: str, accelerator: str) -> dict:
        return {"name": name, "deviceClassName": TPU, "allocationMode": "All",
                "selectors": [{"cel": {"expression": device_selectors.accelerator_selector(accelerator)}}]}

    request = {"name": "tpu", "firstAvailable": [tpu("v6e", "tpu-v6e-slice"), tpu("v5e", "tpu-v5-lite-podslice")]}
    assert picks(node("tpu-v6e-slice", 4), [request]) == [("tpu/v6e", f"accel{i}") for i in range(4)]
    assert picks(node("tpu-v5-lite-podslice", 4), [request]) is None
    assert picks(node("tpu-v5-lite-podslice", 1), [request]) is None
    # Kubernetes 1.36 passes the subrequest on (k8s.io/dynamic-resource-allocation v0.36.3): the second pool serves
    for minor in ("1.36", "v1.36.3", "1.37"):
        assert picks(node("tpu-v5-lite-podslice", 4), [request], minor=minor) == [
            ("tpu/v5e", f"accel{i}") for i in range(4)]


@pytest.mark.parametrize(("minor", "quirk"), [("1.34", True), ("v1.35.4", True), ("1.36", False), ((1, 37), False),
                                              (None, True)])
def test_the_later_all_quirk_belongs_to_1_34_and_1_35(minor, quirk):
    assert later_all_takes_the_first_alternative(minor) is quirk


def test_on_1_36_a_later_all_subrequest_takes_its_own_devices():
    a10g = node("nvidia-a10g", 8)
    assert picks(a10g, [{"name": "r0", "firstAvailable": [sub("s0", count=8, selector=NONE_MATCHES), sub("s1")]}],
                 minor="1.36") == [("r0/s1", f"gpu-{i}") for i in range(8)]


# ---- what the stack says about it ---------------------------------------------------------------------


def _two_tpu_pools(version: str) -> dict:
    import copy

    from tests.test_config import GKE

    raw = copy.deepcopy(GKE)
    raw["cluster"]["kubernetesVersion"] = version
    raw["cluster"]["zones"] = ["us-central1-a", "us-central1-b"]
    raw["nodePools"] = {
        "v6e": {"machineType": "ct6e-standard-1t", "accelerator": {"type": "tpu-v6e-slice"},
                "autoscaling": {"min": 1, "max": 1}, "zones": ["us-central1-b"]},
        "v5e": {"machineType": "ct5lp-hightpu-1t", "accelerator": {"type": "tpu-v5-lite-podslice"},
                "autoscaling": {"min": 1, "max": 1}, "zones": ["us-central1-a"]},
    }
    raw["computeClasses"] = {"tpus": {"pools": ["v6e", "v5e"]}}
    raw["workloads"] = {"vllm": {"computeClass": "tpus", "model": "google/gemma-4-31B-it"}}
    return raw


@pytest.mark.parametrize(("version", "warned"), [("1.35", True), ("1.36", False)])
def test_a_tpu_pool_after_the_first_of_a_compute_class_is_warned_about_where_kubernetes_never_uses_it(
        version, warned):
    from stacks.loader import parse_stack_config
    from stacks.rules import config_warnings

    found = [w for w in config_warnings(parse_stack_config(_two_tpu_pools(version)))
             if w.startswith("computeClasses.tpus.pools[1]")]
    assert bool(found) is warned
    if warned:
        assert "(v5e) is a TPU pool after the first: on Kubernetes 1.35" in found[0]
