"""What the pack's runtime shares between policies is read-only (policies/read_only.py).

The runtime decodes each resource once per call and hands every policy the same objects, where pulumi-policy
hands each policy its own copy; that is the same only while no policy changes them. The whole pack runs, with
the check on, over every shipped stack's plan and first preview, plans that break rules and plans with unknown
values: no call fails and every answer is the unchecked pack's. A pack whose policies do change their inputs
is refused, naming what changed.
"""

from __future__ import annotations

import os
import textwrap

import pytest

from policies.read_only import CHECK_ENV, SharedInputChanged, Watch, fingerprint, first_difference
from policy_gate.analyzer import ROOT, PolicyPackProcess
from policy_gate.gate import GateError, resolve_config, run_gate
from tests.policy_fixtures import shared_pack
from tests.test_policy_runtime import CONFIGS, PLANS, _answers


@pytest.fixture(scope="module")
def checked_pack():
    previous = os.environ.get(CHECK_ENV)
    os.environ[CHECK_ENV] = "1"
    try:
        pack = PolicyPackProcess()
    finally:
        if previous is None:
            del os.environ[CHECK_ENV]
        else:
            os.environ[CHECK_ENV] = previous
    yield pack
    pack.close()


@pytest.mark.parametrize("plan", sorted(PLANS))
def test_no_policy_of_the_pack_changes_what_the_runtime_shares(checked_pack, plan):
    """Every call checked (a failed check fails the call): the answers are the unchecked pack's, at every level."""
    document = PLANS[plan]()
    for config in sorted(CONFIGS):
        assert _answers(checked_pack, document, CONFIGS[config]) == _answers(shared_pack(), document, CONFIGS[config])
    assert checked_pack.stderr_tail() == "", checked_pack.stderr_tail()
    shared_pack().configure(resolve_config(shared_pack().info(), {}))


MUTATING_PACK = f'''
import sys
sys.path.insert(0, {str(ROOT)!r})
from policies.runtime import install
assert install()
from pulumi_policy import EnforcementLevel, PolicyPack, ResourceValidationPolicy, StackValidationPolicy


def reads(args, report_violation):
    if args.props.get("data", {{}}).get("k") != "v":
        report_violation("a policy after the writer saw what it wrote")


def writes_through_the_proxy(args, report_violation):
    args.props["data"] = {{"k": "changed"}}


def writes_the_plain_value(args, report_violation):
    args.props["__target"]["data"]["k"] = "changed"


def reorders_the_stack(args, report_violation):
    args.resources.reverse()


PolicyPack(name="mutating", enforcement_level=EnforcementLevel.MANDATORY, policies=[
    ResourceValidationPolicy(name="writes-through-the-proxy", description="d", validate=writes_through_the_proxy),
    ResourceValidationPolicy(name="writes-the-plain-value", description="d", validate=writes_the_plain_value),
    ResourceValidationPolicy(name="reads", description="d", validate=reads),
    StackValidationPolicy(name="reorders-the-stack", description="d", validate=reorders_the_stack),
])
'''


def _config_maps(*names: str) -> dict:
    steps = [{"op": "create", "urn": f"urn:pulumi:s::p::kubernetes:core/v1:ConfigMap::{name}", "newState": {
        "type": "kubernetes:core/v1:ConfigMap", "urn": f"urn:pulumi:s::p::kubernetes:core/v1:ConfigMap::{name}",
        "custom": True, "inputs": {"data": {"k": "v"}}}} for name in names]
    return {"steps": steps}


@pytest.fixture
def mutating_pack(tmp_path, monkeypatch):
    folder = tmp_path / "mutating-pack"
    folder.mkdir()
    (folder / "PulumiPolicy.yaml").write_text("runtime: python\nversion: 0.0.1\n")
    (folder / "__main__.py").write_text(textwrap.dedent(MUTATING_PACK))
    monkeypatch.setenv(CHECK_ENV, "1")
    with PolicyPackProcess(folder) as pack:
        yield pack


@pytest.mark.parametrize(("policy", "said"), [
    ("writes-through-the-proxy", "are read-only: copy them (stack_view.plain) to change them (setting data)"),
    ("writes-the-plain-value", "decode_struct at .data.k ('v' then 'changed')"),
    ("reorders-the-stack", "the stack's resources at [0]"),
])
def test_a_policy_that_changes_what_is_shared_is_refused_by_name(mutating_pack, policy, said):
    """Each writer alone (the others disabled): the gate's error names the policy and what it changed."""
    config = {name: "disabled" for name in ("writes-through-the-proxy", "writes-the-plain-value", "reads",
                                            "reorders-the-stack") if name != policy}
    with pytest.raises(GateError) as error:
        run_gate(_config_maps("one", "two"), config, pack=mutating_pack)
    assert f"'{policy}'" in str(error.value) and said in str(error.value), str(error.value)


def test_the_write_through_a_proxy_is_refused_without_the_check_too(tmp_path):
    folder = tmp_path / "mutating-pack"
    folder.mkdir()
    (folder / "PulumiPolicy.yaml").write_text("runtime: python\nversion: 0.0.1\n")
    (folder / "__main__.py").write_text(textwrap.dedent(MUTATING_PACK))
    with PolicyPackProcess(folder) as pack, pytest.raises(GateError, match="are read-only"):
        run_gate(_config_maps("one"), {"writes-the-plain-value": "disabled", "reorders-the-stack": "disabled"},
                 pack=pack)


# ---- the fingerprint --------------------------------------------------------------------------------------


class Node:
    def __init__(self, name: str) -> None:
        self.name, self.parent, self.children = name, None, []


def _linked() -> list[Node]:
    root, child = Node("root"), Node("child")
    child.parent = root
    root.children.append(child)
    return [root, child]


def test_a_fingerprint_sees_values_order_links_and_attributes():
    same, other = _linked(), _linked()
    assert fingerprint(same) == fingerprint(other)  # cycles end
    other[1].parent = other[1]
    assert first_difference(fingerprint(same), fingerprint(other)) == "[0].children[0].parent (('seen', 1) then ('seen', 3))"
    assert first_difference(fingerprint({"a": 1, "b": 2}), fingerprint({"b": 2, "a": 1})).startswith(
        ". (its keys: ['a', 'b'] then ['b', 'a'])")
    assert first_difference(fingerprint({"a": [1, 2]}), fingerprint({"a": [1]})) == ".a (its length: 2 then 1)"
    assert first_difference(fingerprint({"a": 1}), fingerprint({"a": 1})) == ""


def test_a_watch_names_each_change():
    watch = Watch()
    props, resources = {"spec": {"replicas": 1}}, _linked()
    watch.add("decode_struct", props)
    watch.add("the stack's resources", resources)
    watch.add("an index that fills as it is read", object())  # not data, not the runtime's: not watched
    watch.verify()
    props["spec"]["replicas"] = 2
    resources[0].name = "renamed"
    with pytest.raises(SharedInputChanged) as error:
        watch.verify()
    assert "decode_struct at .spec.replicas (1 then 2)" in str(error.value)
    assert "the stack's resources at [0].name ('root' then 'renamed')" in str(error.value)
