"""`make help` lists every target and every variable a target reads."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.hang_guard import HANG_GUARD_SECONDS

ROOT = Path(__file__).resolve().parent.parent
MAKEFILE = (ROOT / "Makefile").read_text()


@pytest.fixture(scope="module")
def help_text() -> str:
    if shutil.which("make") is None:
        pytest.skip("make is not installed")
    return subprocess.run(["make", "-s", "help"], cwd=ROOT, capture_output=True, text=True, check=True,
                          timeout=HANG_GUARD_SECONDS).stdout


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


#: (target, variable): every value a user passes reaches the command as one argument, never as shell code.
QUOTED = [("plan", "STACK"), ("diff", "STACK"), ("diff", "BASE"), ("simulate", "STACK"), ("simulate", "REPLICAS"),
          ("simulate", "WORKLOAD"), ("preflight", "STACK"), ("preflight", "DEADLINE"), ("verify", "STACK"),
          ("verify", "SNAPSHOT"), ("verify", "KUBECONFIG"), ("policy-check", "PLAN"),
          ("policy-check", "POLICY_CONFIG")]


@pytest.mark.parametrize("target, variable", QUOTED, ids=[f"{t}-{v}" for t, v in QUOTED])
@pytest.mark.parametrize("shape", ["brace-expansion", "make-function", "backquote"])
def test_make_passes_values_to_the_shell_quoted(target, variable, shape, tmp_path):
    if shutil.which("make") is None:
        pytest.skip("make is not installed")
    planted = tmp_path / "FILE"
    value = {"brace-expansion": f"x;{{touch,{planted}}};true",
             "make-function": f"$(shell touch {planted})",
             "backquote": f"x`touch {planted}`'$$(touch {planted})'"}[shape]
    dry = subprocess.run(["make", "-n", target, f"{variable}={value}"], cwd=ROOT, capture_output=True, text=True,
                         timeout=HANG_GUARD_SECONDS)
    assert not planted.exists(), f"make ran {variable}'s value while reading the Makefile"
    commands = [line for line in dry.stdout.splitlines() if " -m " in line]
    assert commands, dry.stdout + dry.stderr
    for command in commands:  # the recipe as make hands it to the shell, with the command itself made harmless
        subprocess.run(["bash", "-c", "set -- ; " + command.replace(".venv/bin/python", "true", 1)],
                       cwd=tmp_path, capture_output=True, timeout=HANG_GUARD_SECONDS)
    assert not planted.exists(), f"`make {target} {variable}=...` ran shell code from the value"
