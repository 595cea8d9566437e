"""The suite's own rules: one way of telling CI, and no in-repo module skipped when it fails to import."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.ci import in_ci

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent


@pytest.mark.parametrize("value, expected", [
    ("true", True), ("TRUE", True), ("1", True), ("yes", True), ("on", True), (" True ", True),
    ("", False), ("false", False), ("0", False), ("no", False),
])
def test_ci_is_told_one_way_with_the_usual_truthy_values(value, expected):
    assert in_ci({"CI": value}) is expected
    assert in_ci({}) is False


def test_no_test_reads_the_ci_variable_itself():
    readers = [p.relative_to(ROOT) for p in TESTS.rglob("*.py")
               if p.name != "ci.py" and re.search(r"""environ(\.get)?[(\[]\s*["']CI["']""", p.read_text())]
    assert readers == [], "use tests.ci.in_ci / unavailable"


def test_no_in_repo_module_is_skipped_when_it_fails_to_import():
    """An import error in the project's own code must fail the tests that guard it, not skip them."""
    own = {p.name for p in ROOT.iterdir() if (p / "__init__.py").is_file() or p.name == "components"}
    own |= {"gpu_fungibility"}
    skipped = [(p.relative_to(ROOT), m) for p in TESTS.rglob("*.py")
               for m in re.findall(r"""importorskip\(\s*["']([\w.]+)""", p.read_text())
               if m.split(".")[0] in own]
    assert skipped == []
