"""Benchmark: the differential run's speed, in scenarios per second.

Prints the simulator's own rate (no Go needed) and, when the rehearsal harness can run (Go >= 1.24), the rate of
the whole run: generation, the simulator, and kube-scheduler placing every scenario on a real control plane.

Usage: .venv/bin/python bench/bench_differential.py [--seed N] [--count 500] [--minor 1.35] [--simulator-only]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from rehearse import differential, scenarios  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=differential.DEFAULT_SEED)
    parser.add_argument("--count", type=int, default=differential.DEFAULT_COUNT)
    parser.add_argument("--minor", default=differential.DEFAULT_MINOR)
    parser.add_argument("--simulator-only", action="store_true")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    documents = [sc.document() for sc in scenarios.generate(args.seed, args.count)]
    generated = time.perf_counter() - started
    started = time.perf_counter()
    differential.simulate_all(documents, args.minor)
    simulated = time.perf_counter() - started
    print(f"differential seed {args.seed}: {args.count} scenarios generated in {generated:.2f} s, "
          f"simulated at {args.count / simulated:.1f} scenarios/s")
    if args.simulator_only:
        return 0
    try:
        report = differential.run(args.seed, args.count, args.minor, progress=lambda *a: None)
    except Exception as exc:  # no Go, or the build failed: the harness says what to do
        if type(exc).__name__ == "HarnessUnavailable":
            print(f"real scheduler: not measured ({exc})")
            return 0
        raise
    print(f"differential seed {args.seed} with kube-scheduler {report.version}: {len(report.compared)} scenarios "
          f"at {len(report.compared) / report.seconds:.1f} scenarios/s end to end, "
          f"agreement {report.agreement_rate:.2%}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
