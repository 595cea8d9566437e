"""Rewrite tests/fixtures/shipped_plans.json from the current offline plans of the shipped stacks.

Run it only for a change that alters what a cloud would see on purpose, and say why in CHANGELOG.md:
``.venv/bin/python -m tests.update_shipped_plans``.
"""

import json
from pathlib import Path

from offline_plan.planjson import plan_document
from offline_plan.run import run_stack_file
from tests.test_library_plan_stability import FIXTURE, STACKS, fingerprint


def main() -> None:
    data = json.loads(FIXTURE.read_text())
    data["stacks"] = {stack: [e for e in fingerprint(plan_document(run_stack_file(stack)))] for stack in STACKS}
    FIXTURE.write_text(json.dumps(data, indent=1) + "\n")
    print(f"wrote {FIXTURE.relative_to(Path.cwd()) if FIXTURE.is_relative_to(Path.cwd()) else FIXTURE}")


if __name__ == "__main__":
    main()
