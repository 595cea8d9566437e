"""``python -m rehearse --stack dev [--json]``: the stack's plan on Kubernetes' own control plane.

Builds the control plane of the stack's Kubernetes minor on first use (Go >= 1.24; cached afterwards),
applies the plan to it on nodes shaped like the cloud's, and compares what the real DaemonSet controller and
scheduler decide with the project's promises and ``make simulate``. Writes build/<stack>/rehearse.md.

Exit codes: 0 every promise observed; 1 a promise broken (an object refused, a plugin beside another, a
replica elsewhere than the simulator said, a Pending replica, make verify disagreeing); 2 the rehearsal could
not run (no Go, the build failed, an unknown stack), with what to do.
"""

from __future__ import annotations

import argparse
import json
import shutil
import signal
import sys
import tempfile
import time
from pathlib import Path

from rehearse.report import EXIT_CANNOT, exit_code, render_markdown, render_table, to_json, write_report

ROOT = Path(__file__).resolve().parent.parent


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="make rehearse", description=__doc__.splitlines()[0])
    parser.add_argument("--stack", required=True, help="stack name: rehearses Pulumi.<stack>.yaml")
    parser.add_argument("--stack-dir", default=str(ROOT), help="folder holding Pulumi.<stack>.yaml")
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    return parser


def _cannot(message: str) -> int:
    print(f"rehearse: {message}", file=sys.stderr)
    return EXIT_CANNOT


def _stop_on_sigterm() -> None:
    """SIGTERM unwinds like Ctrl-C, so the harness (and every process it started) is closed on the way out."""
    def handler(signum: int, _frame: object) -> None:
        raise KeyboardInterrupt(f"signal {signum}")
    signal.signal(signal.SIGTERM, handler)


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    from stacks.loader import ConfigError
    from stacks.stack_files import StackNameError, build_dir, check_stack_name

    try:
        check_stack_name(args.stack)
        out_dir = build_dir(args.stack)
    except StackNameError as exc:
        return _cannot(f"--stack: {exc}")
    _stop_on_sigterm()
    log = (lambda text: print(text, file=sys.stderr)) if args.json else print
    cleanup: list[Path] = []
    try:
        return _run(args, out_dir, log, cleanup)
    except KeyboardInterrupt:
        return _cannot("interrupted; every process the rehearsal started was stopped and its files removed")
    except FileNotFoundError as exc:
        return _cannot(f"unknown stack {args.stack!r}: {exc}")
    except ConfigError as exc:
        return _cannot(f"Pulumi.{args.stack}.yaml: {exc}")
    finally:
        for path in cleanup:
            shutil.rmtree(path, ignore_errors=True)


def _run(args: argparse.Namespace, out_dir: Path, log, cleanup: list[Path]) -> int:
    from rehearse import scenario as scenario_mod
    from rehearse.run import rehearse

    stack_file = Path(args.stack_dir) / f"Pulumi.{args.stack}.yaml"
    if not stack_file.is_file():
        return _cannot(f"unknown stack {args.stack!r}: {stack_file} does not exist")
    try:
        from rehearse.control_plane import Harness, HarnessError, HarnessTimeout, HarnessUnavailable, ensure_built
    except ImportError as exc:
        return _cannot(f"the harness client (rehearse/control_plane.py) is not available: {exc}")

    log(f"rehearse: planning stack {args.stack} ...")
    started = time.monotonic()
    scenario = scenario_mod.load(args.stack, Path(args.stack_dir))
    planned = time.monotonic() - started
    try:
        ensure_built(scenario.minor, progress=log)
    except HarnessUnavailable as exc:
        return _cannot(str(exc))
    try:
        started = time.monotonic()
        workdir = Path(tempfile.mkdtemp(prefix="rehearse-"))  # ours: removed however the run ends
        cleanup.append(workdir)
        with Harness.start(scenario.minor, workdir=workdir, progress=log) as harness:
            up = time.monotonic() - started
            log(f"rehearse: control plane {harness.version} up in {up:.1f} s")
            result = rehearse(scenario, harness, Path(args.stack_dir), log=log)
        result.timings = {"plan": round(planned, 1), "start": round(up, 1), **result.timings}
    except HarnessUnavailable as exc:
        return _cannot(str(exc))
    except (HarnessError, HarnessTimeout) as exc:
        return _cannot(f"the control plane failed during the rehearsal: {exc}")
    path = write_report(out_dir, "rehearse.md", render_markdown(result))
    if args.json:
        print(json.dumps(to_json(result), indent=2))
    else:
        print(render_table(result))
        print(f"\nreport: {path}")
    return exit_code(result)


if __name__ == "__main__":
    sys.exit(main())
