"""Benchmark ``make verify`` on large snapshots: 2,500, 5,000 and 10,000 nodes with 8 pods each.

The dev stack's good cluster (tests/verify_fixtures.py) is grown by copying its A100 80GB node: each copy
keeps its labels, its ResourceSlice, its NVIDIA DRA kubelet plugin pod and the cloud's three per-node pods,
and gets three more application pods, so the snapshot holds 8 pods per node (80,000 pods at 10,000 nodes).
Each size runs ``python -m verify --stack dev --snapshot FILE`` (the simulator's prediction included, as
``make verify`` runs it) in a fresh interpreter and prints the wall time, the snapshot's size, the
process's CPU time and peak RSS, and the growth of the CPU time from the smallest size (linear: 2.0x, then
4.0x; the CPU time, since a shared machine stretches the wall time). Goal: 10,000 nodes in under 10 s.

Usage: .venv/bin/python bench/bench_verify.py [--sizes 2500,5000,10000]
"""

from __future__ import annotations

import argparse
import copy
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests import verify_fixtures  # noqa: E402

PODS_PER_NODE = 8
POOL = "a100-80gb"


def grown(nodes: int) -> dict:
    """The good dev snapshot with ``nodes`` nodes of the A100 80GB pool (8 pods on each)."""
    snap = verify_fixtures.snapshot()
    template = verify_fixtures.nodes_of(snap, POOL)[0]
    base_name = template["metadata"]["name"]
    own = [i for i in snap["items"] if i["kind"] in ("Pod", "ResourceSlice")
           and (i.get("spec") or {}).get("nodeName") == base_name
           and not (i["kind"] == "Pod" and "vllm" in i["metadata"]["name"])]
    items = list(snap["items"])
    for index in range(1, nodes):
        name = f"{base_name[:-4]}{index:06x}"
        node = copy.deepcopy(template)
        node["metadata"]["name"] = name
        node["metadata"]["labels"]["kubernetes.io/hostname"] = name
        items.append(node)
        for obj in own:
            copied = copy.deepcopy(obj)
            copied["metadata"]["name"] = f"{obj['metadata']['name']}-{index:06x}"
            copied["spec"]["nodeName"] = name
            items.append(copied)
        extra = PODS_PER_NODE - sum(1 for o in own if o["kind"] == "Pod")
        items += [verify_fixtures.pod("apps", f"app-{index:06x}-{n}", name, {"app": "web"}, ("ReplicaSet", "web-5c6d"),
                                      {"cpu": "100m", "memory": "128Mi"}) for n in range(extra)]
    return {**snap, "items": items}


def run(path: Path, out: Path) -> tuple[float, float, float]:
    """(wall seconds, CPU seconds, peak RSS in MiB) of one ``python -m verify`` on ``path``."""
    start = time.perf_counter()
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run([sys.executable, "-m", "verify", "--stack", "dev", "--snapshot", str(path),
                           "--out", str(out)], cwd=ROOT, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    if done.returncode not in (0, 1):
        raise SystemExit(f"verify failed ({done.returncode}): {done.stderr.strip()}")
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    return seconds, cpu, max(before.ru_maxrss, after.ru_maxrss) / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="2500,5000,10000")
    sizes = [int(s) for s in parser.parse_args().sizes.split(",")]
    print(f"make verify on a snapshot of N nodes, {PODS_PER_NODE} pods each (goal: 10,000 nodes < 10 s)")
    print(f"{'nodes':>7} {'pods':>7} {'MiB':>6} {'wall s':>8} {'CPU s':>7} {'growth':>7} {'peak RSS MiB':>13}")
    first = None
    with tempfile.TemporaryDirectory(prefix="bench-verify-") as folder:
        for nodes in sizes:
            snap = grown(nodes)
            path = Path(folder) / f"snapshot-{nodes}.json"
            path.write_text(json.dumps(snap))
            pods = sum(1 for i in snap["items"] if i["kind"] == "Pod")
            seconds, cpu, peak = run(path, Path(folder) / "build")
            first = first or cpu
            print(f"{nodes:>7,} {pods:>7,} {path.stat().st_size / 2**20:>6.0f} {seconds:>8.2f} {cpu:>7.2f} "
                  f"{cpu / first:>6.1f}x {peak:>13.0f}")
            path.unlink()


if __name__ == "__main__":
    main()
