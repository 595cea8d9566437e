"""Every write goes through one helper: no write through a symbolic link, no partial file on a full disk.

A full disk is a write that raises ``OSError(ENOSPC)`` part-way (the helper's one write function is
replaced); plan, diff and verify end in exit 2 naming the file, never a traceback, a truncated report or
a file outside their output folder.
"""

from __future__ import annotations

import errno
import json
import os
from pathlib import Path
from types import SimpleNamespace

import pytest

import output_files
from offline_plan.__main__ import main as plan_main
from output_files import OutputError, check_path, write_text
from tests.hostile_inputs import HOSTILE_OUTPUT_PATHS, OUTPUT_COMMANDS


def _full_disk(monkeypatch, after: int = 10) -> None:
    """Every write puts ``after`` bytes on the disk, then fails as a full disk does."""
    def write_some(handle: int, data: bytes) -> None:
        with os.fdopen(handle, "wb") as out:
            out.write(data[:after])
            out.flush()
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(output_files, "_write_all", write_some)


def _leftovers(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if ".partial" in p.name)


# ---- the helper ---------------------------------------------------------------------------------------


def test_write_replaces_the_file_whole(tmp_path):
    target = tmp_path / "dev" / "report.md"
    write_text(target, "old\n", root=tmp_path)
    write_text(target, "new\n", root=tmp_path)
    assert target.read_text() == "new\n" and _leftovers(tmp_path) == []


@pytest.mark.parametrize("link", ["dev", "dev/report.md"])
def test_a_symbolic_link_on_the_way_is_refused(tmp_path, link):
    outside = tmp_path / "outside"
    outside.mkdir()
    root = tmp_path / "build"
    (root / "dev").mkdir(parents=True)
    planted = root / link
    if planted.exists():
        planted.rmdir()
    planted.symlink_to(outside if link == "dev" else outside / "victim")
    with pytest.raises(OutputError, match="symbolic link"):
        write_text(root / "dev" / "report.md", "x", root=root)
    assert list(outside.iterdir()) == []


def test_outside_the_root_is_refused(tmp_path):
    with pytest.raises(OutputError, match="outside"):
        check_path(tmp_path / "elsewhere" / "x", tmp_path / "build")
    with pytest.raises(OutputError, match="outside|not a file"):
        check_path(tmp_path / "build" / ".." / "x", tmp_path / "build")


def test_a_root_that_is_a_file_is_refused(tmp_path):
    (tmp_path / "file").write_text("")
    with pytest.raises(OutputError, match="is a file, not a folder"):
        write_text(tmp_path / "file" / "dev" / "x", "x", root=tmp_path / "file")


def test_a_full_disk_leaves_the_earlier_file_and_no_partial_one(tmp_path, monkeypatch):
    target = tmp_path / "dev" / "report.md"
    write_text(target, "the earlier report\n", root=tmp_path)
    _full_disk(monkeypatch)
    with pytest.raises(OutputError, match="no space left on device"):
        write_text(target, "a new report, longer than ten bytes\n", root=tmp_path)
    assert target.read_text() == "the earlier report\n" and _leftovers(tmp_path) == []


# ---- every command that writes --------------------------------------------------------------------------


@pytest.fixture
def no_git_diff(monkeypatch):
    """``make diff`` without git and two plans: both sides are one empty plan (nothing changes)."""
    import plan_diff.__main__ as diff_main

    monkeypatch.setattr(diff_main, "plan_both", lambda project, stack, base: SimpleNamespace(
        base={"steps": []}, head={"steps": []}, base_ref="HEAD", base_commit="0" * 40, notes=[]))


@pytest.mark.parametrize("case", sorted(HOSTILE_OUTPUT_PATHS))
@pytest.mark.parametrize("command", sorted(OUTPUT_COMMANDS))
def test_hostile_output_paths(command, case, tmp_path, capsys, no_git_diff, snapshot_file):
    out = tmp_path / "out"
    outside = tmp_path / "outside"
    outside.mkdir()
    target = HOSTILE_OUTPUT_PATHS[case](out, outside, OUTPUT_COMMANDS[command].files)
    code = OUTPUT_COMMANDS[command].run(out, snapshot_file)
    err = capsys.readouterr().err
    assert "Traceback" not in err and list(outside.iterdir()) == [], "nothing is written outside the output folder"
    if command == "plan" and case == "report-is-a-link":
        assert code == 0 and not (out / "dev" / "summary.md").is_symlink()  # the folder is replaced whole
    else:
        assert code == 2 and ("symbolic link" in err or "is a file" in err), err
    assert _leftovers(tmp_path) == [] and not target.is_symlink()


def test_a_failed_note_is_never_written_through_a_link(tmp_path, capsys):
    out, outside = tmp_path / "out", tmp_path / "outside"
    outside.mkdir()
    (out / "dev").mkdir(parents=True)
    (out / "dev" / "FAILED").symlink_to(outside / "victim")
    empty = tmp_path / "no-stacks"
    empty.mkdir()
    assert plan_main(["--stack", "dev", "--stack-dir", str(empty), "--out", str(out), "--no-policy"]) == 2
    assert "symbolic link" in capsys.readouterr().err
    assert list(outside.iterdir()) == [] and (out / "dev.failed").is_dir()


@pytest.mark.parametrize("command", sorted(OUTPUT_COMMANDS))
def test_a_full_disk_is_exit_2_with_no_partial_report(command, tmp_path, capsys, monkeypatch, no_git_diff,
                                                    snapshot_file):
    out = tmp_path / "out"
    _full_disk(monkeypatch)
    code = OUTPUT_COMMANDS[command].run(out, snapshot_file)
    err = capsys.readouterr().err
    assert code == 2 and "no space left on device" in err and "Traceback" not in err, err
    assert _leftovers(tmp_path) == []
    for name in OUTPUT_COMMANDS[command].files:
        assert not (out / "dev" / name).exists(), f"{name} must not be left half-written or stale"


def test_a_plan_on_a_full_disk_sets_the_earlier_plan_aside(tmp_path, capsys, monkeypatch):
    out = tmp_path / "out"
    args = ["--stack", "dev", "--out", str(out), "--no-policy", "--no-simulate"]
    assert plan_main(args) == 0
    _full_disk(monkeypatch)
    assert plan_main(args) == 2
    assert "no space left on device" in capsys.readouterr().err
    assert not (out / "dev").exists() and (out / "dev.failed" / "plan.json").is_file()


@pytest.fixture(scope="module")
def snapshot_file(tmp_path_factory) -> Path:
    from tests import verify_fixtures

    path = tmp_path_factory.mktemp("snapshot") / "good.json"
    path.write_text(json.dumps(verify_fixtures.VARIANTS["good"]()))
    return path


def test_verify_md_past_a_megabyte_is_cut_for_the_job_summary():
    from offline_plan.comment_size import GITHUB_STEP_SUMMARY_LIMIT, fit_step_summary, was_cut

    text = "".join(f"| ok | node-{i:05d} | pool | - | {'é' * 600} |\n" for i in range(3_000))
    assert len(text.encode()) > 2 * GITHUB_STEP_SUMMARY_LIMIT
    cut = fit_step_summary(text, "`make verify JSON=1` prints every finding.")
    assert len(cut.encode()) <= GITHUB_STEP_SUMMARY_LIMIT and was_cut(cut)
    body = cut.rsplit("\n\n", 1)[0]
    assert text.startswith(body + "\n") and "JSON=1" in cut
