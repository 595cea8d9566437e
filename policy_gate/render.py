"""The gate's verdict as a Markdown section (a CI job's summary.md)."""

from __future__ import annotations

from policy_gate.result import GateResult


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
