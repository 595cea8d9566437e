"""A stand-in resource provider plugin for a cloud whose real provider cannot be had here.

It serves the provider packages each registered cloud's real-engine module names (``STANDIN_PACKAGES`` of
``pulumi_engine/<cloud>.py``, :mod:`pulumi_engine.cloud_parts`), and takes from the same module which outputs
carry a cluster's credentials and how they point at the rehearsal's API server.

The real Pulumi CLI starts it as it starts any provider plugin: it runs the executable, reads the port it prints,
and speaks the ResourceProvider gRPC service to it. It claims the version the installed Python SDK names in its
``pulumi-plugin.json`` (:func:`sdk_plugin_version`), so the engine names its default provider exactly as it would
name the real one (``default_10_2_0``).

What it does and does not do, so nobody mistakes it for the real provider:

- ``Check`` hands the program's inputs back unchanged: no defaults, no autonaming, no validation against the
  cloud's schema. What the engine records as a resource's inputs is therefore what the program sent.
- ``Create`` in a preview answers the inputs plus the computed outputs the program reads back (the same table as
  the offline plan's mocks, :func:`offline_plan.mocks.outputs_by_type`). In the ``first`` mode (a stack's first
  preview) every computed value is unknown, as a real provider's are before the resource exists; in the
  ``update`` mode they are known, as they are once the resource exists, except a cluster's API server address and
  CA (:func:`without_credentials`; the ``apply`` mode answers the rehearsal's, :func:`with_cluster`). Outputs it
  does not list are left out, which the SDK reads as unknown in a preview.
- ``Invoke`` answers the offline plan's canned results (:func:`offline_plan.mocks.call_results`); a function
  answering a cluster's credentials is answered as the cluster's outputs are (:func:`credentials_answer`).
- ``Diff`` compares old and new inputs key by key; it knows none of the cloud's replacement rules
  (``plan_diff`` does).

Run as ``python -m pulumi_engine.standin <package> <version> [engine flags...]``; the mode comes from
``GPU_FUNGIBILITY_STANDIN_MODE`` (``first`` when unset).
"""

from __future__ import annotations

import json
import os
import signal
import sys
from concurrent import futures
from pathlib import Path
from typing import Any

from pulumi_engine import cloud_parts

MODE_ENV = "GPU_FUNGIBILITY_STANDIN_MODE"
MODES = ("first", "update")
#: ``apply`` (``pulumi up`` onto the rehearsal's control plane, :mod:`pulumi_engine.up`): outputs known, and a
#: cluster's endpoint and CA those of the API server named in :data:`CLUSTER_ENV` (JSON: ``server``, ``ca``).
APPLY = "apply"
CLUSTER_ENV = "GPU_FUNGIBILITY_STANDIN_CLUSTER"
#: The engine's wire form of an unknown value (pulumi/sdk go/common/resource/plugin/rpc.go UnknownStringValue).
UNKNOWN = "04da6b54-80e4-46f7-96ec-b56ff0331ba9"
#: The provider the project builds for real (:mod:`pulumi_engine.build`) -> its Python SDK's module.
REAL_PACKAGES = {"kubernetes": "pulumi_kubernetes"}


def packages() -> dict[str, str]:
    """The packages the project previews with a stand-in (the cloud providers that cannot be built from Go
    modules here, as the registered clouds name them) -> their Python SDK's module."""
    return cloud_parts.standin_packages()


def sdk_modules() -> dict[str, str]:
    """Every provider package the program uses -> its Python SDK's module."""
    return {**packages(), **REAL_PACKAGES}


def sdk_plugin_version(package: str) -> str:
    """The provider version the installed Python SDK asks the engine for (its ``pulumi-plugin.json``)."""
    import importlib.util

    modules = sdk_modules()
    if package not in modules:
        raise LookupError(f"no registered cloud names the provider package {package}")
    spec = importlib.util.find_spec(modules[package])
    if spec is None or not spec.submodule_search_locations:
        raise LookupError(f"the Python SDK of {package} is not installed")
    path = Path(next(iter(spec.submodule_search_locations))) / "pulumi-plugin.json"
    return json.loads(path.read_text())["version"]


def unknown_over(inputs: Any, outputs: Any) -> Any:
    """``outputs`` as a preview sees them before the resource exists: what echoes the inputs stays, the rest is unknown.

    Maps are walked key by key, so a computed field inside an input block (a cluster's DNS endpoint inside its
    endpoints block) is unknown while the block's input fields stay known.
    """
    if isinstance(inputs, dict) and isinstance(outputs, dict):
        return {k: unknown_over(inputs[k], v) if k in inputs else UNKNOWN for k, v in outputs.items()}
    return inputs if inputs == outputs else UNKNOWN


def computed_outputs(type_: str, name: str, inputs: dict[str, Any], mode: str) -> dict[str, Any]:
    """The inputs and the computed outputs of a resource of ``type_`` in ``mode`` (see the module's docstring)."""
    from offline_plan.mocks import computed_outputs as mocked

    outputs = mocked(type_, name, inputs)
    if mode == "first":
        return unknown_over(inputs, outputs)
    return with_cluster(type_, outputs) if mode == APPLY else without_credentials(type_, outputs)


def _api_server() -> cloud_parts.ApiServer | None:
    target = json.loads(os.environ.get(CLUSTER_ENV) or "{}")
    return cloud_parts.ApiServer(target["server"], target["ca"]) if target else None


def with_cluster(type_: str, outputs: dict[str, Any]) -> dict[str, Any]:
    """A cluster's outputs pointing at the API server of :data:`CLUSTER_ENV` (the rehearsal's, on loopback), as
    the cloud's real-engine module points them (``outputs_at``)."""
    api = _api_server()
    _, part = cloud_parts.credential_outputs(type_)
    if part is None or api is None:
        return outputs
    return part.outputs_at(type_, json.loads(json.dumps(outputs)), api)


def credentials_answer(token: str, result: dict[str, Any], mode: str) -> dict[str, Any]:
    """What a provider function answering a cluster's credentials returns in ``mode``: every field unknown in a
    preview, pointing at the API server of :data:`CLUSTER_ENV` in ``apply`` (the cloud module's ``invoke_at``);
    any other function's result as it is."""
    part = cloud_parts.credential_invoke(token)
    if part is None:
        return result
    if mode != APPLY:
        return {k: UNKNOWN for k in result}
    api = _api_server()
    return part.invoke_at(token, json.loads(json.dumps(result)), api) if api is not None else result


def without_credentials(type_: str, outputs: dict[str, Any]) -> dict[str, Any]:
    """A cluster's known outputs with its API server and CA unknown, so the Kubernetes provider stays unconfigured.

    With a known kubeconfig the real Kubernetes provider would try to reach the cluster, and a Helm Release
    whose inputs are all known loads its chart from the registry in ``Check``
    (pulumi-kubernetes provider/pkg/provider/helm_release.go, the pinned module): neither can happen offline.
    In a real update preview both are known; this mode gives up only those values.
    """
    out = json.loads(json.dumps(outputs))
    for path in cloud_parts.credential_outputs(type_)[0]:
        *parents, last = path.split(".")
        holder = out
        for key in parents:
            holder = holder.get(key) if isinstance(holder, dict) else None
        if isinstance(holder, dict) and last in holder:
            holder[last] = UNKNOWN
    return out


def _servicer(package: str, version: str, mode: str):
    from google.protobuf import empty_pb2, json_format, struct_pb2
    from pulumi.runtime.proto import plugin_pb2, provider_pb2, provider_pb2_grpc

    def to_dict(message) -> dict[str, Any]:
        return json_format.MessageToDict(message) if message is not None else {}

    def to_struct(value: dict[str, Any]) -> struct_pb2.Struct:
        struct = struct_pb2.Struct()
        struct.update(value)
        return struct

    def type_and_name(urn: str) -> tuple[str, str]:
        parts = urn.split("::")
        return parts[2].split("$")[-1], parts[-1]

    class StandIn(provider_pb2_grpc.ResourceProviderServicer):
        def Handshake(self, request, context):  # noqa: N802 (gRPC method names)
            return provider_pb2.ProviderHandshakeResponse(accept_secrets=True, accept_resources=True)

        def GetPluginInfo(self, request, context):  # noqa: N802
            return plugin_pb2.PluginInfo(version=version)

        def GetSchema(self, request, context):  # noqa: N802
            return provider_pb2.GetSchemaResponse(schema=json.dumps({"name": package, "version": version}))

        def CheckConfig(self, request, context):  # noqa: N802
            return provider_pb2.CheckResponse(inputs=request.news)

        def DiffConfig(self, request, context):  # noqa: N802
            return provider_pb2.DiffResponse(changes=provider_pb2.DiffResponse.DIFF_NONE)

        def Configure(self, request, context):  # noqa: N802
            return provider_pb2.ConfigureResponse(acceptSecrets=True, supportsPreview=True, acceptResources=True)

        def Check(self, request, context):  # noqa: N802
            return provider_pb2.CheckResponse(inputs=request.news)

        def Diff(self, request, context):  # noqa: N802
            olds, news = to_dict(request.old_inputs) or to_dict(request.olds), to_dict(request.news)
            changed = sorted(k for k in set(olds) | set(news) if olds.get(k) != news.get(k))
            return provider_pb2.DiffResponse(
                changes=provider_pb2.DiffResponse.DIFF_SOME if changed else provider_pb2.DiffResponse.DIFF_NONE,
                diffs=changed)

        def Create(self, request, context):  # noqa: N802
            type_, name = type_and_name(request.urn)
            inputs = to_dict(request.properties)
            outputs = computed_outputs(type_, name, inputs, mode if request.preview or mode == APPLY else "update")
            resource_id = "" if request.preview and mode == "first" else f"{inputs.get('name') or name}-id"
            return provider_pb2.CreateResponse(id=str(resource_id), properties=to_struct(outputs))

        def Read(self, request, context):  # noqa: N802
            return provider_pb2.ReadResponse(id=request.id, properties=request.properties, inputs=request.inputs)

        def Update(self, request, context):  # noqa: N802
            type_, name = type_and_name(request.urn)
            outputs = computed_outputs(type_, name, to_dict(request.news), "update")
            return provider_pb2.UpdateResponse(properties=to_struct(outputs))

        def Delete(self, request, context):  # noqa: N802
            return empty_pb2.Empty()

        def Invoke(self, request, context):  # noqa: N802
            from offline_plan.mocks import call_results

            results = call_results()
            if request.tok not in results:
                return provider_pb2.InvokeResponse(failures=[provider_pb2.CheckFailure(
                    reason=f"the {package} stand-in has no answer for {request.tok}")])
            result = credentials_answer(request.tok, results[request.tok], mode)
            return provider_pb2.InvokeResponse(**{"return": to_struct(result)})

        def GetMapping(self, request, context):  # noqa: N802
            return provider_pb2.GetMappingResponse(provider="", data=b"")

        def GetMappings(self, request, context):  # noqa: N802
            return provider_pb2.GetMappingsResponse(providers=[])

        def Cancel(self, request, context):  # noqa: N802
            return empty_pb2.Empty()

        def Attach(self, request, context):  # noqa: N802
            return empty_pb2.Empty()

    return StandIn(), provider_pb2_grpc


def serve(package: str, version: str) -> None:
    """Serve the stand-in on a port the kernel picks, print the port (the plugin handshake) and wait."""
    import grpc

    mode = os.environ.get(MODE_ENV, "first")
    if mode not in (*MODES, APPLY):
        raise SystemExit(f"{MODE_ENV} must be one of {', '.join(MODES)}, not {mode!r}")
    servicer, grpc_module = _servicer(package, version, mode)
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=8),
                         options=[("grpc.max_receive_message_length", 400 * 1024 * 1024)])
    grpc_module.add_ResourceProviderServicer_to_server(servicer, server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    # The engine stops its plugins with SIGINT (or SIGTERM): leave quietly, as a provider does.
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, lambda *_: os._exit(0))
    print(port, flush=True)
    server.wait_for_termination()


def main(argv: list[str]) -> None:
    if len(argv) < 2:
        raise SystemExit("usage: python -m pulumi_engine.standin <package> <version> [engine flags...]")
    serve(argv[0], argv[1])


if __name__ == "__main__":
    main(sys.argv[1:])
