"""``make preview`` / ``make preview-build``: the stack on Pulumi's own engine, offline.

    python -m pulumi_engine build
    python -m pulumi_engine preview --stack dev [--mode first|update|both] [--policy-config FILE] [--json]
    python -m pulumi_engine compare build/dev/plan.json build/dev.engine/first/preview.json

Exit codes: 0 every mode previewed with no mandatory policy violation; 1 a preview failed or the pack reported a
mandatory violation; 2 the engine cannot be had here (no Go, a failed build) or the arguments are wrong.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

EXIT_OK, EXIT_BROKEN, EXIT_CANNOT = 0, 1, 2


def _summary(run) -> dict:
    steps = run.preview.get("steps") or []
    ops: dict[str, int] = {}
    for step in steps:
        ops[step.get("op", "?")] = ops.get(step.get("op", "?"), 0) + 1
    return {
        "stack": run.stack, "mode": run.mode, "ok": run.ok, "steps": len(steps), "ops": dict(sorted(ops.items())),
        "mandatory": [_violation(e) for e in run.mandatory],
        "advisory": [_violation(e) for e in run.policy_events if e.get("enforcementLevel") != "mandatory"],
        "out": str(run.out),
    }


def _violation(event: dict) -> str:
    urn = event.get("resourceUrn") or "(stack)"
    return f"{event.get('policyName')}: {urn.rsplit('::', 1)[-1]}: {(event.get('message') or '').strip().splitlines()[0] if event.get('message') else ''}"


def _up_rehearsal(stack: str, minor: str, tools) -> int:
    from pulumi_engine.up import up_on_rehearsal
    from rehearse.control_plane import HarnessError, HarnessUnavailable

    try:
        run = up_on_rehearsal(stack, minor, tools=tools)
    except (HarnessUnavailable, HarnessError) as exc:
        print(f"up-rehearsal: the rehearsal's control plane is not available: {exc}", file=sys.stderr)
        return EXIT_CANNOT
    print(f"{stack}: pulumi up by the real engine onto Kubernetes {minor}'s own control plane")
    print(run.summary)
    for urn, message in sorted(run.failed.items()):
        print(f"  {run.why(message) or 'FAILED'}: {urn.rsplit('::', 1)[-1]}")
    for kind, names in run.on_the_api_server.items():
        print(f"  on the API server, {kind}: {', '.join(names) or '-'}")
    return EXIT_BROKEN if run.stack_failures else EXIT_OK


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m pulumi_engine", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("build", help="build the CLI and the kubernetes provider, install the plugins")
    prev = sub.add_parser("preview", help="preview a stack on the real engine with the policy pack")
    prev.add_argument("--stack", required=True)
    prev.add_argument("--mode", choices=("first", "update", "both"), default="both")
    prev.add_argument("--policy-config", type=Path)
    prev.add_argument("--json", action="store_true")
    upr = sub.add_parser("up-rehearsal", help="pulumi up of the stack onto the rehearsal's Kubernetes control plane")
    upr.add_argument("--stack", required=True)
    upr.add_argument("--minor", default="1.35")
    cmp = sub.add_parser("compare", help="hold an offline plan.json against the engine's preview.json")
    cmp.add_argument("plan", type=Path)
    cmp.add_argument("engine_preview", type=Path)
    args = parser.parse_args(argv)

    if args.command == "compare":
        from pulumi_engine import compare

        return compare.main([str(args.plan), str(args.engine_preview)])

    from pulumi_engine import build

    if args.command in ("preview", "up-rehearsal"):
        from offline_plan.run import ROOT
        from stacks.stack_files import StackNameError, check_stack_name

        try:
            check_stack_name(args.stack)
        except StackNameError as exc:
            print(f"preview: {exc}", file=sys.stderr)
            return EXIT_CANNOT
        if not (ROOT / f"Pulumi.{args.stack}.yaml").exists():
            print(f"preview: no stack file Pulumi.{args.stack}.yaml in {ROOT}", file=sys.stderr)
            return EXIT_CANNOT
    try:
        tools = build.ensure_tools()
    except build.EngineUnavailable as exc:
        print(f"preview: {exc}", file=sys.stderr)
        return EXIT_CANNOT
    if args.command == "build":
        print(f"Pulumi CLI: {tools.cli}\nkubernetes provider: {tools.kubernetes_provider}\nPULUMI_HOME: {tools.home}")
        return EXIT_OK

    if args.command == "up-rehearsal":
        return _up_rehearsal(args.stack, args.minor, tools)

    from pulumi_engine.preview import preview

    modes = ("first", "update") if args.mode == "both" else (args.mode,)
    summaries = []
    from stacks.loader import ConfigError

    for mode in modes:
        try:
            run = preview(args.stack, mode, policy_config=args.policy_config, tools=tools)
        except (FileNotFoundError, FileExistsError, ConfigError) as exc:
            print(f"preview: {exc}", file=sys.stderr)
            return EXIT_CANNOT
        summaries.append(_summary(run))
        if not run.ok and not run.mandatory:
            print(run.stderr[-4000:], file=sys.stderr)
    if args.json:
        print(json.dumps(summaries, indent=2))
    else:
        for s in summaries:
            verdict = "ok" if s["ok"] and not s["mandatory"] else "FAILED"
            print(f"{s['stack']} ({s['mode']} preview, real engine): {verdict}; {s['steps']} steps {s['ops']}; "
                  f"{len(s['mandatory'])} mandatory, {len(s['advisory'])} advisory policy events -> {s['out']}")
            for line in s["mandatory"]:
                print(f"  mandatory  {line}")
            for line in s["advisory"]:
                print(f"  advisory   {line}")
    return EXIT_OK if all(s["ok"] and not s["mandatory"] for s in summaries) else EXIT_BROKEN


if __name__ == "__main__":
    sys.exit(main())
