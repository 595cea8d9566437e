"""The real-engine path's own parts, checked without Go: the stand-in plugin, the plan-vs-engine comparison,
the offline plan's engine naming (URNs, default providers, provider inputs), and config as the CLI delivers it."""

from __future__ import annotations

import json

import pytest

from offline_plan.planjson import plan_document
from offline_plan.run import read_stack_file, run_stack
from pulumi_engine import compare, standin

UNKNOWN = standin.UNKNOWN



def test_a_first_preview_keeps_what_echoes_the_inputs_and_knows_nothing_the_provider_computes():
    inputs = {"name": "c", "controlPlaneEndpointsConfig": {"dnsEndpointConfig": {"allowExternalTraffic": False}}}
    outputs = standin.computed_outputs("gcp:container/cluster:Cluster", "gke-cluster", inputs, "first")
    assert outputs["name"] == "c"
    assert outputs["controlPlaneEndpointsConfig"]["dnsEndpointConfig"] == {
        "allowExternalTraffic": False, "endpoint": UNKNOWN}
    assert outputs["endpoint"] == UNKNOWN and outputs["masterAuth"] == UNKNOWN


def test_an_update_preview_knows_the_computed_outputs_but_not_the_clusters_credentials():
    inputs = {"name": "c", "controlPlaneEndpointsConfig": {"dnsEndpointConfig": {"allowExternalTraffic": False}}}
    outputs = standin.computed_outputs("gcp:container/cluster:Cluster", "gke-cluster", inputs, "update")
    assert outputs["selfLink"].endswith("/clusters/c")
    assert outputs["controlPlaneEndpointsConfig"]["dnsEndpointConfig"]["allowExternalTraffic"] is False
    assert outputs["controlPlaneEndpointsConfig"]["dnsEndpointConfig"]["endpoint"] == UNKNOWN
    assert outputs["endpoint"] == UNKNOWN and outputs["masterAuth"] == UNKNOWN
    eks = standin.computed_outputs("aws:eks/cluster:Cluster", "eks", {"name": "e"}, "update")
    assert eks["arn"].endswith(":cluster/e") and eks["endpoint"] == UNKNOWN and eks["certificateAuthority"] == UNKNOWN


def test_each_stand_in_claims_the_version_its_python_sdk_asks_for():
    for package, module in standin.sdk_modules().items():
        version = standin.sdk_plugin_version(package)
        sdk = __import__(module)
        assert version == json.loads((__import__("pathlib").Path(sdk.__file__).parent
                                      / "pulumi-plugin.json").read_text())["version"]


def test_the_comparison_matches_unknowns_and_whole_masked_secrets_and_names_every_other_difference():
    plan = {"steps": [{"newState": {"urn": "u1", "type": "t", "parent": "p", "inputs": {
        "a": 1, "b": "[unknown]", "s": {"k": "[secret]"}, "c": [1, 2]}}}]}
    engine = {"steps": [{"newState": {"urn": "u1", "type": "t", "parent": "p", "inputs": {
        "a": 1.0, "b": "x", "s": "[secret]", "c": [1, 2]}}}]}
    assert compare.differences(plan, engine) == []
    engine["steps"][0]["newState"]["inputs"]["c"] = [1, 3]
    engine["steps"][0]["newState"]["parent"] = "q"
    engine["steps"].append({"newState": {"urn": "u2", "type": "t"}})
    found = compare.differences(plan, engine)
    assert "only in the engine: u2" in found
    assert any("parent" in line for line in found) and any("inputs.c[1]" in line for line in found)


def test_a_provider_reference_is_compared_without_its_id():
    assert compare.provider_urn("urn:pulumi:s::p::pulumi:providers:gcp::default_10_2_0::" + UNKNOWN) == \
        "urn:pulumi:s::p::pulumi:providers:gcp::default_10_2_0"
    assert compare.provider_urn("") == ""


@pytest.fixture(scope="module")
def dev_plan():
    from offline_plan.run import run_stack_file

    return plan_document(run_stack_file("dev"))


def test_urns_are_the_engines_no_root_stack_type_and_the_parents_whole_type_chain(dev_plan):
    urns = [s["urn"] for s in dev_plan["steps"]]
    assert "urn:pulumi:dev::gpu-fungibility::gpu-fungibility:index:GkeCluster::gke" in urns
    assert "urn:pulumi:dev::gpu-fungibility::gpu-fungibility:index:GkeCluster$gcp:container/cluster:Cluster::" \
           "gke-cluster" in urns
    assert not [u for u in urns if "pulumi:pulumi:Stack$" in u]


def test_a_resource_without_an_explicit_provider_names_the_engines_default_provider(dev_plan):
    states = {s["newState"]["urn"].rsplit("::", 1)[1]: s["newState"] for s in dev_plan["steps"]}
    version = standin.sdk_plugin_version("gcp").replace(".", "_")
    assert compare.provider_urn(states["gke-cluster"]["provider"]) == \
        f"urn:pulumi:dev::gpu-fungibility::pulumi:providers:gcp::default_{version}"
    explicit = states["gke-k8s"]
    assert explicit["inputs"]["version"] == standin.sdk_plugin_version("kubernetes")
    assert explicit["inputs"]["__internal"] == {}
    assert "gke-k8s" in states["vllm-gpu-deployment"]["provider"]


def test_config_maps_reach_the_program_in_the_clis_order_whatever_the_files_order():
    """The CLI sorts a structured value's keys; the plan of a stack is the same whichever order its file uses."""
    from offline_plan.run import ROOT
    from offline_plan.run import read_stack_file as read

    stack = read("dev", ROOT)
    pools = stack.namespace_config["nodePools"]
    reordered = {**stack.namespace_config, "nodePools": dict(reversed(list(pools.items())))}
    assert list(reordered["nodePools"]) != list(pools)
    plans = [plan_document(run_stack(config, stack="dev")) for config in (
        {**stack.namespace_config, **stack.other_config}, {**reordered, **stack.other_config})]
    assert json.dumps(plans[0], sort_keys=True) == json.dumps(plans[1], sort_keys=True)


def test_a_bare_key_is_the_projects_as_the_cli_reads_it(tmp_path):
    (tmp_path / "Pulumi.bare.yaml").write_text("config:\n  hfToken: hf_plain_text\n  gcp:project: p\n")
    read = read_stack_file("bare", tmp_path)
    assert read.namespace_config == {"hfToken": "hf_plain_text"}
    assert read.other_config == {"gcp:project": "p"}


def test_a_plain_text_token_under_a_bare_key_is_refused_as_the_engine_refuses_it(tmp_path):
    from offline_plan.run import run_stack_file
    from stacks.loader import ConfigError

    source = (__import__("offline_plan.run", fromlist=["ROOT"]).ROOT / "Pulumi.dev.yaml").read_text()
    (tmp_path / "Pulumi.bare.yaml").write_text(source.replace("config:\n", "config:\n  hfToken: hf_plain_text\n", 1))
    with pytest.raises(ConfigError, match="plain text"):
        run_stack_file("bare", tmp_path)


def test_the_stand_in_answers_no_unknown_invoke_silently():
    servicer, _ = standin._servicer("gcp", "10.2.0", "first")
    from pulumi.runtime.proto import provider_pb2

    answer = servicer.Invoke(provider_pb2.InvokeRequest(tok="gcp:nothing/nothing:nothing"), None)
    assert answer.failures and "no answer" in answer.failures[0].reason


@pytest.mark.parametrize("stack", ["../x", "no-such-stack-here"])
def test_make_preview_refuses_a_bad_or_missing_stack_before_building_anything(stack, capsys):
    from pulumi_engine.__main__ import EXIT_CANNOT, main

    assert main(["preview", "--stack", stack]) == EXIT_CANNOT
    assert "preview:" in capsys.readouterr().err


def test_a_cloud_registered_later_brings_its_stand_in_facts_from_its_own_module(monkeypatch):
    """The stand-in, the plugin install and ``up``'s exec plugins ask the registry: a cloud registered at runtime
    with its own real-engine module is served, its credentials hidden in a preview and pointed at the API server
    in ``up``, with no shared file changed."""
    import sys
    import types

    from gpu_fungibility import clouds

    from pulumi_engine import cloud_parts

    part = types.ModuleType("engine_part_of_a_later_cloud")
    part.STANDIN_PACKAGES = {"later": "pulumi_later"}
    part.CREDENTIAL_OUTPUTS = {"later:index/cluster:Cluster": ("endpoint", "auth.ca")}
    part.CREDENTIAL_INVOKES = ("later:index:getCredentials",)
    part.AUTH_COMMANDS = ("later-auth", "aws")
    part.outputs_at = lambda type_, outputs, api: {**outputs, "endpoint": api.server, "auth": {"ca": api.ca}}
    part.invoke_at = lambda token, result, api: {**result, "server": api.host}

    class Later(clouds.CloudProfile):
        name, title = "later", "Later"
        parts = {"pulumi_engine": part.__name__}

    monkeypatch.setitem(sys.modules, part.__name__, part)
    monkeypatch.setitem(clouds.PROFILES, "later", Later())

    assert standin.packages()["later"] == "pulumi_later"
    assert {"gcp", "aws", "azure-native", "later"} <= set(standin.packages())
    assert cloud_parts.auth_commands()[-1] == "later-auth" and cloud_parts.auth_commands().count("aws") == 1
    outputs = {"endpoint": "e", "auth": {"ca": "c", "user": "u"}, "arn": "a"}
    hidden = standin.without_credentials("later:index/cluster:Cluster", outputs)
    assert hidden == {"endpoint": UNKNOWN, "auth": {"ca": UNKNOWN, "user": "u"}, "arn": "a"}
    monkeypatch.setenv(standin.CLUSTER_ENV, json.dumps({"server": "https://127.0.0.1:1", "ca": "Q0E="}))
    pointed = standin.with_cluster("later:index/cluster:Cluster", outputs)
    assert pointed["endpoint"] == "https://127.0.0.1:1" and pointed["auth"] == {"ca": "Q0E="}
    assert outputs["endpoint"] == "e", "the table's outputs are changed only on a copy"
    assert standin.credentials_answer("later:index:getCredentials", {"k": "v"}, "update") == {"k": UNKNOWN}
    assert standin.credentials_answer("later:index:getCredentials", {"k": "v"}, standin.APPLY) == {
        "k": "v", "server": "127.0.0.1:1"}
    assert standin.credentials_answer("later:index:other", {"k": "v"}, "update") == {"k": "v"}


def test_in_up_a_clusters_credentials_point_at_the_rehearsals_api_server(monkeypatch):
    """Each shipped cloud's cluster (or its credentials function) answers the API server ``up`` names, in the
    form the cloud's kubeconfig reads: GKE a bare host, EKS a URL, AKS a kubeconfig."""
    import base64

    import yaml

    monkeypatch.setenv(standin.CLUSTER_ENV, json.dumps({"server": "https://127.0.0.1:6443", "ca": "Q0E="}))
    gke = standin.computed_outputs("gcp:container/cluster:Cluster", "gke-cluster", {
        "name": "c", "controlPlaneEndpointsConfig": {"dnsEndpointConfig": {"allowExternalTraffic": False}}},
        standin.APPLY)
    assert gke["endpoint"] == "127.0.0.1:6443" and gke["masterAuth"]["clusterCaCertificate"] == "Q0E="
    assert gke["controlPlaneEndpointsConfig"]["dnsEndpointConfig"]["endpoint"] == "127.0.0.1:6443"
    eks = standin.computed_outputs("aws:eks/cluster:Cluster", "eks", {"name": "e"}, standin.APPLY)
    assert eks["endpoint"] == "https://127.0.0.1:6443" and eks["certificateAuthority"] == {"data": "Q0E="}
    from offline_plan.mocks import call_results

    token = "azure-native:containerservice:listManagedClusterUserCredentials"
    answer = standin.credentials_answer(token, call_results()[token], standin.APPLY)
    config = yaml.safe_load(base64.b64decode(answer["kubeconfigs"][0]["value"]))
    assert [c["cluster"] for c in config["clusters"]] == [
        {"server": "https://127.0.0.1:6443", "certificate-authority-data": "Q0E="}]
    assert set(standin.credentials_answer(token, call_results()[token], "first").values()) == {UNKNOWN}
