"""The policy config of a run: each policy's enforcement level and properties, as ``--policy-pack-config`` sets
them (the pack's defaults, then its initial config, then ``all``, then per policy)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from policy_gate.result import GateError

if TYPE_CHECKING:
    from policy_gate.analyzer import PackInfo

LEVELS = ("advisory", "mandatory", "remediate", "disabled")


def read_policy_config(source: Mapping[str, Any] | str | Path | None) -> dict[str, Any]:
    if source is None:
        return {}
    if isinstance(source, Mapping):
        return dict(source)
    import input_files

    path = Path(source)
    if not path.exists():
        raise GateError(f"{path}: no such policy config file")
    try:
        data = input_files.read_json(path, input_files.POLICY_CONFIG)
    except input_files.InputFileError as exc:
        raise GateError(f"policy config {exc}") from None
    if not isinstance(data, Mapping):
        raise GateError(f"{path}: policy config must be a JSON object keyed by policy name")
    return dict(data)


def _level(value: Any, where: str, problems: list[str]) -> str | None:
    if not isinstance(value, str) or value not in LEVELS:
        problems.append(f"{where}: enforcement level must be one of {', '.join(LEVELS)}, got {value!r}")
        return None
    return value


def resolve_config(info: PackInfo, user: Mapping[str, Any]) -> dict[str, tuple[str, dict[str, Any]]]:
    """Each policy's (level, properties): defaults, then the pack's initial config, then ``all``, then per policy.

    Every problem of the config (unknown policies, bad levels, entries of the wrong shape, properties
    the policy does not declare) is reported at once, in one GateError.
    """
    names = {p.name for p in info.policies}
    problems: list[str] = []
    unknown = sorted(str(k) for k in set(user) - names - {"all"})
    if unknown:
        problems.append(f"names unknown policies: {', '.join(unknown)} (known: {', '.join(sorted(names))})")
    everyone = _level(user["all"], "all", problems) if "all" in user else None
    resolved: dict[str, tuple[str, dict[str, Any]]] = {}
    for policy in info.policies:
        level, properties = policy.level, {}
        initial_level, initial_props = info.initial_config.get(policy.name, (None, {}))
        level = initial_level or level
        properties.update(initial_props)
        level = everyone or level
        entry = user.get(policy.name)
        if isinstance(entry, str):
            level = _level(entry, policy.name, problems) or level
        elif isinstance(entry, Mapping):
            if "enforcementLevel" in entry:
                level = _level(entry["enforcementLevel"], f"{policy.name}.enforcementLevel", problems) or level
            given = {k: v for k, v in entry.items() if k != "enforcementLevel"}
            undeclared = sorted(str(k) for k in set(given) - set(policy.config_properties))
            if undeclared:
                accepted = ", ".join(policy.config_properties) or "none"
                problems.append(f"{policy.name}: unknown properties {', '.join(undeclared)} (accepted: {accepted})")
            properties.update(given)
        elif entry is not None:
            problems.append(f"{policy.name}: expected a level or an object, got {type(entry).__name__}")
        resolved[policy.name] = (level, properties)
    if problems:
        count = len(problems)
        raise GateError(f"policy config: {count} problem{'s' if count != 1 else ''}:\n"
                        + "\n".join(f"  - {p}" for p in problems))
    return resolved


def only(config: Mapping[str, tuple[str, dict[str, Any]]], names: set[str]) -> dict[str, tuple[str, dict[str, Any]]]:
    """The config with every policy but ``names`` disabled (properties kept)."""
    return {name: (level if name in names else "disabled", props) for name, (level, props) in config.items()}
