"""Kubernetes objects of a plan, as YAML files validated against the cluster version's schemas."""

from __future__ import annotations

import copy
import functools
import re
from dataclasses import dataclass
from typing import Any

import jsonschema
import kubernetes_validate
import yaml

from offline_plan.run import PlanRun

#: Pulumi types that are not plain Kubernetes objects.
NOT_OBJECTS = re.compile(r"^kubernetes:(helm\.sh/|yaml|kustomize)")


@dataclass(frozen=True)
class Manifest:
    urn: str
    filename: str
    obj: dict[str, Any]


@dataclass(frozen=True)
class SchemaResult:
    filename: str
    status: str  # "valid" | "invalid" | "no-schema"
    detail: str = ""


def kubernetes_objects(run: PlanRun) -> list[dict[str, Any]]:
    """Every Kubernetes object the plan would create (deep copies)."""
    return [copy.deepcopy(m.obj) for m in manifests(run)]


def manifests(run: PlanRun) -> list[Manifest]:
    out: list[Manifest] = []
    for resource in run.resources:
        if not resource.type.startswith("kubernetes:") or NOT_OBJECTS.match(resource.type):
            continue
        obj = resource.inputs
        if "kind" not in obj or "apiVersion" not in obj:
            continue
        out.append(Manifest(resource.urn, _filename(obj), _ordered(obj)))
    return sorted(out, key=lambda m: m.filename)


def _filename(obj: dict[str, Any]) -> str:
    meta = obj.get("metadata") or {}
    namespace = meta.get("namespace") or "_cluster"
    group = obj["apiVersion"].split("/")[0] if "/" in obj["apiVersion"] else "core"
    return f"{namespace}--{obj['kind'].lower()}.{group}--{meta.get('name', 'unnamed')}.yaml"


def _ordered(obj: dict[str, Any]) -> dict[str, Any]:
    """apiVersion, kind, metadata first, as people write manifests."""
    head = {k: obj[k] for k in ("apiVersion", "kind", "metadata") if k in obj}
    return {**head, **{k: v for k, v in sorted(obj.items()) if k not in head}}


def _validate_custom(manifest: Manifest) -> SchemaResult:
    schema = PROJECT_SCHEMAS.get((manifest.obj.get("apiVersion"), manifest.obj.get("kind")))
    if schema is None:
        return SchemaResult(manifest.filename, "no-schema",
                            f"{manifest.obj['apiVersion']} {manifest.obj['kind']} is a custom resource; "
                            "no published schema to validate against")
    errors = sorted(jsonschema.Draft7Validator(schema).iter_errors(manifest.obj), key=lambda e: list(e.path))
    if errors:
        where = "/".join(str(p) for p in errors[0].path) or "(root)"
        return SchemaResult(manifest.filename, "invalid", f"{where}: {errors[0].message}")
    return SchemaResult(manifest.filename, "valid", "checked against the project's ComputeClass field schema")


#: libyaml's safe dumper when PyYAML was built with it (the same output, several times faster).
_SAFE_DUMPER = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


def to_yaml(obj: dict[str, Any]) -> str:
    return yaml.dump(obj, Dumper=_SAFE_DUMPER, sort_keys=False, default_flow_style=False, width=100)


#: The fields of GKE's ComputeClass (cloud.google.com/v1) that this project sets, with their types
#: from GKE's CRD reference. GKE publishes no JSON schema, so this checks our part of the object.
COMPUTE_CLASS_SCHEMA = {
    "type": "object",
    "required": ["apiVersion", "kind", "metadata", "spec"],
    "properties": {
        "metadata": {"type": "object", "required": ["name"]},
        "spec": {
            "type": "object",
            "required": ["priorities"],
            "properties": {
                "priorities": {
                    "type": "array", "minItems": 1,
                    "items": {"type": "object", "properties": {
                        "nodepools": {"type": "array", "items": {"type": "string"}, "minItems": 1}}},
                },
                "autoscalingPolicy": {"type": "object", "properties": {
                    "consolidationDelayMinutes": {"type": "integer", "minimum": 0},
                    "consolidationThreshold": {"type": "integer", "minimum": 0, "maximum": 100},
                    "gpuConsolidationThreshold": {"type": "integer", "minimum": 0, "maximum": 100}},
                    "additionalProperties": False},
                "whenUnsatisfiable": {"enum": ["ScaleUpAnyway", "DoNotScaleUp"]},
                "activeMigration": {"type": "object", "properties": {
                    "optimizeRulePriority": {"type": "boolean"},
                    "ensureAllDaemonSetPodsRunning": {"type": "boolean"}}, "additionalProperties": False},
                "nodePoolAutoCreation": {"type": "object", "properties": {"enabled": {"type": "boolean"}}},
                "description": {"type": "string"},
            },
        },
    },
}
PROJECT_SCHEMAS = {("cloud.google.com/v1", "ComputeClass"): COMPUTE_CLASS_SCHEMA}


def schema_version_note(kubernetes_version: str) -> str | None:
    """Why the manifests are validated against an older minor's schemas than the cluster's, or None.

    kubernetes-validate ships the schemas of the minors released before it; a cluster minor newer than
    those (1.38 the day clusters offer it) is validated against the newest schemas it has, and said so,
    rather than left unvalidated or ending the plan."""
    from kubernetes_validate import utils

    latest = utils.major_minor(utils.latest_version())
    if _minor(kubernetes_version) <= _minor(latest):
        return None
    return (f"kubernetesVersion {kubernetes_version} is newer than the schemas kubernetes-validate "
            f"{_package_version()} ships (up to {latest}): the manifests are validated against {latest}'s; "
            "fields new in the cluster's version are reported as unknown")


def _minor(version: str) -> tuple[int, int]:
    major, minor = (re.findall(r"\d+", version) + ["0", "0"])[:2]
    return int(major), int(minor)


def _package_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("kubernetes-validate")
    except PackageNotFoundError:
        return "(unknown version)"


@functools.cache
def _strict_validator(kubernetes_version: str, api_version: str, kind: str) -> Any:
    """kubernetes-validate's strict schema for one kind, compiled once per run.

    ``kubernetes_validate.validate`` re-reads and re-links the large definitions file on
    every call; this resolves the same files the same way and keeps the validator.
    """
    from kubernetes_validate import utils
    from referencing import Registry, Resource

    wanted = min(_minor(kubernetes_version), _minor(utils.latest_version()))
    version = [v for v in utils.all_versions() if _minor(v) <= wanted][-1]
    group = re.sub(r"^([^./]*)(?:\.[^/]*)?/", r"\1-", api_version)
    folder = f"kubernetes-json-schema/v{version}-local-strict"
    try:
        schema = utils.schema_contents(f"{folder}/{kind.lower()}-{group}.json", version)
    except FileNotFoundError:
        raise kubernetes_validate.SchemaNotFoundError(version=version, kind=kind, api_version=api_version) from None
    definitions = utils.schema_contents(f"{folder}/_definitions.json", version)
    registry = Resource.from_contents(definitions) @ (Resource.from_contents(schema) @ Registry())
    return jsonschema.validators.Draft202012Validator(schema, registry=registry)


def validate(manifest: Manifest, kubernetes_version: str) -> SchemaResult:
    """Strict schema validation for the stack's Kubernetes version."""
    obj = manifest.obj
    try:
        validator = _strict_validator(kubernetes_version, obj["apiVersion"], obj["kind"])
    except kubernetes_validate.SchemaNotFoundError:
        return _validate_custom(manifest)
    error = jsonschema.exceptions.best_match(validator.iter_errors(obj))
    if error is not None:
        where = "/".join(str(p) for p in error.path) or "(root)"
        return SchemaResult(manifest.filename, "invalid", f"{where}: {error.message}")
    return SchemaResult(manifest.filename, "valid")
