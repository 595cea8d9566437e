"""Benchmark: ``make diff STACK=dev`` against one ``make plan STACK=dev`` (target <= 2.2x).

A diff is two plans (the base in a temporary worktree, the working tree) and a comparison; this
prints the median wall time of each command and their ratio. Both run in a temporary clone of the
repository's HEAD with this interpreter's venv, so the benchmark leaves the repository's own git
worktrees and build/ alone. BASE is the clone's HEAD: the plans are the same size as any diff's.

Usage: .venv/bin/python bench/bench_diff.py [--runs N] [--stack dev]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VENV = Path(sys.prefix)


def wall(cmd: list[str], cwd: Path) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, cwd=cwd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def make(target: str, stack: str, clone: Path) -> list[str]:
    # -o: the venv is this one, already installed; never rebuild it from the clone's requirements.txt
    return ["make", "-s", "-C", str(clone), "-o", str(VENV / ".installed"), f"VENV={VENV}", target,
            f"STACK={stack}", "BASE=HEAD"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--stack", default="dev")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="bench-diff-") as tmp:
        clone = Path(tmp) / "clone"
        subprocess.run(["git", "clone", "--quiet", str(ROOT), str(clone)], check=True)
        plan_cmd, diff_cmd = make("plan", args.stack, clone), make("diff", args.stack, clone)
        wall(plan_cmd, clone)  # warm the file cache and the clone's bytecode
        wall(diff_cmd, clone)
        plans, diffs = [], []
        for _ in range(args.runs):  # interleaved, so a burst of load elsewhere hits both alike
            plans.append(wall(plan_cmd, clone))
            diffs.append(wall(diff_cmd, clone))
    plan, diff = statistics.median(plans), statistics.median(diffs)
    print(f"make plan STACK={args.stack}: {plan:.2f} s (median of {args.runs})")
    print(f"make diff STACK={args.stack}: {diff:.2f} s (median of {args.runs}; two plans and a comparison)")
    print(f"diff / plan: {diff / plan:.2f}x (target <= 2.2)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
