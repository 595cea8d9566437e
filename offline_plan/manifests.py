"""Kubernetes objects of a plan, as YAML files validated against the cluster version's schemas."""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass
from typing import Any

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


def to_yaml(obj: dict[str, Any]) -> str:
    return yaml.safe_dump(obj, sort_keys=False, default_flow_style=False, width=100)


def validate(manifest: Manifest, kubernetes_version: str) -> SchemaResult:
    """Strict schema validation for the stack's Kubernetes version."""
    try:
        kubernetes_validate.validate(manifest.obj, kubernetes_version, strict=True)
    except kubernetes_validate.SchemaNotFoundError:
        return SchemaResult(manifest.filename, "no-schema",
                            f"{manifest.obj['apiVersion']} {manifest.obj['kind']} is a custom resource; "
                            "no published schema to validate against")
    except kubernetes_validate.ValidationError as exc:
        where = "/".join(str(p) for p in exc.path) or "(root)"
        return SchemaResult(manifest.filename, "invalid", f"{where}: {exc.message}")
    return SchemaResult(manifest.filename, "valid")
