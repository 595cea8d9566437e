"""A large preview grown from a shipped stack's plan, for the policy gate's benchmark and its verdict test.

A stack grows in what runs in its cluster, not in clusters: the plan's cloud side (network, cluster, node
pools, accounts, providers, components), its drivers (Helm releases, DaemonSets, cluster-scoped objects such
as DeviceClasses and their namespaces) and the stack are kept once, and its application namespaces (every
namespace no Helm release installs into, other than Kubernetes' own) are repeated with all their objects:
copy ``k`` of namespace ``inference`` is ``inference-r<k>``, its objects keep their names and specs, their
resources are named ``<name>-r<k>``. Each copy's parent and dependencies point into the same copy where the
original pointed at a copied resource, and at the shared resource otherwise, so every copy lands on the same
cluster, pools and drivers as the original and meets or breaks the policies exactly as the original does:
the verdict (exit code, which policies fail at which level) is the plan's.

The file is written one step at a time; :func:`grow` never holds the grown plan in memory.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

K8S_PREFIX = "kubernetes:"
HELM_RELEASE = "kubernetes:helm.sh/v3:Release"
NAMESPACE = "kubernetes:core/v1:Namespace"
SYSTEM_NAMESPACES = {"kube-system", "kube-public", "kube-node-lease"}


def _state(step: Mapping[str, Any]) -> Mapping[str, Any]:
    return step.get("newState") or {}


def _metadata(step: Mapping[str, Any]) -> Mapping[str, Any]:
    return (_state(step).get("inputs") or {}).get("metadata") or {}


def application_namespaces(steps: list[Mapping[str, Any]]) -> set[str]:
    """The namespaces the plan's workloads live in: not a Helm release's, not Kubernetes' own."""
    releases = {str((_state(s).get("inputs") or {}).get("namespace") or "") for s in steps
                if _state(s).get("type") == HELM_RELEASE}
    used = {str(_metadata(s).get("namespace") or "") for s in steps if str(_state(s).get("type")).startswith(K8S_PREFIX)}
    return used - releases - SYSTEM_NAMESPACES - {""}


def _copied(step: Mapping[str, Any], namespaces: set[str]) -> bool:
    type_ = str(_state(step).get("type") or "")
    if not type_.startswith(K8S_PREFIX) or type_ == HELM_RELEASE:
        return False
    if type_ == NAMESPACE:
        return _metadata(step).get("name") in namespaces
    return _metadata(step).get("namespace") in namespaces


def grown_steps(plan: Mapping[str, Any], size: int) -> Iterator[dict[str, Any]]:
    """The plan's steps, then copies of its application namespaces, ``size`` steps in all."""
    steps = list(plan["steps"])
    namespaces = application_namespaces(steps)
    copied = [s for s in steps if _copied(s, namespaces)]
    if not copied:
        raise ValueError("the plan has no application namespace to repeat")
    urns = {s["urn"] for s in copied}
    yield from (copy.deepcopy(s) for s in steps[:size])
    made = min(len(steps), size)
    replica = 1
    while made < size:
        for step in copied:
            if made >= size:
                return
            yield _renamed(step, urns, replica)
            made += 1
        replica += 1


def _renamed(step: Mapping[str, Any], urns: set[str], k: int) -> dict[str, Any]:
    def urn(value: str) -> str:
        return f"{value}-r{k}" if value in urns else value

    out = copy.deepcopy(dict(step))
    out["urn"] = urn(out["urn"])
    state = out.get("newState")
    if state:
        state["urn"] = urn(state.get("urn") or step["urn"])
        if state.get("parent"):
            state["parent"] = urn(state["parent"])
        state["dependencies"] = [urn(d) for d in state.get("dependencies") or []]
        state["propertyDependencies"] = {key: [urn(d) for d in deps or []]
                                         for key, deps in (state.get("propertyDependencies") or {}).items()}
        metadata = (state.get("inputs") or {}).get("metadata")
        if isinstance(metadata, dict):
            key = "name" if state.get("type") == NAMESPACE else "namespace"
            metadata[key] = f"{metadata[key]}-r{k}"
    return out


def grow(source: Path | str, size: int, target: Path | str) -> int:
    """Write a preview of ``size`` resources grown from the plan at ``source``; its size in bytes."""
    plan = json.loads(Path(source).read_text())
    with open(target, "w") as out:
        out.write('{"steps": [\n')
        for i, step in enumerate(grown_steps(plan, size)):
            out.write(("" if i == 0 else ",\n") + json.dumps(step, separators=(",", ":")))
        out.write(f'\n], "diagnostics": [], "changeSummary": {{"create": {size}}}}}\n')
    return Path(target).stat().st_size
