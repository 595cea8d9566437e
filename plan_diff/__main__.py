"""``python -m plan_diff --stack dev [--base REF] [--json]``: what this change does to the stack, offline.

Plans the stack at BASE (default ``origin/main`` when it exists, else ``HEAD``) in a temporary git
worktree and in the working tree, compares the plans resource by resource, prints a table (or, with
``--json``, preview-shaped JSON) and writes ``build/<stack>/diff.md`` and ``diff.json``.

Exit codes: 0 whether or not anything changed; 2 when BASE is unknown, a plan fails (the message says
which side) or there is no stack file on either side.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from pathlib import Path

from offline_plan.comment_size import fit_comment
from output_files import OutputError, write_text
from plan_diff import render
from plan_diff.compare import compare
from plan_diff.planning import DiffError, Interrupted, plan_both
from stacks.stack_files import StackNameError, output_dir, stack_name_argument

PROJECT = Path(__file__).resolve().parent.parent


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="make diff", description=__doc__.splitlines()[0])
    parser.add_argument("--stack", required=True, type=stack_name_argument, help="stack name: Pulumi.<stack>.yaml")
    parser.add_argument("--base", help="git ref to compare against (default: origin/main, else HEAD)")
    parser.add_argument("--json", action="store_true", help="print pulumi-preview-shaped JSON instead of a table")
    parser.add_argument("--project", default=str(PROJECT), help="project folder (default: this project)")
    parser.add_argument("--out", help="folder for <stack>/diff.md and diff.json (default: <project>/build)")
    args = parser.parse_args(argv)
    project = Path(args.project).resolve()
    try:
        out_dir = output_dir(args.stack, Path(args.out or project / "build"))
    except (StackNameError, OutputError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2

    try:
        plans = plan_both(project, args.stack, args.base)
    except DiffError as exc:
        for stale in ("diff.md", "diff.json"):  # an earlier diff must not pass for this one
            (out_dir / stale).unlink(missing_ok=True)
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except Interrupted as exc:
        print(f"plan_diff: stopped by signal {exc.signum}; the base worktree and temporary folders are removed",
              file=sys.stderr)
        raise

    diff = compare(plans.base, plans.head)
    meta = render.Meta(args.stack, plans.base_ref, plans.base_commit, notes=plans.notes)
    if diff.uncompared_secrets:
        meta.notes.append(f"{diff.uncompared_secrets} secret value(s) could not be compared: a plan made by code "
                          "older than the offline diff carries no secret digests")
    document = render.preview_json(diff, meta)
    try:
        write_text(out_dir / "diff.json", json.dumps(document, indent=2, sort_keys=True) + "\n", root=out_dir.parent)
        write_text(out_dir / "diff.md", fit_comment(render.markdown(diff, meta), "diff.json beside this file holds "
                                                                                "every change."), root=out_dir.parent)
    except OutputError as exc:
        for stale in ("diff.md", "diff.json"):  # never one new file beside an old one
            with contextlib.suppress(OSError):
                (out_dir / stale).unlink(missing_ok=True)
        print(f"error: the diff could not be written: {exc}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(document, indent=2, sort_keys=True))
    else:
        print(render.terminal(diff, meta), end="")
        print(f"-> {out_dir / 'diff.md'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
