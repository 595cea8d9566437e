"""The offline plan held against the real engine's preview: same URNs, types, parents, providers, dependencies, inputs.

    python -m pulumi_engine compare build/dev/plan.json build/dev/engine/first/preview.json

Both documents are shaped like ``pulumi preview --json`` (``steps[].newState``). A value the engine does not know
yet (its unknown sentinel) or the plan marks ``[unknown]`` matches anything; a secret matches when both sides mask
it (the engine masks a secret value whole, ``"[secret]"``; the plan masks each leaf so its manifests keep their
shape). Every other difference is reported, one line each, naming the URN and the property path.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

ENGINE_UNKNOWN = "04da6b54-80e4-46f7-96ec-b56ff0331ba9"
PLAN_UNKNOWN = "[unknown]"
#: Fields of a step's state that name other resources or say what the resource is.
COMPARED = ("type", "parent", "custom")


def states(document: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """URN -> the step's new state, for every step of a preview-shaped document."""
    found: dict[str, dict[str, Any]] = {}
    for step in document.get("steps") or []:
        state = step.get("newState") or step.get("oldState") or {}
        urn = state.get("urn") or step.get("urn")
        if urn:
            found[urn] = state
    return found


def provider_urn(reference: str | None) -> str:
    """``<provider urn>::<id>`` -> the provider's URN (the id is unknown in a first preview)."""
    if not reference:
        return ""
    head, _, tail = reference.rpartition("::")
    return head if head.startswith("urn:pulumi:") and "::" in head else reference


def _is_unknown(value: Any) -> bool:
    return value in (ENGINE_UNKNOWN, PLAN_UNKNOWN)


def _is_secret_mask(value: Any) -> bool:
    return isinstance(value, str) and (value == "[secret]" or (value.startswith("[secret:") and value.endswith("]")))


def _all_masked(value: Any) -> bool:
    if isinstance(value, dict):
        return all(_all_masked(v) for v in value.values())
    if isinstance(value, list):
        return all(_all_masked(v) for v in value)
    return _is_secret_mask(value) or _is_unknown(value)


def value_differences(plan: Any, engine: Any, path: str = "") -> list[str]:
    """Where ``plan`` and ``engine`` differ, both being known (see the module's docstring)."""
    if _is_unknown(plan) or _is_unknown(engine):
        return []
    if _is_secret_mask(engine) or _is_secret_mask(plan):
        return [] if _all_masked(plan) and _all_masked(engine) else [f"{path or '.'}: secret on one side only"]
    if isinstance(plan, dict) and isinstance(engine, dict):
        out: list[str] = []
        for key in sorted(set(plan) | set(engine)):
            where = f"{path}.{key}" if path else str(key)
            if key not in engine:
                out.append(f"{where}: only in the plan ({json.dumps(plan[key])[:80]})")
            elif key not in plan:
                out.append(f"{where}: only in the engine ({json.dumps(engine[key])[:80]})")
            else:
                out += value_differences(plan[key], engine[key], where)
        return out
    if isinstance(plan, list) and isinstance(engine, list):
        if len(plan) != len(engine):
            return [f"{path}: {len(plan)} items in the plan, {len(engine)} in the engine"]
        return [d for i, (p, e) in enumerate(zip(plan, engine, strict=True)) for d in value_differences(p, e, f"{path}[{i}]")]
    if isinstance(plan, float) and plan.is_integer():
        plan = int(plan)
    if isinstance(engine, float) and engine.is_integer():
        engine = int(engine)
    return [] if plan == engine else [f"{path or '.'}: plan {json.dumps(plan)[:80]}, engine {json.dumps(engine)[:80]}"]


def differences(plan_document: dict[str, Any], engine_document: dict[str, Any]) -> list[str]:
    """Every way the plan is not the engine's plan; empty when it is."""
    plan, engine = states(plan_document), states(engine_document)
    out = [f"only in the plan: {urn}" for urn in sorted(set(plan) - set(engine))]
    out += [f"only in the engine: {urn}" for urn in sorted(set(engine) - set(plan))]
    for urn in sorted(set(plan) & set(engine)):
        p, e = plan[urn], engine[urn]
        for key in COMPARED:
            if (p.get(key) or "") != (e.get(key) or "") and not (key == "custom" and bool(p.get(key)) == bool(e.get(key))):
                out.append(f"{urn}: {key}: plan {p.get(key)!r}, engine {e.get(key)!r}")
        if provider_urn(p.get("provider")) != provider_urn(e.get("provider")):
            out.append(f"{urn}: provider: plan {provider_urn(p.get('provider'))!r}, "
                       f"engine {provider_urn(e.get('provider'))!r}")
        if sorted(set(p.get("dependencies") or [])) != sorted(set(e.get("dependencies") or [])):
            only_p = sorted(set(p.get("dependencies") or []) - set(e.get("dependencies") or []))
            only_e = sorted(set(e.get("dependencies") or []) - set(p.get("dependencies") or []))
            out.append(f"{urn}: dependencies: only in the plan {only_p}, only in the engine {only_e}")
        out += [f"{urn}: inputs.{d}" for d in value_differences(p.get("inputs") or {}, e.get("inputs") or {})]
    return out


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: python -m pulumi_engine compare PLAN.json ENGINE_PREVIEW.json", file=sys.stderr)
        return 2
    found = differences(json.loads(Path(argv[0]).read_text()), json.loads(Path(argv[1]).read_text()))
    for line in found:
        print(line)
    print(f"{len(found)} difference(s)")
    return 1 if found else 0
