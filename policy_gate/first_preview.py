"""An offline plan as the real engine sees it in a stack's first preview: values no one can know yet, unknown.

The offline plan runs the program under mocks, so every value is known. In a real first ``pulumi preview`` the
engine knows only what the program wrote down (pulumi v3.274.1, ``pkg/resource/deploy``):

- an input that flows from another resource's output is unknown when that output is: everything a
  Kubernetes resource outputs (its provider's kubeconfig is itself unknown, see below), and what a cloud
  provider computes (ids, ARNs, e-mails, endpoints, certificates). What a cloud provider only echoes back
  from the resource's own inputs (a node pool's ``name``, a cluster's ``name``) is known: providers preview
  a create as its inputs plus unknown computed outputs. The plan's ``propertyDependencies`` say which input
  came from which resource; within that input, the values taken from the dependency are the ones that equal
  a name it was given (a Kubernetes object's ``metadata.name``/``namespace``, a release's ``name``) or, for a
  cloud dependency, the ones built from its names that are not one of them (``<name>-id``, an ARN, an
  e-mail). An input in which no value can be traced to its dependency is unknown as a whole (an ``apply``
  over the dependency's outputs, such as a kubeconfig). A provider's secret input with no property
  dependency while the provider depends on cloud resources is unknown too: AKS's kubeconfig comes from an
  invoke over the cluster, which the program does not run while its arguments are unknown.
- a provider whose configuration holds an unknown value is not configured during the preview, and its
  ``Create`` hands back an empty property map (``sdk/go/common/resource/plugin/provider_plugin.go``,
  ``Create``: "if !pcfg.known ... return CreateResponse{}"; the old behaviour, the inputs, only with
  ``PULUMI_LEGACY_PROVIDER_PREVIEW``). So every resource of the Kubernetes provider has empty outputs, and
  ``AnalyzeStack`` (``step_generator.go``, ``AnalyzeResources``: "AnalyzeStack is called on the final
  outputs of each resource") hands the stack policies those empty maps; ``Analyze`` gets the inputs.

:func:`first_preview` writes each step's ``newState.inputs`` with the engine's unknown sentinel
(``04da6b54-80e4-46f7-96ec-b56ff0331ba9``, what ``pulumi preview --json`` prints for an unknown value and
what the Analyzer protocol carries) and ``newState.outputs`` (empty where the provider is unconfigured;
elsewhere the inputs, and, given a table of what each provider computes, those outputs unknown, as the
project's stand-in providers preview them; the tests pass the offline plan's mocks' table, which this package
does not import: the offline plan runs the gate). ``python -m policy_gate.first_preview build/dev/plan.json out.json`` writes one; then
``make policy-check PLAN=out.json`` runs the pack over it as ``pulumi preview --policy-pack`` would.
"""

from __future__ import annotations

import argparse
import copy
import json
import sys
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

#: The engine's sentinel for an unknown value (pulumi sdk ``resource/sig``: UnknownStringValue).
UNKNOWN = "04da6b54-80e4-46f7-96ec-b56ff0331ba9"
#: What the offline mocks write for an output they cannot make up (offline_plan).
_MOCK_UNKNOWN = "[unknown]"
_SECRET = "[secret]"
_PROVIDER_PREFIX = "pulumi:providers:"
_K8S_NAME_PATHS = (("metadata", "name"), ("metadata", "namespace"), ("name",), ("namespace",))
#: A name shorter than this is not looked for inside other values (``v1``, ``true``).
_SHORTEST_NAME = 6


def _names_it(key: str) -> bool:
    """A cloud resource's input that names it (``name``, ``nodeGroupName``, ``accountId``)."""
    return key in ("name", "accountId") or key.endswith("Name")


def _leaves(value: Any) -> Iterable[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for item in value.values():
            yield from _leaves(item)
    elif isinstance(value, list):
        for item in value:
            yield from _leaves(item)


def _dig(node: Any, path: tuple[str, ...]) -> Any:
    for key in path:
        if not isinstance(node, Mapping):
            return None
        node = node.get(key)
    return node


def _is_kubernetes(type_: str) -> bool:
    return type_.startswith("kubernetes:")


def _taken_from(dependency: Mapping[str, Any]) -> tuple[set[str], set[str]]:
    """(values that are the dependency's unknown outputs when met whole, names that computed outputs contain)."""
    urn_name = str(dependency.get("urn", "")).rsplit("::", 1)[-1]
    inputs = dependency.get("inputs") or {}
    if _is_kubernetes(str(dependency.get("type", ""))):
        names = {v for p in _K8S_NAME_PATHS if isinstance(v := _dig(inputs, p), str) and v}
        return names, set()
    names = {v for k, v in inputs.items() if isinstance(v, str) and _names_it(k)} | {urn_name}
    return set(), {n for n in names if len(n) >= _SHORTEST_NAME}


def _mark(value: Any, dependency: Mapping[str, Any], echoes: set[str]) -> tuple[Any, bool]:
    """The value with what it takes from ``dependency`` unknown, and whether anything was traced to it."""
    whole, names = _taken_from(dependency)
    traced = False

    def walk(node: Any) -> Any:
        nonlocal traced
        if isinstance(node, str):
            if node == UNKNOWN:
                traced = True
                return node
            if node in whole:
                traced = True
                return UNKNOWN
            if node in echoes:
                traced = True
                return node
            if any(n in node for n in names):
                traced = True
                return UNKNOWN
            return node
        if isinstance(node, Mapping):
            return {k: walk(v) for k, v in node.items()}
        if isinstance(node, list):
            return [walk(v) for v in node]
        return node

    return walk(value), traced


def _contains_unknown(value: Any) -> bool:
    return any(leaf == UNKNOWN for leaf in _leaves(value))


def _first_preview_inputs(state: Mapping[str, Any], by_urn: Mapping[str, Mapping[str, Any]],
                          previewed: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """``state``'s inputs as a first preview has them; ``previewed``: the dependencies' own (an echo of an input
    that is itself unknown is unknown: a NAT gateway's ``allocationId``)."""
    inputs = json.loads(json.dumps(state.get("inputs") or {}).replace(json.dumps(_MOCK_UNKNOWN),
                                                                       json.dumps(UNKNOWN)))
    for key, urns in (state.get("propertyDependencies") or {}).items():
        if key not in inputs:
            continue
        for urn in urns or []:
            dependency = by_urn.get(urn)
            if dependency is None or dependency.get("type", "").startswith(_PROVIDER_PREFIX):
                continue
            echoes = set() if _is_kubernetes(str(dependency.get("type", ""))) else {
                v for v in (previewed.get(urn) or {}).values() if isinstance(v, str) and v != UNKNOWN}
            marked, traced = _mark(inputs[key], dependency, echoes)
            inputs[key] = marked if traced else UNKNOWN
    if str(state.get("type", "")).startswith(_PROVIDER_PREFIX) and any(
            not str(by_urn.get(u, {}).get("type", _PROVIDER_PREFIX)).startswith(_PROVIDER_PREFIX)
            for u in state.get("dependencies") or []):
        for key, value in inputs.items():
            if value == _SECRET and not (state.get("propertyDependencies") or {}).get(key):
                inputs[key] = UNKNOWN
    return inputs


def _unknown_over(inputs: Any, outputs: Any) -> Any:
    """Outputs before the resource exists: what echoes the inputs stays, every computed value is unknown."""
    if isinstance(inputs, Mapping) and isinstance(outputs, Mapping):
        return {k: _unknown_over(inputs[k], v) if k in inputs else UNKNOWN for k, v in outputs.items()}
    return inputs if inputs == outputs else UNKNOWN


def _outputs(type_: str, urn: str, original: Mapping[str, Any], inputs: dict[str, Any],
             computed: Computed | None) -> dict[str, Any]:
    """A configured provider's preview of a create: the inputs, and what ``computed`` says the provider adds,
    unknown (without it, the inputs: the pack drops unknown outputs the program did not set anyway)."""
    extra = computed(type_, urn.rsplit("::", 1)[-1], dict(original)) if computed else {}
    return _unknown_over(inputs, {**inputs, **extra}) if extra else copy.deepcopy(inputs)


def _provider_urn(reference: str) -> str:
    return reference.rsplit("::", 1)[0] if reference.count("::") >= 4 else reference


#: ``(type, resource name, inputs) -> the outputs the provider computes`` (e.g. the offline plan's mocks' table).
Computed = Callable[[str, str, Mapping[str, Any]], Mapping[str, Any]]


def first_preview(plan: Mapping[str, Any], computed: Computed | None = None) -> dict[str, Any]:
    """The plan document as a first preview carries it: inputs with unknown sentinels, and outputs (see module).

    ``computed`` names what a cloud provider computes for a resource; those outputs are unknown in the result.
    """
    document = copy.deepcopy(dict(plan))
    by_urn: dict[str, dict[str, Any]] = {}
    unconfigured: set[str] = set()
    previewed: dict[str, dict[str, Any]] = {}
    for step in document.get("steps") or []:
        state = step.get("newState") if isinstance(step, Mapping) else None
        if not isinstance(state, dict):
            continue
        original = copy.deepcopy(state)
        state["inputs"] = _first_preview_inputs(original, by_urn, previewed)
        type_ = str(state.get("type", ""))
        provider = _provider_urn(str(state.get("provider") or ""))
        if type_.startswith(_PROVIDER_PREFIX) and _contains_unknown(state["inputs"]):
            unconfigured.add(str(state.get("urn", "")))
        if state.get("custom") is not False and provider in unconfigured:
            state["outputs"] = {}
        else:
            state["outputs"] = _outputs(type_, str(original.get("urn", "")), original.get("inputs") or {},
                                        state["inputs"], computed)
        by_urn[str(original.get("urn", ""))] = original
        previewed[str(original.get("urn", ""))] = state["inputs"]
    return document


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m policy_gate.first_preview",
                                     description="Write an offline plan as the engine sees it in a first preview.")
    parser.add_argument("plan", help="an offline plan, e.g. build/dev/plan.json from `make plan STACK=dev`")
    parser.add_argument("out", help="where to write the first-preview plan (JSON)")
    args = parser.parse_args(argv)
    from policy_gate.plan import PlanError, read_plan

    try:
        document = read_plan(args.plan)
    except PlanError as exc:
        print(f"policy_gate.first_preview: error: {exc}", file=sys.stderr)
        return 2
    Path(args.out).write_text(json.dumps(first_preview(document), indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
