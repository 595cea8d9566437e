"""Benchmark ``make simulate`` at many replicas: 10,000, 100,000 and 1,000,000 (the most --replicas takes).

Each size runs ``python -m simulator --stack dev --replicas N`` in a fresh interpreter (its table printed to
/dev/null) and prints the wall time, the CPU time (a shared machine stretches the wall time) and the peak
RSS. Goal: 1,000,000 replicas in under 30 s with bounded memory. Sizes past ``--timeout`` seconds are
stopped and shown as such.

Usage: .venv/bin/python bench/bench_simulator_replicas.py [--sizes 10000,100000,1000000] [--timeout 600]
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000,1000000")
    parser.add_argument("--timeout", type=float, default=600.0)
    args = parser.parse_args()
    print("make simulate STACK=dev REPLICAS=N (goal: 1,000,000 in < 30 s, bounded memory)")
    print(f"{'replicas':>10} {'wall s':>8} {'CPU s':>8} {'peak RSS MiB':>13}")
    for replicas in (int(s) for s in args.sizes.split(",")):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        try:
            subprocess.run([sys.executable, "-m", "simulator", "--stack", "dev", "--replicas", str(replicas)],
                           cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True,
                           timeout=args.timeout)
        except subprocess.TimeoutExpired:
            print(f"{replicas:>10,} {'> ' + format(args.timeout, 'g'):>8} (stopped)")
            continue
        wall = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
        print(f"{replicas:>10,} {wall:>8.1f} {cpu:>8.1f} {max(before.ru_maxrss, after.ru_maxrss) / 1024:>13.0f}")


if __name__ == "__main__":
    main()
