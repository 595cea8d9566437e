"""The diff three ways: a terminal table, ``pulumi preview --json``-shaped JSON, and diff.md for a PR comment."""

from __future__ import annotations

import json
import textwrap
from dataclasses import dataclass, field
from typing import Any

from plan_diff import impact
from plan_diff.compare import PlanDiff, Resource, ResourceChange, detailed_diff, top_level_keys
from plan_diff.properties import MISSING, format_path, scrub

SYMBOL = {"create": "+", "delete": "-", "update": "~", "replace": "+-"}
WORD = {"create": "create", "delete": "delete", "update": "update", "replace": "replace"}
MAX_VALUE = 100


@dataclass
class Meta:
    stack: str
    base_ref: str
    base_commit: str
    head: str = "working tree"
    notes: list[str] = field(default_factory=list)

    @property
    def heading(self) -> str:
        return f"base `{self.base_ref}` ({self.base_commit[:12]}) -> {self.head}"


def _value(value: Any, limit: int = MAX_VALUE) -> str:
    if value is MISSING:
        return "(none)"
    text = json.dumps(scrub(value), sort_keys=True)
    return text if len(text) <= limit else text[:limit - 3] + "..."


def _pair(old: Any, new: Any, limit: int = MAX_VALUE) -> tuple[str, str]:
    """Both sides of a change; two long texts are cut around where they first differ, not at their start."""
    a, b = _value(old, 10 ** 6), _value(new, 10 ** 6)
    if len(a) <= limit and len(b) <= limit:
        return a, b
    first = next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b)))
    start = max(0, first - limit // 4)

    def cut(text: str) -> str:
        piece = text[start:start + limit - 6]
        return ("..." if start else "") + piece + ("..." if start + len(piece) < len(text) else "")

    return cut(a), cut(b)


def _groups(diff: PlanDiff) -> list[tuple[Resource | None, list[ResourceChange]]]:
    """Consecutive changes under the same component (the changes come sorted by component)."""
    groups: list[tuple[str | None, Resource | None, list[ResourceChange]]] = []
    for change in diff.changes:
        key = change.component.urn if change.component is not None else None
        if groups and groups[-1][0] == key:
            groups[-1][2].append(change)
        else:
            groups.append((key, change.component, [change]))
    return [(component, changes) for _key, component, changes in groups]


def _group_title(component: Resource | None) -> str:
    return "not under a component" if component is None else f"{component.name} ({component.type})"


def summary_line(diff: PlanDiff) -> str:
    parts = [f"{diff.count(op)} to {WORD[op]}" for op in ("create", "update", "replace", "delete") if diff.count(op)]
    return (", ".join(parts) or "no changes") + f"; {diff.unchanged} unchanged"


# --- terminal ---------------------------------------------------------------------------------------

def terminal(diff: PlanDiff, meta: Meta) -> str:
    lines = [f"Offline diff of stack {meta.stack}: {meta.heading.replace('`', '')}"]
    lines += [f"note: {n}" for n in meta.notes]
    for _urn, message in impact.warnings(diff):
        lines.append(textwrap.fill("WARNING: " + message.replace("**", "").replace("`", ""), width=110,
                                   subsequent_indent="  "))
    for component, changes in _groups(diff):
        lines.append("")
        lines.append(_group_title(component))
        width = max(len(c.type) for c in changes)
        for change in changes:
            lines.append(f"  {SYMBOL[change.op]:>2} {WORD[change.op]:<8} {change.type:<{width}}  {change.name}")
            for prop in change.properties:
                marker = "  [forces replacement]" if change.replacing(prop) else ""
                before, after = _pair(prop.old, prop.new)
                lines.append(f"         {format_path(prop.path)}: {before} -> {after}{marker}")
            lines += [f"         note: {n}" for n in change.notes]
    if len(diff.renamed) <= 5:
        lines += [f"\nrenamed, kept by its alias (no change): {old} -> {new}" for old, new in diff.renamed]
    else:
        lines.append(f"\n{len(diff.renamed)} resources kept under a new URN by their aliases, with no other change "
                     "(diff.json lists them)")
    lines.append("")
    lines.append(summary_line(diff))
    return "\n".join(lines) + "\n"


# --- JSON -------------------------------------------------------------------------------------------

def _state(res: Resource) -> dict[str, Any]:
    state: dict[str, Any] = {"urn": res.urn, "type": res.type, "custom": res.custom, "parent": res.parent,
                             "inputs": scrub(res.inputs)}
    if res.provider:
        state["provider"] = res.provider
    return state


def _step(change: ResourceChange) -> dict[str, Any]:
    step: dict[str, Any] = {"op": change.op, "urn": change.urn, "type": change.type}
    if change.resource.provider:
        step["provider"] = change.resource.provider
    if change.old is not None:
        step["oldState"] = _state(change.old)
    if change.new is not None:
        step["newState"] = _state(change.new)
    if change.properties:
        keys = top_level_keys([p.path for p in change.properties])
        replace_keys = top_level_keys([r.change.path for r in change.replacements])
        step["diffs"] = keys
        step["diffReasons"] = keys
        if replace_keys:
            step["keys"] = replace_keys
            step["replaceReasons"] = replace_keys
        step["detailedDiff"] = detailed_diff(change)
        step["propertyChanges"] = [_property(change, p) for p in change.properties]
    if change.component is not None:
        step["component"] = change.component.urn
    if change.notes:
        step["notes"] = change.notes
    return step


def _property(change: ResourceChange, prop: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"path": format_path(prop.path), "kind": prop.kind}
    if prop.old is not MISSING:
        out["old"] = scrub(prop.old)
    if prop.new is not MISSING:
        out["new"] = scrub(prop.new)
    rule = change.replacing(prop)
    if rule is not None:
        out["forcesReplacement"] = rule.source
    return out


def preview_json(diff: PlanDiff, meta: Meta) -> dict[str, Any]:
    """Steps as ``pulumi preview --json`` writes them (op, urn, oldState/newState, diffReasons,
    replaceReasons, detailedDiff), with the engine event's ``type``/``diffs``/``keys`` beside them."""
    return {
        "stack": meta.stack,
        "base": {"ref": meta.base_ref, "commit": meta.base_commit},
        "head": meta.head,
        "steps": [_step(c) for c in diff.changes],
        "diagnostics": [{"urn": urn, "severity": "warning", "message": message}
                        for urn, message in impact.warnings(diff)]
                       + [{"urn": "", "severity": "info", "message": note} for note in meta.notes],
        "renamed": [{"oldUrn": old, "urn": new} for old, new in diff.renamed],
        "changeSummary": diff.summary,
    }


# --- diff.md ----------------------------------------------------------------------------------------

def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def markdown(diff: PlanDiff, meta: Meta) -> str:
    parts = [f"## Offline diff: stack `{meta.stack}`", "",
             f"{meta.heading}: **{summary_line(diff)}**. Planned offline under mocks; computed values a real "
             "preview knows only from the cloud are not compared.", ""]
    warnings = impact.warnings(diff)
    if warnings:
        parts += ["> [!WARNING]", "> **Replacements and deletions that affect running replicas**", ">"]
        parts += [f"> - {message}" for _urn, message in warnings]
        parts.append("")
    parts += [f"- {note}" for note in meta.notes]
    if meta.notes:
        parts.append("")
    if not diff.changes:
        parts.append("No resource changes.")
    for component, changes in _groups(diff):
        title = f"`{component.name}` (`{component.type}`)" if component is not None else "Not under a component"
        parts += [f"### {title}", "", "| op | resource | property | before | after |", "|---|---|---|---|---|"]
        for change in changes:
            head = f"{SYMBOL[change.op]} {WORD[change.op]}"
            resource = f"`{change.type.rsplit(':', 1)[-1]}` `{change.name}`"
            if not change.properties:
                parts.append(f"| {head} | {resource} | | | |")
            for i, prop in enumerate(change.properties):
                rule = change.replacing(prop)
                path = f"`{_cell(format_path(prop.path))}`" + (" **forces replacement**" if rule else "")
                before, after = _pair(prop.old, prop.new, 60)
                parts.append(f"| {head if i == 0 else ''} | {resource if i == 0 else ''} | {path} "
                             f"| `{_cell(before)}` | `{_cell(after)}` |")
            for note in change.notes:
                parts.append(f"| | | _{_cell(note)}_ | | |")
        parts.append("")
    if diff.renamed:
        parts += ["Kept under a new URN by an alias (no change): " + ", ".join(
            f"`{new.rsplit('::', 1)[-1]}`" for _old, new in diff.renamed), ""]
    sources = sorted({r.rule.source for c in diff.changes for r in c.replacements})
    if sources:
        parts += ["<details><summary>Where the replacement rules come from</summary>", ""]
        parts += [f"- {s}" for s in sources]
        parts += ["", "</details>", ""]
    return "\n".join(parts).rstrip() + "\n"
