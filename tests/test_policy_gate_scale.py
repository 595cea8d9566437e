"""The policy gate over large previews: streamed, encoded once, the same verdict, failures that say what failed.

The timings are bench/bench_policy_gate.py's (it prints them); these tests check what must hold at any
size: a grown preview gets the plan's verdict, the streamed reader reads exactly what ``json`` reads, the
encoded requests are the messages the runtime expects, and a pack that fails is named with what it was
checking.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
from pulumi.runtime.proto import analyzer_pb2

import offline_plan.planjson as planjson
import offline_plan.run as offline_run
from bench.synthetic_plan import application_namespaces, grow, grown_steps
from policy_gate import run as gate_run
from policy_gate.analyzer import PolicyPackProcess, encode_core, encode_extra, encode_provider, frame
from policy_gate.gate import GateError, Spool, run_gate
from policy_gate.plan import PlanError, iter_plan_resources, plan_resources
from policy_gate.stream import StreamedSteps
from tests.own_processes import still_running
from tests.policy_fixtures import shared_pack

SIZE = 400


@pytest.fixture(scope="module")
def dev_plan() -> dict:
    return planjson.plan_document(offline_run.run_stack_file("dev"))


@pytest.fixture(scope="module")
def pack():
    return shared_pack()


def verdict(result) -> tuple:
    return result.exit_code, sorted({(v.level, v.policy) for v in result.violations})


def write(tmp_path: Path, name: str, plan: dict) -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(plan, indent=1))
    return path


# ---- the verdict over a grown preview --------------------------------------------------------------------


def test_a_grown_preview_repeats_the_application_namespace_only(dev_plan):
    assert application_namespaces(dev_plan["steps"]) == {"inference"}
    steps = list(grown_steps(dev_plan, SIZE))
    assert len(steps) == SIZE and len({s["urn"] for s in steps}) == SIZE
    copies = steps[len(dev_plan["steps"]):]
    assert {s["newState"]["type"].rsplit(":", 1)[-1] for s in copies} == {
        "Namespace", "Secret", "ResourceClaimTemplate", "Deployment", "Service"}
    deployment = next(s for s in copies if s["urn"].endswith("::vllm-gpu-deployment-r1"))
    assert deployment["newState"]["inputs"]["metadata"]["namespace"] == "inference-r1"
    assert deployment["newState"]["provider"] == next(
        s for s in dev_plan["steps"] if s["urn"].endswith("::vllm-gpu-deployment"))["newState"]["provider"]


@pytest.mark.parametrize("broken", [False, True], ids=["passing", "failing"])
def test_a_grown_preview_gets_the_plans_verdict_over_several_packs(dev_plan, tmp_path, monkeypatch, broken):
    plan = json.loads(json.dumps(dev_plan))
    if broken:  # a public endpoint in the application namespace (every copy), an unpinned chart (once)
        service = next(s for s in plan["steps"] if s["urn"].endswith("::vllm-gpu-service"))
        service["newState"]["inputs"]["spec"]["type"] = "LoadBalancer"
        release = next(s for s in plan["steps"] if s["newState"].get("type") == "kubernetes:helm.sh/v3:Release")
        release["newState"]["inputs"]["version"] = ""
    original = run_gate(write(tmp_path, "plan.json", plan))
    grown = tmp_path / "grown.json"
    source = write(tmp_path, "source.json", plan)
    grow(source, SIZE, grown)
    monkeypatch.setattr(gate_run, "RESOURCES_PER_JOB", SIZE // 2)  # two pack processes, as at scale
    result = run_gate(grown, jobs=2)
    assert result.processes == 2 and result.resources_checked == SIZE
    assert verdict(result) == verdict(original)
    assert (verdict(original)[0] == 1) is broken
    if broken:
        copies = (SIZE - len(plan["steps"])) // 8 + 1
        endpoint = [v for v in result.violations if v.policy == "no-public-inference-endpoint"]
        assert len(endpoint) >= copies, len(endpoint)
    assert set(result.timings) == {"read", "analyze", "stack"}


# ---- the streamed reader ------------------------------------------------------------------------------


@pytest.mark.parametrize("chunk", [1, 7, 64, 1 << 20])
def test_streamed_steps_are_what_json_reads_at_any_chunk_boundary(dev_plan, tmp_path, chunk):
    document = {"changeSummary": {"create": 42}, "steps": dev_plan["steps"][:12], "diagnostics": [{"n": 12345}]}
    path = tmp_path / "plan.json"
    path.write_text("\ufeff" + json.dumps(document, indent=2) + "\n")
    assert [step for _, step in StreamedSteps(path, chunk=chunk)] == document["steps"]


def test_streamed_resources_equal_the_documents(dev_plan, tmp_path):
    path = write(tmp_path, "plan.json", dev_plan)
    assert plan_resources(path) == plan_resources(dev_plan)
    assert [i for i, _ in iter_plan_resources(path)] == [i for i, _ in iter_plan_resources(dev_plan)]


@pytest.mark.parametrize(("content", "message"), [
    ('{"steps": [{"a": 1}\n  {"b": 2}]}', "not valid JSON (line 2, column 3"),
    ('{"steps": [], "steps": []}', "has two 'steps' lists"),
    ('{"steps": []} x', "not valid JSON (line 1, column 15: Extra data"),
    ('{"steps": {"a": 1}}', "no 'steps' list"),
    ('{"other": 1}', "no 'steps' list"),
    ('{"steps": [' + '{"a": ' * 120 + "1" + "}" * 120 + "]}", "nested too deep"),
    ('{"steps": [{"newState": {"urn": "urn:pulumi:s::p::t::n", "inputs": "x"}}]}', "inputs is not an object"),
    ('{"steps": [], "x": "\udcff"}', "not UTF-8"),
])
def test_a_broken_preview_is_one_error_with_its_place(tmp_path, content, message):
    path = tmp_path / "plan.json"
    path.write_bytes(content.encode("utf-8", errors="surrogateescape"))
    with pytest.raises(PlanError, match=f"^{path}: .*{__import__('re').escape(message)}"):
        plan_resources(path)


def test_a_number_cut_by_the_chunk_is_read_whole(tmp_path):
    path = tmp_path / "plan.json"
    path.write_text('{"steps": [], "n": 1234567890}')
    assert list(StreamedSteps(path, chunk=24)) == []


def test_a_replaced_urn_is_analyzed_once_at_its_last_step(pack, tmp_path):
    urn = "urn:pulumi:s::p::kubernetes:core/v1:Service::svc"
    steps = [{"op": "create", "urn": urn, "newState": {"type": "kubernetes:core/v1:Service", "urn": urn,
                                                      "inputs": {"spec": {"type": "LoadBalancer"}}}},
             {"op": "replace", "urn": urn, "newState": {"type": "kubernetes:core/v1:Service", "urn": urn,
                                                       "inputs": {"spec": {"type": "ClusterIP"}}}}]
    result = run_gate(write(tmp_path, "plan.json", {"steps": steps}), pack=pack)
    assert result.resources_checked == 1
    assert not [v for v in result.violations if v.policy == "no-public-inference-endpoint"]


# ---- the requests encoded once ------------------------------------------------------------------------


def test_encoded_requests_are_the_runtimes_messages(dev_plan):
    resources = plan_resources(dev_plan)
    providers = {r.urn: r for r in resources if r.type.startswith("pulumi:providers:")}
    resource = next(r for r in resources if r.provider and r.property_dependencies)
    core, extra = encode_core(resource), encode_extra(resource)
    provider = encode_provider(resource.provider, providers)
    analyze = analyzer_pb2.AnalyzeRequest.FromString(core + provider)
    assert (analyze.urn, analyze.type, analyze.options.parent) == (resource.urn, resource.type, resource.parent)
    assert analyze.provider.urn == resource.provider.rsplit("::", 1)[0]
    item = analyzer_pb2.AnalyzerResource.FromString(core + provider + extra)
    assert list(item.dependencies) == resource.dependencies and item.parent == resource.parent
    assert {k: list(v.urns) for k, v in item.propertyDependencies.items()} == resource.property_dependencies
    stack = analyzer_pb2.AnalyzeStackRequest.FromString(frame(1, core + provider + extra) * 3)
    assert len(stack.resources) == 3 and stack.resources[2] == item


@pytest.mark.parametrize("stack", ["dev", "eks-dev", "prod", "aks-dev"])
def test_framed_fields_are_the_request_messages_own_encoding(stack):
    from policy_gate.analyzer import _struct

    for resource in plan_resources(planjson.plan_document(offline_run.run_stack_file(stack))):
        for parent in (resource.parent, ""):
            changed = type(resource)(**{**resource.__dict__, "parent": parent})
            whole = analyzer_pb2.AnalyzeRequest(
                type=changed.type, properties=_struct(changed.inputs), urn=changed.urn, name=changed.name,
                options=analyzer_pb2.AnalyzerResourceOptions(parent=changed.parent))
            framed = analyzer_pb2.AnalyzeRequest.FromString(encode_core(changed))
            assert framed == whole, changed.urn  # a map's entries may come in another order: compared parsed
            assert framed.HasField("properties") and framed.HasField("options")
            assert len(encode_core(changed)) == whole.ByteSize()


def test_the_stack_message_size_is_known_before_it_is_built(dev_plan):
    with Spool.of(dev_plan) as spool:
        built = b"".join(frame(1, item) for _, _, _, item in spool)
        assert spool.stack_message_size() == len(built) and spool.count == len(plan_resources(dev_plan))


def test_a_stack_message_over_the_runtimes_limit_is_refused_by_name(dev_plan, pack, monkeypatch):
    monkeypatch.setattr(gate_run, "MAX_STACK_MESSAGE", 1000)
    with pytest.raises(GateError, match=r"stack-level request of .* MiB; the policy runtime accepts at most"):
        run_gate(dev_plan, pack=pack)


# ---- failures name what failed ------------------------------------------------------------------------

FAILING_PACK = '''
import os
from pulumi_policy import EnforcementLevel, PolicyPack, ResourceValidationPolicy, StackValidationPolicy


def fine(args, report_violation):
    pass


def resource_boom(args, report_violation):
    if args.name == "bad":
        raise ValueError("resource boom on purpose")


def stack_boom(args, report_violation):
    if any(r.name == "stackbad" for r in args.resources):
        raise ValueError("stack boom on purpose")
    if any(r.name == "crash" for r in args.resources):
        os._exit(3)


PolicyPack(name="failing", enforcement_level=EnforcementLevel.MANDATORY, policies=[
    ResourceValidationPolicy(name="fine-resource", description="d", validate=fine),
    ResourceValidationPolicy(name="boom-resource", description="d", validate=resource_boom),
    StackValidationPolicy(name="fine-stack", description="d", validate=fine),
    StackValidationPolicy(name="boom-stack", description="d", validate=stack_boom),
])
'''


@pytest.fixture
def failing_pack(tmp_path) -> Path:
    folder = tmp_path / "failing-pack"
    folder.mkdir()
    (folder / "PulumiPolicy.yaml").write_text("runtime: python\nversion: 0.0.1\n")
    (folder / "__main__.py").write_text(textwrap.dedent(FAILING_PACK))
    return folder


def one_resource_plan(name: str) -> dict:
    urn = f"urn:pulumi:s::p::kubernetes:core/v1:ConfigMap::{name}"
    return {"steps": [{"op": "create", "urn": urn, "newState": {"type": "kubernetes:core/v1:ConfigMap", "urn": urn,
                                                                "inputs": {}}}]}


@pytest.mark.parametrize(("name", "words"), [
    ("bad", ["on resource urn:pulumi:s::p::kubernetes:core/v1:ConfigMap::bad (kubernetes:core/v1:ConfigMap)",
             "in resource policy 'boom-resource'", "resource boom on purpose"]),
    ("stackbad", ["in stack policy 'boom-stack' over 1 resources", "stack boom on purpose"]),
    ("crash", ["in stack policies fine-stack, boom-stack over 1 resources", "its process exited with 3"]),
])
def test_a_failing_pack_is_named_with_what_it_was_checking(failing_pack, name, words):
    assert "Deadline" not in failure_naming(one_resource_plan(name), failing_pack, words)


def failure_naming(plan: dict, pack_dir: Path, words: list[str]) -> str:
    """The gate's one-line error over ``plan``, checked to name each of ``words``."""
    with pytest.raises(GateError) as caught:
        run_gate(plan, pack_dir=pack_dir)
    message = str(caught.value)
    assert message.startswith("the policy pack failed ") and "\n" not in message
    for word in words:
        assert word in message, message
    return message


def test_the_failing_packs_good_plan_passes(failing_pack):
    with PolicyPackProcess(failing_pack) as served:
        assert run_gate(one_resource_plan("good"), pack=served).exit_code == 0


# ---- the batch call -----------------------------------------------------------------------------------

BATCHED_PREAMBLE = f'''
import sys
sys.path.insert(0, {str(Path(__file__).resolve().parent.parent)!r})
from policies.runtime import install
assert install()
'''


@pytest.fixture
def batched_failing_pack(tmp_path) -> Path:
    """The failing pack above, with this project's runtime installed: it serves the batch call."""
    folder = tmp_path / "batched-failing-pack"
    folder.mkdir()
    (folder / "PulumiPolicy.yaml").write_text("runtime: python\nversion: 0.0.1\n")
    crashing = textwrap.dedent(FAILING_PACK).replace(  # and a resource whose policy ends the process
        "def resource_boom(args, report_violation):\n",
        "def resource_boom(args, report_violation):\n    if args.name == 'crash-resource':\n        os._exit(4)\n")
    (folder / "__main__.py").write_text(textwrap.dedent(BATCHED_PREAMBLE) + crashing)
    return folder


def many_resources_plan(*special: str, count: int = 150) -> dict:
    names = [f"cm-{i}" for i in range(count)]
    for offset, name in enumerate(special):
        names[count // 2 + offset] = name
    steps = []
    for name in names:
        steps += one_resource_plan(name)["steps"]
    return {"steps": steps}


def test_a_pack_with_the_projects_runtime_serves_batches_and_a_plain_one_does_not(batched_failing_pack, failing_pack):
    with PolicyPackProcess(batched_failing_pack) as batched, PolicyPackProcess(failing_pack) as plain_pack:
        assert batched.serves_batches() and not plain_pack.serves_batches()
        result = run_gate(many_resources_plan(), pack=batched)
        assert result.exit_code == 0 and result.resources_checked == 150


@pytest.mark.parametrize(("name", "words"), [
    ("bad", ["on resource urn:pulumi:s::p::kubernetes:core/v1:ConfigMap::bad (kubernetes:core/v1:ConfigMap)",
             "in resource policy 'boom-resource'", "resource boom on purpose"]),
    ("crash-resource", ["on one of 64 resources sent together, urn:pulumi:s::p::kubernetes:core/v1:ConfigMap::cm-",
                        "its process exited with 4"]),
])
def test_a_failure_in_a_batch_names_the_resource_or_the_batch(batched_failing_pack, name, words):
    failure_naming(many_resources_plan(name), batched_failing_pack, words)


# ---- providers read later, or read again --------------------------------------------------------------

PROVIDER_PACK = '''
from pulumi_policy import EnforcementLevel, PolicyPack, ResourceValidationPolicy


def says_provider(args, report_violation):
    if args.provider is not None:
        report_violation(f"provider x={args.provider.props.get('x')}")


PolicyPack(name="provider", enforcement_level=EnforcementLevel.ADVISORY, policies=[
    ResourceValidationPolicy(name="says-provider", description="d", validate=says_provider),
])
'''
PROVIDER_URN = "urn:pulumi:s::p::pulumi:providers:kubernetes::k8s"


def provider_step(x: int) -> dict:
    return {"op": "create", "urn": PROVIDER_URN, "newState": {
        "type": "pulumi:providers:kubernetes", "urn": PROVIDER_URN, "inputs": {"x": x}}}


@pytest.fixture(params=[False, True], ids=["one-per-call", "batched"])
def provider_pack(tmp_path, request) -> Path:
    folder = tmp_path / "provider-pack"
    folder.mkdir()
    (folder / "PulumiPolicy.yaml").write_text("runtime: python\nversion: 0.0.1\n")
    preamble = textwrap.dedent(BATCHED_PREAMBLE) if request.param else ""
    (folder / "__main__.py").write_text(preamble + textwrap.dedent(PROVIDER_PACK))
    return folder


def provider_plan(order: str) -> dict:
    resources = many_resources_plan(count=300)["steps"]
    for step in resources:
        step["newState"]["provider"] = f"{PROVIDER_URN}::id-1"
    if order == "provider-last":
        return {"steps": [*resources, provider_step(2)]}
    return {"steps": [provider_step(1), *resources, provider_step(2)]}  # the provider read again, changed


@pytest.mark.parametrize("order", ["provider-last", "provider-again"])
def test_every_resource_is_checked_with_its_providers_last_inputs(provider_pack, order, monkeypatch):
    sent = []
    original = Spool.request
    monkeypatch.setattr(Spool, "request", lambda self, index: sent.append(index) or original(self, index))
    with PolicyPackProcess(provider_pack) as served:  # serving from the first step: calls go out while read
        result = run_gate(provider_plan(order), pack=served)
    said = {v.urn.rsplit("::", 1)[-1]: v.message for v in result.violations if v.policy == "says-provider"}
    assert len(said) == 300 and set(said.values()) == {"provider x=2.0"}, set(said.values())
    if order == "provider-again":
        assert len(sent) > 302  # the resources sent before the provider came back went again
    else:
        assert sorted(sent) == list(range(301))  # each sent once (the provider too), once the provider was read
    said = {v.urn.rsplit("::", 1)[-1]: v.message for v in result.violations if v.policy == "says-provider"}
    assert len(said) == 300 and set(said.values()) == {"provider x=2.0"}, set(said.values())


def test_a_run_that_fails_while_packs_start_leaves_none_running(tmp_path, monkeypatch, started_policy_packs):
    """A plan that breaks after a second pack started booting: both packs are stopped before the error returns."""
    monkeypatch.setattr(gate_run, "RESOURCES_PER_JOB", 64)
    steps = many_resources_plan(count=400)["steps"]
    path = tmp_path / "plan.json"
    path.write_text(json.dumps({"steps": steps})[:-2] + ', {"newState": 7}]}')
    with pytest.raises(GateError, match=r"steps\[400\]"):
        run_gate(path, jobs=2)
    assert started_policy_packs, "the run started its packs"
    assert still_running(started_policy_packs) == []
