"""Which stacks the CI workflows gate, and what to add for a stack that is not there yet.

The project ships the stacks in :data:`SHIPPED_STACKS`; the tests check that each of them is planned offline,
previewed on pull requests and applied on main (tests/test_policy_ci.py). A user's own ``Pulumi.<stack>.yaml``
is none of the tests' business (the README says a stack is one file), so it never fails ``make test``; this
check, part of ``make lint``, tells that user exactly which lines to add to which workflow file:

    python -m tools.stacks_in_ci [--root DIR]

Exit 0 when every ``Pulumi.<stack>.yaml`` in the project folder is in all three workflows, 1 otherwise (each
missing place named, with the text to add).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent

#: The stacks this repository ships (``Pulumi.<stack>.yaml`` at the top), each gated by every workflow.
SHIPPED_STACKS: tuple[str, ...] = ("aks-dev", "dev", "eks-dev", "prod")

OFFLINE_GATE = ".github/workflows/offline-gate.yml"
PULL_REQUEST = ".github/workflows/pull-request.yml"
MAIN = ".github/workflows/main.yml"


def stack_files(root: Path) -> dict[str, Path]:
    """Every ``Pulumi.<stack>.yaml`` in the project folder, by stack name."""
    return {p.name[len("Pulumi."):-len(".yaml")]: p for p in sorted(root.glob("Pulumi.*.yaml"))}


def _workflow(root: Path, name: str) -> dict:
    return yaml.safe_load((root / name).read_text()) or {}


def gated(root: Path) -> dict[str, set[str]]:
    """The stacks each workflow names: the offline plan matrix, the preview matrix, main's ``up-*`` jobs."""
    plan = _workflow(root, OFFLINE_GATE)["jobs"]["plan"]["strategy"]["matrix"]["stack"]
    preview = _workflow(root, PULL_REQUEST)["jobs"]["preview"]["strategy"]["matrix"]["include"]
    ups = [job["with"]["stack"] for name, job in _workflow(root, MAIN)["jobs"].items() if name.startswith("up-")]
    return {OFFLINE_GATE: set(plan), PULL_REQUEST: {row["stack"] for row in preview}, MAIN: set(ups)}


def stack_cloud(path: Path) -> str:
    """The stack's ``gpu-fungibility:cluster.cloud``, or ``<cloud>`` when the file does not say."""
    try:
        config = (yaml.safe_load(path.read_text()) or {}).get("config") or {}
        cloud = (config.get("gpu-fungibility:cluster") or {}).get("cloud")
    except (OSError, yaml.YAMLError, AttributeError):
        cloud = None
    return cloud if isinstance(cloud, str) and cloud else "<cloud>"


def what_to_add(stack: str, cloud: str, workflow: str) -> str:
    """The text to add to ``workflow`` so that it gates ``stack``."""
    if workflow == OFFLINE_GATE:
        return f"jobs.plan.strategy.matrix.stack: add {stack} to the list"
    if workflow == PULL_REQUEST:
        return f"jobs.preview.strategy.matrix.include: add the line\n          - {{stack: {stack}, cloud: {cloud}}}"
    return (f"a job under jobs: (give the GitHub environment {stack} required reviewers)\n"
            f"  up-{stack}:\n"
            f"    needs: offline-gate\n"
            f"    permissions:\n"
            f"      contents: read    # checkout\n"
            f"      id-token: write   # OIDC federation to the cloud (pulumi-stack.yml)\n"
            f"    uses: ./.github/workflows/pulumi-stack.yml\n"
            f"    with: {{stack: {stack}, cloud: {cloud}, command: up, environment: {stack}}}\n"
            f"    secrets:\n"
            f"      PULUMI_ACCESS_TOKEN: ${{{{ secrets.PULUMI_ACCESS_TOKEN }}}}")


def missing(root: Path) -> list[str]:
    """One message per stack file and workflow that does not gate it."""
    found = gated(root)
    messages = []
    for stack, path in stack_files(root).items():
        for workflow, stacks in found.items():
            if stack not in stacks:
                messages.append(f"{path.name} is not gated by {workflow}; to add it there, "
                                f"{what_to_add(stack, stack_cloud(path), workflow)}")
    return messages


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.stacks_in_ci", description=__doc__.split("\n")[0])
    parser.add_argument("--root", type=Path, default=ROOT, help="the project folder (default: this checkout)")
    args = parser.parse_args(argv)
    messages = missing(args.root)
    for message in messages:
        print(message, file=sys.stderr)
    if messages:
        print("See docs/ci.md#adding-a-stack.", file=sys.stderr)
    return 1 if messages else 0


if __name__ == "__main__":
    sys.exit(main())
