"""A local Azure Resource Manager on 127.0.0.1 for the AKS preflight tests: Resource SKUs and Compute usages.

Bodies follow the documented shapes (learn.microsoft.com/rest/api/compute/resource-skus/list and
/usage/list): SKUs with ``resourceType``, ``name``, ``family``, ``locationInfo[].zones``, ``capabilities[]``
(name/value strings) and ``restrictions[]`` (``type`` Location|Zone, ``restrictionInfo``, ``reasonCode``);
usages with ``name.value``, ``limit`` and ``currentValue``; both paged with ``nextLink``. Errors in ARM's
model: ``{"error": {"code": "AuthorizationFailed", "message": ...}}`` (403) and ``InvalidAuthenticationToken``
(401). Tests script any other answer (status, headers, body, a trickle) per path with :meth:`AzureFake.script`.
The SKU figures come from the catalog (checked against Azure's size tables in test_aks_catalog).
"""

from __future__ import annotations

import json
import re
import threading
import urllib.parse
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

from gpu_fungibility.clouds.aks import machines as aks_machines

from tests.compute_fake import Reply
from tests.quiet_server import QuietThreadingHTTPServer

TOKEN = "test-token"
SUBSCRIPTION = "00000000-0000-0000-0000-000000000001"
#: The quota family Azure names for each series (Resource SKUs ``family``).
FAMILIES = {"NC24ads_A100_v4": "standardNCADSA100v4Family", "NC8as_T4_v3": "standardNCASv3_T4Family",
            "NC4as_T4_v3": "standardNCASv3_T4Family"}


def sku(name: str, region: str, zones: tuple[str, ...] = ("1", "2", "3"),
        restrictions: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    shape = aks_machines.machine_shape(name)
    assert shape is not None
    return {
        "resourceType": "virtualMachines", "name": name, "tier": "Standard", "size": name.removeprefix("Standard_"),
        "family": FAMILIES.get(name.removeprefix("Standard_"), "standardNCFamily"), "locations": [region],
        "locationInfo": [{"location": region, "zones": list(zones), "zoneDetails": []}],
        "capabilities": [{"name": "vCPUs", "value": str(shape.vcpus)}, {"name": "MemoryGB", "value": f"{shape.memory_gib:g}"},
                         {"name": "GPUs", "value": str(shape.count)}, {"name": "LowPriorityCapable", "value": "True"}],
        "restrictions": restrictions or [],
    }


def usage(name: str, limit: int, current: int = 0) -> dict[str, Any]:
    return {"unit": "Count", "currentValue": current, "limit": limit,
            "name": {"value": name, "localizedValue": f"{name} vCPUs"}}


def authorization_failed(action: str) -> dict[str, Any]:
    return {"error": {"code": "AuthorizationFailed", "message": (
        f"The client 'preflight@example.com' with object id '11111111-1111-1111-1111-111111111111' does not have "
        f"authorization to perform action '{action}' over scope '/subscriptions/{SUBSCRIPTION}' or the scope is "
        "invalid. If access was recently granted, please refresh your credentials.")}}


@dataclass
class AzureFake:
    region: str = "eastus2"
    skus: list[dict[str, Any]] = field(default_factory=list)
    usages: list[dict[str, Any]] = field(default_factory=list)
    #: path fragment ("skus" or "usages") -> (status, body) to answer instead
    failures: dict[str, tuple[int, dict[str, Any]]] = field(default_factory=dict)
    page_size: int = 2
    requests: list[str] = field(default_factory=list)
    #: path pattern (``re.search``) -> replies in turn (the last again): any status, headers, body, trickle
    scripts: list[tuple[str, list[Reply]]] = field(default_factory=list)

    def script(self, path_pattern: str, *replies: Reply) -> None:
        self.scripts.append((path_pattern, list(replies)))

    def scripted(self, path: str) -> Reply | None:
        for pattern, replies in self.scripts:
            if re.search(pattern, path):
                return replies.pop(0) if len(replies) > 1 else replies[0]
        return None

    def start(self) -> AzureFake:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:  # noqa: N802
                fake.requests.append(self.path)
                reply = fake.scripted(self.path)
                if reply is not None:
                    reply.send(self, fake.stopping)
                    return
                status, body = fake.answer(self.path, self.headers.get("Authorization", ""))
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.stopping = threading.Event()
        self.server = QuietThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def stop(self) -> None:
        self.stopping.set()  # ends trickling replies
        self.server.shutdown()
        self.server.server_close()

    def answer(self, raw_path: str, authorization: str) -> tuple[int, dict[str, Any]]:
        if authorization != f"Bearer {TOKEN}":
            return 401, {"error": {"code": "InvalidAuthenticationToken", "message": "The access token is invalid."}}
        parsed = urllib.parse.urlparse(raw_path)
        query = urllib.parse.parse_qs(parsed.query)
        if not parsed.path.startswith(f"/subscriptions/{SUBSCRIPTION}/"):
            return 404, {"error": {"code": "SubscriptionNotFound", "message": "The subscription could not be found."}}
        kind = "skus" if parsed.path.endswith("/skus") else "usages" if parsed.path.endswith("/usages") else ""
        if kind in self.failures:
            return self.failures[kind]
        if kind == "skus":
            if query.get("$filter") != [f"location eq '{self.region}'"]:
                return 400, {"error": {"code": "InvalidFilter", "message": "unexpected filter"}}
            items = self.skus
        elif kind == "usages" and f"/locations/{self.region}/" in parsed.path:
            items = self.usages
        else:
            return 404, {"error": {"code": "NotFound", "message": parsed.path}}
        start = int(query.get("skip", ["0"])[0])
        body: dict[str, Any] = {"value": items[start:start + self.page_size]}
        if start + self.page_size < len(items):
            next_query = {k: v[0] for k, v in query.items()} | {"skip": str(start + self.page_size)}
            body["nextLink"] = f"{self.url}{parsed.path}?{urllib.parse.urlencode(next_query)}"
        return 200, body
