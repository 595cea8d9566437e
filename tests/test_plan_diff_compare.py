"""The comparison on small hand-built plans: ops, property paths, rules, aliases, secrets, components, output."""

from __future__ import annotations

import copy
import json
import re

import pytest

from plan_diff import render
from plan_diff.compare import compare
from plan_diff.eks import AWS_CLUSTER
from plan_diff.gke import GOOGLE_NODE_POOL
from plan_diff.properties import SECRET_SIG, SECRET_SIG_KEY, format_path, parse_path
from plan_diff.rules import KUBERNETES_RESOURCE_VALIDATION, PULUMI_KUBERNETES_DIFF

P = "urn:pulumi:dev::gpu-fungibility::"
STACK = P + "pulumi:pulumi:Stack::gpu-fungibility-dev"
POOL_COMPONENT = P + "gpu-fungibility:gke_pools:GkeGpuNodePool::a100"
POOL = P + "gpu-fungibility:gke_pools:GkeGpuNodePool$gcp:container/nodePool:NodePool::a100-nodepool"
TEMPLATE = P + "kubernetes:resource.k8s.io/v1:ResourceClaimTemplate::claim"
SECRET = P + "kubernetes:core/v1:Secret::hf"
K8S_PROVIDER = P + "pulumi:providers:kubernetes::k8s"


def state(urn: str, inputs: dict | None = None, custom: bool = True, parent: str = STACK, **extra) -> dict:
    type_ = urn.split("::")[2].split("$")[-1]
    return {"op": "create", "urn": urn, "newState": {"urn": urn, "type": type_, "custom": custom,
                                                      "parent": parent, "inputs": inputs or {}, **extra}}


def plan(*steps: dict) -> dict:
    return {"steps": [state(STACK, custom=False, parent=""), *steps]}


NODE_POOL_INPUTS = {"name": "a100", "initialNodeCount": 1,
                    "autoscaling": {"totalMinNodeCount": 1, "totalMaxNodeCount": 2},
                    "nodeConfig": {"machineType": "a2-ultragpu-1g", "labels": {"nvidia.com/gpu.dra": "true"},
                                   "guestAccelerators": [{"count": 1, "type": "nvidia-a100-80gb"}]}}


def pool_plan(**changes) -> dict:
    inputs = copy.deepcopy(NODE_POOL_INPUTS)
    for path, value in changes.items():
        node = inputs
        *head, last = path.split("__")
        for key in head:
            node = node[key]
        node[last] = value
    return plan(state(POOL_COMPONENT, custom=False), state(POOL, inputs, parent=POOL_COMPONENT))


@pytest.mark.parametrize("path,text", [
    (("autoscaling", "totalMaxNodeCount"), "autoscaling.totalMaxNodeCount"),
    (("nodeConfig", "labels", "nvidia.com/gpu.dra"), 'nodeConfig.labels["nvidia.com/gpu.dra"]'),
    (("spec", "devices", "requests", 0, "firstAvailable", 1, "name"), "spec.devices.requests[0].firstAvailable[1].name"),
    (("a", "x]y"), 'a["x]y"]'),
])
def test_property_paths_print_like_pulumi_and_parse_back(path, text):
    assert format_path(path) == text
    assert parse_path(text) == path


def test_nothing_changed_is_no_step():
    diff = compare(pool_plan(), pool_plan())
    assert diff.changes == [] and diff.unchanged == 3


def test_pool_max_changed_is_an_update_of_that_one_property():
    diff = compare(pool_plan(), pool_plan(autoscaling__totalMaxNodeCount=4))
    [change] = diff.changes
    assert (change.op, change.urn) == ("update", POOL)
    [prop] = change.properties
    assert (format_path(prop.path), prop.kind, prop.old, prop.new) == ("autoscaling.totalMaxNodeCount", "update", 2, 4)
    assert change.component is not None and change.component.urn == POOL_COMPONENT


def test_a_force_new_field_makes_it_a_replace_citing_the_provider_source():
    diff = compare(pool_plan(), pool_plan(initialNodeCount=0, autoscaling__totalMinNodeCount=0))
    [change] = diff.changes
    assert change.op == "replace"
    reasons = {format_path(r.change.path): r.rule.source for r in change.replacements}
    assert reasons == {"initialNodeCount": GOOGLE_NODE_POOL}, "the min itself updates in place"


@pytest.mark.parametrize("field,value,op", [
    ("nodeConfig__machineType", "a2-ultragpu-2g", "update"),  # updatable in place since the provider allows it
    ("nodeConfig__labels", {"nvidia.com/gpu.dra": "false"}, "update"),
    ("nodeConfig__guestAccelerators", [{"count": 2, "type": "nvidia-a100-80gb"}], "replace"),
    ("nodeConfig__spot", True, "replace"),  # a field added inside nodeConfig
])
def test_node_config_fields_follow_the_schema(field, value, op):
    assert compare(pool_plan(), pool_plan(**{field: value})).changes[0].op == op


def test_eks_encryption_config_replaces_only_when_removed():
    cluster = P + "aws:eks/cluster:Cluster::eks"
    with_key = {"name": "c", "encryptionConfig": {"provider": {"keyArn": "arn:1"}, "resources": ["secrets"]}}
    other_key = {"name": "c", "encryptionConfig": {"provider": {"keyArn": "arn:2"}, "resources": ["secrets"]}}
    without = {"name": "c"}
    assert compare(plan(state(cluster, with_key)), plan(state(cluster, other_key))).changes[0].op == "update"
    removed = compare(plan(state(cluster, with_key)), plan(state(cluster, without))).changes[0]
    assert removed.op == "replace" and removed.replacements[0].rule.source == AWS_CLUSTER
    assert compare(plan(state(cluster, without)), plan(state(cluster, with_key))).changes[0].op == "update"


def claim_template(first: str, second: str, **options) -> dict:
    alternatives = [{"name": first, "deviceClassName": "gpu.nvidia.com"},
                    {"name": second, "deviceClassName": "gpu.nvidia.com"}]
    inputs = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
              "metadata": {"name": "vllm-claim", "namespace": "inference"},
              "spec": {"spec": {"devices": {"requests": [{"name": "gpu", "firstAvailable": alternatives}]}}}}
    return plan(state(TEMPLATE, inputs, **options))


def test_a_reordered_claim_template_is_replaced_because_kubernetes_keeps_its_spec_immutable():
    diff = compare(claim_template("a100-80gb", "a100-40gb"), claim_template("a100-40gb", "a100-80gb"))
    [change] = diff.changes
    assert change.op == "replace"
    assert {r.rule.source for r in change.replacements} == {KUBERNETES_RESOURCE_VALIDATION}
    assert any("refuses" in n for n in change.notes), "pulumi-kubernetes itself would try an update"
    [(urn, warning)] = [w for w in render.impact.warnings(diff)]
    assert urn == TEMPLATE and "ResourceClaimTemplate `vllm-claim` is replaced" in warning
    assert "Running replicas keep" in warning and "replaceOnChanges" in warning


def test_with_replace_on_changes_the_claim_template_note_goes_away():
    old = claim_template("a", "b", replaceOnChanges=["spec"])
    new = claim_template("b", "a", replaceOnChanges=["spec"])
    [change] = compare(old, new).changes
    assert change.op == "replace" and not change.notes
    assert "replaceOnChanges" in change.replacements[0].rule.source


def test_renaming_a_kubernetes_object_replaces_it():
    old = claim_template("a", "b")
    new = copy.deepcopy(old)
    new["steps"][1]["newState"]["inputs"]["metadata"]["name"] = "vllm-claim-2"
    [change] = compare(old, new).changes
    assert change.op == "replace" and change.replacements[0].rule.source == PULUMI_KUBERNETES_DIFF


def secret_plan(value, mutable: bool | None = None) -> dict:
    provider_inputs = {} if mutable is None else {"enableSecretMutable": "true" if mutable else "false"}
    inputs = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "hf-token"},
              "stringData": {"hf_api_token": value}, "type": "Opaque"}
    return plan(state(K8S_PROVIDER, provider_inputs), state(SECRET, inputs, provider=K8S_PROVIDER + "::id"))


def test_a_changed_secret_is_shown_only_as_secret_and_replaces_the_kubernetes_secret():
    diff = compare(secret_plan("[secret:aaaa]"), secret_plan("[secret:bbbb]"))
    [change] = diff.changes
    [prop] = change.properties
    assert (prop.old, prop.new, prop.secret) == ("[secret]", "[secret]", True)
    assert change.op == "replace", "pulumi-kubernetes replaces a Secret's data unless enableSecretMutable"
    document = json.dumps(render.preview_json(diff, render.Meta("dev", "HEAD", "0" * 40)))
    assert "aaaa" not in document and "bbbb" not in document and "[secret]" in document
    assert "aaaa" not in render.markdown(diff, render.Meta("dev", "HEAD", "0" * 40))


def test_a_secret_with_the_same_digest_is_unchanged_and_a_mutable_secret_updates():
    assert compare(secret_plan("[secret:aaaa]"), secret_plan("[secret:aaaa]")).changes == []
    [change] = compare(secret_plan("[secret:aaaa]", mutable=True), secret_plan("[secret:bbbb]", mutable=True)).changes
    assert change.op == "update"


def test_secrets_without_digests_are_counted_not_guessed():
    diff = compare(secret_plan("[secret]"), secret_plan("[secret:bbbb]"))
    assert diff.changes == [] and diff.uncompared_secrets == 1


def test_engine_secret_envelopes_are_never_shown():
    old, new = ({SECRET_SIG_KEY: SECRET_SIG, "plaintext": f'"hf_{word}"'} for word in ("hidden", "visible"))
    diff = compare(secret_plan(old), secret_plan(new))
    text = render.terminal(diff, render.Meta("dev", "HEAD", "0" * 40))
    assert "hf_hidden" not in text and "hf_visible" not in text
    assert "stringData.hf_api_token: \"[secret]\" -> \"[secret]\"" in text


def test_a_pool_added_and_removed_are_create_and_delete_under_their_components():
    empty = plan()
    created = compare(empty, pool_plan())
    assert sorted((c.op, c.name) for c in created.changes) == [("create", "a100"), ("create", "a100-nodepool")]
    assert {c.component.urn for c in created.changes} == {POOL_COMPONENT}
    deleted = compare(pool_plan(), empty)
    assert {c.op for c in deleted.changes} == {"delete"}
    [(_urn, warning)] = render.impact.warnings(deleted)
    assert "GPU node pool `a100` is deleted" in warning


def test_an_alias_keeps_a_renamed_resource_and_shows_only_its_changes():
    old_urn = P + "gcp:container/nodePool:NodePool::old-name"
    old = plan(state(old_urn, NODE_POOL_INPUTS))
    same = plan(state(POOL, NODE_POOL_INPUTS, aliases=[old_urn]))
    diff = compare(old, same)
    assert diff.changes == [] and diff.renamed == [(old_urn, POOL)]
    changed_inputs = {**NODE_POOL_INPUTS, "autoscaling": {"totalMinNodeCount": 1, "totalMaxNodeCount": 3}}
    [change] = compare(old, plan(state(POOL, changed_inputs, aliases=[old_urn]))).changes
    assert change.op == "update" and change.old.urn == old_urn and change.new.urn == POOL
    assert any("alias" in n for n in change.notes)


def test_without_an_alias_a_moved_resource_is_deleted_and_created_and_the_diff_says_why():
    moved = P + "gpu-fungibility:x:Holder$gcp:container/nodePool:NodePool::a100-nodepool"
    diff = compare(plan(state(POOL, NODE_POOL_INPUTS)), plan(state(moved, NODE_POOL_INPUTS)))
    assert sorted(c.op for c in diff.changes) == ["create", "delete"]
    assert all(any("without an alias" in n for n in c.notes) for c in diff.changes)


def test_ignore_changes_leaves_the_path_out():
    old = plan(state(POOL, NODE_POOL_INPUTS, ignoreChanges=["initialNodeCount"]))
    new = plan(state(POOL, {**NODE_POOL_INPUTS, "initialNodeCount": 0}, ignoreChanges=["initialNodeCount"]))
    assert compare(old, new).changes == []


def test_a_type_without_rules_is_an_update_with_a_note():
    urn = P + "gcp:compute/network:Network::vpc"
    [change] = compare(plan(state(urn, {"name": "a"})), plan(state(urn, {"name": "b"}))).changes
    assert change.op == "update" and any("no replacement rules" in n for n in change.notes)


def test_json_mirrors_preview_steps_and_counts():
    diff = compare(pool_plan(), pool_plan(initialNodeCount=2))
    doc = render.preview_json(diff, render.Meta("dev", "origin/main", "a" * 40))
    [step] = doc["steps"]
    assert step["op"] == "replace" and step["urn"] == POOL and step["type"] == "gcp:container/nodePool:NodePool"
    assert step["diffs"] == step["diffReasons"] == ["initialNodeCount"] == step["replaceReasons"]
    assert step["detailedDiff"] == {"initialNodeCount": {"kind": "update-replace", "inputDiff": True}}
    assert step["oldState"]["inputs"]["initialNodeCount"] == 1 and step["newState"]["inputs"]["initialNodeCount"] == 2
    assert doc["changeSummary"] == {"replace": 1, "same": 2}
    assert doc["diagnostics"][0]["severity"] == "warning" and "is replaced" in doc["diagnostics"][0]["message"]


def test_markdown_starts_with_the_warning_and_groups_by_component():
    diff = compare(pool_plan(), pool_plan(initialNodeCount=2))
    text = render.markdown(diff, render.Meta("dev", "origin/main", "a" * 40))
    assert text.startswith("## Offline diff: stack `dev`")
    assert text.index("> [!WARNING]") < text.index("### `a100`")
    assert "GPU node pool `a100` is replaced" in text and "`initialNodeCount` **forces replacement**" in text
    assert "drained" in text


def test_aliases_recorded_by_the_offline_plan_keep_a_renamed_component_and_its_children():
    import pulumi

    from offline_plan import planjson
    from offline_plan.run import run_program

    class Pool(pulumi.ComponentResource):
        def __init__(self, name: str, opts: pulumi.ResourceOptions | None = None):
            super().__init__("test:index:Pool", name, None, opts)
            pulumi.CustomResource("test:index:Thing", f"{name}-thing", {"size": 1}, pulumi.ResourceOptions(parent=self))
            self.register_outputs({})

    def plan_of(build) -> dict:
        minimal = {"cluster": {"cloud": "gke", "name": "t", "location": "us-central1", "zones": ["us-central1-c"]}}
        return planjson.plan_document(run_program(minimal, compose_fn=lambda _loaded: build()))

    before = plan_of(lambda: Pool("gpu"))
    diff = compare(before, plan_of(lambda: Pool("gpu-pool", pulumi.ResourceOptions(aliases=[pulumi.Alias(name="gpu")]))))
    assert diff.changes == []
    assert sorted(new.rsplit("::", 1)[1] for _old, new in diff.renamed) == ["gpu-pool", "gpu-pool-thing"]
    unaliased = compare(before, plan_of(lambda: Pool("gpu-pool")))
    assert sorted(c.op for c in unaliased.changes) == ["create", "create", "delete", "delete"]


def test_a_base_planned_before_engine_urns_is_not_shown_moved_or_reprovidered():
    """Offline plans before 0.4.0 put `pulumi:pulumi:Stack$` in front of every type and named no default provider;
    a diff from such a base to a head planned with the engine's URNs shows the resources as they are: unchanged."""
    head = pool_plan()
    base = json.loads(re.sub(r"(urn:pulumi:dev::gpu-fungibility::)(?!pulumi:pulumi:Stack::)",
                             lambda m: m.group(1) + "pulumi:pulumi:Stack$", json.dumps(head)))
    for step in head["steps"]:
        if step["newState"].get("custom"):
            step["newState"]["provider"] = P + "pulumi:providers:gcp::default_10_2_0::04da6b54-80e4-46f7-96ec-b56ff0331ba9"
    assert base != head
    diff = compare(base, head)
    assert diff.changes == [], [(c.op, c.urn, c.notes) for c in diff.changes]


def test_an_explicit_provider_planned_before_the_engines_inputs_is_not_shown_updated():
    provider = {"op": "create", "newState": {"urn": K8S_PROVIDER, "type": "pulumi:providers:kubernetes",
                                             "custom": True, "inputs": {"kubeconfig": "[secret]"}}}
    head = json.loads(json.dumps({"steps": [provider]}))
    head["steps"][0]["newState"]["inputs"].update({"version": "4.34.2", "__internal": {}})
    assert compare({"steps": [provider]}, head).changes == []
    bumped = json.loads(json.dumps(head))
    bumped["steps"][0]["newState"]["inputs"]["version"] = "4.35.0"
    assert [c.op for c in compare(head, bumped).changes] == ["update"]
