"""plan.json: the run shaped like ``pulumi preview --json``."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

from offline_plan.run import Captured, PlanRun


def step(resource: Captured) -> dict[str, Any]:
    new_state: dict[str, Any] = {
        "type": resource.type,
        "urn": resource.urn,
        "custom": resource.custom,
        "parent": resource.parent,
        "inputs": resource.inputs,
        "dependencies": resource.dependencies,
        "propertyDependencies": resource.property_dependencies,
    }
    if resource.provider:
        new_state["provider"] = resource.provider
    if resource.aliases:
        new_state["aliases"] = resource.aliases
    if resource.replace_on_changes:
        new_state["replaceOnChanges"] = resource.replace_on_changes
    if resource.ignore_changes:
        new_state["ignoreChanges"] = resource.ignore_changes
    out: dict[str, Any] = {"op": "create", "urn": resource.urn}
    if resource.provider:
        out["provider"] = resource.provider
    out["newState"] = new_state
    return out


def plan_document(run: PlanRun) -> dict[str, Any]:
    steps = [step(r) for r in run.resources]
    diagnostics = [
        {"urn": d.urn, "severity": d.severity, "message": d.message} for d in run.diagnostics
    ] + [{"urn": "", "severity": "info", "message": note} for note in run.notes]
    return {
        "steps": steps,
        "diagnostics": diagnostics,
        "changeSummary": dict(Counter(s["op"] for s in steps)),
    }


def dumps(document: dict[str, Any]) -> str:
    """Stable text: sorted keys, fixed indentation, trailing newline."""
    return json.dumps(document, indent=2, sort_keys=True) + "\n"
