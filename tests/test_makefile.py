"""`make help` lists every target and every variable a target reads."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
MAKEFILE = (ROOT / "Makefile").read_text()


@pytest.fixture(scope="module")
def help_text() -> str:
    if shutil.which("make") is None:
        pytest.skip("make is not installed")
    return subprocess.run(["make", "-s", "help"], cwd=ROOT, capture_output=True, text=True, check=True,
                          timeout=60).stdout


def test_help_lists_every_phony_target(help_text):
    targets = re.search(r"^\.PHONY:(.*)$", MAKEFILE, re.MULTILINE).group(1).split()
    listed = {line.split()[1] for line in help_text.splitlines() if line.startswith("make ")}
    assert set(targets) - {"help"} <= listed, f"missing from make help: {set(targets) - {'help'} - listed}"


def test_help_names_every_variable_the_commands_read(help_text):
    commands = "\n".join(line for line in MAKEFILE.splitlines() if line.startswith("\t$(PY)"))
    read = set(re.findall(r"\$\(([A-Z_]+)\)", commands)) | set(re.findall(r"\$\(if \$\(([A-Z_]+)\)", commands))
    user_facing = read - {"PY", "PYTHON", "VENV"}
    assert user_facing, "the targets read STACK, PLAN, ..."
    missing = {v for v in user_facing if f"{v}=" not in help_text}
    assert not missing, f"make help does not mention {missing}"
