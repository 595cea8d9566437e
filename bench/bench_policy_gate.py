"""Benchmark: the policy gate over previews of 10,000 and 100,000 resources (goal: < 10 s and < 60 s).

The previews are grown from a shipped stack's offline plan (``make plan STACK=dev`` -> build/dev/plan.json;
made here when missing) by bench/synthetic_plan.py: the cluster once, its application namespaces repeated.
Each size runs ``python -m policy_gate``'s code in a fresh interpreter and prints the wall time, when the
plan was read (read: the file streamed and encoded, resource policies running meanwhile), when the last
resource policy answered (analyze, counted from the start), how long the stack policies took (stack, from
when ``AnalyzeStack`` was sent; it overlaps analyze for a large stack), the pack processes used, the peak memory of the gate's process and of its largest pack process, and the
verdict next to the original plan's (exit code, and which policies fail at which level), which must match.
Figures depend on the machine and its load (printed): this prints them, it asserts nothing but the verdict.

Usage: .venv/bin/python bench/bench_policy_gate.py [--sizes 10000,100000] [--stack dev] [--jobs N] [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.synthetic_plan import grow  # noqa: E402

#: Runs in a fresh interpreter: the gate over one file, its figures as one JSON line.
_ONE_RUN = """
import json, resource, sys, time
from policy_gate.gate import run_gate
began = time.perf_counter()
result = run_gate(sys.argv[1], jobs=int(sys.argv[2]) or None)
wall = time.perf_counter() - began
print(json.dumps({
    "wall": wall, "timings": result.timings, "processes": result.processes, "resources": result.resources_checked,
    "exit": result.exit_code, "failing": sorted({(v.level, v.policy) for v in result.violations}),
    "violations": len(result.violations),
    "gate_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    "pack_rss_mib": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024,
}))
"""


def run(plan: Path, jobs: int) -> dict:
    done = subprocess.run([sys.executable, "-c", _ONE_RUN, str(plan), str(jobs)], cwd=ROOT, capture_output=True,
                          text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"the gate failed over {plan}:\n{done.stderr.strip()}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def verdict(figures: dict) -> tuple:
    return figures["exit"], tuple(map(tuple, figures["failing"]))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000", help="comma-separated resource counts")
    parser.add_argument("--stack", default="dev")
    parser.add_argument("--jobs", type=int, default=0, help="pack processes at most (default: the gate's)")
    parser.add_argument("--keep", metavar="DIR", help="write the grown previews here instead of a temporary folder")
    args = parser.parse_args(argv)
    source = ROOT / "build" / args.stack / "plan.json"
    if not source.is_file():
        print(f"{source} missing: planning {args.stack} offline first", flush=True)
        subprocess.run([sys.executable, "-m", "offline_plan", "--stack", args.stack, "--no-policy"], cwd=ROOT,
                       check=True, stdout=subprocess.DEVNULL)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"policy gate over previews grown from {source.relative_to(ROOT)} ({os.cpu_count()} CPUs, load {load:.1f})")
    original = run(source, args.jobs)
    print(f"  original plan: {original['resources']} resources, {original['wall']:.1f} s, verdict {verdict(original)}")
    print(f"  {'resources':>9}  {'file':>8}  {'wall':>7}  {'read':>6}  {'analyze':>7}  {'stack':>6}  {'procs':>5}  "
          f"{'gate RSS':>8}  {'pack RSS':>8}  verdict")
    same = True
    with tempfile.TemporaryDirectory(prefix="bench-policy-gate-") as scratch:
        folder = Path(args.keep) if args.keep else Path(scratch)
        folder.mkdir(parents=True, exist_ok=True)
        for size in (int(s) for s in args.sizes.split(",")):
            preview = folder / f"preview-{args.stack}-{size}.json"
            file_size = grow(source, size, preview)
            figures = run(preview, args.jobs)
            timings = figures["timings"]
            matches = verdict(figures) == verdict(original)
            same &= matches
            print(f"  {figures['resources']:>9}  {file_size / 2**20:>6.0f}MB  {figures['wall']:>6.1f}s  "
                  f"{timings.get('read', 0):>5.1f}s  {timings.get('analyze', 0):>6.1f}s  {timings.get('stack', 0):>5.1f}s  "
                  f"{figures['processes']:>5}  {figures['gate_rss_mib']:>6.0f}MB  {figures['pack_rss_mib']:>6.0f}MB  "
                  f"{'same' if matches else 'DIFFERENT: ' + str(verdict(figures))}", flush=True)
            if not args.keep:
                preview.unlink()
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
