"""Start the policy pack as the engine does and talk to its Analyzer gRPC service.

The engine (``NewPolicyAnalyzer`` in pulumi's ``analyzer_plugin.go``) runs
``pulumi-analyzer-policy-python <engine-address> . -virtualenv=<from
PulumiPolicy.yaml>`` with the pack directory as working directory; that script
runs ``<venv>/bin/python -u -m pulumi.policy <engine-address> .``. The pack's
``PolicyPack`` prints the port it serves on and blocks. The Python policy
runtime never dials the engine address, so any placeholder works offline.
"""

from __future__ import annotations

import os
import selectors
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc
from google.protobuf import empty_pb2, struct_pb2
from pulumi.runtime.proto import analyzer_pb2, analyzer_pb2_grpc

from policies.wire import BATCH_METHOD, ERROR_FIELD, REPLY_FIELD, frame, read_frames
from policy_gate.plan import PlanResource, name_of, type_of

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_PACK = ROOT / "policies"
PLACEHOLDER_ENGINE = "127.0.0.1:0"
START_TIMEOUT_S = 90.0
#: Deadline of the small calls (GetAnalyzerInfo, Configure). Analyze and AnalyzeStack have none: their time
#: grows with the plan, and a pack that dies ends them at once (the channel breaks).
RPC_TIMEOUT_S = 120.0
#: The largest message the Python policy runtime accepts (pulumi-policy 1.21 policy.py,
#: ``_MAX_RPC_MESSAGE_SIZE``: 400 MiB); the gate sends no larger one.
MAX_MESSAGE = 400 * 1024 * 1024
_MAX_MESSAGE = MAX_MESSAGE
_ANALYZE = "/pulumirpc.Analyzer/Analyze"
_ANALYZE_STACK = "/pulumirpc.Analyzer/AnalyzeStack"

LEVELS = {
    "advisory": analyzer_pb2.ADVISORY,
    "mandatory": analyzer_pb2.MANDATORY,
    "remediate": analyzer_pb2.REMEDIATE,
    "disabled": analyzer_pb2.DISABLED,
}
LEVEL_NAMES = {v: k for k, v in LEVELS.items()}


class AnalyzerError(RuntimeError):
    """The pack could not be started or answered with an error."""


@dataclass(frozen=True)
class PolicyDescription:
    name: str
    description: str
    level: str
    kind: str  # "resource" | "stack"
    config_properties: tuple[str, ...] = ()


@dataclass(frozen=True)
class PackInfo:
    name: str
    version: str
    policies: tuple[PolicyDescription, ...]
    initial_config: Mapping[str, tuple[str | None, dict[str, Any]]]


@dataclass(frozen=True)
class Diagnostic:
    policy: str
    level: str
    urn: str
    message: str  # without the policy description the pack prefixes


def venv_python() -> str:
    candidate = ROOT / ".venv" / "bin" / "python"
    return str(candidate) if candidate.exists() else sys.executable


def _struct(value: Mapping[str, Any]) -> struct_pb2.Struct:
    struct = struct_pb2.Struct()
    struct.update(dict(value))
    return struct


class PolicyPackProcess:
    """A running policy pack; use as a context manager so the process always stops."""

    def __init__(self, pack_dir: Path | str = DEFAULT_PACK, python: str | None = None) -> None:
        self.pack_dir = Path(pack_dir).resolve()
        if not (self.pack_dir / "PulumiPolicy.yaml").is_file():
            raise AnalyzerError(f"{self.pack_dir} is not a policy pack (no PulumiPolicy.yaml)")
        self._stderr = tempfile.TemporaryFile()
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        self.process = subprocess.Popen(
            [python or venv_python(), "-u", "-m", "pulumi.policy", PLACEHOLDER_ENGINE, "."],
            cwd=self.pack_dir, stdout=subprocess.PIPE, stderr=self._stderr, stdin=subprocess.DEVNULL, env=env,
        )
        try:
            port = self._read_port()
            self.channel = grpc.insecure_channel(
                f"127.0.0.1:{port}",
                options=[("grpc.max_receive_message_length", _MAX_MESSAGE),
                         ("grpc.max_send_message_length", _MAX_MESSAGE)])
            grpc.channel_ready_future(self.channel).result(timeout=START_TIMEOUT_S)
            self.stub = analyzer_pb2_grpc.AnalyzerStub(self.channel)
            # The same two calls on already-encoded requests (see encode_*): the gate builds each
            # resource's bytes once and sends them to Analyze and, framed, to AnalyzeStack.
            self.analyze_encoded = self.channel.unary_unary(
                _ANALYZE, request_serializer=bytes, response_deserializer=analyzer_pb2.AnalyzeResponse.FromString)
            self.analyze_stack_encoded = self.channel.unary_unary(
                _ANALYZE_STACK, request_serializer=bytes,
                response_deserializer=analyzer_pb2.AnalyzeResponse.FromString)
            # Many Analyze requests in one call, when the pack serves it (policies/wire.py, BATCH_METHOD).
            self.analyze_batch = self.channel.unary_unary(BATCH_METHOD, request_serializer=bytes,
                                                          response_deserializer=bytes)
            self._batches: bool | None = None
        except BaseException:
            self.close()
            raise

    def _stderr_tail(self) -> str:
        self._stderr.seek(0)
        lines = self._stderr.read().decode(errors="replace").strip().splitlines()
        return lines[-1] if lines else "no output"

    def stderr_tail(self) -> str:
        """The last line the pack wrote to stderr (the exception of a policy that raised), or ''."""
        tail = self._stderr_tail()
        return "" if tail == "no output" else tail

    def exit_status(self) -> str | None:
        """How the pack's process ended (``exited with 1``, ``killed by signal 9``), or None while it runs."""
        code = self.process.poll()
        if code is None:
            return None
        return f"killed by signal {-code}" if code < 0 else f"exited with {code}"

    def _read_port(self) -> int:
        assert self.process.stdout is not None
        selector = selectors.DefaultSelector()
        selector.register(self.process.stdout, selectors.EVENT_READ)
        deadline = time.monotonic() + START_TIMEOUT_S
        line = b""
        while not line.endswith(b"\n"):
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise AnalyzerError(f"the policy pack did not start within {START_TIMEOUT_S:.0f}s")
            if not selector.select(timeout=remaining):
                continue
            chunk = os.read(self.process.stdout.fileno(), 64)
            if not chunk:
                self.process.wait(timeout=10)
                raise AnalyzerError(f"the policy pack exited ({self.process.returncode}) before serving: "
                                    f"{self._stderr_tail()}")
            line += chunk
        selector.close()
        try:
            return int(line.strip().splitlines()[0])
        except ValueError:
            raise AnalyzerError(f"the policy pack printed {line!r} instead of its port") from None

    # ---- RPCs ----

    def info(self) -> PackInfo:
        reply = self.stub.GetAnalyzerInfo(empty_pb2.Empty(), timeout=RPC_TIMEOUT_S)
        policies = tuple(
            PolicyDescription(
                name=p.name, description=p.description, level=LEVEL_NAMES.get(p.enforcementLevel, "advisory"),
                kind="stack" if p.policy_type == analyzer_pb2.POLICY_TYPE_STACK else "resource",
                config_properties=tuple(sorted(p.configSchema.properties.keys())),
            )
            for p in reply.policies
        )
        initial = {
            name: (LEVEL_NAMES.get(cfg.enforcementLevel) if cfg.enforcementLevel else None,
                   dict(_plain_struct(cfg.properties)))
            for name, cfg in reply.initialConfig.items()
        }
        return PackInfo(reply.name, self._declared_version() or reply.version, policies, initial)

    def _declared_version(self) -> str | None:
        """PulumiPolicy.yaml's version, which the CLI prefers over the Python runtime's fixed 0.0.1."""
        import yaml

        try:
            declared = yaml.safe_load((self.pack_dir / "PulumiPolicy.yaml").read_text())
        except (OSError, yaml.YAMLError):
            return None
        version = declared.get("version") if isinstance(declared, dict) else None
        return str(version) if version else None

    def serves_batches(self) -> bool:
        """Whether the pack answers the batch call (an empty batch, asked once); a pack without it answers
        UNIMPLEMENTED, and gets one Analyze call per resource."""
        if self._batches is None:
            try:
                self._batches = self.analyze_batch(b"", timeout=RPC_TIMEOUT_S) == b""
            except grpc.RpcError as exc:
                if exc.code() != grpc.StatusCode.UNIMPLEMENTED:
                    raise
                self._batches = False
        return self._batches

    def configure(self, config: Mapping[str, tuple[str, Mapping[str, Any]]]) -> None:
        """Send each policy's (enforcement level, properties), as the engine does after reading --policy-pack-config."""
        request = analyzer_pb2.ConfigureAnalyzerRequest()
        for name, (level, properties) in config.items():
            request.policyConfig[name].CopyFrom(
                analyzer_pb2.PolicyConfig(enforcementLevel=LEVELS[level], properties=_struct(properties)))
        self.stub.Configure(request, timeout=RPC_TIMEOUT_S)

    # ---- lifecycle ----

    def close(self) -> None:
        channel = getattr(self, "channel", None)
        if channel is not None:
            channel.close()
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)
        if self.process.stdout is not None:
            self.process.stdout.close()
        self._stderr.close()

    def __enter__(self) -> PolicyPackProcess:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


# ---- requests encoded once ------------------------------------------------------------------
#
# AnalyzeRequest (type 1, properties 2, urn 3, name 4, options 5, provider 6) and AnalyzerResource (the same
# six, then parent 7, dependencies 8, propertyDependencies 9) share their first six fields, and a protobuf
# message's encoding is the concatenation of its fields' encodings. So one resource is encoded once as
# ``core`` (1-5) and ``extra`` (7-9); its provider (6) is encoded once per provider; then
# ``core + provider`` is its AnalyzeRequest and ``core + provider + extra`` its AnalyzerResource, which
# AnalyzeStackRequest holds as field 1 (length-delimited), one after the other.


def encode_core(resource: PlanResource, properties: Mapping[str, Any] | None = None) -> bytes:
    """Fields 1-5 (type, properties, urn, name, options) of the resource's AnalyzeRequest / AnalyzerResource.

    ``properties`` replaces the inputs (AnalyzeStack's item for a step with outputs).

    The fields are framed one after the other, as protobuf encodes them (a string or message field that is
    empty is left out, the properties and options messages are always there), so the properties are not
    copied into a request message first; tests compare the bytes with the message's own encoding.
    """
    options = analyzer_pb2.AnalyzerResourceOptions(parent=resource.parent).SerializeToString()
    return b"".join((
        frame(1, resource.type.encode()) if resource.type else b"",
        frame(2, _struct(resource.inputs if properties is None else properties).SerializeToString()),
        frame(3, resource.urn.encode()) if resource.urn else b"",
        frame(4, resource.name.encode()) if resource.name else b"",
        frame(5, options),
    ))


def encode_extra(resource: PlanResource) -> bytes:
    """Fields 7-9 (parent, dependencies, propertyDependencies): what only AnalyzeStack carries."""
    item = analyzer_pb2.AnalyzerResource(parent=resource.parent, dependencies=resource.dependencies)
    for key, urns in resource.property_dependencies.items():
        item.propertyDependencies[key].urns.extend(urns)
    return item.SerializeToString()


def encode_provider(reference: str, providers: Mapping[str, PlanResource]) -> bytes:
    """Field 6 (provider) for a step's provider reference, or nothing for the default provider."""
    provider = provider_message(reference, providers)
    if provider is None:
        return b""
    return analyzer_pb2.AnalyzeRequest(provider=provider).SerializeToString()


def batch_request(requests: Iterable[bytes]) -> bytes:
    """The batch call's request: each AnalyzeRequest framed as field 1 (policies/wire.py, BATCH_METHOD)."""
    return b"".join(frame(1, request) for request in requests)


def batch_replies(data: bytes, count: int) -> list[analyzer_pb2.AnalyzeResponse | str]:
    """The batch call's reply: per request, in order, its AnalyzeResponse or the text of the error it raised."""
    try:
        items = read_frames(data)
    except ValueError as exc:
        raise AnalyzerError(f"the policy pack's batch reply is malformed: {exc}") from None
    if len(items) != count or any(number not in (REPLY_FIELD, ERROR_FIELD) for number, _ in items):
        raise AnalyzerError(f"the policy pack answered {len(items)} of {count} batched requests")
    return [analyzer_pb2.AnalyzeResponse.FromString(payload) if number == REPLY_FIELD else payload.decode(errors="replace")
            for number, payload in items]


def _plain_struct(struct: struct_pb2.Struct) -> dict[str, Any]:
    from google.protobuf import json_format

    return json_format.MessageToDict(struct)


def provider_message(reference: str, providers: Mapping[str, PlanResource]) \
        -> analyzer_pb2.AnalyzerProviderResource | None:
    """The provider a step names (``<provider urn>::<id>``), with its inputs when the plan has it."""
    if not reference:
        return None
    urn = reference.rsplit("::", 1)[0] if reference.count("::") >= 4 else reference
    known = providers.get(urn)
    return analyzer_pb2.AnalyzerProviderResource(
        type=known.type if known else type_of(urn), urn=urn, name=name_of(urn),
        properties=_struct(known.inputs if known else {}),
    )


def decode_diagnostics(reply: analyzer_pb2.AnalyzeResponse) -> list[Diagnostic]:
    """The reply's diagnostics (message without the description the runtime prefixes)."""
    return _diagnostics(reply)


def _diagnostics(reply: analyzer_pb2.AnalyzeResponse) -> list[Diagnostic]:
    found = []
    for d in reply.diagnostics:
        message = d.message
        if d.description and message.startswith(d.description):
            message = message[len(d.description):]
        message = " ".join(line.strip() for line in message.strip().splitlines() if line.strip())
        found.append(Diagnostic(d.policyName, LEVEL_NAMES.get(d.enforcementLevel, "advisory"), d.urn,
                                message or d.description))
    return found
