"""Read-only Compute Engine REST v1 calls over the standard library's HTTP client, with Google credentials.

Credentials, in this order (as Pulumi's GCP provider and Google's client libraries look for them):

1. ``GOOGLE_OAUTH_ACCESS_TOKEN``: a ready access token, used as is (never refreshed), e.g.
   ``export GOOGLE_OAUTH_ACCESS_TOKEN=$(gcloud auth print-access-token)``.
2. Application Default Credentials through ``google.auth.default()``: the file named by
   ``GOOGLE_APPLICATION_CREDENTIALS`` (service account key, workload identity federation,
   ``authorized_user``), then gcloud's ``application_default_credentials.json`` (under
   ``CLOUDSDK_CONFIG``, default ``~/.config/gcloud``), then the metadata server on Google Cloud
   (skipped when ``NO_GCE_CHECK=true``). ``google-auth`` signs service-account JWTs and exchanges
   refresh tokens; every HTTP request, its token exchanges included, goes through :class:`UrllibRequest`.

Endpoint: ``CLOUDSDK_API_ENDPOINT_OVERRIDES_COMPUTE`` (gcloud's variable, the full versioned base such
as ``http://127.0.0.1:8080/compute/v1/``), default ``https://compute.googleapis.com/compute/v1/``.

Errors follow Google's error model (https://cloud.google.com/apis/design/errors): a JSON body
``{"error": {"code", "message", "status", "errors": [{"reason", "domain", "message"}],
"details": [{"@type": ".../google.rpc.ErrorInfo", "reason", ...}]}}``. Compute's catalog
(https://cloud.google.com/compute/docs/reference/rest/v1/errors) documents 403 PERMISSIONS_ERROR
"Required '{permission}' permission for '{resource}'" and 404 "The resource '{...}' was not found";
a disabled API answers 403 with ``errors[].reason`` ``accessNotConfigured`` (ErrorInfo reason
``SERVICE_DISABLED``). A 404 on a machine or accelerator type means "not offered in this zone".

Every call goes through :mod:`preflight.calls` (deadline per call and per run, 429 and 5xx retried after
``Retry-After`` or a backoff). Answers are read with a size limit and parsed strictly: truncated JSON, a
list where an object belongs, a quota ``limit`` that is not a number are a ``malformed`` CallError naming
the call. A missing project or region is a :class:`CannotCheck` with one message for the user.
"""

from __future__ import annotations

import http.client
import json
import os
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from preflight.calls import (
    CREDENTIALS,
    DISABLED,
    MALFORMED,
    UNREACHABLE,
    CallError,
    Calls,
    first_line,
    http_error,
    mapping,
    number,
)

T = TypeVar("T")

DEFAULT_ENDPOINT = "https://compute.googleapis.com/compute/v1/"
ENDPOINT_ENV = "CLOUDSDK_API_ENDPOINT_OVERRIDES_COMPUTE"
TOKEN_ENV = "GOOGLE_OAUTH_ACCESS_TOKEN"
SCOPE = "https://www.googleapis.com/auth/compute.readonly"
PERMISSIONS = ("compute.regions.get", "compute.machineTypes.get", "compute.acceleratorTypes.get",
               "compute.projects.get")
MAX_ANSWER_BYTES = 8 * 1024 * 1024  # a Compute answer is a few KiB; more is not an answer
TIMEOUT_SECONDS = 30  # token exchanges that google-auth makes without a timeout of its own

NO_CREDENTIALS_HELP = (
    "preflight: no Google credentials found ({detail}). It makes read-only Compute Engine calls "
    "(regions.get, machineTypes.get, acceleratorTypes.get, projects.get) in project {project}.\n"
    "Provide credentials, then rerun `make preflight STACK={stack}`, for example:\n"
    "  gcloud auth application-default login\n"
    "  or: export GOOGLE_APPLICATION_CREDENTIALS=/path/to/key-or-federation-config.json\n"
    "  or: export GOOGLE_OAUTH_ACCESS_TOKEN=$(gcloud auth print-access-token)"
)


class CannotCheck(Exception):
    """The preflight cannot answer (credentials, API disabled, permission, network); str() is the message."""


class UrllibRequest:
    """A ``google.auth.transport.Request`` over urllib, so token exchanges use the same HTTP client."""

    def __call__(self, url: str, method: str = "GET", body: Any = None, headers: Any = None,
                 timeout: float | None = None, **_: Any) -> _Response:
        from google.auth import exceptions

        data = body.encode() if isinstance(body, str) else body
        request = urllib.request.Request(url, data=data, method=method, headers=dict(headers or {}))
        try:
            with urllib.request.urlopen(request, timeout=timeout or TIMEOUT_SECONDS) as reply:
                return _Response(reply.status, dict(reply.headers), _read_bounded(reply))
        except urllib.error.HTTPError as exc:
            return _Response(exc.code, dict(exc.headers or {}), _read_bounded(exc))
        except (urllib.error.URLError, OSError) as exc:
            raise exceptions.TransportError(f"{url}: {getattr(exc, 'reason', exc)}") from exc
        except http.client.HTTPException as exc:  # a reply cut short or not HTTP at all
            raise exceptions.TransportError(f"{url}: incomplete or invalid HTTP answer "
                                            f"({type(exc).__name__})") from exc


def _read_bounded(reply: Any) -> bytes:
    data = reply.read(MAX_ANSWER_BYTES + 1)
    if len(data) > MAX_ANSWER_BYTES:
        raise http.client.HTTPException(f"answer larger than {MAX_ANSWER_BYTES} bytes")
    return data


@dataclass
class _Response:
    status: int
    headers: dict[str, str]
    data: bytes


def credentials_from_environment(project: str, stack: str, request: UrllibRequest) -> tuple[Any, str]:
    """(credentials, where they came from), or CannotCheck with the how-to-fix message."""
    from google.auth import exceptions
    from google.oauth2 import credentials as oauth2_credentials

    token = os.environ.get(TOKEN_ENV, "").strip()
    if token:
        return oauth2_credentials.Credentials(token=token), TOKEN_ENV
    import google.auth

    try:
        found, _ = google.auth.default(scopes=[SCOPE], request=request)
    except exceptions.DefaultCredentialsError as exc:
        detail = str(exc).splitlines()[0]
        raise CannotCheck(NO_CREDENTIALS_HELP.format(detail=detail, project=project, stack=stack)) from None
    source = getattr(found, "_cred_file_path", None) or type(found).__module__.replace("google.", "")
    return found, f"Application Default Credentials ({source})"


def compute_endpoint() -> str:
    endpoint = os.environ.get(ENDPOINT_ENV, "").strip() or DEFAULT_ENDPOINT
    return endpoint if endpoint.endswith("/") else endpoint + "/"


@dataclass(frozen=True)
class Quota:
    limit: float
    usage: float


@dataclass(frozen=True)
class QuotaList:
    """``quotas[]`` of a region or project (metric -> limit and usage), or the warning sent instead."""

    quotas: dict[str, Quota]
    warning: str = ""


@dataclass(frozen=True)
class MachineType:
    """What ``machineTypes.get`` says about a machine type in one zone."""

    name: str
    state: str  # deprecated.state, "" when current
    accelerators: tuple[tuple[str, int], ...]  # (guestAcceleratorType, guestAcceleratorCount)
    vcpus: int | None  # guestCpus
    memory_mib: float | None  # memoryMb (Compute's "MB" are MiB)


class ComputeClient:
    """GET-only access to ``projects/{project}/...`` under the Compute v1 endpoint, through :mod:`preflight.calls`.

    Each getter returns the parsed answer, None for 404 where "not offered" is the meaning, or raises
    :class:`preflight.calls.CallError` naming the call.
    """

    def __init__(self, project: str, credentials: Any, request: UrllibRequest, calls: Calls,
                 endpoint: str | None = None):
        self.project = project
        self.credentials = credentials
        self.request = request
        self.calls_layer = calls
        self.endpoint = endpoint or compute_endpoint()
        self.calls = 0

    def project_quotas(self) -> QuotaList:
        """``projects.get``: project-wide quotas such as ``GPUS_ALL_REGIONS``."""
        found = self._get("", f"projects.get {self.project}", "compute.projects.get", _quota_list)
        if found is None:
            raise CannotCheck(f"preflight: Compute Engine does not know project {self.project} (404); "
                              "check gcp:project")
        return found

    def region(self, region: str) -> QuotaList:
        """``regions.get``: the region's quotas; a missing project or region stops the check."""
        found = self._get(f"regions/{region}", f"regions.get {region}", "compute.regions.get", _quota_list)
        if found is None:
            raise CannotCheck(f"preflight: Compute Engine does not know region {region} in project "
                              f"{self.project} (404); check gcp:project and cluster.location")
        return found

    def machine_type(self, zone: str, name: str) -> MachineType | None:
        """``machineTypes.get``; None when the zone does not offer the type."""
        return self._get(f"zones/{zone}/machineTypes/{name}", f"machineTypes.get {zone}/{name}",
                         "compute.machineTypes.get", _machine_type)

    def accelerator_type(self, zone: str, name: str) -> int | None:
        """``acceleratorTypes.get``: ``maximumCardsPerInstance`` (0 when not given); None when not offered."""
        return self._get(f"zones/{zone}/acceleratorTypes/{name}", f"acceleratorTypes.get {zone}/{name}",
                         "compute.acceleratorTypes.get", _max_cards)

    def _get(self, path: str, call: str, permission: str, parse: Callable[[Any], T]) -> T | None:
        base = f"{self.endpoint}projects/{urllib.parse.quote(self.project)}"
        url = f"{base}/{path}" if path else base

        def fetch(seconds: float) -> bytes | None:
            return self._fetch(url, seconds)

        def parse_body(body: bytes | None) -> T | None:
            return None if body is None else parse(mapping(json.loads(body), "the answer"))

        return self.calls_layer.run(f"Compute Engine {call}", fetch, parse_body, needs=permission)

    def _fetch(self, url: str, seconds: float) -> bytes | None:
        from google.auth import exceptions

        headers = {"Accept": "application/json"}
        try:
            self.credentials.before_request(self.request, "GET", url, headers)
        except exceptions.RefreshError as exc:
            raise CallError(CREDENTIALS, f"could not get a Google access token: {first_line(exc)}. Refresh "
                            "your credentials (e.g. `gcloud auth application-default login`) and rerun.") from None
        except exceptions.TransportError as exc:
            raise CallError(UNREACHABLE, f"cannot reach Google's token endpoint ({exc})") from None
        self.calls += 1
        try:
            reply = self.request(url, "GET", headers=headers, timeout=seconds)
        except exceptions.TransportError as exc:
            cause = exc.__cause__
            if isinstance(cause, http.client.HTTPException):
                raise CallError(MALFORMED, f"malformed answer ({type(cause).__name__}: {first_line(cause)})") from None
            raise CallError(UNREACHABLE, f"cannot reach the Compute Engine API at {self.endpoint} ({exc}); "
                            f"check your network or {ENDPOINT_ENV}") from None
        if reply.status == 200:
            return reply.data
        if reply.status == 404:
            return None
        raise classify(reply.status, reply.headers, parse_error(reply.data), self.project)


def classify(status: int, headers: dict[str, str], error: ApiError, project: str) -> CallError:
    """A non-200, non-404 Compute answer as a :class:`CallError` of the right kind."""
    said = f"{status} {error.status}".strip() + (f": {error.message}" if error.message else "")
    if status == 403 and {"accessNotConfigured", "SERVICE_DISABLED"} & set(error.reasons):
        return CallError(DISABLED, explain_error(status, error, project))
    if status == 401:
        return CallError(CREDENTIALS, explain_error(status, error, project))
    return http_error(status, said, headers)


def _quota_list(body: dict[str, Any]) -> QuotaList:
    warning = body.get("quotaStatusWarning")
    if warning:
        warning = mapping(warning, "quotaStatusWarning")
        return QuotaList({}, f"{warning.get('code', '')}: {warning.get('message', '')}")
    entries = body.get("quotas") or []
    if not isinstance(entries, list):
        raise TypeError(f"quotas is a {type(entries).__name__}, not a list")
    quotas = {}
    for i, raw in enumerate(entries):
        entry = mapping(raw, f"quotas[{i}]")
        metric = entry.get("metric")
        if not isinstance(metric, str):
            raise ValueError(f"quotas[{i}].metric is {metric!r}, not a name")
        quotas[metric] = Quota(number(entry.get("limit", 0), f"quotas[{i}].limit ({metric})"),
                               number(entry.get("usage", 0), f"quotas[{i}].usage ({metric})"))
    return QuotaList(quotas)


def _machine_type(body: dict[str, Any]) -> MachineType:
    state = mapping(body.get("deprecated") or {}, "deprecated").get("state") or ""
    carried = []
    accelerators = body.get("accelerators") or []
    if not isinstance(accelerators, list):
        raise TypeError(f"accelerators is a {type(accelerators).__name__}, not a list")
    for i, raw in enumerate(accelerators):
        entry = mapping(raw, f"accelerators[{i}]")
        count = number(entry.get("guestAcceleratorCount", 0), f"accelerators[{i}].guestAcceleratorCount")
        carried.append((str(entry.get("guestAcceleratorType", "")), int(count)))
    cpus, memory = body.get("guestCpus"), body.get("memoryMb")
    return MachineType(str(body.get("name", "")), str(state), tuple(carried),
                       None if cpus is None else int(number(cpus, "guestCpus")),
                       None if memory is None else number(memory, "memoryMb"))


def _max_cards(body: dict[str, Any]) -> int:
    most = body.get("maximumCardsPerInstance")
    return 0 if most is None else int(number(most, "maximumCardsPerInstance"))


@dataclass(frozen=True)
class ApiError:
    code: int | None
    message: str
    status: str
    reasons: tuple[str, ...]  # errors[].reason and ErrorInfo reasons


def parse_error(body: bytes) -> ApiError:
    try:
        error = (json.loads(body or b"{}") or {}).get("error") or {}
    except (ValueError, AttributeError):
        return ApiError(None, body[:200].decode(errors="replace"), "", ())
    if not isinstance(error, dict):
        return ApiError(None, str(error), "", ())
    reasons = [e.get("reason", "") for e in error.get("errors") or [] if isinstance(e, dict)]
    reasons += [d.get("reason", "") for d in error.get("details") or []
                if isinstance(d, dict) and str(d.get("@type", "")).endswith("google.rpc.ErrorInfo")]
    return ApiError(error.get("code"), str(error.get("message", "")), str(error.get("status", "")),
                    tuple(r for r in reasons if r))


def explain_error(status: int, error: ApiError, project: str) -> str:
    if status == 403 and {"accessNotConfigured", "SERVICE_DISABLED"} & set(error.reasons):
        return (f"the Compute Engine API is disabled in project {project}. Enable it with "
                f"`gcloud services enable compute.googleapis.com --project {project}` and rerun. "
                f"(Google said: {error.message})")
    if status in (401, 403):
        return (f"Google refused the request ({status} {error.status or ''}: {error.message}). "
                f"The credentials need read-only access in project {project}: {', '.join(PERMISSIONS)} "
                "(e.g. roles/compute.viewer). Refresh or change them and rerun.")
    return f"Compute Engine API error {status} {error.status}: {error.message}"
