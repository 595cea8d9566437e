"""Malformed, huge or hostile input files: exit 2 naming the file and the reason, no traceback, nothing written."""

from __future__ import annotations

import json
import os

import pytest

import input_files
from tests.hostile_inputs import HOSTILE_STACK_FILES, STACK_COMMANDS

FILE_COMMANDS = ["plan", "simulate", "preflight"]  # the diff reads stack files in its plans: tested in test_plan_diff_*


@pytest.fixture(scope="module")
def stack_dir(tmp_path_factory):
    folder = tmp_path_factory.mktemp("hostile-stacks")
    for name, (content, _) in HOSTILE_STACK_FILES.items():
        (folder / f"Pulumi.{name}.yaml").write_bytes(content)
    return folder


@pytest.mark.parametrize("command", FILE_COMMANDS)
@pytest.mark.parametrize("stack", sorted(HOSTILE_STACK_FILES))
def test_hostile_stack_file_is_exit_2_with_the_reason(stack_dir, tmp_path, capsys, command, stack):
    code = STACK_COMMANDS[command](stack, stack_dir, tmp_path)
    err = capsys.readouterr().err
    assert code == 2, err
    assert f"Pulumi.{stack}.yaml" in err and HOSTILE_STACK_FILES[stack][1] in err, err
    assert "Traceback" not in err
    assert not (tmp_path / "build").exists()


def test_a_directory_or_a_fifo_named_like_a_stack_file(tmp_path, capsys):
    (tmp_path / "Pulumi.folder.yaml").mkdir()
    os.mkfifo(tmp_path / "Pulumi.fifo.yaml")  # opening it would block forever
    for stack, reason in (("folder", "is a directory"), ("fifo", "not a regular file")):
        assert STACK_COMMANDS["plan"](stack, tmp_path, tmp_path) == 2
        err = capsys.readouterr().err
        assert reason in err and "Traceback" not in err


# ---- the reading helpers themselves (every command's files go through them) ----------------------

JSON_LIMITS = input_files.Limits(max_bytes=2**20, max_depth=100)

HOSTILE_JSON = {
    "deep-100000": ("[" * 100_000 + "]" * 100_000, "nested too deep"),
    "deep-101": ("[" * 101 + "]" * 101, "nested too deep"),
    "deep-objects": ('{"a":' * 150 + "1" + "}" * 150, "nested too deep"),
    "truncated": ('{"steps": [', "not valid JSON"),
    "too-large": (" " * (2**20 + 1), "at most 1 MiB"),
}


@pytest.mark.parametrize("case", sorted(HOSTILE_JSON))
def test_read_json_refuses(tmp_path, case):
    text, reason = HOSTILE_JSON[case]
    path = tmp_path / "input.json"
    path.write_text(text)
    with pytest.raises(input_files.InputFileError) as caught:
        input_files.read_json(path, JSON_LIMITS)
    assert str(caught.value).startswith(f"{path}: ") and reason in str(caught.value)


def test_read_json_accepts_what_fits(tmp_path):
    path = tmp_path / "ok.json"
    path.write_text(json.dumps({"steps": [[[1]]] * 3}))
    assert input_files.read_json(path, JSON_LIMITS) == {"steps": [[[1]]] * 3}


def test_yaml_aliases_within_the_limit_are_kept(tmp_path):
    path = tmp_path / "ok.yaml"
    path.write_text("base: &b {x: 1}\nuse: *b\nmerged:\n  <<: *b\n  y: 2\n")
    assert input_files.read_yaml(path, input_files.STACK_FILE) == {
        "base": {"x": 1}, "use": {"x": 1}, "merged": {"x": 1, "y": 2}}


def test_the_shipped_stack_files_read_within_the_limits():
    from offline_plan.run import ROOT
    from tools.stacks_in_ci import SHIPPED_STACKS

    for path in (ROOT / f"Pulumi.{stack}.yaml" for stack in SHIPPED_STACKS):
        assert isinstance(input_files.read_yaml(path, input_files.STACK_FILE), dict)


def test_other_namespaces_are_not_encoded_before_the_project_keys_validate(tmp_path, monkeypatch):
    """An invalid config stops before run_program, which JSON-encodes every other namespace's values."""
    import offline_plan.run as run_mod
    from stacks.loader import ConfigError

    (tmp_path / "Pulumi.bad.yaml").write_text("config:\n  aws:big: [" + ", ".join(["x"] * 50_000) + "]\n"
                                              "  gpu-fungibility:cluster: {cloud: openstack}\n")
    monkeypatch.setattr(run_mod, "run_program", lambda *a, **k: pytest.fail("encoded before validation"))
    with pytest.raises(ConfigError, match="cluster.cloud"):
        run_mod.run_stack_file("bad", tmp_path)
