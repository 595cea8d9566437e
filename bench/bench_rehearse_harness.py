"""Benchmark: the rehearsal's control plane (rehearse/harness): start, apply + settle of a small scenario, reset.

Prints the median of each over N rounds on one control plane (start: N separate processes). The scenario:
two Nodes (one with a ResourceSlice of four devices), a DeviceClass, a ResourceClaimTemplate with two
`firstAvailable` alternatives, a Deployment of 3 replicas using it and a DaemonSet on the GPU node. Needs Go
(the first run builds the harness; its time is printed apart).

Usage: .venv/bin/python bench/bench_rehearse_harness.py [--runs N] [--minor 1.35]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from rehearse.control_plane import DEFAULT_MINOR, Harness, HarnessUnavailable, ensure_built  # noqa: E402

DRIVER = "gpu.example.com"


def scenario() -> list[dict]:
    def node(name: str, pool: str) -> dict:
        resources = {"cpu": "16", "memory": "64Gi", "pods": "110"}
        return {"apiVersion": "v1", "kind": "Node",
                "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, "pool": pool}},
                "status": {"capacity": resources, "allocatable": resources,
                           "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady"}]}}

    devices = [{"name": f"gpu-{i}", "attributes": {"model": {"string": "small"}}} for i in range(4)]
    pod_spec = {"resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "gpu"}],
                "containers": [{"name": "c", "image": "example.invalid/c:1",
                                "resources": {"requests": {"cpu": "1"}, "claims": [{"name": "gpu"}]}}]}
    return [
        node("gpu-1", "gpu"), node("cpu-1", "cpu"),
        {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": DRIVER},
         "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{DRIVER}"'}}]}},
        {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "gpu-1"},
         "spec": {"driver": DRIVER, "nodeName": "gpu-1", "devices": devices,
                  "pool": {"name": "gpu-1", "generation": 1, "resourceSliceCount": 1}}},
        {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
         "metadata": {"name": "gpu", "namespace": "bench"},
         "spec": {"spec": {"devices": {"requests": [{"name": "gpu", "firstAvailable": [
             {"name": "big", "deviceClassName": DRIVER,
              "selectors": [{"cel": {"expression": f'device.attributes["{DRIVER}"].model == "big"'}}]},
             {"name": "small", "deviceClassName": DRIVER}]}]}}}},
        {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "serve", "namespace": "bench"},
         "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "serve"}},
                  "template": {"metadata": {"labels": {"app": "serve"}}, "spec": pod_spec}}},
        {"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "plugin", "namespace": "bench"},
         "spec": {"selector": {"matchLabels": {"app": "plugin"}},
                  "template": {"metadata": {"labels": {"app": "plugin"}},
                               "spec": {"nodeSelector": {"pool": "gpu"},
                                        "containers": [{"name": "p", "image": "example.invalid/p:1"}]}}}},
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--minor", default=DEFAULT_MINOR)
    args = parser.parse_args(argv)
    try:
        began = time.perf_counter()
        binary = ensure_built(args.minor, progress=lambda line: print(line, flush=True))
        print(f"harness binary ready in {time.perf_counter() - began:.1f} s ({binary.name})")
    except HarnessUnavailable as exc:
        print(f"cannot benchmark the rehearsal: {exc}")
        return 2
    starts, settles, resets = [], [], []
    for _ in range(args.runs):
        began = time.perf_counter()
        with Harness.start(args.minor, binary=binary):
            starts.append(time.perf_counter() - began)
    with Harness.start(args.minor, binary=binary) as cluster:
        for _ in range(args.runs):
            began = time.perf_counter()
            results = cluster.apply(scenario())
            assert all(r.ok for r in results), [r for r in results if not r.ok]
            cluster.settle(timeout_s=120, quiet_ms=500)
            settles.append(time.perf_counter() - began)
            pods = cluster.list("pods")["pods"]
            assert sum(1 for p in pods if p["spec"].get("nodeName")) == 4, "3 replicas and 1 plugin pod bound"
            began = time.perf_counter()
            cluster.reset()
            resets.append(time.perf_counter() - began)
    print(f"control plane start (process start to ready): {statistics.median(starts):.2f} s "
          f"(median of {args.runs}; min {min(starts):.2f})")
    print(f"apply + settle (7 objects, 4 pods, quiet period 0.5 s): {statistics.median(settles):.2f} s "
          f"(median of {args.runs}; min {min(settles):.2f})")
    print(f"reset to empty: {statistics.median(resets):.3f} s (median of {args.runs}; min {min(resets):.3f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
