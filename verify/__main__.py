"""``python -m verify --stack <stack> [--snapshot FILE] [--kubeconfig FILE] [--json]``: the cluster against the promises.

Reads the live cluster (read-only: list calls only) or a snapshot file, then checks:
the isolation promise on every node, the devices the DRA drivers publish, where the serving
replicas are (beside ``make simulate``'s prediction) and why any is Pending, and the sizing
model's drift from the real nodes. Writes build/<stack>/verify.md.

Exit codes: 0 every promise holds (warnings included); 1 a promise is broken (isolation, a DRA
node without devices, an unsatisfiable claim alternative, a Pending pod for a resource reason);
2 the cluster cannot be read (unreachable, unauthorized, every kind forbidden, a bad snapshot) or
the stack cannot be loaded - always with the reason, never a traceback.

The reading and checking are :mod:`verify.run`'s; this is the command.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import json
import sys
from pathlib import Path

from verify.report import EXIT_UNREADABLE, exit_code, render_markdown, render_table, to_json
from verify.run import VerifyError, verify

ROOT = Path(__file__).resolve().parent.parent


def _parser() -> argparse.ArgumentParser:
    from preflight.calls import seconds_argument
    from stacks.stack_files import stack_name_argument

    parser = argparse.ArgumentParser(prog="make verify", description=__doc__.splitlines()[0])
    parser.add_argument("--stack", required=True, type=stack_name_argument, help="stack name: checks against Pulumi.<stack>.yaml")
    parser.add_argument("--stack-dir", default=str(ROOT), help="folder holding Pulumi.<stack>.yaml")
    parser.add_argument("--snapshot", help="read this `kubectl get ... -A -o json` file instead of the cluster")
    parser.add_argument("--kubeconfig", help="kubeconfig file (default: $KUBECONFIG, then the stack's output)")
    parser.add_argument("--out", default=str(ROOT / "build"), help="folder for <stack>/verify.md (default: build/)")
    parser.add_argument("--context", help="kubeconfig context (default: its current context)")
    parser.add_argument("--json", action="store_true", help="print the findings as JSON")
    parser.add_argument("--no-simulate", action="store_true", help="skip the simulator's prediction")
    parser.add_argument("--deadline", type=seconds_argument, default=120.0, metavar="SECONDS",
                        help="stop reading the cluster after this long (default 120)")
    parser.add_argument("--call-timeout", type=seconds_argument, default=20.0, metavar="SECONDS",
                        help="give up on one API call after this long (default 20)")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    collecting = gc.isenabled()
    gc.disable()  # a cluster's objects are read once and live to the end: collecting them over and over
    try:          # (a 10,000-node snapshot holds millions) costs more time than the checks
        return _run(args)
    except Exception as exc:  # noqa: BLE001 - the documented promise: one message and exit 2, never a traceback
        text = str(exc).splitlines()[0] if str(exc) else ""
        print(f"verify: stopped by an unexpected {type(exc).__name__}: {text}", file=sys.stderr)
        return EXIT_UNREADABLE
    finally:
        if collecting:
            gc.enable()


def _fail(message: str) -> int:
    print(f"verify: {message}", file=sys.stderr)
    return EXIT_UNREADABLE


def _run(args: argparse.Namespace) -> int:
    from output_files import OutputError
    from stacks.stack_files import StackNameError, check_stack_name, output_dir

    try:
        check_stack_name(args.stack)
        out_dir = output_dir(args.stack, Path(args.out))
    except StackNameError as exc:
        return _fail(f"--stack: {exc}")
    except OutputError as exc:
        return _fail(f"the report cannot be written: {exc}")
    try:
        verdict = verify(args.stack, Path(args.stack_dir), snapshot=Path(args.snapshot) if args.snapshot else None,
                         kubeconfig=args.kubeconfig, context=args.context, deadline=args.deadline,
                         call_timeout=args.call_timeout, simulate=not args.no_simulate)
    except VerifyError as exc:
        return _fail(str(exc))
    view, findings = verdict.view, verdict.findings
    from offline_plan.comment_size import fit_step_summary
    from output_files import write_text

    report = fit_step_summary(render_markdown(args.stack, view.source, findings),
                              "`make verify JSON=1` prints every finding.")
    try:
        write_text(out_dir / "verify.md", report, root=out_dir.parent)
    except OutputError as exc:
        with contextlib.suppress(OSError):  # an earlier report must not pass for this run's
            (out_dir / "verify.md").unlink(missing_ok=True)
        return _fail(f"the report could not be written: {exc}")
    if args.json:
        print(json.dumps(to_json(args.stack, view.source, findings), indent=2))
    else:
        print(render_table(args.stack, view.source, findings))
        print(f"\nreport: {out_dir / 'verify.md'}")
    return exit_code(findings)


if __name__ == "__main__":
    sys.exit(main())
