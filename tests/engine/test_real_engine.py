"""The real engine's verdict on every shipped stack: the offline plan is its plan, and the pack judges it right.

Each shipped stack is previewed by Pulumi's own CLI in both modes (a first preview, cloud outputs unknown; an
update preview, known) with the policy pack as `pulumi preview --policy-pack` runs it, and held against
`make plan`'s plan.json. A broken stack the offline gate refuses is refused here for the same rule.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from offline_plan.planjson import plan_document
from offline_plan.run import ROOT, run_stack_file
from pulumi_engine import compare
from pulumi_engine.preview import preview
from tools.stacks_in_ci import SHIPPED_STACKS


def _where(run) -> str:
    return f"{run.stack} ({run.mode} preview): see {run.out}/stderr.txt and events.jsonl\n{run.stderr[-3000:]}"


@pytest.mark.parametrize("mode", ["first", "update"])
@pytest.mark.parametrize("stack", SHIPPED_STACKS)
def test_a_shipped_stack_previews_on_the_real_engine_with_no_mandatory_violation(engine_tools, tmp_path, stack, mode):
    run = preview(stack, mode, tools=engine_tools, out=tmp_path / "engine")
    assert run.ok, _where(run)
    assert not run.mandatory, "\n".join(f"{e.get('policyName')}: {e.get('message')}" for e in run.mandatory)
    steps = run.preview.get("steps") or []
    assert steps and all(s.get("op") == "create" for s in steps), _where(run)


@pytest.mark.parametrize("mode", ["first", "update"])
@pytest.mark.parametrize("stack", SHIPPED_STACKS)
def test_the_offline_plan_is_the_engines_plan(engine_tools, tmp_path, stack, mode):
    """Same URNs, types, parents, providers (default providers named as the engine names them), dependencies,
    and inputs wherever both sides know them; secrets masked on both sides."""
    run = preview(stack, mode, tools=engine_tools, out=tmp_path / "engine")
    assert run.ok, _where(run)
    plan = plan_document(run_stack_file(stack))
    found = compare.differences(plan, run.preview)
    assert not found, f"{stack} ({mode}): the offline plan differs from the engine's:\n" + "\n".join(found[:60])


def _broken_stack(tmp_path: Path, stack: str, change) -> Path:
    data = yaml.safe_load((ROOT / f"Pulumi.{stack}.yaml").read_text())
    change(data["config"])
    path = tmp_path / f"Pulumi.{stack}.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def _dra_group_labelled_false(config: dict) -> None:
    config["gpu-fungibility:nodePools"]["l40s"]["labels"] = {"nvidia.com/gpu.dra": "false"}


BROKEN = {
    # A DRA node group labelled so the device plugin takes it: the claim's alternative there can never be served.
    "eks-dev-dra-group-labelled-false": ("eks-dev", _dra_group_labelled_false, "dra-reachable-pools-served"),
}


@pytest.mark.parametrize("case", sorted(BROKEN))
def test_a_broken_stack_is_refused_by_the_real_engine_for_the_same_rule_as_offline(engine_tools, tmp_path, case):
    from offline_plan.run import read_stack_file, run_program
    from policy_gate.gate import run_gate

    stack, change, rule = BROKEN[case]
    _broken_stack(tmp_path, stack, change)
    read = read_stack_file(stack, tmp_path)
    offline = run_gate(plan_document(run_program(read.namespace_config, other_config=read.other_config,
                                                 secret_keys=read.secret_keys, stack=stack)))
    assert rule in {v.policy for v in offline.mandatory}, f"{case}: offline the gate reported {offline.mandatory}"
    for mode in ("first", "update"):
        run = preview(stack, mode, tools=engine_tools, out=tmp_path / f"engine-{mode}", root=ROOT,
                      stack_file=tmp_path / f"Pulumi.{stack}.yaml")
        mandatory = {e.get("policyName") for e in run.mandatory}
        assert rule in mandatory, f"{case} ({mode}): the real engine's pack reported {sorted(mandatory)}; " \
                                  f"expected {rule}\n{_where(run)}"
