"""Benchmark the fungibility simulator: 100 to 1,000 replicas over a 200-node cluster.

Four 8-GPU pools of 50 nodes each (H100, A100 80GB, A100 40GB, L4) behind one
compute class; one workload whose claim has one ``firstAvailable``
alternative per pool (two GPUs, selected by productName), so every node
holds four replicas and 1,000 replicas overflow the 800 slots: the pending
path is measured too. On Kubernetes 1.34 (the default) the scheduler has no DRA
scoring, so with every pool running the simulation follows each possible choice
until :data:`simulator.engine.MAX_BRANCHES`, then reports ranges: that path is
measured as well (the "undetermined" column). Scenarios: every node already running (``min =
max``); every pool scaling up from zero; and the worst case for CEL, where
selectors read a whole attribute domain so no two devices share a result. Prints seconds per run
and the growth ratio from 100 to 1,000 replicas (10x replicas; linear
scaling would print 10x). Target: 1,000 replicas in under 5 s.

Then the allocator alone on hard but valid claims (one 64-GPU node, where the
32-device claim limit decides the answer): seconds and candidate steps per
claim, and the time of a search that runs to the simulator's step bound.
Target: each claim answered well under a second.
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from gpu_fungibility import catalog  # noqa: E402

from simulator import simulate  # noqa: E402
from simulator.allocator import Allocator, SearchAbandoned  # noqa: E402
from simulator.cluster import SimDevice, SimNode  # noqa: E402
from simulator.workloads import claim_spec, device_classes  # noqa: E402
from stacks.loader import parse_stack_config  # noqa: E402

POOLS = {
    "h100": ("a3-highgpu-8g", "nvidia-h100-80gb"),
    "a100-80gb": ("a2-ultragpu-8g", "nvidia-a100-80gb"),
    "a100-40gb": ("a2-highgpu-8g", "nvidia-tesla-a100"),
    "l4": ("g2-standard-96", "nvidia-l4"),
}
NODES_PER_POOL = 50
GPUS_PER_REPLICA = 2
REPLICA_COUNTS = (100, 200, 400, 600, 800, 1000)
REPEATS = 3


def config(start_full: bool):
    raw = {
        "cluster": {"cloud": "gke", "name": "bench", "location": "us-central1", "zones": ["us-central1-c"]},
        "nodePools": {
            name: {"machineType": machine, "accelerator": {"type": gpu, "count": 8},
                   "autoscaling": {"min": NODES_PER_POOL if start_full else 0, "max": NODES_PER_POOL}}
            for name, (machine, gpu) in POOLS.items()
        },
        "computeClasses": {"bench-ccc": {"pools": list(POOLS)}},
        "workloads": {"vllm": {"computeClass": "bench-ccc", "model": "m", "replicas": 1}},
    }
    return parse_stack_config(raw)


def objects(shared_results: bool = True) -> list[dict]:
    """``shared_results=False``: selectors read a whole attribute domain (which holds each GPU's
    uuid), so no two devices share a CEL result: every device is evaluated (the worst case)."""
    prefix = "" if shared_results else "'uuid' in device.attributes['gpu.nvidia.com'] && "
    alternatives = [
        {"name": name, "deviceClassName": "gpu.nvidia.com", "allocationMode": "ExactCount",
         "count": GPUS_PER_REPLICA, "selectors": [{"cel": {"expression": (
             f"{prefix}device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].productName == "
             f"'{catalog.GPUS[gpu].product_name}'")}}]}
        for name, (_, gpu) in POOLS.items()
    ]
    template = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
                "metadata": {"name": "vllm-claim", "namespace": "inference"},
                "spec": {"spec": {"devices": {"requests": [{"name": "gpu", "firstAvailable": alternatives}]}}}}
    deployment = {
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "vllm", "namespace": "inference", "labels": {"app.kubernetes.io/instance": "vllm"}},
        "spec": {"replicas": 1, "template": {"spec": {
            "nodeSelector": {"cloud.google.com/compute-class": "bench-ccc"},
            "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
            "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "vllm-claim"}],
            "containers": [{"name": "vllm", "resources": {"claims": [{"name": "gpu"}]}}],
        }}},
    }
    return [template, deployment]


def measure(cfg, objs, replicas: int, repeats: int) -> tuple[float, int, int]:
    times, scheduled, undetermined = [], 0, 0
    for _ in range(repeats):
        start = time.perf_counter()
        result = simulate(cfg, objs, replicas={"vllm": replicas})
        times.append(time.perf_counter() - start)
        scheduled = sum(r.status == "scheduled" for r in result.replicas)
        undetermined = sum(r.status == "undetermined" for r in result.replicas)
    return statistics.median(times), scheduled, undetermined


# (label, every node running at start, devices share CEL results, replica counts, repeats)
SCENARIOS = (
    ("all 200 nodes running", True, True, REPLICA_COUNTS, REPEATS),
    ("scale-up from zero", False, True, REPLICA_COUNTS, REPEATS),
    ("worst case: all 200 nodes running, every device evaluated (no shared CEL results)",
     True, False, (100, 1000), 1),
)


def _first_available(name: str, *counts: int) -> dict:
    return {"name": name, "firstAvailable": [
        {"name": f"n{c}", "deviceClassName": "gpu.nvidia.com", "count": c} for c in counts]}


#: (label, devices on the node, each claim's requests)
HARD_CLAIMS = (
    ("2 requests of firstAvailable [32, 16]", 64, [[_first_available("a", 32, 16), _first_available("b", 32, 16)]]),
    ("3 requests of firstAvailable [32, 8]", 64, [[_first_available(r, 32, 8) for r in "abc"]]),
    ("exactly 24 + firstAvailable [16, 8]", 64,
     [[{"name": "a", "exactly": {"deviceClassName": "gpu.nvidia.com", "count": 24}}, _first_available("b", 16, 8)]]),
    ("to the step bound: claim [32, 16] + claim 32 on 48", 48,
     [[_first_available("a", 32, 16)], [{"name": "b", "exactly": {"deviceClassName": "gpu.nvidia.com", "count": 32}}]]),
)


def hard_claims() -> None:
    print("\nallocator on hard claims (one node, GPUs as the NVIDIA driver publishes them):")
    print(f"  {'claim':<52}  {'seconds':>8}  {'steps':>7}  answer")
    for label, count, claims in HARD_CLAIMS:
        devices = [SimDevice.build("n", "gpu.nvidia.com", {"name": f"gpu-{i}", "attributes": {"type": {"string": "gpu"}}})
                   for i in range(count)]
        node = SimNode("n", "pool", {}, [], devices)
        specs = [claim_spec(f"c{i}", f"template c{i}", False, {"requests": r}) for i, r in enumerate(claims)]
        allocator = Allocator(device_classes([])[0])
        start = time.perf_counter()
        try:
            picks = allocator.allocate(specs, node)
            answer = "none" if picks is None else " + ".join(
                f"{sum(p.alternative is a for p in picks)} ({a.label})" for a in dict.fromkeys(p.alternative for p in picks))
        except SearchAbandoned:
            answer = "abandoned at the bound"
        print(f"  {label:<52}  {time.perf_counter() - start:>8.3f}  {allocator.steps:>7}  {answer}")


def main() -> None:
    print(f"simulator: {len(POOLS)} pools x {NODES_PER_POOL} nodes x 8 GPUs, {GPUS_PER_REPLICA} GPUs per replica")
    for label, start_full, shared, counts, repeats in SCENARIOS:
        cfg = config(start_full)
        objs = objects(shared)
        simulate(cfg, objs, replicas={"vllm": 1})  # compile the selectors once, as a plan run would
        print(f"\n{label} (median of {repeats} run{'s' if repeats > 1 else ''}):")
        print(f"  {'replicas':>8}  {'seconds':>8}  {'ms/replica':>10}  {'scheduled':>9}  {'undetermined':>12}")
        timings = {}
        for count in counts:
            seconds, scheduled, undetermined = measure(cfg, objs, count, repeats)
            timings[count] = seconds
            print(f"  {count:>8}  {seconds:>8.3f}  {1000 * seconds / count:>10.2f}  {scheduled:>9}  {undetermined:>12}")
        ratio = timings[counts[-1]] / timings[counts[0]]
        verdict = "under" if timings[1000] < 5 else "OVER"
        print(f"  growth 100 -> 1000 replicas: {ratio:.1f}x for 10x replicas; "
              f"1000 replicas over 200 nodes: {timings[1000]:.2f} s ({verdict} the 5 s target)")
    hard_claims()


if __name__ == "__main__":
    main()
