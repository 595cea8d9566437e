"""Stack policies judge a Kubernetes object on its inputs while the preview cannot know its outputs.

The engine hands stack policies each resource's *outputs* (``AnalyzeStack``), resource policies its *inputs*
(``Analyze``), pulumi v3.274.1 ``pkg/resource/deploy/step_generator.go``. In a stack's first preview the
Kubernetes provider is not configured (its kubeconfig comes from the cluster's unknown endpoint), and a
preview ``Create`` through an unconfigured provider returns an empty property map
(``sdk/go/common/resource/plugin/provider_plugin.go``): every Kubernetes object, Helm release included,
reaches the stack policies with no property at all, although the engine sent the pack each one's inputs a
moment before. Read as they come, the driver releases, the installer DaemonSet and the claim templates would
be absent, and the pack would refuse every first deployment (and miss what is wrong in them).

:func:`install` keeps, per URN, the inputs ``Analyze`` received in this pack process (the engine starts one
analyzer per preview and calls ``Analyze`` for every resource before ``AnalyzeStack``), and gives an
``AnalyzeStack`` resource whose properties are empty those inputs instead. It is what the engine itself
did before provider previews (``PULUMI_LEGACY_PROVIDER_PREVIEW``: "return the inputs as the state"), and
what a Kubernetes object's outputs are made of (its spec as sent, plus status). Likewise a top-level output
of a cloud resource that is unknown and that the program did not set (a GKE cluster's
``controlPlaneEndpointsConfig`` left to GKE) is dropped: the rules judge an unset setting as the cloud's
default, as they do on the offline plan, and the provider computing it is the default being applied. Values
inside the inputs
that flow from other resources' outputs stay unknown (the engine's sentinels), and the rules treat them as
unknown (:mod:`policies.unknowns`). A resource whose inputs the process has not seen keeps its empty
properties, and the rules report it as not judged until known.

Nothing changes when outputs are known (an update preview, ``pulumi up``): only empty property maps are
filled. Installed with the pack whether or not :mod:`policies.runtime` is (it wraps the servicer's two
methods, and the batch call goes through ``Analyze``), on any pulumi-policy version: the verdicts of a first
preview depend on it, and it reads no private state, only the class ``_PolicyAnalyzerServicer`` and its two
methods, named after the Analyzer service's calls (a layout without them gets nothing, and says so).
"""

from __future__ import annotations

import functools
from typing import Any

_MARK = "_gpu_fungibility_preview_inputs"
#: URN -> the properties its last ``Analyze`` request carried, serialized (a few bytes per property; the
#: request itself is not kept alive).
_inputs: dict[str, bytes] = {}


def remember(request: Any) -> None:
    """Keep the inputs of one ``AnalyzeRequest``."""
    if request.urn:
        _inputs[request.urn] = request.properties.SerializeToString()


def _kept(urn: str) -> Any:
    from google.protobuf import struct_pb2

    return struct_pb2.Struct.FromString(_inputs[urn])


def fill(request: Any) -> int:
    """Give each resource of an ``AnalyzeStackRequest`` with empty properties the inputs kept for it, and drop
    from the others the top-level outputs that are unknown and that the program did not set; how many changed."""
    from .unknowns import SENTINELS

    changed = 0
    for item in request.resources:
        if item.urn not in _inputs:
            continue
        fields = item.properties.fields
        if len(fields) == 0:
            inputs = _kept(item.urn)
            if len(inputs.fields):
                item.properties.CopyFrom(inputs)
                changed += 1
            continue
        unknown = [key for key in fields
                   if fields[key].WhichOneof("kind") == "string_value" and fields[key].string_value in SENTINELS]
        if not unknown:
            continue
        inputs = _kept(item.urn)
        unset = [key for key in unknown if key not in inputs.fields]
        for key in unset:
            del fields[key]
        changed += bool(unset)
    return changed


def forget() -> None:
    _inputs.clear()


def install() -> bool:
    """Wrap the policy runtime's ``Analyze`` and ``AnalyzeStack``; False when its layout is not the one known."""
    from pulumi_policy import policy as runtime

    servicer = getattr(runtime, "_PolicyAnalyzerServicer", None)
    if servicer is None or not hasattr(servicer, "Analyze") or not hasattr(servicer, "AnalyzeStack"):
        import sys

        print("gpu-fungibility policy pack: this pulumi-policy has no _PolicyAnalyzerServicer with Analyze and "
              "AnalyzeStack; a first preview's Kubernetes objects reach the stack policies without their inputs "
              "(policies/preview_inputs.py)", file=sys.stderr, flush=True)
        return False
    if getattr(servicer, _MARK, False):
        return True
    analyze, analyze_stack = servicer.Analyze, servicer.AnalyzeStack

    @functools.wraps(analyze)
    def remembering(self: Any, request: Any, context: Any) -> Any:
        remember(request)
        return analyze(self, request, context)

    @functools.wraps(analyze_stack)
    def filling(self: Any, request: Any, context: Any) -> Any:
        fill(request)
        return analyze_stack(self, request, context)

    servicer.Analyze, servicer.AnalyzeStack = remembering, filling
    setattr(servicer, _MARK, True)
    return True
