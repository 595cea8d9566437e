"""Read a ``pulumi preview --json``-shaped plan into the resources the analyzer sees.

Accepts the offline plan's ``plan.json`` and a real preview's JSON: every step
with a ``newState`` contributes one resource (its ``type``, ``urn``,
``parent``, ``inputs``, ``dependencies``, ``propertyDependencies`` and
``provider``, and ``outputs`` when the step has them: ``AnalyzeStack`` judges
those, as the engine does); steps that only delete (no ``newState``) are skipped; when a URN
appears in several steps (replacements) the last state wins. A file is streamed
(:mod:`policy_gate.stream`): one step in memory at a time.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from policy_gate.stream import STREAMED_PREVIEW, NotAnObject, StreamedSteps

STACK_TYPE = "pulumi:pulumi:Stack"
_EXPECTED = "expected the output of `pulumi preview --json` or an offline plan.json"


class PlanError(ValueError):
    """The plan file is missing or not shaped like ``pulumi preview --json`` output."""


@dataclass(frozen=True)
class PlanResource:
    urn: str
    type: str
    name: str
    parent: str
    inputs: dict[str, Any]
    dependencies: list[str] = field(default_factory=list)
    property_dependencies: dict[str, list[str]] = field(default_factory=dict)
    provider: str = ""  # "<provider urn>::<provider id>" or ""
    #: What ``AnalyzeStack`` gets: the step's ``newState.outputs`` when it has them (a real preview; empty where
    #: the provider was not configured), else None and the inputs (the offline plan).
    outputs: dict[str, Any] | None = None


def name_of(urn: str) -> str:
    return urn.rsplit("::", 1)[-1] if "::" in urn else urn


def type_of(urn: str) -> str:
    """The resource type from a URN (``urn:pulumi:stack::project::parent$type::name``)."""
    parts = urn.split("::")
    return parts[2].rsplit("$", 1)[-1] if len(parts) >= 4 else ""


def _steps_of(source: Mapping[str, Any] | str | Path) -> tuple[str, Iterator[tuple[int, Any]]]:
    """(how errors name the plan, its steps as ``(index, step)``): a document's list, or a file streamed."""
    if isinstance(source, Mapping):
        steps = source.get("steps")
        if not isinstance(steps, list):
            raise PlanError(f"plan: no 'steps' list; {_EXPECTED}")
        return "plan", enumerate(steps)
    import input_files

    path = Path(source)
    if path.is_dir() or not path.exists():
        problem = "is a directory" if path.is_dir() else "no such file"
        raise PlanError(f"{path}: {problem}; give a plan file: build/<stack>/plan.json from "
                        "`make plan STACK=<stack>`, or the output of `pulumi preview --json`")
    try:
        streamed = StreamedSteps(path, STREAMED_PREVIEW)
    except input_files.InputFileError as exc:
        raise PlanError(str(exc)) from None
    return str(path), _checked(streamed, path)


def _checked(streamed: StreamedSteps, path: Path) -> Iterator[tuple[int, Any]]:
    import input_files

    try:
        yield from streamed
    except input_files.InputFileError as exc:
        raise PlanError(str(exc)) from None
    except NotAnObject:
        # Not an object: read whole (within the same limits) for the exact reason, or name what it is.
        try:
            data = input_files.read_json(path, input_files.PREVIEW_JSON)
        except input_files.InputFileError as exc:
            raise PlanError(str(exc)) from None
        raise PlanError(f"{path}: expected a JSON object with a 'steps' list, found {type(data).__name__}") \
            from None
    if not streamed.saw_steps or streamed.steps_type:
        raise PlanError(f"{path}: no 'steps' list; {_EXPECTED}")


def read_plan(source: Mapping[str, Any] | str | Path) -> dict[str, Any]:
    """The whole document (small plans; the gate itself streams with :func:`iter_plan_resources`)."""
    if isinstance(source, Mapping):
        return dict(source)
    where, steps = _steps_of(source)
    return {"steps": [step for _, step in steps]}


def iter_plan_resources(source: Mapping[str, Any] | str | Path) -> Iterator[tuple[int, PlanResource]]:
    """``(step index, resource)`` for every step with a ``newState``, in step order, one step in memory at a time.

    A URN may come back (a replacement's steps): the caller keeps the last one, see :func:`plan_resources`.
    """
    where, steps = _steps_of(source)
    for index, step in steps:
        resource = _resource(where, index, step)
        if resource is not None:
            yield index, resource


def _resource(where: str, index: int, step: Any) -> PlanResource | None:
    if not isinstance(step, Mapping):
        raise PlanError(f"{where}: steps[{index}] is not an object")
    state = step.get("newState")
    if state is None:
        return None
    if not isinstance(state, Mapping):
        raise PlanError(f"{where}: steps[{index}].newState is not an object")
    urn = state.get("urn") or step.get("urn")
    if not isinstance(urn, str) or not urn.startswith("urn:pulumi:"):
        raise PlanError(f"{where}: steps[{index}] has no resource URN")
    type_ = state.get("type") or type_of(urn)
    if not isinstance(type_, str) or not type_:
        raise PlanError(f"{where}: steps[{index}].newState has no type")
    inputs = state.get("inputs")
    if inputs is None:
        inputs = {}
    if not isinstance(inputs, Mapping):
        raise PlanError(f"{where}: steps[{index}].newState.inputs is not an object")
    outputs = state.get("outputs")
    if outputs is not None and not isinstance(outputs, Mapping):
        raise PlanError(f"{where}: steps[{index}].newState.outputs is not an object")
    dependencies = state.get("dependencies") or []
    property_dependencies = state.get("propertyDependencies") or {}
    if not isinstance(dependencies, list) or not isinstance(property_dependencies, Mapping):
        raise PlanError(f"{where}: steps[{index}].newState dependencies are malformed")
    return PlanResource(
        urn=urn,
        type=type_,
        name=name_of(urn),
        parent=str(state.get("parent") or ""),
        inputs=dict(inputs),
        dependencies=[str(d) for d in dependencies],
        property_dependencies={str(k): [str(u) for u in (v or [])] for k, v in property_dependencies.items()},
        provider=str(state.get("provider") or step.get("provider") or ""),
        outputs=None if outputs is None else dict(outputs),
    )


def plan_resources(source: Mapping[str, Any] | str | Path) -> list[PlanResource]:
    """The resources of a preview-shaped plan, in step order; a URN's last step wins, in its place."""
    by_urn: dict[str, PlanResource] = {}
    for _, resource in iter_plan_resources(source):
        by_urn.pop(resource.urn, None)
        by_urn[resource.urn] = resource
    return list(by_urn.values())


def stack_urn(resources: list[PlanResource]) -> str:
    return next((r.urn for r in resources if r.type == STACK_TYPE), "")
