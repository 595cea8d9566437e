"""A local Compute Engine v1 API (and OAuth token endpoint) on 127.0.0.1 for the GKE preflight tests.

Bodies follow Google's documented shapes: ``compute#machineType`` (``accelerators[]`` with
``guestAcceleratorType``/``guestAcceleratorCount``), ``compute#acceleratorType``
(``maximumCardsPerInstance``), ``compute#region`` (``quotas[]`` with ``metric``/``limit``/``usage``,
optional ``quotaStatusWarning``), and errors in Google's error model: 404 ``notFound`` "The resource
'...' was not found", 403 ``forbidden`` "Required '{permission}' permission for '{resource}'"
(ErrorInfo ``PERMISSIONS_ERROR``), 403 ``accessNotConfigured`` for a disabled API (ErrorInfo
``SERVICE_DISABLED``), 401 ``authError`` for a bad token. The token endpoint accepts the RS256 JWT
bearer grant (service account keys, signature checked) and the refresh-token grant (gcloud ADC).
"""

from __future__ import annotations

import base64
import json
import re
import secrets
import threading
import urllib.parse
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

from gpu_fungibility import catalog
from gpu_fungibility.clouds.gke import machines as gke_machines

from tests.quiet_server import QuietThreadingHTTPServer

PROJECT_NUMBER = "123456789012"
CREATED = "1969-12-31T16:00:00.000-08:00"
JWT_GRANT = "urn:ietf:params:oauth:grant-type:jwt-bearer"
GOOGLE_TOKEN_AUDIENCE = "https://oauth2.googleapis.com/token"  # a key's assertions name Google's endpoint


def not_found_body(resource: str) -> dict[str, Any]:
    message = f"The resource '{resource}' was not found"
    return {"error": {"code": 404, "message": message,
                      "errors": [{"message": message, "domain": "global", "reason": "notFound"}]}}


def permission_denied_body(permission: str, resource: str) -> dict[str, Any]:
    message = f"Required '{permission}' permission for '{resource}'"
    return {"error": {"code": 403, "message": message,
                      "errors": [{"message": message, "domain": "global", "reason": "forbidden"}],
                      "details": [{"@type": "type.googleapis.com/google.rpc.ErrorInfo",
                                   "reason": "PERMISSIONS_ERROR", "domain": "compute.googleapis.com",
                                   "metadata": {"permission": permission}}]}}


def api_disabled_body() -> dict[str, Any]:
    overview = f"https://console.developers.google.com/apis/api/compute.googleapis.com/overview?project={PROJECT_NUMBER}"
    message = (f"Compute Engine API has not been used in project {PROJECT_NUMBER} before or it is disabled. "
               f"Enable it by visiting {overview} then retry. If you enabled this API recently, wait a few "
               "minutes for the action to propagate to our systems and retry.")
    return {"error": {"code": 403, "message": message, "status": "PERMISSION_DENIED",
                      "errors": [{"message": message, "domain": "usageLimits", "reason": "accessNotConfigured",
                                  "extendedHelp": "https://console.developers.google.com"}],
                      "details": [{"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "SERVICE_DISABLED",
                                   "domain": "googleapis.com",
                                   "metadata": {"service": "compute.googleapis.com",
                                                "consumer": f"projects/{PROJECT_NUMBER}"}}]}}


def unauthenticated_body() -> dict[str, Any]:
    message = ("Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or "
               "other valid authentication credential.")
    return {"error": {"code": 401, "message": message, "status": "UNAUTHENTICATED",
                      "errors": [{"message": "Invalid Credentials", "domain": "global", "reason": "authError",
                                  "location": "Authorization", "locationType": "header"}]}}


@dataclass
class Reply:
    """One scripted HTTP answer: status, headers and body, optionally sent one byte every ``trickle`` seconds."""

    status: int
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)
    trickle: float = 0.0

    def send(self, handler: BaseHTTPRequestHandler, stopping: threading.Event) -> None:
        handler.send_response(self.status)
        handler.send_header("Content-Type", self.headers.pop("Content-Type", "application/json; charset=UTF-8"))
        for name, value in self.headers.items():
            handler.send_header(name, value)
        handler.send_header("Content-Length", str(len(self.body)) if not self.trickle else "1000000")
        handler.end_headers()
        if not self.trickle:
            handler.wfile.write(self.body)
            return
        for byte in self.body:  # a slow drip that would never finish a 1 MB body
            if stopping.wait(self.trickle):
                return
            try:
                handler.wfile.write(bytes([byte]))
                handler.wfile.flush()
            except OSError:
                return


@dataclass
class FakeCompute:
    project: str = "demo-project"
    tokens: set[str] = field(default_factory=lambda: {"test-token"})
    machine_types: dict[str, dict[str, dict[str, Any]]] = field(default_factory=dict)  # zone -> name -> body
    accelerator_types: dict[str, dict[str, dict[str, Any]]] = field(default_factory=dict)
    quotas: dict[str, dict[str, dict[str, Any]]] = field(default_factory=dict)  # region -> metric -> entry
    quota_warning: dict[str, Any] | None = None
    project_quotas: dict[str, dict[str, Any]] = field(default_factory=lambda: {
        "GPUS_ALL_REGIONS": {"metric": "GPUS_ALL_REGIONS", "limit": 32.0, "usage": 0.0}})
    scripts: list[tuple[str, list[Reply]]] = field(default_factory=list)  # path pattern -> replies, in order
    error: tuple[int, dict[str, Any]] | None = None  # every Compute call answers this
    service_accounts: dict[str, Any] = field(default_factory=dict)  # client_email -> RSA public key
    refresh_tokens: dict[str, str] = field(default_factory=dict)  # refresh token -> client_id
    requests: list[tuple[str, str, dict[str, str]]] = field(default_factory=list)
    port: int = 0

    # --- state -------------------------------------------------------------------------------

    def offer(self, zone: str, machine_type: str, *, accelerator: tuple[str, int] | None = None,
              with_accelerator_type: bool = True, deprecated: str | None = None, guest_cpus: int | None = None,
              memory_mb: int | None = None) -> None:
        """Offer a machine type in a zone; its accelerators come from the catalog (or ``accelerator``)."""
        shape = gke_machines.machine_shape(machine_type)
        if accelerator is None and shape and shape.accelerator in catalog.GPUS:
            accelerator = (shape.accelerator, shape.count)
        host = catalog.host_shape(machine_type)  # the catalog's shape unless a test says otherwise
        body: dict[str, Any] = {
            "kind": "compute#machineType", "id": str(1000 + len(self.requests)), "creationTimestamp": CREATED,
            "name": machine_type, "description": f"{machine_type} for tests",
            "guestCpus": guest_cpus if guest_cpus is not None else (host.vcpus if host else 12),
            "memoryMb": memory_mb if memory_mb is not None else (round(host.memory_gib * 1024) if host else 174080),
            "maximumPersistentDisks": 128, "maximumPersistentDisksSizeGb": "263168",
            "zone": zone, "selfLink": self._link(f"zones/{zone}/machineTypes/{machine_type}"),
            "isSharedCpu": False,
        }
        if accelerator and shape is not None:  # accelerator-optimized machines list their GPUs
            body["accelerators"] = [{"guestAcceleratorType": accelerator[0], "guestAcceleratorCount": accelerator[1]}]
        if deprecated:
            body["deprecated"] = {"state": deprecated}
        self.machine_types.setdefault(zone, {})[machine_type] = body
        if accelerator and with_accelerator_type:
            self.offer_accelerator(zone, accelerator[0])

    def offer_accelerator(self, zone: str, name: str, max_cards: int = 8) -> None:
        self.accelerator_types.setdefault(zone, {})[name] = {
            "kind": "compute#acceleratorType", "id": str(2000 + len(self.accelerator_types)),
            "creationTimestamp": CREATED, "name": name, "description": name,
            "zone": self._link(f"zones/{zone}"), "selfLink": self._link(f"zones/{zone}/acceleratorTypes/{name}"),
            "maximumCardsPerInstance": max_cards,
        }

    def set_quota(self, region: str, metric: str, limit: float, usage: float = 0.0) -> None:
        self.quotas.setdefault(region, {})[metric] = {"metric": metric, "limit": float(limit), "usage": float(usage)}

    def set_project_quota(self, metric: str, limit: float, usage: float = 0.0) -> None:
        self.project_quotas[metric] = {"metric": metric, "limit": float(limit), "usage": float(usage)}

    def script(self, path_pattern: str, *replies: Reply) -> None:
        """GETs whose path matches ``path_pattern`` (``re.search``) get ``replies`` in turn, then the last again."""
        self.scripts.append((path_pattern, list(replies)))

    def scripted(self, path: str) -> Reply | None:
        for pattern, replies in self.scripts:
            if re.search(pattern, path):
                return replies.pop(0) if len(replies) > 1 else replies[0]
        return None

    def _link(self, path: str) -> str:
        return f"https://www.googleapis.com/compute/v1/projects/{self.project}/{path}"

    # --- serving -----------------------------------------------------------------------------

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/compute/v1/"

    @property
    def token_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/token"

    def __enter__(self) -> FakeCompute:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:  # noqa: N802 - http.server's naming
                fake.requests.append(("GET", self.path, dict(self.headers)))
                reply = fake.scripted(self.path)
                if reply is not None:
                    reply.send(self, fake.stopping)
                    return
                status, body = fake.answer_get(self.path, self.headers.get("Authorization", ""))
                self._reply(status, body)

            def do_POST(self) -> None:  # noqa: N802
                length = int(self.headers.get("Content-Length", 0))
                form = urllib.parse.parse_qs(self.rfile.read(length).decode())
                fake.requests.append(("POST", self.path, dict(self.headers)))
                status, body = fake.answer_token({k: v[0] for k, v in form.items()})
                self._reply(status, body)

            def _reply(self, status: int, body: dict[str, Any]) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json; charset=UTF-8")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.stopping = threading.Event()
        self._server = QuietThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self._server.server_address[1]
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.02},
                                        daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stopping.set()  # ends trickling replies
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def answer_get(self, path: str, authorization: str) -> tuple[int, dict[str, Any]]:
        match = re.fullmatch(r"/compute/v1/projects/([^/]+)(?:/(.+))?", urllib.parse.urlparse(path).path)
        if not match:
            return 404, not_found_body(path)
        if not authorization.startswith("Bearer ") or authorization[7:] not in self.tokens:
            return 401, unauthenticated_body()
        if self.error:
            return self.error
        project, rest = match.groups()
        if project == self.project and rest is None:  # projects.get
            return 200, {"kind": "compute#project", "id": PROJECT_NUMBER, "name": project,
                         "creationTimestamp": CREATED, "selfLink": self._link("")[:-1],
                         "quotas": list(self.project_quotas.values())}
        rest = rest or ""
        resource = f"projects/{project}/{rest}"
        if project != self.project:
            return 404, not_found_body(f"projects/{project}")
        parts = rest.split("/")
        if parts[0] == "regions" and len(parts) == 2:
            region = parts[1]
            body: dict[str, Any] = {"kind": "compute#region", "id": "1000", "creationTimestamp": CREATED,
                                    "name": region, "description": region, "status": "UP",
                                    "zones": [self._link(f"zones/{region}-{z}") for z in "abcf"],
                                    "selfLink": self._link(f"regions/{region}"), "supportsPzs": False}
            if self.quota_warning:
                body["quotaStatusWarning"] = self.quota_warning
            else:
                body["quotas"] = list(self.quotas.get(region, {}).values())
            return 200, body
        if parts[0] == "zones" and len(parts) == 4 and parts[2] in ("machineTypes", "acceleratorTypes"):
            table = self.machine_types if parts[2] == "machineTypes" else self.accelerator_types
            found = table.get(parts[1], {}).get(parts[3])
            return (200, found) if found else (404, not_found_body(resource))
        return 404, not_found_body(resource)

    def answer_token(self, form: dict[str, str]) -> tuple[int, dict[str, Any]]:
        if form.get("grant_type") == JWT_GRANT and self._valid_jwt(form.get("assertion", "")):
            return 200, self._issue()
        if form.get("grant_type") == "refresh_token" and \
                self.refresh_tokens.get(form.get("refresh_token", "")) == form.get("client_id"):
            return 200, self._issue()
        return 400, {"error": "invalid_grant", "error_description": "Invalid grant: account not found"}

    def _issue(self) -> dict[str, Any]:
        token = "issued-" + secrets.token_hex(8)
        self.tokens.add(token)
        return {"access_token": token, "expires_in": 3599, "token_type": "Bearer"}

    def _valid_jwt(self, assertion: str) -> bool:
        from cryptography.exceptions import InvalidSignature
        from cryptography.hazmat.primitives import hashes
        from cryptography.hazmat.primitives.asymmetric import padding

        try:
            header_b64, claims_b64, signature_b64 = assertion.split(".")
            header, claims = (json.loads(_unb64(p)) for p in (header_b64, claims_b64))
            key = self.service_accounts[claims["iss"]]
            key.verify(_unb64(signature_b64), f"{header_b64}.{claims_b64}".encode(), padding.PKCS1v15(),
                       hashes.SHA256())
        except (ValueError, KeyError, InvalidSignature):
            return False
        return header.get("alg") == "RS256" and claims.get("aud") == GOOGLE_TOKEN_AUDIENCE


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
