"""A Kubernetes-API-shaped server on 127.0.0.1 serving a snapshot's objects, for ``make verify``'s live path.

List endpoints answer as the API server does: ``{"kind": "<Kind>List", "apiVersion", "metadata":
{"continue": ...}, "items": [...]}`` (items without ``kind``), paged by ``limit`` and ``continue``; a
forbidden group answers 403 with a ``Status`` object; ``unauthorized`` answers 401 everywhere. Every
request's method and path are recorded.
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlparse

from tests.quiet_server import QuietThreadingHTTPServer

PATHS = {
    "/api/v1/nodes": "Node", "/api/v1/pods": "Pod", "/api/v1/events": "Event",
    "/apis/apps/v1/daemonsets": "DaemonSet", "/apis/apps/v1/deployments": "Deployment",
    "/apis/resource.k8s.io/v1/resourceslices": "ResourceSlice",
    "/apis/resource.k8s.io/v1/deviceclasses": "DeviceClass",
    "/apis/resource.k8s.io/v1/resourceclaims": "ResourceClaim",
    "/apis/resource.k8s.io/v1/resourceclaimtemplates": "ResourceClaimTemplate",
}


class FakeApi:
    def __init__(self, snapshot: dict[str, Any], *, forbidden: tuple[str, ...] = (), unauthorized: bool = False,
                 delay: float = 0.0, refusals: tuple[int, ...] = (), trickle: float = 0.0,
                 raw: dict[str, Any] | None = None, dra_served: bool = True):
        self.raw = raw or {}  # path -> handler(BaseHTTPRequestHandler) writing its own answer (hostile ones)
        self.dra_served = dra_served  # whether the resource.k8s.io/v1 group is served at all
        self.delay = delay  # seconds before every answer (a slow server)
        self.refusals = refusals  # statuses answered, in turn, to the first requests of every path (429, 503)
        self.trickle = trickle  # seconds between the bytes of every answer's body (a server that trickles)
        self.seen: dict[str, int] = {}
        self.items = snapshot["items"]
        self.forbidden = forbidden  # path prefixes answered with 403
        self.unauthorized = unauthorized
        self.requests: list[tuple[str, str]] = []
        self.pages: dict[str, int] = {}
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def _any(self) -> None:
                fake.handle(self)

            do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _any

        self.server = QuietThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def __enter__(self) -> FakeApi:
        self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.server.shutdown()
        self.server.server_close()

    def kubeconfig(self, folder: Path) -> Path:
        path = folder / "kubeconfig.yaml"
        path.write_text(json.dumps({
            "apiVersion": "v1", "kind": "Config", "current-context": "fake",
            "clusters": [{"name": "fake", "cluster": {"server": self.url}}],
            "users": [{"name": "fake", "user": {"token": "read-only-token"}}],
            "contexts": [{"name": "fake", "context": {"cluster": "fake", "user": "fake"}}]}))
        return path

    def _send(self, handler: BaseHTTPRequestHandler, code: int, body: dict[str, Any]) -> None:
        data = json.dumps(body).encode()
        handler.send_response(code)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Length", str(len(data)))
        if code == 429:
            handler.send_header("Retry-After", "0")
        handler.end_headers()
        try:
            if self.trickle:
                for byte in data:
                    handler.wfile.write(bytes([byte]))
                    handler.wfile.flush()
                    time.sleep(self.trickle)
            handler.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (its timeout), as a real client does

    def _status(self, handler: BaseHTTPRequestHandler, code: int, reason: str, message: str) -> None:
        self._send(handler, code, {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                                   "message": message, "reason": reason, "code": code})

    def handle(self, handler: BaseHTTPRequestHandler) -> None:
        url = urlparse(handler.path)
        self.requests.append((handler.command, url.path))
        if self.delay:
            time.sleep(self.delay)
        if self.unauthorized:
            return self._status(handler, 401, "Unauthorized", "Unauthorized")
        turn = self.seen.get(url.path, 0)
        self.seen[url.path] = turn + 1
        if turn < len(self.refusals):
            code = self.refusals[turn]
            return self._status(handler, code, "TooManyRequests" if code == 429 else "ServiceUnavailable",
                                "try again later")
        if handler.command != "GET":
            return self._status(handler, 405, "MethodNotAllowed", "read-only fake")
        if url.path in self.raw:
            try:
                return self.raw[url.path](handler)
            except (BrokenPipeError, ConnectionResetError):
                return None
        if url.path == "/apis/resource.k8s.io/v1" and self.dra_served:
            return self._send(handler, 200, {"kind": "APIResourceList", "apiVersion": "v1",
                                             "groupVersion": "resource.k8s.io/v1", "resources": []})
        kind = PATHS.get(url.path)
        if kind is None or (not self.dra_served and url.path.startswith("/apis/resource.k8s.io/")):
            return self._status(handler, 404, "NotFound", "the server could not find the requested resource")
        if any(url.path.startswith(prefix) for prefix in self.forbidden):
            resource = url.path.rsplit("/", 1)[-1]
            group = url.path.split("/")[2]
            return self._status(handler, 403, "Forbidden", f'{resource}.{group} is forbidden: User "ci" cannot '
                                f'list resource "{resource}" in API group "{group}" at the cluster scope')
        query = parse_qs(url.query)
        limit = int(query.get("limit", ["500"])[0])
        start = int(query.get("continue", ["0"])[0] or 0)
        objects = [{k: v for k, v in i.items() if k != "kind"} for i in self.items if i.get("kind") == kind]
        page = objects[start:start + limit]
        self.pages[kind] = self.pages.get(kind, 0) + 1
        rest = start + limit < len(objects)
        self._send(handler, 200, {"kind": f"{kind}List", "apiVersion": "v1",
                                  "metadata": {"resourceVersion": "12345", **({"continue": str(start + limit)} if rest else {})},
                                  "items": page})
