"""Any plan through the real engine: a Pulumi program that registers each resource of a preview-shaped document.

The policy tests break a stack by editing its ``plan.json`` (a pool's label dropped, a claim's selector broken),
which no stack config can always express. :func:`program` turns such a document back into registrations: each
component with its type, name and parent, each custom resource with its inputs, parent, explicit provider and
dependencies, so the engine rebuilds the same URNs, runs the same providers' ``Check`` and hands the pack what
it would hand it for the real program. A value the plan marks ``[unknown]`` is registered as unknown, a
``[secret]`` as a secret, and an explicit Kubernetes provider gets an unknown kubeconfig, as in a first preview.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

PLAN_UNKNOWN = "[unknown]"
PROVIDER_PREFIX = "pulumi:providers:"


def _unknown() -> Any:
    import asyncio

    import pulumi
    from pulumi.output import UNKNOWN

    def done(value: Any) -> asyncio.Future:
        future = asyncio.get_event_loop().create_future()
        future.set_result(value)
        return future

    return pulumi.Output(set(), done(UNKNOWN), done(False), done(False))


def _values(value: Any) -> Any:
    """Plan values as program inputs: ``[unknown]`` unknown, a ``[secret...]`` mask a secret."""
    import pulumi

    if value == PLAN_UNKNOWN:
        return _unknown()
    if isinstance(value, str) and value.startswith("[secret") and value.endswith("]"):
        return pulumi.Output.secret(value)
    if isinstance(value, dict):
        return {k: _values(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_values(v) for v in value]
    return value


def _name(urn: str) -> str:
    return urn.rsplit("::", 1)[-1]


def _version(provider_reference: str) -> str | None:
    """``...::pulumi:providers:gcp::default_10_2_0::<id>`` -> ``10.2.0``."""
    parts = provider_reference.split("::")
    name = parts[3] if len(parts) > 3 else ""
    return name[len("default_"):].replace("_", ".") if name.startswith("default_") else None


def program(document: dict[str, Any]) -> Callable[[], None]:
    """A program that registers every resource of ``document`` (parents before children, as the plan lists them)."""

    def run() -> None:
        import pulumi

        made: dict[str, pulumi.Resource] = {}
        steps = [s.get("newState") or {} for s in document.get("steps") or []]
        for state in steps:
            urn, type_ = state.get("urn", ""), state.get("type", "")
            if not urn or type_ == "pulumi:pulumi:Stack":
                continue
            parent = made.get(state.get("parent") or "")
            provider_ref = state.get("provider") or ""
            provider_urn = provider_ref.rsplit("::", 1)[0] if provider_ref else ""
            opts = pulumi.ResourceOptions(
                parent=parent,
                provider=made.get(provider_urn) if provider_urn in made else None,
                depends_on=[made[d] for d in state.get("dependencies") or [] if d in made],
                version=_version(provider_ref),
            )
            inputs = dict(state.get("inputs") or {})
            if type_.startswith(PROVIDER_PREFIX):  # the engine adds these itself
                inputs = {k: v for k, v in inputs.items() if k not in ("__internal", "version")}
            if not state.get("custom"):
                made[urn] = pulumi.ComponentResource(type_, _name(urn), None, opts)
            elif type_.startswith(PROVIDER_PREFIX):
                if "kubeconfig" in inputs:
                    inputs["kubeconfig"] = _unknown()
                opts.version = (state.get("inputs") or {}).get("version")
                made[urn] = pulumi.ProviderResource(type_[len(PROVIDER_PREFIX):], _name(urn), _values(inputs), opts)
            else:
                made[urn] = pulumi.CustomResource(type_, _name(urn), _values(inputs), opts)

    return run
