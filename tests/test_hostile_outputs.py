"""Outputs a hostile input could blow up: a PR comment past GitHub's limit; odd numbers on the command line."""

from __future__ import annotations

from pathlib import Path

import pytest

from offline_plan.__main__ import main as plan_main
from offline_plan.comment_size import GITHUB_COMMENT_LIMIT, fit_comment, was_cut
from simulator.__main__ import main as simulator_main

ROOT = Path(__file__).resolve().parent.parent


def test_a_report_that_fits_is_unchanged():
    text = "# title\n\n" + "line\n" * 100
    assert fit_comment(text, "x") == text and not was_cut(text)


def test_a_long_report_is_cut_at_a_line_with_a_note():
    text = "".join(f"| row {i} | value |\n" for i in range(20_000))
    cut = fit_comment(text, "plan.json holds the rest.")
    assert len(cut) <= GITHUB_COMMENT_LIMIT and was_cut(cut)
    body, note = cut.rsplit("\n\n", 1)
    assert text.startswith(body + "\n") and "GitHub comment holds at most 65,536" in note
    assert "plan.json holds the rest." in note


def test_an_open_code_fence_is_closed():
    text = "# diagram\n\n```mermaid\n" + "A --> B\n" * 20_000 + "```\n"
    cut = fit_comment(text, "see the file")
    assert cut.count("```") % 2 == 0 and len(cut) <= GITHUB_COMMENT_LIMIT


def test_replicas_100000_write_a_summary_that_fits_a_comment(tmp_path, capsys):
    text = (ROOT / "Pulumi.dev.yaml").read_text()
    assert "      replicas: 1\n" in text
    (tmp_path / "Pulumi.big.yaml").write_text(text.replace("      replicas: 1\n", "      replicas: 100000\n"))
    code = plan_main(["--stack", "big", "--stack-dir", str(tmp_path), "--out", str(tmp_path / "build"),
                      "--no-policy"])
    assert code == 0
    summary = (tmp_path / "build" / "big" / "summary.md").read_text()
    # The replicas that stay pending alike are one row ("99,996 more replicas pending"), as in the terminal's
    # table, so the summary fits whole.
    assert len(summary) <= GITHUB_COMMENT_LIMIT and not was_cut(summary)
    assert "more replicas pending" in summary


# --replicas values that are not a whole number of ASCII digits: (value, id)
HOSTILE_REPLICAS = {"superscript-two": "²", "fullwidth-three": "３", "arabic-indic": "٣", "negative": "-1",
                    "exponent": "1e3", "empty": "", "word": "three", "fraction": "2.5"}


@pytest.mark.parametrize("value", list(HOSTILE_REPLICAS.values()), ids=list(HOSTILE_REPLICAS))
def test_simulator_replicas_must_be_ascii_digits(capsys, value):
    assert simulator_main(["--stack", "dev", "--replicas", value]) == 2
    err = capsys.readouterr().err
    assert "--replicas must be a whole number" in err and "Traceback" not in err
