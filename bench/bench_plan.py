"""Benchmark: the offline plan against the import floor, and its growth with stack size.

Prints, for one run on this machine:
- the import floor: a fresh interpreter importing exactly the Pulumi SDK
  submodules the dev stack's plan imports (measured, not listed by hand);
- ``make plan STACK=dev`` (warm venv), median of several runs, and plan/floor
  (target <= 2.0);
- a synthetic GKE stack with 100 node pools and 100 workloads, and its time
  over the dev stack's (target <= 3.0).

Usage: .venv/bin/python bench/bench_plan.py [--runs N]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
PY = sys.executable
SDK_PREFIXES = ("pulumi_gcp.", "pulumi_kubernetes.", "pulumi_aws.")


def wall(cmd: list[str], env: dict | None = None) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, cwd=ROOT, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    return time.perf_counter() - start


def median(cmd: list[str], runs: int) -> float:
    wall(cmd)  # warm the file cache
    return statistics.median(wall(cmd) for _ in range(runs))


def sdk_modules_used_by_plan(stack: str) -> list[str]:
    """The SDK packages a plan of ``stack`` imports (their deepest package level)."""
    probe = (
        "import sys, json, contextlib, io\n"
        "from offline_plan.run import run_stack_file\n"
        f"run_stack_file({stack!r})\n"
        f"mods = sorted(m for m in sys.modules if m.startswith({SDK_PREFIXES!r}) and '._' not in m)\n"
        "print(json.dumps(mods))\n"
    )
    out = subprocess.run([PY, "-c", probe], cwd=ROOT, check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def synthetic_stack(pools: int, workloads: int) -> dict:
    node_pools = {
        f"l4-{i:03d}": {"machineType": "g2-standard-8", "accelerator": {"type": "nvidia-l4", "count": 1},
                        "autoscaling": {"min": 0, "max": 2}, "zones": ["us-central1-a"]}
        for i in range(pools)
    }
    names = list(node_pools)
    classes = {f"class-{i // 8:02d}": {"pools": names[i:i + 8]} for i in range(0, pools, 8)}
    class_names = list(classes)
    wls = {
        f"wl-{i:03d}": {"computeClass": class_names[i % len(class_names)], "model": "google/gemma-3-1b-it",
                        "maxModelLen": 8192}
        for i in range(workloads)
    }
    return {"config": {
        "gcp:project": "demo-project",
        "gpu-fungibility:cluster": {"cloud": "gke", "name": "synthetic", "location": "us-central1",
                                    "zones": ["us-central1-a"]},
        "gpu-fungibility:nodePools": node_pools,
        "gpu-fungibility:computeClasses": classes,
        "gpu-fungibility:workloads": wls,
    }}


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()

    modules = sdk_modules_used_by_plan("dev")
    floor_code = "import pulumi\n" + "".join(f"import {m}\n" for m in modules)
    floor = median([PY, "-c", floor_code], args.runs)

    plan_dev = median(["make", "--no-print-directory", "plan", "STACK=dev"], args.runs)

    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "Pulumi.synthetic.yaml").write_text(yaml.safe_dump(synthetic_stack(100, 100)))
        base = [PY, "-m", "offline_plan", "--out", str(Path(tmp) / "build")]
        dev_cli = median([*base, "--stack", "dev"], args.runs)
        synthetic = median([*base, "--stack", "synthetic", "--stack-dir", tmp], max(3, args.runs // 2))
        steps = len(json.loads((Path(tmp) / "build" / "synthetic" / "plan.json").read_text())["steps"])

    print(f"cpus: {os.cpu_count()}  python: {sys.version.split()[0]}  runs: {args.runs} (median)")
    print(f"import floor ({len(modules)} SDK modules the dev plan imports): {floor:6.2f} s")
    print(f"make plan STACK=dev:                                {plan_dev:6.2f} s")
    print(f"plan / floor:                                       {plan_dev / floor:6.2f}   (target <= 2.0)")
    print(f"offline_plan dev (same CLI as synthetic):           {dev_cli:6.2f} s")
    print(f"synthetic 100 pools + 100 workloads ({steps} resources): {synthetic:6.2f} s")
    print(f"synthetic / dev:                                    {synthetic / dev_cli:6.2f}   (target <= 3.0)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
