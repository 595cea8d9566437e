"""The offline plan: plan.json shape, determinism, masked secrets, validated manifests, clean failure."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from offline_plan import planjson
from offline_plan.__main__ import main as plan_main
from offline_plan.manifests import Manifest, manifests, validate
from offline_plan.run import SECRET_MASK, run_stack
from tests.own_processes import still_running
from tools.stacks_in_ci import SHIPPED_STACKS

ROOT = Path(__file__).resolve().parent.parent
SHIPPED = list(SHIPPED_STACKS)  # a user's own Pulumi.<stack>.yaml is not the tests' business
TOKEN = "hf_tOkEn_that_must_never_leak_9f3a"


@pytest.fixture(scope="module")
def dev_plan(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("plan")
    code = plan_main(["--stack", "dev", "--out", str(out)])
    assert code == 0, f"make plan STACK=dev exited {code}"
    return out / "dev"


def test_plan_json_is_shaped_like_pulumi_preview(dev_plan):
    doc = json.loads((dev_plan / "plan.json").read_text())
    assert set(doc) == {"steps", "diagnostics", "changeSummary"}
    assert doc["changeSummary"] == {"create": len(doc["steps"])}
    urns = {s["urn"] for s in doc["steps"]}
    assert len(urns) == len(doc["steps"]), "URNs are unique"
    root = doc["steps"][0]
    assert root["newState"]["type"] == "pulumi:pulumi:Stack"
    for step in doc["steps"]:
        state = step["newState"]
        assert step["op"] == "create" and step["urn"] == state["urn"]
        assert {"type", "urn", "parent", "inputs"} <= set(state)
        assert state["urn"].startswith("urn:pulumi:dev::gpu-fungibility::")
        if state["type"] != "pulumi:pulumi:Stack":
            assert state["parent"] in urns, f"{state['urn']}: parent {state['parent']} is not in the plan"
        for dep in state.get("dependencies", []):
            assert dep in urns, f"{state['urn']}: dependency {dep} is not in the plan"


def test_dev_plan_builds_the_gke_cluster_pools_and_workloads(dev_plan):
    types = [s["newState"]["type"] for s in json.loads((dev_plan / "plan.json").read_text())["steps"]]
    assert "gcp:container/cluster:Cluster" in types
    assert types.count("gcp:container/nodePool:NodePool") >= 3
    assert "kubernetes:helm.sh/v3:Release" in types


def test_manifests_are_written_one_per_object_and_are_valid(dev_plan):
    files = sorted((dev_plan / "manifests").glob("*.yaml"))
    assert files, "no manifests written"
    kinds = set()
    for path in files:
        obj = yaml.safe_load(path.read_text())
        kinds.add(obj["kind"])
        result = validate(Manifest("urn", path.name, obj), "1.34")
        assert result.status in ("valid", "no-schema"), f"{path.name}: {result.detail}"
    assert {"ResourceClaimTemplate", "Deployment"} <= kinds


def test_summary_is_a_pr_comment_with_the_fallback_chain(dev_plan):
    text = (dev_plan / "summary.md").read_text()
    assert text.startswith("# Plan for stack `dev`")
    assert "## Resources by type" in text and "```mermaid" in text
    chain = text[text.index("```mermaid"):]
    assert chain.index("a100-80gb") < chain.index("a100-40gb"), "fallback chain follows the compute class order"


def test_summary_shows_each_pools_node_and_what_a_replica_takes_of_it(dev_plan):
    text = (dev_plan / "summary.md").read_text()
    sizes = text[text.index("## Node sizes"):]
    # a2-ultragpu-1g: 170 GiB nominal, about 167 GiB capacity, 156.9 GiB allocatable; the replica asks 150Gi.
    assert ("| vllm-gpu | a100-80gb | a2-ultragpu-1g | 12 CPU, 170 GiB | 167.0 GiB | 11.9 CPU, 156.9 GiB "
            "| 0.75 CPU, 1.3 GiB | 10.7 CPU, 150.0 GiB (96% of allocatable memory) |") in sizes
    assert "| vllm-tpu | tpu-v6e | ct6e-standard-1t | 44 CPU, 176 GiB |" in sizes


def test_two_runs_are_byte_identical(dev_plan, tmp_path):
    (tmp_path / "dev" / "manifests").mkdir(parents=True)
    (tmp_path / "dev" / "manifests" / "from-an-older-plan.yaml").write_text("kind: Gone\n")
    (tmp_path / "dev.failed").mkdir()
    (tmp_path / "dev.failed" / "FAILED").write_text("an earlier failure\n")
    assert plan_main(["--stack", "dev", "--out", str(tmp_path)]) == 0
    again = tmp_path / "dev"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dev"], "the new plan replaces the old folder whole"
    first = sorted(p.relative_to(dev_plan) for p in dev_plan.rglob("*") if p.is_file())
    second = sorted(p.relative_to(again) for p in again.rglob("*") if p.is_file())
    assert first == second
    for rel in first:
        assert (dev_plan / rel).read_bytes() == (again / rel).read_bytes(), f"{rel} differs between runs"


@pytest.mark.parametrize("stack", SHIPPED)
def test_every_shipped_stack_plans(stack, tmp_path):
    assert plan_main(["--stack", stack, "--out", str(tmp_path), "--no-simulate"]) == 0
    assert (tmp_path / stack / "plan.json").is_file()


def test_secrets_never_reach_the_plan():
    config = yaml.safe_load((ROOT / "Pulumi.dev.yaml").read_text())["config"]
    config["gpu-fungibility:hfToken"] = TOKEN
    namespace = {k.split(":", 1)[1]: v for k, v in config.items() if k.startswith("gpu-fungibility:")}
    other = {k: v for k, v in config.items() if not k.startswith("gpu-fungibility:")}
    run = run_stack({**namespace, **other}, stack="dev")
    text = planjson.dumps(planjson.plan_document(run))
    assert TOKEN not in text
    assert SECRET_MASK in text, "the token reaches the cluster as a masked secret"
    assert all(TOKEN not in json.dumps(m.obj) for m in manifests(run))


def test_broken_config_fails_cleanly_and_writes_nothing(tmp_path, capsys):
    stack_dir = tmp_path / "stacks"
    stack_dir.mkdir()
    doc = yaml.safe_load((ROOT / "Pulumi.dev.yaml").read_text())
    doc["config"]["gpu-fungibility:nodePools"]["a100-40gb"]["autoscaling"]["min"] = 5
    doc["config"]["gpu-fungibility:cluster"]["kubernetesVersion"] = "1.32"
    (stack_dir / "Pulumi.broken.yaml").write_text(yaml.safe_dump(doc))
    out = tmp_path / "build"
    code = plan_main(["--stack", "broken", "--out", str(out), "--stack-dir", str(stack_dir)])
    err = capsys.readouterr().err
    assert code == 2
    assert not out.exists(), "nothing is written for a broken config"
    assert "nodePools.a100-40gb.autoscaling.max" in err and "cluster.kubernetesVersion" in err
    assert "Traceback" not in err


def _earlier_plan(out: Path) -> None:
    (out / "dev" / "manifests").mkdir(parents=True)
    for name in ("plan.json", "summary.md", "manifests/deployment-vllm.yaml"):
        (out / "dev" / name).write_text("from the last good plan\n")


def test_a_plan_that_fails_sets_the_previous_outputs_aside(tmp_path, capsys):
    stack_dir = tmp_path / "stacks"
    stack_dir.mkdir()
    doc = yaml.safe_load((ROOT / "Pulumi.dev.yaml").read_text())
    doc["config"]["gpu-fungibility:cluster"]["kubernetesVersion"] = "1.32"
    (stack_dir / "Pulumi.dev.yaml").write_text(yaml.safe_dump(doc))
    out = tmp_path / "build"
    _earlier_plan(out)
    assert plan_main(["--stack", "dev", "--out", str(out), "--stack-dir", str(stack_dir)]) == 2
    assert not (out / "dev").exists(), "nothing at build/dev/ may pass for this plan's result"
    failed = out / "dev.failed"
    assert (failed / "plan.json").read_text() == "from the last good plan\n"
    note = (failed / "FAILED").read_text()
    assert "failed" in note and "not a valid stack config" in note and "plan before it" in note
    assert "cluster.kubernetesVersion" in capsys.readouterr().err


def test_a_plan_that_crashes_sets_the_previous_outputs_aside(tmp_path, monkeypatch):
    import offline_plan.__main__ as plan_cli

    def crash(*_args, **_kwargs):
        raise RuntimeError("the program raised")

    monkeypatch.setattr(plan_cli, "run_stack_file", crash)
    out = tmp_path / "build"
    _earlier_plan(out)
    with pytest.raises(RuntimeError, match="the program raised"):
        plan_main(["--stack", "dev", "--out", str(out), "--no-policy"])
    assert not (out / "dev").exists()
    assert "RuntimeError: the program raised" in (out / "dev.failed" / "FAILED").read_text()


def test_unknown_stack_is_a_clear_error(tmp_path, capsys):
    assert plan_main(["--stack", "nope", "--out", str(tmp_path)]) == 2
    assert "no stack file Pulumi.nope.yaml" in capsys.readouterr().err


def test_compute_class_is_checked_against_the_project_schema():
    good = {"apiVersion": "cloud.google.com/v1", "kind": "ComputeClass", "metadata": {"name": "c"},
            "spec": {"priorities": [{"nodepools": ["a"]}, {"nodepools": ["b"]}],
                     "autoscalingPolicy": {"consolidationDelayMinutes": 3}}}
    assert validate(Manifest("u", "f.yaml", good), "1.34").status == "valid"
    bad = {**good, "spec": {"priorities": [{"nodepools": "a"}], "whenUnsatisfiable": "Sometimes"}}
    result = validate(Manifest("u", "f.yaml", bad), "1.34")
    assert result.status == "invalid" and "nodepools" in result.detail


def test_schema_failure_is_reported_with_its_path():
    service = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s"}, "spec": {"prots": []}}
    result = validate(Manifest("u", "s.yaml", service), "1.34")
    assert result.status == "invalid" and result.detail.startswith("spec:") and "prots" in result.detail


def test_a_policy_pack_that_cannot_start_fails_the_plan(tmp_path, monkeypatch, capsys):
    import policy_gate

    def broken_gate(*_args, **_kwargs):
        raise policy_gate.GateError("the policy pack exited before it listened")

    monkeypatch.setattr(policy_gate, "run_gate", broken_gate)
    code = plan_main(["--stack", "dev", "--out", str(tmp_path), "--no-simulate"])
    err = capsys.readouterr().err
    assert code == 1
    assert "policy pack: could not run: the policy pack exited before it listened" in err
    assert "Traceback" not in err
    assert "could not run" in (tmp_path / "dev" / "summary.md").read_text()


BROKEN_OBJECTS = [
    {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s"}, "spec": {"ports": [{"port": "http"}]}},
    {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"}, "spec": {"replicas": 1}},
    {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate", "metadata": {"name": "c"},
     "spec": {"spec": {"devices": {"requests": [{"name": "gpu", "deviceClassName": "gpu.nvidia.com"}]}}}},
]


@pytest.mark.parametrize("stack", SHIPPED)
def test_cached_validation_agrees_with_kubernetes_validate(stack):
    import kubernetes_validate

    from offline_plan.run import run_stack_file

    run = run_stack_file(stack)
    objects = [m for m in manifests(run)] + [Manifest("u", f"broken-{i}", o) for i, o in enumerate(BROKEN_OBJECTS)]
    for manifest in objects:
        ours = validate(manifest, run.config.cluster.minor_version).status
        try:
            kubernetes_validate.validate(manifest.obj, run.config.cluster.minor_version, strict=True)
            theirs = "valid"
        except kubernetes_validate.SchemaNotFoundError:
            theirs = "no-schema"
        except kubernetes_validate.ValidationError:
            theirs = "invalid"
        if theirs == "no-schema":
            assert ours in ("valid", "invalid", "no-schema"), manifest.filename  # project schema may apply
        else:
            assert ours == theirs, f"{manifest.filename}: ours {ours}, kubernetes-validate {theirs}"
    assert any(m.filename.startswith("broken") for m in objects)


def test_the_plan_leaves_no_policy_pack_running(tmp_path, started_policy_packs):
    assert plan_main(["--stack", "dev", "--out", str(tmp_path), "--no-simulate"]) == 0
    stack_dir = tmp_path / "stacks"
    stack_dir.mkdir()
    (stack_dir / "Pulumi.bad.yaml").write_text("config:\n  gpu-fungibility:cluster: {cloud: aks}\n")
    assert plan_main(["--stack", "bad", "--out", str(tmp_path), "--stack-dir", str(stack_dir)]) == 2
    assert started_policy_packs, "the plan ran its policy pack"
    assert still_running(started_policy_packs) == []
