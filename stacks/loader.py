"""The one boundary where stack config is read and validated.

``load_stack()`` reads the ``gpu-fungibility:`` namespace, parses it into
:class:`stacks.config.StackConfig` and returns it with the Hugging Face token
as a Pulumi secret. Any problem raises :class:`ConfigError` (a
``pulumi.RunError``: Pulumi prints it without a traceback) listing every
problem with its full key path.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import pulumi
from pydantic import BaseModel, ValidationError

from stacks.config import DNS_LABEL, NAME_RULE, ConfigIssues, StackConfig
from stacks.rules import config_warnings

NAMESPACE = "gpu-fungibility"
TOKEN_KEY = "hfToken"
SECRET_COMMAND = "pulumi config set --secret hfToken <your Hugging Face token>"
PLACEHOLDER_TOKEN = "placeholder-hf-token"
MISSPELT_NAMESPACE = "\0misspelt-namespace"  # internal: keys under a near-miss of NAMESPACE
PROVIDER_REGIONS = "\0provider-regions"  # internal: the stack file's provider region keys and their values

MODEL_KEYS = {
    alias: name
    for name, field in StackConfig.model_fields.items()
    for alias in [field.alias or name]
}
ACCEPTED_TOP_LEVEL = sorted([*MODEL_KEYS, TOKEN_KEY])


class ConfigError(pulumi.RunError):
    """The stack config is invalid. ``issues`` holds every (key path, message)."""

    def __init__(self, issues: list[tuple[str, str]]):
        self.issues = issues
        super().__init__(format_issues(issues))


@dataclass(frozen=True)
class LoadedStack:
    config: StackConfig
    hf_token: pulumi.Output[str] | None  # a secret; None when the stack has no workloads
    hf_token_is_placeholder: bool
    warnings: tuple[str, ...]


def format_issues(issues: list[tuple[str, str]]) -> str:
    count = len(issues)
    lines = [f"invalid stack config: {count} problem{'s' if count != 1 else ''}"]
    lines += [f"  - {path}: {message}" for path, message in issues]
    return "\n".join(lines)


def parse_stack_config(raw: dict[str, Any], *, checks: bool = True, components: bool = True) -> StackConfig:
    """Parse the namespace's keys (without the ``gpu-fungibility:`` prefix).

    Raises ConfigError with every problem found: the model's; then, once it parses, the
    rules that span keys and the components' checks together. ``checks=False`` stops after the
    model (for tools and tests that look at one part of a config on purpose); ``components=False``
    leaves out the components' checks (:func:`config_issues`). Neither way imports a cloud SDK: the
    component modules import theirs only to build resources.
    """
    issues: list[tuple[str, str]] = []
    for full_key in raw.get(MISSPELT_NAMESPACE, []):
        issues.append((full_key, f"unknown config namespace {full_key.split(':', 1)[0]!r}; this project reads "
                                 f"{NAMESPACE}:<key> (so this key would be ignored)"))
    for key in raw:
        if key not in MODEL_KEYS and key not in (TOKEN_KEY, MISSPELT_NAMESPACE, PROVIDER_REGIONS):
            issues.append((key, f"unknown key; accepted: {', '.join(ACCEPTED_TOP_LEVEL)}"))
    data = {k: v for k, v in raw.items() if k in MODEL_KEYS}
    try:
        config = StackConfig.model_validate(data)
    except ValidationError as exc:
        issues.extend(_issues_from(exc))
        if checks:
            issues += _issues_beside(data, exc, issues, components)
        raise ConfigError(issues) from None
    if checks:
        issues += config_issues(config, components=components) + provider_region_issues(config, raw.get(PROVIDER_REGIONS, {}))
    if issues:
        raise ConfigError(issues)
    return config


def provider_region_issues(config: StackConfig, provider_config: dict[str, Any]) -> list[tuple[str, str]]:
    """A provider region key (``azure-native:location``, ``aws:region``) in the stack file that names another
    region than ``cluster.location``. The program builds every resource of the cloud through one explicit
    provider for ``cluster.location`` (``stacks/<cloud>.py``), so that key would be silently ignored; each cloud
    names its key (``provider_region_key`` in ``stacks/arguments/<cloud>.py``)."""
    from stacks.arguments.cloud import for_cloud

    key = for_cloud(config.cluster.cloud).provider_region_key
    if key is None or key not in provider_config:
        return []
    value, location = provider_config[key], config.cluster.location
    squeeze = lambda name: str(name).replace(" ", "").lower()  # noqa: E731  "East US 2" is eastus2
    if squeeze(value) == squeeze(location):
        return []
    return [(key, f"is {value!r} but cluster.location is {location!r}: every resource is deployed in "
                  f"cluster.location, so {key} is ignored; remove {key} from the stack file (set "
                  f"cluster.location: {value} if that is the region you meant)")]


def config_issues(config: StackConfig, *, components: bool = True) -> list[tuple[str, str]]:
    """What a well-formed config can still get wrong, all at once: the rules (:func:`rule_issues`) and,
    unless ``components=False``, the components' own checks of the arguments built from it. The rules
    import no cloud SDK, nor do the checks: the component modules import their cloud's only to build."""
    issues = rule_issues(config)
    if components:
        from stacks.arguments import argument_issues

        issues += argument_issues(config)
    return list(dict.fromkeys(issues))


def rule_issues(config: StackConfig) -> list[tuple[str, str]]:
    """The rules that span keys (:mod:`stacks.rules`) and the cloud's own (``stacks/arguments/<cloud>.py``)."""
    from stacks.arguments import cloud_arguments
    from stacks.rules import cross_field_issues

    return [*cross_field_issues(config), *cloud_arguments(config).issues(config)]


_REPAIR_ROUNDS = 8
#: Required keys whose refused value is replaced, not removed, to check the rest: nothing else reads them.
_STAND_INS = {("cluster", "name"): "stand-in-cluster-name"}


def _issues_beside(data: dict[str, Any], exc: ValidationError, reported: list[tuple[str, str]],
                   components: bool = True) -> list[tuple[str, str]]:
    """The other problems of a config the model refused: label, taint, range and cross-key ones.

    The refused parts are taken out (a key that has a default falls back to it; an entry without one,
    such as a pool missing its accelerator, is left out whole) until the rest parses; then the rules
    and the components' checks run over it. Problems at or under a path already reported are dropped,
    so a fallen-back default never adds a second message to a key that has one.
    """
    import copy

    trimmed = copy.deepcopy(data)
    error = exc
    for _ in range(_REPAIR_ROUNDS):
        if not all(_drop(trimmed, err["loc"], err["type"]) for err in error.errors()):
            return []
        try:
            partial = StackConfig.model_validate(trimmed)
            break
        except ValidationError as again:
            error = again
    else:
        return []
    try:
        found = config_issues(partial, components=components)
    except Exception:  # a rule that cannot judge a trimmed config adds nothing
        return []
    taken = [path for path, _ in reported]
    return [(path, message) for path, message in found
            if not any(_overlaps(path, other) for other in taken)]


def _drop(data: Any, loc: tuple, kind: str) -> bool:
    """Remove what ``loc`` points at (its entry, when missing or a list item); False when nothing can go."""
    path = [p for p in loc if p != "[key]"]
    if tuple(path) in _STAND_INS:
        data.setdefault(path[0], {})[path[1]] = _STAND_INS[tuple(path)]
        return isinstance(data.get(path[0]), dict)
    if kind == "missing" and path:
        path = path[:-1]  # the entry lacking a required key goes whole
    for index, part in enumerate(path):  # a list item goes with its list (indices stay as written)
        if isinstance(part, int):
            path = path[:index]
            break
    if len(path) < 2 and not (len(path) == 1 and path[0] != "cluster"):
        return False  # the cluster itself, or the whole document: nothing left to check beside it
    node = data
    for part in path[:-1]:
        if not isinstance(node, dict) or part not in node:
            return True  # already gone with its parent
        node = node[part]
    if isinstance(node, dict):
        node.pop(path[-1], None)
    return True


def _overlaps(path: str, other: str) -> bool:
    return path == other or path.startswith((other + ".", other + "[")) or other.startswith((path + ".", path + "["))


def load_stack() -> LoadedStack:
    """Read this stack's config (inside a Pulumi program)."""
    raw, token_present, token_secret = _read_namespace()
    issues: list[tuple[str, str]] = []
    config: StackConfig | None = None
    try:
        config = parse_stack_config(raw)
    except ConfigError as exc:
        issues.extend(exc.issues)
    if token_present and not token_secret:
        issues.append((TOKEN_KEY, f"is stored in plain text; store it as a secret: {SECRET_COMMAND}"))
    needs_token = bool(config and config.workloads)
    placeholder = False
    if config is not None and needs_token and not token_present:
        if pulumi.runtime.is_dry_run():
            placeholder = True
            pulumi.log.warn(
                f"{TOKEN_KEY} is not set: this preview uses a placeholder secret. "
                f"Before `pulumi up`, run: {SECRET_COMMAND}"
            )
        else:
            issues.append((TOKEN_KEY, f"is not set; run: {SECRET_COMMAND}"))
    if issues or config is None:
        raise ConfigError(issues)
    token: pulumi.Output[str] | None = None
    if needs_token:
        cfg = pulumi.Config(NAMESPACE)
        token = pulumi.Output.secret(PLACEHOLDER_TOKEN) if placeholder else cfg.require_secret(TOKEN_KEY)
    warnings = tuple(config_warnings(config))
    for warning in warnings:
        pulumi.log.warn(warning)
    return LoadedStack(config, token, placeholder, warnings)


def _read_namespace() -> tuple[dict[str, Any], bool, bool]:
    """All keys under the namespace, whether hfToken is set, and whether it is secret."""
    from pulumi.runtime import config as runtime_config

    from stacks.arguments.cloud import registered

    prefix = f"{NAMESPACE}:"
    region_keys = {found.provider_region_key for found in registered()} - {None}
    merged = {**(runtime_config.get_config_env() or {}), **runtime_config.CONFIG.get()}
    raw: dict[str, Any] = {}
    for full_key, value in merged.items():
        if full_key in region_keys:
            raw.setdefault(PROVIDER_REGIONS, {})[full_key] = _decode(value)
        if not full_key.startswith(prefix):
            namespace = full_key.split(":", 1)[0]
            if namespace != NAMESPACE and _looks_like_ours(namespace):
                raw.setdefault(MISSPELT_NAMESPACE, []).append(full_key)
            continue
        key = full_key[len(prefix):]
        if key == TOKEN_KEY:
            continue
        raw[key] = _decode(value)
    token_key = f"{prefix}{TOKEN_KEY}"
    token_present = token_key in merged
    secret_keys = set(runtime_config.get_config_secret_keys_env() or []) | set(runtime_config._SECRET_KEYS.get())
    return raw, token_present, token_key in secret_keys


def _looks_like_ours(namespace: str) -> bool:
    """A near-miss spelling of the project namespace (``gpu-fungibilty``, ``gpu_fungibility``)."""
    import difflib

    return difflib.SequenceMatcher(None, namespace.lower(), NAMESPACE).ratio() >= 0.8


def _decode(value: Any) -> Any:
    """Pulumi hands structured config over as JSON strings."""
    if isinstance(value, str):
        try:
            return json.loads(value)
        except json.JSONDecodeError:
            return value
    return value


def _issues_from(exc: ValidationError) -> list[tuple[str, str]]:
    issues: list[tuple[str, str]] = []
    for err in exc.errors():
        cause = (err.get("ctx") or {}).get("error")
        if isinstance(cause, ConfigIssues):
            issues.extend(cause.issues)
            continue
        loc = err["loc"]
        is_key = bool(loc) and loc[-1] == "[key]"
        if is_key:
            loc = loc[:-1]
        path = _path(loc)
        message = err["msg"].removeprefix("Value error, ")
        if err["type"] == "string_pattern_mismatch" and err.get("ctx", {}).get("pattern") == DNS_LABEL.pattern:
            what = "name" if is_key else "value"
            message = f"{err['input']!r} is not a valid {what}: use {NAME_RULE}"
        elif err["type"] in ("model_type", "dict_type"):
            message = "must be a mapping of keys (see the config reference in README.md)"
        elif err["type"] == "list_type":
            message = "must be a list"
        elif err["type"] == "extra_forbidden":
            accepted = _accepted_keys(loc[:-1])
            message = f"unknown key; accepted here: {', '.join(accepted)}" if accepted else "unknown key"
        elif err["type"] == "missing":
            message = "required key is missing"
        issues.append((path or "(top level)", message))
    return issues


def _path(loc: tuple) -> str:
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += ("." if out else "") + str(part)
    return out


def _accepted_keys(loc: tuple) -> list[str]:
    """The keys a model accepts at ``loc`` (for 'unknown key' messages)."""
    import typing

    annotation: Any = StackConfig
    for part in loc:
        origin = typing.get_origin(annotation)
        args = typing.get_args(annotation)
        if origin is dict:
            annotation = args[1]
            continue
        if origin is list:
            annotation = args[0]
            continue
        if origin in (typing.Union, getattr(__import__("types"), "UnionType", None)):
            annotation = next((a for a in args if a is not type(None)), None)
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            field = next((f for n, f in annotation.model_fields.items() if (f.alias or n) == part), None)
            if field is None:
                return []
            annotation = field.annotation
            continue
        return []
    while typing.get_origin(annotation) is not None and typing.get_origin(annotation) not in (dict, list):
        annotation = next((a for a in typing.get_args(annotation) if a is not type(None)), None)
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return sorted(f.alias or n for n, f in annotation.model_fields.items())
    return []
