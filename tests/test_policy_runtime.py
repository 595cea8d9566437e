"""policies/runtime.py: the pack's runtime with its shared decoding answers exactly what the runtime as it
ships answers, in the offline gate and in a real preview alike.

Two pack processes, one with ``GPU_FUNGIBILITY_GENERIC_POLICY_RUNTIME=1`` (pulumi-policy untouched), get the
same requests (every shipped stack's plan and its first preview as the engine sends it, plans that break
rules, plans with values unknown during a preview, secrets and assets, several enforcement levels) and must
give byte-identical responses, ``Analyze`` for each resource and ``AnalyzeStack`` for the whole. The pieces
are also held to the runtime's own functions: the one-walk decoding to
``deserialize_properties(MessageToDict(...))`` and the proxies made when read to ``unknown_checking_proxy``'s,
read for read and error for error. The patch installs only on the pulumi-policy minor it is tested against.
"""

from __future__ import annotations

import asyncio
import copy
import functools
import os

import pytest
from google.protobuf import json_format, struct_pb2
from pulumi_policy import deserialize, proxy

import offline_plan.planjson as planjson
import offline_plan.run as offline_run
from policies import decoding, runtime
from policy_gate.analyzer import PolicyPackProcess, batch_replies, batch_request, frame
from policy_gate.gate import Spool, resolve_config
from tests.policy_fixtures import broken_gke_plan, eks_stack, find, gke_stack, shared_pack, to_plan

SECRET = {deserialize.SPECIAL_SIG_KEY: deserialize.SPECIAL_SECRET_SIG, "value": "hunter2"}
ASSET = {deserialize.SPECIAL_SIG_KEY: deserialize.SPECIAL_ASSET_SIG, "text": "hello"}
ARCHIVE = {deserialize.SPECIAL_SIG_KEY: deserialize.SPECIAL_ARCHIVE_SIG, "assets": {"a.txt": ASSET}}


@pytest.fixture(scope="module")
def generic_pack():
    previous = os.environ.get(runtime.GENERIC_RUNTIME_ENV)
    os.environ[runtime.GENERIC_RUNTIME_ENV] = "1"
    try:
        pack = PolicyPackProcess()
    finally:
        if previous is None:
            del os.environ[runtime.GENERIC_RUNTIME_ENV]
        else:
            os.environ[runtime.GENERIC_RUNTIME_ENV] = previous
    yield pack
    pack.close()


def _unknowns_secrets_assets() -> dict:
    stack = gke_stack()
    find(stack, "tpu-dra").props["values"] = proxy.UNKNOWN_OBJECT_VALUE
    pool = find(stack, "a100-80gb-pool").props
    pool["nodeConfig"]["labels"]["opaque"] = proxy.UNKNOWN_STRING_VALUE
    pool["nodeConfig"]["taints"] = [proxy.UNKNOWN_OBJECT_VALUE]
    pool["secretish"] = copy.deepcopy(SECRET)
    pool["files"] = [copy.deepcopy(ASSET), copy.deepcopy(ARCHIVE), {"nested": copy.deepcopy(SECRET)}]
    return to_plan(stack)


def _broken_eks() -> dict:
    stack = eks_stack()
    for r in stack:
        if r.type == "aws:eks/nodeGroup:NodeGroup":
            r.props["labels"] = {}
            r.props["capacityType"] = "ON_DEMAND"
    return to_plan(stack)


def _shipped(stack: str) -> dict:
    return planjson.plan_document(offline_run.run_stack_file(stack))


def _first_preview(stack: str) -> dict:
    """The stack's first preview as the engine sends it to the pack: values the clouds compute unknown, every
    Kubernetes object's outputs empty (its provider not configured): the pack fills them from the inputs
    its ``Analyze`` calls kept (policies/preview_inputs.py), through either runtime."""
    from offline_plan.mocks import outputs_by_type
    from policy_gate.first_preview import first_preview

    def computed(type_: str, name: str, inputs) -> dict:
        extra = outputs_by_type().get(type_)
        return extra(name, dict(inputs)) if extra else {}

    return first_preview(_shipped(stack), computed)


SHIPPED = ("dev", "eks-dev", "prod", "aks-dev")
PLANS = {
    **{stack: functools.partial(_shipped, stack) for stack in SHIPPED},
    **{f"{stack}-first-preview": functools.partial(_first_preview, stack) for stack in SHIPPED},
    "broken-gke": broken_gke_plan,
    "unknowns-secrets-assets": _unknowns_secrets_assets,
    "broken-eks": _broken_eks,
    "gke": lambda: to_plan(gke_stack()),
}
CONFIGS = {
    "defaults": {},
    "every-level": {"all": "mandatory", "accelerator-pools-spot": "remediate", "pinned-charts": "remediate",
                    "dra-device-plugin-isolation": "advisory", "no-public-inference-endpoint": "disabled"},
}


def _answers(pack: PolicyPackProcess, plan: dict, config: dict) -> tuple[list[bytes], bytes]:
    pack.configure(resolve_config(pack.info(), config))
    with Spool.of(plan) as spool:
        items = list(spool)
    resources = [pack.analyze_encoded(request).SerializeToString(deterministic=True) for _, _, request, _ in items]
    message = b"".join(frame(1, item) for *_, item in items)
    return resources, pack.analyze_stack_encoded(message).SerializeToString(deterministic=True)


@pytest.mark.parametrize("config", sorted(CONFIGS))
@pytest.mark.parametrize("plan", sorted(PLANS))
def test_the_shared_decoding_answers_as_the_runtime_as_it_ships(generic_pack, plan, config):
    document = PLANS[plan]()
    shared = _answers(shared_pack(), document, CONFIGS[config])
    generic = _answers(generic_pack, document, CONFIGS[config])
    assert shared[0] == generic[0]
    assert shared[1] == generic[1]
    shared_pack().configure(resolve_config(shared_pack().info(), {}))


@pytest.mark.parametrize("plan", sorted(PLANS))
def test_the_batch_call_answers_each_request_as_its_own_call(plan):
    pack = shared_pack()
    with Spool.of(PLANS[plan]()) as spool:
        requests = [request for _, _, request, _ in spool]
    alone = [pack.analyze_encoded(request).SerializeToString(deterministic=True) for request in requests]
    together = batch_replies(pack.analyze_batch(batch_request(requests)), len(requests))
    assert [reply.SerializeToString(deterministic=True) for reply in together] == alone
    assert pack.analyze_batch(b"") == b""


@pytest.mark.parametrize("plan", ["eks-dev", "unknowns-secrets-assets"])
def test_calls_that_overlap_answer_as_calls_one_at_a_time(plan):
    """The pack serves calls on several threads (as the engine may send them): each call's cache is its own,
    so every resource's answer is the one it gets alone, a stack call running meanwhile."""
    pack = shared_pack()
    with Spool.of(PLANS[plan]()) as spool:
        items = list(spool)
    requests = [request for _, _, request, _ in items]
    message = b"".join(frame(1, item) for *_, item in items)
    alone = [pack.analyze_encoded(request).SerializeToString(deterministic=True) for request in requests]
    stack_alone = pack.analyze_stack_encoded(message).SerializeToString(deterministic=True)
    stack = pack.analyze_stack_encoded.future(message)
    together = [pack.analyze_encoded.future(request) for request in requests * 3]
    assert [call.result().SerializeToString(deterministic=True) for call in together] == alone * 3
    assert stack.result().SerializeToString(deterministic=True) == stack_alone


def test_the_runtime_as_it_ships_has_no_batch_call(generic_pack):
    assert not generic_pack.serves_batches() and shared_pack().serves_batches()


def test_the_comparison_sees_violations_and_unknowns(generic_pack):
    """The plans above do exercise what they are there for: diagnostics of each kind in both runtimes."""
    from pulumi.runtime.proto import analyzer_pb2

    resources, stack = _answers(generic_pack, broken_gke_plan(), {})
    assert {d.policyName for d in analyzer_pb2.AnalyzeResponse.FromString(stack).diagnostics} == {
        "dra-device-plugin-isolation", "dra-reachable-pools-served"}
    assert {d.policyName for r in resources for d in analyzer_pb2.AnalyzeResponse.FromString(r).diagnostics} == {
        "no-public-inference-endpoint", "accelerator-pools-spot"}
    _, stack = _answers(generic_pack, _unknowns_secrets_assets(), {})
    assert any("during preview" in d.message for d in analyzer_pb2.AnalyzeResponse.FromString(stack).diagnostics)


# ---- the pieces, against the runtime's own functions ------------------------------------------------------


@pytest.fixture
def own_event_loop():
    """Pulumi's assets and archives take the thread's event loop when made: give them one and close it."""
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    yield
    asyncio.set_event_loop(None)
    loop.close()


def _struct(value: dict) -> struct_pb2.Struct:
    struct = struct_pb2.Struct()
    struct.update(value)
    return struct


TREES = [
    {},
    {"a": 1, "b": -2.5, "c": "x", "d": True, "e": None, "f": [], "g": {}},
    {"s": SECRET, "list": [SECRET, ASSET, [ARCHIVE]], "deep": {"x": {"y": [{"z": SECRET}]}}},
    {"secret-of-secret": {deserialize.SPECIAL_SIG_KEY: deserialize.SPECIAL_SECRET_SIG, "value": SECRET}},
    {"unknowns": [proxy.UNKNOWN_STRING_VALUE, {"k": proxy.UNKNOWN_NUMBER_VALUE}], "u": proxy.UNKNOWN_OBJECT_VALUE},
]


def _same(left, right) -> bool:
    """Equal, assets and archives compared by their type and what they hold."""
    if type(left) is not type(right):
        return False
    if isinstance(left, dict):
        return left.keys() == right.keys() and all(_same(left[k], right[k]) for k in left)
    if isinstance(left, list):
        return len(left) == len(right) and all(_same(a, b) for a, b in zip(left, right, strict=True))
    if hasattr(left, "__dict__"):
        return _same(vars(left), vars(right))
    return left == right


@pytest.mark.parametrize("tree", TREES)
def test_one_walk_decodes_as_deserialize_properties_of_message_to_dict(tree, own_event_loop):
    struct = _struct(tree)
    expected = deserialize.deserialize_properties(json_format.MessageToDict(struct))
    assert _same(decoding.decode_struct(struct, deserialize._deserialize_property), expected)


def test_one_walk_refuses_what_the_printer_refuses():
    with pytest.raises(ValueError):
        decoding.decode_struct(_struct({"x": [float("inf")]}), deserialize._deserialize_property)


def _reads(value, path=()):
    """Every read a policy can make, in order: (path, what it gave or the error with its path)."""
    out = []
    keys = list(value) if isinstance(value, proxy._DictProxy) else range(len(value))
    for key in keys:
        try:
            child = value[key]
        except proxy.UnknownValueError as exc:
            out.append(((*path, key), "unknown", exc.unknown_type_sentinel, exc.props, exc.message))
            continue
        if isinstance(child, (proxy._DictProxy, proxy._ListProxy)):
            out.append(((*path, key), "map" if isinstance(child, proxy._DictProxy) else "list", len(child)))
            out += _reads(child, (*path, key))
        else:
            out.append(((*path, key), child))
    return out


@pytest.mark.parametrize("tree", [*TREES, {"list": [[1, [proxy.UNKNOWN_ARRAY_VALUE]], {"k": [{}]}]}])
def test_proxies_made_when_read_read_as_the_runtimes(tree):
    lazy = runtime._lazy_proxies()[2]
    eager, made = proxy.unknown_checking_proxy(copy.deepcopy(tree)), lazy(copy.deepcopy(tree))
    assert isinstance(made, proxy._DictProxy)
    assert _reads(made) == _reads(eager)
    assert list(made) == list(eager) and len(made) == len(eager)


def test_a_list_proxy_made_when_read_slices_and_indexes_from_the_end_as_the_runtimes():
    tree = {"l": [1, {"a": proxy.UNKNOWN_STRING_VALUE}, proxy.UNKNOWN_NUMBER_VALUE, [2]]}
    eager, made = proxy.unknown_checking_proxy(copy.deepcopy(tree))["l"], runtime._lazy_proxies()[2](tree)["l"]
    assert _reads(made) == _reads(eager)
    assert made[0] == eager[0] == 1 and list(made[-1]) == list(eager[-1]) == [2]
    for index in (-2, 2):
        with pytest.raises(proxy.UnknownValueError) as lazy_error:
            made[index]
        with pytest.raises(proxy.UnknownValueError) as eager_error:
            eager[index]
        assert lazy_error.value.props == eager_error.value.props == ["l", str(index)]
    for child in (made[-3], made[1]):  # a child's path is its place from the start
        with pytest.raises(proxy.UnknownValueError) as lazy_error:
            child["a"]
        assert lazy_error.value.props == ["l", "1", "a"]
    lazy_slice, eager_slice = made[0:3], eager[0:3]
    assert type(lazy_slice) is type(eager_slice) is list
    assert lazy_slice[0] == eager_slice[0] == 1 and lazy_slice[2] == eager_slice[2] == proxy.UNKNOWN_NUMBER_VALUE
    assert _reads(lazy_slice[1]) == _reads(eager_slice[1])
    assert made["__target"] is tree["l"]


def test_a_servicer_without_the_state_it_reads_gets_the_runtimes_own_analyze_stack():
    """Another pulumi-policy layout (the private attributes renamed): the shipped method answers, not a crash."""
    calls = []
    stack_once = runtime._analyze_stack(type("Runtime", (), {"proto": None})(), lambda *args: calls.append(args) or "shipped")
    assert stack_once(object(), "request", "context") == "shipped" and len(calls) == 1


# ---- the pulumi-policy version the patch is tested against ------------------------------------------------


@pytest.mark.parametrize(("version", "tested"), [
    ("1.21.0", True), ("1.21.7", True), ("1.21.1rc1", True), ("1.21.0.dev3", True),
    ("1.22.0", False), ("1.20.9", False), ("2.21.0", False), ("1.210.0", False), ("1", False), ("", False),
    ("1.x", False),
])
def test_the_patch_knows_the_minor_it_is_tested_against(version, tested):
    assert runtime.tested_against(version) is tested


def test_every_pin_of_pulumi_policy_names_the_tested_minor():
    """The project's and the pack's requirements and locks name the minor the patch is tested against, and the
    one installed here (which these tests ran on) is of it: a bump of the pin comes with a review of the patch."""
    import re
    import tomllib

    from policy_gate.analyzer import ROOT

    minor = ".".join(map(str, runtime.TESTED_MINOR))
    for project in (ROOT / "pyproject.toml", ROOT / "policies" / "pyproject.toml"):
        dependencies = tomllib.loads(project.read_text())["project"]["dependencies"]
        assert [d for d in dependencies if d.startswith("pulumi-policy")] == [f"pulumi-policy~={minor}.0"], project
    for lock in (ROOT / "requirements.txt", ROOT / "policies" / "requirements.txt"):
        pins = re.findall(r"^pulumi-policy==(\S+)", lock.read_text(), flags=re.MULTILINE)
        assert len(pins) == 1 and runtime.tested_against(pins[0]), (lock, pins)
    assert runtime.tested_against(runtime.runtime_version())


FAKED_VERSION = '''
import importlib.metadata as metadata

_version = metadata.version
metadata.version = lambda name: "1.22.0" if name.replace("_", "-") == "pulumi-policy" else _version(name)
'''


def test_on_an_untested_pulumi_policy_the_pack_runs_on_the_runtime_as_it_ships(tmp_path, monkeypatch):
    """The pack started where pulumi-policy reports 1.22.0: the patch refuses to install, says so on stderr
    (naming the version, the tested minor and the pin), and the pack answers from pulumi-policy's own runtime,
    without the batch call and with the same verdicts."""
    (tmp_path / "sitecustomize.py").write_text(FAKED_VERSION)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(tmp_path), os.environ.get("PYTHONPATH")])))
    with PolicyPackProcess() as pack:
        monkeypatch.delenv("PYTHONPATH")
        assert not pack.serves_batches()
        plan = broken_gke_plan()
        assert _answers(pack, plan, {}) == _answers(shared_pack(), plan, {})
        pack._stderr.seek(0)
        stderr = pack._stderr.read().decode()
    assert "pulumi-policy 1.22.0 is not the minor the runtime's patch was tested against" in stderr
    assert "pin pulumi-policy~=1.21.0" in stderr
    shared_pack().configure(resolve_config(shared_pack().info(), {}))
