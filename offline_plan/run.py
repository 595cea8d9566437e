"""Run the real program in-process under Pulumi mocks and capture every registration.

The capturing monitor records each full ``RegisterResourceRequest`` (type,
name, parent, inputs, dependencies, provider), which is what ``pulumi
preview`` would send to the engine. Secret values are replaced by
``[secret]`` the moment they are captured, so no later step can leak them.

When ``GPU_FUNGIBILITY_SECRET_DIGEST_KEY`` holds a hex key, each mask carries a
keyed digest of the value it hides (``[secret:1f0c...]``): two plans made with
the same key tell whether a secret changed, and without the key (which the
offline diff draws at random and never writes down) the digest says nothing
about the value.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import logging
import os
import runpy
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pulumi
import yaml
from google.protobuf import json_format
from pulumi.runtime import mocks as pulumi_mocks
from pulumi.runtime import rpc, settings
from pulumi.runtime.stack import run_pulumi_func

from offline_plan.mocks import FungibilityMocks

PROJECT = "gpu-fungibility"
NAMESPACE = "gpu-fungibility"
ROOT = Path(__file__).resolve().parent.parent
SECRET_MASK = "[secret]"
UNKNOWN_MASK = "[unknown]"
SECRET_DIGEST_ENV = "GPU_FUNGIBILITY_SECRET_DIGEST_KEY"
ROOT_STACK_TYPE = "pulumi:pulumi:Stack"
PROVIDER_TYPE_PREFIX = "pulumi:providers:"


@dataclass(frozen=True)
class Captured:
    """One resource registration, as the engine would receive it."""

    type: str
    name: str
    urn: str
    parent: str
    custom: bool
    inputs: dict[str, Any]
    dependencies: list[str]
    provider: str
    property_dependencies: dict[str, list[str]] = field(default_factory=dict)
    aliases: list[str] = field(default_factory=list)
    replace_on_changes: list[str] = field(default_factory=list)
    ignore_changes: list[str] = field(default_factory=list)


@dataclass
class Diagnostic:
    severity: str  # "warning" | "error" | "info"
    message: str
    urn: str = ""


@dataclass
class PlanRun:
    stack: str
    project: str
    resources: list[Captured]
    diagnostics: list[Diagnostic]
    config: Any = None  # the parsed StackConfig
    notes: list[str] = field(default_factory=list)
    #: The stack file's other providers' keys (``gcp:project``, ``azure-native:subscriptionId``, ...).
    provider_config: dict[str, Any] = field(default_factory=dict)

    def of_type(self, type_: str) -> list[Captured]:
        return [r for r in self.resources if r.type == type_]

    def named(self, name: str) -> Captured:
        found = [r for r in self.resources if r.name == name]
        if len(found) != 1:
            raise KeyError(f"{len(found)} resources named {name!r}: {[r.urn for r in found]}")
        return found[0]

    def by_urn(self, urn: str) -> Captured:
        return next(r for r in self.resources if r.urn == urn)


def _sdk_plugin_version(package: str) -> str:
    """The provider version a package's Python SDK asks the engine for (its ``pulumi-plugin.json``), or ''."""
    import importlib.util

    module = {"kubernetes": "pulumi_kubernetes"}.get(package, "pulumi_" + package.replace("-", "_"))
    spec = importlib.util.find_spec(module)
    if spec is None or not spec.submodule_search_locations:
        return ""
    path = Path(next(iter(spec.submodule_search_locations))) / "pulumi-plugin.json"
    return json.loads(path.read_text()).get("version", "") if path.exists() else ""


class CapturingMonitor(pulumi_mocks.MockMonitor):
    """A MockMonitor that keeps every registration request."""

    def __init__(self, mocks: pulumi.runtime.Mocks):
        super().__init__(mocks)
        self.captured: list[Captured] = []
        self.aliases_by_urn: dict[str, list[str]] = {}

    def make_urn(self, parent: str, type_: str, name: str) -> str:
        """The URN as Pulumi's engine builds it: the parent's whole qualified type chain, less the root Stack's type.

        pulumi/sdk go/common/resource/urn/urn.go ``New`` (v3.274.1) prefixes the parent's qualified type unless
        it is ``pulumi:pulumi:Stack``; the SDK's MockMonitor prefixes only the parent's last type, the Stack's too.
        """
        qualified = parent.split("::")[2] if parent else ""
        if qualified and qualified != ROOT_STACK_TYPE:
            type_ = f"{qualified}${type_}"
        return "urn:pulumi:" + "::".join([settings.get_stack(), settings.get_project(), type_, name])

    def RegisterResource(self, request):  # noqa: N802 (gRPC method name)
        response = super().RegisterResource(request)
        aliases = self._alias_urns(request)
        self.aliases_by_urn[response.urn] = aliases
        self.captured.append(
            Captured(
                type=request.type,
                name=request.name,
                urn=response.urn,
                parent=request.parent,
                custom=bool(request.custom),
                inputs=self._engine_inputs(request),
                dependencies=sorted(set(request.dependencies)),
                provider=request.provider or self._default_provider(request),
                property_dependencies={
                    k: sorted(set(v.urns)) for k, v in sorted(request.propertyDependencies.items())
                },
                aliases=aliases,
                replace_on_changes=list(request.replaceOnChanges),
                ignore_changes=list(request.ignoreChanges),
            )
        )
        return response

    def _default_provider(self, request) -> str:
        """The engine's default provider of a custom resource registered without one, as the engine names it.

        pulumi pkg/resource/deploy/providers (v3.274.1): ``pulumi:providers:<package>::default_<version>``, the
        version the SDK asked for with its dots as underscores; its id is unknown until the provider exists,
        as in a first preview.
        """
        if not request.custom or request.type.startswith(PROVIDER_TYPE_PREFIX) or request.type == ROOT_STACK_TYPE:
            return ""
        package = request.type.split(":", 1)[0]
        version = request.version or _sdk_plugin_version(package)
        name = "default_" + version.replace(".", "_").replace("-", "_") if version else "default"
        return f"{self.make_urn('', PROVIDER_TYPE_PREFIX + package, name)}::{rpc.UNKNOWN}"

    @staticmethod
    def _engine_inputs(request) -> dict[str, Any]:
        """A registration's inputs as the engine records them: an explicit provider also carries the plugin's
        ``version`` and an empty ``__internal`` block (pkg/resource/deploy/providers, v3.274.1)."""
        inputs = plain(json_format.MessageToDict(request.object))
        if request.custom and request.type.startswith(PROVIDER_TYPE_PREFIX):
            package = request.type[len(PROVIDER_TYPE_PREFIX):]
            version = request.version or _sdk_plugin_version(package)
            inputs = {**inputs, "__internal": inputs.get("__internal", {}), **({"version": version} if version else {})}
        return inputs

    def _alias_urns(self, request) -> list[str]:
        """Every old URN the engine would accept for this resource, as full URNs.

        The resource's own aliases (URNs, or specs resolved against its name, type and
        parent), then, as the engine's step generator does (``generateAliases`` /
        ``inheritedChildAlias``), each alias of its parent multiplied out over the child:
        a child named ``<parent>-x`` is looked for as ``<old parent name>-x`` under the old
        parent. URNs are built the way this monitor builds them (:meth:`make_urn`).
        """
        own: list[str] = list(request.aliasURNs)
        for alias in request.aliases:
            if alias.urn:
                own.append(alias.urn)
                continue
            spec = alias.spec
            parent = "" if spec.noParent else (spec.parentUrn or request.parent)
            own.append(self.make_urn(parent, spec.type or request.type, spec.name or request.name))
        result = list(dict.fromkeys(own))
        parent_name = request.parent.rsplit("::", 1)[-1] if request.parent else ""
        for parent_alias in self.aliases_by_urn.get(request.parent, []):
            candidates = [(request.type, request.name)] + [
                (urn.split("::")[2].split("$")[-1], urn.rsplit("::", 1)[-1]) for urn in own]
            for child_type, child_name in candidates:
                if parent_name and child_name.startswith(parent_name):
                    child_name = parent_alias.rsplit("::", 1)[-1] + child_name[len(parent_name):]
                urn = self.make_urn(parent_alias, child_type, child_name)
                if urn not in result:
                    result.append(urn)
        return result


class _LogCollector(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.diagnostics: list[Diagnostic] = []

    def emit(self, record: logging.LogRecord) -> None:
        if record.levelno >= logging.WARNING:
            severity = "error" if record.levelno >= logging.ERROR else "warning"
            self.diagnostics.append(Diagnostic(severity, record.getMessage()))


def masked(value: Any) -> Any:
    """A secret with its shape kept (map keys, list lengths) and every value replaced by ``[secret]``.

    Keys such as a Secret's ``stringData`` entry names are not secret, and keeping them lets
    the masked object still validate against its schema.
    """
    if isinstance(value, dict):
        inner = value.get("value") if value.get(rpc._special_sig_key) else None
        if inner is not None:
            return masked(inner)
        return {k: masked(v) for k, v in value.items()}
    if isinstance(value, list):
        return [masked(v) for v in value]
    return secret_mask(value)


def secret_mask(value: Any) -> str:
    """``[secret]``, or ``[secret:<digest>]`` keyed by ``GPU_FUNGIBILITY_SECRET_DIGEST_KEY`` when it is set."""
    key = os.environ.get(SECRET_DIGEST_ENV, "")
    if not key:
        return SECRET_MASK
    text = json.dumps(value, sort_keys=True, default=str).encode()
    return f"[secret:{hmac.new(bytes.fromhex(key), text, hashlib.sha256).hexdigest()[:16]}]"


def plain(value: Any) -> Any:
    """Property values as plain JSON: secrets masked, unknowns marked, integral floats as ints."""
    if isinstance(value, dict):
        if value.get(rpc._special_sig_key) == rpc._special_secret_sig:
            return masked(value.get("value"))
        if value.get(rpc._special_sig_key) == rpc._special_resource_sig:
            return value.get("urn", "")
        if value.get(rpc._special_sig_key) == rpc._special_output_value_sig:
            if value.get("secret"):
                return masked(value.get("value"))
            return plain(value["value"]) if "value" in value else UNKNOWN_MASK
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [plain(v) for v in value]
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if value == rpc.UNKNOWN:
        return UNKNOWN_MASK
    return value


def run_program(
    namespace_config: dict[str, Any],
    *,
    other_config: dict[str, Any] | None = None,
    secret_keys: tuple[str, ...] = (),
    stack: str = "test",
    project: str = PROJECT,
    preview: bool = True,
    compose_fn: Callable[[Any], None] | None = None,
    monitor: CapturingMonitor | None = None,
    program_file: Path | None = None,
) -> PlanRun:
    """Run ``stacks.compose(load_stack())`` under mocks with the given config.

    ``namespace_config`` holds the ``gpu-fungibility:`` keys without prefix;
    values may be structures (they are JSON-encoded as the CLI would).
    Raises ``stacks.loader.ConfigError`` for an invalid config. ``compose_fn`` replaces
    ``stacks.compose`` (to run one layer alone); ``monitor`` lets a caller keep more of
    each registration than :class:`Captured` holds. ``program_file`` runs another Pulumi
    program (a ``__main__.py``) instead of this project's, with ``namespace_config``
    under its own project's namespace (``project``).
    """
    from stacks import compose
    from stacks.loader import load_stack

    config = {f"{NAMESPACE if program_file is None else project}:{k}": v for k, v in namespace_config.items()}
    config.update(other_config or {})
    # As the Pulumi CLI hands config to a program: a structured value as JSON encoded from a Go map, whose keys
    # json.Marshal sorts (pkg/v3 resource/config, v3.274.1), so the program reads every map in key order.
    encoded = {k: v if isinstance(v, str) else json.dumps(v, sort_keys=True) for k, v in config.items()}
    secret_full = [f"{NAMESPACE}:{k}" if ":" not in k else k for k in secret_keys]

    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    settings.ROOT.set(None)
    pulumi.runtime.set_all_config(encoded, secret_full)

    collector = _LogCollector()
    logger = logging.getLogger(f"offline_plan.{stack}")
    logger.handlers = [collector]
    logger.propagate = False
    logger.setLevel(logging.DEBUG)

    monitor = monitor or CapturingMonitor(FungibilityMocks())
    pulumi_mocks.set_mocks(FungibilityMocks(), project=project, stack=stack, preview=preview,
                           monitor=monitor, logger=logger)
    loaded_holder: list[Any] = []

    def program() -> None:
        if program_file is not None:
            runpy.run_path(str(program_file), run_name="__main__")
            return
        loaded = load_stack()
        loaded_holder.append(loaded)
        (compose_fn or compose)(loaded)

    try:
        loop.run_until_complete(run_pulumi_func(program))
    finally:
        loop.close()
        asyncio.set_event_loop(None)

    stack_urn = f"urn:pulumi:{stack}::{project}::pulumi:pulumi:Stack::{project}-{stack}"
    resources = _with_stack_root(monitor.captured, stack_urn)
    return PlanRun(
        stack=stack,
        project=project,
        resources=resources,
        diagnostics=collector.diagnostics,
        config=loaded_holder[0].config if loaded_holder else None,
    )


def _with_stack_root(captured: list[Captured], stack_urn: str) -> list[Captured]:
    """The root Stack first, then every resource after its parent, provider and dependencies.

    Registration order under asyncio varies from run to run; this order does not: among the
    resources whose prerequisites are placed, the smallest URN goes next.
    """
    import heapq

    rest = {c.urn: c for c in captured if c.type != "pulumi:pulumi:Stack"}
    root = Captured("pulumi:pulumi:Stack", stack_urn.rsplit("::", 1)[1], stack_urn, "", False, {}, [], "")
    needs: dict[str, set[str]] = {}
    for urn, c in rest.items():
        before = {c.parent, *c.dependencies, c.provider.split("::" + c.provider.rsplit("::", 1)[-1])[0]}
        needs[urn] = {u for u in before if u in rest and u != urn}
    waiting_on: dict[str, list[str]] = {}
    for urn, prereqs in needs.items():
        for p in prereqs:
            waiting_on.setdefault(p, []).append(urn)
    ready = [u for u, prereqs in needs.items() if not prereqs]
    heapq.heapify(ready)
    ordered = [root]
    while ready:
        urn = heapq.heappop(ready)
        ordered.append(rest[urn])
        for nxt in waiting_on.get(urn, []):
            needs[nxt].discard(urn)
            if not needs[nxt]:
                heapq.heappush(ready, nxt)
    placed = {c.urn for c in ordered}
    ordered += sorted((c for u, c in rest.items() if u not in placed), key=lambda c: c.urn)  # cycles: never expected
    return ordered


@dataclass(frozen=True)
class StackFile:
    """What ``Pulumi.<stack>.yaml`` holds, split the way the runner needs it."""

    namespace_config: dict[str, Any]
    other_config: dict[str, Any]
    secret_keys: tuple[str, ...]
    encrypted_keys: tuple[str, ...]  # secure: values the offline plan cannot decrypt


def read_stack_file(stack: str, root: Path = ROOT) -> StackFile:
    """``Pulumi.<stack>.yaml`` under ``root``, read within :data:`input_files.STACK_FILE`'s limits.

    Raises StackNameError for a name that is no stack name (it would be a path), FileNotFoundError
    when there is no such stack file, and ConfigError for a file that cannot be read or is not shaped
    like a stack file.
    """
    import input_files
    from stacks.loader import ConfigError
    from stacks.stack_files import check_stack_name

    path = Path(root) / f"Pulumi.{check_stack_name(stack)}.yaml"
    if not path.exists():
        available = sorted(p.name[len("Pulumi."):-len(".yaml")] for p in Path(root).glob("Pulumi.*.yaml"))
        raise FileNotFoundError(f"no stack file {path.name}; stacks here: {', '.join(available)}")
    try:
        data = input_files.read_yaml(path, input_files.STACK_FILE) or {}
    except input_files.InputFileError as exc:
        raise ConfigError([(exc.where, exc.reason)]) from None
    if not isinstance(data, dict):
        raise ConfigError([("(top level)", f"must be a mapping with a `config:` key, found {type(data).__name__}")])
    if not isinstance(data.get("config") or {}, dict):
        raise ConfigError([("config", "must be a mapping of config keys (`gpu-fungibility:cluster:` and the "
                                      "other keys indented below `config:`)")])
    namespace_config: dict[str, Any] = {}
    other: dict[str, Any] = {}
    secret_keys: list[str] = []
    encrypted: list[str] = []
    for full_key, value in (data.get("config") or {}).items():
        # A key without a namespace is the project's, as the Pulumi CLI reads it (`pulumi stack init`
        # rewrites `hfToken:` as `gpu-fungibility:hfToken`).
        full_key = full_key if ":" in str(full_key) else f"{NAMESPACE}:{full_key}"
        is_secure = isinstance(value, dict) and set(value) == {"secure"}
        if is_secure:
            # Ciphertext needs the stack's secrets provider; the plan masks it anyway. The
            # placeholder follows the ciphertext, so a re-encrypted secret reads as changed.
            cipher = hashlib.sha256(str(value["secure"]).encode()).hexdigest()[:12]
            value = f"offline-placeholder-for-{full_key}-{cipher}"
            secret_keys.append(full_key)
            encrypted.append(full_key)
        if full_key.startswith(f"{NAMESPACE}:"):
            namespace_config[full_key[len(NAMESPACE) + 1:]] = value
        else:
            other[full_key] = value
    return StackFile(namespace_config, other, tuple(secret_keys), tuple(encrypted))


def run_stack_file(stack: str, root: Path = ROOT) -> PlanRun:
    """Plan a shipped stack (``Pulumi.<stack>.yaml``).

    The project's keys are validated before anything else is encoded for the program: a config the
    model refuses raises ConfigError (with every problem) before the other namespaces' values are
    JSON-encoded and handed to the Pulumi runtime.
    """
    from stacks.loader import ConfigError, parse_stack_config

    stack_file = read_stack_file(stack, root)
    try:
        parse_stack_config(dict(stack_file.namespace_config), checks=False)
    except ConfigError:
        parse_stack_config(dict(stack_file.namespace_config))  # raises again, with the rules' problems too
    run = run_program(
        stack_file.namespace_config,
        other_config=stack_file.other_config,
        secret_keys=stack_file.secret_keys,
        stack=stack,
    )
    run.provider_config = dict(stack_file.other_config)
    for key in stack_file.encrypted_keys:
        run.notes.append(f"{key} is encrypted in Pulumi.{stack}.yaml; the offline plan uses a placeholder secret")
    return run


def run_stack(raw_config: dict[str, Any], stack: str = "test", project: str = PROJECT,
              secret_keys: tuple[str, ...] = ("hfToken",), preview: bool = True) -> PlanRun:
    """Plan an in-memory config (tests). ``hfToken`` is treated as a secret when present."""
    other = {k: v for k, v in raw_config.items() if ":" in k}
    namespace = {k: v for k, v in raw_config.items() if ":" not in k}
    keys = tuple(k for k in secret_keys if k in namespace or k in other)
    return run_program(namespace, other_config=other, secret_keys=keys, stack=stack, project=project,
                       preview=preview)


def run_program_file(program_dir: Path, stack: str = "dev", config: dict[str, Any] | None = None) -> PlanRun:
    """Plan another Pulumi program (a folder with ``Pulumi.yaml`` and ``__main__.py``) under the same mocks."""
    program_dir = Path(program_dir)
    project = yaml.safe_load((program_dir / "Pulumi.yaml").read_text())["name"]
    return run_program(config or {}, stack=stack, project=project, program_file=program_dir / "__main__.py")
