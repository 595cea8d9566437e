"""Rules under preview unknowns, with hand-built args carrying the engine's sentinels as pulumi-policy delivers them.

Two shapes of unknown reach the pack in a first preview: a value inside known properties (the engine's sentinel
string where an input flows from another resource's output: a Helm release's ``namespace`` from a Namespace),
and a resource whose properties are all unknown (``AnalyzeStack`` hands over the empty outputs of every
resource whose provider is not configured). No rule may read either as absent: it judges what it can and says
what it could not ("not judged until known", advisory).
"""

from __future__ import annotations

import copy

import pytest
from pulumi_policy import proxy
from pulumi_policy.proxy import UnknownValueError

from policies.rules import POLICIES
from policies.rules.gke import validate_gke_critical_priority_quota
from policies.rules.placement import validate_dra_pool_served
from policies.stack_view import StackView, plain
from policies.unknowns import (
    SENTINELS,
    UNKNOWN,
    NotJudged,
    Pending,
    dig_known,
    has_unknown,
    is_unknown,
    known,
    outputs_unknown,
    unknown_paths,
)
from tests.policy_fixtures import RELEASE, Collector, R, eks_stack, find, gke_stack, resource_args, stack_args

STRING = proxy.UNKNOWN_STRING_VALUE
STACK_POLICIES = [p for p in POLICIES if type(p).__name__ == "StackValidationPolicy"]


def run(rule, resources, property_dependencies=None):
    """The rule's violations and, when it raised NotJudged, what it did not judge."""
    args = stack_args(resources)
    by_urn = {item.urn: item for item in args.resources}
    for urn, deps in (property_dependencies or {}).items():
        by_urn[urn].property_dependencies = {key: [by_urn[u] for u in urns] for key, urns in deps.items()}
    collector = Collector()
    try:
        rule(args, collector)
    except NotJudged as exc:
        return collector, exc.items
    return collector, []


# ---- the helper ---------------------------------------------------------------------------------


def test_every_sentinel_is_unknown_and_plain_makes_each_the_same():
    assert len(SENTINELS) == 7 and STRING in SENTINELS
    for sentinel in SENTINELS:
        assert is_unknown(sentinel) and plain({"a": [sentinel]}) == {"a": [UNKNOWN]}
    assert not is_unknown("") and not is_unknown(None) and not is_unknown("04da6b54")
    assert known(STRING, "x") == "x" and known("y", "x") == "y"


def test_unknown_paths_and_dig_known_name_where_the_unknown_is():
    value = {"spec": {"devices": {"requests": [{"count": STRING}]}}, "kind": "ResourceClaim"}
    assert list(unknown_paths(value)) == ["spec.devices.requests[0].count"]
    assert has_unknown(value) and not has_unknown({"kind": "x"})
    assert dig_known({"a": {"b": STRING}}, "a", "b", "c") == (False, "a.b")
    assert dig_known({"a": {"b": 1}}, "a", "b") == (True, 1)
    assert dig_known({"a": {}}, "a", "b") == (True, None)


def test_only_a_provider_resource_with_no_property_is_unknown_whole():
    assert outputs_unknown({}, "kubernetes:helm.sh/v3:Release")
    assert outputs_unknown({}, "gcp:container/nodePool:NodePool")
    assert not outputs_unknown({"chart": "x"}, "kubernetes:helm.sh/v3:Release")
    assert not outputs_unknown({}, "gpu-fungibility:index:GkeCluster")  # a component
    assert not outputs_unknown({}, "pulumi:pulumi:Stack")


def test_pending_reports_nothing_when_all_was_judged_and_names_what_was_not():
    pending = Pending()
    pending.finish()
    pending.add("namespace", "Helm release x")
    pending.add("namespace", "Helm release x")
    with pytest.raises(NotJudged, match="not judged until known: namespace of Helm release x$"):
        pending.finish()


# ---- whole resources unknown ----------------------------------------------------------------------


def _kubernetes_outputs_unknown(stack: list[R]) -> list[R]:
    """The stack as AnalyzeStack sees it in a first preview with no inputs kept: every Kubernetes object empty."""
    stack = copy.deepcopy(stack)
    for r in stack:
        if r.type.startswith("kubernetes:"):
            r.props = {}
    return stack


@pytest.mark.parametrize("stack", [gke_stack, eks_stack])
@pytest.mark.parametrize("policy", STACK_POLICIES, ids=lambda p: p.name)
def test_no_stack_rule_reads_an_unknown_object_as_absent(policy, stack):
    violations, pending = run(policy.validate, _kubernetes_outputs_unknown(stack()))
    assert violations.violations == []


@pytest.mark.parametrize("name", ["dra-pool-served", "dra-reachable-pools-served", "claim-shape",
                                  "gke-dra-driver-install", "claim-follows-compute-class"])
def test_what_an_unknown_object_could_change_is_named_not_judged(name):
    policy = next(p for p in STACK_POLICIES if p.name == name)
    _, pending = run(policy.validate, _kubernetes_outputs_unknown(gke_stack()))
    assert pending and all("(urn:pulumi:" in item or "pool" in item for item in pending), pending


def test_a_dra_pool_with_no_driver_at_all_is_still_refused_while_other_objects_are_unknown():
    """Unknown Deployments cannot install a DRA driver: only an unknown Helm release could."""
    stack = [r for r in gke_stack() if r.type != RELEASE]
    for r in stack:
        if r.type.endswith(":Deployment"):
            r.props = {}
    violations, _ = run(validate_dra_pool_served, stack)
    assert len(violations.violations) == 3 and all("installs no" in m for m in violations.messages)


# ---- values unknown inside known properties ------------------------------------------------------------


def _critical_dra_release(namespace: str) -> R:
    release = copy.deepcopy(find(gke_stack(), "nvidia-dra"))
    release.props["namespace"] = namespace
    release.props["values"]["kubeletPlugin"]["priorityClassName"] = "system-node-critical"
    return release


def _namespace(name: str) -> R:
    return R("kubernetes:core/v1:Namespace", f"{name}-ns",
             {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})


def test_a_namespace_taken_from_a_namespace_resource_is_known_from_its_name():
    """The release's namespace is the Namespace's output (unknown); the Namespace's name is known: no quota there."""
    stack = [r for r in gke_stack() if r.name != "nvidia-dra"]
    release, namespace = _critical_dra_release(STRING), _namespace("dra-driver-nvidia-gpu")
    violations, pending = run(validate_gke_critical_priority_quota, [*stack, namespace, release],
                              {release.urn: {"namespace": [namespace.urn]}})
    assert pending == [] and len(violations.violations) == 1
    assert "in namespace dra-driver-nvidia-gpu" in violations.messages[0]


def test_a_namespace_no_one_can_know_is_not_judged():
    stack = [r for r in gke_stack() if r.name != "nvidia-dra"]
    violations, pending = run(validate_gke_critical_priority_quota, [*stack, _critical_dra_release(STRING)])
    assert violations.violations == []
    assert pending and "system-node-critical" in pending[0]


def test_unknown_namespaces_never_match_each_other():
    """A quota and a release whose namespaces are both unknown are not in the same namespace for sure."""
    stack = [r for r in gke_stack() if r.name != "nvidia-dra"]
    quota = R("kubernetes:core/v1:ResourceQuota", "quota", {
        "apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": "critical", "namespace": STRING},
        "spec": {"hard": {"pods": "10"}, "scopeSelector": {"matchExpressions": [
            {"scopeName": "PriorityClass", "operator": "In", "values": ["system-node-critical"]}]}}})
    violations, pending = run(validate_gke_critical_priority_quota, [*stack, quota, _critical_dra_release(STRING)])
    assert violations.violations == [] and pending


def test_a_claim_with_an_unknown_count_is_not_judged_and_not_refused():
    stack = gke_stack()
    template = find(stack, "vllm-gpu-template") if any(r.name == "vllm-gpu-template" for r in stack) else next(
        r for r in stack if r.type.endswith(":ResourceClaimTemplate"))
    template.props["spec"]["spec"]["devices"]["requests"][0]["firstAvailable"][0]["count"] = \
        proxy.UNKNOWN_NUMBER_VALUE
    policy = next(p for p in STACK_POLICIES if p.name == "claim-shape")
    violations, pending = run(policy.validate, stack)
    assert violations.violations == [] and any("count" in item for item in pending)


def test_a_stack_view_resolves_nothing_it_cannot_trace():
    release = _critical_dra_release(STRING)
    view = StackView.from_policy_resources(stack_args([release]).resources)
    assert view.releases[0].namespace == UNKNOWN


# ---- resource rules --------------------------------------------------------------------------------


def run_resource(rule, resource: R):
    collector = Collector()
    try:
        rule(resource_args(resource), collector)
    except NotJudged as exc:
        return collector, exc.items
    return collector, []


def _with(resource: R, path: tuple, value) -> R:
    resource = copy.deepcopy(resource)
    node = resource.props
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    return resource


@pytest.mark.parametrize(("policy", "name", "path"), [
    ("pinned-charts", "nvidia-dra", ("version",)),
    ("dra-kubernetes-version", "cluster", ("minMasterVersion",)),
    ("no-public-inference-endpoint", "vllm-gpu-svc", ("metadata", "annotations")),
    ("no-public-inference-endpoint", "vllm-gpu-svc", ("spec", "type")),
    ("accelerator-pools-spot", "a100-80gb-pool", ("nodeConfig", "spot")),
])
def test_a_resource_rule_does_not_judge_the_value_it_decides_on_while_unknown(policy, name, path):
    rule = next(p for p in POLICIES if p.name == policy).validate
    violations, pending = run_resource(rule, _with(find(gke_stack(), name), path, STRING))
    assert violations.violations == [] and pending
    assert policy == "pinned-charts" or ".".join(path) in pending[0] or "annotations" in pending[0], pending


def test_a_token_taken_from_a_value_not_known_yet_is_not_judged():
    deployment = copy.deepcopy(find(gke_stack(), "vllm-gpu"))
    container = deployment.props["spec"]["template"]["spec"]["containers"][0]
    container["env"] = [{"name": "HF_TOKEN", "valueFrom": STRING}]
    rule = next(p for p in POLICIES if p.name == "secrets-from-secret-store").validate
    violations, pending = run_resource(rule, deployment)
    assert violations.violations == [] and "env HF_TOKEN" in pending[0]
    container["env"] = [{"name": "HF_TOKEN", "value": "hf_" + "a" * 30}]
    violations, pending = run_resource(rule, deployment)
    assert len(violations.violations) == 1 and pending == []


def test_an_eks_group_whose_minimum_is_unknown_is_not_judged():
    group = _with(find(eks_stack(), "l40s-group") if any(r.name == "l40s-group" for r in eks_stack())
                  else next(r for r in eks_stack() if r.type == "aws:eks/nodeGroup:NodeGroup"),
                  ("scalingConfig", "minSize"), proxy.UNKNOWN_NUMBER_VALUE)
    rule = next(p for p in POLICIES if p.name == "eks-dra-scale-from-zero").validate
    violations, pending = run_resource(rule, group)
    assert violations.violations == [] and "scalingConfig.minSize" in pending[0]


def test_an_endpoint_setting_not_known_yet_is_not_judged():
    from policies.rules.endpoint import validate_control_plane_reachable

    cluster = R("gcp:container/cluster:Cluster", "cluster", {
        "name": "c", "controlPlaneEndpointsConfig": {"dnsEndpointConfig": {"allowExternalTraffic": STRING}},
        "privateClusterConfig": {"enablePrivateEndpoint": True}})
    provider = R("pulumi:providers:kubernetes", "k8s", {"kubeconfig": STRING}, dependencies=[cluster.urn])
    violations, pending = run(validate_control_plane_reachable, [cluster, provider])
    assert violations.violations == []
    assert "controlPlaneEndpointsConfig.dnsEndpointConfig.allowExternalTraffic" in pending[0]
    cluster.props["controlPlaneEndpointsConfig"]["dnsEndpointConfig"]["allowExternalTraffic"] = False
    violations, pending = run(validate_control_plane_reachable, [cluster, provider])
    assert len(violations.violations) == 1 and pending == []


def test_the_stack_call_gets_the_inputs_the_same_pack_analyzed_while_outputs_are_unknown():
    """policies/preview_inputs.py on the Analyzer messages themselves (what the engine sends in a first preview)."""
    from google.protobuf import struct_pb2
    from pulumi.runtime.proto import analyzer_pb2

    from policies import preview_inputs

    def struct(value):
        message = struct_pb2.Struct()
        message.update(value)
        return message

    release = "urn:pulumi:s::p::kubernetes:helm.sh/v3:Release::dra"
    cluster = "urn:pulumi:s::p::gcp:container/cluster:Cluster::c"
    never_analyzed = "urn:pulumi:s::p::kubernetes:core/v1:Namespace::ns"
    preview_inputs.forget()
    preview_inputs.remember(analyzer_pb2.AnalyzeRequest(urn=release, properties=struct(
        {"chart": "dra-driver-nvidia-gpu", "namespace": STRING})))
    preview_inputs.remember(analyzer_pb2.AnalyzeRequest(urn=cluster, properties=struct({"name": "c"})))
    request = analyzer_pb2.AnalyzeStackRequest(resources=[
        analyzer_pb2.AnalyzerResource(urn=release, properties=struct({})),
        analyzer_pb2.AnalyzerResource(urn=cluster, properties=struct(
            {"name": "c", "endpoint": STRING, "controlPlaneEndpointsConfig": STRING})),
        analyzer_pb2.AnalyzerResource(urn=never_analyzed, properties=struct({}))])
    assert preview_inputs.fill(request) == 2
    assert dict(request.resources[0].properties) == {"chart": "dra-driver-nvidia-gpu", "namespace": STRING}
    assert dict(request.resources[1].properties) == {"name": "c"}  # computed, and not set by the program
    assert dict(request.resources[2].properties) == {}  # unknown whole: the rules say it is not judged
    preview_inputs.forget()


def test_a_workload_whose_pod_spec_is_unknown_is_named_by_every_rule_that_reads_workloads():
    stack = gke_stack()
    find(stack, "vllm-gpu").props["spec"]["template"] = STRING
    for name in ("dra-reachable-pools-served", "claim-alternative-satisfiable", "preference-follows-claim",
                 "serving-requests-fit-nodes", "claim-follows-compute-class"):
        policy = next(p for p in STACK_POLICIES if p.name == name)
        violations, pending = run(policy.validate, stack)
        assert violations.violations == [], name
        assert any("pod spec of Deployment vllm-gpu" in item for item in pending), (name, pending)


def test_a_device_class_whose_selectors_are_unknown_is_not_read_as_selecting_everything():
    from policies.rules.reach import class_selectors

    device_class = R("kubernetes:resource.k8s.io/v1:DeviceClass", "big-gpu", {
        "apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "big-gpu"},
        "spec": {"selectors": STRING}})
    view = StackView.from_policy_resources(stack_args([device_class]).resources)
    assert class_selectors(view)["big-gpu"] == [UNKNOWN]


def test_a_driver_release_with_an_unknown_value_is_not_read_as_selecting_nothing():
    """kubeletPlugin.nodeSelector {nvidia.com/gpu.dra: <unknown>}: the plugin may or may not select the pools."""
    stack = gke_stack()
    values = find(stack, "nvidia-dra").props["values"]
    values["kubeletPlugin"]["nodeSelector"] = {"nvidia.com/gpu.dra": STRING}
    violations, pending = run(validate_dra_pool_served, stack)
    assert violations.violations == []
    assert any("values.kubeletPlugin.nodeSelector.nvidia.com/gpu.dra" in item for item in pending), pending


def test_a_cluster_whose_version_is_unknown_is_not_judged_supported():
    rule = next(p for p in POLICIES if p.name == "kubernetes-version-supported").validate
    violations, pending = run_resource(rule, _with(find(gke_stack(), "cluster"), ("minMasterVersion",), STRING))
    assert violations.violations == [] and "minMasterVersion of cluster" in pending[0]


def test_a_daemonset_whose_images_are_unknown_may_be_the_driver_installer():
    from policies.rules.gke import validate_gke_dra_driver_install

    stack = gke_stack()
    installer = find(stack, "nvidia-driver-installer")
    installer.props["metadata"]["name"] = "node-setup"
    installer.props["spec"]["template"]["spec"]["initContainers"][0]["image"] = STRING
    violations, pending = run(validate_gke_dra_driver_install, stack)
    assert violations.violations == [] and any("an NVIDIA driver installer or not" in item for item in pending)
    installer.props["spec"]["template"]["spec"]["initContainers"][0]["image"] = "busybox"
    violations, _ = run(validate_gke_dra_driver_install, stack)
    assert violations.violations and all("no NVIDIA driver installer" in m for m in violations.messages)


@pytest.mark.parametrize("stack_of", [gke_stack, eks_stack])
def test_claim_follows_compute_class_refuses_nothing_on_unknown_orders_or_placements(stack_of):
    from policies.rules.claims import validate_claim_follows_compute_class

    for mutate in ("order", "placement", "requests"):
        stack = stack_of()
        for r in stack:
            if r.type.endswith(":ComputeClass") and mutate == "order":
                r.props["spec"]["priorities"] = STRING
            if r.type.endswith(":ConfigMap") and mutate == "order":
                r.props["data"]["priorities"] = STRING
            if r.type.endswith(":Deployment") and mutate == "placement":
                r.props["spec"]["template"]["spec"]["nodeSelector"] = {"cloud.google.com/compute-class": STRING}
            if r.type.endswith(":ResourceClaimTemplate") and mutate == "requests":
                r.props["spec"]["spec"]["devices"]["requests"][0]["name"] = STRING
        violations, _ = run(validate_claim_follows_compute_class, stack)
        assert violations.violations == [], (mutate, violations.messages)


# ---- every value, one at a time --------------------------------------------------------------------------


def _verdicts(stack: list[R]) -> set[tuple[str, str]]:
    """(policy, URN) of every violation of every rule; a rule that does not judge (UnknownValueError) adds none."""
    found: set[tuple[str, str]] = set()
    for policy in POLICIES:
        collector = Collector()
        runs = ([stack_args(stack)] if type(policy).__name__ == "StackValidationPolicy"
                else [resource_args(r) for r in stack])
        for args in runs:
            try:
                policy.validate(args, collector)
            except UnknownValueError:
                pass
            found |= {(policy.name, urn or getattr(args, "urn", "")) for _, urn in collector.violations}
            collector.violations.clear()
    return found


def _paths(node, path=()):
    if path:
        yield path
    if isinstance(node, dict):
        for key, value in node.items():
            yield from _paths(value, (*path, key))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from _paths(value, (*path, index))


@pytest.mark.parametrize("stack_of", [gke_stack, eks_stack])
def test_no_value_unknown_during_the_preview_adds_a_violation_or_breaks_a_rule(stack_of, monkeypatch):
    """Each property of each resource in turn (a leaf, a list, an object) made the engine's unknown: every rule
    still runs, and none reports what it did not report with the value known."""
    monkeypatch.setenv("GPU_FUNGIBILITY_JUDGE_DATE", "2026-06-01")
    base = stack_of()
    known = _verdicts(base)
    added = {}
    for index, resource in enumerate(base):
        for path in list(_paths(resource.props)):
            stack = copy.deepcopy(base)
            node = stack[index].props
            for key in path[:-1]:
                node = node[key]
            node[path[-1]] = STRING
            new = _verdicts(stack) - known
            if new:
                added[f"{resource.name}: {'.'.join(map(str, path))}"] = sorted(new)
    assert added == {}


def test_an_object_whose_metadata_is_unknown_is_in_no_namespace_for_sure():
    """Not "default": a kube-system DaemonSet with a system-node-critical priority is not refused for it."""
    stack = gke_stack()
    installer = find(stack, "nvidia-driver-installer")
    installer.props["spec"]["template"]["spec"]["priorityClassName"] = "system-node-critical"
    assert run(validate_gke_critical_priority_quota, stack)[0].violations == []
    installer.props["metadata"] = STRING
    violations, pending = run(validate_gke_critical_priority_quota, stack)
    assert violations.violations == [] and any("system-node-critical" in item for item in pending), pending


def test_an_eks_group_whose_scaling_config_is_unknown_whole_is_not_judged():
    group = _with(next(r for r in eks_stack() if r.type == "aws:eks/nodeGroup:NodeGroup"), ("scalingConfig",), STRING)
    rule = next(p for p in POLICIES if p.name == "eks-dra-scale-from-zero").validate
    violations, pending = run_resource(rule, group)
    assert violations.violations == [] and "scalingConfig.minSize" in pending[0]
