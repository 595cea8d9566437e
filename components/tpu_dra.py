"""The TPU DRA driver (chart ``dra-driver-google-tpu``, seed 003), for GKE TPU pools.

Seed 003's values: no priority class for the kubelet plugin (GKE refuses
``system-node-critical`` outside kube-system without a quota) and a toleration
for GKE's ``google.com/tpu`` taint. Tolerations for every other taint on the
TPU pools (a compute-class taint, user taints) are added explicitly. The node
affinity is stated too: ``gke-tpu-accelerator`` present and
``gke-tpu-dra-driver=true``, the TPU DRA pools only. Chart 0.1.0 selected those
nodes by default; from 0.2.0 the chart's default is no affinity at all (the
plugin runs on every node and idles where there is no TPU,
kubernetes-sigs/dra-driver-google-tpu v0.2.0 ``values.yaml``), so without this
value every untainted node would run a privileged, host-network pod.

The chart's own ValidatingAdmissionPolicy, which keeps the plugin's service account to the ResourceSlices of
its own node, matches ``resource.k8s.io/v1beta1`` only (v0.2.0 and the repository's head,
``templates/validatingadmissionpolicy.yaml``), while the plugin writes ``v1`` (cmd/tpu-dra-kubeletplugin imports
k8s.io/api/resource/v1). From Kubernetes 1.35 ``v1beta1`` is not served by default
(pkg/controlplane/instance.go, v1.35.4, ``betaAPIGroupVersionsDisabledByDefault``; GKE turns on no beta API
unless asked), and a policy that names only an unserved version matches nothing: on the rehearsal's
kube-apiserver v1.35.4 such a policy let a ``v1`` write through that the same policy on ``v1`` refused. So a
compromised plugin pod could rewrite every node's devices. The component adds the same restriction for ``v1``
itself (:func:`resource_slice_policy`).
"""

import copy
from collections.abc import Sequence
from typing import Any

import pulumi
from pulumi_kubernetes import admissionregistration
from pulumi_kubernetes.meta.v1 import ObjectMetaArgs

from . import helm_values, pins
from .driver_release import DriverRelease, DriverReleaseArgs, kubelet_plugin_affinity
from .node_selection import NodeTaint, tolerations_for
from .wiring_keys import GKE_TPU_ACCELERATOR, GKE_TPU_DRA_DRIVER, TPU_TAINT_KEY

admission_v1 = admissionregistration.v1

RELEASE_NAME = "dra-driver-google-tpu"
CHART_NAME = "dra-driver-google-tpu"  # Chart.yaml ``name``: the default of the chart's name templates
#: The project's own policy (and binding) keeping the plugin to its node's ResourceSlices.
SLICE_POLICY_NAME = "gpu-fungibility-tpu-dra-resourceslices"
#: What a service account token says about the node its pod runs on (ServiceAccountTokenPodNodeInfo, on by
#: default since Kubernetes 1.30 and GA in 1.32).
NODE_NAME_EXTRA = "authentication.kubernetes.io/node-name"
TPU_TOLERATION = {"key": TPU_TAINT_KEY, "operator": "Exists", "effect": "NoSchedule"}
KUBELET_PLUGIN_AFFINITY = kubelet_plugin_affinity(GKE_TPU_ACCELERATOR, GKE_TPU_DRA_DRIVER)


def tpu_dra_values(taints: Sequence[NodeTaint], extra: dict[str, Any] | None = None) -> dict[str, Any]:
    values = {
        "kubeletPlugin": {
            "priorityClassName": "",
            "tolerations": tolerations_for(taints, base=[TPU_TOLERATION]),
            "affinity": copy.deepcopy(KUBELET_PLUGIN_AFFINITY),
        },
    }
    return helm_values.merge(values, extra or {})


def service_account_name(release: str, values: dict[str, Any] | None) -> str:
    """The plugin's service account, as the chart's ``serviceAccountName`` template names it (v0.2.0
    ``templates/_helpers.tpl``: the full name is the release name when it contains the chart's name, else
    ``<release>-<name>``, 63 characters at most; the account ``<fullname>-service-account`` unless set)."""
    values = values or {}
    account = values.get("serviceAccount") or {}
    if account.get("create", True) is False:
        return account.get("name") or "default"
    if account.get("name"):
        return str(account["name"])
    if values.get("fullnameOverride"):
        full = str(values["fullnameOverride"])[:63].rstrip("-")
    else:
        name = values.get("nameOverride") or CHART_NAME
        full = (release if name in release else f"{release}-{name}")[:63].rstrip("-")
    return f"{full}-service-account"


def resource_slice_policy(namespace: str, account: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """A ValidatingAdmissionPolicy and its binding, as API objects: requests to ``resource.k8s.io/v1``
    ResourceSlices by the TPU plugin's service account (``namespace``: the chart's ``namespaceOverride`` or the
    release's namespace) are refused unless the slice belongs to the node the plugin's pod runs on (the node name
    its token carries). Checked on kube-apiserver v1.35.4 in tests/rehearsal/test_tpu_slice_policy.py."""
    node = f"request.userInfo.extra[?'{NODE_NAME_EXTRA}'][0].orValue('')"
    policy = {
        "apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicy",
        "metadata": {"name": SLICE_POLICY_NAME},
        "spec": {
            "failurePolicy": "Fail",
            "matchConstraints": {"resourceRules": [{
                "apiGroups": ["resource.k8s.io"], "apiVersions": ["v1"],
                "operations": ["CREATE", "UPDATE", "DELETE"], "resources": ["resourceslices"]}]},
            "matchConditions": [{
                "name": "tpu-kubelet-plugin",
                "expression": f"request.userInfo.username == 'system:serviceaccount:{namespace}:{account}'"}],
            "variables": [
                {"name": "pluginNode", "expression": node},
                {"name": "sliceNode", "expression":
                    "(request.operation == 'DELETE' ? oldObject : object).spec.?nodeName.orValue('')"},
            ],
            "validations": [
                {"expression": "variables.pluginNode != ''",
                 "message": "the TPU DRA kubelet plugin writes ResourceSlices only from a pod bound to a node"},
                {"expression": "variables.pluginNode == variables.sliceNode",
                 "messageExpression": "'the TPU DRA kubelet plugin on node ' + variables.pluginNode + "
                                      "' may not write the ResourceSlices of ' + (variables.sliceNode == '' ? "
                                      "'the cluster' : 'node ' + variables.sliceNode)"},
            ],
        },
    }
    binding = {
        "apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicyBinding",
        "metadata": {"name": SLICE_POLICY_NAME},
        "spec": {"policyName": SLICE_POLICY_NAME, "validationActions": ["Deny"]},
    }
    return policy, binding


class TpuDraDriverArgs(DriverReleaseArgs):
    """The TPU DRA driver release (chart and namespace ``dra-driver-google-tpu`` by default) and the TPU pools
    it serves (their ``node_taints``)."""


class TpuDraDriver(DriverRelease):
    """Namespace and the pinned ``dra-driver-google-tpu`` Helm release (provider via ``opts``)."""

    LEGACY_TYPE = "gpu-fungibility:tpu_dra:TpuDraDriver"
    RELEASE_NAME = RELEASE_NAME
    CHART, VERSION, NAMESPACE = pins.TPU_DRA_CHART, pins.TPU_DRA_VERSION, pins.TPU_DRA_NAMESPACE

    def __init__(self, name: str, args: TpuDraDriverArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__(name, args, opts)

    def chart_values(self, args: Any, taints: Sequence[NodeTaint], extra: dict[str, Any]) -> dict[str, Any]:
        return tpu_dra_values(taints, extra)

    def after_release(self, name: str, namespace: pulumi.Input[str], values: Any) -> None:
        self._slice_policy(name, namespace, values)

    def _slice_policy(self, name: str, namespace: pulumi.Input[str], values: Any) -> None:
        """The project's ResourceSlice policy for the plugin (see the module's docstring)."""
        objects = pulumi.Output.all(namespace, values).apply(
            lambda nv: resource_slice_policy((nv[1] or {}).get("namespaceOverride") or nv[0],
                                             service_account_name(RELEASE_NAME, nv[1])))
        spec = objects.apply(lambda o: o[0]["spec"])
        rule = spec["matchConstraints"]["resourceRules"][0]
        policy = admission_v1.ValidatingAdmissionPolicy(
            f"{name}-resourceslice-policy",
            metadata=ObjectMetaArgs(name=SLICE_POLICY_NAME),
            spec=admission_v1.ValidatingAdmissionPolicySpecArgs(
                failure_policy=spec["failurePolicy"],
                match_constraints=admission_v1.MatchResourcesArgs(resource_rules=[
                    admission_v1.NamedRuleWithOperationsArgs(
                        api_groups=rule["apiGroups"], api_versions=rule["apiVersions"],
                        operations=rule["operations"], resources=rule["resources"])]),
                match_conditions=[admission_v1.MatchConditionArgs(
                    name=spec["matchConditions"][0]["name"], expression=spec["matchConditions"][0]["expression"])],
                variables=[admission_v1.VariableArgs(name=spec["variables"][i]["name"],
                                                     expression=spec["variables"][i]["expression"]) for i in (0, 1)],
                validations=[
                    admission_v1.ValidationArgs(expression=spec["validations"][0]["expression"],
                                                message=spec["validations"][0]["message"]),
                    admission_v1.ValidationArgs(expression=spec["validations"][1]["expression"],
                                                message_expression=spec["validations"][1]["messageExpression"]),
                ]),
            opts=self.child())
        admission_v1.ValidatingAdmissionPolicyBinding(
            f"{name}-resourceslice-policy-binding",
            metadata=ObjectMetaArgs(name=SLICE_POLICY_NAME),
            spec=admission_v1.ValidatingAdmissionPolicyBindingSpecArgs(
                policy_name=objects.apply(lambda o: o[1]["spec"]["policyName"]),
                validation_actions=objects.apply(lambda o: o[1]["spec"]["validationActions"])),
            opts=self.child(depends_on=[policy]))
