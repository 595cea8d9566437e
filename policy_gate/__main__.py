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
    args = parser.parse_args(argv)
    try:
        result = run_gate(args.plan, args.policy_config, pack_dir=args.policy_pack)
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
