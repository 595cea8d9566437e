"""``python -m policy_gate <plan.json> [--policy-config file.json]``.

Prints one line per violation (``[mandatory] <policy>  <urn>: <message>``),
exits 1 on any mandatory violation, 0 otherwise, 2 when the plan or config
cannot be read or the pack cannot start.
"""

from __future__ import annotations

import argparse
import sys

from policy_gate.gate import GateError, run_gate


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m policy_gate",
        description="Run the gpu-fungibility policy pack over a `pulumi preview --json`-shaped plan.")
    parser.add_argument("plan", help="plan file, e.g. build/dev/plan.json or the output of `pulumi preview --json`")
    parser.add_argument("--policy-config", metavar="FILE",
                        help="enforcement levels / policy properties, as for `pulumi preview --policy-pack-config`")
    parser.add_argument("--policy-pack", metavar="DIR", help="policy pack directory (default: policies/)")
    parser.add_argument("--jobs", type=int, metavar="N",
                        help="pack processes at most for a large plan (default: the CPUs, at most 4)")
    args = parser.parse_args(argv)
    if args.jobs is not None and args.jobs < 1:
        parser.error("--jobs must be at least 1")
    try:
        result = run_gate(args.plan, args.policy_config, pack_dir=args.policy_pack, jobs=args.jobs)
    except GateError as exc:
        print(f"policy_gate: error: {exc}", file=sys.stderr)
        return 2
    for violation in result.violations:
        print(violation.line())
    print(f"policy_gate: {result.pack_name} {result.pack_version}: {len(result.mandatory)} mandatory, "
          f"{len(result.advisory)} advisory violation(s) over {result.resources_checked} resources",
          file=sys.stderr)
    return result.exit_code


if __name__ == "__main__":
    sys.exit(main())
