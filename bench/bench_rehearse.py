"""Benchmark: a warm ``make rehearse STACK=dev`` end to end (goal: under 60 s).

Warm means the control plane for the stack's Kubernetes minor is already built (the first run builds it;
that run is reported separately and not counted). Each run is the whole command: planning the stack,
starting the control plane, every phase, the report. Prints each run's wall time, the median, and the
phases' own times from the last run's JSON. Needs Go (the rehearsal does); without it, says so and exits 2.

Usage: .venv/bin/python bench/bench_rehearse.py [--runs N] [--stack dev]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GOAL_SECONDS = 60.0


def run_once(stack: str) -> tuple[float, int, dict | None]:
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "rehearse", "--stack", stack, "--json"], cwd=ROOT,
                          capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    try:
        document = json.loads(done.stdout)
    except ValueError:
        document = None
        sys.stderr.write(done.stderr[-2000:])
    return elapsed, done.returncode, document


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--stack", default="dev")
    args = parser.parse_args(argv)
    first, code, _ = run_once(args.stack)  # builds the control plane when it is not built yet
    if code == 2:
        print(f"make rehearse STACK={args.stack} cannot run here (exit 2): see its message above")
        return 2
    print(f"first run (builds the control plane if needed): {first:.1f} s, exit {code}")
    walls, last = [], None
    for i in range(args.runs):
        elapsed, code, document = run_once(args.stack)
        walls.append(elapsed)
        last = document or last
        print(f"warm run {i + 1}: {elapsed:.1f} s, exit {code}")
    median = statistics.median(walls)
    print(f"warm make rehearse STACK={args.stack}: median {median:.1f} s over {len(walls)} runs "
          f"(goal < {GOAL_SECONDS:.0f} s: {'met' if median < GOAL_SECONDS else 'missed'})")
    if last:
        phases = ", ".join(f"{k} {v:.1f} s" for k, v in last.get("timingsSeconds", {}).items())
        print(f"phases of the last run: {phases}; control plane {last.get('controlPlane')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
