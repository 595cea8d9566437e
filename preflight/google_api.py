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
``SERVICE_DISABLED``). A 404 on a machine or accelerator type means "not offered in this zone";
anything that stops the check is a :class:`CannotCheck` with one message for the user.
"""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from typing import Any

DEFAULT_ENDPOINT = "https://compute.googleapis.com/compute/v1/"
ENDPOINT_ENV = "CLOUDSDK_API_ENDPOINT_OVERRIDES_COMPUTE"
TOKEN_ENV = "GOOGLE_OAUTH_ACCESS_TOKEN"
SCOPE = "https://www.googleapis.com/auth/compute.readonly"
PERMISSIONS = ("compute.regions.get", "compute.machineTypes.get", "compute.acceleratorTypes.get")
TIMEOUT_SECONDS = 30

NO_CREDENTIALS_HELP = (
    "preflight: no Google credentials found ({detail}). It makes read-only Compute Engine calls "
    "(regions.get, machineTypes.get, acceleratorTypes.get) in project {project}.\n"
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
                return _Response(reply.status, dict(reply.headers), reply.read())
        except urllib.error.HTTPError as exc:
            return _Response(exc.code, dict(exc.headers or {}), exc.read())
        except (urllib.error.URLError, OSError) as exc:
            raise exceptions.TransportError(f"{url}: {getattr(exc, 'reason', exc)}") from exc


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


class ComputeClient:
    """GET-only access to ``projects/{project}/...`` under the Compute v1 endpoint."""

    def __init__(self, project: str, credentials: Any, request: UrllibRequest, endpoint: str | None = None):
        self.project = project
        self.credentials = credentials
        self.request = request
        self.endpoint = endpoint or compute_endpoint()
        self.calls = 0

    def region(self, region: str) -> dict[str, Any]:
        """``regions.get``; a missing project or region stops the check."""
        found = self._get(f"regions/{region}")
        if found is None:
            raise CannotCheck(f"preflight: Compute Engine does not know region {region} in project "
                              f"{self.project} (404); check gcp:project and cluster.location")
        return found

    def machine_type(self, zone: str, name: str) -> dict[str, Any] | None:
        """``machineTypes.get``; None when the zone does not offer the type."""
        return self._get(f"zones/{zone}/machineTypes/{name}")

    def accelerator_type(self, zone: str, name: str) -> dict[str, Any] | None:
        """``acceleratorTypes.get``; None when the zone does not offer the accelerator."""
        return self._get(f"zones/{zone}/acceleratorTypes/{name}")

    def _get(self, path: str) -> dict[str, Any] | None:
        from google.auth import exceptions

        url = f"{self.endpoint}projects/{urllib.parse.quote(self.project)}/{path}"
        headers = {"Accept": "application/json"}
        try:
            self.credentials.before_request(self.request, "GET", url, headers)
        except exceptions.RefreshError as exc:
            raise CannotCheck(f"preflight: could not get a Google access token: {_first_line(exc)}. "
                              "Refresh your credentials (e.g. `gcloud auth application-default login`) "
                              "and rerun.") from None
        except exceptions.TransportError as exc:
            raise CannotCheck(f"preflight: cannot reach Google's token endpoint ({exc})") from None
        self.calls += 1
        try:
            reply = self.request(url, "GET", headers=headers)
        except exceptions.TransportError as exc:
            raise CannotCheck(f"preflight: cannot reach the Compute Engine API at {self.endpoint} ({exc}); "
                              f"check your network or {ENDPOINT_ENV}") from None
        if reply.status == 200:
            return json.loads(reply.data or b"{}")
        error = parse_error(reply.data)
        if reply.status == 404:
            return None
        raise CannotCheck(explain_error(reply.status, error, self.project))


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
        return (f"preflight: the Compute Engine API is disabled in project {project}. Enable it with "
                f"`gcloud services enable compute.googleapis.com --project {project}` and rerun. "
                f"(Google said: {error.message})")
    if status in (401, 403):
        return (f"preflight: Google refused the request ({status} {error.status or ''}: {error.message}). "
                f"The credentials need read-only access in project {project}: {', '.join(PERMISSIONS)} "
                "(e.g. roles/compute.viewer). Refresh or change them and rerun.")
    return f"preflight: Compute Engine API error {status} {error.status}: {error.message}"


def _first_line(exc: BaseException) -> str:
    text = str(exc.args[0] if exc.args else exc)
    return text.splitlines()[0] if text else type(exc).__name__
