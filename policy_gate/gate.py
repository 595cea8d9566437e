"""Run the policy pack over a preview-shaped plan, the way ``pulumi preview --policy-pack`` does.

Sequence per run: ``GetAnalyzerInfo``; ``Configure`` with every policy's
enforcement level and properties (the pack's defaults, overridden by a
``--policy-pack-config`` style JSON); ``Analyze`` for each resource;
``AnalyzeStack`` once with all of them. Any mandatory violation fails the gate.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from policy_gate.plan import PlanError, PlanResource, plan_resources, stack_urn

if TYPE_CHECKING:  # gRPC and the Pulumi protos load only when a pack is run (fast errors for bad input)
    from policy_gate.analyzer import PackInfo, PolicyPackProcess

LEVELS = ("advisory", "mandatory", "remediate", "disabled")

STACK_PLACEHOLDER = "(stack)"


class GateError(ValueError):
    """The gate could not run: bad plan, bad policy config, or the pack failed to start."""


@dataclass(frozen=True)
class Violation:
    level: str  # "mandatory" | "advisory"
    policy: str
    urn: str
    message: str

    def line(self) -> str:
        return f"[{self.level}] {self.policy}  {self.urn}: {self.message}"


@dataclass
class GateResult:
    violations: list[Violation]
    pack_name: str
    pack_version: str
    policies: list[tuple[str, str]]  # (name, effective level)
    resources_checked: int
    notes: list[str] = field(default_factory=list)

    @property
    def mandatory(self) -> list[Violation]:
        return [v for v in self.violations if v.level == "mandatory"]

    @property
    def advisory(self) -> list[Violation]:
        return [v for v in self.violations if v.level != "mandatory"]

    @property
    def exit_code(self) -> int:
        return 1 if self.mandatory else 0

    def of_policy(self, name: str) -> list[Violation]:
        return [v for v in self.violations if v.policy == name]


# ---- policy config ---------------------------------------------------------------------


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


# ---- the run -----------------------------------------------------------------------------


def run_gate(plan: Mapping[str, Any] | str | Path, policy_config: Mapping[str, Any] | str | Path | None = None,
             *, pack: PolicyPackProcess | None = None, pack_dir: str | Path | None = None) -> GateResult:
    """Check a plan (dict or path) against the pack. Starts and stops the pack unless ``pack`` is given."""
    try:
        resources = plan_resources(plan)
    except PlanError as exc:
        raise GateError(str(exc)) from None
    user_config = read_policy_config(policy_config)
    import grpc

    from policy_gate.analyzer import AnalyzerError, PolicyPackProcess

    try:
        if pack is not None:
            return _run(pack, resources, user_config)
        with PolicyPackProcess(**({"pack_dir": pack_dir} if pack_dir else {})) as started:
            return _run(started, resources, user_config)
    except AnalyzerError as exc:
        raise GateError(str(exc)) from None
    except grpc.RpcError as exc:
        detail = exc.details() if hasattr(exc, "details") else str(exc)
        raise GateError(f"the policy pack failed: {' '.join(str(detail).split())}") from None


def _run(pack: PolicyPackProcess, resources: list[PlanResource], user_config: Mapping[str, Any]) -> GateResult:
    info = pack.info()
    config = resolve_config(info, user_config)
    pack.configure(config)
    providers = {r.urn: r for r in resources if r.type.startswith("pulumi:providers:")}
    diagnostics = []
    for resource in resources:
        diagnostics.extend(pack.analyze(resource, providers))
    diagnostics.extend(pack.analyze_stack(resources, providers))
    root = stack_urn(resources) or STACK_PLACEHOLDER
    violations = sorted(
        {Violation("mandatory" if d.level in ("mandatory", "remediate") else "advisory", d.policy, d.urn or root,
                   d.message) for d in diagnostics},
        key=lambda v: (v.level != "mandatory", v.policy, v.urn, v.message),
    )
    return GateResult(
        violations=violations, pack_name=info.name, pack_version=info.version,
        policies=[(p.name, config[p.name][0]) for p in info.policies], resources_checked=len(resources),
    )


# ---- reporting -----------------------------------------------------------------------------


def _md(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def render_markdown(result: GateResult) -> str:
    """A summary.md section: one row per policy, then every violation."""
    counts: dict[str, int] = {}
    for v in result.violations:
        counts[v.policy] = counts.get(v.policy, 0) + 1
    verdict = "**failed**" if result.exit_code else "passed"
    lines = [
        f"### Policy pack `{result.pack_name}` {result.pack_version}: {verdict}",
        "",
        f"{result.resources_checked} resources checked against {len(result.policies)} policies: "
        f"{len(result.mandatory)} mandatory and {len(result.advisory)} advisory violations.",
        "",
        "| policy | level | result |",
        "|---|---|---|",
    ]
    for name, level in result.policies:
        found = counts.get(name, 0)
        status = "skipped" if level == "disabled" else ("pass" if not found else f"{found} violation(s)")
        lines.append(f"| `{name}` | {level} | {status} |")
    if result.violations:
        lines += ["", "#### Violations", ""]
        lines += [f"- **[{v.level}] {v.policy}** `{v.urn}`: {_md(v.message)}" for v in result.violations]
    return "\n".join(lines) + "\n"
