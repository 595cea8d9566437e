"""Read-only Azure Resource Manager calls for the AKS preflight, through :mod:`preflight.calls`.

Two list APIs in the stack's region, each paged with ``nextLink``:

- Resource SKUs (``GET /subscriptions/{id}/providers/Microsoft.Compute/skus?$filter=location eq '{region}'``,
  api-version 2021-07-01; learn.microsoft.com/rest/api/compute/resource-skus/list).
- Compute usages (``GET /subscriptions/{id}/providers/Microsoft.Compute/locations/{region}/usages``,
  api-version 2023-07-01; learn.microsoft.com/rest/api/compute/usage/list).

Errors follow Resource Manager's model, ``{"error": {"code", "message"}}``
(learn.microsoft.com/azure/azure-resource-manager/troubleshooting/common-deployment-errors): 401
``InvalidAuthenticationToken`` (credentials: fatal), 403 ``AuthorizationFailed`` (denied: that signal is
not checked), 429 with ``Retry-After`` (learn.microsoft.com/azure/azure-resource-manager/management/
request-limits-and-throttling) and 5xx (retried by :class:`preflight.calls.Calls`). Answers are read with a
size limit and parsed strictly: truncated JSON, a list where an object belongs or a quota ``limit`` that
is not a number are a ``malformed`` CallError naming the call.

Credentials: Azure's own library, ``azure.identity.DefaultAzureCredential`` (environment, workload
identity, managed identity, Azure CLI, ...), for the ``https://management.azure.com/.default`` scope.
"""

from __future__ import annotations

import http.client
import json
import os
import re
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from preflight.calls import (
    CREDENTIALS,
    MALFORMED,
    UNREACHABLE,
    CallError,
    Calls,
    http_error,
    mapping,
    number,
    within,
)

DEFAULT_ENDPOINT = "https://management.azure.com"
#: Points the preflight at another Resource Manager endpoint (a sovereign cloud, or a local fake).
ENDPOINT_ENV = "PREFLIGHT_AZURE_ENDPOINT"
SUBSCRIPTION_ENVS = ("AZURE_SUBSCRIPTION_ID", "ARM_SUBSCRIPTION_ID")
SCOPE = "https://management.azure.com/.default"
SKUS_API = "2021-07-01"
USAGES_API = "2023-07-01"
SKUS_PERMISSION = "Microsoft.Compute/skus/read"
USAGES_PERMISSION = "Microsoft.Compute/locations/usages/read"
PERMISSIONS = f"{SKUS_PERMISSION} and {USAGES_PERMISSION} (the Reader role has both)"
MAX_ANSWER_BYTES = 32 * 1024 * 1024  # a region's SKU list is a few MiB; more is not an answer
MAX_PAGES = 50


class CannotCheck(Exception):
    """The preflight cannot run (credentials, subscription): exit 2 with this message."""


@dataclass(frozen=True)
class Usage:
    limit: float
    current: float


def fetch_json(url: str, token: str, seconds: float) -> bytes:
    """One GET with a bearer token within ``seconds``; a non-200 answer raises the :class:`CallError` of its kind."""
    request = urllib.request.Request(url, headers={"Authorization": f"Bearer {token}", "Accept": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=seconds) as reply:  # noqa: S310 (https or a local fake)
            return _read_bounded(reply)
    except urllib.error.HTTPError as exc:
        raise classify(exc.code, dict(exc.headers or {}), _read_bounded(exc)) from None
    except urllib.error.URLError as exc:
        raise CallError(UNREACHABLE, f"cannot reach Azure Resource Manager at {url.split('/subscriptions')[0]} "
                        f"({exc.reason}); check your network or {ENDPOINT_ENV}") from None
    except http.client.HTTPException as exc:  # a reply cut short or not HTTP at all
        raise CallError(MALFORMED, f"malformed answer ({type(exc).__name__}: {exc})") from None


def _read_bounded(reply: Any) -> bytes:
    data = reply.read(MAX_ANSWER_BYTES + 1)
    if len(data) > MAX_ANSWER_BYTES:
        raise http.client.HTTPException(f"answer larger than {MAX_ANSWER_BYTES} bytes")
    return data


def classify(status: int, headers: dict[str, str], body: bytes) -> CallError:
    """A non-200 Resource Manager answer as a CallError (401: credentials refused, fatal)."""
    code, message = arm_error(body)
    said = f"{status} {code}".strip() + (f": {message}" if message else "")
    if status == 401:
        return CallError(CREDENTIALS, f"Azure refused the credentials ({said}). Sign in again (`az login`) and rerun.")
    return http_error(status, said, headers)


def arm_error(body: bytes) -> tuple[str, str]:
    """(``error.code``, ``error.message``) of an ARM error body; the first 200 bytes of anything else."""
    try:
        error = json.loads(body or b"{}").get("error")
    except (ValueError, AttributeError):
        return "", body[:200].decode(errors="replace").strip()
    if not isinstance(error, dict):
        return "", ""
    return str(error.get("code", "")), str(error.get("message", ""))


#: A subscription ID is a GUID (learn.microsoft.com/azure/azure-portal/get-subscription-tenant-id).
SUBSCRIPTION_ID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
_LOOPBACK = ("127.0.0.1", "localhost", "::1")


def check_subscription(value: str) -> str:
    """``value`` when it is a subscription ID; CannotCheck naming the mistake (a name given for the ID)."""
    if not SUBSCRIPTION_ID.fullmatch(value):
        raise CannotCheck(f"preflight: Azure subscription {value[:80]!r} is not a subscription ID (a GUID such as "
                          "00000000-0000-0000-0000-000000000000); a subscription's name is not accepted: "
                          f"`az account show --subscription \"{value[:80]}\" --query id -o tsv` prints its ID")
    return value


def endpoint_of(value: str | None) -> str:
    """The Resource Manager endpoint: ``https://host[:port]`` (``http`` only for a fake on this machine);
    CannotCheck naming :data:`ENDPOINT_ENV` otherwise: the bearer token goes nowhere else."""
    text = (value or "").strip() or DEFAULT_ENDPOINT
    parsed = urllib.parse.urlparse(text)
    loopback = parsed.hostname in _LOOPBACK
    if parsed.scheme not in ("https", "http") or (parsed.scheme == "http" and not loopback) or not parsed.hostname \
            or parsed.username or parsed.password or parsed.query or parsed.fragment or parsed.path.strip("/"):
        raise CannotCheck(f"preflight: {ENDPOINT_ENV}={text[:120]!r} is not a Resource Manager endpoint: give "
                          "https://<host>[:port] (such as https://management.usgovcloudapi.net), or unset it")
    return f"{parsed.scheme}://{parsed.netloc}"


def same_origin(url: str, endpoint: str) -> bool:
    """Whether ``url`` goes to ``endpoint``'s scheme, host and port (where the token may be sent)."""
    a, b = urllib.parse.urlparse(url), urllib.parse.urlparse(endpoint)
    return (a.scheme, a.hostname, a.port) == (b.scheme, b.hostname, b.port)


class ArmClient:
    """The two Resource Manager reads for one subscription; every page is one call of :class:`Calls`.

    The bearer token is sent to :attr:`endpoint` only: a ``nextLink`` to another host, or over plain http, is
    a malformed answer, never followed."""

    def __init__(self, subscription: str, token: str, calls: Calls, endpoint: str | None = None):
        self.subscription = check_subscription(subscription)
        self.token = token
        self.calls_layer = calls
        self.endpoint = endpoint_of(endpoint or os.environ.get(ENDPOINT_ENV))
        self.calls = 0

    def skus(self, region: str) -> list[dict[str, Any]]:
        """The region's virtual machine SKUs (raises CallError naming the call)."""
        query = urllib.parse.urlencode({"api-version": SKUS_API, "$filter": f"location eq '{region}'"})
        url = f"{self.endpoint}/subscriptions/{self.subscription}/providers/Microsoft.Compute/skus?{query}"
        return self._list(url, f"Resource SKUs list {region}", SKUS_PERMISSION, _sku)

    def usages(self, region: str) -> dict[str, Usage]:
        """Quota name (``name.value``) -> limit and current value (raises CallError naming the call)."""
        url = (f"{self.endpoint}/subscriptions/{self.subscription}/providers/Microsoft.Compute/locations/"
               f"{urllib.parse.quote(region)}/usages?api-version={USAGES_API}")
        return dict(self._list(url, f"Compute usages list {region}", USAGES_PERMISSION, _usage))

    def _list(self, url: str, call: str, permission: str, parse_item: Callable[[dict[str, Any], str], Any]) -> list:
        items: list = []
        for page in range(1, MAX_PAGES + 1):
            def fetch(seconds: float, url: str = url) -> bytes:
                self.calls += 1
                return fetch_json(url, self.token, seconds)

            def parse(body: bytes) -> tuple[list, str]:
                answer = mapping(json.loads(body), "the answer")
                values = answer["value"]
                if not isinstance(values, list):
                    raise TypeError(f"value is a {type(values).__name__}, not a list")
                parsed = [parse_item(mapping(v, f"value[{i}]"), f"value[{i}]") for i, v in enumerate(values)]
                link = answer.get("nextLink") or ""
                if not isinstance(link, str):
                    raise TypeError(f"nextLink is a {type(link).__name__}, not a link")
                if link and not same_origin(link, self.endpoint):
                    raise ValueError(f"nextLink {link[:120]!r} leaves {self.endpoint}; the access token is sent "
                                     "there only, so the link is not followed")
                return [p for p in parsed if p is not None], link

            name = call if page == 1 else f"{call} (page {page})"
            found, url = self.calls_layer.run(name, fetch, parse, needs=permission)
            items += found
            if not url:
                return items
        raise CallError(MALFORMED, f"more than {MAX_PAGES} pages", call=call)


def _sku(raw: dict[str, Any], where: str) -> dict[str, Any] | None:
    """A virtual machine SKU with its ``vCPUs`` capability checked as a number (other SKUs: None)."""
    if raw.get("resourceType") != "virtualMachines":
        return None
    capabilities = raw.get("capabilities") or []
    if not isinstance(capabilities, list):
        raise TypeError(f"{where}.capabilities is a {type(capabilities).__name__}, not a list")
    for i, cap in enumerate(capabilities):
        cap = mapping(cap, f"{where}.capabilities[{i}]")
        if cap.get("name") == "vCPUs":
            number(cap.get("value"), f"{where} vCPUs")
    return raw


def _usage(raw: dict[str, Any], where: str) -> tuple[str, Usage] | None:
    name = mapping(raw.get("name") or {}, f"{where}.name").get("value")
    if not name:
        return None
    return str(name), Usage(number(raw.get("limit", 0), f"{where}.limit ({name})"),
                            number(raw.get("currentValue", 0), f"{where}.currentValue ({name})"))


def default_credential() -> Any:
    """Azure's DefaultAzureCredential (imported here: only an AKS preflight loads azure-identity).

    Its own log lines about each credential it tried are silenced: :func:`access_token` says what failed
    and how to sign in, once."""
    import logging

    from azure.identity import DefaultAzureCredential

    logging.getLogger("azure.identity").setLevel(logging.CRITICAL)
    return DefaultAzureCredential()


def access_token(credential: Any, seconds: float) -> str:
    """A Resource Manager token within ``seconds`` (the run's deadline), or CannotCheck saying how to sign in."""
    from azure.core.exceptions import ClientAuthenticationError

    try:
        return str(within(seconds, lambda _: credential.get_token(SCOPE)).token)
    except TimeoutError:
        raise CannotCheck(f"preflight: no Azure access token within {seconds:g} s (DefaultAzureCredential tried "
                          "its sources in turn); sign in with `az login` or set AZURE_CLIENT_ID, AZURE_TENANT_ID "
                          "and AZURE_CLIENT_SECRET, then rerun") from None
    except ClientAuthenticationError as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else exc.__class__.__name__
        raise CannotCheck(
            "preflight: no usable Azure credentials (" + first + ").\n"
            "Sign in, then rerun `make preflight`, for example:\n"
            "  az login && export AZURE_SUBSCRIPTION_ID=<subscription>\n"
            "  or set AZURE_CLIENT_ID, AZURE_TENANT_ID and AZURE_CLIENT_SECRET (a service principal)") from None


def subscription_of(other_config: dict[str, Any]) -> str:
    return str(other_config.get("azure-native:subscriptionId") or next(
        (os.environ[e] for e in SUBSCRIPTION_ENVS if os.environ.get(e, "").strip()), "")).strip()
