"""``python -m simulator --stack dev --replicas 3 [--workload NAME] [--stockout a,b] [--reclaim a,b] [--json]``.

Plans the stack offline (the same objects ``make plan`` writes), then places
the replicas. Exit codes: 0 simulated (pending replicas included), 1 the plan
has no workload to place, 2 unknown stack, workload or pool, or an invalid
stack config.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import io
import sys
from pathlib import Path

from simulator.engine import MAX_REPLICAS, SimulationError, simulate
from simulator.render import render_table, write_json
from simulator.workloads import pod_specs
from stacks.stack_files import stack_name_argument


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="make simulate", description=__doc__.splitlines()[0])
    parser.add_argument("--stack", required=True, type=stack_name_argument,
                        help="stack name: simulates Pulumi.<stack>.yaml")
    parser.add_argument("--stack-dir", help="folder holding Pulumi.<stack>.yaml (default: the project)")
    parser.add_argument("--replicas", help="replicas per workload, 0 or more (default: each workload's own)")
    parser.add_argument("--workload", help="give --replicas to this workload only; the others keep theirs")
    parser.add_argument("--stockout", default="", help="comma-separated pools that cannot add nodes")
    parser.add_argument("--reclaim", default="",
                        help="comma-separated spot pools that lose a running node once every replica is placed")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.replicas is not None:
        count = args.replicas.strip()
        if not (count.isascii() and count.isdigit()):  # isdigit alone accepts '²' and other digits
            print(f"error: --replicas must be a whole number, 0 or more (e.g. 3); got {args.replicas!r}",
                  file=sys.stderr)
            return 2
        args.replicas = int(count)
        if args.replicas > MAX_REPLICAS:
            print(f"error: --replicas {args.replicas} is more than the simulator places ({MAX_REPLICAS:,} per "
                  "workload)", file=sys.stderr)
            return 2
    from offline_plan.manifests import kubernetes_objects
    from offline_plan.run import run_stack_file
    from stacks.loader import ConfigError

    captured = io.StringIO()
    try:
        with contextlib.redirect_stdout(captured):  # keep stdout for the result (JSON must parse)
            run = run_stack_file(args.stack, *([Path(args.stack_dir)] if args.stack_dir else []))
    except FileNotFoundError as exc:
        print(f"error: unknown stack {args.stack!r}: {exc}", file=sys.stderr)
        return 2
    except ConfigError as exc:
        print(f"Pulumi.{args.stack}.yaml: {exc}", file=sys.stderr)
        return 2
    cfg = run.config
    objects = kubernetes_objects(run)
    workloads = [p.workload for p in pod_specs(cfg, objects)]
    if not workloads:
        print(f"error: the plan of stack {args.stack!r} has no Deployment with resource claims to place "
              f"(configured workloads: {', '.join(cfg.workloads) or 'none'})", file=sys.stderr)
        return 1
    if args.workload and args.workload not in workloads:
        configured = " (it is configured, but the plan has no Deployment with claims for it)" \
            if args.workload in cfg.workloads else ""
        print(f"error: unknown workload {args.workload!r}{configured}; workloads: {', '.join(workloads)}",
              file=sys.stderr)
        return 2
    replicas = None
    if args.replicas is not None:
        targets = [args.workload] if args.workload else workloads
        replicas = {name: args.replicas for name in targets}
    stockout = {p.strip() for p in args.stockout.split(",") if p.strip()}
    reclaim = [p.strip() for p in args.reclaim.split(",") if p.strip()]
    collecting = gc.isenabled()
    gc.disable()  # the placements only grow until the end: collecting them over and over costs half the time
    try:
        result = simulate(cfg, objects, replicas=replicas, stockout=stockout, reclaim=reclaim)
    except SimulationError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    finally:
        if collecting:
            gc.enable()
    if args.json:
        write_json(result, sys.stdout.write)  # one replica at a time: a million do not sit in memory at once
        print()
    else:
        print(render_table(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
