"""A stack file that is not valid YAML, or not shaped like one, is a config error in every CLI."""

from __future__ import annotations

import pytest

import offline_plan.run
from offline_plan.__main__ import main as plan_main
from preflight.__main__ import main as preflight_main
from simulator.__main__ import main as simulator_main

BROKEN = {
    "syntax": ("config:\n  gpu-fungibility:cluster:\n    zones: [us-central1-c\n    name: x\n",
               "not valid YAML"),
    "list-config": ("config:\n  - gpu-fungibility:cluster\n", "config: must be a mapping"),
    "top-level-list": ("- config\n", "must be a mapping with a `config:` key"),
}


@pytest.fixture()
def stack_dir(tmp_path):
    folder = tmp_path / "stacks"
    folder.mkdir()
    for name, (text, _) in BROKEN.items():
        (folder / f"Pulumi.{name}.yaml").write_text(text)
    return folder


@pytest.mark.parametrize("stack", sorted(BROKEN))
def test_read_stack_file_raises_a_config_error(stack_dir, stack):
    from stacks.loader import ConfigError

    with pytest.raises(ConfigError) as caught:
        offline_plan.run.read_stack_file(stack, stack_dir)
    assert BROKEN[stack][1] in str(caught.value)


def test_yaml_syntax_error_names_the_line_and_column(stack_dir):
    from stacks.loader import ConfigError

    with pytest.raises(ConfigError) as caught:
        offline_plan.run.read_stack_file("syntax", stack_dir)
    (where, message), = caught.value.issues
    assert where.startswith("line 4, column ")
    assert "expected ',' or ']'" in message


@pytest.mark.parametrize("stack", sorted(BROKEN))
def test_plan_exits_2_without_traceback(stack_dir, tmp_path, capsys, stack):
    out = tmp_path / "build"
    code = plan_main(["--stack", stack, "--out", str(out), "--stack-dir", str(stack_dir), "--no-policy"])
    err = capsys.readouterr().err
    assert code == 2
    assert f"Pulumi.{stack}.yaml" in err and BROKEN[stack][1] in err
    assert "Traceback" not in err
    assert not out.exists()


@pytest.mark.parametrize("stack", sorted(BROKEN))
def test_simulator_exits_2_without_traceback(stack_dir, monkeypatch, capsys, stack):
    real = offline_plan.run.run_stack_file
    monkeypatch.setattr(offline_plan.run, "run_stack_file", lambda name: real(name, stack_dir))
    assert simulator_main(["--stack", stack]) == 2
    err = capsys.readouterr().err
    assert BROKEN[stack][1] in err and "Traceback" not in err


@pytest.mark.parametrize("stack", sorted(BROKEN))
def test_preflight_exits_2_without_traceback(stack_dir, capsys, stack):
    assert preflight_main(["--stack", stack, "--stack-dir", str(stack_dir)]) == 2
    err = capsys.readouterr().err
    assert BROKEN[stack][1] in err and "Traceback" not in err
