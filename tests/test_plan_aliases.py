"""plan.json records every old URN a resource answers to, as the engine would compute it."""

import json

import pulumi

from offline_plan import planjson
from offline_plan.run import run_program

MINIMAL = {"cluster": {"cloud": "gke", "name": "t", "location": "us-central1", "zones": ["us-central1-c"]}}
OLD_TYPE = "test:old_module:Pool"
NEW_TYPE = "test:index:Pool"


class _Pool(pulumi.ComponentResource):
    def __init__(self, name: str, opts: pulumi.ResourceOptions | None = None):
        super().__init__(NEW_TYPE, name, None, opts)
        pulumi.CustomResource("test:index:Thing", f"{name}-thing", {}, pulumi.ResourceOptions(parent=self))
        self.register_outputs({})


def _plan(build) -> dict:
    run = run_program(MINIMAL, compose_fn=lambda _loaded: build())
    return {s["urn"]: s["newState"] for s in planjson.plan_document(run)["steps"]}


def test_a_component_whose_type_changed_answers_to_its_old_urn_and_so_do_its_children():
    states = _plan(lambda: _Pool("gpu", pulumi.ResourceOptions(aliases=[pulumi.Alias(type_=OLD_TYPE)])))
    component = next(s for s in states.values() if s["type"] == NEW_TYPE)
    child = next(s for s in states.values() if s["type"] == "test:index:Thing")
    assert component["aliases"] == ["urn:pulumi:test::gpu-fungibility::test:old_module:Pool::gpu"]
    assert child["aliases"] == ["urn:pulumi:test::gpu-fungibility::test:old_module:Pool$test:index:Thing::gpu-thing"]


def test_a_renamed_component_carries_its_old_name_into_its_childrens_aliases():
    states = _plan(lambda: _Pool("gpu-pool", pulumi.ResourceOptions(aliases=[pulumi.Alias(name="gpu")])))
    child = next(s for s in states.values() if s["type"] == "test:index:Thing")
    assert child["urn"].endswith("::gpu-pool-thing")
    assert child["aliases"] == ["urn:pulumi:test::gpu-fungibility::test:index:Pool$test:index:Thing::gpu-thing"]


def test_resources_without_aliases_record_none():
    states = _plan(lambda: _Pool("gpu"))
    assert all("aliases" not in s for s in states.values())
    assert json.dumps(states)  # still plain JSON
