"""Pulumi mocks with plausible, deterministic outputs.

Resources echo their inputs (as a provider would in a preview) plus the few
computed outputs the program reads back: cluster endpoints and CA data for the
Kubernetes provider, IAM ARNs, network ids. Every value is derived from the
resource name so that two runs are byte-identical.

The computed outputs of a cloud's resources come from that cloud's share of the offline plan
(:mod:`offline_plan.cloud_parts`: ``OUTPUTS_BY_TYPE`` and ``CALL_RESULTS`` in ``offline_plan/gke.py``, ...);
a resource type no registered cloud knows only echoes its inputs.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Callable
from typing import Any

import pulumi

from offline_plan.cloud_parts import registered_parts

#: The account, project number and subscription suffix every mock output uses.
ACCOUNT = "123456789012"
FAKE_CA = base64.b64encode(b"-----BEGIN CERTIFICATE-----\nofflineplan\n-----END CERTIFICATE-----\n").decode()

#: A mock: ``(resource name, inputs) -> computed outputs`` merged over the echoed inputs.
Outputs = Callable[[str, dict], dict]


def short_hash(text: str) -> str:
    """Twelve hex digits derived from ``text``: ids and hostnames that differ per resource and never per run."""
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def outputs_by_type() -> dict[str, Outputs]:
    """Extra outputs per resource type, from every registered cloud (the first cloud to name a type wins)."""
    table: dict[str, Outputs] = {}
    for part in registered_parts():
        for type_, outputs in getattr(part, "OUTPUTS_BY_TYPE", {}).items():
            table.setdefault(type_, outputs)
    return table


def call_results() -> dict[str, dict[str, Any]]:
    """Results of the provider functions (invokes) the program calls, from every registered cloud."""
    table: dict[str, dict[str, Any]] = {}
    for part in registered_parts():
        for token, result in getattr(part, "CALL_RESULTS", {}).items():
            table.setdefault(token, result)
    return table


def computed_outputs(type_: str, name: str, inputs: dict) -> dict:
    """The inputs of a resource and the outputs its provider would compute (only the inputs for an unknown type)."""
    extra = outputs_by_type().get(type_)
    return {**inputs, **(extra(name, inputs) if extra else {})}


class FungibilityMocks(pulumi.runtime.Mocks):
    """Deterministic mocks for every provider the program uses."""

    def new_resource(self, args: pulumi.runtime.MockResourceArgs):
        outputs = computed_outputs(args.typ, args.name, dict(args.inputs))
        resource_id = outputs.get("name") if isinstance(outputs.get("name"), str) else None
        return f"{resource_id or args.name}-id", outputs

    def call(self, args: pulumi.runtime.MockCallArgs):
        return call_results().get(args.token, {})
