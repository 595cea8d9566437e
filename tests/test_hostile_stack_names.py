"""A stack name is a name, never a path: every command refuses one that is, and nothing outside build/ moves."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from offline_plan.write import set_aside_stale
from output_files import OutputError
from stacks.stack_files import StackNameError, build_dir, check_stack_name, output_dir
from tests.hostile_inputs import HOSTILE_STACK_NAMES, STACK_COMMANDS


def _tree(root: Path) -> dict[str, str]:
    """Every path under ``root`` with a digest of its content (folders as 'dir')."""
    found = {}
    for path in sorted(root.rglob("*")):
        rel = str(path.relative_to(root))
        found[rel] = "dir" if path.is_dir() else hashlib.sha256(path.read_bytes()).hexdigest()
    return found


@pytest.fixture()
def project(tmp_path):
    """A project with the files the set-aside once renamed, an earlier plan, and a folder beside it."""
    root = tmp_path / "work" / "project"
    (root / "stacks").mkdir(parents=True)
    (root / "stacks" / "__init__.py").write_text("# the package\n")
    (root / "README.md").write_text("# readme\n")
    (root / "build" / "dev").mkdir(parents=True)
    (root / "build" / "dev" / "plan.json").write_text("{}\n")
    (tmp_path / "work" / "x").mkdir()
    (tmp_path / "work" / "x" / "keep.txt").write_text("outside the project\n")
    return root


@pytest.mark.parametrize("name", list(HOSTILE_STACK_NAMES.values()), ids=list(HOSTILE_STACK_NAMES))
def test_check_stack_name_refuses(name):
    with pytest.raises(StackNameError, match="is not a stack name"):
        check_stack_name(name)


@pytest.mark.parametrize("name", ["dev", "eks-dev", "prod", "my_stack.v2", "s" * 100, "..a", "a.."])
def test_check_stack_name_accepts_what_pulumi_accepts(name):
    assert check_stack_name(name) == name


@pytest.mark.parametrize("command", sorted(STACK_COMMANDS))
@pytest.mark.parametrize("name", list(HOSTILE_STACK_NAMES.values()), ids=list(HOSTILE_STACK_NAMES))
def test_every_command_refuses_a_path_as_stack_name(project, capsys, command, name):
    before = _tree(project.parent)
    with pytest.raises(SystemExit) as exited:
        STACK_COMMANDS[command](name, project, project)
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert "is not a stack name" in err and "Traceback" not in err
    assert _tree(project.parent) == before


def test_set_aside_never_leaves_build(project):
    """The old renames, replayed on the function itself: each target outside build/ is refused."""
    before = _tree(project.parent)
    for name in HOSTILE_STACK_NAMES.values():
        with pytest.raises(StackNameError):
            set_aside_stale(project / "build", name, "test")
    assert _tree(project.parent) == before


def test_set_aside_moves_only_the_stack_folder(project):
    set_aside_stale(project / "build", "dev", "a test failure")
    assert not (project / "build" / "dev").exists()
    assert (project / "build" / "dev.failed" / "plan.json").is_file()
    assert "a test failure" in (project / "build" / "dev.failed" / "FAILED").read_text()


def test_build_dir_refuses_a_symlink_out_of_build(project):
    (project / "build" / "linked").symlink_to(project.parent / "x", target_is_directory=True)
    with pytest.raises(OutputError, match="is a symbolic link"):
        build_dir("linked", project)
    assert build_dir("dev", project) == (project / "build" / "dev").resolve()


def test_output_dir_stays_inside_its_root(tmp_path):
    assert output_dir("dev", tmp_path) == (tmp_path / "dev").resolve()
    with pytest.raises(StackNameError):
        output_dir("..", tmp_path)


def test_plan_of_a_missing_stack_after_an_earlier_plan_moves_only_build(project, capsys):
    """``--stack`` names a real (missing) stack: its stale outputs move inside build/, nothing else does."""
    (project / "build" / "gone").mkdir()
    (project / "build" / "gone" / "plan.json").write_text("{}\n")
    code = STACK_COMMANDS["plan"]("gone", project, project)
    assert code == 2
    assert (project / "build" / "gone.failed" / "FAILED").is_file()
    assert (project / "stacks" / "__init__.py").is_file() and (project / "README.md").is_file()
    assert (project.parent / "x" / "keep.txt").is_file()
