"""``python -m offline_plan --stack dev``: plan a stack with no cloud account and no Pulumi CLI.

Writes ``build/<stack>/plan.json``, ``manifests/`` and ``summary.md``; runs the
policy pack over the plan and the fungibility simulator when they are part of
the project. Exit codes: 0 clean, 1 mandatory policy violation or invalid
manifest, 2 invalid stack config (nothing written).

The files are written into a folder next to ``build/<stack>/`` and swapped in
whole once they are complete. A plan that fails moves the previous outputs to
``build/<stack>.failed/`` with a ``FAILED`` note, so no file from an earlier
plan passes for the result of this one. The writing is :mod:`offline_plan.write`'s; this is the command.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from offline_plan.run import ROOT, run_stack_file
from offline_plan.write import EarlyPack, set_aside_stale, write_plan
from output_files import OutputError
from stacks.loader import ConfigError
from stacks.stack_files import StackNameError, output_dir, stack_name_argument


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="make plan", description=__doc__.splitlines()[0])
    parser.add_argument("--stack", required=True, type=stack_name_argument,
                        help="stack name: plans Pulumi.<stack>.yaml")
    parser.add_argument("--out", default=str(ROOT / "build"), help="output folder (default: build/)")
    parser.add_argument("--stack-dir", default=str(ROOT), help="folder holding Pulumi.<stack>.yaml (default: the project)")
    parser.add_argument("--no-policy", action="store_true", help="skip the policy pack")
    parser.add_argument("--no-simulate", action="store_true", help="skip the simulated placement")
    args = parser.parse_args(argv)
    try:
        out_root = Path(args.out)
        out_dir = output_dir(args.stack, out_root)
    except (StackNameError, OutputError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2

    try:
        with EarlyPack(enabled=not args.no_policy) as pack:
            try:
                run = run_stack_file(args.stack, Path(args.stack_dir))
            except FileNotFoundError as exc:
                print(f"error: {exc}", file=sys.stderr)
                _suggest_a_first_stack(args.stack)
                set_aside_stale(out_root, args.stack, str(exc))
                return 2
            except ConfigError as exc:
                print(f"Pulumi.{args.stack}.yaml: {exc}", file=sys.stderr)
                set_aside_stale(out_root, args.stack, f"Pulumi.{args.stack}.yaml is not a valid stack config")
                return 2
            return write_plan(run, out_dir, policy=not args.no_policy,
                              simulate=not args.no_simulate, pack=pack)
    except OutputError as exc:
        print(f"error: the plan's outputs could not be written: {exc}", file=sys.stderr)
        try:
            set_aside_stale(out_root, args.stack, f"its outputs could not be written: {exc}")
        except (OSError, OutputError, StackNameError):
            pass
        return 2
    except (Exception, KeyboardInterrupt) as exc:
        set_aside_stale(out_root, args.stack, f"the plan stopped with {type(exc).__name__}: {exc}")
        raise


def _suggest_a_first_stack(stack: str) -> None:
    """Point at the minimal stack files (README: "Your own stack") when a stack file is missing."""
    examples = sorted((ROOT / "examples" / "stacks").glob("Pulumi.*.yaml"))
    if examples:
        names = ", ".join(p.relative_to(ROOT).as_posix() for p in examples)
        print(f"to start a stack of your own, copy one of {names} to Pulumi.{stack}.yaml "
              "(README: Your own stack)", file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main())
