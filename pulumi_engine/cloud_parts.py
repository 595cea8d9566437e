"""Each cloud's share of the real-engine path, found through the cloud registry.

A cloud's share is the module ``pulumi_engine.<cloud>`` (or the one its profile names in
``parts["pulumi_engine"]``). It answers, where it has them:

- ``STANDIN_PACKAGES``: the provider packages its program uses that the project's stand-in serves
  (:mod:`pulumi_engine.standin`), each with the module of its Python SDK, whose ``pulumi-plugin.json`` names the
  version the stand-in claims;
- ``CREDENTIAL_OUTPUTS``: by resource type, the outputs (dotted paths) that carry a cluster's API server and CA:
  unknown in a preview, the rehearsal's in ``make up-rehearsal``; with ``outputs_at(type_, outputs, api)``,
  which points them at that API server;
- ``CREDENTIAL_INVOKES``: provider functions whose answer is a cluster's credentials, with
  ``invoke_at(token, result, api)``, which points the answer at that API server;
- ``AUTH_COMMANDS``: the exec credential plugins its program's kubeconfig runs (``make up-rehearsal`` puts a
  stand-in of each on PATH).

A cloud without the module has no stand-in: the real engine finds no plugin for its provider and cannot preview
its stacks (the offline plan still plans them).
"""

from __future__ import annotations

from dataclasses import dataclass
from types import ModuleType

AREA = "pulumi_engine"


@dataclass(frozen=True)
class ApiServer:
    """The API server a cluster's credentials point at in ``up`` (the rehearsal's control plane, on loopback)."""

    server: str  # https://127.0.0.1:<port>
    ca: str  # base64 of the CA's PEM, as a kubeconfig's certificate-authority-data

    @property
    def host(self) -> str:
        """The address without its scheme, as a cloud that answers a bare host gives it."""
        return self.server.removeprefix("https://")


def parts() -> list[ModuleType]:
    """The real-engine modules of the registered clouds, in registration order (read each time: a cloud may
    register after this module is imported)."""
    from gpu_fungibility import clouds

    found = (clouds.optional_part(name, AREA) for name in clouds.names())
    return [part for part in found if part is not None]


def standin_packages() -> dict[str, str]:
    """Every provider package the stand-in serves -> its Python SDK's module."""
    found: dict[str, str] = {}
    for part in parts():
        found.update(getattr(part, "STANDIN_PACKAGES", {}))
    return found


def credential_outputs(type_: str) -> tuple[tuple[str, ...], ModuleType | None]:
    """The credential output paths of a resource type and the cloud module that knows them (``((), None)``
    for a type that carries none)."""
    for part in parts():
        paths = getattr(part, "CREDENTIAL_OUTPUTS", {}).get(type_)
        if paths:
            return tuple(paths), part
    return (), None


def credential_invoke(token: str) -> ModuleType | None:
    """The cloud module whose provider function ``token`` answers a cluster's credentials, or None."""
    return next((part for part in parts() if token in getattr(part, "CREDENTIAL_INVOKES", ())), None)


def auth_commands() -> tuple[str, ...]:
    """The exec credential plugins the registered clouds' kubeconfigs run, each once."""
    return tuple(dict.fromkeys(command for part in parts() for command in getattr(part, "AUTH_COMMANDS", ())))

